"""Hostile input (issue 10): a few bytes must never take the server down, nothing wrong is
ever silent.  Each crafted input runs in a fresh interpreter whose address space is capped
(``resource.setrlimit``) and whose run time is capped (a subprocess timeout), and must end
in a clear ``ValueError`` naming the file and the line where there is one; the CLI answers
in one line with a non-zero status; the app shows an error box and keeps running; and
``hypothesis`` fuzzes both readers and the ``.npz`` loader."""

from __future__ import annotations

import bz2
import http.server
import io
import re
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from snacks_core import cli, datasets
from snacks_core.datasets import DownloadError, fetch_libsvm, load_csv, load_libsvm
from snacks_core.model import sweeps
from snacks_core.model.estimator import SnacksClassifier
from snacks_core.model.specs import Resources
from snacks_core.persistence import model_from_npz, model_to_npz

ROOT = Path(__file__).resolve().parent.parent
# Generous caps a correct implementation meets by orders of magnitude.
TIME_CAP = 30
MEMORY_HEADROOM = 2**30

PRELUDE = textwrap.dedent("""
    import bz2, gzip, io, os, resource, sys
    import numpy as np
    from snacks_core import datasets
    U = datasets.UPLOAD_LIMITS
    exec(sys.argv[3])
    mapped = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = mapped + int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        exec(sys.argv[2])
        print("NO ERROR")
    except ValueError as exc:
        print("ValueError:", exc)
    except BaseException as exc:
        print("OTHER", type(exc).__name__, exc)
""")


def run_capped(code, headroom=MEMORY_HEADROOM, imports=""):
    """The outcome line of ``code`` run under the memory and time caps (``imports`` run
    before the cap: the libraries themselves are not what is measured)."""
    result = subprocess.run([sys.executable, "-c", PRELUDE, str(headroom), code, imports],
                            capture_output=True, text=True, timeout=TIME_CAP, cwd=ROOT)
    return (result.stdout.strip().splitlines() or [result.stderr[-500:]])[-1]


# ---------------------------------------------------------------------------- readers

UNIT = 'bz2.compress(b"1 1:1\\n" * (1 << 20))'
# 40 lines of 1 MiB, mostly a comment, in gzip: eight copies are 320 MiB of text in 320 rows.
LONG_LINES = 'gzip.compress((b"1 1:1 #" + b"x" * (1 << 20) + b"\\n") * 40)'


