"""`snacks fit --model` then `snacks predict`: the same predictions and error as the fit, files
read as the training data was, a quick start; model_to_npz on a Pipeline."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from snacks_core import SnacksClassifier, cli
from snacks_core.cli import fit as fit_command
from snacks_core.datasets import make_a9a_like, streams
from snacks_core.model.defaults import C_values_around_default, default_m
from snacks_core.persistence import load_model, model_to_npz, pipeline_from_npz


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``snacks argv…``."""
    try:
        status = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def write_libsvm(path, X, y, base=1):
    """Rows as LIBSVM lines with indices from ``base``; labels as numbers (+1, -1) or text."""
    with open(path, "w") as handle:
        for row, label in zip(X, y, strict=True):
            pairs = " ".join(f"{j + base}:{v:.17g}"
                             for j, v in zip(row.indices, row.data, strict=True))
            text = label if isinstance(label, str) else f"{int(label):+d}"
            handle.write(f"{text} {pairs}\n")
    return path


@pytest.fixture
def pair(tmp_path):
    """A training and a test LIBSVM file (a9a-shaped, ±1 labels)."""
    X, y, X_test, y_test = make_a9a_like(400, 150, random_state=3)
    return (write_libsvm(tmp_path / "train.txt", X, y),
            write_libsvm(tmp_path / "test.txt", X_test, y_test), X_test, y_test)


FAST = ("--m", "40", "--max-epochs", "10", "--progress", "never")


def fit_and_record(capsys, monkeypatch, *argv):
    """`snacks fit argv…`, with the fit's own test predictions."""
    seen = {}
    real = fit_command.fit_and_measure

    def record(*args, **kwargs):
        model, table, metrics = real(*args, **kwargs)
        seen["test_pred"] = metrics["test_pred"]
        return model, table, metrics

    monkeypatch.setattr(fit_command, "fit_and_measure", record)
    status, out, err = run(capsys, "fit", *argv)
    assert status == 0, err
    return out, seen["test_pred"]


def test_fit_then_predict_gives_the_fits_predictions_and_error(capsys, monkeypatch, tmp_path,
                                                               pair):
    train, test, _, y_test = pair
    model, predictions = tmp_path / "model.npz", tmp_path / "predictions.txt"
    out, test_pred = fit_and_record(capsys, monkeypatch, train, "--test", test, "--model",
                                    model, "--scaling", "standard", *FAST)
    assert f"model: {model}" in out
    fit_error = out.split("test error")[1].split()[0]
    f1_class, f1_value = out.split("F1 (class ")[1].split(")", 1)
    status, summary, err = run(capsys, "predict", model, test, "--out", predictions)
    assert status == 0, err
    written = predictions.read_text().splitlines()
    assert written == [f"{int(v)}" for v in test_pred]
    assert set(written) <= {"1", "-1"}
    assert f"test.txt: 150 rows predicted; error {fit_error}, " in summary
    assert f1_class == "1" and f"F1 (class 1) {f1_value.split()[0]}" in summary
    saved = load_model(model.read_bytes())
    assert saved.n_features == 123 and saved.index_base == 1 and saved.f1_label == 1


def test_the_round_trip_holds_for_dense_csv_files_with_text_labels(capsys, monkeypatch,
                                                                   tmp_path):
    rng = np.random.default_rng(2)
    files = []
    for name, n in (("train.csv", 300), ("test.csv", 120)):
        X = rng.normal(size=(n, 3)) * [1, 5, 50]
        label = np.where(X[:, 0] + X[:, 1] / 5 > 0.3, "yes", "no")
        path = tmp_path / name
        path.write_text("a,b,c,label\n" + "".join(
            f"{a:.6f},{b:.6f},{c:.6f},{k}\n" for (a, b, c), k in zip(X, label, strict=True)))
        files.append(path)
    model, predictions = tmp_path / "model.npz", tmp_path / "predictions.txt"
    out, test_pred = fit_and_record(capsys, monkeypatch, files[0], "--test", files[1],
                                    "--model", model, *FAST)
    status, summary, err = run(capsys, "predict", model, files[1], "--out", predictions)
    assert status == 0, err
    assert predictions.read_text().splitlines() == list(test_pred)
    assert f"error {out.split('test error')[1].split()[0]}," in summary
    f1_class, f1_value = out.split("F1 (class ")[1].split(")", 1)
    assert f"F1 (class {f1_class}) {f1_value.split()[0]}" in summary


