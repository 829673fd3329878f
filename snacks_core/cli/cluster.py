"""``snacks fit --scheduler`` and ``snacks predict --scheduler``: the files read by the workers.

DATA is a glob (``'data/part-*.csv'``: quoted, so that the shell leaves it to us) of files
the workers can read at the same paths (a shared or copied file system).  Each file is read
by a worker with :func:`snacks_core.datasets.load_file` and becomes a partition; LIBSVM
files are read zero-based first, so that one index base is decided for all of them (one-based
unless one holds an index 0, as :func:`snacks_core.datasets.load_files` decides it) and one
width, the widest file's, before the rows are cut to it.  The rows never come to this
machine: the fit and the predictions run on the cluster (:mod:`snacks_core.distributed`);
what comes back is the model, a few numbers, and for ``predict`` one label per row.
"""

from __future__ import annotations

import glob
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from snacks_core import datasets
from snacks_core.cli.data import label_column_value
from snacks_core.cli.model import make_estimator, resolve_regularisation
from snacks_core.cli.output import check_writable, label_texts
from snacks_core.cli.progress import Progress
from snacks_core.distributed import current_client
from snacks_core.persistence import load_model, model_to_npz


class ClusterData(NamedTuple):
    """The rows of DATA's files on the cluster: X (dense) and y as Dask arrays, a partition
    per file, and the LIBSVM index base (None for other formats)."""

    X: object
    y: object
    paths: list
    index_base: int | None


def _read_file(path, label_column, index_base):
    """Run on a worker: ``(X, y)`` of one file; LIBSVM with ``index_base`` (0 when it is to be
    decided: the column of index 0 is then kept)."""
    data = datasets.load_file(path, label_column=label_column, purpose="predict",
                              index_base=0 if index_base is None else index_base)
    return data.X, data.y


def _scan(part):
    """Run on a worker: ``(rows, width, whether a sparse file holds an index 0)``."""
    X, _ = part
    holds_zero = bool(sp.issparse(X) and X.nnz and (sp.csr_matrix(X).indices == 0).any())
    return X.shape[0], X.shape[1], holds_zero


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


def read_on_cluster(client, pattern, label_column, index_base, n_features=None) -> ClusterData:
    """The files of the glob ``pattern`` read by the workers, one partition each, with one
    index base (``index_base``, or decided over all LIBSVM files) and one width
    (``n_features``, or the widest file's)."""
    import dask
    import dask.array as da

    paths = sorted(glob.glob(pattern))
    if not paths:
        raise ValueError(f"DATA {pattern!r} matches no file on this machine; with --scheduler, "
                         "DATA is a glob of files the workers read at the same paths, e.g. "
                         "'data/part-*.csv' (quoted).")
    kinds = {datasets.file_kind(path) for path in paths}
    libsvm = kinds == {"libsvm"}
    if len(kinds) > 1:
        raise ValueError(f"DATA {pattern!r} mixes formats ({', '.join(sorted(kinds))}): "
                         "give files of one format.")
    label_column = label_column_value(label_column)
    parts = client.persist([dask.delayed(_read_file)(path, label_column, index_base)
                            for path in paths])
    scans = dask.compute(*[dask.delayed(_scan)(part) for part in parts])
    base, start = None, 0
    if libsvm and index_base is not None:
        base = index_base
    elif libsvm:
        # Read zero-based: a one-based run drops its unused first column.
        base = start = 0 if any(holds_zero for _, _, holds_zero in scans) else 1
    widths = {width - start for _, width, _ in scans}
    width = n_features if n_features is not None else max(widths)
    wider = [path for path, (_, columns, _) in zip(paths, scans, strict=True)
             if libsvm and columns - start > width]
    if wider:
        # As a file read on this machine is refused: never cut to the model's width.
        raise ValueError(f"{wider[0]}: a feature index is beyond the {width:,} features "
                         f"expected (read {'one' if base == 1 else 'zero'}-based: indices "
                         f"{base} to {width - 1 + base}).")
    if not libsvm and widths != {width}:
        raise ValueError(f"The files of {pattern!r} have {sorted(widths)} feature columns; "
                         f"they need one width ({width}: the model's, or the first file's).")
    X = da.concatenate([da.from_delayed(dask.delayed(_dense_rows)(part, start, width),
                                        (rows, width), np.float64)
                        for part, (rows, _, _) in zip(parts, scans, strict=True)])
    y = da.concatenate([da.from_delayed(dask.delayed(_labels)(part), (rows,), object)
                        for part, (rows, _, _) in zip(parts, scans, strict=True)])
    return ClusterData(X, y, paths, base)


def _standard_scaler(X):
    """A StandardScaler fitted from the column means and deviations computed on the
    cluster."""
    import dask
    from sklearn.preprocessing import StandardScaler

    mean, var = dask.compute(X.mean(axis=0), X.var(axis=0))
    scaler = StandardScaler()
    scaler.mean_, scaler.var_ = mean, var
    scaler.scale_ = np.where(var > 0, np.sqrt(var), 1.0)
    scaler.n_features_in_, scaler.n_samples_seen_ = X.shape[1], X.shape[0]
    return scaler


