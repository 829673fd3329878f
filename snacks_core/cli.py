"""The ``snacks`` command line: fit a model, fill a robustness heatmap, compare solvers.

::

    snacks fit DATA [options]                  train one model and print its metrics
    snacks heatmap DATA --m … --lam … [options] test error over an (m, λ) or (γ, λ) grid
    snacks compare DATA [options]              every solver on one setting (Tables III–VII)
    snacks datasets [--download NAME …]        list, or download, the public LIBSVM datasets

DATA is a built-in name — a synthetic generator, a scikit-learn bundled dataset,
``a9a_like`` (the a9a-shaped generator) or a public LIBSVM dataset (downloaded once into
the cache), a file of ``sample_data/`` by its name, or the path of a CSV or LIBSVM file.
Mistakes give one line on stderr and exit status 2 (bad arguments) or 1 (bad data, failed
download, impossible run); a heatmap stopped by Ctrl-C writes its finished cells and exits
with status 3 (130 when a second Ctrl-C aborts it: the cells finished so far stay in the
output file, which gets each cell as it finishes).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from . import datasets
from .analysis import DEFAULT_M, data_aware_defaults, evaluate
from .estimator import SnacksClassifier
from .kernels import KERNELS, resolve_gamma
from .landmarks import SAMPLINGS
from .objective import lam_to_C
from .persistence import model_to_npz
from .pipeline import embedded_row_blocks
from .search import SnacksSearchCV
from .solvers import EMBEDDED_SOLVERS, SOLVERS
from .storage import STORAGES, memory_budget_bytes
from .sweeps import BACKENDS, GRID_COLUMNS, PAPER_LAMBDAS, PAPER_M, robustness_grid, summarize_grid

A9A_LIKE = "a9a_like"

# Exit status of a heatmap stopped before its last cell (its finished cells are written).
STOPPED = 3

# The kernel on which each solver's objective F is measured.
OBJECTIVE_KERNEL = {
    "libsvm": "the exact kernel",
    "admm": "ADMM's kernel approximation K̃",
}

# The exact kernel SVM (LIBSVM) needs the n × n kernel: `compare` skips it above this size.
EXACT_MAX_ROWS = 20_000

# Above this many training rows `fit` measures the training error on a sample of them (an
# embedding pass over every training row would cost as much as the fit's own).
TRAIN_ERROR_ROWS = 200_000


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``snacks heatmap: error: … (see snacks heatmap --help)``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _number_list(kind, name, presets=None):
    """Parse '1e-3,1e-4' (or one value per argument) into a list of ``kind``."""

    def parse(text):
        if presets and text in presets:
            return list(presets[text])
        values = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                values.append(kind(part))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{name} takes {kind.__name__} values separated by commas, got {part!r}"
                ) from None
        return values

    return parse


def _gamma_value(text):
    if text in ("scale", "auto"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gamma takes positive numbers, 'scale' or 'auto', got {text!r}") from None


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"takes a positive whole number, got {text!r}")
    return value


def _positive_finite(text):
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"takes a positive finite number, got {text!r}")
    return value


def _class_weight(text):
    if text in ("balanced", "none"):
        return None if text == "none" else text
    weights = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        label, sep, weight = part.rpartition("=")
        try:
            value = float(weight)
        except ValueError:
            value = math.nan
        if not sep or not label or not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(
                f"takes 'balanced', 'none' or LABEL=WEIGHT pairs separated by commas with "
                f"positive weights, got {part!r}")
        weights[label] = value
    if not weights:
        raise argparse.ArgumentTypeError("takes 'balanced', 'none' or LABEL=WEIGHT pairs")
    return weights


def _gamma_list(text):
    return [_gamma_value(part) for part in filter(None, (p.strip() for p in text.split(",")))]


def _flatten(lists):
    return [value for values in lists for value in values]


def _add_data_arguments(parser):
    parser.add_argument("data", metavar="DATA", help=(
        "a built-in dataset name (see 'snacks datasets') or the path of a CSV or LIBSVM file"))
    parser.add_argument("--test", metavar="FILE", help=(
        "a test file in the same format (default: a stratified split of DATA, or the "
        "dataset's own test part)"))
    parser.add_argument("--label-column", metavar="NAME_OR_INDEX", help=(
        "label column of a CSV file (name or 0-based index; default: the last column)"))
    parser.add_argument("--test-size", type=float, default=0.3, metavar="FRACTION",
                        help="held-out fraction when DATA has no test part (default 0.3)")
    parser.add_argument("--scaling", choices=datasets.SCALINGS, default="standard", help=(
        "feature scaling fitted on the training part (default standard; sparse data is "
        "scaled without centring)"))
    parser.add_argument("--n-samples", type=_positive_int, metavar="N", help=(
        "rows of a generated dataset (synthetic default 1000; a9a_like default 32561 "
        "training + half as many test rows)"))


def _add_model_arguments(parser, *, grid):
    parser.add_argument("--kernel", choices=KERNELS, default="rbf", help="kernel (default rbf)")
    if grid:
        parser.add_argument("--gamma", type=_gamma_list, nargs="+", default=[["scale"]],
                            metavar="GAMMA", help=(
                                "γ value(s), comma separated, or 'scale'/'auto' "
                                "(default scale = 1/(d·Var X)); several values give a "
                                "(γ, λ) grid"))
    else:
        parser.add_argument("--gamma", type=_gamma_value, default="scale", metavar="GAMMA",
                            help="γ > 0, or 'scale'/'auto' (default scale = 1/(d·Var X))")
    parser.add_argument("--degree", type=int, default=3, help="polynomial degree (default 3)")
    parser.add_argument("--coef0", type=float, default=1.0,
                        help="polynomial offset c₀ (default 1)")
    parser.add_argument("--sampling", choices=SAMPLINGS, default="balanced",
                        help="landmark selection (default balanced: as many per class as "
                             "its rows allow)")
    parser.add_argument("--max-epochs", type=_positive_finite, default=50, metavar="EPOCHS",
                        help="solver budget in passes over the data (default 50)")
    if not grid:
        parser.add_argument("--class-weight", type=_class_weight, metavar="WEIGHTS", help=(
            "'balanced' (weights inversely proportional to class frequencies), or "
            "LABEL=WEIGHT pairs such as 'fraud=9,ok=1' (default: every row weighs 1)"))
    parser.add_argument("--tol", type=float, default=1e-3,
                        help="solver tolerance (relative duality gap for Snacks; default 1e-3)")
    parser.add_argument("--dtype", choices=("float64", "float32") + (("auto",) if grid else ()),
                        default="float32", help=(
                            "precision of the embedding (default float32, as "
                            + ("robustness_grid" if grid else "SnacksClassifier")
                            + ": the same test errors to rounding, half the memory, faster"
                            + ("; auto: float64 when it fits in memory)" if grid else ")")))


def _memory_size(text):
    try:
        memory_budget_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _add_resource_arguments(parser):
    parser.add_argument("--memory-budget", type=_memory_size, metavar="SIZE", help=(
        "memory the embedding may take, e.g. 2GB or 512MiB (default: half of the memory "
        "available); a larger embedding is stored compactly (float16) or on disk"))
    parser.add_argument("--storage", choices=STORAGES, default="auto", help=(
        "where the embedding lives during training (default auto: chosen from the budget)"))
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress lines on stderr for reading, embedding, training and "
                             "predicting (default auto: when stderr is a terminal)")


def build_parser() -> argparse.ArgumentParser:
    """The ``snacks`` parser and its five subcommands."""
    parser = _Parser(
        prog="snacks", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Large-scale kernel SVMs: Nyström embedding + fast primal solvers "
                    "(Snacks, Tanji et al.).  The problem solved is F(w) = (1/n) Σ "
                    "max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², LIBSVM's C = 1/(2nλ).",
        epilog="examples:\n"
               "  snacks datasets\n"
               "  snacks fit moons --m 50 --lam 1e-3 --gamma 2\n"
               "  snacks heatmap a9a_like --scaling none --gamma 0.01 --m paper --lam paper "
               "--out grid.csv --plot grid.html\n"
               "  snacks heatmap data.csv --m 100 --gamma 0.1,1,10 --lam 1e-5,1e-3 "
               "--seeds 0,1,2 --out grid.csv\n"
               "  snacks compare a9a_like --scaling none --gamma 0.01 --m 800 --lam 1e-5\n"
               "  snacks search data.csv --gamma 0.1,1 --lam 1e-5,1e-3 --m 100,400 --cv 5 "
               "--model best.npz\n"
               "\nrun 'snacks COMMAND --help' for the options of each command.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                     parser_class=_Parser)

    fit = commands.add_parser("fit", help="train one model and print its metrics",
                              description="Train SnacksClassifier on DATA and print train/test "
                                          "error, F1, objective, times and why the solver "
                                          "stopped.")
    _add_data_arguments(fit)
    _add_model_arguments(fit, grid=False)
    fit.add_argument("--m", type=int, default=None,
                     help="landmarks m (default 2√n within [50, 500] for n training rows, "
                          "100 at most on two features, as in the app)")
    fit.add_argument("--lam", type=float, default=None,
                     help="regularisation λ > 0 (default 0.02/n for n training rows, that is "
                          "C = 25, as in the app)")
    fit.add_argument("--solver", choices=SOLVERS, default="snacks",
                     help="solver (default snacks; libsvm is the exact kernel SVM)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_resource_arguments(fit)

    heatmap = commands.add_parser(
        "heatmap", help="test error over an (m, λ) or (γ, λ) grid",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fill a robustness grid (the paper's Fig. 2) with "
                    "snacks_core.sweeps.robustness_grid: landmarks and kernel blocks shared "
                    "across m, warm starts along λ, columns in parallel.  Writes one CSV row "
                    "per cell and seed, each cell as soon as it finishes; a progress bar goes "
                    "to stderr.  Ctrl-C stops after the columns in progress, writes the "
                    f"finished cells and exits with status {STOPPED}.",
        epilog="'--m paper --lam paper' is the 12 × 13 grid of the paper's Fig. 2 "
               "(m from 10 to 2000, λ from 1e-9 to 1e-3).\n"
               "On a Dask cluster: --backend dask --scheduler tcp://HOST:8786 (workers need "
               "snacks-explorer installed).")
    _add_data_arguments(heatmap)
    _add_model_arguments(heatmap, grid=True)
    heatmap.add_argument("--m", type=_number_list(int, "--m", {"paper": PAPER_M}), nargs="+",
                         required=True, metavar="M",
                         help="landmark counts, comma separated, or 'paper'")
    heatmap.add_argument("--lam", type=_number_list(float, "--lam", {"paper": PAPER_LAMBDAS}),
                         nargs="+", required=True, metavar="LAMBDA",
                         help="regularisations λ > 0, comma separated, or 'paper'")
    heatmap.add_argument("--seeds", type=_number_list(int, "--seeds"), nargs="+",
                         default=[[0]], metavar="SEED",
                         help="seeds, comma separated (default 0); one run per seed and cell")
    heatmap.add_argument("--solver", choices=tuple(EMBEDDED_SOLVERS), default="snacks",
                         help="embedded solver (default snacks)")
    heatmap.add_argument("--cold", action="store_true",
                         help="start every λ from zero instead of the previous λ's solution")
    heatmap.add_argument("--n-jobs", type=int, default=-1,
                         help="columns solved at once locally (default -1: every core)")
    heatmap.add_argument("--backend", choices=BACKENDS, default="threads",
                         help="threads (default: columns share the kernel blocks), loky "
                              "(local processes) or dask (dask.distributed)")
    heatmap.add_argument("--scheduler", metavar="ADDRESS", help=(
        "Dask scheduler address, e.g. tcp://10.0.0.5:8786 (with --backend dask; default: a "
        "local cluster on this machine)"))
    heatmap.add_argument("--out", required=True, metavar="CSV", help="where to write the table")
    heatmap.add_argument("--plot", metavar="HTML", help="also write the heatmap as an HTML page")

    compare = commands.add_parser(
        "compare", help="every solver on one setting: the paper's Tables III–VII",
        description="Train every solver with the same kernel, m, λ and seed and print time "
                    "(embedding + training) and test error, as in the paper's tables.  The "
                    f"exact kernel SVM (libsvm) is skipped above {EXACT_MAX_ROWS:,} training "
                    "rows unless named in --solvers.")
    _add_data_arguments(compare)
    _add_model_arguments(compare, grid=False)
    compare.add_argument("--m", type=int, default=800, help="landmarks m (default 800, as for "
                                                            "a9a in the paper)")
    compare.add_argument("--lam", type=float, default=1e-5, help="regularisation λ > 0 "
                                                                 "(default 1e-5)")
    compare.add_argument("--solvers", type=_number_list(str, "--solvers"), nargs="+",
                         metavar="SOLVER", help=f"solvers to run (default all: "
                                                f"{', '.join(SOLVERS)})")
    compare.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_resource_arguments(compare)
    compare.add_argument("--out", metavar="CSV", help="also write the table as CSV")

    _add_search_parser(commands)

    listing = commands.add_parser(
        "datasets", help="list the built-in datasets; download public LIBSVM ones",
        description="List every DATA name (generators, bundled sets, the files of "
                    "sample_data/) and which public LIBSVM datasets are in the cache "
                    "($SNACKS_DATA_HOME, default ~/.cache/snacks_explorer); --download fetches "
                    "them.")
    listing.add_argument("--download", nargs="+", metavar="NAME",
                         help="public LIBSVM datasets to download ('all' for every one)")
    listing.add_argument("--cache-dir", metavar="DIR", help="download into DIR instead")
    return parser


def _add_search_parser(commands):
    search = commands.add_parser(
        "search", help="choose γ, λ and m by cross-validation; test the chosen model once",
        description="Cross-validated search (snacks_core.search.SnacksSearchCV) over the "
                    "grid of γ × λ × m on the training part only: each fold's grid shares "
                    "landmarks and embeddings across m and warm starts along λ.  Prints the "
                    "best cells by CV score, refits the chosen one on the whole training "
                    "part and prints its test error once, on the test part the search never "
                    "saw.")
    _add_data_arguments(search)
    _add_model_arguments(search, grid=True)
    search.add_argument("--m", type=_number_list(int, "--m"), nargs="+", default=[[DEFAULT_M]],
                        metavar="M", help=f"landmark counts, comma separated (default "
                                          f"{DEFAULT_M})")
    search.add_argument("--lam", type=_number_list(float, "--lam"), nargs="+", required=True,
                        metavar="LAMBDA", help="regularisations λ > 0, comma separated")
    search.add_argument("--cv", type=_positive_int, default=5,
                        help="stratified folds (default 5)")
    search.add_argument("--scoring", default=None, metavar="SCORER", help=(
        "a scikit-learn scorer name, e.g. f1, balanced_accuracy, roc_auc (default accuracy)"))
    search.add_argument("--halving", action="store_true", help=(
        "successive halving: score every cell on a subsample, keep the best third on three "
        "times the rows, until all rows"))
    search.add_argument("--refine", type=int, default=0, metavar="ROUNDS", help=(
        "rounds of coarse-to-fine refinement of γ and λ around the best cell (default 0)"))
    search.add_argument("--solver", choices=tuple(EMBEDDED_SOLVERS), default="snacks",
                        help="embedded solver (default snacks)")
    search.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    search.add_argument("--n-jobs", type=int, default=-1,
                        help="grid columns solved at once (default -1: every core)")
    search.add_argument("--out", metavar="CSV", help="write cv_results_ as CSV")
    search.add_argument("--model", metavar="NPZ", help=(
        "save the chosen model, refitted on the training part, with its scaling (.npz)"))


def load_data(spec, *, label_column=None, n_samples=None, seed=0,
              progress=None) -> datasets.Dataset:
    """The dataset DATA names: a built-in name, a file of sample_data/, or a file path."""
    generated = spec in datasets.SYNTHETIC or spec == A9A_LIKE
    if n_samples is not None and not generated:
        raise ValueError(f"--n-samples sets the size of a generated dataset "
                         f"({', '.join(datasets.SYNTHETIC)}, {A9A_LIKE}); {spec!r} is not one.")
    built_in = generated or spec in datasets.BUNDLED or spec in datasets.LIBSVM_DATASETS
    if label_column is not None and built_in:
        raise ValueError(f"--label-column chooses the label of a CSV file; {spec!r} is a "
                         "built-in dataset with its own labels.")
    if spec in datasets.SYNTHETIC:
        return datasets.make_synthetic(spec, 1000 if n_samples is None else n_samples,
                                       random_state=seed)
    if spec in datasets.BUNDLED:
        return datasets.load_bundled(spec)
    if spec == A9A_LIKE:
        n_train = 32561 if n_samples is None else n_samples
        X, y, X_test, y_test = datasets.make_a9a_like(n_train, max(1, n_train // 2),
                                                      random_state=seed)
        return datasets.make_dataset(X, y, A9A_LIKE, X_test=X_test, y_test=y_test,
                                     description="a9a-shaped synthetic problem")
    if spec in datasets.LIBSVM_DATASETS:
        return datasets.fetch_libsvm(spec)
    path = Path(spec)
    if not path.is_file() and spec in datasets.sample_files():
        path = datasets.sample_data_dir() / spec
    if not path.is_file():
        raise ValueError(f"DATA {spec!r} is neither a built-in dataset nor a file; see "
                         "'snacks datasets' for the names.")
    return _load_file(path, label_column, progress)


def _load_file(path, label_column, progress=None):
    """A data file; for a CSV, errors about its columns say how to choose the label."""
    if label_column is not None and label_column.lstrip("-").isdigit():
        label_column = int(label_column)
    reading = None if progress is None else progress.reader(Path(path).name)
    try:
        return datasets.load_file(path, label_column=label_column, progress=reading)
    except ValueError as exc:
        message = str(exc)
        if Path(path).suffix.lower() in (".csv", ".tsv") or ".csv." in Path(path).name.lower():
            if "label" in message or "not a number" in message:
                message += (" Choose the label column with --label-column NAME_OR_INDEX "
                            "(default: the last column).")
        raise ValueError(message) from None


def _split(args, progress=None):
    dataset = load_data(args.data, label_column=args.label_column, n_samples=args.n_samples,
                        seed=getattr(args, "seed", 0), progress=progress)
    if args.test:
        test = _load_file(args.test, args.label_column, progress)
        width = max(dataset.n_features, test.n_features)
        dataset = datasets.make_dataset(_widen(dataset.X, width), dataset.y, dataset.name,
                                        X_test=_widen(test.X, width), y_test=test.y)
    return datasets.split_dataset(dataset, test_size=args.test_size, scaling=args.scaling,
                                  random_state=getattr(args, "seed", 0))


def _widen(X, n_features):
    """LIBSVM files end at their last non-zero column: pad a sparse X with empty columns."""
    if X.shape[1] < n_features and sp.issparse(X):
        X = sp.csr_matrix(X, copy=True)
        X.resize((X.shape[0], n_features))
    return X


def _model(args, solver, classes):
    """The estimator ``fit`` and ``compare`` train, from their options."""
    return SnacksClassifier(kernel=args.kernel, gamma=args.gamma, degree=args.degree,
                            coef0=args.coef0, n_components=args.m, lam=args.lam,
                            solver=solver, sampling=args.sampling, max_epochs=args.max_epochs,
                            tol=args.tol, dtype=args.dtype, random_state=args.seed,
                            class_weight=_class_weights(args.class_weight, classes),
                            memory_budget=args.memory_budget, storage=args.storage)


def _class_weights(weights, classes):
    """--class-weight for the estimator: 'balanced', None, or {class: weight} by label text."""
    if not isinstance(weights, dict):
        return weights
    by_text = {str(c): c for c in classes}
    unknown = [label for label in weights if label not in by_text]
    if unknown:
        raise ValueError(f"--class-weight names {', '.join(map(repr, unknown))}, not a label "
                         f"of the data; the labels are {', '.join(by_text)}.")
    return {by_text[label]: weight for label, weight in weights.items()}


def _metrics(model, split, progress=None):
    """Errors, F1, objective, times and stop reasons of a fitted model (the app's evaluate);
    on more than :data:`TRAIN_ERROR_ROWS` training rows the training error is measured on a
    sample of them."""
    test_pred = _predict(model, split.X_test, progress)
    metrics = evaluate(model, split, test_pred=test_pred, max_train_rows=TRAIN_ERROR_ROWS)
    label = metrics["f1_label"]
    sampled = metrics["train_error_rows"] < split.X_train.shape[0]
    return {
        f"train error{' (sample)' if sampled else ''}": metrics["train_error"],
        "test error": metrics["test_error"],
        "majority error": metrics["majority_error"],
        "F1": metrics["f1"],
        "F1 of": "macro average" if label is None else str(label),
        "objective": metrics["objective"],
        "embedding time (s)": metrics["embedding_time"],
        "training time (s)": metrics["training_time"],
        "iterations": metrics["iterations"],
        "stopped by": metrics["stop"],
    }


def _predict(model, X, progress=None):
    """Predictions of X in blocks of rows, with a progress line."""
    if progress is None:
        return model.predict(X)
    blocks = []
    for start, stop in embedded_row_blocks(X.shape[0], model.coef_.shape[1]):
        blocks.append(model.predict(X[start:stop]))
        progress("predicting", stop, X.shape[0])
    return np.concatenate(blocks)


def _fit_and_measure(args, solver, split, progress):
    """A fitted model of ``solver`` and its metrics, with progress lines on stderr."""
    model = _model(args, solver, np.unique(split.y_train))
    model.fit(split.X_train, split.y_train, progress=progress)
    if progress is not None:
        progress.end()
    metrics = _metrics(model, split, progress)
    if progress is not None:
        progress.end()
    return model, metrics


def _fit(args):
    progress = _Progress.for_args(args)
    split = _split(args, progress)
    n_train = split.X_train.shape[0]
    learned = data_aware_defaults(split.X_train, n_train)
    args.m = learned["n_components"] if args.m is None else args.m
    args.lam = learned["lam"] if args.lam is None else args.lam
    model, metrics = _fit_and_measure(args, args.solver, split, progress)
    print(f"{split.name}: {n_train} training rows, {split.X_test.shape[0]} test rows, "
          f"{split.n_features} features")
    # The γ the fit resolved (resolving 'scale' again would pass over the data once more).
    gamma = getattr(model.embedding_, "gamma_", None) or resolve_gamma(args.gamma,
                                                                      split.X_train)
    print(f"{args.solver}, {args.kernel} kernel (γ = {gamma:.4g}), m = {args.m}, "
          f"λ = {args.lam:g} (C = {lam_to_C(args.lam, n_train):.4g})")
    for name, value in metrics.items():
        print(f"  {name:<20} {value:.6g}" if isinstance(value, float) else
              f"  {name:<20} {value}")
    print(f"  (objective: F of the returned model on "
          f"{OBJECTIVE_KERNEL.get(args.solver, f'the Nyström embedding (m = {args.m})')})")
    return 0


class _Progress:
    """One line per long phase on stderr, redrawn in place at most twice a second:
    ``snacks: embedding  812,000 / 1,400,000 rows  61,200 rows/s  13 s  ~10 s left``
    (for training, the time left at most: the budget of epochs, which a stop rule cuts)."""

    UNITS = {"reading": "rows", "embedding": "rows", "training": "epochs",
             "predicting": "rows"}

    def __init__(self, stream):
        self.stream, self.phase, self.shown = stream, None, 0.0

    @classmethod
    def for_args(cls, args):
        """A progress line for ``--progress`` (auto: when stderr is a terminal), or None."""
        wanted = {"always": True, "never": False}.get(args.progress, sys.stderr.isatty())
        return cls(sys.stderr) if wanted else None

    def reader(self, name):
        """The callback of a file reader: rows so far, bytes of text, bytes of the file."""

        def report(rows, text_bytes, file_bytes):
            fraction = (text_bytes / file_bytes if text_bytes is not None and file_bytes
                        and text_bytes <= file_bytes else None)
            self(f"reading {name}", rows, None, fraction)

        return report

    def __call__(self, phase, done, total, fraction=None):
        now = time.perf_counter()
        if phase != self.phase:
            self.end()
            self.phase, self.start, self.shown = phase, now, 0.0
        if fraction is None and total:
            fraction = done / total
        self.last = (phase, done, total, fraction)
        finished = fraction is not None and fraction >= 1.0
        if now - self.shown < 0.5 and not finished:
            return
        self.shown = now
        self._draw(now, phase, done, total, fraction, finished)

    def _draw(self, now, phase, done, total, fraction, finished):
        elapsed = now - self.start
        unit = self.UNITS.get(phase.split()[0], "rows")
        count = f"{done:,.2f}" if unit == "epochs" else f"{int(done):,}"
        line = f"snacks: {phase}  {count}" + (f" / {total:,.0f}" if total else "") + f" {unit}"
        if elapsed > 0:
            line += f"  {done / elapsed:,.{2 if unit == 'epochs' else 0}f} {unit}/s"
        line += f"  {elapsed:.0f} s"
        if fraction and not finished:
            left = elapsed * (1 - fraction) / fraction
            # Training may stop early (tol, held-out error): its budget only bounds it.
            line += f"  {'at most ' if unit == 'epochs' else '~'}{left:.0f} s left"
        self.stream.write(f"\r{line:<78}")
        self.stream.flush()

    def end(self):
        """Draw the phase's last state and end its line."""
        if self.phase is not None:
            phase, done, total, fraction = self.last
            self._draw(time.perf_counter(), phase, done, total, fraction, True)
            self.stream.write("\n")
            self.stream.flush()
            self.phase = None


class _ProgressBar:
    """``[#####.....] 57/156 cells, 12 s, ~9 s left`` redrawn in place on stderr."""

    def __init__(self, stream, on_row=None, width=30):
        self.stream, self.width, self.on_row = stream, width, on_row
        self.start = time.perf_counter()

    def __call__(self, done, total, row):
        if self.on_row is not None:
            self.on_row(row)
        elapsed = time.perf_counter() - self.start
        filled = int(self.width * done / total)
        left = elapsed / done * (total - done)
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                          f"cells, {elapsed:.0f} s, ~{left:.0f} s left ")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def _heatmap(args):
    m_values, lams, gammas = _flatten(args.m), _flatten(args.lam), _flatten(args.gamma)
    seeds = _flatten(args.seeds)
    if args.plot and len(set(m_values)) > 1 and len(set(gammas)) > 1:
        raise ValueError("--plot draws an (m, λ) or a (γ, λ) heatmap: give a single m or a "
                         "single γ (the CSV can hold any grid).")
    if args.scheduler and args.backend != "dask":
        raise ValueError("--scheduler needs --backend dask.")
    # The output paths are checked (and the table started) before any work.
    out = _RowWriter(args.out)
    if args.plot:
        _check_writable(args.plot)
    try:
        return _run_heatmap(args, out, m_values, lams, gammas, seeds)
    finally:
        out.close()


