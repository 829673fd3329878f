"""The ``snacks`` argument parser: every command, option and help text.

This module imports only the standard library, so that ``snacks --help`` and argument errors
answer before NumPy, SciPy, scikit-learn and numba are loaded (BENCHMARKS.md, "Command-line
start").  The names it offers (kernels, solvers, …) are therefore written here;
``tests/test_cli.py`` checks that they are the library's registries.
"""

from __future__ import annotations

import argparse
import math
import re

# snacks_core.kernels.functions.KERNELS, landmarks.SAMPLINGS, solvers.SOLVERS and EMBEDDED_SOLVERS,
# storage.STORAGES, sweeps.BACKENDS, PAPER_M and PAPER_LAMBDAS, datasets.SCALINGS.
KERNELS = ("rbf", "laplacian", "polynomial", "linear")
SAMPLINGS = ("balanced", "uniform", "leverage", "kmeans++")
SOLVERS = ("snacks", "pegasos", "liblinear", "smoothed_newton", "libsvm", "admm")
EMBEDDED_SOLVERS = ("snacks", "pegasos", "liblinear", "smoothed_newton")
STORAGES = ("auto", "memory", "compact", "disk")
BACKENDS = ("threads", "loky", "dask")
SCALINGS = ("standard", "minmax", "none", "auto")
PAPER_M = (10, 20, 50, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000)
PAPER_LAMBDAS = (1e-9, 5e-9, 1e-8, 5e-8, 1e-7, 5e-7, 1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4,
                 1e-3)

# Exit status of a heatmap stopped before its last cell (its finished cells are written).
STOPPED = 3

# The exact kernel SVM (LIBSVM) needs the n × n kernel: `compare` skips it above this size.
EXACT_MAX_ROWS = 20_000

# A memory size as snacks_core.solvers.storage.memory_budget_bytes reads it (which checks it again).
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*(b|kb|mb|gb|tb|kib|mib|gib|tib|)\s*",
                   re.IGNORECASE)


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


def _choice_list(name, choices):
    """Parse 'a,b' into a list of names, each one of ``choices``."""

    def parse(text):
        values = [part for part in (p.strip() for p in text.split(",")) if part]
        unknown = [value for value in values if value not in choices]
        if unknown or not values:
            raise argparse.ArgumentTypeError(
                f"{name} takes {', '.join(choices)} separated by commas, got {text!r}")
        return values

    return parse


def flatten(lists):
    """The values of an option given as several comma-separated lists."""
    return [value for values in lists for value in values]


def _gamma_value(text):
    if text in ("scale", "auto"):
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--gamma takes positive numbers, 'scale' or 'auto', got {text!r}") from None


def _landmark_count(text):
    """--m of fit: a positive whole number, or 'auto' (m grown from the data)."""
    if text == "auto":
        return text
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"--m takes a positive whole number or 'auto', got {text!r}") from None


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


def _memory_size(text):
    match = _SIZE.fullmatch(text)
    if match is None or not float(match.group(1)) > 0:
        raise argparse.ArgumentTypeError(
            f"memory_budget {text!r} is not a size; write bytes or a number with a unit, "
            "e.g. '8GB' or '512MiB'.")
    return text


def _add_index_base(parser):
    bases = parser.add_mutually_exclusive_group()
    bases.add_argument("--zero-based", dest="index_base", action="store_const", const=0,
                       help="LIBSVM feature indices start at 0")
    bases.add_argument("--one-based", dest="index_base", action="store_const", const=1,
                       help="LIBSVM feature indices start at 1 (default: decided once for "
                            "all the files of the run: zero-based when any of them has an "
                            "index 0)")