@pytest.mark.slow  # each case runs in a fresh, capped interpreter
@pytest.mark.parametrize("code, message", [
    # A feature name per column once made this 20-byte file take gigabytes.
    ('datasets.load_libsvm(b"1 30000000:1\\n-1 2:1\\n", name="wide.svm", limits=U)',
     "wide.svm, line 1: feature index 30000000 is beyond the limit"),
    ('datasets.load_libsvm(b"-1 2:1\\n1 2000000000:1\\n", name="wider.svm", limits=U)',
     "wider.svm, line 2: feature index 2000000000 is beyond the limit"),
    ('datasets.load_libsvm(b"1 99999999999999999999999:1\\n-1 2:1\\n", name="huge.svm", limits=U)',
     "huge.svm, line 1: feature index 99999999999999999999999 is beyond"),
    # 20 KB of bz2 that expands to 380 MB of text, and 11 KB that expands to 200 MB: refused
    # by the upload caps, and, as a local file, by the memory plan as the rows grow.
    (f'datasets.load_libsvm({UNIT} * 60, name="bomb.svm.bz2", limits=U)',
     "bomb.svm.bz2, line 5,000,001: more than the limit of 5,000,000 rows"),
    (f'datasets.load_libsvm({UNIT} * 32, name="lines.svm.bz2", limits=U)',
     "lines.svm.bz2, line 5,000,001: more than the limit of 5,000,000 rows"),
    (f'datasets.load_libsvm({LONG_LINES} * 8, name="long.svm.gz", limits=U)',
     "long.svm.gz, line .*: the text is larger than 256 MiB after decompression"),
    ('datasets.load_csv(gzip.compress(b"1,2\\n" * (1 << 20)) * 80, name="bomb.csv.gz", limits=U)',
     "bomb.csv.gz, line 5,000,001: more than the limit of 5,000,000 rows"),
    (f'u = {UNIT}; datasets.load_libsvm(u[:40] + bytes(60) + u[100:], name="c.svm.bz2")',
     r"c.svm.bz2, line 1: the bz2 data is corrupt or cut short"),
    ('datasets.load_libsvm(bz2.compress(b"1 1:1\\n-1 2:1\\n" * 5000)[:-40], name="t.svm.bz2")',
     r"t.svm.bz2, line \d+: the bz2 data is corrupt or cut short"),
    (f'datasets.load_libsvm({UNIT} * 60, name="bomb.svm.bz2")',
     r"Reading bomb.svm.bz2 \(up to line [\d,]+\) would need [\d.]+ GiB"),
    ('datasets.load_libsvm(b"1 3000000000:1\\n-1 2:1\\n", name="widest.svm")',
     "widest.svm, line 1: feature index 3000000000 is beyond the limit of 2,147,483,647"),
    ('datasets.load_libsvm(b"not bz2 at all", name="fake.svm.bz2")',
     "fake.svm.bz2 is not bz2-compressed data"),
    ('datasets.load_csv(b"a,b,label\\n1,2,x\\n3," + b"4" * 200_000 + b",y\\n", name="f.csv")',
     "f.csv, line 3: field larger than field limit"),
    ('datasets.load_csv(b"a,label\\n1,100000000000000000001\\n2,100000000000000000000\\n", '
     'name="l.csv")', "l.csv: the label '100000000000000000001' is too large to keep exactly"),
    ('datasets.load_libsvm(b"1e999 1:1\\n-1 2:1\\n", name="inf.svm")',
     "inf.svm, line 1: the label '1e999' is not finite"),
    ('datasets.load_csv(b"a,label\\n" + b"".join(b"%d,%d\\n" % (i, i) for i in range(2000)), '
     'name="many.csv")', "many.csv, line 1002: more than 1,000 different labels"),
    ('datasets.load_libsvm(b"PK\\x03\\x04rest", name="z.svm")', "z.svm is a ZIP archive"),
    ('datasets.load_file("/nonexistent/data.svm")', "cannot read /nonexistent/data.svm"),
])
def test_crafted_files_give_a_clear_error_within_the_caps(code, message):
    outcome = run_capped(code)
    assert outcome.startswith("ValueError:"), outcome
    assert re.search(message, outcome), outcome


@pytest.mark.slow
def test_a_file_within_the_limits_still_reads_under_the_cap():
    code = 'X = datasets.load_libsvm(b"1 2000000:1\\n-1 2:1\\n").X; assert X.shape == (2, 2000000)'
    assert run_capped(code) == "NO ERROR"


@pytest.mark.slow
def test_memory_plan_refuses_what_the_process_cannot_hold():
    # 40 MB of CSV within the text and row limits, whose matrix does not fit in what is
    # left of 400 MiB of address space: refused before the rows are read.
    code = ('datasets.load_csv(b"a,b,c,d,label\\n" + b"1,2,3,4,1\\n1,2,3,4,2\\n" * 2_000_000, '
            'name="big.csv")')
    outcome = run_capped(code, headroom=400 * 2**20)
    assert outcome.startswith("ValueError: Reading big.csv") and "GiB" in outcome, outcome


