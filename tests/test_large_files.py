"""A user's own large files (issue 20): readers that stream in chunks of whole lines, parse in
threads and agree with an oracle whatever the chunk boundaries; compressed and plain text
give the same data; pyarrow's CSV path equals our own parser; Parquet and .npy; the upload
caps stay an explicit, separate policy; out-of-core blocks read ahead are the blocks."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from snacks_core import cli, datasets
from snacks_core.datasets import libsvm_reader, streams
from snacks_core.solvers.storage import EmbeddingStore, RowBlocks

pytestmark = pytest.mark.slow  # files of many rows, read and streamed end to end

COMPRESS = {"": lambda raw: raw, ".gz": gzip.compress, ".bz2": bz2.compress,
            ".xz": lzma.compress}


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Chunks of a few bytes and pieces of one line or two: every boundary is exercised."""
    monkeypatch.setattr(streams, "CHUNK_BYTES", 61)
    monkeypatch.setattr(libsvm_reader, "_MIN_PIECE_BYTES", 8)


def _libsvm_text(X, y, style):
    lines = []
    for i in range(X.shape[0]):
        row = X.getrow(i)
        pairs = " ".join(f"{j + 1}:{style(float(v))}" for j, v in zip(row.indices, row.data,
                                                                strict=True))
        lines.append(f"{y[i]:+d} {pairs}")
    return ("\n".join(lines) + "\n").encode()


STYLES = [repr, lambda v: f"{v:.17g}", lambda v: f"{v:.18e}", lambda v: f"{v:.4f}"]


# The chunk sizes patched once hold for every example.
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 60), d=st.integers(1, 12), seed=st.integers(0, 2**16),
       style=st.sampled_from(range(len(STYLES))))
def test_streamed_libsvm_equals_sklearns_reader(tmp_path_factory, tiny_chunks, n, d, seed,
                                                 style):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.6, random_state=seed, format="csr")
    X.data = rng.normal(scale=10.0 ** rng.integers(-5, 6), size=X.data.shape)
    y = np.where(rng.random(n) < 0.5, -1, 1)
    y[:2] = [-1, 1]
    path = tmp_path_factory.mktemp("svm") / "data.svm"
    path.write_bytes(_libsvm_text(X, y, STYLES[style]))
    ours = datasets.load_libsvm(path, n_features=d)
    theirs, labels = load_svmlight_file(str(path), n_features=d)
    assert (ours.X != theirs).nnz == 0
    np.testing.assert_array_equal(ours.X.toarray().view(np.uint64),
                                  theirs.toarray().view(np.uint64))
    np.testing.assert_array_equal(ours.y, labels)


def test_comments_qid_blank_lines_and_crlf_across_chunks(tiny_chunks):
    raw = (b"# header comment\r\n+1 qid:3 1:0.5 7:2 # note\r\n\r\n-1 2:1e-3\r\n"
           b"   \n+1 3:-4.25e2 12:1\n-1 1:1") * 5
    data = datasets.load_libsvm(raw)
    theirs, labels = load_svmlight_file(io.BytesIO(raw), n_features=12)
    np.testing.assert_array_equal(data.X.toarray(), theirs.toarray())
    np.testing.assert_array_equal(data.y, labels)


@pytest.mark.parametrize("suffix", list(COMPRESS))
def test_compressed_and_plain_files_give_the_same_data(tmp_path, tiny_chunks, suffix):
    rng = np.random.default_rng(0)
    X = sp.random(300, 9, density=0.5, random_state=0, format="csr")
    y = rng.choice([-1, 1], size=300)
    raw = _libsvm_text(X, y, repr)
    path = tmp_path / f"data.svm{suffix}"
    path.write_bytes(COMPRESS[suffix](raw))
    from_path = datasets.load_libsvm(path, n_features=9)
    from_bytes = datasets.load_libsvm(COMPRESS[suffix](raw), n_features=9)
    for data in (from_path, from_bytes):
        np.testing.assert_array_equal(data.X.toarray(), X.toarray())
        np.testing.assert_array_equal(data.y, y)
    csv = pd.DataFrame(X.toarray()).assign(label=y).to_csv(index=False).encode()
    csv_path = tmp_path / f"data.csv{suffix}"
    csv_path.write_bytes(COMPRESS[suffix](csv))
    table = datasets.load_file(csv_path)
    np.testing.assert_array_equal(table.X, X.toarray())
    np.testing.assert_array_equal(table.y, y)


