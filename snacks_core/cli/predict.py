"""``snacks predict``: the rows of a file through a saved model, block by block.

A LIBSVM or CSV file is read in chunks of whole lines (:meth:`TextStream.chunks`), every
chunk with the model's number of features and index base (a CSV chunk after the first with
the file's header line again), predicted and written before the next is read, so that a
file of any size streams through.  Parquet and .npy files are read whole.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from snacks_core import datasets
from snacks_core.cli.data import label_column_value, read_files
from snacks_core.cli.model import f1_name
from snacks_core.cli.output import check_writable, label_texts, replaced_when_complete
from snacks_core.cli.progress import Progress
from snacks_core.core.memory import check_fits_in_memory
from snacks_core.datasets import streams
from snacks_core.datasets.remote import local_copy, url_scheme
from snacks_core.datasets.streams import TextStream, check_regular_file
from snacks_core.model.engine import labels_from_scores
from snacks_core.model.metrics import error_rate, f1, minority_class
from snacks_core.persistence import load_model


def run(args) -> int:
    """Write the predictions (or decision values); print the error and F1 when the file's
    labels are the model's classes."""
    if getattr(args, "scheduler", None):
        from snacks_core.cli import cluster  # Dask, only for a cluster

        return cluster.run_predict(args)
    if args.out:
        check_writable(args.out, [("MODEL", args.model), ("DATA", args.data)])
    if url_scheme(args.data) is not None:
        # Read from a local copy, as a file on disk (snacks_core.datasets.remote), once
        # --out is known to be writable.
        with local_copy(args.data) as path:
            return run(argparse.Namespace(**{**vars(args), "data": path}))
    check_regular_file(args.data, "DATA file")
    saved = _read_model(args.model)
    classes = saved.pipeline.classes_
    texts = dict(zip(classes.tolist(), label_texts(classes), strict=True))
    index_base = (args.index_base if args.index_base is not None else
                  saved.index_base if saved.index_base is not None else "auto")
    progress = Progress.for_args(args)
    score = _Score(classes)
    dense = _centres(saved.pipeline)
    # The output becomes --out only when every row is written: an error or Ctrl-C leaves
    # the old file as it was.
    with (replaced_when_complete(args.out) if args.out
          else contextlib.nullcontext(sys.stdout)) as out:
        if args.decision_values:
            # One column per class (decision_function's scores: a one-vs-one model's votes
            # and confidences); for two classes, the positive class's.
            columns = list(texts.values())[1:] if len(classes) == 2 else texts.values()
            out.write("labels " + " ".join(columns) + "\n")
        for X, y in _blocks(args, saved.n_features, index_base, progress):
            if dense and sp.issparse(X):
                X = _densified(X, args)
            scores = saved.pipeline.decision_function(X)
            predicted = labels_from_scores(scores, classes)
            if args.decision_values:
                np.savetxt(out, scores.reshape(X.shape[0], -1), fmt="%.10g")
            else:
                out.write("".join(f"{texts[label]}\n" for label in predicted.tolist()))
            score.add(y, predicted)
            if progress is not None:
                progress(f"predicting {Path(args.data).name}", score.rows, None)
        if not score.rows:
            raise ValueError(f"{args.data} has no data lines: nothing to predict.")
    if progress is not None:
        progress.end()
    # The numbers never mix with predictions written to standard output.
    report = sys.stdout if args.out else sys.stderr
    report.write(score.summary(Path(args.data).name, saved.f1_label) + "\n")
    return 0


def _read_model(path):
    """The saved model of MODEL, a regular file; errors name it."""
    check_regular_file(path, "model file")
    try:
        return load_model(Path(path).read_bytes())
    except OSError as exc:
        raise ValueError(f"cannot read the model {path}: {exc.strerror or exc}.") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _centres(pipeline) -> bool:
    """Whether the model's scaling subtracts an offset (standard or minmax scaling, learnt on
    dense rows): sparse rows must then be made dense first."""
    for _, step in pipeline.steps[:-1]:
        kind = getattr(step, "kind", None)
        if (kind == "minmax" or (kind == "standard" and np.any(step.offset))
                or getattr(step, "with_mean", False)):
            return True
    return False


def _densified(X, args):
    """A block of sparse rows as dense ones, for a model whose scaling centres the data."""
    check_fits_in_memory(
        8 * X.shape[0] * X.shape[1],
        f"Making the rows of {args.data} dense for the model {args.model}, whose scaling "
        "centres the data (it was trained on dense rows, e.g. a CSV file)",
        "Train a model on the sparse file itself (--scaling none or maxabs keeps rows sparse).")
    return X.toarray()


