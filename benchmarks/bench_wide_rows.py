"""Two classes on wide rows (GENERATED tf-idf text): the defaults (m grown by the held-out
error, as ``n_components='auto'`` grows it) against the defaults before (m = 500, C by
cross-validation: n_components=500), 2,000 landmarks (C by cross-validation) and SVC().

Two kinds of generated text, both Zipf word counts turned into unit-norm tf-idf rows
(not real text: the issue's text set is not on this machine, and sparse text cannot be
shipped):

* ``rare``: ``bench_defaults_text.synthetic_text``, 7 % positives whose documents draw 15 %
  of their words from a topic of 300 words (the rest 2 %), 7,000 / 3,000 rows × 8,000;
* ``topics``: shaped like the issue's text set, 7,770 / 3,299 rows × 8,315 words, two
  classes of 64 / 36 %, each drawing ``share`` of its words from a topic of its own.

``PYTHONPATH=. python benchmarks/bench_wide_rows.py [--seeds 3]``

With ``--cluster``, the defaults in memory against the same defaults on a two-worker
``distributed.LocalCluster`` (processes of one thread; the rows dense there, as a sparse
file is on the workers): the path of m each took and their test errors, on the ``topics``
draws.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC

from bench_defaults_text import measure, synthetic_text, tfidf
from snacks_core import SnacksClassifier

N_TRAIN, N_TEST, N_WORDS, TOPIC_WORDS, MEAN_LENGTH = 7770, 3299, 8315, 300, 80


def topic_text(share, seed):
    """Counts of ``topics`` documents (module doc) and their labels in {0, 1}."""
    rng = np.random.default_rng(seed)
    n = N_TRAIN + N_TEST
    y = (rng.random(n) < 0.36).astype(int)
    base = 1.0 / (np.arange(N_WORDS) + 2.7)
    base /= base.sum()
    lengths = np.maximum(rng.poisson(MEAN_LENGTH, n), 5)
    rows, cols = [], []
    for label in (0, 1):
        topic = np.zeros(N_WORDS)
        topic[rng.choice(np.arange(100, 4000), TOPIC_WORDS, replace=False)] = (
            1.0 / np.arange(1.0, TOPIC_WORDS + 1))
        topic /= topic.sum()
        docs = np.flatnonzero(y == label)
        rows.append(np.repeat(docs, lengths[docs]))
        cols.append(rng.choice(N_WORDS, lengths[docs].sum(),
                               p=(1 - share) * base + share * topic))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    counts = sp.csr_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(n, N_WORDS))
    counts.sum_duplicates()
    return counts[:N_TRAIN], counts[N_TRAIN:], y[:N_TRAIN], y[N_TRAIN:]


def row(name, counts):
    train_counts, test_counts, y_train, y_test = counts
    X_train, X_test = tfidf(train_counts, test_counts, "l2")
    data = (X_train, X_test, y_train, y_test)
    cells, errors = [], []
    for n_components in (500, "sqrt", 2000):
        model = SnacksClassifier(n_components=n_components, random_state=0)
        error, _, seconds = measure(model, *data)
        errors.append(error)
        cells.append(f"{error:.2f}, {seconds:.2f} s (m = {model.embedding_.n_components_:,}, "
                     f"C = {model.C_:g})")
    svc_error, _, svc_seconds = measure(SVC(), *data)
    return (f"| {name} | " + " | ".join(cells) + f" | {svc_error:.2f}, {svc_seconds:.1f} s | "
            + " / ".join(f"{e - svc_error:+.2f}" for e in errors) + " |")


def path_of(model) -> str:
    """The m a fit grew through (its last, the m kept), or its one m."""
    if model.m_path_ is None:
        return f"m = {model.embedding_.n_components_:,}"
    return " → ".join(f"{m:,}" for m in model.m_path_["m"])


def cluster_row(name, counts, client):
    """The defaults in memory and on ``client``'s workers (the rows as dense Dask
    arrays of 2,000-row chunks)."""
    import dask.array as da

    train_counts, test_counts, y_train, y_test = counts
    X_train, X_test = tfidf(train_counts, test_counts, "l2")
    cells = []
    for where in ("memory", "cluster"):
        model, X, y = SnacksClassifier(random_state=0), X_train, y_train
        if where == "cluster":
            dense = X_train.toarray()
            X = da.from_array(dense, chunks=(2000, dense.shape[1]))
            y = da.from_array(y_train, chunks=(2000,))
        start = time.perf_counter()
        with client.as_current():
            # A fit on Dask arrays runs on the current client; NumPy rows in process.
            model.fit(X, y)
        seconds = time.perf_counter() - start
        error = 100 * np.mean(model.predict(X_test.toarray()) != y_test)
        cells.append((error, f"{error:.2f}, {seconds:.1f} s ({path_of(model)})"))
    return (f"| {name} | {cells[0][1]} | {cells[1][1]} | {cells[1][0] - cells[0][0]:+.2f} |")


def cluster_main(seeds):
    from distributed import Client, LocalCluster

    print("| generated set, seed | in memory: error %, fit s (m path) | 2-worker LocalCluster "
          "| Δ points cluster − memory |\n|---|---|---|---|")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        for seed in range(seeds):
            for share in (0.03, 0.05, 0.08):
                print(cluster_row(f"topics {share:g}, {seed}", topic_text(share, seed), client),
                      flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--cluster", action="store_true",
                        help="the defaults in memory against them on a LocalCluster")
    args = parser.parse_args()
    if args.cluster:
        cluster_main(args.seeds)
        return
    # The first fit of a process loads the compiled code for sparse rows.
    train_counts, test_counts, y_train, _ = synthetic_text(600, 10)
    SnacksClassifier(n_components=10, max_epochs=1).fit(
        tfidf(train_counts, test_counts, "l2")[0], y_train)
    print("| generated set, seed | before (m = 500, C by CV): error %, fit s | defaults | "
          "m = 2,000 (C by CV) | SVC() | Δ points − SVC(): before / defaults / 2,000 |\n"
          "|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        print(row(f"rare, {seed}", synthetic_text(seed=seed)), flush=True)
        for share in (0.03, 0.05, 0.08):
            print(row(f"topics {share:g}, {seed}", topic_text(share, seed)), flush=True)


if __name__ == "__main__":
    main()