def test_labels_round_trip_exactly_or_are_refused():
    data = load_libsvm(b"1e30 1:1\n-1 2:1\n")
    assert list(data.y) == [1e30, -1.0]
    data = load_csv(b"a,label\n1,9223372036854775807\n2,-9223372036854775808\n")
    assert data.y.dtype == np.int64 and list(data.y) == [2**63 - 1, -2**63]
    assert list(load_csv(b"a,label\n1,+1\n2,-1\n3,1\n").y) == [1, -1, 1]
    with pytest.raises(ValueError, match="too large to keep exactly"):
        load_csv(b"a,label\n1,9223372036854775809\n2,1\n")


def test_feature_names_are_made_on_demand():
    data = load_libsvm(b"1 2000000:1\n-1 2:1\n")
    assert len(data.feature_names) == 2_000_000
    assert data.feature_names[-1] == "x2000000" and data.feature_names[:2] == ("x1", "x2")


# ---------------------------------------------------------------------------- model files


NPZ_IMPORT = "from snacks_core.persistence import model_from_npz"


def _npz(**arrays):
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def model_file():
    X = np.random.default_rng(0).normal(size=(80, 2))
    model = SnacksClassifier(n_components=10, lam=1e-2, max_epochs=3, random_state=0)
    model.fit(X, np.where(X[:, 0] > 0, 1, -1))
    with np.load(io.BytesIO(model_to_npz(model))) as data:
        return {key: data[key] for key in data.files}


def _changed(arrays, **changes):
    result = {key: value for key, value in arrays.items() if changes.get(key, 0) is not None}
    result.update({key: value for key, value in changes.items() if value is not None})
    return _npz(**result)


@pytest.mark.slow
def test_npz_declaring_a_huge_array_is_refused_before_allocating():
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (100_000, 100_000)})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("coef.npy", header.getvalue() + bytes(8000))
    code = f"model_from_npz({buffer.getvalue()!r})"
    outcome = run_capped(code, imports=NPZ_IMPORT)
    assert outcome.startswith("ValueError: the model file declares more than 256 MiB"), outcome


@pytest.mark.slow
def test_npz_inflating_to_400_mb_is_refused(tmp_path):
    path = tmp_path / "inflated.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("coef.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(
                member, {"descr": "<f8", "fortran_order": False, "shape": (50_000_000,)})
            for _ in range(400):
                member.write(bytes(1_000_000))
    assert path.stat().st_size < 1_000_000
    outcome = run_capped(f"model_from_npz({str(path)!r})", imports=NPZ_IMPORT)
    assert outcome.startswith("ValueError: the model file declares more than"), outcome


@pytest.mark.parametrize("change, message", [
    ({"params": np.array("{not json")}, "'params' is not JSON"),
    ({"params": np.array("[1, 2]")}, "not a JSON object"),
    ({"params": np.array('{"kernel": "rbf", "evil": 1}')}, r"unknown parameters \['evil'\]"),
    ({"params": np.array('{"kernel": "sigmoid"}')}, "unknown kernel 'sigmoid'"),
    ({"map": np.array("random")}, "unknown feature map 'random'"),
    ({"gamma": np.array(np.nan)}, "not a positive finite number"),
    ({"gamma": np.array([1.0, 2.0])}, "'gamma' must be a single value"),
    ({"coef": np.full((1, 10), np.nan)}, "'coef' has NaN or infinite values"),
    ({"coef": np.ones((1, 3))}, r"'coef' has shape \(1, 3\)"),
    ({"coef": np.array(["a", "b"])}, "'coef' must be a 2-D array"),
    ({"intercept": np.ones(2)}, r"'intercept' has shape \(2,\)"),
    ({"classes": np.array([1, 1])}, "two or more different labels"),
    ({"landmarks": np.ones((10, 3))}, r"'landmarks' has shape \(10, 3\)"),
    ({"n_features_in": np.array(0)}, "n_features_in = 0"),
    ({"weights": np.ones(3)}, "unexpected entry 'weights.npy'"),
    ({"coef": None}, r"the entries \['coef'\] are missing"),
    ({"format_version": np.array(99)}, "format 99"),
])
def test_npz_with_wrong_entries_is_refused_on_load(model_file, change, message):
    with pytest.raises(ValueError, match=message):
        model_from_npz(_changed(model_file, **change))


