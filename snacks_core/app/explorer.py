"""The computations behind the explorer's pages that only the explorer needs: the
robustness sweep of the sidebar's settings and its axes, how much choosing a cell on the
test rows flatters it, Auto-tune, the solver comparison's rows and the replay of a
boundary.  Plain Python (no Streamlit): the pages call them, tests call them directly.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model.defaults import (
    SEARCH_FOLDS,
    grid_gamma_values,
    grid_lam_values,
    grid_m_values,
    round_125,
)
from snacks_core.model.engine import labels_from_scores
from snacks_core.model.estimator import estimator_from_settings
from snacks_core.model.search import search_around_defaults
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import (
    GRID_AXIS_SYMBOLS,
    GridSchedule,
    fold_training_rows,
    robustness_grid,
)
from snacks_core.solvers import EMBEDDED_SOLVERS
from snacks_core.solvers.objective import C_to_lam, lam_to_C


def animation_frames(run, xs, ys, max_frames=30) -> list:
    """(label, f on the grid, history record) for up to ``max_frames`` checkpoints of a
    two-class run, evenly spread and always including the last."""
    if not run.checkpoints:
        return []
    gx, gy = np.meshgrid(xs, ys)
    Z = run.model.embedding_.transform(np.column_stack([gx.ravel(), gy.ravel()]))
    picks = np.unique(np.linspace(0, len(run.checkpoints) - 1,
                                  min(max_frames, len(run.checkpoints))).round().astype(int))
    frames = []
    for k in picks:
        record, w = run.checkpoints[k]
        label = f"epoch {record['epoch']:.3g}"
        frames.append((label, (Z @ w).reshape(gy.shape), record))
    return frames


def shared_embedding_time(runs):
    """One time for the Nyström embedding the embedded solvers of ``runs`` (solver → Run)
    share: the same landmarks and Z computed once per run, so the median of their times
    (None when no embedded solver is there)."""
    times = [run.metrics["embedding_time"] for solver, run in runs.items()
             if solver in EMBEDDED_SOLVERS]
    return float(np.median(times)) if times else None


# The app's cap on an uploaded file (its bytes as sent, compressed or not); Streamlit's own
# limit (.streamlit/config.toml, server.maxUploadSize) is set above it, so that a file over
# this cap is refused by :func:`upload_size_problem`'s words rather than a mark on its chip.
MAX_UPLOAD_MB = 50


def upload_size_problem(name, n_bytes) -> str | None:
    """Why the uploaded file ``name`` of ``n_bytes`` bytes is refused, or None."""
    if n_bytes <= MAX_UPLOAD_MB * 2**20:
        return None
    return (f"{name} is {n_bytes / 2**20:.1f} MB, over the {MAX_UPLOAD_MB} MB an upload to "
            "this app may have (a shared server reads it in memory). Upload a sample of its "
            "rows, a compressed copy (.gz, .bz2, .xz), or train on the whole file with the "
            "library or the `snacks` command line, which have no such cap.")


def stopped_sweep_cells(table, axis, row_values, col_values, *, fits_per_cell, done, total,
                        n_cells=None):
    """What a stopped sweep left: which cells of the heatmap (rows ``row_values`` of
    ``axis``, columns ``col_values`` of λ) average fewer than their ``fits_per_cell`` fits
    (seeds × folds; folds run one after the other, so a cell may have its first fold only),
    as a boolean array, and a sentence that says so and counts the cells not computed
    (of ``n_cells``, by default the rows × columns)."""
    counts = table.groupby([axis, "lam"]).size()
    counts = {(float(r), float(c)): int(n) for (r, c), n in counts.items()}
    partial = np.array([[0 < counts.get((float(r), float(c)), 0) < fits_per_cell
                         for c in col_values] for r in row_values], dtype=bool)
    n_cells = len(row_values) * len(col_values) if n_cells is None else n_cells
    parts = [f"Sweep stopped after {done} of {total} fits."]
    if partial.any():
        parts.append(f"{int(partial.sum())} of the {n_cells} cells (marked *) average fewer "
                     f"than their {fits_per_cell} fits, so their errors are noisier than the "
                     "others'.")
    missing = n_cells - len(counts)
    if missing:
        parts.append(f"{missing} of the {n_cells} cells were not computed (empty).")
    if not partial.any() and not missing:
        parts.append("Every cell has all its fits.")
    return partial, " ".join(parts)


# The solver comparison's two tables: what each solver reached, and how it ran.
RESULT_COLUMNS = ["solver", "test error", "train error", "F1", "objective", "training time (s)"]
STOP_COLUMNS = ["solver", "embedding time (s)", "epochs", "iterations", "stopped by"]


def solver_row(label, metrics, shared_embedding=None) -> dict:
    """One row of the solver comparison (the paper's Tables III–VII) from a run's metrics;
    ``shared_embedding`` replaces the embedding time of a Nyström-embedded run."""
    embedding = metrics["embedding_time"]
    if shared_embedding is not None and metrics["n_landmarks"] is not None:
        embedding = shared_embedding
    return {"solver": label, "embedding time (s)": embedding,
            "training time (s)": metrics["training_time"],
            "train error": metrics["train_error"], "test error": metrics["test_error"],
            "F1": metrics["f1"], "objective": metrics["objective"],
            "epochs": metrics["epochs"], "iterations": metrics["iterations"],
            "stopped by": metrics["stop"]}


# The settings a robustness grid takes from the sidebar (the axes and seeds are its own).
GRID_SETTINGS = ("kernel", "degree", "coef0", "sampling", "class_weight", "max_epochs")


def grid_solver(params) -> str:
    """The solver of a robustness grid: the chosen one, or Snacks for the exact solver
    (a grid varies the landmarks, which the exact kernel SVM has none of)."""
    return params["solver"] if params["solver"] in EMBEDDED_SOLVERS else "snacks"


def robustness(split, params, axis, axis_values, lams, seeds, progress=None,
               should_stop=None, cv=None, keep_test_scores=False, keep_models=False):
    """Error over an (m, λ) or (γ, λ) grid with :func:`snacks_core.model.sweeps.robustness_grid`.

    ``axis`` is 'm' or 'gamma'; the other estimator parameters come from ``params``
    (the solver through :func:`grid_solver`).  With ``cv=k`` each cell is scored by k-fold
    cross-validation on the training part (one row per fold) and only the chosen cell's
    model sees the test part (``attrs['chosen']``); without, each cell by its test error
    (``keep_test_scores``: with each cell's test decision values, for
    :func:`selection_optimism`).  ``keep_models`` (True, or a predicate of a row) adds
    each cell's fitted model, the one its error was measured on (column ``model``).
    ``progress(done, total, row)`` is called after each fit (one cell, seed and fold) and
    ``should_stop()`` is polled between columns.
    """
    grid = {"m": params["n_components"], "gamma": params.get("gamma", "scale")}
    grid[axis] = list(axis_values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return robustness_grid(
            split.X_train, split.y_train, split.X_test, split.y_test, m=grid["m"], lam=lams,
            gamma=grid["gamma"], seeds=list(seeds), cv=cv,
            estimator=estimator_from_settings(
                {name: params[name] for name in GRID_SETTINGS if name in params}
                | {"solver": grid_solver(params)}),
            schedule=GridSchedule(keep_test_scores=keep_test_scores, keep_models=keep_models),
            resources=Resources(progress=progress, should_stop=should_stop))


def selection_optimism(table, y_train, y_test, *, n_halvings=200, seed=0) -> dict:
    """How much choosing a grid's cell on the test rows flatters the choice.

    ``table`` is a grid with ``test_scores`` (one test-set pass per cell and seed).  The
    test rows are halved at random ``n_halvings`` times; each time the cell with the
    lowest error (mean over seeds) on one half is chosen, and its error on that half and
    on the other is recorded.  Returns the means: ``picked`` (the error on the rows that
    chose it: what picking on the test set reports), ``fresh`` (on rows that took no part
    in the choice) and ``gap`` = fresh − picked, with ``n_cells``, ``n_test`` and
    ``n_halvings``.
    """
    classes = np.unique(y_train)
    y_test = np.asarray(y_test)
    wrong = np.array([
        np.mean([labels_from_scores(scores, classes) != y_test for scores in cell], axis=0)
        for _, cell in table.groupby(["gamma", "m", "lam"])["test_scores"]])
    rng = np.random.default_rng(seed)
    picked, fresh = [], []
    for _ in range(n_halvings):
        order = rng.permutation(y_test.shape[0])
        half, other = order[: y_test.shape[0] // 2], order[y_test.shape[0] // 2:]
        errors = wrong[:, half].mean(axis=1)
        best = int(np.argmin(errors))
        picked.append(errors[best])
        fresh.append(wrong[best, other].mean())
    return {"picked": float(np.mean(picked)), "fresh": float(np.mean(fresh)),
            "gap": float(np.mean(fresh) - np.mean(picked)), "n_cells": wrong.shape[0],
            "n_test": y_test.shape[0], "n_halvings": n_halvings}


# Auto-tune is the library's default search (model.search.search_around_defaults): its
# folds, for the page's captions.
AUTO_TUNE_FOLDS = SEARCH_FOLDS


def auto_tune(split, params, *, by_C=False, n_jobs=None, progress=None) -> dict:
    """The library's default search (:func:`snacks_core.model.search.search_around_defaults`:
    γ × C around the defaults, then m and 4m while they help, by shuffled stratified
    cross-validation on the training part; the test part is not used) for the explorer's
    sidebar.

    The chosen C becomes λ = 1/(2nC) with n every training row (rounded to 1, 2 or 5 times
    a power of ten unless ``by_C``, for a sidebar that sets λ).  ``progress(fits, rows)`` is
    called after each fold's score.  Returns ``params`` (the chosen ``gamma``, ``lam`` and
    ``n_components``), ``C``, ``cv_error`` (its mean CV error), ``results`` (one row per
    setting and round: ``gamma``, ``C``, ``lam`` for every training row, ``m``, ``rows``,
    ``cv_error``, ``chosen``), ``ladder`` (the ``gamma`` and ``C`` the ladder of m ran at),
    ``gamma_step`` (the larger γ its last m scored too, that m and its CV error, or ()),
    ``scored_m`` (the m the choice was scored at: smaller than its ``n_components`` where
    :func:`~snacks_core.model.search.refit_m_note` says why), ``top_unexplained`` (more
    than two classes: the share of the kernel the top's landmarks left, or None),
    ``n_rows`` (the rows searched), ``fits`` and ``seconds``.
    """
    start = time.perf_counter()
    n_train = split.X_train.shape[0]
    base = estimator_from_settings({**params, "solver": grid_solver(params)})
    found = search_around_defaults(base, split.X_train, split.y_train, n_jobs=n_jobs,
                                   random_state=params.get("random_state"), progress=progress)
    chosen = dict(found.params)
    # λ for every training row, as the sidebar gets it (on its 1-2-5 steps unless by_C).
    as_set = (lambda C: C_to_lam(C, n_train)) if by_C else (
        lambda C: round_125(C_to_lam(C, n_train)))
    table = found.results.assign(lam=[as_set(C) for C in found.results["C"]])
    table["chosen"] = ((table["C"] == chosen["C"]) & (table["m"] == found.scored_m)
                       & (table["rows"] == found.n_rows)
                       & ((table["gamma"] == chosen["gamma"]) if "gamma" in chosen else True))
    lam = as_set(chosen.pop("C"))
    return {"params": {**chosen, "lam": lam}, "C": lam_to_C(lam, n_train),
            "cv_error": found.cv_error, "results": table, "ladder": found.ladder,
            "gamma_step": found.gamma_step, "n_rows": found.n_rows, "fits": found.fits,
            "scored_m": found.scored_m, "top_unexplained": found.top_unexplained,
            "seconds": time.perf_counter() - start}


def progress_text(done, total, axis, row) -> str:
    """A sweep's progress as a fraction of the whole sweep, and the last fit's result."""
    name = GRID_AXIS_SYMBOLS[axis]
    return (f"{done} of {total} fits done ({done / total:.0%} of the sweep) · last: "
            f"{name} = {row[axis]:g}, λ = {row['lam']:g}, seed {row['seed']} → test error "
            f"{100 * row['test_error']:.1f} %")


def grid_axes(kind, params, X_train, size, folds=None, *, axis_extra=(0, 0),
              lam_extra=(0, 0), n_classes=2):
    """Values of the robustness grid: ('m', m values) or ('gamma', γ values) and the λ
    values, ``size`` values each, around the data-aware defaults
    (:func:`snacks_core.model.defaults.grid_m_values`,
    :func:`~snacks_core.model.defaults.grid_gamma_values`,
    :func:`~snacks_core.model.defaults.grid_lam_values`), with ``axis_extra`` and ``lam_extra``
    = (below, above) more steps beyond each end.  λ centres on 0.02/n of the training rows
    (the sidebar's default; a decade lower on sparse text rows); m on the default m of the
    rows a cell trains on (with ``folds``-fold cross-validation, the smallest fold's
    training part) and the training labels' ``n_classes``, and never more."""
    n_train = X_train.shape[0]
    lams = grid_lam_values(n_train, size, lam_extra, X=X_train)
    if kind == "m":
        n_fit = fold_training_rows(n_train, folds)
        return "m", grid_m_values(n_fit, X_train.shape[1], size, axis_extra, n_classes), lams
    if params.get("kernel") == "linear":
        raise ValueError("The linear kernel has no γ: choose another kernel or the m × λ grid.")
    gamma = resolve_gamma(params.get("gamma", "scale"), X_train)
    return "gamma", grid_gamma_values(gamma, size, axis_extra), lams


def missing_blocks(done_rows, done_lams, rows, lams) -> list:
    """The cells of the grid ``rows`` × ``lams`` that a grid ``done_rows`` × ``done_lams``
    inside it has not computed, as at most two rectangular blocks (row values, λ values):
    the new rows at every λ, then the old rows at the new λ values."""
    new_rows = [r for r in rows if not np.isclose(r, done_rows).any()]
    old_rows = [r for r in rows if np.isclose(r, done_rows).any()]
    new_lams = [lam for lam in lams if not np.isclose(lam, done_lams, rtol=1e-9).any()]
    blocks = [(new_rows, list(lams)), (old_rows, new_lams)]
    return [(r, ls) for r, ls in blocks if r and ls]


def merge_grid_tables(tables) -> pd.DataFrame:
    """Grid tables of disjoint cells (the same data, settings, seeds and folds) as one,
    sorted as :func:`~snacks_core.model.sweeps.robustness_grid` sorts its table.

    With cross-validation, ``attrs['chosen']`` is the tables' chosen cell with the lowest
    CV error (ties: the larger λ, then the smaller m, as the grid breaks them): each
    table's is the best of its own cells, so this one is the best of all.  ``wall_time``
    adds up; ``stopped`` is any table's.
    """
    tables = [table for table in tables if table is not None]
    merged = pd.concat(tables, ignore_index=True).sort_values(
        ["seed", "gamma", "m", "lam"], ignore_index=True)
    chosen = [table.attrs["chosen"] for table in tables if table.attrs.get("chosen")]
    merged.attrs.update(tables[-1].attrs)
    merged.attrs["wall_time"] = sum(table.attrs.get("wall_time", 0.0) for table in tables)
    merged.attrs["stopped"] = any(table.attrs.get("stopped") for table in tables)
    if chosen:
        merged.attrs["chosen"] = min(chosen, key=lambda c: (c["cv_error"], -c["lam"], c["m"]))
    return merged
