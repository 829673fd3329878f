"""A fit on a Dask cluster (issue 29): two local worker processes against the in-process fit.

Run with ``.venv/bin/python benchmarks/bench_distributed.py [ROWS] [--quick] [--seeds S ...]``
(default 300,000 rows of 18 features; the issue's target is 3,000,000) on a quiet machine
(``--quick`` runs parts 1 and 2 only, without the serial baseline, and prints the cluster's
rounds; ``--seeds`` runs part 4 only); it prints its numbers (BENCHMARKS.md, 'Distributed
fit', is written from them).  Measured in one run:

1. the rows are created on the workers of a ``LocalCluster`` of two processes of one thread
   (a dask array of 8 partitions: a nonlinear two-class problem), and
   ``SnacksClassifier().fit`` runs on them with default settings (m and λ 'auto',
   solver 'snacks': on the cluster the Snacks steps averaged across workers each round,
   early stopping on held-out rows);
   time, objective and gap of the last round, rounds, test error on 50,000 rows made on
   the client, the client's peak memory growth (RSS sampled every 5 ms) during fit and
   during predict (a Dask array, reduced to its error on the cluster), and the bytes of
   the vectors sent per round;
2. the same rows computed into this process and the same estimator fitted in memory (all
   cores): time, objective, test error; then solver 'liblinear' in memory (CoCoA+'s local
   solver run serially, with the same budget of 50 passes);
3. on 2, 4 and 8 workers (40,000 rows) the rounds of the default fit to early stopping
   (and its test error) and those of CoCoA+ to a relative gap of 1e-2, the per-round cost
   of the cluster without work (a fit on 2,000 rows), and from the measured per-row and
   per-round costs a projection for 100M rows on 32 workers (the default fit's rounds
   grown by the power law through the measured counts), printed as a projection;
4. with ``--seeds``, "the same model as one machine" (issue 39): for each seed, the default
   fit of the same rows on the cluster and in memory, their objectives F on every training
   row (ratio, target within 1 %) and test errors (difference, target within 0.2 points).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402
import psutil  # noqa: E402

from snacks_core import SnacksClassifier  # noqa: E402
from snacks_core.distributed.assg import AssgSummary  # noqa: E402

FEATURES, PARTITIONS, TEST_ROWS, SEED = 18, 8, 50_000, 0
PROJECTED_ROWS, PROJECTED_WORKERS = 100_000_000, 32


def make_rows(block, rows, seed=SEED):
    """Rows of a nonlinear two-class problem: the label is whether ‖x_{0..3}‖² + x₄x₅/2 plus
    noise exceeds 4 (x standard normal in 18 dimensions)."""
    rng = np.random.default_rng([seed, block])
    X = rng.standard_normal((rows, FEATURES))
    score = np.sum(X[:, :4] ** 2, axis=1) + 0.5 * X[:, 4] * X[:, 5] - 4.0
    y = (score + 0.5 * rng.standard_normal(rows) > 0).astype(np.int64)
    return X, y


def cluster_rows(n):
    """X and y as dask arrays whose partitions are created by the workers."""
    rows = [n // PARTITIONS + (p < n % PARTITIONS) for p in range(PARTITIONS)]
    parts = [dask.delayed(make_rows, nout=2)(p, r) for p, r in enumerate(rows)]
    X = da.concatenate([da.from_delayed(x, (r, FEATURES), np.float64)
                        for (x, _), r in zip(parts, rows, strict=True)])
    y = da.concatenate([da.from_delayed(labels, (r,), np.int64)
                        for (_, labels), r in zip(parts, rows, strict=True)])
    return X, y


class PeakMemory:
    """The peak growth of this process's resident memory while the block runs."""

    def __enter__(self):
        self.process = psutil.Process()
        self.start = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()
        self.growth = self.peak - self.start


def last(model, column):
    return float(model.history_[column][-1])