@pytest.mark.parametrize("payload, message", [
    (b"", "not a .npz archive"),
    (b"PK\x03\x04" + bytes(30), "not a .npz archive"),
    (b"definitely not a model", "not a .npz archive"),
])
def test_empty_or_broken_npz_is_refused(payload, message):
    with pytest.raises(ValueError, match=message):
        model_from_npz(payload)


def test_truncated_npz_is_refused(model_file):
    payload = _npz(**model_file)
    for cut in (len(payload) // 3, len(payload) - 30):
        with pytest.raises(ValueError):
            model_from_npz(payload[:cut])
    assert model_from_npz(payload).n_features_in_ == 2


# How every refusal of a model file begins: it says the file is not a (valid) model file.
NPZ_REFUSAL = re.compile(r"not a (valid )?Snacks model file|the model file (is damaged|declares)")


@settings(max_examples=60, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_npz_files_load_or_give_a_value_error(model_file, data):
    payload = bytearray(_npz(**model_file))
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(payload) - 1))
        payload[position] = data.draw(st.integers(0, 255))
    try:
        model = model_from_npz(bytes(payload))
    except ValueError as exc:
        assert NPZ_REFUSAL.match(str(exc)), exc
        return
    # A flipped byte the checks let through (in padding, or a value still valid) must
    # leave a model that predicts.
    assert model.predict(np.zeros((3, 2))).shape == (3,)


ARRAYS = st.one_of(
    st.builds(lambda shape, dtype: np.zeros(shape, dtype=dtype),
              st.lists(st.integers(0, 4), max_size=3).map(tuple),
              st.sampled_from(["f8", "f4", "i8", "u1", "?", "U3", "c16"])),
    st.sampled_from([np.array(np.nan), np.array("x"), np.array('{"kernel": "rbf"}'),
                     np.array(-1), np.array(1e308), np.array([np.inf])]))


