"""The rows a cluster fit holds out for early stopping: those the in-memory fit would hold out.

In memory the held-out rows are :func:`snacks_core.model.engine.validation_split` of the
rows' classes with the solver's seed: scikit-learn's ``train_test_split``, stratified when
every class can be.  Its draw needs only the classes' counts, not the labels: the rows it
holds out of class c are those of within-class ranks ``permutation(N_c)[n_c : n_c + t_c]``
in the rows' order (the plain split: positions ``permutation(n)[:n_test]``).  The client
draws these ranks from the per-partition class counts, and each worker finds the rows of
its partitions from their labels, so that the same seed holds out the same rows of X
whatever the partitioning (a test checks this against ``validation_split``).  The client
holds one integer per row of the largest class for a moment, never the rows.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection._split import _validate_shuffle_split
from sklearn.utils import check_random_state
from sklearn.utils.extmath import _approximate_mode


def held_out_ranks(class_counts, fraction, seed):
    """``(stratified, ranks)``: for each partition (rows of ``class_counts``, partitions ×
    classes, in X's order) the ranks of its held-out rows, one sorted array per class of
    their ranks among the partition's rows of that class when ``stratified``, else one array
    of positions among all its rows."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}.")
    class_counts = np.asarray(class_counts, dtype=np.int64)
    totals = class_counts.sum(axis=0)
    n = int(totals.sum())
    n_train, n_test = _validate_shuffle_split(n, fraction, None, default_test_size=0.25)
    classes = totals.shape[0]
    stratified = totals.min() >= 2 and n_train >= classes and n_test >= classes
    rng = check_random_state(seed)
    if not stratified:
        held = [np.sort(rng.permutation(n)[:n_test])]
        counts = class_counts.sum(axis=1, keepdims=True)
    else:
        trained = _approximate_mode(totals, n_train, rng)
        tested = _approximate_mode(totals - trained, n_test, rng)
        held = [np.sort(rng.permutation(int(totals[c]))[trained[c]:trained[c] + tested[c]])
                for c in range(classes)]
        counts = class_counts
    ends = np.cumsum(counts, axis=0)
    starts = ends - counts
    return stratified, [
        [ranks[np.searchsorted(ranks, starts[p, c]):np.searchsorted(ranks, ends[p, c])]
         - starts[p, c] for c, ranks in enumerate(held)]
        for p in range(counts.shape[0])]


def held_out_positions(kinds, stratified, ranks):
    """Run on a worker: the positions of a partition's held-out rows from its rows' class
    indices ``kinds`` and its ``ranks`` from :func:`held_out_ranks`."""
    if not stratified:
        return ranks[0].astype(np.int64)
    return np.sort(np.concatenate([np.flatnonzero(kinds == c)[r]
                                   for c, r in enumerate(ranks)])).astype(np.int64)
