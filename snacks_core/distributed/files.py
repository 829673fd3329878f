"""Data files read on a cluster's workers, scaled there, and predicted there.

A glob of files the workers can read at the same paths (a shared or copied file system):
each file is read by a worker with :func:`snacks_core.datasets.load_file` and becomes a
partition.  LIBSVM files are read zero-based first, so that one index base is decided for all
of them (:func:`snacks_core.datasets.decide_index_base`, as
:func:`snacks_core.datasets.load_files` decides it on one machine) and one width, the widest
file's, before the rows are cut to it.  The scaling is the one rule of
:mod:`snacks_core.datasets.scaling`: 'auto' resolved by each worker on its own rows (a
sparse LIBSVM file is used as it is, as on one machine), its statistics combined from the
per-partition sums.  The rows never come to the client.
"""

from __future__ import annotations

import glob
import os
from functools import reduce
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from snacks_core import datasets
from snacks_core.datasets.remote import remote_filesystem, url_scheme
from snacks_core.datasets.scaling import (
    FeatureScaling,
    column_sums,
    resolve_scaling,
    scaling_from_sums,
)
from snacks_core.distributed.data import contiguous_places
from snacks_core.model.defaults import on_one_scale


class ClusterData(NamedTuple):
    """The rows of a glob's files on the cluster: X (dense) and y as Dask arrays, a
    partition per file, the LIBSVM index base (None for other formats) and whether the
    files hold sparse rows (LIBSVM)."""

    X: object
    y: object
    paths: list
    index_base: int | None
    sparse: bool


class _Scan(NamedTuple):
    """What a worker tells of one file it read."""

    rows: int
    width: int
    holds_zero: bool
    sparse: bool


def _read_file(path, label_column, index_base):
    """Run on a worker: ``(X, y)`` of one file (a path, or a URL copied here by
    :mod:`snacks_core.datasets.remote`); LIBSVM with ``index_base`` (0 when it is to be
    decided: the column of index 0 is then kept).  A file the worker cannot open is named
    with the worker."""
    try:
        data = datasets.load_file(path, label_column=label_column, purpose="predict",
                                  index_base=0 if index_base is None else index_base)
    except OSError as exc:
        from distributed import get_worker

        raise ValueError(f"{path}: the worker {get_worker().address} cannot read it "
                         f"({type(exc).__name__}: {exc.strerror or exc}); with --scheduler "
                         "every worker reads DATA at the same absolute path (a shared or "
                         "copied file system).") from None
    return data.X, data.y


def _scan(part) -> _Scan:
    """Run on a worker: the :class:`_Scan` of one file's rows."""
    X, _ = part
    sparse = sp.issparse(X)
    holds_zero = bool(sparse and X.nnz and (sp.csr_matrix(X).indices == 0).any())
    return _Scan(X.shape[0], X.shape[1], holds_zero, sparse)


def _dense_rows(part, start, width):
    """Run on a worker: the file's rows as a dense float64 array of ``width`` columns (at
    least the file's), its sparse columns from ``start`` (1 drops the unused column of a
    one-based file)."""
    X, _ = part
    if not sp.issparse(X):
        return np.asarray(X, dtype=np.float64)
    X = sp.csr_matrix(X)[:, start:]
    dense = np.zeros((X.shape[0], width))
    dense[:, :X.shape[1]] = X.toarray()
    return dense


def _labels(part):
    """Run on a worker: the file's labels (None for each row of an unlabelled file)."""
    X, y = part
    return np.full(X.shape[0], None, object) if y is None else np.asarray(y)