def test_predict_writes_decision_values_with_a_header(capsys, tmp_path, pair):
    train, test, _, _ = pair
    model = tmp_path / "model.npz"
    assert run(capsys, "fit", train, "--model", model, *FAST)[0] == 0
    status, out, err = run(capsys, "predict", model, test, "--decision-values")
    assert status == 0, err
    header, *lines = out.splitlines()
    assert header == "labels 1"
    values = np.array([float(line) for line in lines])
    status, out, _ = run(capsys, "predict", model, test)
    labels = np.array([int(v) for v in out.splitlines()])
    np.testing.assert_array_equal(labels, np.where(values > 0, 1, -1))
    assert "150 rows predicted; error" in err


def test_decision_values_of_three_classes_have_one_column_each(capsys, tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2)) + np.repeat(np.eye(3, 2) * 4, 50, axis=0)
    labels = np.repeat(["ant", "bee", "cow"], 50)
    data = tmp_path / "three.csv"
    data.write_text("a,b,kind\n" + "".join(f"{a:.6f},{b:.6f},{k}\n"
                                          for (a, b), k in zip(X, labels, strict=True)))
    model = tmp_path / "model.npz"
    assert run(capsys, "fit", data, "--model", model, "--m", "20", "--progress", "never")[0] == 0
    status, out, err = run(capsys, "predict", model, data, "--decision-values")
    assert status == 0, err
    header, *lines = out.splitlines()
    assert header == "labels ant bee cow"
    assert len(lines) == 150 and all(len(line.split()) == 3 for line in lines)
    assert "F1 (macro average)" in err
    status, out, _ = run(capsys, "predict", model, data)
    assert set(out.split()) == {"ant", "bee", "cow"}


@pytest.mark.parametrize("multiclass", ["auto", "ovr", "ovo"])
def test_fit_multiclass_saves_the_split_it_trained(capsys, tmp_path, multiclass):
    """--multiclass reaches the estimator and the model file: the saved model is the split
    asked for ('auto' is one-vs-one), and its predictions are the fit's."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(240, 2)) + np.repeat([[3, 0], [0, 3], [-3, 0], [0, -3]], 60, axis=0)
    labels = np.repeat(["ant", "bee", "cow", "doe"], 60)
    data = tmp_path / "four.csv"
    data.write_text("a,b,kind\n" + "".join(f"{a:.6f},{b:.6f},{k}\n"
                                          for (a, b), k in zip(X, labels, strict=True)))
    model = tmp_path / "model.npz"
    status, out, _ = run(capsys, "fit", data, "--model", model, "--m", "20", "--multiclass",
                         multiclass, "--progress", "never")
    assert status == 0
    saved = load_model(model.read_bytes()).pipeline[-1]
    expected = "ovr" if multiclass == "ovr" else "ovo"
    # The header line names the split.
    assert out.splitlines()[1].endswith("4 classes one-vs-rest" if expected == "ovr"
                                        else "4 classes one-vs-one (6 pairs)")
    assert saved.multiclass_ == expected
    assert saved.coef_.shape[0] == (4 if expected == "ovr" else 6)
    status, out, err = run(capsys, "predict", model, data, "--decision-values")
    assert status == 0, err
    header, *lines = out.splitlines()
    assert header == "labels ant bee cow doe" and all(len(line.split()) == 4 for line in lines)
    status, out, _ = run(capsys, "predict", model, data)
    predicted = np.array(out.split())
    np.testing.assert_array_equal(predicted,
                                  load_model(model.read_bytes()).pipeline.predict(X))
    assert np.mean(predicted == labels) > 0.8


def test_predict_accepts_placeholder_labels_and_one_class_files(capsys, tmp_path, pair):
    train, _, X_test, y_test = pair
    model = tmp_path / "model.npz"
    assert run(capsys, "fit", train, "--model", model, *FAST)[0] == 0
    unlabelled = write_libsvm(tmp_path / "new.txt", X_test, ["0"] * X_test.shape[0])
    status, out, err = run(capsys, "predict", model, unlabelled)
    assert status == 0, err
    assert len(out.splitlines()) == X_test.shape[0]
    assert "no error or F1: its labels 0 are not among the model's classes (-1, 1)" in err
    positives = y_test == 1
    one_class = write_libsvm(tmp_path / "positives.txt", X_test[positives],
                             ["+1"] * int(positives.sum()))
    status, out, err = run(capsys, "predict", model, one_class)
    assert status == 0, err
    error = float(err.split("error ")[1].split(",")[0])
    assert error == pytest.approx(np.mean(np.array(out.split(), int) != 1))


def test_a_zero_based_model_reads_new_rows_without_index_0_zero_based(capsys, tmp_path):
    """A file whose rows lack index 0 would read one-based on its own (shifted by a column);
    the model's index base decides."""
    X, y, X_test, _ = make_a9a_like(300, 40, random_state=4)
    X = X.tolil()
    X[0, 122] = 1.0  # the training file spans every column
    train = write_libsvm(tmp_path / "train.txt", X.tocsr(), y, base=0)
    assert "0:" in train.read_text()
    model = tmp_path / "model.npz"
    assert run(capsys, "fit", train, "--model", model, "--zero-based", *FAST)[0] == 0
    assert load_model(model.read_bytes()).index_base == 0
    no_zero = X_test[X_test[:, 0].toarray().ravel() == 0]
    new = write_libsvm(tmp_path / "new.txt", no_zero, ["0"] * no_zero.shape[0], base=0)
    status, out, err = run(capsys, "predict", model, new)
    assert status == 0, err
    pipeline = pipeline_from_npz(model.read_bytes())
    expected = pipeline.predict(no_zero)
    assert out.split() == [str(v) for v in expected]