def _blocks(args, n_features, index_base, progress):
    """``(X, y)`` blocks of DATA's rows, read as the training data was (y None without
    labels)."""
    path = Path(args.data)
    kind = datasets.file_kind(path)
    if kind not in ("libsvm", "csv"):
        data = read_files([path], args.label_column, progress, n_features=n_features,
                          index_base=index_base, purpose="predict")[0]
        yield data.X, data.y
        return
    if kind == "libsvm" and args.label_column is not None:
        raise ValueError(f"{path.name} is read as a LIBSVM file (the label is the first field "
                         "of each line): --label-column only applies to CSV, Parquet and "
                         ".npy files.")
    has_header = kind == "csv" and _csv_has_header(path)
    header = b""
    # The module's limits, read now (a test lowers the longest line allowed).
    with TextStream(path, streams.LOCAL_FILE_LIMITS) as text:
        for chunk, first_line in text.chunks():
            if first_line == 1:
                if has_header:
                    header = chunk[:chunk.find(b"\n") + 1]
                # The chunks are decompressed text: a name ending in .gz would have the
                # reader expect gzip data.
                name = (path.name if text.compression is None
                        else f"{path.name} (its text)")
                data = _read_block(kind, chunk, name, args, n_features, index_base)
            else:
                # A later block of a CSV file gets the header again, so that it is read as
                # the first (its line numbers count the header as line 1).
                name = (f"{path.name} (its header, then the lines from {first_line:,})"
                        if header else f"{path.name} (the lines from {first_line:,})")
                data = _read_block(kind, header + chunk, name, args, n_features, index_base)
            # A model that does not know its base: the first block's decides for the rest
            # (a later index 0 is then an error that names the base).
            if data.index_base is not None:
                index_base = data.index_base
            yield data.X, data.y


def _read_block(kind, text, name, args, n_features, index_base):
    if kind == "libsvm":
        return datasets.load_libsvm(text, n_features=n_features, index_base=index_base,
                                    purpose="predict", name=name)
    return datasets.load_csv(text, label_column=label_column_value(args.label_column),
                             n_features=n_features, purpose="predict", name=name)


def _csv_has_header(path) -> bool:
    """Whether the first line of a CSV file is a header (its columns are named)."""
    columns = datasets.csv_columns(path)
    return columns != [f"column {j + 1}" for j in range(len(columns))]


class _Score:
    """The predictions and the file's labels, block by block, for one error and F1 at the
    end; labels outside the model's classes (placeholders, or classes it never saw) turn the
    scoring off and are named in the summary."""

    def __init__(self, classes):
        self.classes, self.rows = classes, 0
        self.true, self.predicted, self.unseen, self.unlabelled = [], [], set(), False

    def add(self, y, predicted):
        self.rows += predicted.shape[0]
        if y is None:
            self.unlabelled = True
            return
        unknown = ~np.isin(y, self.classes)
        if unknown.any():
            self.unseen.update(np.unique(y[unknown]).tolist()[:5])
        if not (self.unseen or self.unlabelled):
            self.true.append(np.asarray(y))
            self.predicted.append(predicted)

    def summary(self, name, f1_label):
        """One line: the error and F1 (of ``f1_label``, the class the fit reported, else the
        macro average), or why there are none."""
        rows = f"{name}: {self.rows:,} rows predicted"
        if not self.rows:
            return rows
        if self.unlabelled:
            return f"{rows} (no labels, so no error)"
        if self.unseen:
            unseen = ", ".join(map(str, sorted(self.unseen, key=str)[:5]))
            known = ", ".join(map(str, self.classes.tolist()))
            return (f"{rows}; no error or F1: its labels {unseen} are not among the model's "
                    f"classes ({known}): placeholder labels, or classes the model never saw")
        true, predicted = np.concatenate(self.true), np.concatenate(self.predicted)
        label = None
        if len(self.classes) == 2:
            # A model saved without its F1 class (from Python): fit's rule, the minority
            # class, applied to these rows.
            label = f1_label if f1_label is not None else minority_class(true)
        return (f"{rows}; error {error_rate(true, predicted):.6g}, "
                f"{f1_name(label)} {f1(true, predicted, label, self.classes):.6g}")