@settings(max_examples=80, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_npz_entries_are_refused_on_load_or_predict(model_file, data):
    names = sorted(model_file) + ["landmarks_data", "scaling", "projection_components"]
    changes = data.draw(st.dictionaries(st.sampled_from(names), st.one_of(st.none(), ARRAYS),
                                        max_size=3))
    try:
        model = model_from_npz(_changed(model_file, **changes))
    except ValueError as exc:
        assert NPZ_REFUSAL.match(str(exc)), exc
        return
    # What loads, predicts: nothing wrong is left for predict to find.
    assert model.predict(np.zeros((3, 2))).shape == (3,)


LIBSVM_TOKENS = st.sampled_from(["+1", "-1", "1e30", "nan", "0", "1:1", "2:0.5", "3:-2",
                                 "0:1", "qid:3", "7:x", "99999999999999999999:1", ":", "#",
                                 "1:inf", "2:1e400", "\n", " ", "\t", "\r\n", "é", "\x00"])
CSV_TOKENS = st.sampled_from(["a", "b", "label", "1", "-2.5", "nan", "1e30", "yes", ",", ";",
                              "\t", '"', "\n", "\r\n", " ", "", "x" * 50, "\x00", "é"])


@settings(max_examples=150, derandomize=True, deadline=None)
@given(tokens=st.lists(LIBSVM_TOKENS, max_size=40), compress=st.booleans())
def test_fuzzed_libsvm_reads_or_gives_a_value_error(tokens, compress):
    raw = "".join(tokens).encode()
    try:
        data = load_libsvm(bz2.compress(raw) if compress else raw, name="fuzz.svm")
    except ValueError as exc:
        _check_reader_refusal(str(exc), "fuzz.svm", raw)
        return
    assert data.X.shape[0] == data.y.shape[0] > 0 and np.all(np.isfinite(data.X.data))
    assert len(np.unique(data.y)) >= 2


@settings(max_examples=150, derandomize=True, deadline=None)
@given(tokens=st.lists(CSV_TOKENS, max_size=40), noise=st.binary(max_size=8))
def test_fuzzed_csv_reads_or_gives_a_value_error(tokens, noise):
    raw = "".join(tokens).encode() + noise
    try:
        data = load_csv(raw, name="fuzz.csv")
    except ValueError as exc:
        _check_reader_refusal(str(exc), "fuzz.csv", raw)
        return
    assert data.X.shape[0] == data.y.shape[0] > 0 and np.all(np.isfinite(data.X))
    assert len(np.unique(data.y)) >= 2


def _check_reader_refusal(message, name, raw):
    """A reader's refusal names the file, and the line when it gives one, within the file."""
    assert message.startswith(name), message
    line = re.match(rf"{re.escape(name)}, line ([0-9,]+)", message)
    if line is not None:
        n_lines = raw.count(b"\n") + raw.count(b"\r") + 1
        assert 1 <= int(line.group(1).replace(",", "")) <= n_lines, message


# ---------------------------------------------------------------------------- plan and downloads


@pytest.mark.slow
def test_plan_grid_respects_the_process_limit():
    # 8.2 GiB of float64 kernel blocks and embedding under a 4 GiB address space.
    code = ("plan_grid(500_000, 100_000, [1000], n_jobs=1, dtype='float64')")
    outcome = run_capped(code, headroom=4 * 2**30,
                         imports="from snacks_core.model.sweeps import plan_grid")
    assert outcome.startswith("ValueError: The grid's kernel blocks") and "would need" in outcome


class _Hostile(http.server.BaseHTTPRequestHandler):
    """A server that answers 200 with a web page, a short body, a trickle, or a huge file."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        kind = self.server.kind
        if kind == "html":
            body = b"<!DOCTYPE html><html><body>Service unavailable</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif kind == "html-as-text":
            body = b"\n  <html><body>Please log in</body></html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif kind == "short":
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"+1 1:1\n-1 2:1\n")
        elif kind == "trickle":
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(60):
                    self.wfile.write(b"1")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass
        elif kind == "huge":
            self.send_response(200)
            self.send_header("Content-Length", str(10**12))
            self.end_headers()
        self.close_connection = True


@pytest.fixture()
def hostile_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("kind, message", [
    ("html", "web page"),
    ("html-as-text", "web page"),
    ("short", "sent 14 of the 1,000 bytes it announced"),
    ("trickle", "took longer than 1 s"),
    ("huge", "more than the limit"),
])
def test_bad_downloads_are_never_cached(hostile_server, tmp_path, kind, message):
    server, url = hostile_server
    server.kind = kind
    with pytest.raises(DownloadError, match=message):
        fetch_libsvm("mushrooms", cache_dir=tmp_path, base_url=url, timeout=5, deadline=1.0)
    assert not [p for p in (tmp_path / "mushrooms").iterdir()]
    assert datasets.cached_libsvm_datasets(tmp_path) == []


def test_a_download_that_is_not_libsvm_data_is_not_cached(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "mushrooms").write_bytes(b"this is not, a LIBSVM file\n")
    with pytest.raises(DownloadError, match="not the LIBSVM data expected"):
        fetch_libsvm("mushrooms", cache_dir=tmp_path / "cache", base_url=site.as_uri())
    assert not list((tmp_path / "cache" / "mushrooms").iterdir())


# ---------------------------------------------------------------------------- command line


def run_cli(capsys, *argv):
    try:
        status = cli.main(list(argv))
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv, status, message", [
    (["fit", "moons", "--max-epochs", "inf"], 2, "--max-epochs: takes a positive finite"),
    (["heatmap", "moons", "--m", "10", "--lam", "1e-2", "--max-epochs", "inf", "--out",
      "x.csv"], 2, "positive finite"),
    (["heatmap", "moons", "--n-samples", "100", "--m", "10", "--lam", "1e-2", "--n-jobs",
      "1000000", "--out", "{tmp}/x.csv"], 1, "n_jobs=1000000 is more parallel jobs"),
    (["fit", "moons", "--n-samples", "0"], 2, "--n-samples: takes a positive whole number"),
    (["fit", "moons", "--memory-budget", "2XB"], 2, "--memory-budget: memory_budget '2XB' is not"),
    (["fit", "moons", "--label-column", "99"], 1, "built-in dataset with its own labels"),
    (["fit", "{tmp}/wide.svm"], 1, "wide.svm, line 1: feature index 3000000000 is beyond"),
    (["fit", "{tmp}/wide.svm", "--label-column", "0"], 1, "only applies to CSV, Parquet"),
    (["heatmap", "moons", "--m", "10", "--lam", "1e-2", "--out", "/nonexistent/x.csv"], 1,
     "cannot write /nonexistent/x.csv"),
    (["heatmap", "moons", "--m", "10", "--lam", "1e-2", "--out", "{tmp}/x.csv", "--plot",
      "/nonexistent/x.html"], 1, "cannot write /nonexistent/x.html"),
])
def test_cli_refuses_in_one_line(capsys, tmp_path, monkeypatch, argv, status, message):
    (tmp_path / "wide.svm").write_bytes(b"1 3000000000:1\n-1 2:1\n")
    # Nothing may be computed before an output path is refused.
    if "nonexistent" in " ".join(argv):
        monkeypatch.setattr("snacks_core.cli.heatmap.robustness_grid", None)
    code, _, err = run_cli(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv])
    assert code == status, err
    assert len(err.strip().splitlines()) == 1 and message in err, err


@pytest.mark.slow
def test_cli_on_a_hostile_file_under_the_memory_cap(tmp_path):
    path = tmp_path / "bomb.svm.bz2"
    path.write_bytes(bz2.compress(b"1 1:1\n" * (1 << 20)) * 60)
    code = f"sys.exit(cli.main(['fit', {str(path)!r}]))"
    result = subprocess.run([sys.executable, "-c", PRELUDE, str(MEMORY_HEADROOM), code,
                             "from snacks_core import cli"],
                            capture_output=True, text=True, timeout=TIME_CAP, cwd=ROOT)
    assert result.returncode == 1 or "SystemExit" in result.stdout, result
    # A local file has no size cap: the memory plan refuses it as its rows grow.
    assert "Reading bomb.svm.bz2 (up to line" in result.stderr and "GiB" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_stopped_heatmap_keeps_finished_cells_and_exits_non_zero(capsys, tmp_path,
                                                                monkeypatch):
    out = tmp_path / "grid.csv"
    seen_on_disk = []

    def stop_after_first_column(*args, resources, **kwargs):
        done = []

        def report(finished, total, row):
            resources.progress(finished, total, row)
            seen_on_disk.append(len((tmp_path / "grid.csv.partial").read_text().splitlines())
                                - 1)
            done.append(finished)

        return sweeps.robustness_grid(
            *args, resources=replace(resources, progress=report, should_stop=lambda: bool(done)),
            **kwargs)

    monkeypatch.setattr("snacks_core.cli.heatmap.robustness_grid", stop_after_first_column)
    code, _, err = run_cli(capsys, "heatmap", "moons", "--n-samples", "200", "--m", "5,10,20",
                           "--lam", "1e-2,1e-3", "--n-jobs", "1", "--max-epochs", "5",
                           "--out", str(out))
    assert code == cli.STOPPED, err
    assert "stopped: 2 of 6 cells" in err
    # Each cell was on disk (appended and flushed) as soon as it finished.
    assert seen_on_disk == [1, 2]
    import pandas as pd
    assert len(pd.read_csv(out)) == 2


# ---------------------------------------------------------------------------- the app


from test_app import open_page  # noqa: E402


@pytest.mark.slow  # runs the Streamlit app
@pytest.mark.parametrize("name, content, message", [
    ("wide.svm", b"1 2000000000:1\n-1 2:1\n", "line 1: feature index 2000000000"),
    ("bomb.svm.bz2", bz2.compress(b"1 1:1\n" * (1 << 20)) * 60, "line 5,000,001: more than"),
    ("broken.svm.bz2", b"BZh9" + bytes(200), "bz2 data is corrupt"),
    ("labels.csv", b"a,label\n1,100000000000000000001\n2,100000000000000000000\n",
     "too large to keep exactly"),
    ("long.csv", b"a,b,label\n1,2,x\n3," + b"4" * 200_000 + b",y\n", "line 3: field larger"),
])
def test_app_shows_an_error_box_and_keeps_running(name, content, message):
    at = open_page("data")
    at.file_uploader[0].upload(name, content).run()
    if not at.error:
        at.button(key="use_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(message in e.value for e in at.error), [e.value for e in at.error]
    assert at.session_state["dataset"] == "synthetic:moons"
    at.switch_page("app_pages/playground.py").run()
    assert not at.exception and not at.error
    assert at.metric


def test_plan_grid_also_respects_the_memory_free_now(monkeypatch, tmp_path):
    from snacks_core.core import memory
    from snacks_core.model.sweeps import plan_grid

    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:     123456 kB\n")
    assert memory.free_memory(str(meminfo)) == 123456 * 1024
    assert memory.free_memory(str(tmp_path / "missing")) is None
    need = plan_grid(10_000, 5_000, [1000], n_jobs=1, dtype="float64").bytes_needed
    # The process may use plenty, but the machine has little free: float32, then refusal.
    monkeypatch.setattr(memory, "free_memory", lambda: 2 * need - 2)
    assert plan_grid(10_000, 5_000, [1000], n_jobs=1).dtype == "float32"
    monkeypatch.setattr(memory, "free_memory", lambda: need // 4)
    with pytest.raises(ValueError, match="would need"):
        plan_grid(10_000, 5_000, [1000], n_jobs=1)


@pytest.mark.parametrize("kwargs, message", [
    ({"estimator": SnacksClassifier(max_epochs=float("inf"))}, "max_epochs"),
    ({"resources": Resources(n_jobs=10**6)}, "n_jobs=1000000 is more parallel jobs"),
])
def test_robustness_grid_refuses_absurd_budgets(kwargs, message):
    from snacks_core.model.sweeps import robustness_grid

    data = datasets.make_synthetic("moons", 100)
    with pytest.raises(ValueError, match=message):
        robustness_grid(data.X, data.y, m=5, lam=1e-2, **kwargs)


def test_second_ctrl_c_keeps_the_cells_already_written(capsys, tmp_path, monkeypatch):
    out = tmp_path / "grid.csv"

    def interrupted(*args, resources, **kwargs):
        def report(finished, total, row):
            resources.progress(finished, total, row)
            if finished == 2:
                raise KeyboardInterrupt
        return sweeps.robustness_grid(*args, resources=replace(resources, progress=report),
                                      **kwargs)

    monkeypatch.setattr("snacks_core.cli.heatmap.robustness_grid", interrupted)
    code, _, err = run_cli(capsys, "heatmap", "moons", "--n-samples", "200", "--m", "5,10,20",
                           "--lam", "1e-2,1e-3", "--n-jobs", "1", "--max-epochs", "5",
                           "--out", str(out))
    assert code == 130 and "interrupted" in err
    import pandas as pd
    # The finished cells wait beside OUT, which keeps its old content (here: none).
    assert len(pd.read_csv(tmp_path / "grid.csv.partial")) == 2 and not out.exists()
    assert "grid.csv.partial" in err