def test_fit_reads_a_test_file_without_index_0_with_the_training_files_base(capsys,
                                                                         monkeypatch, tmp_path):
    """A zero-based pair whose test rows lack index 0 reads as the same pair written
    one-based: the test rows are not shifted by a column."""
    X, y, X_test, y_test = make_a9a_like(300, 60, random_state=5)
    keep = X_test[:, 0].toarray().ravel() == 0
    runs = []
    for base in (0, 1):
        train = write_libsvm(tmp_path / f"train{base}.txt", X, y, base=base)
        test = write_libsvm(tmp_path / f"test{base}.txt", X_test[keep], y_test[keep], base=base)
        runs.append(fit_and_record(capsys, monkeypatch, train, "--test", test, *FAST))
    (zero_out, zero_pred), (one_out, one_pred) = runs
    assert "0:" in (tmp_path / "train0.txt").read_text()
    assert " 0:" not in (tmp_path / "test0.txt").read_text()
    np.testing.assert_array_equal(zero_pred, one_pred)
    assert zero_out.split("test error")[1].split()[0] == one_out.split("test error")[1].split()[0]


def test_unseen_test_labels_are_refused_in_one_line(capsys, tmp_path, pair):
    train, _, X_test, y_test = pair
    test = write_libsvm(tmp_path / "test01.txt", X_test, (y_test > 0).astype(int))
    status, _, err = run(capsys, "fit", train, "--test", test, *FAST)
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "test01.txt has the label(s) 0 that the training data does not have" in err
    assert "average='binary'" not in err


def test_fit_prints_one_f1_line_naming_its_class(capsys):
    status, out, err = run(capsys, "fit", "imbalanced_blobs.csv", "--m", "20",
                           "--max-epochs", "5")
    assert status == 0, err
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("F1")]
    assert len(lines) == 1 and lines[0].startswith("F1 (class fraud)")
    assert "F1 of" not in out


def test_C_is_accepted_wherever_lambda_is_and_never_with_it(capsys):
    status, out, err = run(capsys, "fit", "moons", "--n-samples", "200", "--C", "10", *FAST)
    assert status == 0, err
    assert f"λ = {1 / (2 * 140 * 10):g} (C = 10)" in out
    status, _, err = run(capsys, "fit", "moons", "--C", "10", "--lam", "1e-3")
    assert status == 2 and "not allowed with argument" in err


