"""The `snacks` command line: every command runs, documents itself, and fails in one line."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_moons

from snacks_core import cli
from snacks_core.cli import heatmap as heatmap_command
from snacks_core.cli import model as model_command
from snacks_core.cli import parser as cli_parser
from snacks_core.datasets import make_a9a_like, make_dataset


def run(capsys, *argv):
    """(exit status, stdout, stderr) of ``snacks argv…``."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exc:  # argparse: --help and usage errors
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err):
    return len(err.strip().splitlines()) == 1


@pytest.fixture
def csv_file(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    label = np.where(X[:, 0] * X[:, 1] > 0, "yes", "no")
    path = tmp_path / "data.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "target": label}).to_csv(
        path, index=False)
    return path


def write_libsvm(path, X, y):
    with open(path, "w") as handle:
        for row, label in zip(X, y, strict=True):
            pairs = " ".join(f"{j + 1}:{v:g}"
                             for j, v in zip(row.indices, row.data, strict=True))
            handle.write(f"{int(label):+d} {pairs}\n")
    return path


def test_console_script_points_to_the_program():
    scripts = importlib.metadata.entry_points(group="console_scripts", name="snacks")
    assert [s.value for s in scripts] == ["snacks_core.cli:command_line"]


def test_the_parsers_names_are_the_librarys():
    """The parser writes its choices out (it imports no numerical library): they must be
    the registries'."""
    from snacks_core import datasets, solvers
    from snacks_core.kernels import functions as kernels
    from snacks_core.kernels import landmarks
    from snacks_core.model import sweeps
    from snacks_core.solvers import storage

    assert cli_parser.KERNELS == tuple(kernels.KERNELS)
    assert cli_parser.SAMPLINGS == tuple(landmarks.SAMPLINGS)
    assert cli_parser.SOLVERS == tuple(solvers.SOLVERS)
    assert cli_parser.EMBEDDED_SOLVERS == tuple(solvers.EMBEDDED_SOLVERS)
    assert cli_parser.STORAGES == tuple(storage.STORAGES)
    assert cli_parser.BACKENDS == tuple(sweeps.BACKENDS)
    assert cli_parser.SCALINGS == tuple(datasets.SCALINGS)
    assert cli_parser.PAPER_M == tuple(sweeps.PAPER_M)
    assert cli_parser.PAPER_LAMBDAS == tuple(sweeps.PAPER_LAMBDAS)


@pytest.mark.parametrize("command, options", [
    (None, ["fit", "predict", "heatmap", "compare", "search", "datasets", "examples"]),
    ("fit", ["--m", "--lam", "--C", "--gamma", "--kernel", "--solver", "--test",
             "--label-column", "--scaling", "--max-epochs", "--tol", "--seed", "--dtype",
             "--model", "--zero-based", "--one-based"]),
    ("predict", ["MODEL", "DATA", "--out", "--decision-values", "--zero-based"]),
    ("heatmap", ["--m", "--lam", "--gamma", "--seeds", "--out", "--plot", "--n-jobs",
                 "--backend", "--scheduler", "--cold", "paper"]),
    ("compare", ["--solvers", "--m", "--lam", "--out"]),
    ("search", ["--m", "--lam", "--C", "--gamma", "--scaling", "--cv", "--scoring",
                "--halving", "--refine", "--out", "--model"]),
    ("datasets", ["--download", "--cache-dir"]),
])
def test_help_documents_every_command(capsys, command, options):
    status, out, _ = run(capsys, *([command] if command else []), "--help")
    assert status == 0
    for option in options:
        assert option in out


def test_fit_prints_metrics(capsys):
    status, out, err = run(capsys, "fit", "moons", "--m", "30", "--lam", "1e-3", "--gamma", "2",
                           "--n-samples", "300", "--max-epochs", "20")
    assert status == 0, err
    for metric in ("train error", "test error", "F1", "objective", "embedding time",
                   "training time", "iterations", "stopped by", "C = "):
        assert metric in out
    test_error = float(out.split("test error")[1].split()[0])
    assert test_error < 0.2


