"""The Robustness page's default sweep on real data: where its cells lie, what its chosen cell
is worth against an exact kernel SVM, and how long it takes, side by side with the previous
fixed grid.

``PYTHONPATH=. python benchmarks/bench_heatmap_defaults.py [--sets NAME ...] [--svc-max-rows N]``
splits each dataset as the app does (30 % test, stratified, seed 0; the data-aware scaling),
takes the sidebar's data-aware defaults (``sidebar.defaults_for``) and runs the page's default
sweep through ``explorer.grid_axes`` and ``explorer.robustness``: the m × λ grid, 5 values per
axis, 2 seeds, cells scored by 3-fold cross-validation on the training rows, the chosen cell
refitted on them and tested once.  The baseline is the previous fixed grid (λ from 1e-6 to
0.1, m from 5 to 500) with the same settings.  Reported:

- *dead cells*: the share of cells whose CV error is within 0.5 points of the majority class's
  error on the training rows (a cell that learned nothing; target ≤ 25 %);
- *chosen*: the chosen cell's test error, against scikit-learn's exact ``SVC`` with C and γ
  both chosen **on the test rows** (C in 0.1 … 1000, γ = 'scale' × {0.1, 0.3, 1, 3, 10}): an
  optimistic oracle, the best an exact kernel SVM can show on these rows (target: within 0.5
  points);
- *wall*: the sweep's wall time (target ≤ 60 s on 50,000 rows), on this machine as it is
  (shared: timings drift; both grids run in one process, one after the other).

Real data only: w8a (``../shared/data/w8a``, when present; 49,749 rows), scikit-learn's
bundled sets (breast cancer, digits 7 vs rest, wine) and the project's ``sample_data/``.
``--svc-max-rows`` skips the SVC oracle above that many training rows (minutes on w8a).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.datasets import load_svmlight_file
from sklearn.svm import SVC

from snacks_core import datasets
from snacks_core.app import explorer
from snacks_core.app.sidebar import defaults_for
from snacks_core.datasets import make_dataset, split_dataset
from snacks_core.kernels.functions import resolve_gamma

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
TEST_SIZE = 0.3
SIZE, SEEDS, FOLDS = 5, (0, 1), 3
SVC_CS = (0.1, 1.0, 10.0, 100.0, 1000.0)
SVC_GAMMA_FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0)
DEAD_MARGIN = 0.005


def problems(names):
    wanted = set(names or ())

    def chosen(name):
        return not wanted or name in wanted

    for name in ("breast_cancer", "digits7", "wine"):
        if chosen(name):
            yield name, datasets.load_bundled(name)
    for name in datasets.sample_files():
        if chosen(name):
            yield name, datasets.load_file(datasets.sample_data_dir() / name)
    if chosen("w8a"):
        if W8A.exists():
            X, y = load_svmlight_file(str(W8A), n_features=300)
            yield "w8a", make_dataset(X.tocsr(), y, "w8a")
        else:
            print(f"w8a skipped: {W8A} not found.")


def previous_axes(n_fit):
    """The fixed grid the page had before (λ from 1e-6 to 0.1, m from 5 to 500)."""
    lams = list(dict.fromkeys(float(f"{v:.0e}") for v in np.logspace(-6, -1, SIZE)))
    ms = np.unique(np.geomspace(5, max(6, min(n_fit, 500)), SIZE).round().astype(int))
    return [int(m) for m in ms], lams


def sweep(split, params, ms, lams):
    start = time.perf_counter()
    table = explorer.robustness(split, params, "m", ms, lams, SEEDS, cv=FOLDS)
    seconds = time.perf_counter() - start
    cells = table.groupby(["m", "lam"])["test_error"].mean()
    return cells, table.attrs["chosen"], seconds


def svc_oracle(split, Cs=SVC_CS, factors=SVC_GAMMA_FACTORS):
    """The lowest test error of exact SVC over C × γ (chosen on the test rows)."""
    scale = resolve_gamma("scale", split.X_train)

    def one(C, factor):
        model = SVC(C=C, gamma=scale * factor, cache_size=2000).fit(split.X_train, split.y_train)
        return float(np.mean(model.predict(split.X_test) != split.y_test)), C, factor

    results = Parallel(n_jobs=-1)(delayed(one)(C, f) for C in Cs for f in factors)
    return min(results)


def describe(cells, chosen, majority):
    dead = float(np.mean(cells.values >= majority - DEAD_MARGIN))
    where = f"m = {int(chosen['m'])}, λ = {chosen['lam']:g}"
    edge = []
    ms, lams = sorted(set(cells.index.get_level_values(0))), sorted(
        set(cells.index.get_level_values(1)))
    if chosen["m"] in (ms[0], ms[-1]):
        edge.append("m edge")
    if chosen["lam"] in (lams[0], lams[-1]):
        edge.append("λ edge")
    return dead, where + (f" ({', '.join(edge)})" if edge else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", help="dataset names (default: all)")
    parser.add_argument("--svc-max-rows", type=int, default=10**9,
                        help="skip the SVC oracle above this many training rows")
    parser.add_argument("--svc-only", action="store_true",
                        help="only the SVC oracle (C in 1, 10, 100; γ/scale in 0.3, 1, 3 "
                             "above --svc-max-rows rows), no sweep")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print("| data | n train | majority | exact SVC, best on test (C, γ/scale) | grid | dead "
          "cells | chosen cell | its test error | − SVC (points) | wall (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, dataset in problems(args.sets):
        defaults = defaults_for(dataset, TEST_SIZE)
        split = split_dataset(dataset, test_size=TEST_SIZE, scaling=defaults["scaling"],
                              random_state=0)
        n_train = split.X_train.shape[0]
        classes, counts = np.unique(split.y_train, return_counts=True)
        majority = float(1 - counts.max() / n_train)
        params = {"kernel": "rbf", "gamma": "scale", "n_components": defaults["m"],
                  "lam": defaults["lam"], "solver": "snacks", "sampling": "balanced",
                  "max_epochs": 50, "class_weight": None, "random_state": 0}
        if n_train <= args.svc_max_rows or args.svc_only:
            grid = ((1.0, 10.0, 100.0), (0.3, 1.0, 3.0)) if n_train > args.svc_max_rows else ()
            svc_error, svc_C, svc_factor = svc_oracle(split, *grid)
            svc_text = f"{100 * svc_error:.2f} % ({svc_C:g}, {svc_factor:g})"
        else:
            svc_error, svc_text = float("nan"), "not run"
        if args.svc_only:
            print(f"| {label} | {n_train:,} | {100 * majority:.2f} % | {svc_text} |", flush=True)
            continue
        _, ms, lams = explorer.grid_axes("m", params, split.X_train, SIZE, FOLDS)
        n_fit = n_train - -(-n_train // FOLDS)
        for name, axes in (("previous", previous_axes(n_fit)), ("around defaults", (ms, lams))):
            cells, chosen, seconds = sweep(split, params, *axes)
            dead, where = describe(cells, chosen, majority)
            print(f"| {label} | {n_train:,} | {100 * majority:.2f} % | {svc_text} | {name}: m "
                  f"{axes[0][0]}–{axes[0][-1]}, λ {axes[1][0]:g}–{axes[1][-1]:g} | "
                  f"{100 * dead:.0f} % | {where} | {100 * chosen['test_error']:.2f} % | "
                  f"{100 * (chosen['test_error'] - svc_error):+.2f} | {seconds:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