def _check_writable(path):
    """Refuse an output path that cannot be written, before any work (nothing is created)."""
    target = Path(path)
    folder = target.parent
    if target.is_dir():
        problem = "it is a folder"
    elif not folder.is_dir():
        problem = f"there is no folder {folder}"
    elif not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        problem = "permission denied"
    else:
        return
    raise ValueError(f"cannot write {path}: {problem}.")


class _RowWriter:
    """The heatmap table on disk: from the first finished cell on, each cell is appended and
    flushed as it comes (a crash or a second Ctrl-C keeps them); at the end the whole sorted
    table takes its place.  A grid that fails before its first cell leaves the path as it was."""

    def __init__(self, path):
        _check_writable(path)
        self.path, self._file, self._writer = path, None, None

    def append(self, row):
        if self._file is None:
            self._file = open(self.path, "w", newline="")
            self._writer = csv.DictWriter(self._file, fieldnames=list(GRID_COLUMNS))
            self._writer.writeheader()
        self._writer.writerow(row)
        self._file.flush()

    def replace(self, table):
        self.close()
        temporary = f"{self.path}.part"
        table.to_csv(temporary, index=False)
        os.replace(temporary, self.path)

    def close(self):
        if self._file is not None and not self._file.closed:
            self._file.close()


def _run_heatmap(args, out, m_values, lams, gammas, seeds):
    split = _split(args)
    client = None
    if args.backend == "dask":
        client = args.scheduler or _local_dask_client()
    stop = {"requested": False}

    def request_stop(signum, frame):
        if stop["requested"]:
            raise KeyboardInterrupt
        stop["requested"] = True
        sys.stderr.write("\nsnacks: stopping after the columns in progress "
                         "(Ctrl-C again to abort)\n")

    previous = signal.signal(signal.SIGINT, request_stop)
    try:
        table = robustness_grid(
            split.X_train, split.y_train, split.X_test, split.y_test, m=m_values, lam=lams,
            gamma=gammas, seeds=seeds, kernel=args.kernel, degree=args.degree,
            coef0=args.coef0, sampling=args.sampling, solver=args.solver,
            max_epochs=args.max_epochs, tol=args.tol, warm_start=not args.cold,
            dtype=args.dtype, n_jobs=args.n_jobs, backend=args.backend, client=client,
            progress=_ProgressBar(sys.stderr, out.append),
            should_stop=lambda: stop["requested"])
    finally:
        signal.signal(signal.SIGINT, previous)
        if client is not None and not isinstance(client, str):
            client.close()
    out.replace(table)
    plan = table.attrs["plan"]
    print(f"{len(table)} of {plan['n_cells']} cells in {table.attrs['wall_time']:.1f} s "
          f"({plan['n_jobs']} jobs, {plan['dtype']}): {args.out}")
    status = 0
    if table.attrs.get("stopped") and len(table) < plan["n_cells"]:
        sys.stderr.write(f"snacks heatmap: stopped: {len(table)} of {plan['n_cells']} cells "
                         f"written to {args.out}\n")
        status = STOPPED
    if table.empty:
        return status
    cells = table.groupby(["m", "gamma", "lam"])["test_error"].mean()
    m, gamma, lam = cells.idxmin()
    print(f"lowest mean test error {cells.min():.4f} at m = {m}, γ = {gamma:.4g}, λ = {lam:g} "
          "(picked on the test part, so optimistic: 'snacks search' chooses by "
          "cross-validation)")
    if args.plot:
        _write_plot(table, args.plot, by_gamma=len(set(gammas)) > 1)
        print(f"heatmap: {args.plot}")
    return status