def _add_data_arguments(parser, *, scalings=False):
    parser.add_argument("data", metavar="DATA", help=(
        "a built-in dataset name (see 'snacks datasets'), or the path or URL (https://, "
        "s3://, gs://: with fsspec installed) of a CSV or LIBSVM file"))
    parser.add_argument("--test", metavar="FILE", help=(
        "a test file (path or URL) in the same format (default: a stratified split of DATA, "
        "or the dataset's own test part)"))
    parser.add_argument("--label-column", metavar="NAME_OR_INDEX", help=(
        "label column of a CSV file (name or 0-based index; default: the last column)"))
    parser.add_argument("--test-size", type=float, metavar="FRACTION",
                        help="held-out fraction when DATA has no test part (default 0.3)")
    _add_index_base(parser)
    if scalings:
        parser.add_argument("--scaling", type=_choice_list("--scaling", SCALINGS),
                            default=["auto"], metavar="SCALING", help=(
                                f"feature scalings to search, comma separated, among "
                                f"{', '.join(SCALINGS)} (default auto; each is fitted on the "
                                "training part)"))
    else:
        parser.add_argument("--scaling", choices=SCALINGS, default="auto", help=(
            "feature scaling fitted on the training part (default auto: standard for dense "
            "data, none for dense columns on one scale such as pixels and for sparse data "
            "such as one-hot or tf-idf rows; standard scales sparse data without "
            "centring)"))
    parser.add_argument("--n-samples", type=_positive_int, metavar="N", help=(
        "rows of a generated dataset (synthetic default 1000; a9a_like default 32561 "
        "training + half as many test rows)"))


def _add_model_arguments(parser, *, grid):
    parser.add_argument("--kernel", choices=KERNELS, default="rbf", help="kernel (default rbf)")
    if grid:
        parser.add_argument("--gamma", type=_gamma_list, nargs="+", metavar="GAMMA", help=(
            "γ value(s), comma separated, or 'scale'/'auto' (default scale = 1/(d·Var X)); "
            "several values give a (γ, λ) grid"))
    else:
        parser.add_argument("--gamma", type=_gamma_value, default="scale", metavar="GAMMA",
                            help="γ > 0, or 'scale'/'auto' (default scale = 1/(d·Var X))")
    parser.add_argument("--degree", type=int, help="polynomial degree (default 3)")
    parser.add_argument("--coef0", type=float, default=1.0,
                        help="polynomial offset c₀ (default 1)")
    parser.add_argument("--sampling", choices=SAMPLINGS, default="balanced",
                        help="landmark selection (default balanced: as many per class as "
                             "its rows allow)")
    parser.add_argument("--multiclass", choices=("auto", "ovo", "ovr"), default="auto",
                        help="more than two classes: one-vs-one (a problem per pair of "
                             "classes, as LIBSVM) or one-vs-rest (default auto: one-vs-one "
                             "for the solvers on the embedding, one-vs-rest on a store, a "
                             "cluster, for the exact solvers and where the pairs' targets "
                             "would pass 1 GiB)")
    parser.add_argument("--max-epochs", type=_positive_finite, metavar="EPOCHS",
                        help="solver budget in passes over the data (default 50)")
    if not grid:
        parser.add_argument("--class-weight", type=_class_weight, metavar="WEIGHTS", help=(
            "'balanced' (weights inversely proportional to class frequencies), or "
            "LABEL=WEIGHT pairs such as 'fraud=9,ok=1' (default: every row weighs 1)"))
    parser.add_argument("--tol", type=float,
                        help=("solver tolerance (relative duality gap for Snacks; default "
                              "1e-3, and 1e-2 for each class of more than two with Snacks)"))
    parser.add_argument("--dtype", choices=("float64", "float32") + (("auto",) if grid else ()),
                        default="float32", help=(
                            "precision of the embedding (default float32, as "
                            + ("robustness_grid" if grid else "SnacksClassifier")
                            + ": the same test errors to rounding, half the memory, faster"
                            + ("; auto: float64 when it fits in memory)" if grid else ")")))