def main(n, quick=False):
    X_test, y_test = make_rows(10_000, TEST_ROWS, seed=SEED + 1)
    x_bytes = n * FEATURES * 8
    print(f"load average {psutil.getloadavg()[0]:.2f}; {n:,} rows × {FEATURES} features "
          f"({x_bytes / 2**20:.0f} MiB), {PARTITIONS} partitions, 2 worker processes of one "
          "thread")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        X, y = cluster_rows(n)
        tiny_X, tiny_y = cluster_rows(2_000)
        warm = SnacksClassifier(n_components=50, random_state=SEED).fit(tiny_X, tiny_y)
        overhead = warm.training_time_ / (warm.n_iter_ + 1)
        start = time.perf_counter()
        with PeakMemory() as fit_memory:
            model = SnacksClassifier(random_state=SEED).fit(X, y)
        seconds = time.perf_counter() - start
        with PeakMemory() as predict_memory:
            predicted = model.predict(X)
            train_error = float((predicted != y).mean().compute())
        assert isinstance(predicted, da.Array)
        test_error = float(np.mean(model.predict(X_test) != y_test))
        rounds = model.n_iter_ + 1
        vector = np.zeros(model.coef_.shape[1])
        summary = AssgSummary(vector, vector, 0, 0.0, 0.0, None, (0.0, 0.0, 0.0))
        message = len(pickle.dumps(summary)) + 3 * len(pickle.dumps(vector))
        print(f"cluster: {seconds:.1f} s (embedding {model.embedding_time_:.1f} s, "
              f"{rounds} rounds in {model.training_time_:.1f} s), m = "
              f"{model.embedding_.n_components_}, stop {model.stop_reasons_[0]}, "
              f"objective {last(model, 'objective'):.5f} (gap {last(model, 'gap'):.2g}), "
              f"test error {100 * test_error:.2f} %, training error "
              f"{100 * train_error:.2f} %")
        print(f"  client peak memory growth: fit {fit_memory.growth / 2**20:.0f} MiB, "
              f"predict {predict_memory.growth / 2**20:.0f} MiB ("
              f"{max(fit_memory.growth, predict_memory.growth) / x_bytes:.1%} of X)")
        print(f"  per round: {model.solver_info_[0]['bytes_per_round']:,} bytes of vectors "
              f"(w, centre and checkpoint out, last iterate and sum of iterates back, per "
              f"worker), {message:,} bytes pickled per worker; "
              f"round overhead without work {1000 * overhead:.0f} ms")
        if quick:
            print_rounds(model)
        X_local, y_local = dask.compute(X, y)
    start = time.perf_counter()
    local = SnacksClassifier(random_state=SEED).fit(X_local, y_local)
    local_seconds = time.perf_counter() - start
    local_error = float(np.mean(local.predict(X_test) != y_test))
    print(f"in process: {local_seconds:.1f} s (embedding {local.embedding_time_:.1f} s, "
          f"training {local.training_time_:.1f} s), stop {local.stop_reasons_[0]}, "
          f"objective {np.nanmin(local.history_['objective']):.5f}, test error "
          f"{100 * local_error:.2f} %")
    print(f"ratios: time {seconds / local_seconds:.2f}×, test error "
          f"{100 * (test_error - local_error):+.2f} points")
    if quick:
        return
    start = time.perf_counter()
    serial = SnacksClassifier(solver="liblinear", random_state=SEED).fit(X_local, y_local)
    serial_seconds = time.perf_counter() - start
    print(f"in process, the local solver alone (liblinear, {int(serial.n_iter_)} epochs): "
          f"{serial_seconds:.1f} s, stop {serial.stop_reasons_[0]}, objective "
          f"{last(serial, 'objective'):.5f} (gap {last(serial, 'gap'):.2g}), test error "
          f"{100 * np.mean(serial.predict(X_test) != y_test):.2f} %")
    growth = rounds_by_workers()
    rows_per_worker = n / 2
    per_row_embed = model.embedding_time_ / rows_per_worker
    per_row_round = max(model.training_time_ / rounds - overhead, 0.0) / rows_per_worker
    projected_rows = PROJECTED_ROWS / PROJECTED_WORKERS
    embed = per_row_embed * projected_rows
    round_time = overhead + per_row_round * projected_rows
    k = model.embedding_.n_components_
    print(f"projection (not a measurement) for {PROJECTED_ROWS:,} rows on {PROJECTED_WORKERS} "
          f"workers of one thread, from this run's per-row and per-round costs: "
          f"{projected_rows:,.0f} rows a worker ({projected_rows * k * 4 / 2**30:.1f} GiB of "
          f"float32 embedding, half compact), embedding {embed / 60:.1f} min, "
          f"{round_time:.1f} s a round, {rounds} rounds as here: "
          f"{(embed + rounds * round_time) / 60:.1f} min; with the rounds to early stopping "
          f"grown as measured from 2 workers (×{growth:.2f} at {PROJECTED_WORKERS} workers): "
          f"{(embed + rounds * growth * round_time) / 60:.1f} min")