def _local_dask_client():
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--backend dask needs dask.distributed: pip install "
                         "'snacks-explorer[distributed]'.") from None
    return Client(processes=True, threads_per_worker=1, dashboard_address=None)


def _write_plot(table, path, *, by_gamma):
    from .figures import grid_axis_title, heatmap_figure

    rows = "gamma" if by_gamma else "m"
    row_values, lam_values, mean, std, seconds = summarize_grid(table, rows=rows)
    figure = heatmap_figure(row_values, lam_values, mean, std, seconds,
                            row_label=grid_axis_title(rows), col_label=grid_axis_title("lam"),
                            title="Test error over the grid (mean ± std over seeds)")
    figure.write_html(path, include_plotlyjs=True)


def _compare(args):
    progress = _Progress.for_args(args)
    split = _split(args, progress)
    n_train = split.X_train.shape[0]
    solvers = _flatten(args.solvers) if args.solvers else [
        s for s in SOLVERS if s not in ("libsvm",) or n_train <= EXACT_MAX_ROWS]
    unknown = [s for s in solvers if s not in SOLVERS]
    if unknown:
        raise ValueError(f"unknown solver(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(SOLVERS)}.")
    if "libsvm" not in solvers and not args.solvers:
        print(f"(libsvm skipped: {n_train} training rows; name it in --solvers to run the "
              "exact kernel SVM anyway)")
    if args.out:
        _check_writable(args.out)
    rows = []
    for solver in solvers:
        _, metrics = _fit_and_measure(args, solver, split, progress)
        rows.append({"solver": solver,
                     "time (s)": metrics["embedding time (s)"] + metrics["training time (s)"],
                     **metrics})
    table = pd.DataFrame(rows)
    print(f"{split.name}, m = {args.m}, λ = {args.lam:g} (C = {lam_to_C(args.lam, n_train):.4g}), "
          f"{n_train} training rows")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    exact = [s for s in solvers if s in OBJECTIVE_KERNEL]
    print(f"objective: F = (1/n) Σ max(0, 1 − y_i f(x_i)) + λ‖f‖² of the returned model, on "
          f"the Nyström embedding (m = {args.m})"
          + "".join(f"; for {s} on {OBJECTIVE_KERNEL[s]}" for s in exact) + ".")
    if args.out:
        table.to_csv(args.out, index=False)
    return 0