def test_fit_reads_csv_with_named_label_column(capsys, csv_file):
    status, out, err = run(capsys, "fit", str(csv_file), "--label-column", "target", "--m", "40",
                           "--lam", "1e-3", "--gamma", "0.5")
    assert status == 0, err
    assert "140 training rows, 60 test rows, 3 features" in out


def test_fit_reads_libsvm_train_and_test_files(capsys, tmp_path):
    X, y, X_test, y_test = make_a9a_like(300, 100, random_state=1)
    train = write_libsvm(tmp_path / "train.svm", X, y)
    test = write_libsvm(tmp_path / "test.svm", X_test, y_test)
    status, out, err = run(capsys, "fit", str(train), "--test", str(test), "--scaling", "none",
                           "--gamma", "0.05", "--m", "50", "--lam", "1e-4", "--solver", "liblinear")
    assert status == 0, err
    assert "300 training rows, 100 test rows" in out


def test_heatmap_writes_table_plot_and_progress_bar(capsys, tmp_path):
    out_csv, out_html = tmp_path / "grid.csv", tmp_path / "grid.html"
    status, out, err = run(capsys, "heatmap", "moons", "--n-samples", "300", "--gamma", "2",
                           "--m", "5,20", "40", "--lam", "1e-2,1e-3", "--seeds", "0,1",
                           "--max-epochs", "10", "--n-jobs", "1", "--out", str(out_csv),
                           "--plot", str(out_html))
    assert status == 0, err
    table = pd.read_csv(out_csv)
    assert len(table) == 3 * 2 * 2
    assert set(table.m) == {5, 20, 40} and set(table.seed) == {0, 1}
    assert "12/12 cells" in err and "[" in err
    assert "lowest mean test error" in out and "picked on the test part, so optimistic" in out
    assert "plotly" in out_html.read_text()[:100_000].lower()


def test_heatmap_gamma_grid(capsys, tmp_path):
    out_csv = tmp_path / "grid.csv"
    status, _, err = run(capsys, "heatmap", "circles", "--n-samples", "200", "--m", "20",
                         "--gamma", "0.5,5", "--lam", "1e-3", "--n-jobs", "1", "--out",
                         str(out_csv), "--plot", str(tmp_path / "g.html"))
    assert status == 0, err
    assert sorted(pd.read_csv(out_csv).gamma) == [0.5, 5.0]


def test_compare_prints_solver_table(capsys, tmp_path):
    status, out, err = run(capsys, "compare", "breast_cancer", "--m", "50", "--lam", "1e-3",
                           "--solvers", "snacks,liblinear", "libsvm", "--out",
                           str(tmp_path / "c.csv"))
    assert status == 0, err
    table = pd.read_csv(tmp_path / "c.csv")
    assert list(table.solver) == ["snacks", "liblinear", "libsvm"]
    assert (table["test error"] < 0.15).all()
    assert "time (s)" in out


