"""The paper's 12 m × 12 λ robustness grid on real data against one exact SVC fit.

``PYTHONPATH=. python benchmarks/bench_grid_vs_svc.py [--rows 30000]`` takes a stratified
``--rows`` subsample of w8a (``../shared/data/w8a``; skipped when absent), splits it 75/25,
and times, side by side in one run: ``robustness_grid`` at its defaults (every core,
Snacks' new defaults: early stopping from 10,000 rows, warm starts along λ) on the paper's
12 landmark counts × the 12 largest of its λ values, against one ``sklearn.svm.SVC`` fit
with the same γ ('scale') at the grid's middle λ.  The issue's target: grid ≤ 1.5 × SVC.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import PAPER_LAMBDAS, PAPER_M, robustness_grid
from snacks_core.solvers.objective import lam_to_C

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000)
    parser.add_argument("--n-jobs", type=int, default=None,
                        help="columns at once (default: every core, as robustness_grid)")
    args = parser.parse_args()
    if not W8A.exists():
        print(f"skipped: {W8A} not found.")
        return
    X, y = load_svmlight_file(str(W8A), n_features=300)
    X, _, y, _ = train_test_split(X.tocsr(), y, train_size=args.rows, stratify=y,
                                  random_state=0)
    X, X_test, y, y_test = train_test_split(X, y, test_size=0.25, stratify=y, random_state=0)
    gamma = resolve_gamma("scale", X)
    lams = sorted(PAPER_LAMBDAS)[1:]
    lam_svc = lams[len(lams) // 2]
    start = time.perf_counter()
    svc = SVC(C=lam_to_C(lam_svc, X.shape[0]), gamma=gamma, cache_size=2000).fit(X, y)
    svc_seconds = time.perf_counter() - start
    svc_error = np.mean(svc.predict(X_test) != y_test)
    start = time.perf_counter()
    table = robustness_grid(X, y, X_test, y_test, m=PAPER_M, lam=lams, gamma=gamma,
                            resources=Resources(n_jobs=args.n_jobs))
    grid_seconds = time.perf_counter() - start
    best = table.loc[table.test_error.idxmin()]
    print(f"w8a, {X.shape[0]} training / {X_test.shape[0]} test rows, γ = {gamma:.4g}")
    print(f"- exact SVC at λ = {lam_svc:g}: {svc_seconds:.1f} s, test error "
          f"{100 * svc_error:.2f} %")
    print(f"- grid {len(PAPER_M)} m × {len(lams)} λ = {len(table)} cells: {grid_seconds:.1f} s "
          f"(**{grid_seconds / svc_seconds:.2f}× one SVC fit**, target ≤ 1.5×); best cell "
          f"m = {best.m}, λ = {best.lam:g}: {100 * best.test_error:.2f} %; stop reasons "
          + ", ".join(f"{k} {v}" for k, v in table.stop_reason.value_counts().items()))


if __name__ == "__main__":
    main()
