"""The exact kernel SVM's accuracy: Snacks' defaults and search against scikit-learn's SVC.

``PYTHONPATH=. python benchmarks/bench_accuracy.py [--sets NAME ...] [--search]``

For every real set at hand (``_accuracy_sets.py``: w8a and pendigits from
``../shared/data``, scikit-learn's digits, the project's ``sample_data``; with
``SNACKS_KEEL``, KEEL's UCI letter, magic, satimage and optdigits; with
``SNACKS_MULTIFLOW``, scikit-multiflow's NSW electricity, NOAA weather and UCI covtype
cut to 25,000 rows) and one generated
many-class set (26 classes shaped like the UCI letters set, 16 features: a look-alike,
named as one), split with a seeded stratified split, scaled by the library's own rule
(``datasets.scaling``, 'auto'), it fits in one run:

* ``SnacksClassifier()`` at its defaults against ``SVC()`` (C = 1, γ 'scale'): test error
  and fit time, and their difference and ratio;
* with ``--search`` (sets of at least ``--search-min-rows`` training rows): ``snacks
  search``'s default (the library's default search, its choice refitted) against
  ``GridSearchCV(SVC(), C × γ 3 × 3, cv=3)`` around C = 1 and γ 'scale'.

It prints a Markdown table (BENCHMARKS.md, "The exact kernel SVM's accuracy").  With
``--auto-m`` it prints instead ``n_components='auto'`` (m grown from the default rule)
against the default m ('sqrt') and ``SVC()``, each fit ``--repeats`` times (median time),
with the F1 of the positive class on two-class sets and the path m took (BENCHMARKS.md,
"m from the data").  With ``--many-classes`` it prints, for every set of more than two
classes over ``--repeats`` seeded splits, the former defaults (``tol=1e-3``, m = 2√n),
``tol='auto'`` alone (each one-vs-rest column to a certified gap of 1e-2), today's
defaults (with at least 30 landmarks a class), all one-vs-rest, and ``SVC()``
(BENCHMARKS.md, "Many classes").  With ``--multiclass`` it prints, for the same sets and
splits, the defaults one-vs-rest against the defaults (one-vs-one) and ``SVC()``
(BENCHMARKS.md, "One-vs-one").  With ``--keel-folder`` it prints, for every numeric set
of ``SNACKS_KEEL``'s folder of at most ``--max-rows`` rows, over ``--repeats`` seeded 70/30
splits, the mean test error of the defaults, ``SVC()``, the default search and
``GridSearchCV(SVC)`` (BENCHMARKS.md, "Small real sets").  With ``--past-top`` it prints,
over ``--repeats`` seeded splits, the default search's choice refitted at the m it was
scored at and at the m it returns, twice the ladder's top where the top still gained
(BENCHMARKS.md, "Three real sets from scikit-multiflow").  With ``--rank-m`` it prints,
for every set of more than two classes over ``--repeats`` seeded splits, the defaults
against the defaults at the default rule's m (before m doubled where its landmarks left
more than 20 % of the kernel unexplained) and ``SVC()`` (BENCHMARKS.md, "m from the
kernel's rank").  With ``--held-out-m`` it prints, for the same sets and splits, the
defaults against the defaults with the rank rule's m alone (before the held-out growth on
many rows in large pairs of classes) and ``SVC()`` (BENCHMARKS.md, "m from the held-out
error on many rows").
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.metrics import f1_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.svm import SVC

from _accuracy_sets import datasets, keel_folder_sets, selected
from snacks_core import SnacksClassifier
from snacks_core.datasets.scaling import fit_scaler, resolve_scaling
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model import defaults as model_defaults
from snacks_core.model.defaults import default_m
from snacks_core.model.landmark_growth import describe_path
from snacks_core.model.search import search_around_defaults


def split_and_scale(X, y, test_size, seed=0):
    """A stratified split drawn from ``seed``, scaled by the library's rule for the kind
    of data."""
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=test_size, stratify=y, random_state=seed)
    X_train, X_test, _ = fit_scaler(X_train, X_test, resolve_scaling("auto", X_train))
    return X_train, X_test, y_train, y_test


def timed_fit(model, X, y):
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


def error(model, X, y) -> float:
    return 100.0 * float(np.mean(model.predict(X) != y))


class DefaultSearch:
    """``snacks search`` at its defaults: the library's default search on the training
    rows (:func:`snacks_core.model.search.search_around_defaults`), its choice refitted."""

    def fit(self, X, y):
        estimator = SnacksClassifier(random_state=0)
        found = search_around_defaults(estimator, X, y, random_state=0)
        self.model = clone(estimator).set_params(**found.params).fit(X, y)
        return self

    def predict(self, X):
        return self.model.predict(X)


def svc_grid(X):
    """A small tuned SVC: C and γ a decade apart around C = 1 and γ 'scale', 3-fold."""
    gamma = resolve_gamma("scale", X)
    return GridSearchCV(SVC(), {"C": [0.1, 1.0, 10.0],
                                "gamma": [gamma / 10, gamma, gamma * 10]}, cv=3, n_jobs=1)


def f1_positive(model, X, y) -> str:
    """`` F1 0.xx`` of the larger label on a two-class set, else nothing."""
    labels = np.unique(y)
    if labels.shape[0] != 2:
        return ""
    return f", F1 {f1_score(y, model.predict(X), pos_label=labels[1]):.3f}"


def median_fit(make, X, y, repeats):
    """The model of the last of ``repeats`` fits of ``make()`` and their median time."""
    times = []
    for _ in range(repeats):
        model, seconds = timed_fit(make(), X, y)
        times.append(seconds)
    return model, float(np.median(times))


def auto_m_row(name, X_train, X_test, y_train, y_test, repeats):
    """A row of the ``--auto-m`` table: 'sqrt', 'auto' and SVC() on one split."""
    fits = {
        "sqrt": lambda: SnacksClassifier(random_state=0),
        "auto": lambda: SnacksClassifier(n_components="auto", random_state=0),
        "svc": SVC,
    }
    cells, errors, times = [], {}, {}
    for key, make in fits.items():
        model, times[key] = median_fit(make, X_train, y_train, repeats)
        errors[key] = error(model, X_test, y_test)
        cell = f"{errors[key]:.2f}{f1_positive(model, X_test, y_test)}, {times[key]:.2f} s"
        if key == "auto":
            path = " → ".join(str(m) for m in model.m_path_["m"])
            cell += f" (m {path}: {model.m_stop_reason_})"
        elif key == "sqrt":
            cell += f" (m = {model.embedding_.landmarks_.shape[0]})"
        cells.append(cell)
    return (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,} | " + " | ".join(cells)
            + f" | {errors['auto'] - errors['sqrt']:+.2f} / {errors['auto'] - errors['svc']:+.2f}"
            f" | {times['auto'] / times['sqrt']:.2f}× / {times['auto'] / times['svc']:.2f}× |")


def _over_splits(fits, X, y, test_size, splits):
    """``(errors, times, cells, last split)`` of each model of ``fits`` (key →
    ``make(seed, X_train)``) on ``splits`` seeded splits: test errors in % per split,
    total fit seconds, and each model's table cell."""
    errors = {key: [] for key in fits}
    times = dict.fromkeys(fits, 0.0)
    for seed in range(splits):
        split = split_and_scale(X, y, test_size, seed)
        X_train, X_test, y_train, y_test = split
        for key, make in fits.items():
            model, seconds = timed_fit(make(seed, X_train), X_train, y_train)
            errors[key].append(error(model, X_test, y_test))
            times[key] += seconds
    cells = [", ".join(f"{e:.2f}" for e in errors[key])
             + f" (mean {np.mean(errors[key]):.2f}), {times[key]:.2f} s" for key in fits]
    return errors, times, cells, split