def _datasets(args):
    if args.download:
        names = list(datasets.LIBSVM_DATASETS) if args.download == ["all"] else args.download
        unknown = [n for n in names if n not in datasets.LIBSVM_DATASETS]
        if unknown:
            raise ValueError(f"unknown LIBSVM dataset(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(datasets.LIBSVM_DATASETS)} or 'all'.")
        for name in names:
            data = datasets.fetch_libsvm(name, cache_dir=args.cache_dir)
            test = "" if data.X_test is None else f" + {data.X_test.shape[0]} test rows"
            print(f"{name}: {data.n_samples} rows{test}, {data.n_features} features in "
                  f"{datasets.libsvm_cache_dir(args.cache_dir) / name}")
        return 0
    cached = set(datasets.cached_libsvm_datasets(args.cache_dir))
    print("synthetic (--n-samples rows):  " + ", ".join(datasets.SYNTHETIC))
    print(f"a9a-shaped generator:          {A9A_LIKE}")
    print("bundled with scikit-learn:     " + ", ".join(datasets.BUNDLED))
    print(f"sample files ({datasets.sample_data_dir()}):")
    print("                               " + ", ".join(datasets.sample_files()))
    print(f"public LIBSVM datasets (cache: {datasets.libsvm_cache_dir(args.cache_dir)}):")
    for name, source in datasets.LIBSVM_DATASETS.items():
        mark = "cached" if name in cached else "      "
        print(f"  {mark}  {name:<14} {source.about}")
    print("or the path of a CSV or LIBSVM file; 'snacks datasets --download NAME' fetches one.")
    return 0


