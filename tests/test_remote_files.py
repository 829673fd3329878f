"""Files at URLs read on one machine (snacks_core.datasets.remote): ``snacks fit URL --test
URL`` and ``snacks predict MODEL URL`` against a real HTTP server on the loopback
(tests/http_serving.py), giving what the same files on disk give; one-line errors for a
missing file, a server that does not answer and a missing fsspec."""

from __future__ import annotations

import gzip
import shutil
import sys

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

from http_serving import serving
from snacks_core import cli
from snacks_core.datasets import load_files

pytest.importorskip("fsspec")
pytest.importorskip("aiohttp")

FIT = ["--m", "20", "--solver", "liblinear", "--seed", "0", "--progress", "never"]


@pytest.fixture
def served(tmp_path):
    """A folder of train.svm, test.svm and test.svm.gz, and the address serving it."""
    X, y = make_classification(500, 6, n_informative=4, random_state=3)
    folder = tmp_path / "served"
    folder.mkdir()
    dump_svmlight_file(X[:350], y[:350], str(folder / "train.svm"))
    dump_svmlight_file(X[350:], y[350:], str(folder / "test.svm"))
    with open(folder / "test.svm", "rb") as text, gzip.open(folder / "test.svm.gz",
                                                             "wb") as packed:
        shutil.copyfileobj(text, packed)
    with serving(folder) as address:
        yield folder, address


def _without_times(output):
    """The lines of a fit's report that depend neither on the clock nor on the model's path."""
    return [line for line in output.splitlines()
            if " s" not in line and "time" not in line and not line.startswith("model:")]


def test_load_files_reads_urls_as_the_files_on_disk(served):
    folder, address = served
    remote = load_files([f"{address}/train.svm", f"{address}/test.svm.gz"],
                        purpose=("train", "predict"))
    local = load_files([folder / "train.svm", folder / "test.svm"],
                       purpose=("train", "predict"))
    for read, expected in zip(remote, local, strict=True):
        assert read.name.removesuffix(".gz") == expected.name
        assert read.index_base == expected.index_base
        np.testing.assert_array_equal(read.X.toarray(), expected.X.toarray())
        np.testing.assert_array_equal(read.y, expected.y)


def test_fit_and_predict_on_urls_give_what_the_local_files_give(served, tmp_path, capsys):
    folder, address = served
    remote_model, local_model = tmp_path / "remote.npz", tmp_path / "local.npz"
    assert cli.main(["fit", f"{address}/train.svm", "--test", f"{address}/test.svm",
                     "--model", str(remote_model), *FIT]) == 0
    remote = capsys.readouterr().out
    assert cli.main(["fit", str(folder / "train.svm"), "--test", str(folder / "test.svm"),
                     "--model", str(local_model), *FIT]) == 0
    local = capsys.readouterr().out
    assert "350 training rows, 150 test rows" in remote
    assert _without_times(remote) == _without_times(local)

    labels = {}
    for name, data in [("remote", f"{address}/test.svm.gz"),
                       ("local", str(folder / "test.svm"))]:
        out = tmp_path / f"{name}.txt"
        assert cli.main(["predict", str(remote_model), data, "--out", str(out),
                         "--progress", "never"]) == 0
        labels[name] = np.loadtxt(out)
        assert "150 rows predicted; error" in capsys.readouterr().out
    np.testing.assert_array_equal(labels["remote"], labels["local"])


@pytest.mark.parametrize("command", ["fit", "predict"])
def test_a_missing_file_and_a_silent_server_get_one_line(served, tmp_path, capsys, command):
    _, address = served
    model = tmp_path / "m.npz"
    if command == "predict":
        assert cli.main(["fit", f"{address}/train.svm", "--model", str(model), *FIT]) == 0
        capsys.readouterr()
    for url, reason in [(f"{address}/nothing.svm", "there is no such file"),
                        ("http://127.0.0.1:9/train.svm", "cannot read http://127.0.0.1:9")]:
        argv = (["fit", url, *FIT] if command == "fit"
                else ["predict", str(model), url, "--progress", "never"])
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"snacks {command}: error: " in err
        assert reason in err and url in err


def test_without_fsspec_a_url_gets_a_message_that_says_what_to_install(served, monkeypatch,
                                                                       capsys):
    _, address = served
    monkeypatch.setitem(sys.modules, "fsspec", None)  # an import of it fails, as uninstalled
    assert cli.main(["fit", f"{address}/train.svm", *FIT]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs fsspec (pip install fsspec" in err
