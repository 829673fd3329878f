"""Landmarks drawn across partitions: the rows the in-memory fit draws; only those m travel.

In memory (:func:`snacks_core.kernels.landmarks.select_landmarks` with the fit's seed),
'uniform' takes the first m of ``permutation(n)``, and 'balanced' orders the rows so that
the classes take turns: each class's rows are shuffled, the j-th of them gets the key
j + u_j (u_j uniform in [0, 1)), and the m smallest keys are the landmarks.  Both draws need
only the classes' counts, not the labels: the client makes the same random draws from the
per-partition class counts, keeps for each of the m landmarks its class and its rank among
that class's rows in X's order (a row of rank j ≥ m in its shuffled class never has one of
the m smallest keys), and finds the partition holding each.  Each partition's worker then
sends those rows of its own.  The same seed therefore gives the same landmarks as one
machine, whatever the partitioning; the client holds two numbers per row of the largest
class for a moment, never the rows.  The other samplings (leverage scores, k-means++) look
at every row to choose each landmark and are not offered on a cluster.
"""

from __future__ import annotations

import numpy as np

DISTRIBUTED_SAMPLINGS = ("balanced", "uniform")


def landmark_draw(class_counts, n_components, sampling, seed):
    """``(partition, kind, rank)`` of each of the ``n_components`` landmarks, in the
    in-memory selection order: the partition holding it (rows of ``class_counts``,
    partitions × classes, in X's order), its class index (0 for 'uniform') and its rank
    among that partition's rows of that class (among all its rows for 'uniform')."""
    if sampling not in DISTRIBUTED_SAMPLINGS:
        raise ValueError(f"sampling={sampling!r} looks at every row to choose each landmark "
                         f"and is not offered on a Dask cluster; choose one of "
                         f"{DISTRIBUTED_SAMPLINGS}.")
    counts = np.asarray(class_counts, dtype=np.int64)
    if sampling == "uniform":
        counts = counts.sum(axis=1, keepdims=True)
    totals = counts.sum(axis=0)
    m = int(min(n_components, totals.sum()))
    rng = np.random.default_rng(seed)
    if sampling == "uniform":
        kinds, ranks = np.zeros(m, np.int64), rng.permutation(int(totals[0]))[:m]
    else:
        keys, kinds, ranks = [], [], []
        for c, total in enumerate(totals.tolist()):
            shuffled, offsets = rng.permutation(total), rng.random(total)
            take = min(m, total)
            keys.append(np.arange(take) + offsets[:take])
            kinds.append(np.full(take, c, np.int64))
            ranks.append(shuffled[:take])
        first = np.argsort(np.concatenate(keys), kind="stable")[:m]
        kinds, ranks = np.concatenate(kinds)[first], np.concatenate(ranks)[first]
    ends = np.cumsum(counts, axis=0)
    partition = np.array([np.searchsorted(ends[:, c], r, side="right")
                          for c, r in zip(kinds.tolist(), ranks.tolist(), strict=True)],
                         dtype=np.int64)
    return partition, kinds, ranks - (ends - counts)[partition, kinds]


def draw_partition_rows(X, y, classes, kinds, ranks):
    """Run on a worker: ``(rows, positions)`` of this partition's landmarks, the row of rank
    ``ranks[i]`` among its rows of class ``classes[kinds[i]]`` (among all its rows when
    ``classes`` is None: 'uniform')."""
    kinds, positions = np.asarray(kinds), np.array(ranks, dtype=np.int64)
    if classes is not None:
        y = np.asarray(y)
        for c in np.unique(kinds):
            positions[kinds == c] = np.flatnonzero(y == classes[c])[positions[kinds == c]]
    return X[positions], positions