def multiclass_row(name, X, y, test_size, splits):
    """A row of the ``--multiclass`` table on ``splits`` seeded splits: the defaults
    one-vs-rest, the defaults (one-vs-one) and SVC() (one-vs-one)."""
    fits = {"ovr": lambda seed, X_train: SnacksClassifier(multiclass="ovr", random_state=seed),
            "ovo": lambda seed, X_train: SnacksClassifier(random_state=seed),
            "svc": lambda seed, X_train: SVC()}
    errors, times, cells, (X_train, X_test, _, _) = _over_splits(fits, X, y, test_size, splits)
    mean = {key: np.mean(values) for key, values in errors.items()}
    return (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,} | " + " | ".join(cells)
            + f" | {mean['ovo'] - mean['ovr']:+.2f} / {mean['ovo'] - mean['svc']:+.2f}"
            f" | {times['ovo'] / times['ovr']:.2f}× / {times['ovo'] / times['svc']:.2f}× |")


def early_stopping_row(name, X, y, test_size, splits):
    """A row of the ``--early-stopping`` table on ``splits`` seeded splits: the defaults
    (every column to tol), ``early_stopping=True`` (the columns stopped together on the
    multiclass prediction's held-out error), and both one-vs-rest."""
    fits = {f"{multiclass} {stopping}": (
        lambda seed, X_train, m=multiclass, e=stopping: SnacksClassifier(
            multiclass=m, early_stopping=e, random_state=seed))
        for multiclass in ("auto", "ovr") for stopping in ("auto", True)}
    errors, times, cells, (X_train, X_test, _, _) = _over_splits(fits, X, y, test_size, splits)
    mean = {key: np.mean(values) for key, values in errors.items()}
    return (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,} | " + " | ".join(cells)
            + " | " + " / ".join(f"{mean[f'{m} True'] - mean[f'{m} auto']:+.2f}"
                                 for m in ("auto", "ovr"))
            + " | " + " / ".join(f"{times[f'{m} True'] / times[f'{m} auto']:.2f}×"
                                 for m in ("auto", "ovr")) + " |")