def test_a_cut_short_compressed_file_names_its_line(tmp_path):
    raw = b"".join(b"%d 1:%d.5 2:1\n" % (1 if i % 2 else -1, i) for i in range(200_000))
    for suffix, compress in (("gz", gzip.compress), ("bz2", bz2.compress)):
        path = tmp_path / f"cut.svm.{suffix}"
        path.write_bytes(compress(raw)[: len(compress(raw)) // 2])
        with pytest.raises(ValueError, match=rf"cut.svm.{suffix}, line [\d,]+: the {suffix}"
                                             r"\w* data is corrupt or cut short"):
            datasets.load_libsvm(path)


CSV_FILES = {
    "header, words": b"age,income,label\n31,2.5,yes\n45,3.1,no\n52,4.0,yes\n19,-1e3,no\n",
    "no header, semicolons": b"31;2.5;1\n45;3.1;0\n52;4.0;1\n",
    "tabs, label in the middle": b"a\tlabel\tb\n1\tx\t2\n3\ty\t4\n5\tx\t6\n",
    "quoted names": b'"a","b","class"\n1,2,"one"\n3,4,"two"\n',
    "integer labels": b"x,y\n0.5,3\n1.5,-7\n2.5,3\n",
}


@pytest.mark.parametrize("name", list(CSV_FILES))
def test_pyarrow_csv_equals_our_parser(tmp_path, name):
    path = tmp_path / "table.csv"
    path.write_bytes(CSV_FILES[name])
    label = "label" if "middle" in name else None
    fast = datasets.load_csv(path, label_column=label)
    ours = datasets.load_csv(CSV_FILES[name], label_column=label, name="table.csv",
                             limits=datasets.UPLOAD_LIMITS)
    np.testing.assert_array_equal(fast.X, ours.X)
    np.testing.assert_array_equal(fast.y, ours.y)
    assert fast.y.dtype == ours.y.dtype
    assert tuple(fast.feature_names) == tuple(ours.feature_names)
    assert fast.label_column == ours.label_column


@pytest.mark.parametrize("content, message", [
    (b"a,b,label\n1,2,x\n3,,y\n", "line 3, column 'b': empty value"),
    (b"a,b,label\n1,2,x\n3,4\n", "line 3: expected 3 fields, found 2"),
    (b"a,b,label\n1,2,x\n3,four,y\n", "line 3, column 'b': 'four' is not a number"),
    (b"a,b,label\n1,2,x\n3,nan,y\n", "line 3, column 'b': 'nan' is not a finite number"),
    (b"a,b,label\n1,2,x\n3,4,\n", "line 3: the label ('label') is empty"),
])
def test_local_csv_errors_still_name_the_line(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        datasets.load_file(path)


def test_parquet_and_npy_read_what_pandas_and_numpy_wrote(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(500, 3)), columns=["u", "v", "w"])
    frame["kind"] = rng.choice(["cat", "dog"], size=500)
    frame.to_parquet(tmp_path / "t.parquet")
    data = datasets.load_file(tmp_path / "t.parquet")
    np.testing.assert_array_equal(data.X, frame[["u", "v", "w"]].to_numpy())
    np.testing.assert_array_equal(data.y, frame["kind"].to_numpy())
    assert tuple(data.feature_names) == ("u", "v", "w")
    array = np.column_stack([rng.choice([3, 7], size=500), rng.normal(size=(500, 2))])
    np.save(tmp_path / "t.npy", array)
    data = datasets.load_file(tmp_path / "t.npy", label_column=0)
    np.testing.assert_array_equal(data.X, array[:, 1:])
    assert data.y.dtype == np.int64 and set(data.y) == {3, 7}
    frame.loc[7, "v"] = np.nan
    frame.to_parquet(tmp_path / "nan.parquet")
    with pytest.raises(ValueError, match="nan.parquet, row 8, column 'v'"):
        datasets.load_file(tmp_path / "nan.parquet")
    np.save(tmp_path / "objects.npy", np.array([[1, "a"]], dtype=object))
    with pytest.raises(ValueError, match="objects.npy is not a numeric .npy array"):
        datasets.load_file(tmp_path / "objects.npy")


def test_the_row_cap_names_the_first_row_beyond_it_across_chunks(tiny_chunks):
    raw = b"".join(b"%d 1:%d\n" % (1 if i % 2 else -1, i) for i in range(500))
    with pytest.raises(ValueError, match="line 301: more than the limit of 300 rows"):
        datasets.load_libsvm(raw, limits=datasets.ReadLimits(max_rows=300))
    assert datasets.load_libsvm(raw).n_samples == 500


def test_uploads_keep_their_caps_and_local_files_have_none():
    assert datasets.UPLOAD_LIMITS.max_bytes == datasets.MAX_TEXT_BYTES
    assert datasets.UPLOAD_LIMITS.max_rows == datasets.MAX_ROWS
    assert datasets.LOCAL_FILE_LIMITS.max_bytes is None
    assert datasets.LOCAL_FILE_LIMITS.max_rows is None
    wide = b"1 3000000:1\n-1 2:1\n"
    assert datasets.load_libsvm(wide).n_features == 3_000_000
    with pytest.raises(ValueError, match="beyond the limit of 2,097,152 features"):
        datasets.load_libsvm(wide, limits=datasets.UPLOAD_LIMITS)


def test_read_ahead_blocks_are_the_stores_blocks(tmp_path):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(1000, 7)).astype(np.float32)
    store = EmbeddingStore(1000, 7, "disk", np.float32, block_rows=64, directory=tmp_path)
    store.write(0, Z)
    blocks = RowBlocks(store)
    order_rng, check_rng = np.random.default_rng(1), np.random.default_rng(1)
    seen = [(b.start, b.stop, b.Z.copy()) for b in blocks.shuffled(order_rng)]
    order = check_rng.permutation(len(store.block_bounds()))
    assert [(start, stop) for start, stop, _ in seen] == [store.block_bounds()[k] for k in order]
    for start, stop, block in seen:
        np.testing.assert_array_equal(block, Z[start:stop])
    drawn = 0
    for block, rows in blocks.sample(5000, np.random.default_rng(2)):
        assert np.all((rows >= block.start) & (rows < block.stop))
        np.testing.assert_array_equal(block.Z, Z[block.start:block.stop])
        drawn += rows.size
    assert drawn == 5000
    store.close()


def _svm_file(tmp_path, n=3000):
    moons = datasets.make_synthetic("moons", n, random_state=0)
    path = tmp_path / "moons.svm"
    path.write_bytes(_libsvm_text(sp.csr_matrix(moons.X), np.where(moons.y > 0, 1, -1), repr))
    return path


def test_cli_fit_streams_from_disk_with_progress(capsys, tmp_path):
    path = _svm_file(tmp_path)
    argv = ["fit", str(path), "--m", "40", "--lam", "1e-4", "--gamma", "2", "--storage", "disk",
            "--memory-budget", "600kB", "--progress", "always"]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert "temporary file" in err
    for phase in ("reading moons.svm", "embedding", "training", "predicting"):
        assert f"snacks: {phase}" in err
    on_disk = float(out.split("test error")[1].split()[0])
    assert cli.main(argv[:-6] + ["--progress", "never"]) == 0
    in_memory = float(capsys.readouterr()[0].split("test error")[1].split()[0])
    assert abs(on_disk - in_memory) <= 0.01


def test_cli_fit_says_when_the_budget_is_too_small(capsys, tmp_path):
    path = _svm_file(tmp_path, n=600)
    assert cli.main(["fit", str(path), "--memory-budget", "1kB"]) == 1
    err = capsys.readouterr()[1]
    assert "memory budget" in err and "memory_budget" in err
    assert len(err.strip().splitlines()) == 1


def test_a_fit_streamed_from_disk_in_one_block_is_the_in_memory_fit(tmp_path):
    """The same rows and seed: a float32 embedding read back from its file (one block, so
    the same row draws) gives the in-memory fit bit for bit; in many blocks read ahead,
    the same model up to the order of the draws."""
    from snacks_core import SnacksClassifier

    moons = datasets.make_synthetic("moons", 4000, random_state=1)
    options = dict(n_components=60, lam=1e-4, gamma=2.0, random_state=0, max_epochs=20,
                   early_stopping=True, dtype=np.float32)
    memory = SnacksClassifier(**options).fit(moons.X, moons.y)
    with pytest.warns(UserWarning, match="temporary file"):
        disk = SnacksClassifier(**options, storage="disk").fit(moons.X, moons.y)
    assert disk.storage_ == "disk"
    np.testing.assert_array_equal(disk.coef_, memory.coef_)
    np.testing.assert_array_equal(disk.history_["validation_error"],
                                  memory.history_["validation_error"])
    budget = 4000 * 60 * 4 // 3
    with pytest.warns(UserWarning, match="temporary file"):
        blocks = SnacksClassifier(**options, storage="disk", memory_budget=budget).fit(
            moons.X, moons.y)
    assert np.mean(blocks.predict(moons.X) == memory.predict(moons.X)) > 0.98


def test_embed_to_store_gathers_a_subset_of_rows_in_order(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(500, 6, density=0.5, random_state=0, format="csr")
    W = rng.normal(size=(6, 4))
    rows = rng.permutation(500)[:321]
    with EmbeddingStore(321, 4, "memory", np.float64) as reference:
        reference.write(0, X[rows] @ W)
        expected = reference.array.copy()
    from snacks_core.solvers.storage import embed_to_store

    with embed_to_store(lambda part: part @ W, X, 4, kind="disk", storage_dtype=np.float32,
                        compute_dtype=np.float64, block_rows=50, directory=tmp_path,
                        rows=rows) as store:
        np.testing.assert_allclose(store.read(0, 321), expected, rtol=1e-6)


@pytest.mark.parametrize("name", ["pipe.npy", "pipe.parquet", "pipe.csv", "pipe.svm.gz"])
def test_library_readers_refuse_a_fifo_before_opening_it(tmp_path, name):
    """Opening a FIFO with no writer blocks forever: every reader refuses it first."""
    import os

    from snacks_core.datasets import load_file

    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO .*not a regular file"):
        load_file(fifo)
