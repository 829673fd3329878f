"""Landmarks drawn across partitions by the in-memory rule; only the m drawn rows travel.

In memory, 'balanced' sampling orders the rows so that the classes take turns (a random
permutation within each class; :func:`snacks_core.kernels.landmarks.select_landmarks`), and the
first m of that order are the landmarks: class c gives q_c rows, the number of rounds it
takes part in.  Across partitions the same draw is made in three steps:

1. the client computes q_c from the classes' counts (the last, partial round taken by
   classes drawn at random, as the random keys of the in-memory order do);
2. it splits q_c among the partitions by the multivariate hypergeometric law of their
   counts of class c: the law of how many of q_c rows drawn uniformly from the class fall
   in each partition;
3. each partition draws its share of each class uniformly on its worker and sends the m
   rows; the client orders them as the in-memory rule does (each class's rows in random
   order, the classes taking turns).

'uniform' is the same with one class (every row).  The other samplings (leverage scores,
k-means++) look at every row to choose each landmark and are not offered on a cluster.
"""

from __future__ import annotations

import numpy as np

DISTRIBUTED_SAMPLINGS = ("balanced", "uniform")


def class_quotas(class_counts, n_components, rng) -> np.ndarray:
    """How many of the first ``n_components`` rows of the class-balanced order each class
    gives: rounds of one row per class that still has rows, the last round's classes drawn
    at random."""
    class_counts = np.asarray(class_counts, dtype=np.int64)
    quotas = np.zeros_like(class_counts)
    remaining = int(min(n_components, class_counts.sum()))
    while remaining > 0:
        open_classes = np.flatnonzero(quotas < class_counts)
        if open_classes.shape[0] > remaining:
            open_classes = rng.choice(open_classes, remaining, replace=False)
        quotas[open_classes] += 1
        remaining -= open_classes.shape[0]
    return quotas


def partition_quotas(counts, n_components, sampling, rng) -> np.ndarray:
    """Rows to draw from each partition and class (partitions × classes; one column, every
    row, for 'uniform'), from the partitions' class ``counts`` (partitions × classes)."""
    if sampling not in DISTRIBUTED_SAMPLINGS:
        raise ValueError(f"sampling={sampling!r} looks at every row to choose each landmark "
                         f"and is not offered on a Dask cluster; choose one of "
                         f"{DISTRIBUTED_SAMPLINGS}.")
    counts = np.asarray(counts, dtype=np.int64)
    if sampling == "uniform":
        counts = counts.sum(axis=1, keepdims=True)
    quotas = np.zeros_like(counts)
    for c, quota in enumerate(class_quotas(counts.sum(axis=0), n_components, rng)):
        quotas[:, c] = rng.multivariate_hypergeometric(counts[:, c], int(quota))
    return quotas


def draw_partition_rows(X, y, classes, quotas, seed):
    """Run on a worker: ``(rows, positions, class indices)`` of the rows drawn uniformly
    within each class of this partition, ``quotas[c]`` of class ``classes[c]`` (one quota
    and ``classes`` None for 'uniform')."""
    rng = np.random.default_rng(seed)
    y = np.asarray(y)
    positions, kinds = [], []
    for c, quota in enumerate(quotas):
        rows = np.arange(y.shape[0]) if classes is None else np.flatnonzero(y == classes[c])
        positions.append(rng.choice(rows, int(quota), replace=False))
        kinds.append(np.full(int(quota), c))
    positions = np.concatenate(positions).astype(np.int64)
    return X[positions], positions, np.concatenate(kinds)
