"""Out-of-core fits against the in-memory fit: the same problem, seed and epochs, with the
embedding in memory (float32), compact (float16 in memory) and on disk (float32 file).

``PYTHONPATH=. python benchmarks/bench_out_of_core.py [--n 1000000] [--m 1000]
[--epochs 3]`` fits ``SnacksClassifier`` on a SUSY-shaped problem
(:func:`snacks_core.datasets.make_susy_like`) three times, ``early_stopping=False``,
``tol=0`` and ``max_epochs`` fixed so that every fit does the same work, and prints the
embedding and training times of each storage with their ratio to the in-memory fit (the
issue's target: within 1.2x), and the test errors (the same model up to float16 rounding).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from snacks_core import SnacksClassifier
from snacks_core.datasets import make_susy_like

TEST_ROWS = 100_000
LAM = 1e-5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--epochs", type=float, default=3.0)
    args = parser.parse_args()
    X, y = make_susy_like(args.n + TEST_ROWS, random_state=0)
    X_test, y_test = X[args.n:], y[args.n:]
    X, y = X[:args.n], y[:args.n]
    mean, scale = X.mean(axis=0), X.std(axis=0)
    X, X_test = (X - mean) / scale, (X_test - mean) / scale
    # The in-memory float32 embedding's bytes: a budget below it sends the others out.
    small = f"{args.n * args.m * 4 // 3}B"
    runs = {"memory": {"storage": "memory"},
            "compact": {"storage": "compact"},
            "disk": {"storage": "disk", "memory_budget": small}}
    rows = []
    for name, options in runs.items():
        model = SnacksClassifier(n_components=args.m, lam=LAM, early_stopping=False, tol=0.0,
                                 max_epochs=args.epochs, random_state=0, **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            model.fit(X, y)
            wall = time.perf_counter() - start
        error = float(np.mean(model.predict(X_test) != y_test))
        rows.append((name, model.storage_, model.embedding_time_, model.training_time_, wall,
                     error))
    base = rows[0]
    print(f"SUSY-shaped, n = {args.n:,}, m = {args.m}, {args.epochs:g} epochs, λ = {LAM:g}")
    print("| storage | kept as | embedding (s) | training (s) | fit (s) | fit / in memory | "
          "test error |")
    print("|---|---|---|---|---|---|---|")
    for name, kind, embed, train, wall, error in rows:
        print(f"| {name} | {kind} | {embed:.1f} | {train:.1f} | {wall:.1f} | "
              f"{wall / base[4]:.2f}x | {100 * error:.2f} % |")


if __name__ == "__main__":
    main()
