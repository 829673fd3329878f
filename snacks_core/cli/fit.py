"""``snacks fit``: train one model, print its metrics, save it for ``snacks predict``."""

from __future__ import annotations

import sys

from snacks_core.cli.data import training_data, training_split
from snacks_core.cli.first_run import warm_up
from snacks_core.cli.model import (
    C_report,
    class_split,
    f1_name,
    fit_and_measure,
    grown_m,
    growth_report,
    resolve_regularisation,
)
from snacks_core.cli.output import check_writable, write_bytes_when_complete
from snacks_core.cli.progress import CompileWatch, Progress
from snacks_core.datasets.scaling import resolve_scaling
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model.defaults import scaling_reason
from snacks_core.persistence import model_to_npz

# The kernel on which each solver's objective F is measured.
OBJECTIVE_KERNEL = {
    "libsvm": "the exact kernel",
    "admm": "ADMM's kernel approximation K̃",
}


def run(args) -> int:
    """Train, print the metrics, and write ``--model``."""
    if getattr(args, "scheduler", None):
        from snacks_core.cli import cluster  # Dask, only for a cluster

        return cluster.run_fit(args)
    if args.model:
        check_writable(args.model, [("DATA", args.data), ("--test", args.test)])
    progress = Progress.for_args(args)
    dataset = training_data(args, progress)
    # Resolved once: 'auto' on dense rows reads every column's range.
    scaling = resolve_scaling(args.scaling, dataset.X)
    split = training_split(args, dataset, scaling)
    n_train = split.X_train.shape[0]
    resolve_regularisation(args, n_train, split.n_features, split.n_classes)
    with CompileWatch(sys.stderr) as compiling:
        # On a few rows first: the times below are the fit's, not numba's loading or
        # compiling (once after installing).
        warm_up(args, split)
        before = compiling.seconds
        model, table, metrics = fit_and_measure(args, args.solver, split, progress)
        compiled_in_fit = compiling.seconds - before
    print(f"{split.name}: {n_train} training rows, {split.X_test.shape[0]} test rows, "
          f"{split.n_features} features, scaling {scaling}"
          + (f" (chosen by auto: {scaling_reason(scaling, dataset.X)})" if args.scaling == "auto"
             else ""))
    # The γ the fit resolved (resolving 'scale' again would pass over the data once more).
    gamma = getattr(model.embedding_, "gamma_", None) or resolve_gamma(args.gamma,
                                                                      split.X_train)
    grown = growth_report(model)
    m = landmarks_held(model, grown_m(model, args.m))
    print(f"{args.solver}, {args.kernel} kernel (γ = {gamma:.4g}), m = {m}, "
          f"λ = {model.lam_:g} (C = {model.C_:.4g}){class_split(model)}")
    for report in (grown, C_report(model)):
        if report is not None:
            print(f"  {report}")
    for name, value in table.items():
        if name == "F1 of":
            continue
        name = f1_name(metrics["f1_label"]) if name == "F1" else name
        print(f"  {name:<20} {value:.6g}" if isinstance(value, float) else
              f"  {name:<20} {value}")
    if compiled_in_fit >= 0.05:
        # Code only a larger fit runs (parallel passes, early stopping) compiled in it.
        print(f"  (the times above include {compiled_in_fit:.1f} s of compiling, once after "
              "installing)")
    print(f"  (objective: F of the returned model on "
          f"{OBJECTIVE_KERNEL.get(args.solver, f'the Nyström embedding (m = {m})')})")
    if args.model:
        write_bytes_when_complete(args.model, model_to_npz(
            model, split.preprocessing, index_base=dataset.index_base,
            f1_label=metrics["f1_label"]))
        print(f"model: {args.model}")
    return 0


def landmarks_held(model, asked):
    """The landmarks the model holds (what its file saves), with the m asked for when they
    differ (m is clipped to the training rows; duplicate rows are dropped)."""
    landmarks = getattr(getattr(model, "embedding_", None), "landmarks_", None)
    held = asked if landmarks is None else landmarks.shape[0]
    return f"{held}" if held == asked else f"{held} ({asked} asked)"