def _matching_paths(pattern):
    """The files of the glob ``pattern`` (absolute paths: a relative glob is resolved in
    this process's folder, not in each worker's) and whether they are LIBSVM files (one
    format)."""
    if url_scheme(pattern) is not None:
        filesystem = remote_filesystem(pattern)
        paths = sorted(filesystem.unstrip_protocol(path) for path in filesystem.glob(pattern))
    else:
        paths = sorted(glob.glob(os.path.abspath(os.path.expanduser(pattern))))
    if not paths:
        raise ValueError(f"DATA {pattern!r} matches no file on this machine; with --scheduler, "
                         "DATA is a glob of files the workers read at the same paths, e.g. "
                         "'data/part-*.csv' (quoted).")
    kinds = {datasets.file_kind(path) for path in paths}
    if len(kinds) > 1:
        raise ValueError(f"DATA {pattern!r} mixes formats ({', '.join(sorted(kinds))}): "
                         "give files of one format.")
    return paths, kinds == {"libsvm"}


def _check_widths(pattern, paths, scans, libsvm, base, start, width):
    """Refuse LIBSVM files wider than ``width`` and dense files of other widths."""
    widths = {scan.width - start for scan in scans}
    wider = [path for path, scan in zip(paths, scans, strict=True)
             if libsvm and scan.width - start > width]
    if wider:
        # As a file read on this machine is refused: never cut to the model's width.
        raise ValueError(f"{wider[0]}: a feature index is beyond the {width:,} features "
                         f"expected (read {'one' if base == 1 else 'zero'}-based: indices "
                         f"{base} to {width - 1 + base}).")
    if not libsvm and widths != {width}:
        raise ValueError(f"The files of {pattern!r} have {sorted(widths)} feature columns; "
                         f"they need one width ({width}: the model's, or the first file's).")


def read_on_cluster(client, pattern, label_column, index_base, n_features=None) -> ClusterData:
    """The files of the glob ``pattern`` read by the workers, one partition each, with one
    index base (``index_base``, or decided over all LIBSVM files) and one width
    (``n_features``, or the widest file's); ``label_column`` as the readers take it."""
    import dask
    import dask.array as da

    paths, libsvm = _matching_paths(pattern)
    # Each file read where its partition will be kept (no copy of its rows at the fit).
    parts = [client.persist(dask.delayed(_read_file)(path, label_column, index_base),
                            workers=place, allow_other_workers=place is not None)
             for path, place in zip(paths, contiguous_places(client, len(paths)),
                                    strict=True)]
    scans = dask.compute(*[dask.delayed(_scan)(part) for part in parts])
    base, start = None, 0
    if libsvm and index_base is not None:
        base = index_base
    elif libsvm:
        # Read zero-based: a one-based run drops its unused first column.
        base = start = datasets.decide_index_base(scan.holds_zero for scan in scans)
    width = n_features if n_features is not None else max(s.width - start for s in scans)
    _check_widths(pattern, paths, scans, libsvm, base, start, width)
    X = da.concatenate([da.from_delayed(dask.delayed(_dense_rows)(part, start, width),
                                        (scan.rows, width), np.float64)
                        for part, scan in zip(parts, scans, strict=True)])
    y = da.concatenate([da.from_delayed(dask.delayed(_labels)(part), (scan.rows,), object)
                        for part, scan in zip(parts, scans, strict=True)])
    return ClusterData(X, y, paths, base, any(scan.sparse for scan in scans))


def fit_scaling(data: ClusterData, scaling) -> FeatureScaling | None:
    """The ``scaling`` of the rows of ``data``, from the column sums each worker computes
    over its partition; None for 'none'.  'auto' is the library's rule for all the files'
    rows together: none for sparse rows, and for dense ones whose columns share one scale
    (:func:`~snacks_core.model.defaults.on_one_scale` of their minima and maxima), standard
    otherwise."""
    import dask

    auto = scaling == "auto"
    if (auto and data.sparse) or (not auto and resolve_scaling(scaling, None) == "none"):
        return None
    sums = reduce(lambda a, b: a.combine(b), dask.compute(
        *[dask.delayed(column_sums)(block) for block in data.X.to_delayed().ravel()]))
    if auto and on_one_scale(sums.minimum, sums.maximum):
        return None
    return scaling_from_sums("standard" if auto else scaling, sums, data.sparse)