def many_classes_row(name, X, y, test_size, splits):
    """A row of the ``--many-classes`` table on ``splits`` seeded splits (test error % per
    split, total fit time): the former defaults (tol=1e-3, m = 2√n as for two classes),
    tol='auto' at that m, the defaults (tol='auto', at least 30 landmarks a class; these
    three one-vs-rest, as they were measured) and SVC()."""
    def square_root(X_train):
        return default_m(*X_train.shape)

    fits = {
        "former": lambda seed, X_train: SnacksClassifier(
            tol=1e-3, n_components=square_root(X_train), multiclass="ovr", random_state=seed),
        "tol": lambda seed, X_train: SnacksClassifier(n_components=square_root(X_train),
                                                      multiclass="ovr", random_state=seed),
        "default": lambda seed, X_train: SnacksClassifier(multiclass="ovr", random_state=seed),
        "svc": lambda seed, X_train: SVC()}
    errors, times, cells, (X_train, X_test, y_train, _) = _over_splits(fits, X, y, test_size,
                                                                       splits)
    m = default_m(*X_train.shape, np.unique(y_train).shape[0])
    return (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,}, m {square_root(X_train)}"
            f" → {m} | " + " | ".join(cells)
            + f" | {np.mean(errors['default']) - np.mean(errors['former']):+.2f}"
            f" | {times['former'] / times['tol']:.2f}× / {times['former'] / times['default']:.2f}×"
            f" | {times['default'] / times['svc']:.2f}× |")


def _against_before_row(name, X, y, test_size, splits, before, describe):
    """A row of a table of the defaults against the defaults as they were (``before(seed,
    X_train)``, an estimator) and SVC() on ``splits`` seeded splits, the growth of m on
    the last split in words (``describe(model)`` of a default fit there)."""
    fits = {"before": before, "defaults": lambda seed, X_train: SnacksClassifier(
                random_state=seed), "svc": lambda seed, X_train: SVC()}
    errors, times, cells, (X_train, X_test, y_train, _) = _over_splits(fits, X, y, test_size,
                                                                       splits)
    path = describe(SnacksClassifier(random_state=splits - 1).fit(X_train, y_train))
    mean = {key: np.mean(values) for key, values in errors.items()}
    t = times
    return (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,} | {path} | "
            + " | ".join(cells)
            + f" | {mean['defaults'] - mean['before']:+.2f} / "
            f"{mean['defaults'] - mean['svc']:+.2f} | {t['defaults'] / t['before']:.2f}× / "
            f"{t['defaults'] / t['svc']:.2f}× |")