def _add_regularisation(parser, *, lam_help, C_help, grid, required=False, lam_default=None):
    """--lam and --C, exactly one of them (C = 1/(2nλ) for n training rows)."""
    group = parser.add_mutually_exclusive_group(required=required)
    if grid:
        group.add_argument("--lam", type=_number_list(float, "--lam", {"paper": PAPER_LAMBDAS}),
                           nargs="+", metavar="LAMBDA", help=lam_help)
        group.add_argument("--C", type=_number_list(float, "--C"), nargs="+", metavar="C",
                           help=C_help)
    else:
        group.add_argument("--lam", type=float, default=lam_default, help=lam_help)
        group.add_argument("--C", type=float, help=C_help)


def _add_resource_arguments(parser):
    parser.add_argument("--memory-budget", type=_memory_size, metavar="SIZE", help=(
        "memory the embedding may take, e.g. 2GB or 512MiB (default: half of the memory "
        "available); a larger embedding is stored compactly (float16) or on disk"))
    parser.add_argument("--storage", choices=STORAGES, default="auto", help=(
        "where the embedding lives during training (default auto: chosen from the budget)"))
    _add_progress(parser)


def _add_progress(parser):
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="progress lines on stderr for reading, embedding, training and "
                             "predicting (default auto: when stderr is a terminal)")