def _classes_for_weights(args, y):
    """The classes of the labels ``y`` (one pass over them on the cluster) when
    --class-weight names classes; None otherwise, where nothing reads them."""
    if not isinstance(args.class_weight, dict):
        return None
    import dask

    return np.unique(np.concatenate(dask.compute(*[
        dask.delayed(np.unique)(block) for block in y.to_delayed()])))


def run_fit(args) -> int:
    """``snacks fit DATA --scheduler ADDRESS``: train on the cluster, print the model's
    training numbers and write ``--model``."""
    if args.test or args.scaling == "minmax":
        raise ValueError("With --scheduler the model trains on every row of DATA, standard "
                         "scaled or not (--scaling standard, auto or none): score a test file "
                         "with 'snacks predict MODEL TEST --scheduler ...' afterwards.")
    if args.model:
        check_writable(args.model)
    progress = Progress.for_args(args)
    client, _ = current_client(args.scheduler, "snacks fit --scheduler")
    with client:
        data = read_on_cluster(client, args.data, args.label_column, args.index_base)
        X, y = data.X, data.y
        scaler = None if args.scaling == "none" else _standard_scaler(X)
        if scaler is not None:
            X = (X - scaler.mean_) / scaler.scale_
        n, d = X.shape
        resolve_regularisation(args, n, d)
        model = make_estimator(args, args.solver, _classes_for_weights(args, y))
        model.fit(X, y, progress=progress)
        if progress is not None:
            progress.end()
        train_error = model.train_error_
        if train_error is None:  # a compact embedding: the rows are scored once more
            train_error = float((model.predict(X) != y).mean().compute())
    print(f"{args.data}: {n:,} training rows in {len(data.paths)} files, {d} features, on "
          f"{args.scheduler}")
    method = ("Snacks steps averaged across the workers" if args.solver == "snacks"
              else "CoCoA+ rounds")
    print(f"{args.solver} ({method} on the cluster), {args.kernel} kernel (γ = "
          f"{model.embedding_.gamma_:.4g}), m = {model.embedding_.n_components_}, λ = "
          f"{model.lam_:g} (C = {model.C_:.4g})")
    for name, value in (("train error", train_error),
                        ("objective", float(model.history_["objective"][-1])),
                        ("certified gap", float(model.history_["gap"][-1])),
                        ("embedding time (s)", model.embedding_time_),
                        ("training time (s)", model.training_time_),
                        ("rounds", model.n_iter_), ("stopped by", model.stop_reasons_[0])):
        print(f"  {name:<20} {value:.6g}" if isinstance(value, float) else
              f"  {name:<20} {value}")
    if args.model:
        Path(args.model).write_bytes(model_to_npz(
            model, () if scaler is None else (scaler,), index_base=data.index_base))
        print(f"model: {args.model}")
    return 0


def run_predict(args) -> int:
    """``snacks predict MODEL DATA --scheduler ADDRESS``: predict on the cluster; the labels
    come back block by block (one per row) and are written in DATA's order; the error is
    printed when every label of DATA is one of the model's classes."""
    if args.decision_values:
        raise ValueError("--decision-values is not offered with --scheduler: write the "
                         "labels, or predict a file on this machine.")
    if args.out:
        check_writable(args.out)
    saved = load_model(Path(args.model).read_bytes())
    classes = saved.pipeline.classes_
    texts = dict(zip(classes.tolist(), label_texts(classes), strict=True))
    index_base = args.index_base if args.index_base is not None else saved.index_base
    out = open(args.out, "w") if args.out else sys.stdout
    rows = errors = 0
    scored = True
    try:
        client, _ = current_client(args.scheduler, "snacks predict --scheduler")
        with client:
            import dask

            data = read_on_cluster(client, args.data, args.label_column, index_base,
                                   n_features=saved.n_features)
            X = data.X
            for _, step in saved.pipeline.steps[:-1]:
                X = X.map_blocks(step.transform, dtype=np.float64)
            predicted = saved.pipeline.steps[-1][1].predict(X)
            # Every block is computed at once, on all the workers; the labels come back and
            # are written in DATA's order.
            blocks = client.compute([dask.delayed(tuple)([labels, truth]) for labels, truth
                                     in zip(predicted.to_delayed(), data.y.to_delayed(),
                                            strict=True)])
            for block in blocks:
                labels, truth = block.result()
                out.write("".join(f"{texts[label]}\n" for label in labels.tolist()))
                rows += labels.shape[0]
                scored = scored and bool(np.isin(truth, classes).all())
                errors += int(np.sum(labels != truth)) if scored else 0
    finally:
        if out is not sys.stdout:
            out.close()
    report = sys.stdout if args.out else sys.stderr
    summary = (f"error {errors / max(rows, 1):.6g}" if scored else
               "no error: DATA's labels are not all among the model's classes")
    report.write(f"{args.data}: {rows:,} rows predicted on {args.scheduler}; {summary}\n")
    return 0
