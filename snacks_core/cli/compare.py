"""``snacks compare``: every solver on one setting, as in the paper's Tables III–VII."""

from __future__ import annotations

import pandas as pd

from snacks_core.cli.data import training_data, training_split
from snacks_core.cli.fit import OBJECTIVE_KERNEL
from snacks_core.cli.model import fit_and_measure, resolve_regularisation
from snacks_core.cli.output import check_writable, replaced_when_complete
from snacks_core.cli.parser import EXACT_MAX_ROWS, flatten, refuse_cluster
from snacks_core.cli.progress import Progress
from snacks_core.solvers import SOLVERS
from snacks_core.solvers.objective import lam_to_C


def run(args) -> int:
    """Train every solver on one setting and print the table."""
    refuse_cluster(args)
    progress = Progress.for_args(args)
    split = training_split(args, training_data(args, progress))
    n_train = split.X_train.shape[0]
    resolve_regularisation(args, n_train, split.n_features, split.n_classes)
    solvers = flatten(args.solvers) if args.solvers else [
        s for s in SOLVERS if s not in ("libsvm",) or n_train <= EXACT_MAX_ROWS]
    unknown = [s for s in solvers if s not in SOLVERS]
    if unknown:
        raise ValueError(f"unknown solver(s) {', '.join(unknown)}; choose from "
                         f"{', '.join(SOLVERS)}.")
    if "libsvm" not in solvers and not args.solvers:
        print(f"(libsvm skipped: {n_train} training rows; name it in --solvers to run the "
              "exact kernel SVM anyway)")
    if args.out:
        check_writable(args.out, [("DATA", args.data), ("--test", args.test)])
    rows = []
    for solver in solvers:
        _, metrics, _ = fit_and_measure(args, solver, split, progress)
        rows.append({"solver": solver,
                     "time (s)": metrics["embedding time (s)"] + metrics["training time (s)"],
                     **metrics})
    table = pd.DataFrame(rows)
    print(f"{split.name}, m = {args.m}, λ = {args.lam:g} (C = {lam_to_C(args.lam, n_train):.4g}), "
          f"{n_train} training rows")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    exact = [s for s in solvers if s in OBJECTIVE_KERNEL]
    print(f"objective: F = (1/n) Σ max(0, 1 − y_i f(x_i)) + λ‖f‖² of the returned model, on "
          f"the Nyström embedding (m = {args.m})"
          + "".join(f"; for {s} on {OBJECTIVE_KERNEL[s]}" for s in exact) + ".")
    if args.out:
        with replaced_when_complete(args.out) as out:
            table.to_csv(out, index=False)
    return 0