def test_search_needs_no_lambda_and_prints_f1(capsys, tmp_path):
    """Without --lam or --C (and a grid given by --m) the search's C axis is the defaults'
    grid; it can search the scaling, and prints the chosen model's F1 naming its class."""
    table = tmp_path / "cv.csv"
    m = default_m(140, 2)
    status, out, err = run(capsys, "search", "moons", "--n-samples", "200", "--cv", "2",
                           "--max-epochs", "5", "--scaling", "standard,none", "--n-jobs", "1",
                           "--m", str(m), "--out", table)
    assert status == 0, err
    results = pd.read_csv(table)
    assert sorted(set(results.param_C)) == list(C_values_around_default())
    assert set(results.scaling) == {"standard", "none"}
    assert set(results.param_n_components) == {m}
    chosen = out.split("chosen by CV: ")[1]
    assert " with scaling " in chosen and "F1 (class " in chosen


def test_model_to_npz_saves_a_pipeline():
    X, y = np.random.default_rng(1).normal(size=(120, 3)) * [1, 10, 100], np.repeat([0, 1], 60)
    X[y == 1, 0] += 2
    pipeline = make_pipeline(StandardScaler(), SnacksClassifier(n_components=20,
                                                                random_state=0)).fit(X, y)
    loaded = pipeline_from_npz(model_to_npz(pipeline))
    np.testing.assert_allclose(loaded.decision_function(X), pipeline.decision_function(X),
                               rtol=1e-10)
    assert load_model(model_to_npz(pipeline)).n_features == 3
    # What load_model gives back saves again as it was.
    again = pipeline_from_npz(model_to_npz(loaded))
    np.testing.assert_array_equal(again.predict(X), loaded.predict(X))
    with pytest.raises(ValueError, match="not both"):
        model_to_npz(pipeline, [StandardScaler()])
    with pytest.raises(ValueError, match="unfitted SnacksClassifier"):
        model_to_npz(SnacksClassifier())


@pytest.mark.parametrize("argv", [["--help"], ["fit", "--help"], ["fit"],
                                  ["fit", "x", "--kernel", "sigmoid"]])