def test_datasets_lists_and_downloads_from_a_mirror(capsys, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    X, y, X_test, y_test = make_a9a_like(40, 20, random_state=2)
    write_libsvm(mirror / "a9a", X, y)
    write_libsvm(mirror / "a9a.t", X_test, y_test)
    monkeypatch.setenv("SNACKS_LIBSVM_URL", mirror.as_uri())
    cache = tmp_path / "cache"
    status, out, _ = run(capsys, "datasets", "--cache-dir", str(cache))
    assert status == 0
    for name in ("moons", "a9a_like", "breast_cancer", "a9a", "ijcnn1"):
        assert name in out
    status, out, err = run(capsys, "datasets", "--download", "a9a", "--cache-dir", str(cache))
    assert status == 0, err
    assert "a9a: 40 rows + 20 test rows, 123 features" in out
    status, out, _ = run(capsys, "datasets", "--cache-dir", str(cache))
    assert "cached  a9a" in out


@pytest.mark.parametrize("argv, status", [
    (["fit"], 2),
    (["nonsense"], 2),
    (["fit", "moons", "--kernel", "sigmoid"], 2),
    (["fit", "moons", "--lam", "abc"], 2),
    (["fit", "moons", "--gamma", "wide"], 2),
    (["heatmap", "moons", "--m", "10"], 2),
    (["heatmap", "moons", "--m", "ten", "--lam", "1e-3", "--out", "x.csv"], 2),
    (["fit", "no_such_dataset"], 1),
    (["fit", "moons", "--lam", "-1"], 1),
    (["fit", "moons", "--m", "0"], 2),  # refused by the parser, as "--lam abc" is
    (["heatmap", "moons", "--m", "10", "--lam", "0", "--out", "x.csv"], 1),
    (["heatmap", "moons", "--m", "10,20", "--gamma", "1,2", "--lam", "1e-3", "--out", "x.csv",
      "--plot", "x.html"], 1),
    (["heatmap", "moons", "--m", "5000", "--lam", "1e-3", "--out", "x.csv"], 1),
    (["compare", "moons", "--solvers", "magic"], 1),
    (["datasets", "--download", "mnist-huge"], 1),
])
def test_bad_arguments_give_one_line_and_nonzero_status(capsys, argv, status):
    code, out, err = run(capsys, *argv)
    assert code == status
    assert one_line(err), err
    assert "error" in err


def test_unreadable_files_give_one_line(capsys, tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("a,b,label\n1,2,x\n3,y\n")
    binary = tmp_path / "image.svm"
    binary.write_bytes(bytes(range(256)) * 4)
    for path in (ragged, binary, tmp_path):
        code, _, err = run(capsys, "fit", str(path))
        assert code == 1
        assert one_line(err), err
    code, _, err = run(capsys, "fit", "moons", "--test", str(tmp_path / "missing.csv"))
    assert code == 1 and one_line(err)


def test_download_without_network_gives_one_line(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("SNACKS_LIBSVM_URL", (tmp_path / "offline").as_uri())
    code, _, err = run(capsys, "datasets", "--download", "madelon", "--cache-dir",
                       str(tmp_path / "cache"))
    assert code == 1
    assert one_line(err) and "by hand" in err


def test_sample_files_by_name_with_class_weights(capsys):
    status, out, _ = run(capsys, "datasets")
    assert status == 0
    for name in ("two_spirals.csv", "imbalanced_blobs.csv", "a9a_small.svm"):
        assert name in out
    status, out, err = run(capsys, "fit", "two_spirals.csv", "--m", "30", "--max-epochs", "5")
    assert status == 0, err
    assert "two_spirals.csv: 420 training rows" in out
    for weights in ("balanced", "fraud=9,ok=1"):
        status, out, err = run(capsys, "fit", "imbalanced_blobs.csv", "--m", "20",
                               "--class-weight", weights, "--max-epochs", "5")
        assert status == 0, err
    status, _, err = run(capsys, "fit", "imbalanced_blobs.csv", "--class-weight", "spam=2")
    assert status == 1 and one_line(err) and "'spam', not a label" in err
    status, _, err = run(capsys, "fit", "moons", "--class-weight", "x=-1")
    assert status == 2 and one_line(err)


def test_class_weight_reaches_the_estimator(monkeypatch):
    seen = {}
    real = model_command.estimator_from_settings

    def record(settings):
        seen.update(settings)
        return real(settings)

    monkeypatch.setattr(model_command, "estimator_from_settings", record)
    assert cli.main(["fit", "imbalanced_blobs.csv", "--m", "20", "--max-epochs", "2",
                     "--class-weight", "fraud=9,ok=1"]) == 0
    assert seen["class_weight"] == {"fraud": 9.0, "ok": 1.0}


def test_compare_prints_the_objective_of_every_returned_model(capsys, tmp_path):
    status, out, err = run(capsys, "compare", "breast_cancer", "--m", "30", "--lam", "1e-3",
                           "--solvers", "snacks,libsvm,admm", "--out", str(tmp_path / "c.csv"))
    assert status == 0, err
    assert not re.search(r"\bnan\b", out, re.IGNORECASE)
    assert "for libsvm on the exact kernel; for admm on ADMM's kernel" in out
    table = pd.read_csv(tmp_path / "c.csv")
    assert np.all(np.isfinite(table.objective)) and np.all(table.objective > 0)
    # The exact kernel SVM's optimum is below what a 30-landmark embedding reaches.
    assert table.objective[1] < table.objective[0]
    assert set(table["F1 of"]) == {"malignant"}


def test_csv_label_errors_name_the_option(capsys, tmp_path):
    path = tmp_path / "first.csv"
    path.write_text("grade,a,b\nA,1,2\nB,3,4\nA,5,6\n")
    status, _, err = run(capsys, "fit", str(path))
    assert status == 1 and one_line(err)
    assert "line 2, column 'grade'" in err and "--label-column" in err
    status, _, err = run(capsys, "fit", str(path), "--label-column", "nope")
    assert status == 1 and "no label column 'nope'" in err and "--label-column" in err


def test_n_samples_and_label_column_only_where_they_apply(capsys):
    for argv in (["fit", "moons", "--n-samples", "0"], ["fit", "moons", "--n-samples", "-5"]):
        status, _, err = run(capsys, *argv)
        assert status == 2 and one_line(err) and "--n-samples" in err
    status, _, err = run(capsys, "fit", "iris", "--n-samples", "50")
    assert status == 1 and "generated dataset" in err
    status, _, err = run(capsys, "fit", "breast_cancer", "--label-column", "99")
    assert status == 1 and "built-in dataset" in err


def test_heatmap_writes_cells_as_they_finish(capsys, tmp_path, monkeypatch):
    """Each finished cell is flushed to OUT.partial at once; the sorted table then becomes
    OUT and the partial file goes."""
    out = tmp_path / "grid.csv"
    lengths = []
    real = heatmap_command.robustness_grid

    def watch(*args, resources, **kwargs):
        def report(done, total, row):
            resources.progress(done, total, row)
            lengths.append(len(pd.read_csv(f"{out}.partial")))
        return real(*args, resources=dataclasses.replace(resources, progress=report),
                    **kwargs)

    monkeypatch.setattr(heatmap_command, "robustness_grid", watch)
    status, _, err = run(capsys, "heatmap", "moons", "--n-samples", "200", "--m", "5,10",
                         "--lam", "1e-2,1e-3", "--n-jobs", "1", "--max-epochs", "5",
                         "--out", str(out))
    assert status == 0, err
    assert lengths == [1, 2, 3, 4]
    table = pd.read_csv(out)
    assert len(table) == 4 and list(table.m) == sorted(table.m)
    assert not (tmp_path / "grid.csv.partial").exists()


def test_a_heatmap_that_fails_before_its_first_cell_leaves_the_output_alone(capsys, tmp_path):
    out = tmp_path / "results.csv"
    out.write_text("precious\n")
    status, _, err = run(capsys, "heatmap", "moons", "--n-samples", "100", "--m", "5000",
                         "--lam", "1e-3", "--out", str(out))
    assert status == 1 and one_line(err)
    assert out.read_text() == "precious\n"
    status, _, err = run(capsys, "heatmap", "moons", "--m", "5", "--lam", "1e-3", "--out",
                         str(tmp_path))
    assert status == 1 and "it is a folder" in err


def test_fit_defaults_are_the_apps_data_aware_ones(capsys):
    """Without --m and --lam, `snacks fit` trains with λ = 0.02/n and m = 2√n (within
    [50, 500], at most 100 on two features) on its training rows beyond the small sets (two
    classes: more than 15,000 rows): the rule the app's sidebar starts from (which rounds
    them to its sliders' steps).  On a small set it chooses C by cross-validation and says
    so, each candidate with its CV error."""
    from snacks_core.app.sidebar import defaults_for

    status, out, _ = run(capsys, "fit", "moons", "--n-samples", "22000")
    n_train = 15400
    assert status == 0 and f"{n_train} training rows" in out
    assert f"m = 100, λ = {0.02 / n_train:g} (C = 25)" in out
    assert "cross-validation" not in out
    app = defaults_for(make_dataset(*make_moons(22000, random_state=0), "moons"), 0.3)
    assert app["m"] == 100 and app["lam"] == 1e-6 and app["C"] == 20.0  # the steps near 100

    status, out, _ = run(capsys, "fit", "moons", "--n-samples", "2000")
    chosen = re.search(r"m = 75, λ = (\S+) \(C = (\S+)\)", out)
    line = re.search(r"C = (\S+) chosen by a 3-fold cross-validation on the training rows "
                     r"\(a small set: at most 2,000 rows, or 15,000 over its one-vs-one "
                     r"problems; CV error at C = 1: (\S+) %, 5: (\S+) %, 25: (\S+) %\)", out)
    assert status == 0 and chosen and line and chosen[2] == line[1]
    errors = dict(zip((1.0, 5.0, 25.0), map(float, line.groups()[1:]), strict=True))
    assert float(chosen[2]) == min(errors, key=lambda C: (errors[C], C))
    assert float(chosen[1]) == pytest.approx(1 / (2 * 1400 * float(chosen[2])), rel=1e-5)


def test_search_chooses_by_cv_and_tests_the_chosen_model_once(capsys, tmp_path):
    """The test part is looked at once, after the choice: shuffling its labels changes the
    reported test error and nothing else."""

    from snacks_core.persistence import model_from_npz

    X, y = make_moons(300, noise=0.3, random_state=0)
    X_test, y_test = make_moons(150, noise=0.3, random_state=1)
    train = tmp_path / "train.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(train, index=False)
    outputs = []
    for name, labels in (("test.csv", y_test), ("shuffled.csv", y_test[::-1])):
        test = tmp_path / name
        pd.DataFrame({"a": X_test[:, 0], "b": X_test[:, 1], "y": labels}).to_csv(test,
                                                                                index=False)
        table, model = tmp_path / f"{name}.cv.csv", tmp_path / f"{name}.npz"
        status, out, err = run(capsys, "search", str(train), "--test", str(test), "--gamma",
                               "0.1,1,10", "--lam", "1e-4,1e-2", "--m", "10,30", "--cv", "3",
                               "--out", str(table), "--model", str(model))
        assert status == 0, err
        outputs.append((out, pd.read_csv(table), model_from_npz(model.read_bytes())))
    (out, results, model), (shuffled_out, shuffled_results, shuffled_model) = outputs
    assert len(results) == 12 and results["rank_test_score"].min() == 1
    pd.testing.assert_frame_equal(results.drop(columns=[c for c in results if "time" in c]),
                                  shuffled_results.drop(columns=[c for c in results
                                                                 if "time" in c]))
    best = results.loc[results["rank_test_score"].idxmin()]
    chosen = (f"γ = {best['param_gamma']:.4g}, λ = {best['param_lam']:g}, "
              f"m = {best['param_n_components']}")
    assert f"chosen by CV: {chosen};" in out and f"chosen by CV: {chosen};" in shuffled_out
    assert "12 settings, 36 fits" in out
    scaled = (X_test - X.mean(axis=0)) / X.std(axis=0)
    error = np.mean(model.predict(scaled) != y_test)
    assert f"test error of the chosen model {error:.4f}" in out
    np.testing.assert_array_equal(model.coef_, shuffled_model.coef_)


EXIT_HANDLER = """
import atexit, sys
atexit.register(lambda: print("exit handler ran"))
sys.argv = ["snacks", *sys.argv[1:]]
from snacks_core.cli import command_line
command_line()
"""


@pytest.mark.slow
@pytest.mark.parametrize("argv, code", [(["fit", "moons", "--n-samples", "200"], 0),
                                        (["fit", "no-such-file.svm"], 1)])
def test_the_program_exits_with_its_status_output_and_exit_handlers(argv, code):
    done = subprocess.run([sys.executable, "-c", EXIT_HANDLER, *argv], capture_output=True,
                          text=True)
    assert done.returncode == code
    # Everything printed arrives (flushed before the process ends), handlers last.
    lines = done.stdout.splitlines()
    assert lines[-1] == "exit handler ran"
    if code == 0:
        assert lines[0].startswith("moons: 140 training rows, 60 test rows")
    else:
        assert "error: DATA 'no-such-file.svm' is neither" in done.stderr


def test_help_states_the_defaults_the_library_applies():
    """The parser leaves the estimator's and the search's parameters unset (each command
    then keeps the library's default, written once in its signature); the help text that
    quotes them must say what the library applies."""
    from snacks_core.model.defaults import DEFAULT_TEST_SIZE, SEARCH_FOLDS
    from snacks_core.model.estimator import SnacksClassifier
    from snacks_core.model.specs import MULTICLASS_TOL, tol_value

    # tol='auto': the help states the two-class value first, then the many-class one.
    library = {**SnacksClassifier().get_params(), "cv": SEARCH_FOLDS,
               "test_size": DEFAULT_TEST_SIZE, "tol": tol_value(SnacksClassifier().tol)}
    subparsers = next(action for action in cli_parser.build_parser()._actions
                      if action.choices and "fit" in action.choices).choices
    checked = 0
    for command in ("fit", "compare", "heatmap", "search"):
        for action in subparsers[command]._actions:
            name = action.dest
            if (name not in ("degree", "max_epochs", "tol", "cv", "test_size")
                    or action.help is None):
                continue
            assert action.default is None, f"{command} --{name} writes a default again"
            stated = re.search(r"default ([0-9.e-]+)", action.help)
            assert stated and float(stated.group(1)) == library[name], (command, name)
            if name == "tol":
                many = re.search(r"and ([0-9.e-]+) for each class", action.help)
                assert many and float(many.group(1)) == MULTICLASS_TOL, command
            checked += 1
    assert checked >= 14


def test_search_without_a_grid_runs_the_default_search_and_says_what_it_scored(capsys,
                                                                               tmp_path):
    """Without --gamma, --m, --lam and --C: γ × C around the defaults then larger m (the
    library's search_around_defaults, the app's Auto-tune); the summary counts the settings
    it lists from, and the choice is printed with γ as a number."""
    X, y = make_moons(300, noise=0.3, random_state=0)
    train = tmp_path / "train.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(train, index=False)
    table = tmp_path / "settings.csv"
    status, out, err = run(capsys, "search", str(train), "--out", str(table))
    assert status == 0, err
    scored = pd.read_csv(table)
    assert scored["gamma"].nunique() in (5, 6) and scored["C"].nunique() == 5
    assert scored["m"].nunique() == 2
    settings = re.search(r"(\d+) settings, (\d+) fits", out)
    assert ("210 training rows, scaling standard (chosen by auto: columns on different "
            "scales), searched by 3-fold") in out
    shown = re.search(r"the best (\d+) of (\d+) by CV accuracy", out)
    assert shown and shown.group(2) == settings.group(1)
    assert int(shown.group(1)) == len(re.findall(r"^  \d\.\d{4} ± \d\.\d{4}  γ = ", out,
                                                 flags=re.MULTILINE))
    chosen = re.search(r"chosen by CV: γ = ([0-9.e+-]+), C = ([0-9.e+-]+), m = (\d+);", out)
    assert chosen and float(chosen.group(1)) > 0
    # The γ and C the ladder of m ran at, the m it tried, in order, each with its CV
    # error, and why it stopped.
    ladder = re.search(r"^m: γ = ([0-9.e+-]+), C = ([0-9.e+-]+): (.*?)"
                       r"(?:; at m = ([\d,]+) also γ = ([0-9.e+-]+) \(CV error ([\d.]+) %\))?"
                       r"; stopped: (.*)$", out, flags=re.MULTILINE)
    assert ladder, out
    steps = re.findall(r"([\d,]+) \(CV error ([\d.]+) %\)", ladder.group(3))
    assert [int(m) for m, _ in steps] == sorted(scored["m"].unique().tolist())
    last = scored[(scored["rows"] == scored["rows"].max())
                  & (scored["C"] == float(ladder.group(2)))]
    at = last[np.isclose(last["gamma"], float(ladder.group(1)), rtol=1e-3)]
    assert [float(e) for _, e in steps] == pytest.approx(100 * at.sort_values("m")["cv_error"],
                                                         abs=0.006)
    # The ladder's top rung scored the next γ up too (it reached its top here: two m).
    assert ladder.group(4) and int(ladder.group(4).replace(",", "")) == scored["m"].max()
    up = last[np.isclose(last["gamma"], float(ladder.group(5)), rtol=1e-3)]
    assert float(ladder.group(5)) > float(ladder.group(1))
    assert up["m"].tolist() == [scored["m"].max()]
    assert float(ladder.group(6)) == pytest.approx(100 * up["cv_error"].iloc[0], abs=0.006)


def test_compare_refuses_a_cluster_with_what_to_run_instead(capsys):
    status, out, err = run(capsys, "compare", "moons", "--scheduler", "tcp://127.0.0.1:1")
    assert status != 0
    assert "snacks compare --scheduler is not offered" in err
    assert "snacks search DATA --scheduler ADDRESS" in err


def test_search_on_an_address_where_no_scheduler_answers_gets_one_line(capsys):
    status, out, err = run(capsys, "search", "moons", "--m", "20", "--C", "1",
                           "--scheduler", "tcp://127.0.0.1:1")
    assert status == 1 and err.count("\n") == 1
    assert "snacks search --scheduler: no Dask scheduler answered at tcp://127.0.0.1:1" in err


@pytest.mark.parametrize("argv", [
    ["search", "{data}", "--m", "20", "--C", "1", "--cv", "2", "--out", "{data}"],
    ["search", "{data}", "--m", "20", "--C", "1", "--cv", "2", "--model", "{link}"],
    ["compare", "{data}", "--solvers", "liblinear", "--m", "20", "--out", "{data}"],
    ["heatmap", "{data}", "--m", "20", "--lam", "1e-3", "--out", "{link}"],
    ["heatmap", "{data}", "--m", "20", "--lam", "1e-3", "--out", "x.csv", "--plot", "{data}"],
])
def test_no_command_writes_over_its_data(capsys, tmp_path, argv):
    """search, compare and heatmap refuse an output that is DATA (by its path or a link to
    it), before any work, and leave DATA as it was."""
    X, y = make_moons(120, noise=0.2, random_state=0)
    data = tmp_path / "train.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(data, index=False)
    (tmp_path / "link.csv").symlink_to(data)
    before = data.read_bytes()
    argv = [a.format(data=data, link=tmp_path / "link.csv") for a in argv]
    argv = [str(tmp_path / a) if a == "x.csv" else a for a in argv]
    status, out, err = run(capsys, *argv)
    assert status != 0 and "an input of this command" in err and one_line(err)
    assert data.read_bytes() == before


def test_a_heatmap_keeps_the_old_table_until_the_new_one_is_complete(capsys, tmp_path,
                                                                      monkeypatch):
    """The finished cells go to OUT.partial as they come; OUT keeps its old content until
    the whole table replaces it, and a grid that fails midway leaves OUT as it was."""
    out = tmp_path / "grid.csv"
    out.write_text("old table\n")
    seen = []

    def fail_after_a_cell(*args, resources, **kwargs):
        resources.progress(1, 2, {name: 0 for name in heatmap_command.GRID_COLUMNS})
        seen.append((out.read_text(), (tmp_path / "grid.csv.partial").exists()))
        raise ValueError("the grid failed")

    monkeypatch.setattr(heatmap_command, "robustness_grid", fail_after_a_cell)
    status, _, err = run(capsys, "heatmap", "moons", "--n-samples", "120", "--m", "20",
                         "--lam", "1e-3", "--out", str(out))
    assert status != 0 and "the grid failed" in err
    assert seen == [("old table\n", True)]
    assert out.read_text() == "old table\n"


def test_an_output_among_the_files_of_a_data_glob_is_refused(tmp_path):
    """A cluster's DATA is a glob: an output that is one of the files it matches is DATA."""
    from snacks_core.cli.output import check_writable

    (tmp_path / "part-0.csv").write_text("a,y\n1,0\n")
    (tmp_path / "part-1.csv").write_text("a,y\n2,1\n")
    with pytest.raises(ValueError, match="DATA"):
        check_writable(tmp_path / "part-1.csv", [("DATA", str(tmp_path / "part-*.csv"))])
    check_writable(tmp_path / "model.npz", [("DATA", str(tmp_path / "part-*.csv"))])
