"""Datasets: generators, bundled sets, CSV/LIBSVM readers with line-numbered errors, the
LIBSVM downloader (against a local HTTP server), splitting and the sample files."""

from __future__ import annotations

import bz2
import functools
import gzip
import http.server
import io
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from snacks_core import datasets
from snacks_core.datasets import (
    DownloadError,
    fetch_libsvm,
    load_bundled,
    load_csv,
    load_file,
    load_libsvm,
    make_a9a_like,
    make_synthetic,
    split_dataset,
)


@pytest.mark.parametrize("name", datasets.SYNTHETIC)
def test_synthetic_generators(name):
    data = make_synthetic(name, 300, noise=0.1, random_state=1)
    assert data.X.shape[0] == 300
    assert np.all(np.isfinite(data.X))
    counts = data.class_counts()
    assert len(counts) == (3 if name == "blobs" else 2)
    assert min(counts.values()) > 30
    again = make_synthetic(name, 300, noise=0.1, random_state=1)
    np.testing.assert_array_equal(data.X, again.X)
    assert not np.array_equal(make_synthetic(name, 300, noise=0.1, random_state=2).X, data.X)


def test_noise_controls_overlap():
    clean = make_synthetic("xor", 400, noise=0.0, random_state=0)
    # Without noise the XOR classes are the signs of x1·x2, with a gap around the axes.
    assert np.all(np.sign(clean.X[:, 0] * clean.X[:, 1]) == clean.y)
    noisy = make_synthetic("xor", 400, noise=1.0, random_state=0)
    assert np.mean(np.sign(noisy.X[:, 0] * noisy.X[:, 1]) != noisy.y) > 0.1


def test_classification_generator_balance_and_width():
    data = make_synthetic("classification", 2000, n_features=7, positive_fraction=0.1,
                          random_state=0)
    assert data.n_features == 7
    assert 0.05 < np.mean(data.y == 1) < 0.16


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "swiss"}, "unknown synthetic"),
    ({"n_samples": 3}, "n_samples"),
    ({"n_samples": 10**9}, "n_samples"),
    ({"noise": -1.0}, "noise"),
    ({"noise": float("nan")}, "noise"),
    ({"name": "classification", "n_features": 1}, "n_features"),
    ({"name": "classification", "positive_fraction": 1.0}, "positive_fraction"),
])
def test_synthetic_bad_parameters(kwargs, message):
    kwargs = {"name": "moons", **kwargs}
    with pytest.raises(ValueError, match=message):
        make_synthetic(**kwargs)


def test_bundled_datasets():
    digits = load_bundled("digits7")
    assert digits.X.shape == (1797, 64)
    assert set(np.unique(digits.y)) == {-1, 1}
    assert 0.09 < np.mean(digits.y == 1) < 0.11
    assert len(load_bundled("wine").classes) == 3
    assert len(load_bundled("iris").classes) == 3
    assert load_bundled("breast_cancer").n_features == 30
    with pytest.raises(ValueError, match="unknown bundled"):
        load_bundled("mnist")


def test_a9a_like_keeps_its_shape():
    X_train, y_train, X_test, y_test = make_a9a_like(500, 200, random_state=0)
    assert X_train.shape == (500, 123) and X_test.shape == (200, 123)
    assert np.all(np.diff(X_train.indptr) == 14)
    assert set(np.unique(y_train)) <= {-1.0, 1.0}


# ---------------------------------------------------------------------------- CSV


def test_csv_with_header_and_word_labels():
    text = b"age;income;label\n30;1.5;yes\n40;2.5;no\n50;3.5;yes\n"
    data = load_csv(text, name="people.csv")
    assert data.feature_names == ("age", "income")
    np.testing.assert_array_equal(data.X, [[30, 1.5], [40, 2.5], [50, 3.5]])
    assert list(data.y) == ["yes", "no", "yes"]
    assert datasets.csv_columns(text) == ["age", "income", "label"]


def test_csv_label_column_by_name_or_index_and_no_header():
    text = b"1,0.5,2\n-1,0.1,3\n1,0.7,4\n"
    data = load_csv(text, label_column=0)
    assert list(data.y) == [1, -1, 1]
    np.testing.assert_array_equal(data.X[:, 0], [0.5, 0.1, 0.7])
    with_header = b"y,a,b\n" + text
    assert list(load_csv(with_header, label_column="y").y) == [1, -1, 1]
    with pytest.raises(ValueError, match="no label column 'z'"):
        load_csv(with_header, label_column="z")


