"""``snacks heatmap``: test error over an (m, λ) or (γ, λ) grid, written as cells finish."""

from __future__ import annotations

import csv
import os
import signal
import sys

from snacks_core.cli.data import training_data, training_split
from snacks_core.cli.model import model_settings
from snacks_core.cli.output import check_writable, replaced_when_complete
from snacks_core.cli.parser import STOPPED, flatten
from snacks_core.cli.progress import ProgressBar
from snacks_core.model.defaults import grid_lam_values, grid_m_values
from snacks_core.model.estimator import estimator_from_settings
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import GRID_COLUMNS, GridSchedule, robustness_grid, summarize_grid
from snacks_core.solvers.objective import C_to_lam


def run(args) -> int:
    """Fill the grid, write its table (and plot), print the best cell."""
    m_values = flatten(args.m) if args.m else None
    gammas, seeds = flatten(args.gamma or [["scale"]]), flatten(args.seeds)
    if args.plot and len(set(m_values or (0, 1))) > 1 and len(set(gammas)) > 1:
        raise ValueError("--plot draws an (m, λ) or a (γ, λ) heatmap: give a single m or a "
                         "single γ (the CSV can hold any grid).")
    if args.scheduler and args.backend != "dask":
        raise ValueError("--scheduler needs --backend dask.")
    # The output paths are checked (and the table started) before any work.
    inputs = [("DATA", args.data), ("--test", args.test)]
    out = _RowWriter(args.out, inputs)
    if args.plot:
        check_writable(args.plot, inputs)
    try:
        return _run_heatmap(args, out, m_values, gammas, seeds)
    finally:
        out.close()
        if out.kept_partial():
            sys.stderr.write(f"snacks: the cells finished before the end are in {out.partial}; "
                             f"{args.out} is as it was.\n")


class _RowWriter:
    """The heatmap table on disk: from the first finished cell on, each cell is appended and
    flushed as it comes to ``PATH.partial`` beside the target (a crash or a second Ctrl-C
    keeps them there); at the end the whole sorted table takes the target's place.  Until
    then the target keeps its old content."""

    def __init__(self, path, inputs):
        check_writable(path, inputs)
        self.path, self._file, self._writer = path, None, None
        self.partial = f"{path}.partial"

    def append(self, row):
        if self._file is None:
            self._file = open(self.partial, "w", newline="")
            self._writer = csv.DictWriter(self._file, fieldnames=list(GRID_COLUMNS))
            self._writer.writeheader()
        self._writer.writerow(row)
        self._file.flush()

    def replace(self, table):
        self.close()
        with replaced_when_complete(self.path) as out:
            table.to_csv(out, index=False)
        if self._file is not None:
            os.unlink(self.partial)

    def kept_partial(self) -> bool:
        """Whether finished cells wait in :attr:`partial` (the table never replaced it)."""
        return os.path.exists(self.partial)

    def close(self):
        if self._file is not None and not self._file.closed:
            self._file.close()


def _run_heatmap(args, out, m_values, gammas, seeds):
    split = training_split(args, training_data(args))
    n_train = split.X_train.shape[0]
    # Without --m or --lam/--C, the axes are the app's: around the data-aware defaults.
    if m_values is None:
        m_values = grid_m_values(n_train, split.n_features, n_classes=split.n_classes)
    if args.lam:
        lams = flatten(args.lam)
    elif args.C:
        lams = [C_to_lam(C, n_train) for C in flatten(args.C)]
    else:
        lams = grid_lam_values(n_train)
    client = None
    if args.backend == "dask":
        client = args.scheduler or _local_dask_client()
    stop = {"requested": False}

    def request_stop(signum, frame):
        if stop["requested"]:
            raise KeyboardInterrupt
        stop["requested"] = True
        sys.stderr.write("\nsnacks: stopping after the columns in progress "
                         "(Ctrl-C again to abort)\n")

    previous = signal.signal(signal.SIGINT, request_stop)
    try:
        table = robustness_grid(
            split.X_train, split.y_train, split.X_test, split.y_test, m=m_values, lam=lams,
            gamma=gammas, seeds=seeds,
            estimator=estimator_from_settings({**model_settings(args), "solver": args.solver}),
            schedule=GridSchedule(warm_start=not args.cold),
            resources=Resources(dtype=args.dtype, n_jobs=args.n_jobs, backend=args.backend,
                                client=client, progress=ProgressBar(sys.stderr, out.append),
                                should_stop=lambda: stop["requested"]))
    finally:
        signal.signal(signal.SIGINT, previous)
        if client is not None and not isinstance(client, str):
            client.close()
    out.replace(table)
    plan = table.attrs["plan"]
    print(f"{len(table)} of {plan['n_cells']} cells in {table.attrs['wall_time']:.1f} s "
          f"({plan['n_jobs']} jobs, {plan['dtype']}): {args.out}")
    status = 0
    if table.attrs.get("stopped") and len(table) < plan["n_cells"]:
        sys.stderr.write(f"snacks heatmap: stopped: {len(table)} of {plan['n_cells']} cells "
                         f"written to {args.out}\n")
        status = STOPPED
    if table.empty:
        return status
    cells = table.groupby(["m", "gamma", "lam"])["test_error"].mean()
    m, gamma, lam = cells.idxmin()
    print(f"lowest mean test error {cells.min():.4f} at m = {m}, γ = {gamma:.4g}, λ = {lam:g} "
          "(picked on the test part, so optimistic: 'snacks search' chooses by "
          "cross-validation)")
    if args.plot:
        _write_plot(table, args.plot, by_gamma=len(set(gammas)) > 1)
        print(f"heatmap: {args.plot}")
    return status



def _local_dask_client():
    try:
        from distributed import Client
    except ImportError:
        raise ValueError("--backend dask needs dask.distributed: pip install "
                         "'snacks-explorer[distributed]'.") from None
    return Client(processes=True, threads_per_worker=1, dashboard_address=None)


def _write_plot(table, path, *, by_gamma):
    from snacks_core.app.figures.robustness import grid_axis_title, heatmap_figure

    rows = "gamma" if by_gamma else "m"
    row_values, lam_values, mean, std, seconds = summarize_grid(table, rows=rows)
    figure = heatmap_figure(row_values, lam_values, mean, std, seconds,
                            row_label=grid_axis_title(rows), col_label=grid_axis_title("lam"),
                            title="Test error over the grid (mean over seeds; spread on hover)")
    figure.write_html(path, include_plotlyjs=True)