def build_parser() -> argparse.ArgumentParser:
    """The ``snacks`` parser and its six subcommands."""
    parser = _Parser(
        prog="snacks", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Large-scale kernel SVMs: Nyström embedding + fast primal solvers "
                    "(Snacks, Tanji et al.).  The problem solved is F(w) = (1/n) Σ "
                    "max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², LIBSVM's C = 1/(2nλ).",
        epilog="examples:\n"
               "  snacks datasets\n"
               "  snacks fit train.txt --test test.txt --model model.npz\n"
               "  snacks predict model.npz new.txt --out predictions.txt\n"
               "  snacks fit moons --m 50 --lam 1e-3 --gamma 2\n"
               "  snacks heatmap a9a_like --scaling none --gamma 0.01 --m paper --lam paper "
               "--out grid.csv --plot grid.html\n"
               "  snacks heatmap data.csv --m 100 --gamma 0.1,1,10 --C 1,10,100 "
               "--seeds 0,1,2 --out grid.csv\n"
               "  snacks compare a9a_like --scaling none --gamma 0.01 --m 800 --lam 1e-5\n"
               "  snacks search data.csv --gamma 0.1,1 --m 100,400 --cv 5 --model best.npz\n"
               "\nrun 'snacks COMMAND --help' for the options of each command.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                     parser_class=_Parser)
    _add_fit_parser(commands)
    _add_predict_parser(commands)
    _add_heatmap_parser(commands)
    _add_compare_parser(commands)
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


def _add_fit_parser(commands):
    fit = commands.add_parser(
        "fit", help="train one model, print its metrics, save it",
        description="Train SnacksClassifier on DATA and print train/test error, F1 (of the "
                    "minority training class), objective, times and why the solver "
                    "stopped; --model saves the model with what 'snacks predict' needs to "
                    "read new files as DATA was read.")
    _add_data_arguments(fit)
    _add_model_arguments(fit, grid=False)
    fit.add_argument("--m", type=_landmark_count, default=None,
                     help="landmarks m (default 2√n within [50, 500] for n training rows, "
                          "at least 30 a class for more than two classes, 100 at most on "
                          "two features, as in the app; every row, up to 500, on a small "
                          "set of more features: at most 2,000 rows, or two classes up to "
                          "15,000; on more than two classes, where the landmarks are fewer "
                          "than the rows, doubled up to twice while they leave more than "
                          "20 %% of the kernel unexplained, and says so); 'auto' grows m "
                          "from 2√n, "
                          "doubling it while the error on held-out training rows falls by "
                          "more than its noise, and says why it stopped")
    _add_regularisation(
        fit, grid=False,
        lam_help="regularisation λ > 0 (default 0.02/n for n training rows, that is C = 25, "
                 "as in the app; on a small set, at most 2,000 rows or two classes up to "
                 "15,000, C from 1, 5 and 25 "
                 "by a 3-fold cross-validation)",
        C_help="LIBSVM's C = 1/(2nλ) > 0 instead of λ")
    fit.add_argument("--solver", choices=SOLVERS, default="snacks",
                     help="solver (default snacks; libsvm is the exact kernel SVM)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--model", metavar="NPZ", help=(
        "save the model with its scaling, labels, number of features and index base (.npz, "
        "for 'snacks predict')"))
    fit.add_argument("--scheduler", metavar="ADDRESS", help=(
        "train on a Dask cluster, e.g. tcp://10.0.0.5:8786: DATA is then a quoted glob of "
        "files the workers read ('data/part-*.csv'), the rows never leave them"))
    _add_resource_arguments(fit)


def _add_predict_parser(commands):
    predict = commands.add_parser(
        "predict", help="predict the rows of a file with a saved model",
        description="Predict every row of DATA with a model saved by 'snacks fit --model' or "
                    "'snacks search --model': the file is read in blocks of rows as the "
                    "training data was (same number of features, index base and scaling).  "
                    "Writes one predicted label per line, as LIBSVM's svm-predict does.  "
                    "When DATA's labels are the model's classes, prints the error and F1; "
                    "unlabelled rows (placeholder labels) and one-class files are accepted.")
    predict.add_argument("model", metavar="MODEL", help="a .npz model file")
    predict.add_argument("data", metavar="DATA", help=(
        "a LIBSVM or CSV file: a path, or a URL (https://, s3://, gs://: with fsspec "
        "installed)"))
    predict.add_argument("--out", metavar="FILE",
                         help="where to write the predictions (default: standard output)")
    predict.add_argument("--decision-values", action="store_true", help=(
        "write a header line and the decision values instead of labels: one column per class "
        "(for two classes one column, the positive class's, named in the header)"))
    predict.add_argument("--label-column", metavar="NAME_OR_INDEX", help=(
        "label column of a CSV file (name or 0-based index; default: the last column)"))
    predict.add_argument("--scheduler", metavar="ADDRESS", help=(
        "predict on a Dask cluster, e.g. tcp://10.0.0.5:8786: DATA is then a quoted glob of "
        "files the workers read; the labels come back in DATA's order"))
    _add_index_base(predict)
    _add_progress(predict)


def _add_heatmap_parser(commands):
    heatmap = commands.add_parser(
        "heatmap", help="test error over an (m, λ) or (γ, λ) grid",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fill a robustness grid (the paper's Fig. 2) with "
                    "snacks_core.model.sweeps.robustness_grid: landmarks and kernel blocks shared "
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
                         metavar="M",
                         help="landmark counts, comma separated, or 'paper' (default: 5 "
                              "values from a quarter of to 4 times the default m = 2√n of "
                              "the n training rows, at most 2000)")
    _add_regularisation(heatmap, grid=True,
                        lam_help="regularisations λ > 0, comma separated, or 'paper' "
                                 "(default: 5 values a decade apart around 0.02/n, C = 25)",
                        C_help="LIBSVM's C = 1/(2nλ) values instead of λ, comma separated")
    heatmap.add_argument("--seeds", type=_number_list(int, "--seeds"), nargs="+",
                         default=[[0]], metavar="SEED",
                         help="seeds, comma separated (default 0); one run per seed and cell")
    heatmap.add_argument("--solver", choices=EMBEDDED_SOLVERS, default="snacks",
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


def _add_compare_parser(commands):
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
    _add_regularisation(compare, grid=False, lam_default=1e-5,
                        lam_help="regularisation λ > 0 (default 1e-5)",
                        C_help="LIBSVM's C = 1/(2nλ) > 0 instead of λ")
    compare.add_argument("--solvers", type=_number_list(str, "--solvers"), nargs="+",
                         metavar="SOLVER", help=f"solvers to run (default all: "
                                                f"{', '.join(SOLVERS)})")
    compare.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_resource_arguments(compare)
    compare.add_argument("--out", metavar="CSV", help="also write the table as CSV")
    _add_no_cluster_argument(compare)


def _add_search_parser(commands):
    search = commands.add_parser(
        "search", help="choose γ, λ (or C), m and the scaling by cross-validation; test the "
                       "chosen model once",
        description="Cross-validated search on the training part only, for each --scaling, "
                    "by shuffled stratified folds.  Without --gamma, --m, --lam and --C: the "
                    "library's default search (snacks_core.model.search."
                    "search_around_defaults, the app's Auto-tune): γ around the 'scale' rule "
                    "against C a decade apart around the default C, with successive halving "
                    "(on a stratified subsample of a large training part), then m and 4m at "
                    "the chosen γ and C while they lower the CV error.  With any "
                    "of them: the grid of γ × λ (or C) × m they give (SnacksSearchCV; each "
                    "fold's grid shares landmarks and embeddings across m and warm starts "
                    "along λ; without --lam or --C, C a decade apart around the default C; "
                    "without --m, the default m).  Prints how many settings and fits it "
                    "scored, the best settings by CV score (γ as a number), refits the "
                    "chosen one on the whole training part and prints its test error and F1 "
                    "once, on the test part the search never saw.")
    _add_data_arguments(search, scalings=True)
    _add_model_arguments(search, grid=True)
    search.add_argument("--m", type=_number_list(int, "--m"), nargs="+", metavar="M",
                        help="landmark counts, comma separated (default 2√n within [50, 500] "
                             "for n training rows, at least 30 a class beyond two)")
    _add_regularisation(search, grid=True,
                        lam_help="regularisations λ > 0, comma separated",
                        C_help="LIBSVM's C = 1/(2nλ) values, comma separated (default: "
                               "0.02 to 20,000, a decade apart)")
    search.add_argument("--cv", type=_positive_int,
                        help="shuffled stratified folds (default 3)")
    search.add_argument("--scoring", default=None, metavar="SCORER", help=(
        "a scikit-learn scorer name, e.g. f1, balanced_accuracy, roc_auc (default accuracy)"))
    search.add_argument("--halving", action="store_true", help=(
        "with a grid given by --gamma, --m, --lam or --C: successive halving (score every "
        "cell on a subsample, keep a third, each γ's best first, on three times the rows, "
        "until all rows)"))
    search.add_argument("--refine", type=int, default=0, metavar="ROUNDS", help=(
        "with a grid given: rounds of coarse-to-fine refinement of γ and λ around the best "
        "cell (default 0)"))
    search.add_argument("--solver", choices=EMBEDDED_SOLVERS, default="snacks",
                        help="embedded solver (default snacks)")
    search.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    search.add_argument("--n-jobs", type=int, default=-1,
                        help="grid columns solved at once (default -1: every core)")
    search.add_argument("--out", metavar="CSV", help=(
        "write every setting scored as CSV (with a grid given: cv_results_)"))
    search.add_argument("--model", metavar="NPZ", help=(
        "save the chosen model, refitted on the training part, with its scaling (.npz)"))
    search.add_argument("--scheduler", metavar="ADDRESS", help=(
        "score the cells on a Dask cluster's workers, e.g. tcp://10.0.0.5:8786 (they need "
        "snacks-explorer installed): DATA is read on this machine and each fold's rows are "
        "sent to the workers; the same choice as without it"))


def _add_no_cluster_argument(parser):
    """--scheduler on a command that does not run on a cluster: refused with what to run
    instead (rather than argparse's 'unrecognized arguments')."""
    parser.add_argument("--scheduler", metavar="ADDRESS", help=(
        "not offered for this command: it says what to run on a cluster instead"))


def refuse_cluster(args) -> None:
    """The message for --scheduler on ``compare``."""
    if getattr(args, "scheduler", None):
        raise ValueError(
            f"snacks {args.command} --scheduler is not offered: on a cluster, fit each solver "
            "where the rows are with 'snacks fit DATA --scheduler ADDRESS --solver NAME', or "
            "spread a grid over the workers with 'snacks search DATA --scheduler ADDRESS' or "
            "'snacks heatmap DATA --backend dask --scheduler ADDRESS'.")