def _search(args):
    for path in (args.out, args.model):
        if path:
            _check_writable(path)
    split = _split(args)
    param_grid = {"gamma": _flatten(args.gamma), "lam": _flatten(args.lam),
                  "n_components": _flatten(args.m)}
    estimator = SnacksClassifier(
        kernel=args.kernel, degree=args.degree, coef0=args.coef0, sampling=args.sampling,
        solver=args.solver, max_epochs=args.max_epochs, tol=args.tol,
        dtype=np.float64 if args.dtype == "float64" else np.float32, random_state=args.seed)
    search = SnacksSearchCV(estimator, param_grid, cv=args.cv, scoring=args.scoring,
                            n_jobs=args.n_jobs, halving=args.halving, refine=args.refine,
                            random_state=args.seed)
    started = time.perf_counter()
    search.fit(split.X_train, split.y_train)
    results = pd.DataFrame(search.cv_results_)
    print(f"{split.name}: {split.X_train.shape[0]} training rows searched by {args.cv}-fold "
          f"CV, {len(results)} cells in {time.perf_counter() - started:.1f} s "
          f"(refit {search.refit_time_:.2f} s)")
    scoring = args.scoring or "accuracy"
    best = results[results["n_resources"] == results["n_resources"].max()].nlargest(
        5, "mean_test_score")
    for row in best.itertuples():
        print(f"  {scoring} {row.mean_test_score:.4f} ± {row.std_test_score:.4f}  "
              + ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                          for k, v in row.params.items()))
    test_error = float(np.mean(search.predict(split.X_test) != split.y_test))
    print(f"chosen by CV: {search.best_params_}; test error of the chosen model "
          f"{test_error:.4f} on {split.X_test.shape[0]} test rows (looked at once)")
    if args.out:
        results.to_csv(args.out, index=False)
        print(f"cv_results_: {args.out}")
    if args.model:
        Path(args.model).write_bytes(model_to_npz(search.best_estimator_,
                                                  split.preprocessing))
        print(f"model: {args.model}")
    return 0


COMMANDS = {"fit": _fit, "heatmap": _heatmap, "compare": _compare, "search": _search,
            "datasets": _datasets}


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"snacks: warning: {message}\n")


def main(argv=None) -> int:
    """Run the command line; returns the exit status (0 ok, 1 failed run, 2 bad arguments,
    3 heatmap stopped before its last cell, 130 interrupted)."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_warning
        try:
            return COMMANDS[args.command](args)
        except (ValueError, OSError, datasets.DownloadError) as exc:
            message = " ".join(str(exc).split())
            sys.stderr.write(f"snacks {args.command}: error: {message}\n")
            return 1
        except KeyboardInterrupt:
            sys.stderr.write("\nsnacks: interrupted\n")
            return 130


if __name__ == "__main__":
    sys.exit(main())