@pytest.mark.parametrize("text, message", [
    (b"a,b,label\n1,2,x\n3,4\n5,6,y\n", "line 3: expected 3 fields, found 2"),
    (b"a,b,label\n1,2,x\n3,red,y\n", "line 3, column 'b': 'red' is not a number"),
    (b"a,b,label\n1,,x\n3,4,y\n", "line 2, column 'b': empty value"),
    (b"a,b,label\n1,nan,x\n3,4,y\n", "line 2, column 'b': 'nan' is not a finite number"),
    (b"a,b,label\n1,2,x\n3,4,x\n", "same label"),
    (b"a,b,label\n", "no data rows"),
    (b"", "empty"),
    (b"\xff\xfe\x00garbage", "UTF-8"),
    (b"justonecolumn\n1\n2\n", "single column"),
])
def test_csv_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        load_csv(text, name="bad.csv")


# ---------------------------------------------------------------------------- LIBSVM


LIBSVM_TEXT = b"""# a comment line
+1 1:0.5 3:1.25 # trailing comment
-1 qid:7 2:2
+1 1:1 2:-1 3:3
"""


def test_libsvm_matches_sklearn(tmp_path):
    path = tmp_path / "small.svm"
    path.write_bytes(LIBSVM_TEXT)
    data = load_libsvm(path)
    X_ref, y_ref = load_svmlight_file(str(path), n_features=3)
    assert sp.issparse(data.X)
    np.testing.assert_array_equal(data.X.toarray(), X_ref.toarray())
    np.testing.assert_array_equal(data.y, y_ref)
    assert load_libsvm(LIBSVM_TEXT, n_features=5).n_features == 5


def test_libsvm_bz2_and_zero_based(tmp_path):
    path = tmp_path / "small.svm.bz2"
    path.write_bytes(bz2.compress(LIBSVM_TEXT))
    assert load_file(path).X.shape == (3, 3)
    zero_based = load_libsvm(b"1 0:1 2:2\n-1 1:1\n")
    np.testing.assert_array_equal(zero_based.X.toarray(), [[1, 0, 2], [0, 1, 0]])


@pytest.mark.parametrize("text, message", [
    (b"+1 1:1\nyes 1:2\n", "line 2: the label 'yes' is not a number"),
    (b"+1 1:1\n-1 1:2 3\n", "line 2: '3' is not an 'index:value' pair"),
    (b"+1 1:1\n-1 a:2\n", "line 2: 'a:2' needs an integer index"),
    (b"+1 1:1\n-1 2:1 1:2\n", "line 2: indices must increase"),
    (b"+1 1:1\n-1 -2:1\n", "line 2: '-2:1' has a negative index"),
    (b"+1 1:inf\n-1 1:1\n", "line 1: '1:inf' has a negative index or a non-finite value"),
    (b"+1 1:1\n+1 2:1\n", "same label"),
    (b"# nothing\n", "no data lines"),
])
def test_libsvm_errors_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        load_libsvm(text, name="bad.svm")


def test_libsvm_width_beyond_n_features():
    with pytest.raises(ValueError, match="beyond the 2 features"):
        load_libsvm(b"1 5:1\n-1 1:1\n", n_features=2)


# ---------------------------------------------------------------------------- downloader


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        type(self).requests.append(self.path)
        super().do_GET()


