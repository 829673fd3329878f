"""``snacks fit --scheduler`` and ``snacks predict --scheduler``: the files read by the workers.

DATA is a glob (``'data/part-*.csv'``: quoted, so that the shell leaves it to us) of files
the workers can read at the same paths (a shared or copied file system); how they are read,
scaled and predicted there is :mod:`snacks_core.distributed.files`.  The rows never come to
this machine: the fit and the predictions run on the cluster; what comes back is the model,
a few numbers, and for ``predict`` one label per row.  This module parses and prints.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import numpy as np

from snacks_core.cli.data import label_column_value
from snacks_core.cli.model import (
    class_split,
    f1_name,
    growth_report,
    make_estimator,
    resolve_regularisation,
)
from snacks_core.cli.output import (
    check_writable,
    label_texts,
    replaced_when_complete,
    write_bytes_when_complete,
)
from snacks_core.cli.progress import Progress
from snacks_core.distributed import current_client
from snacks_core.distributed.files import (
    cluster_scores,
    fit_scaling,
    label_counts,
    majority_and_minority,
    predicted_blocks,
    read_on_cluster,
    scaled_rows,
)
from snacks_core.model.defaults import scaling_reason
from snacks_core.persistence import load_model, model_to_npz


def run_fit(args) -> int:
    """``snacks fit DATA --scheduler ADDRESS``: train on the cluster on every row of DATA,
    score ``--test`` (files read by the workers too) there, print the numbers a local fit
    prints and write ``--model``."""
    if args.model:
        check_writable(args.model, [("DATA", args.data), ("--test", args.test)])
    progress = Progress.for_args(args)
    client, _ = current_client(args.scheduler, "snacks fit --scheduler")
    with client:
        data = read_on_cluster(client, args.data, label_column_value(args.label_column),
                               args.index_base)
        scaler = fit_scaling(data, args.scaling)
        scaling = () if scaler is None else (scaler,)
        X, y = scaled_rows(data.X, scaling), data.y
        n, d = X.shape
        # One pass over the labels: their classes (the default m depends on their number)
        # and counts (the majority error and the F1 class below).
        training_counts = label_counts(y)
        classes = training_counts[0]
        resolve_regularisation(args, n, d, classes.shape[0])
        model = make_estimator(args, args.solver, classes)
        model.fit(X, y, progress=progress)
        if progress is not None:
            progress.end()
        train_error = model.train_error_
        if train_error is None:  # a compact embedding: the rows are scored once more
            train_error = float((model.predict(X) != y).mean().compute())
        scores = None
        if args.test:
            test = read_on_cluster(client, args.test, label_column_value(args.label_column),
                                   data.index_base, n_features=d)
            scores = cluster_scores(model, scaling, test, training_counts)
    tested = "" if scores is None else f", {scores['rows']:,} test rows"
    chosen = (args.scaling if args.scaling != "auto"
              else "none" if scaler is None else "standard")
    reason = "sparse rows" if data.sparse else scaling_reason(chosen, None)
    print(f"{args.data}: {n:,} training rows in {len(data.paths)} files{tested}, {d} "
          f"features, scaling {chosen}"
          + (f" (chosen by auto: {reason})" if args.scaling == "auto" else "")
          + f", on {args.scheduler}")
    method = ("Snacks steps averaged across the workers" if args.solver == "snacks"
              else "CoCoA+ rounds")
    print(f"{args.solver} ({method} on the cluster), {args.kernel} kernel (γ = "
          f"{model.embedding_.gamma_:.4g}), m = {model.embedding_.n_components_}, λ = "
          f"{model.lam_:g} (C = {model.C_:.4g}){class_split(model)}")
    grown = growth_report(model)
    if grown is not None:
        print(f"  {grown}")
    measured = [("train error", train_error)]
    if scores is not None:
        measured += [("test error", scores["test_error"]),
                     ("majority error", scores["majority_error"]),
                     (f1_name(scores["f1_label"]), scores["f1"])]
    for name, value in (*measured,
                        ("objective", float(model.history_["objective"][-1])),
                        ("certified gap", _certified_gap(model)),
                        ("embedding time (s)", model.embedding_time_),
                        ("training time (s)", model.training_time_),
                        ("rounds", model.n_iter_), ("stopped by", model.stop_reasons_[0])):
        print(f"  {name:<20} {value:.6g}" if isinstance(value, float) else
              f"  {name:<20} {value}")
    if args.model:
        # The F1 class a local fit records: the minority training class of two.
        minority = majority_and_minority(training_counts)[1]
        write_bytes_when_complete(args.model, model_to_npz(
            model, scaling, index_base=data.index_base,
            f1_label=minority if len(model.classes_) == 2 else None))
        print(f"model: {args.model}")
    return 0


def _certified_gap(model):
    """The last certified gap F − D (a bound on F − F*), or why there is none: a bound of
    F or more says nothing (F* ≥ 0), as when early stopping stops before the dual catches
    up."""
    gap = float(model.history_["gap"][-1])
    objective = float(model.history_["objective"][-1])
    if np.isfinite(gap) and gap < objective:
        return gap
    return (f"none (F − D = {gap:.4g} is not below F = {objective:.4g}: the fit stopped "
            f"({model.stop_reasons_[0]}) before its dual bound said anything)")


def run_predict(args) -> int:
    """``snacks predict MODEL DATA --scheduler ADDRESS``: predict on the cluster; the labels
    come back block by block (one per row) and are written in DATA's order; the error is
    printed when every label of DATA is one of the model's classes."""
    if args.decision_values:
        raise ValueError("--decision-values is not offered with --scheduler: write the "
                         "labels, or predict a file on this machine.")
    if args.out:
        check_writable(args.out, [("MODEL", args.model), ("DATA", args.data)])
    saved = load_model(Path(args.model).read_bytes())
    classes = saved.pipeline.classes_
    texts = dict(zip(classes.tolist(), label_texts(classes), strict=True))
    index_base = args.index_base if args.index_base is not None else saved.index_base
    rows = errors = 0
    scored = True
    with (replaced_when_complete(args.out) if args.out else contextlib.nullcontext(sys.stdout)
          as out):
        client, _ = current_client(args.scheduler, "snacks predict --scheduler")
        with client:
            data = read_on_cluster(client, args.data, label_column_value(args.label_column),
                                   index_base, n_features=saved.n_features)
            # The labels come back and are written in DATA's order.
            for labels, truth in predicted_blocks(client, saved.pipeline, data):
                out.write("".join(f"{texts[label]}\n" for label in labels.tolist()))
                rows += labels.shape[0]
                scored = scored and bool(np.isin(truth, classes).all())
                errors += int(np.sum(labels != truth)) if scored else 0
    report = sys.stdout if args.out else sys.stderr
    summary = (f"error {errors / max(rows, 1):.6g}" if scored else
               "no error: DATA's labels are not all among the model's classes")
    report.write(f"{args.data}: {rows:,} rows predicted on {args.scheduler}; {summary}\n")
    return 0
