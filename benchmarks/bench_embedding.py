"""Nyström embedding, fit + transform: NystromEmbedding against sklearn's ``Nystroem``.

Both run side by side in one process, alternating, at 1, 2 and all threads, in float64 and
float32: sklearn inside ``threadpool_limits(k)``, ours inside the same limits with
``n_jobs=k``.  Problems: a SUSY-shaped dense one (n × 18 standard normal, m = 1000,
γ = 1/18) and the sparse w8a (m = 500, γ = 'scale'), skipped when the file is absent.
Prints a markdown table of medians and the ratio ours / sklearn (below 1: ours faster).

    PYTHONPATH=. python benchmarks/bench_embedding.py                 # n = 200 000
    PYTHONPATH=. python benchmarks/bench_embedding.py --n 1000000 --m 1000
    PYTHONPATH=. python benchmarks/bench_embedding.py --threads all --repeats 5
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.kernel_approximation import Nystroem
from threadpoolctl import threadpool_limits

from snacks_core.kernels.functions import resolve_gamma
from snacks_core.kernels.nystrom import NystromEmbedding

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"


def timed(function):
    """Wall time of one call; the result is dropped before the next run allocates its own."""
    gc.collect()
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def compare(X, m, gamma, threads, repeats):
    """Median fit + transform seconds of (sklearn, ours) on ``threads`` threads."""
    sklearn_model = Nystroem(kernel="rbf", gamma=gamma, n_components=m, random_state=0)
    ours = NystromEmbedding(kernel="rbf", gamma=gamma, n_components=m, dtype=X.dtype,
                            random_state=0, n_jobs=threads)
    times = {"sklearn": [], "ours": []}
    with threadpool_limits(threads):
        # Compiles the jitted kernels (once per dtype and format) outside the timings.
        ours.fit(X[:2 * m]).transform(X[:2 * m])
        for _ in range(repeats):
            times["sklearn"].append(timed(lambda: sklearn_model.fit(X).transform(X)))
            times["ours"].append(timed(lambda: ours.fit(X).transform(X)))
    return float(np.median(times["sklearn"])), float(np.median(times["ours"]))


def problems(args):
    """(name, X, m, gamma) for each problem, in float64 then float32."""
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((args.n, 18))
    found = [(f"dense {args.n} × 18", dense, args.m, 1.0 / 18)]
    if args.w8a.exists():
        X, _ = load_svmlight_file(str(args.w8a), n_features=300)
        found.append((f"w8a {X.shape[0]} × 300 sparse", X.tocsr(), args.m_sparse,
                      resolve_gamma("scale", X)))
    else:
        print(f"{args.w8a} not found: the sparse problem is skipped.\n")
    for name, X, m, gamma in found:
        for dtype in (np.float64, np.float32):
            yield name, X.astype(dtype), m, gamma


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="rows of the dense problem")
    parser.add_argument("--m", type=int, default=1000, help="landmarks, dense problem")
    parser.add_argument("--m-sparse", type=int, default=500, help="landmarks, w8a")
    parser.add_argument("--w8a", type=Path, default=W8A, help="LIBSVM file of w8a")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each; medians shown")
    parser.add_argument("--threads", default="1,2,all",
                        help="comma-separated thread counts; 'all' for every core")
    args = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    thread_counts = sorted({min(cores, cores if count == "all" else int(count))
                            for count in args.threads.split(",")})
    found = list(problems(args))
    print(f"{cores} cores; medians of {args.repeats} runs, fit + transform, seconds\n")
    print("| problem | dtype | threads | sklearn Nystroem | NystromEmbedding | ours / sklearn |")
    print("|---|---|---:|---:|---:|---:|")
    for name, X, m, gamma in found:
        for threads in thread_counts:
            theirs, ours = compare(X, m, gamma, threads, args.repeats)
            print(f"| {name}, m = {m} | {X.dtype} | {threads} | {theirs:.2f} | {ours:.2f} "
                  f"| {ours / theirs:.2f} |", flush=True)


if __name__ == "__main__":
    main()
