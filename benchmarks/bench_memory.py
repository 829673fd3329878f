"""Peak memory of a default SnacksClassifier fit against the size of its embedding.

``PYTHONPATH=. python benchmarks/bench_memory.py [--n 1000000] [--m 1000]
[--memory-budget 12GiB] [--dtype float32]`` fits ``SnacksClassifier`` (defaults otherwise)
on a SUSY-shaped problem (:func:`snacks_core.datasets.make_susy_like`) and prints, as a
markdown row: where the embedding was kept, its bytes, the growth of the process's
resident memory during ``fit`` (sampled every 20 ms from /proc/self/status) and the ratio
growth / embedding (the issue's target: ≤ 1.15 in memory), the times and the test error on
100,000 held-out rows.  ``--memory-budget 12GiB`` is what the default budget (half of the
memory) is on a 24 GiB machine: a 5M × 18, m = 1000 problem must then fit under 24 GiB.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
import warnings

import numpy as np

from snacks_core import SnacksClassifier
from snacks_core.datasets import make_susy_like

TEST_ROWS = 100_000


def resident_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class PeakSampler:
    """The largest resident size seen while the ``with`` block runs."""

    def __enter__(self):
        self.peak = resident_bytes()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._done.wait(0.02):
            self.peak = max(self.peak, resident_bytes())

    def __exit__(self, *exc_info):
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, resident_bytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="training rows")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--lam", type=float, default=1e-5)
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--memory-budget", default=None)
    args = parser.parse_args()
    X, y = make_susy_like(args.n + TEST_ROWS, random_state=0)
    X_test, y_test = X[args.n:], y[args.n:]
    X, y = X[:args.n], y[:args.n]
    model = SnacksClassifier(n_components=args.m, gamma=1.0 / 18, lam=args.lam,
                             dtype=np.dtype(args.dtype), memory_budget=args.memory_budget,
                             random_state=0)
    SnacksClassifier(n_components=20, max_epochs=2, dtype=np.dtype(args.dtype)).fit(
        X[:5000], y[:5000])  # compile outside the measurement
    before = resident_bytes()
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught, PeakSampler() as sampler:
        warnings.simplefilter("always")
        model.fit(X, y)
    seconds = time.perf_counter() - start
    embedding = args.n * model.embedding_.n_components_ * np.dtype(args.dtype).itemsize
    growth = sampler.peak - before
    error = np.mean(model.predict(X_test) != y_test)
    print(f"cores {os.cpu_count()}; n = {args.n}, m = {args.m}, {args.dtype}, budget "
          f"{args.memory_budget or 'default'}")
    for warning in caught:
        print(f"note: {warning.message}")
    print("| n | storage | embedding GiB | RSS before GiB | peak RSS GiB | growth GiB | "
          "growth / embedding | fit s (embedding + training) | stop | test error % |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {args.n} | {model.storage_} | {embedding / 2**30:.2f} | {before / 2**30:.2f} | "
          f"{sampler.peak / 2**30:.2f} | {growth / 2**30:.2f} | {growth / embedding:.3f} | "
          f"{seconds:.1f} ({model.embedding_time_:.1f} + {model.training_time_:.1f}) | "
          f"{model.stop_reasons_[0]} | {100 * error:.2f} |")


if __name__ == "__main__":
    main()
