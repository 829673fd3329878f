"""The Snacks paper's Fig. 1: test error against iterations over the first 4 epochs,
Snacks (ASSG) against Pegasos, on w8a and on SUSY-shaped data.

``PYTHONPATH=. python benchmarks/bench_figure1.py [--quarters 16]`` embeds each problem once
(m = 1000, γ 'scale', the λ of ``bench_paper.py``; w8a from ``../shared/data/w8a``, skipped
when absent) and runs each solver from w = 0 with budgets of 1/4, 2/4, …, 4 epochs (same
seed, stopping rules off: ``tol=0``, no polish, no early stopping), recording the iterate
each run ends on (the running stage average for Snacks, the last iterate for Pegasos) and
its test error.  Prints one table per problem; the paper's figure is the same comparison
as curves.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench_paper import SEED, SUSY_LAM, W8A_LAM, M, load_susy, load_w8a
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.solvers import pegasos, snacks
from snacks_core.solvers.objective import matvec


def snacks_iterates(Z, y, lam, quarters):
    """Snacks's iterate after each quarter epoch: one run per budget (its checkpoints are
    once per epoch; a run cut by its budget ends on the running stage average)."""
    iterates = []
    for q in range(1, quarters + 1):
        seen = []
        snacks.solve(Z, y, lam, max_epochs=q / 4, tol=0.0, random_state=SEED,
                     options=snacks.SnacksOptions(polish=False),
                     callback=lambda record, w, seen=seen: seen.append(
                         np.array(w, dtype=np.float64)))
        iterates.append(seen[-1])  # the point the run stood on, not the best it returns
    return iterates


def pegasos_iterates(Z, y, lam, quarters):
    """Pegasos's last iterate at each quarter epoch, from one run checkpointed 4× an epoch."""
    seen = []
    pegasos.solve(Z, y, lam, max_epochs=-(-quarters // 4), tol=0.0, random_state=SEED,
                  checkpoints_per_epoch=4,
                  callback=lambda record, w: seen.append(np.array(w, dtype=np.float64)))
    return seen[1:quarters + 1]  # after w = 0


SOLVERS = {"Snacks": snacks_iterates, "Pegasos": pegasos_iterates}


def curves(name, split, lam, quarters):
    X_train, X_test, y_train, y_test = split
    y_train = np.where(y_train == y_train.max(), 1.0, -1.0)
    y_test = np.where(y_test == y_test.max(), 1.0, -1.0)
    gamma = resolve_gamma("scale", X_train)
    embedding = NystromEmbedding(gamma=gamma, n_components=M, random_state=SEED).fit(X_train)
    Z, Z_test = embedding.transform(X_train), embedding.transform(X_test)
    n = Z.shape[0]
    print(f"\n### {name}: {n} training rows, m = {embedding.n_components_}, λ = {lam:g}\n")
    print("| epochs | iterations | " + " | ".join(f"{s} test error %" for s in SOLVERS) + " |")
    print("|---|---|" + "---|" * len(SOLVERS))
    started = time.perf_counter()
    errors = {name: [100 * np.mean(np.sign(matvec(Z_test, w)) != y_test)
                     for w in iterates(Z, y_train, lam, quarters)]
              for name, iterates in SOLVERS.items()}
    for q in range(1, quarters + 1):
        print(f"| {q / 4:.2f} | {q * n // 4:,} | "
              + " | ".join(f"{errors[name][q - 1]:.2f}" for name in SOLVERS) + " |")
    print(f"\n({time.perf_counter() - started:.0f} s)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quarters", type=int, default=16, help="budgets of 1/4 epoch up to this")
    parser.add_argument("--susy-rows", type=int, default=100_000)
    args = parser.parse_args()
    split = load_w8a(False)
    if split is not None:
        curves("w8a", split, W8A_LAM, args.quarters)
    curves(f"SUSY-shaped {args.susy_rows:,}", load_susy(args.susy_rows), SUSY_LAM, args.quarters)


if __name__ == "__main__":
    main()