@pytest.fixture()
def local_server(tmp_path):
    """An HTTP server on 127.0.0.1 serving a fake 'madelon' (train and test files)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "madelon").write_bytes(b"+1 1:1 2:0.5\n-1 2:1\n+1 1:2\n-1 1:-1\n")
    (root / "madelon.t").write_bytes(b"+1 1:1\n-1 2:2\n")
    _Handler.requests = []
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_fetch_downloads_once_into_the_cache(local_server, tmp_path):
    cache = tmp_path / "cache"
    data = fetch_libsvm("madelon", cache_dir=cache, base_url=local_server)
    assert data.X.shape == (4, 500) and data.X_test.shape == (2, 500)
    assert sorted(_Handler.requests) == ["/madelon", "/madelon.t"]
    assert datasets.cached_libsvm_datasets(cache) == ["madelon"]
    again = fetch_libsvm("madelon", cache_dir=cache, base_url=local_server)
    assert len(_Handler.requests) == 2
    np.testing.assert_array_equal(again.X.toarray(), data.X.toarray())
    split = split_dataset(data, scaling="standard")
    assert split.X_test.shape[0] == 2


def test_fetch_without_network_says_what_to_do(tmp_path):
    with socket_closed_port() as url:
        with pytest.raises(DownloadError, match="no network access.*by hand") as info:
            fetch_libsvm("a9a", cache_dir=tmp_path, base_url=url, timeout=2)
    assert str(tmp_path / "a9a") in str(info.value)
    assert not list((tmp_path / "a9a").glob("*.part"))


def test_fetch_missing_file_reports_the_status(local_server, tmp_path):
    with pytest.raises(DownloadError, match="answered 404"):
        fetch_libsvm("a9a", cache_dir=tmp_path, base_url=local_server)
    with pytest.raises(ValueError, match="unknown LIBSVM dataset"):
        fetch_libsvm("not-a-dataset", cache_dir=tmp_path)


class socket_closed_port:
    """A loopback URL on which nothing listens."""

    def __enter__(self):
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return f"http://127.0.0.1:{port}/"

    def __exit__(self, *exc):
        return False


# ---------------------------------------------------------------------------- split and samples


def test_split_is_stratified_scaled_and_projected():
    data = load_bundled("breast_cancer")
    split = split_dataset(data, test_size=0.25, scaling="standard", random_state=0)
    assert abs(split.X_train.mean()) < 1e-12
    assert np.mean(split.y_train == "malignant") == pytest.approx(
        np.mean(data.y == "malignant"), abs=0.01)
    projected = split_dataset(data, project_2d=True)
    assert projected.n_features == 2 and "PCA" in projected.projection
    minmax = split_dataset(data, scaling="minmax")
    assert minmax.X_train.min() == pytest.approx(-1) and minmax.X_train.max() == pytest.approx(1)
    with pytest.raises(ValueError, match="scaling"):
        split_dataset(data, scaling="log")
    with pytest.raises(ValueError, match="test_size"):
        split_dataset(data, test_size=0.99)


def test_sparse_split_keeps_sparsity():
    data = load_libsvm(b"+1 1:1 3:2\n-1 2:1\n+1 1:2\n-1 3:1\n+1 2:2\n-1 1:1\n")
    split = split_dataset(data, test_size=0.34, scaling="standard", project_2d=True)
    assert split.n_features == 2
    assert sp.issparse(split_dataset(data, test_size=0.34).X_train)


def test_make_dataset_rejects_bad_arrays():
    with pytest.raises(ValueError, match="NaN"):
        datasets.make_dataset([[1.0, np.nan], [1.0, 2.0]], [0, 1], "bad")
    with pytest.raises(ValueError, match="one label per row"):
        datasets.make_dataset([[1.0], [2.0]], [0, 1, 1], "bad")
    with pytest.raises(ValueError, match="same label"):
        datasets.make_dataset([[1.0], [2.0]], [1, 1], "bad")


def test_sample_files_are_reproducible(tmp_path):
    written = datasets.write_sample_data(tmp_path)
    shipped = datasets.sample_data_dir()
    for path in written:
        assert (shipped / path.name).read_bytes() == path.read_bytes(), path.name
        data = load_file(path)
        assert data.n_samples >= 500
    assert datasets.sample_files() == sorted(p.name for p in written)


def test_susy_like_shape_labels_seed_and_balance():
    X, y = datasets.make_susy_like(4000, random_state=3)
    assert X.shape == (4000, 18) and X.dtype == np.float64 and y.shape == (4000,)
    assert np.all(np.isfinite(X))
    assert set(np.unique(y)) == {-1.0, 1.0}
    assert 0.40 < np.mean(y > 0) < 0.52
    again_X, again_y = datasets.make_susy_like(4000, random_state=3)
    np.testing.assert_array_equal(X, again_X)
    np.testing.assert_array_equal(y, again_y)
    assert not np.array_equal(datasets.make_susy_like(4000, random_state=4)[0], X)
    with pytest.raises(ValueError, match="positive integer"):
        datasets.make_susy_like(0)


def test_gzip_and_xz_files_are_read_in_a_stream(tmp_path):
    import gzip
    import lzma

    for suffix, compress in ((".gz", gzip.compress), (".xz", lzma.compress)):
        path = tmp_path / f"small.svm{suffix}"
        path.write_bytes(compress(LIBSVM_TEXT))
        assert load_file(path).X.shape == (3, 3)
        csv_path = tmp_path / f"people.csv{suffix}"
        csv_path.write_bytes(compress(b"age,label\n30,yes\n40,no\n"))
        assert list(load_file(csv_path, label_column="label").y) == ["yes", "no"]


def test_a_large_text_within_the_limits_is_read_exactly():
    rng = np.random.default_rng(0)
    X = sp.random(3000, 50, density=0.1, random_state=0, format="csr")
    y = rng.choice([-1, 1], size=3000)
    lines = "".join(f"{label:+d} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in
                                              zip(X[i].indices, X[i].data, strict=True)) + "\n"
                    for i, label in enumerate(y))
    data = load_libsvm(bz2.compress(lines.encode()), n_features=50)
    np.testing.assert_array_equal(data.X.toarray(), X.toarray())
    np.testing.assert_array_equal(data.y, y)
    with pytest.raises(ValueError, match="line 101: more than the limit of 100 rows"):
        load_libsvm(lines.encode(), limits=datasets.ReadLimits(max_rows=100))
    with pytest.raises(ValueError, match="larger than 0 MiB"):
        load_libsvm(lines.encode(), limits=datasets.ReadLimits(max_bytes=1000))
    with pytest.raises(ValueError, match="beyond the limit of 10 features"):
        load_libsvm(lines.encode(), limits=datasets.ReadLimits(max_features=10))


# ---------------------------------------------------------------------------- export


class _Request:
    """The fields of the app's DataRequest that the exported code reads."""

    def __init__(self, dataset, **fields):
        self.kind, self.name = dataset.split(":", 1)
        self.test_size, self.scaling, self.seed, self.pca2d = 0.3, "standard", 0, False
        self.__dict__.update(fields)