def test_help_and_argument_errors_import_no_numerical_library(argv):
    code = ("import sys\nfrom snacks_core.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "loaded = [m for m in ('numpy', 'scipy', 'sklearn', 'numba', 'pandas') "
            "if m in sys.modules]\n"
            "print('LOADED', loaded)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert "LOADED []" in result.stdout


def test_importing_snacks_core_loads_its_estimator_on_first_use():
    code = ("import sys, snacks_core\n"
            "print('sklearn' in sys.modules)\n"
            "print(snacks_core.SnacksClassifier.__name__, 'sklearn' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120, check=True)
    assert result.stdout.split() == ["False", "SnacksClassifier", "True"]


def test_an_index_0_read_one_based_is_refused_naming_the_base(capsys, tmp_path):
    data = tmp_path / "zero.svm"
    data.write_text("1 0:1 2:1\n-1 1:1\n1 0:1\n-1 2:1\n")
    status, _, err = run(capsys, "fit", data, "--one-based")
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert "line 1: index 0 in a file read as one-based" in err and "--zero-based" in err


def test_predict_streams_files_in_blocks_as_one_read(capsys, monkeypatch, tmp_path, pair):
    """Blocks of a few lines (every boundary exercised) give what the whole file gives: LIBSVM
    with the model's base, CSV with its header and text labels read again in every block."""
    train, test, X_test, _ = pair
    model = tmp_path / "model.npz"
    assert run(capsys, "fit", train, "--model", model, *FAST)[0] == 0
    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2))
    label = np.where(X[:, 0] > 0, "right", "left")
    csv = tmp_path / "points.csv"
    csv.write_text("x,y,side\n" + "".join(f"{a:.6f},{b:.6f},{k}\n"
                                           for (a, b), k in zip(X, label, strict=True)))
    csv_model = tmp_path / "points.npz"
    assert run(capsys, "fit", csv, "--model", csv_model, "--m", "20", *FAST[2:])[0] == 0
    whole = [run(capsys, "predict", model, test)[1:], run(capsys, "predict", csv_model, csv)[1:]]
    monkeypatch.setattr(streams, "CHUNK_BYTES", 97)
    blocks = [run(capsys, "predict", model, test)[1:], run(capsys, "predict", csv_model, csv)[1:]]
    assert blocks == whole
    assert whole[1][1].startswith("points.csv: 80 rows predicted; error")
    assert len(whole[0][0].split()) == X_test.shape[0]


# ------------------------------------------- nothing lost, nothing hangs (issue: files)


@pytest.fixture
def fitted(capsys, tmp_path, pair):
    """A model fitted on the training file of ``pair``: (model, train, test)."""
    train, test, _, _ = pair
    model = tmp_path / "model.npz"
    assert run(capsys, "fit", train, "--model", model, *FAST)[0] == 0
    return model, train, test


def test_no_command_writes_over_one_of_its_inputs(capsys, tmp_path, fitted):
    model, train, test = fitted
    link = tmp_path / "link.txt"
    link.symlink_to(test)
    before = {path: path.read_bytes() for path in (model, train, test)}
    for argv in (("predict", model, test, "--out", test),
                 ("predict", model, test, "--out", model),
                 ("predict", model, test, "--out", link),
                 ("predict", model, link, "--out", test),
                 ("fit", train, "--model", train, *FAST),
                 ("fit", train, "--test", test, "--model", test, *FAST)):
        status, out, err = run(capsys, *argv)
        assert status == 1, argv
        assert "an input of this command" in err and "Choose another output" in err, err
        assert len(err.strip().splitlines()) == 1
    assert {path: path.read_bytes() for path in before} == before


def test_an_interrupted_predict_leaves_the_old_output_and_no_partial_file(capsys, monkeypatch,
                                                                         tmp_path, fitted):
    model, _, test = fitted
    out = tmp_path / "predictions.txt"
    out.write_text("the old predictions\n")
    from snacks_core.cli import predict as predict_command

    real = predict_command.labels_from_scores
    calls = []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(predict_command, "labels_from_scores", interrupted)
    monkeypatch.setattr(streams, "CHUNK_BYTES", 2000)
    status, _, err = run(capsys, "predict", model, test, "--out", out)
    assert status != 0 and "interrupted" in err
    assert out.read_text() == "the old predictions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["model.npz", "train.txt", "test.txt", "predictions.txt"])
    monkeypatch.setattr(predict_command, "labels_from_scores", real)
    assert run(capsys, "predict", model, test, "--out", out)[0] == 0
    assert len(out.read_text().split()) == 150


@pytest.mark.parametrize("compress", ["gzip", "bzip2", "xz", "gzip -n"])
def test_predict_reads_compressed_files_as_fit_does(capsys, tmp_path, fitted, compress):
    model, _, test = fitted
    plain = run(capsys, "predict", model, test)
    subprocess.run([*compress.split(), "-k", str(test)], check=True)
    packed = next(p for p in tmp_path.iterdir() if p.name.startswith("test.txt."))
    status, out, err = run(capsys, "predict", model, packed)
    assert status == 0, err
    assert out == plain[1]
    assert err.replace(packed.name, test.name) == plain[2]


def test_special_files_are_refused_before_they_are_opened(capsys, tmp_path, fitted):
    """A FIFO with no writer would block forever, /dev/zero never ends: both are refused at
    once (a subprocess, killed if it hangs; its memory capped)."""
    model, train, _ = fitted
    fifo = tmp_path / "pipe.svm"
    os.mkfifo(fifo)
    for argv in (("predict", model, fifo), ("predict", model, "/dev/zero"),
                 ("predict", fifo, train), ("predict", tmp_path, train),
                 ("fit", train, "--test", fifo, *FAST),
                 ("fit", train, "--test", "/dev/zero", *FAST), ("fit", fifo, *FAST),
                 ("fit", "/dev/zero", *FAST)):
        done = subprocess.run(
            ["bash", "-c", 'ulimit -v 4000000; exec "$@"', "snacks", sys.executable, "-m",
             "snacks_core.cli", *map(str, argv)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, (argv, done.stderr)
        assert "not a regular file" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr and "Errno" not in done.stderr


def test_a_line_longer_than_any_row_is_refused_with_its_number(capsys, monkeypatch, tmp_path,
                                                               fitted):
    model, _, test = fitted
    endless = tmp_path / "endless.svm"
    endless.write_bytes(test.read_bytes()[:500].rsplit(b"\n", 1)[0] + b"\n" + b"0" * 100_000)
    monkeypatch.setattr(streams, "LOCAL_FILE_LIMITS",
                        streams.ReadLimits(max_line_bytes=10_000))
    monkeypatch.setattr(streams, "CHUNK_BYTES", 4096)
    lines = test.read_bytes()[:500].rsplit(b"\n", 1)[0].count(b"\n") + 2
    status, _, err = run(capsys, "predict", model, endless)
    assert status == 1 and f"line {lines:,}: longer than" in err, err
    with pytest.raises(ValueError, match="line 1: longer than"):
        streams_limits = streams.ReadLimits(max_line_bytes=1000)
        from snacks_core.datasets import load_libsvm

        load_libsvm(b"1 1:1" + b" " * 5000 + b"\n", limits=streams_limits)
    from snacks_core.datasets import load_csv

    with pytest.raises(ValueError, match="line 2: longer than"):
        load_csv(b"a,b\n" + b"1" * 5000 + b",2\n", limits=streams.ReadLimits(max_line_bytes=1000))


def test_a_centred_model_on_sparse_rows_and_a_folder_as_model(capsys, tmp_path, fitted):
    """A model trained on dense rows (standard scaling) predicts a LIBSVM file's rows made
    dense; a folder as MODEL is named, not an errno.  One-hot columns in a CSV are on one
    scale: 'auto' uses them as they are, as it does the same rows in a LIBSVM file."""
    _, _, test = fitted
    X, y, _, _ = make_a9a_like(300, 1, random_state=4)
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(X.shape[1])])
    frame["label"] = y
    table = tmp_path / "train.csv"
    frame.to_csv(table, index=False)
    dense = tmp_path / "dense.npz"
    status, out, err = run(capsys, "fit", table, *FAST)
    assert status == 0 and "scaling none (chosen by auto: columns on one scale)" in out, err
    status, out, err = run(capsys, "fit", table, "--model", dense, "--scaling", "standard",
                           *FAST)
    assert status == 0 and "scaling standard" in out, err
    status, out, err = run(capsys, "predict", dense, test)
    assert status == 0, err
    assert len(out.split()) == 150 and "150 rows predicted; error" in err
    status, _, err = run(capsys, "predict", tmp_path, test)
    assert status == 1 and "it is a folder, not a regular file" in err
    assert "Errno" not in err


def test_empty_and_comment_only_files_follow_one_rule(capsys, tmp_path, fitted):
    model, _, _ = fitted
    for content in ("", "# only a comment\n", "\n\n"):
        data = tmp_path / "nothing.svm"
        data.write_text(content)
        status, _, err = run(capsys, "predict", model, data)
        assert status == 1 and "has no data lines" in err, (content, err)


def test_a_cut_short_gzip_file_counts_the_text_it_read(capsys, tmp_path, fitted):
    model, _, test = fitted
    subprocess.run(["gzip", "-k", str(test)], check=True)
    packed = tmp_path / "test.txt.gz"
    cut = tmp_path / "cut.txt.gz"
    cut.write_bytes(packed.read_bytes()[: packed.stat().st_size * 2 // 3])
    status, _, err = run(capsys, "predict", model, cut)
    assert status == 1 and "cut short" in err, err
    assert "after 0 bytes" not in err


@pytest.mark.parametrize("row", [0, 1, 6])
def test_a_class_of_one_row_stays_in_training(capsys, tmp_path, row):
    """One a9a row relabelled 7: scikit-learn's "Target is multiclass but average='binary'"
    leaked when the row fell in the test part; it now stays in training, and a warning names
    the class and its count."""
    from snacks_core.datasets import sample_data_dir

    lines = (sample_data_dir() / "a9a_small.svm").read_text().splitlines(keepends=True)[:600]
    lines[row] = "7 " + lines[row].split(" ", 1)[1]
    data = tmp_path / "mc.trn"
    data.write_text("".join(lines))
    status, out, err = run(capsys, "fit", data, *FAST)
    assert status == 0, err
    assert "the class 7 has 1 row, which stays in the training part" in err
    assert "average" not in err and "F1 (macro average)" in out


def test_fit_prints_the_landmarks_the_model_holds_and_the_scaling_auto_chose(capsys, tmp_path):
    """Duplicate rows are dropped from the landmarks: the m printed is the saved model's (it
    said the m asked for); the scaling 'auto' chose is printed."""
    rng = np.random.default_rng(0)
    X = np.repeat(rng.normal(size=(20, 3)), 10, axis=0)
    y = np.where(X[:, 0] > 0, 1, -1)
    data = tmp_path / "repeated.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": y}).to_csv(data,
                                                                                  index=False)
    model = tmp_path / "model.npz"
    status, out, err = run(capsys, "fit", data, "--m", "60", "--model", model, *FAST[2:])
    assert status == 0, err
    held = load_model(model.read_bytes()).pipeline[-1].embedding_.landmarks_.shape[0]
    assert held < 60 and f"m = {held} (60 asked)" in out
    assert "scaling standard (chosen by auto: columns on different scales)" in out


def test_a_binary_model_saved_from_python_reports_a_class_f1_as_fit_does(capsys, tmp_path):
    """Without a saved F1 class, predict applies fit's rule (the minority class) instead of
    switching to the macro average."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(120, 3)), np.repeat([0, 1], [80, 40])
    X[y == 1, 0] += 2
    model = tmp_path / "python.npz"
    model.write_bytes(model_to_npz(SnacksClassifier(n_components=20, random_state=0).fit(X, y)))
    data = tmp_path / "rows.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": y}).to_csv(data,
                                                                                  index=False)
    status, _, err = run(capsys, "predict", model, data)
    assert status == 0 and "F1 (class 1)" in err and "macro" not in err, err


def test_progress_names_every_file_it_reads(capsys, tmp_path, pair):
    train, test, _, _ = pair
    status, _, err = run(capsys, "fit", train, "--test", test, "--m", "40", "--max-epochs",
                         "10", "--progress", "always")
    assert status == 0, err
    assert "reading train.txt and test.txt" in err


# --------------------------------------------------------------- the first run: compiling


def test_compile_watch_says_once_that_it_compiles_and_counts_the_time():
    import io

    import numba

    from snacks_core.cli.progress import CompileWatch

    @numba.njit
    def twice(x):
        return 2 * x

    stream = io.StringIO()
    with CompileWatch(stream) as watch:
        twice(1)
        twice(1.5)
    assert stream.getvalue() == "snacks: compiling (once after installing)…\n"
    assert watch.compiled and watch.seconds > 0
    again = io.StringIO()
    with CompileWatch(again) as watch:
        twice(2)
    assert again.getvalue() == "" and watch.seconds == 0 and not watch.compiled


def test_a_warm_fit_says_nothing_of_compiling_and_warms_up_before_it_is_timed(
        capsys, monkeypatch, pair):
    from snacks_core.cli import first_run

    order = []
    real_warm_up, real_fit = first_run.warm_up, fit_command.fit_and_measure
    monkeypatch.setattr(fit_command, "warm_up",
                        lambda *a: (order.append("warm up"), real_warm_up(*a))[1])
    monkeypatch.setattr(fit_command, "fit_and_measure",
                        lambda *a: (order.append("fit"), real_fit(*a))[1])
    train = pair[0]
    assert run(capsys, "fit", train, *FAST)[0] == 0
    status, _, err = run(capsys, "fit", train, *FAST)
    assert status == 0 and "compiling" not in err
    assert order == ["warm up", "fit"] * 2


@pytest.mark.slow
def test_a_never_compiled_fit_says_it_compiles_and_times_only_the_fit(tmp_path, pair):
    """A copy of the package with no compiled code anywhere, as after a plain pip install:
    the fit says it compiles, and its embedding and training times leave the compiling out
    (they were seconds of numba's compile time)."""
    import shutil
    from pathlib import Path

    import snacks_core

    source = Path(snacks_core.__file__).parent
    shutil.copytree(source, tmp_path / "copy" / "snacks_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "copy"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba_cache")}
    done = subprocess.run([sys.executable, "-m", "snacks_core.cli", "fit", str(pair[0]),
                           "--m", "40", "--progress", "never"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("snacks: compiling (once after installing)…\n")
    times = {line.split("(s)")[0].strip(): float(line.split()[-1])
             for line in done.stdout.splitlines() if "time (s)" in line}
    assert times["embedding time"] + times["training time"] < 1.0, done.stdout


def test_predict_out_to_a_stream_writes_it_directly(capsys, tmp_path, fitted):
    """--out /dev/stdout or a FIFO: written as it is (a rename would replace its name)."""
    import threading

    model, _, test = fitted
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    status, _, err = run(capsys, "predict", model, test, "--out", fifo)
    reader.join(timeout=30)
    assert status == 0, err
    assert len(received[0].split()) == 150 and fifo.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["model.npz", "train.txt", "test.txt", "out.fifo"])