def rank_m_row(name, X, y, test_size, splits):
    """A row of the ``--rank-m`` table on ``splits`` seeded splits: the defaults at the
    default rule's m (as before its growth on more than two classes: the same landmarks,
    the draws nest), the defaults, and SVC(); with the m's measured on the last split and
    the share of the kernel each left unexplained."""
    def before(seed, X_train):
        m = SnacksClassifier().landmark_count(*X_train.shape, np.unique(y).shape[0])
        return SnacksClassifier(random_state=seed, n_components=m)

    def describe(grown):
        shares = grown.m_unexplained_ or {}
        return (" → ".join(f"{m:,} ({100 * share:.0f} %)" for m, share in shares.items())
                + f"; m = {grown.embedding_.n_components:,}" if shares else "not measured")

    return _against_before_row(name, X, y, test_size, splits, before, describe)


class RankRuleOnly(SnacksClassifier):
    """The defaults as they were before the held-out growth on many rows: the rank rule's
    m alone (the held-out growth's cost bar out of reach during the fit)."""

    def fit(self, X, y):
        bar = model_defaults.HELD_OUT_GROWTH_COST
        model_defaults.HELD_OUT_GROWTH_COST = np.inf
        try:
            return super().fit(X, y)
        finally:
            model_defaults.HELD_OUT_GROWTH_COST = bar


def held_out_m_row(name, X, y, test_size, splits):
    """A row of the ``--held-out-m`` table on ``splits`` seeded splits: the defaults with
    the rank rule alone, the defaults, and SVC(); with the path m took on the last split."""
    return _against_before_row(
        name, X, y, test_size, splits, lambda seed, X_train: RankRuleOnly(random_state=seed),
        lambda grown: ("not grown" if grown.m_path_ is None else
                       describe_path(grown.m_path_, grown.m_stop_reason_)))


def keel_folder_row(name, X, y, splits):
    """A row of the ``--keel-folder`` table on ``splits`` seeded 70/30 splits: mean test
    error % of the defaults, SVC(), the default search and GridSearchCV(SVC), and the
    defaults' and the search's time against scikit-learn's."""
    fits = {"defaults": lambda seed, X_train: SnacksClassifier(random_state=0),
            "svc": lambda seed, X_train: SVC(),
            "search": lambda seed, X_train: DefaultSearch(),
            "grid": lambda seed, X_train: svc_grid(X_train)}
    errors, times, _, (X_train, *_) = _over_splits(fits, X, y, 0.3, splits)
    e = {key: np.mean(values) for key, values in errors.items()}
    t = times
    return (f"| {name} | {X_train.shape[0]:,} × {X_train.shape[1]}, {np.unique(y).shape[0]} "
            f"| {e['defaults']:.2f} | {e['svc']:.2f} | {e['defaults'] - e['svc']:+.2f}"
            f" | {e['search']:.2f} | {e['grid']:.2f} | {e['search'] - e['grid']:+.2f}"
            f" | {t['defaults'] / t['svc']:.2f}× | {t['search'] / t['grid']:.2f}× |")


def past_top_row(name, X, y, test_size, splits):
    """A row of the ``--past-top`` table on ``splits`` seeded splits: the default search's
    choice refitted at the m it was scored at (``scored_m``, the baseline) and at the m
    it returns (twice the ladder's top where that still gained by more than a standard
    error: ``SEARCH_REFIT_M_FACTOR``), test error % and refit seconds of each, and the
    search's seconds."""
    cells, gains, ratios = [], [], []
    for seed in range(splits):
        X_train, X_test, y_train, y_test = split_and_scale(X, y, test_size, seed)
        estimator = SnacksClassifier(random_state=0)
        start = time.perf_counter()
        found = search_around_defaults(estimator, X_train, y_train, random_state=0)
        searched = time.perf_counter() - start
        refits = [timed_fit(clone(estimator).set_params(**dict(found.params, n_components=m)),
                            X_train, y_train) for m in dict.fromkeys(
                                (found.scored_m, found.params["n_components"]))]
        errors = [error(model, X_test, y_test) for model, _ in refits]
        ms = [model.n_components for model, _ in refits]
        seconds = [f"{s:.1f}" for _, s in refits]
        cells.append(" → ".join(f"{e:.2f}" for e in errors)
                     + f" (m {' → '.join(f'{m:,}' for m in ms)}), search {searched:.1f} s, "
                     f"refit {' → '.join(seconds)} s")
        if len(refits) == 2:
            gains.append(errors[1] - errors[0])
            ratios.append((searched + refits[1][1]) / (searched + refits[0][1]))
    grown = (f"{np.mean(gains):+.2f} on {len(gains)} | {np.mean(ratios):.2f}×" if gains
             else "– | –")
    return (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,} | " + " | ".join(cells)
            + f" | {grown} |")


