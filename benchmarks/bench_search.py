"""A cross-validated search over γ × λ × m against scikit-learn's searches, on real data.

``PYTHONPATH=. python benchmarks/bench_search.py [--rows 30000] [--m 300,600] [--only w8a]``

On w8a (``../shared/data/w8a``; skipped when absent) a stratified ``--rows`` subsample is
searched and the rest of the file is the test part; on scikit-learn's digits (10 classes,
1,797 rows) a stratified 70/30 split.  Each dataset's grid is 4 γ (γ_scale × ¼, ½, 1, 2)
× 4 λ × 2 landmark counts (``--m``, ``--digits-m``), 5 stratified folds (the same for every
search), and measured in one run:

* ``SnacksSearchCV(SnacksClassifier(random_state=0))`` at its defaults (warm starts, every
  core), and with successive halving;
* ``GridSearchCV(SVC)`` on the same γ × C grid (C = 1/(2nλ), n the fold's rows) and folds.
  On w8a its 80 fits would take a long while: the 16 cells of the first fold are timed and
  the whole search is that × 5 (said in the table); the exact SVC's best test error is
  that of the best of the 16 (γ, C) fitted on all the searched rows, chosen on the test
  part (optimistic for SVC);
* ``HalvingGridSearchCV(Pipeline(Nystroem, LinearSVC))`` over the same γ × C × m.

Every search's chosen model, refitted on all the searched rows, is scored once on the test
part.  The reference for time is one exact SVC fit at the grid's middle (γ_scale, λ).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits, load_svmlight_file
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.kernel_approximation import Nystroem
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    StratifiedKFold,
    train_test_split,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC

from snacks_core import SnacksClassifier
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model.search import SnacksSearchCV
from snacks_core.solvers.objective import lam_to_C

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
LAMS = (1e-7, 1e-6, 1e-5, 1e-4)
GAMMA_FACTORS = (0.25, 0.5, 1.0, 2.0)


def _timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def _error(model, X, y):
    return 100 * float(np.mean(model.predict(X) != y))


def _snacks(X, y, X_test, y_test, grid, folds, **options):
    search = SnacksSearchCV(SnacksClassifier(random_state=0), grid, cv=folds, **options)
    _, seconds = _timed(lambda: search.fit(X, y))
    return seconds, _error(search, X_test, y_test), search.best_params_


def _svc_grid(X, y, X_test, y_test, gammas, folds, n_fold, full):
    """GridSearchCV(SVC) over γ × C; with ``full=False`` only the first fold is timed
    and the best (γ, C) is chosen on the test part among fits on all rows."""
    grid = {"gamma": gammas, "C": [lam_to_C(lam, n_fold) for lam in LAMS]}
    if full:
        search = GridSearchCV(SVC(cache_size=2000), grid, cv=folds)
        _, seconds = _timed(lambda: search.fit(X, y))
        return seconds, _error(search, X_test, y_test), search.best_params_, "measured"
    train, _ = next(folds.split(X, y))
    start = time.perf_counter()
    for gamma in gammas:
        for C in grid["C"]:
            SVC(C=C, gamma=gamma, cache_size=2000).fit(X[train], y[train])
    seconds = folds.get_n_splits() * (time.perf_counter() - start)
    errors = {(g, lam): _error(SVC(C=lam_to_C(lam, X.shape[0]), gamma=g,
                                   cache_size=2000).fit(X, y), X_test, y_test)
              for g in gammas for lam in LAMS}
    (g, lam), best = min(errors.items(), key=lambda item: item[1])
    return seconds, best, {"gamma": g, "lam": lam}, "first fold × 5; best on the test part"


def _nystroem_halving(X, y, X_test, y_test, gammas, ms, folds, n_fold):
    pipeline = make_pipeline(Nystroem(random_state=0), LinearSVC(dual="auto", max_iter=5000))
    grid = {"nystroem__gamma": gammas, "nystroem__n_components": list(ms),
            "linearsvc__C": [lam_to_C(lam, n_fold) for lam in LAMS]}
    search = HalvingGridSearchCV(pipeline, grid, cv=folds, random_state=0)
    _, seconds = _timed(lambda: search.fit(X, y))
    return seconds, _error(search, X_test, y_test), search.best_params_


def run(name, X, y, X_test, y_test, ms, svc_full):
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    gamma = resolve_gamma("scale", X)
    gammas = [gamma * f for f in GAMMA_FACTORS]
    grid = {"gamma": gammas, "lam": list(LAMS), "n_components": list(ms)}
    n_fold = X.shape[0] - X.shape[0] // 5
    middle = LAMS[len(LAMS) // 2]
    svc, one_fit = _timed(lambda: SVC(C=lam_to_C(middle, X.shape[0]), gamma=gamma,
                                      cache_size=2000).fit(X, y))
    rows = [("one exact SVC fit (γ_scale, λ = %g)" % middle, one_fit,
             _error(svc, X_test, y_test), "-")]
    seconds, error, best = _snacks(X, y, X_test, y_test, grid, folds)
    rows.append(("SnacksSearchCV, %d fits" % (5 * len(gammas) * len(LAMS) * len(ms)),
                 seconds, error, best))
    seconds, error, best = _snacks(X, y, X_test, y_test, grid, folds, halving=True)
    rows.append(("SnacksSearchCV(halving=True)", seconds, error, best))
    seconds, error, best, how = _svc_grid(X, y, X_test, y_test, gammas, folds, n_fold,
                                          svc_full)
    rows.append((f"GridSearchCV(SVC), γ × C ({how})", seconds, error, best))
    seconds, error, best = _nystroem_halving(X, y, X_test, y_test, gammas, ms, folds, n_fold)
    rows.append(("HalvingGridSearchCV(Nystroem + LinearSVC)", seconds, error, best))
    print(f"\n### {name}: {X.shape[0]} searched rows, {X_test.shape[0]} test rows, "
          f"γ_scale = {gamma:.4g}, m ∈ {list(ms)}, 5 folds\n")
    print("| search | seconds | × one SVC fit | test error of the chosen model % | chosen |")
    print("|---|---|---|---|---|")
    for label, seconds, error, best in rows:
        print(f"| {label} | {seconds:.1f} | {seconds / one_fit:.2f} | {error:.2f} | {best} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000, help="w8a rows searched")
    parser.add_argument("--m", default="300,600", help="w8a's landmark counts, comma separated")
    parser.add_argument("--digits-m", default="100,200", help="digits' landmark counts")
    parser.add_argument("--only", choices=("w8a", "digits", "autotune"),
                        help="one part only")
    args = parser.parse_args()
    # Nystroem warns when a halving round has fewer rows than landmarks.
    warnings.filterwarnings("ignore", category=UserWarning)
    if args.only in (None, "w8a"):
        _w8a(args)
    if args.only in (None, "autotune"):
        _auto_tune()
    if args.only in (None, "digits"):
        X, y = load_digits(return_X_y=True)
        X, X_test, y, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                random_state=0)
        scaler = StandardScaler().fit(X)
        run("digits", scaler.transform(X), y, scaler.transform(X_test), y_test,
            [int(v) for v in args.digits_m.split(",")], svc_full=True)


def _auto_tune():
    """The Playground's Auto-tune on all of w8a as the app splits it (70/30, 'standard'
    scaling), from the app's defaults, against exact SVC at γ_scale and the best of four C
    chosen on the test part (optimistic for SVC)."""
    if not W8A.exists():
        print(f"auto-tune skipped: {W8A} not found.")
        return
    from snacks_core import datasets
    from snacks_core.app import explorer
    from snacks_core.model import defaults, evaluation

    X, y = load_svmlight_file(str(W8A), n_features=300)
    split = datasets.split_dataset(datasets.make_dataset(X.tocsr(), y, "w8a"), random_state=0)
    params = {"kernel": "rbf", "gamma": "scale", "n_components": defaults.DEFAULT_M,
              "lam": defaults.DEFAULT_LAM, "solver": "snacks", "sampling": "balanced",
              "max_epochs": 50, "class_weight": None, "random_state": 0}
    default = evaluation.train(split, params).metrics
    tuned, seconds = _timed(lambda: explorer.auto_tune(split, params))
    after = evaluation.train(split, {**params, **tuned["params"]}).metrics
    gamma = resolve_gamma("scale", split.X_train)
    svc = {}
    for C in (1.0, 10.0, 100.0, 1000.0):
        model, fit = _timed(lambda C=C: SVC(C=C, gamma=gamma, cache_size=2000).fit(
            split.X_train, split.y_train))
        svc[C] = (_error(model, split.X_test, split.y_test), fit)
    best_C = min(svc, key=lambda C: svc[C][0])
    print(f"\n### Auto-tune on w8a as the app splits it ({split.X_train.shape[0]} training, "
          f"{split.X_test.shape[0]} test rows; majority class "
          f"{100 * default['majority_error']:.2f} %)\n")
    print("| model | test error % | F1 | seconds |")
    print("|---|---|---|---|")
    print(f"| app defaults (m = {defaults.DEFAULT_M}, λ = {defaults.DEFAULT_LAM:g}, γ 'scale') "
          f"| {100 * default['test_error']:.2f} | {default['f1']:.3f} | - |")
    print(f"| Auto-tune's choice {tuned['params']} | {100 * after['test_error']:.2f} | "
          f"{after['f1']:.3f} | {seconds:.1f} (search) |")
    print(f"| exact SVC, γ_scale, best C = {best_C:g} of 1, 10, 100, 1000 (on the test part) "
          f"| {svc[best_C][0]:.2f} | - | {svc[best_C][1]:.1f} (one fit) |")


def _w8a(args):
    ms = [int(v) for v in args.m.split(",")]
    if W8A.exists():
        X, y = load_svmlight_file(str(W8A), n_features=300)
        X, X_test, y, y_test = train_test_split(X.tocsr(), y, train_size=args.rows,
                                                stratify=y, random_state=0)
        run("w8a", X, y, X_test, y_test, ms, svc_full=False)
    else:
        print(f"w8a skipped: {W8A} not found.")


if __name__ == "__main__":
    main()