def print_rounds(model):
    """The cluster fit's history, one line a round."""
    history = model.history_
    for row in range(history["iteration"].shape[0]):
        print(f"  round {int(history['iteration'][row]):3d}  epoch "
              f"{history['epoch'][row]:5.1f}  {history['time'][row]:6.2f} s  objective "
              f"{history['objective'][row]:.5f}  gap {history['gap'][row]:.2g}  held-out "
              f"error {100 * history['validation_error'][row]:.2f} %")


def rounds_by_workers(n=40_000, workers=(2, 4, 8), tol=1e-2):
    """Rounds on K workers: of the default fit (the averaged Snacks steps) to early stopping,
    with its test error, and of CoCoA+ ('liblinear', σ' = K damps each round) to a relative
    gap of ``tol``; prints them and returns the growth of the default fit's rounds from 2 to
    :data:`PROJECTED_WORKERS` workers of the power law fitted through them (a projection).
    Round counts do not depend on the machine's speed, so K worker processes may share its
    cores."""
    X_test, y_test = make_rows(10_001, TEST_ROWS, seed=SEED + 1)
    counts = []
    for k in workers:
        with distributed.LocalCluster(n_workers=k, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, \
                distributed.Client(cluster):
            X, y = cluster_rows(n)
            default = SnacksClassifier(random_state=SEED).fit(X, y)
            cocoa = SnacksClassifier(solver="liblinear", early_stopping=False, tol=tol,
                                     max_epochs=2000, random_state=SEED).fit(X, y)
            counts.append((default.solver_info_[0]["partitions"], default.n_iter_ + 1,
                           np.mean(default.predict(X_test) != y_test), cocoa.n_iter_ + 1,
                           cocoa.stop_reasons_[0]))
    print(f"rounds on {n:,} rows, by workers: " + ", ".join(
        f"{k}: {rounds} to early stopping ({100 * error:.2f} % test error), CoCoA+ {cocoa} to "
        f"a gap of {tol:g} ({stop})" for k, rounds, error, cocoa, stop in counts))
    k, rounds = np.log([c[0] for c in counts]), np.log([c[1] for c in counts])
    slope = np.polyfit(k, rounds, 1)[0] if np.ptp(k) > 0 else 0.0
    return float((PROJECTED_WORKERS / 2) ** slope)


def default_fits(X, y, seeds):
    """``(model, seconds)`` of the default fit of X, y for each seed."""
    fits = []
    for seed in seeds:
        start = time.perf_counter()
        model = SnacksClassifier(random_state=seed).fit(X, y)
        fits.append((model, time.perf_counter() - start))
    return fits


def compare_seeds(n, seeds):
    """Part 4: per seed, the default fit on the cluster and in memory of the same n rows,
    their objectives and test errors side by side (the cluster's fits first, then the rows
    computed into this process and the cluster closed)."""
    X_test, y_test = make_rows(10_000, TEST_ROWS, seed=SEED + 1)
    print(f"load average {psutil.getloadavg()[0]:.2f}; {n:,} rows × {FEATURES} features, "
          f"{PARTITIONS} partitions, 2 worker processes of one thread; default fits, seeds "
          f"{', '.join(map(str, seeds))}")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        X, y = cluster_rows(n)
        on_cluster = default_fits(X, y, seeds)
        X_local, y_local = dask.compute(X, y)
    in_memory = default_fits(X_local, y_local, seeds)
    print("seed | objective memory | cluster | ratio | test error memory | cluster | "
          "difference | stop memory / cluster | time memory / cluster")
    ratios, differences = [], []
    for seed, (local, local_s), (remote, remote_s) in zip(seeds, in_memory, on_cluster,
                                                          strict=True):
        local_error = float(np.mean(local.predict(X_test) != y_test))
        remote_error = float(np.mean(remote.predict(X_test) != y_test))
        ratios.append(remote.train_objective_ / local.train_objective_)
        differences.append(100 * (remote_error - local_error))
        print(f"{seed} | {local.train_objective_:.5f} | {remote.train_objective_:.5f} | "
              f"{ratios[-1]:.4f} | {100 * local_error:.2f} % | {100 * remote_error:.2f} % | "
              f"{differences[-1]:+.2f} | {local.stop_reasons_[0]} / "
              f"{remote.stop_reasons_[0]} | {local_s:.1f} / {remote_s:.1f} s")
    print(f"largest objective gap {100 * max(abs(r - 1) for r in ratios):.2f} % (target 1 %), "
          f"largest test error difference {max(map(abs, differences)):.2f} points "
          "(target 0.2)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=int, nargs="?", default=300_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, nargs="+")
    options = parser.parse_args()
    if options.seeds:
        compare_seeds(options.rows, options.seeds)
    else:
        main(options.rows, quick=options.quick)