def _many_class_rows(row, args):
    """Print ``row(name, X, y, test_size, splits)`` for every chosen set of more than two
    classes."""
    for name, load in selected(datasets(), args.sets).items():
        X, y, test_size = load()
        if np.unique(y).shape[0] > 2:
            print(row(name, X, y, test_size, args.repeats), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", help="names (prefixes) of the sets to run")
    parser.add_argument("--search", action="store_true",
                        help="also snacks search against GridSearchCV(SVC)")
    parser.add_argument("--search-min-rows", type=int, default=10_000)
    parser.add_argument("--auto-m", action="store_true",
                        help="n_components='auto' against the default m and SVC() instead")
    parser.add_argument("--many-classes", action="store_true",
                        help="the defaults against the former ones (tol=1e-3, m = 2√n), "
                             "tol='auto' alone and SVC() on the many-class sets")
    parser.add_argument("--multiclass", action="store_true",
                        help="the defaults one-vs-rest against one-vs-one (the defaults) "
                             "and SVC() on the many-class sets")
    parser.add_argument("--early-stopping", action="store_true",
                        help="sets of more than two classes: early_stopping=True (the "
                        "columns stopped together) against the defaults, one-vs-one and "
                        "one-vs-rest")
    parser.add_argument("--keel-folder", action="store_true",
                        help="the defaults, SVC(), the default search and GridSearchCV(SVC) "
                             "on every numeric set of SNACKS_KEEL's folder")
    parser.add_argument("--past-top", action="store_true",
                        help="the default search's choice refitted at the m it was scored "
                             "at and at the m it returns, over --repeats splits")
    parser.add_argument("--rank-m", action="store_true",
                        help="the defaults against the defaults at the default rule's m "
                             "(before its growth by the kernel's rank) and SVC() on the "
                             "many-class sets, over --repeats splits")
    parser.add_argument("--held-out-m", action="store_true",
                        help="the defaults against the defaults with the rank rule's m alone "
                             "(before the held-out growth on many rows) and SVC() on the "
                             "many-class sets, over --repeats splits")
    parser.add_argument("--max-rows", type=int, default=10_000,
                        help="the most rows of a set with --keel-folder")
    parser.add_argument("--repeats", type=int, default=3,
                        help="fits per model with --auto-m (median time), splits with "
                        "--many-classes, --multiclass and --keel-folder")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    # Every fit below is timed warm: the compiled code of two classes, one-vs-one and
    # one-vs-rest is loaded first (the first fit of a process loads it: about 0.1 s).
    for n_classes, multiclass in ((2, "auto"), (3, "ovo"), (3, "ovr")):
        SnacksClassifier(n_components=10, max_epochs=2, multiclass=multiclass).fit(
            *make_classification(200, n_classes=n_classes, n_informative=3))
    if args.many_classes:
        print("| data (train / test), m 2√n → default | former defaults (tol=1e-3, m = 2√n): "
              "error % per split (mean), fit s in all | tol='auto', m = 2√n | defaults "
              "(tol='auto', ≥ 30 landmarks a class) | SVC() | Δ points defaults − former "
              "| speed-up of tol='auto' / of the defaults | time defaults ÷ SVC |\n"
              "|---|---|---|---|---|---|---|---|")
        _many_class_rows(many_classes_row, args)
        return
    if args.early_stopping:
        print("| data (train / test) | defaults: error % per split (mean), fit s in all | "
              "early_stopping=True | one-vs-rest | one-vs-rest, early_stopping=True | "
              "Δ points stopped − to tol (one-vs-one / one-vs-rest) | time stopped ÷ to "
              "tol |\n|---|---|---|---|---|---|---|")
        _many_class_rows(early_stopping_row, args)
        return
    if args.multiclass:
        print("| data (train / test) | defaults one-vs-rest: error % per split (mean), fit s "
              "in all | defaults (one-vs-one) | SVC() | Δ points one-vs-one − one-vs-rest "
              "/ − SVC | time one-vs-one ÷ one-vs-rest / ÷ SVC |\n|---|---|---|---|---|---|")
        _many_class_rows(multiclass_row, args)
        return
    if args.rank_m:
        print("| data (train / test) | m measured (share of the kernel's diagonal left "
              "unexplained) | at the default rule's m: error % per split (mean), fit s in all "
              "| defaults | SVC() | Δ points defaults − before / − SVC | time defaults ÷ "
              "before / ÷ SVC |\n|---|---|---|---|---|---|---|")
        _many_class_rows(rank_m_row, args)
        return
    if args.held_out_m:
        print("| data (train / test) | path of m on the last split (held-out error, time) "
              "| rank rule alone: error % per split (mean), fit s in all | defaults | SVC() "
              "| Δ points defaults − before / − SVC | time defaults ÷ before / ÷ SVC |\n"
              "|---|---|---|---|---|---|---|")
        _many_class_rows(held_out_m_row, args)
        return
    if args.past_top:
        print("| data (train / test) | "
              + " | ".join(f"split {k}: error % at the scored m → at the returned m"
                           for k in range(args.repeats))
              + " | mean Δ points where grown | search + refit time, grown ÷ scored |\n|---|"
              + "---|" * (args.repeats + 2))
        for name, load in selected(datasets(), args.sets).items():
            X, y, test_size = load()
            print(past_top_row(name, X, y, test_size, args.repeats), flush=True)
        return
    if args.keel_folder:
        print("| set | training rows × features, classes | defaults: error % | SVC() | Δ "
              "| search | GridSearchCV(SVC) | Δ | time defaults ÷ SVC() | search ÷ "
              "GridSearchCV |\n|---|---|---|---|---|---|---|---|---|---|")
        for name, (X, y) in keel_folder_sets(args.max_rows).items():
            if not args.sets or any(name.startswith(prefix) for prefix in args.sets):
                print(keel_folder_row(name, X, y, args.repeats), flush=True)
        return
    if args.auto_m:
        print("| data (train / test) | default m ('sqrt'): error %, fit s | m = 'auto': "
              "error %, fit s (path) | SVC(): error %, fit s | Δ points auto − sqrt / − SVC "
              "| time auto ÷ sqrt / ÷ SVC |\n|---|---|---|---|---|---|")
        for name, load in selected(datasets(), args.sets).items():
            X, y, test_size = load()
            print(auto_m_row(name, *split_and_scale(X, y, test_size), args.repeats),
                  flush=True)
        return
    print("| data (train / test) | Snacks defaults: error %, fit s | SVC(): error %, fit s "
          "| Δ points | time ÷ SVC |" + (" search: error %, s | GridSearchCV(SVC): error %, "
                                         "s | Δ | time ÷ |" if args.search else ""))
    print("|---|---|---|---|---|" + ("---|---|---|---|" if args.search else ""))
    for name, load in selected(datasets(), args.sets).items():
        X, y, test_size = load()
        X_train, X_test, y_train, y_test = split_and_scale(X, y, test_size)
        snacks, snacks_s = timed_fit(SnacksClassifier(random_state=0), X_train, y_train)
        svc, svc_s = timed_fit(SVC(), X_train, y_train)
        e_snacks, e_svc = error(snacks, X_test, y_test), error(svc, X_test, y_test)
        row = (f"| {name}, {X_train.shape[0]:,} / {X_test.shape[0]:,} | {e_snacks:.2f}, "
               f"{snacks_s:.2f} (m = {snacks.embedding_.n_components_}) | {e_svc:.2f}, "
               f"{svc_s:.2f} | {e_snacks - e_svc:+.2f} | {snacks_s / svc_s:.2f}× |")
        if args.search and X_train.shape[0] >= args.search_min_rows:
            search, search_s = timed_fit(DefaultSearch(), X_train, y_train)
            tuned, tuned_s = timed_fit(svc_grid(X_train), X_train, y_train)
            e_search, e_tuned = error(search, X_test, y_test), error(tuned, X_test, y_test)
            row += (f" {e_search:.2f}, {search_s:.1f} | {e_tuned:.2f}, {tuned_s:.1f} "
                    f"({tuned.best_params_['C']:g}, γ {tuned.best_params_['gamma']:.3g}) | "
                    f"{e_search - e_tuned:+.2f} | {search_s / tuned_s:.2f}× |")
        elif args.search:
            row += " – | – | – | – |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