PARAMS = {"kernel": "rbf", "gamma": "scale", "n_components": 20, "lam": 1e-3,
          "solver": "snacks", "max_epochs": 5, "random_state": 0}


def test_exported_code_of_an_uploaded_csv_runs_and_saves_the_whole_pipeline(tmp_path,
                                                                            monkeypatch):
    from snacks_core import SnacksClassifier
    from snacks_core.app.snippets import run_code

    rng = np.random.default_rng(1)
    X = rng.normal(loc=50, scale=20, size=(150, 2))
    grade = np.where(X[:, 0] + X[:, 1] > 100, "pass", "fail")
    raw = "grade,hours,score\n" + "".join(f"{g},{a:.3f},{b:.3f}\n"
                                          for g, (a, b) in zip(grade, X, strict=True))
    # As the app reads an upload: bytes, the file's name and the chosen label column.
    dataset = load_csv(raw.encode(), label_column="grade", name="students.csv")
    request = _Request("upload:0123abcd:students.csv")
    code = run_code(request, dataset, PARAMS)
    assert "load_csv('students.csv', label_column='grade')" in code
    monkeypatch.chdir(tmp_path)
    (tmp_path / "students.csv").write_text(raw)
    namespace = {}
    exec(compile(code, "exported", "exec"), namespace)
    split = split_dataset(dataset, test_size=0.3, scaling="standard", random_state=0)
    model = SnacksClassifier(**PARAMS).fit(split.X_train, split.y_train)
    np.testing.assert_allclose(namespace["model"].coef_, model.coef_)
    # The saved pipeline scales raw rows itself: it predicts as the model on scaled rows.
    raw_split = split_dataset(dataset, test_size=0.3, scaling="none", random_state=0)
    np.testing.assert_allclose(namespace["pipeline"].decision_function(raw_split.X_test),
                               model.decision_function(split.X_test), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("source, scaling, pca2d", [
    ("bundled:breast_cancer", "minmax", True),
    ("bundled:wine", "standard", False),
    ("sparse", "standard", True),
    ("sparse", "minmax", False),
])
def test_npz_pipeline_predicts_on_raw_rows(source, scaling, pca2d):
    from snacks_core import SnacksClassifier
    from snacks_core.persistence import model_from_npz, model_to_npz, pipeline_from_npz

    if source == "sparse":
        X, y, _, _ = make_a9a_like(300, 1, random_state=0)
        dataset = datasets.make_dataset(X, y, "a9a_like")
    else:
        dataset = load_bundled(source.split(":")[1])
    split = split_dataset(dataset, scaling=scaling, project_2d=pca2d, random_state=0)
    raw = split_dataset(dataset, scaling="none", random_state=0)
    model = SnacksClassifier(**{**PARAMS, "gamma": 0.5}).fit(split.X_train, split.y_train)
    payload = model_to_npz(model, split.preprocessing)
    pipeline = pipeline_from_npz(payload)
    np.testing.assert_allclose(pipeline.decision_function(raw.X_test),
                               model.decision_function(split.X_test), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(pipeline.predict(raw.X_test), model.predict(split.X_test))
    assert model_from_npz(payload).n_features_in_ == split.n_features


@pytest.mark.parametrize("option", ["sample:two_spirals.csv", "sample:a9a_small.svm",
                                    "synthetic:moons"])
def test_exported_code_runs_for_sample_files_and_generators(option, tmp_path, monkeypatch):
    from snacks_core.app.snippets import run_code

    request = _Request(option, n_samples=200, noise=0.2)
    if request.kind == "sample":
        dataset = load_file(datasets.sample_data_dir() / request.name)
    else:
        dataset = make_synthetic("moons", 200, noise=0.2, random_state=0)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(run_code(request, dataset, {**PARAMS, "max_epochs": 2}), "exported", "exec"),
         namespace)
    assert namespace["pipeline"].predict(dataset.X[:5]).shape == (5,)


@pytest.mark.parametrize("own_test_part", [False, True])
def test_split_scaling_never_changes_the_dataset(own_test_part):
    rng = np.random.default_rng(0)
    X, y = rng.normal(5.0, 3.0, size=(200, 3)), np.repeat([0, 1], 100)
    test = dict(X_test=X[:50] + 1.0, y_test=y[:50]) if own_test_part else {}
    dataset = datasets.make_dataset(X, y, "blobs", **test)
    before = [dataset.X.copy()] + ([dataset.X_test.copy()] if own_test_part else [])
    split = split_dataset(dataset, scaling="standard", random_state=0)
    np.testing.assert_array_equal(dataset.X, before[0])
    if own_test_part:
        np.testing.assert_array_equal(dataset.X_test, before[1])
    np.testing.assert_allclose(split.X_train.mean(axis=0), 0.0, atol=1e-12)
    scaler = split.preprocessing[0]
    assert scaler.copy and scaler.transform(X[:5]) is not X[:5]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["+1", "-1", "0", "2", "3.0"]),
                          st.lists(st.tuples(st.integers(1, 10**6),
                                             st.floats(-1e6, 1e6, allow_nan=False)),
                                   min_size=1, max_size=6)),
                min_size=1, max_size=20),
       st.sampled_from([None, "gzip", "bz2"]))
