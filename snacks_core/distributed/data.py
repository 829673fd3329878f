"""The rows of a distributed fit: Dask collections checked, one future per partition.

The rows stay on the workers: the client sees the partitions' sizes (known from the chunks),
their class counts and a few sums, never a row.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from snacks_core.distributed import is_dask_collection
from snacks_core.distributed.waiting import DEFAULT_TIMEOUT_S, gather_results


def _as_dask_array(data, name):
    """A Dask array of a Dask array, dataframe or series; chunk sizes must be known."""
    import dask.dataframe as dd

    if isinstance(data, (dd.DataFrame, dd.Series)):
        # The blocks' lengths: one pass that returns one integer per block.  (Not
        # to_dask_array(lengths=True): Dask may fuse the partitions of a column read from
        # Parquet, which then no longer match the lengths it counts.)
        data = data.to_dask_array().compute_chunk_sizes()
    if not hasattr(data, "chunks"):
        raise ValueError(f"{name} must be a dask.array or dask.dataframe collection, got "
                         f"{type(data).__name__}.")
    if any(np.isnan(size) for size in data.chunks[0]):
        raise ValueError(f"{name} has unknown chunk sizes (e.g. after boolean indexing or "
                         "a dataframe's .values): call compute_chunk_sizes() on it, or pass "
                         "the dask dataframe itself.")
    return data


def dask_rows(X, y, sample_weight=None):
    """``(X, y, sample_weight)`` as Dask arrays with the same row chunks: X of shape (n, d)
    with its columns in one chunk (float32 or float64), y and the weights of shape (n,).

    y and ``sample_weight`` may be NumPy arrays (they are 1/d of X): they are then chunked
    as X's rows.  Raises ValueError for anything else, naming what to do.
    """
    import dask.array as da

    X = _as_dask_array(X, "X")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (rows × features), got {X.ndim} dimension(s).")
    if not np.issubdtype(X.dtype, np.number):
        raise ValueError(f"X has non-numeric values (dtype {X.dtype}): encode or drop the "
                         "non-numeric columns first.")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    X = X.rechunk({1: -1})
    aligned = []
    for name, values in (("y", y), ("sample_weight", sample_weight)):
        if values is None:
            aligned.append(None)
            continue
        if not is_dask_collection(values):
            values = np.asarray(values)
            if values.shape[:1] != (X.shape[0],):
                raise ValueError(f"{name} has {values.shape[0] if values.ndim else 0} rows "
                                 f"and X {X.shape[0]}: give one value per row.")
            values = da.from_array(values, chunks=(X.chunks[0],) + values.shape[1:])
        frame = not hasattr(values, "chunks")
        values = _as_dask_array(values, name)
        if frame and values.chunks[0] != X.chunks[0] and values.shape[:1] == X.shape[:1]:
            # A column of the same dataframe whose partitions Dask fused: the labels (1/d
            # of X) move to X's blocks.
            values = values.rechunk((X.chunks[0],) + values.chunks[1:])
        if values.ndim != 1:
            raise ValueError(f"{name} must be 1-D (one value per row), got shape "
                             f"{values.shape}.")
        if values.chunks[0] != X.chunks[0]:
            raise ValueError(f"X and {name} are chunked differently (rows per chunk "
                             f"{X.chunks[0][:4]}… against {values.chunks[0][:4]}…): each "
                             f"partition of X needs its own rows' {name} on the same "
                             f"worker; rechunk it, e.g. {name}.rechunk(X.chunks[0]).")
        aligned.append(values)
    return X, aligned[0], aligned[1]


class PartitionSummary(NamedTuple):
    """What the client learns of one partition: its classes and their counts, the sum and
    the sum of squares of its entries (for γ='scale'), whether every entry is finite, and
    of its sample weights (None without them) the first problem found (None when they are
    finite and non-negative) and the rows of each class with a positive weight."""

    labels: np.ndarray
    counts: np.ndarray
    total: float
    total_squares: float
    finite: bool
    weight_problem: str | None = None
    positive: np.ndarray | None = None


def summarize_partition(X, y, weight=None) -> PartitionSummary:
    """Run on a worker: the :class:`PartitionSummary` of the rows X with labels y (and
    sample weights ``weight``)."""
    labels, kinds, counts = np.unique(y, return_inverse=True, return_counts=True)
    values = np.asarray(X, dtype=np.float64)
    summary = PartitionSummary(labels, counts, float(values.sum()), float(np.sum(values**2)),
                               bool(np.isfinite(values).all()))
    if weight is None:
        return summary
    weight = np.asarray(weight, dtype=np.float64)
    problem = ("NaN or infinite values" if not np.isfinite(weight).all() else
               "negative values" if np.any(weight < 0) else None)
    return summary._replace(weight_problem=problem,
                            positive=np.bincount(kinds[weight > 0], minlength=len(labels)))


class Partitions(NamedTuple):
    """The data of a fit on the cluster: per partition, futures of its rows, labels and
    weights (None without sample weights), its row count, and the class counts
    (partitions × classes) of ``classes``, all rows and those with a positive weight."""

    X: list
    y: list
    weight: list | None
    rows: np.ndarray
    classes: np.ndarray
    class_counts: np.ndarray
    n_features: int
    positive_counts: np.ndarray


def contiguous_places(client, count):
    """The worker of each of ``count`` partitions (as a one-item list; None when no worker is
    connected yet): contiguous runs on the workers in address order.  A loose restriction
    (a partition lost with its worker is recomputed on another); the groups of the rounds,
    and so the model, are then the same for a fixed seed and number of workers."""
    workers = sorted(client.scheduler_info()["workers"])
    return [[workers[p * len(workers) // count]] if workers else None for p in range(count)]


def load_partitions(client, X, y, sample_weight, timeout=DEFAULT_TIMEOUT_S):
    """``(Partitions, summaries)``: the partitions of the checked collections computed on the
    workers (one future each) and their :class:`PartitionSummary`; refuses non-finite X
    and fewer than two classes."""
    keep = [X.to_delayed()[:, 0].tolist(), y.to_delayed().tolist()]
    if sample_weight is not None:
        keep.append(sample_weight.to_delayed().tolist())
    places = contiguous_places(client, len(keep[0]))
    futures = [[client.compute(block, workers=place, allow_other_workers=place is not None)
                for block, place in zip(blocks, places, strict=True)] for blocks in keep]
    weights = futures[2] if sample_weight is not None else [None] * len(futures[0])
    summaries = gather_results(
        client, [client.submit(summarize_partition, x, labels, weight)
                 for x, labels, weight in zip(futures[0], futures[1], weights, strict=True)],
        "reading the partitions", timeout)
    bad = [p for p, summary in enumerate(summaries) if not summary.finite]
    if bad:
        raise ValueError(f"X has NaN or infinite values (partition(s) {bad[:5]}): remove or "
                         "impute them first.")
    bad = [(p, s.weight_problem) for p, s in enumerate(summaries) if s.weight_problem]
    if bad:
        raise ValueError(f"sample_weight has {bad[0][1]} (partition(s) "
                         f"{[p for p, _ in bad][:5]}): weights must be finite and >= 0.")
    classes = np.unique(np.concatenate([s.labels for s in summaries]))
    if classes.shape[0] < 2:
        raise ValueError(f"y has only one class ({classes[0]}); a classifier needs at least 2 "
                         "classes.")
    counts = np.zeros((len(summaries), classes.shape[0]), dtype=np.int64)
    positive = np.zeros_like(counts)
    for p, summary in enumerate(summaries):
        counts[p, np.searchsorted(classes, summary.labels)] = summary.counts
        if summary.positive is not None:
            positive[p, np.searchsorted(classes, summary.labels)] = summary.positive
    partitions = Partitions(futures[0], futures[1], futures[2] if sample_weight is not None
                            else None, np.asarray(X.chunks[0], dtype=np.int64), classes,
                            counts, int(X.shape[1]),
                            counts if sample_weight is None else positive)
    return partitions, summaries


def scale_gamma(summaries, n_rows, n_features) -> float:
    """γ='scale' (1 / (d · Var(X)), 1.0 for constant X) from the partitions' sums, as
    :func:`snacks_core.kernels.functions.resolve_gamma` gives it on the whole X up to rounding."""
    entries = n_rows * n_features
    mean = sum(s.total for s in summaries) / entries
    variance = sum(s.total_squares for s in summaries) / entries - mean**2
    return float(1.0 / (n_features * variance)) if variance > 0 else 1.0