def scaled_rows(X, steps):
    """The Dask rows X through the fitted preprocessing ``steps`` (block by block)."""
    for step in steps:
        X = X.map_blocks(step.transform, dtype=np.float64)
    return X


def predicted_blocks(client, pipeline, data: ClusterData):
    """``(labels, truth)`` of each partition of ``data`` predicted by the fitted
    ``pipeline`` on the workers, in the files' order: every block is computed at once, on
    all the workers, and each comes back as it is needed."""
    import dask

    X = scaled_rows(data.X, [step for _, step in pipeline.steps[:-1]])
    predicted = pipeline.steps[-1][1].predict(X)
    blocks = client.compute([dask.delayed(tuple)([labels, truth]) for labels, truth
                             in zip(predicted.to_delayed(), data.y.to_delayed(), strict=True)])
    for block in blocks:
        yield block.result()


def label_counts(y):
    """``(labels, counts)`` of the Dask labels ``y`` (one pass over them on the workers)."""
    import dask

    parts = dask.compute(*[dask.delayed(np.unique)(block, return_counts=True)
                           for block in y.to_delayed()])
    labels = np.unique(np.concatenate([part[0] for part in parts]))
    counts = np.zeros(labels.shape[0], np.int64)
    for part_labels, part_counts in parts:
        counts[np.searchsorted(labels, part_labels)] += part_counts
    return labels, counts


def majority_and_minority(training_counts):
    """The most and the least frequent label (the larger on a tie) of ``(labels, counts)``,
    as :class:`snacks_core.model.metrics.TrainingLabels` finds them in the labels."""
    labels, counts = training_counts
    return (labels[int(np.argmax(counts))],
            labels[len(counts) - 1 - int(np.argmin(counts[::-1]))])


def _confusion(predicted, truth, classes):
    """Run on a worker: rows of a block by (true class, predicted class), a last row for
    true labels that are none of ``classes``."""
    size = classes.shape[0]
    known = np.isin(truth, classes)
    true_kind = np.where(known, np.searchsorted(classes, np.where(known, truth, classes[0])),
                         size)
    return np.bincount(true_kind * size + np.searchsorted(classes, predicted),
                       minlength=(size + 1) * size).reshape(size + 1, size)


def cluster_scores(model, steps, data: ClusterData, training_counts) -> dict:
    """The test numbers of :func:`snacks_core.model.metrics.classification_scores` for the
    fitted ``model`` (after the preprocessing ``steps``) on the rows of ``data``, computed
    on the workers from each block's counts of (true, predicted) classes: ``test_error``,
    ``majority_error``, ``f1`` and ``f1_label`` (the minority training class of two, None
    for the macro average), with ``training_counts`` (``label_counts`` of the training
    labels) deciding the majority and minority classes as the training labels do."""
    import dask

    classes = model.classes_
    predicted = model.predict(scaled_rows(data.X, steps))
    confusion = sum(dask.compute(*[
        dask.delayed(_confusion)(labels, truth, classes)
        for labels, truth in zip(predicted.to_delayed(), data.y.to_delayed(), strict=True)]))
    rows = int(confusion.sum())
    majority, minority = majority_and_minority(training_counts)
    label = minority if classes.shape[0] == 2 else None
    hits = np.diag(confusion[:-1])
    # F1 of a class: 2 TP / (2 TP + FP + FN), 0 where it has no true nor predicted row.
    denominators = confusion.sum(axis=0) + confusion[:-1].sum(axis=1)
    per_class = np.divide(2.0 * hits, denominators, out=np.zeros(hits.shape[0]),
                          where=denominators > 0)
    majority_rows = (confusion[int(np.searchsorted(classes, majority))].sum()
                     if majority in classes else 0)
    return {
        "test_error": 1.0 - hits.sum() / max(rows, 1),
        "majority_error": 1.0 - majority_rows / max(rows, 1),
        "f1": float(per_class[int(np.searchsorted(classes, label))] if label is not None
                    else per_class.mean()),
        "f1_label": label,
        "rows": rows,
    }