def test_sniff_format_recognises_libsvm_rows_whatever_the_name(rows, compression):
    from snacks_core.datasets import sniff_format

    text = "".join(f"{label} " + " ".join(f"{j}:{v!r}" for j, v in pairs) + "\n"
                   for label, pairs in rows).encode()
    raw = {None: lambda b: b, "gzip": gzip.compress, "bz2": bz2.compress}[compression](text)
    assert sniff_format(raw, name="ijcnn1.trn") == "libsvm"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=6),
                min_size=1, max_size=20),
       st.sampled_from([",", ";", "\t", ", "]), st.booleans())
def test_sniff_format_recognises_delimited_text(rows, delimiter, header):
    from snacks_core.datasets import sniff_format

    width = len(rows[0])
    lines = ([delimiter.join(f"col{j}" for j in range(width))] if header else []) + [
        delimiter.join(repr(v) for v in row[:width]) for row in rows]
    assert sniff_format("\n".join(lines).encode() + b"\n", name="data.t") == "csv"


def test_sniff_format_refuses_binary_content():
    from snacks_core.datasets import sniff_format

    buffer = io.BytesIO()
    np.save(buffer, np.arange(10.0))
    with pytest.raises(ValueError, match="model.npy is not a text file"):
        sniff_format(buffer.getvalue(), name="model.npy")


def test_exported_code_writes_slider_floats_as_typed(tmp_path, monkeypatch):
    """A slider's 0.05 can arrive as 0.050000000000000044: the code shows 0.05, and runs."""
    monkeypatch.chdir(tmp_path)  # the code saves snacks_model.npz
    from snacks_core.app.snippets import run_code

    request = _Request("synthetic:classification", n_samples=300, noise=0.1 + 0.2 - 0.25,
                       n_features=4, positive_fraction=0.7 - 0.6, test_size=0.1 + 0.2)
    dataset = make_synthetic("classification", 300, noise=request.noise, n_features=4,
                             positive_fraction=request.positive_fraction)
    code = run_code(request, dataset, {**PARAMS, "lam": 0.1 * 3, "max_epochs": 2})
    assert "noise=0.05," in code and "positive_fraction=0.1)" in code
    assert "test_size=0.3," in code and "lam=0.3," in code
    assert "0000000" not in code
    exec(compile(code, "exported", "exec"), {})
