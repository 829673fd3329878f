"""The robustness heatmap's views: the sweep kept in the session, the best or chosen cell
and what its choice is worth, the clicked cell's model and the cells' small multiples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from snacks_core.app import cached, explorer
from snacks_core.app.figures.boundary import (
    BoundaryStyle,
    decision_boundary_figure,
    margin_histogram_figure,
    rename_test_points,
)
from snacks_core.app.figures.convergence import convergence_figure
from snacks_core.app.figures.robustness import (
    THUMBNAIL_POINTS,
    boundary_thumbnails_figure,
    grid_axis_title,
)
from snacks_core.app.run_view import class_names, first_problem, percent
from snacks_core.app.state import GRID_EXTRA_MAX, Keys
from snacks_core.app.teaching import STOP_REASON_WORDS, solver_label
from snacks_core.model.defaults import GAMMA_RANGE, GRID_M_MAX
from snacks_core.model.metrics import error_rate
from snacks_core.model.sweeps import GRID_AXIS_SYMBOLS, cv_splits, fold_training_rows
from snacks_core.solvers.objective import lam_to_C

# Heights of the clicked cell's figures below the robustness heatmap: the convergence
# figure's F(w) − F_best panel gets about 200 px (its log ticks then stay apart).
CELL_FIGURE_HEIGHT = 440


CELL_BOUNDARY_HEIGHT = 480


# Width of each of the clicked cell's two figures: side by side in a main column of about
# 940 px (a 1400 px window), one above the other in one of about 560 px (a 1024 px one).
CELL_FIGURE_WIDTH = 440


def pick_heatmap_cell():
    """Keep the heatmap cell just clicked (its row value and λ) for :func:`heatmap_cell_view`.

    A click elsewhere clears the selection and keeps the last cell shown.
    """
    points = st.session_state[Keys.HEATMAP].selection.points
    if points:
        row_value, lam = points[0]["customdata"][:2]
        st.session_state[Keys.HEATMAP_CELL] = (float(row_value), float(lam))


def sweep_models_to_keep(seed):
    """Which rows of a sweep keep their model for the page: the first seed's, and with
    cross-validation its first fold's (those :func:`heatmap_cell_view` and
    :func:`cell_thumbnails` draw), so that a session holds one model per cell."""
    return lambda row: row["seed"] == seed and row.get("fold", 0) == 0


# The most a session keeps of a sweep's models (their groups' embeddings, shared by the
# cells of a group): a γ grid at large m has one m × m factor per γ.
KEPT_MODELS_MAX_BYTES = 64 * 2**20


def _kept_cell(models, cell):
    """The key of ``models`` for a clicked (row value, λ), or None."""
    if cell is None:
        return None
    return next((key for key in models if np.allclose(key, cell)), None)


def _scored_rows(split, folds):
    """(X, y) the kept models trained on and (X, y) their error was measured on: the
    training and test parts, or with ``folds`` the first fold's two parts of the training
    rows, as the sweep split them."""
    if not folds:
        return (split.X_train, split.y_train), (split.X_test, split.y_test)
    fit, held = cv_splits(folds, split.X_train, split.y_train)[0]
    y = np.asarray(split.y_train)
    return (split.X_train[fit], y[fit]), (split.X_train[held], y[held])


def _no_cell_shown(result):
    """Why no cell's model is shown: its models are not kept, or no cell is clicked yet."""
    if result["models_bytes"] > KEPT_MODELS_MAX_BYTES:
        st.info(f"This sweep's models are not kept: their embeddings would hold "
                f"{result['models_bytes'] / 2**20:.0f} MB for this visitor (the limit is "
                f"{KEPT_MODELS_MAX_BYTES // 2**20} MB). Lower m to see each cell's model.",
                icon=":material/memory:")
    else:
        st.info("Click a cell of the heatmap to see its model here: the one the sweep "
                "scored, its decision boundary (2-D data) or margins, and how its solver "
                "converged.", icon=":material/ads_click:")


def _describe_cell(name, rows, model, seed, folds, n_fit, n_scored, error):
    """The cell's model in words: what it trained and was scored on, its error, and the
    heatmap's value of the cell (``rows``: the cell's rows of the sweep's table)."""
    n_seeds = rows["seed"].nunique()
    cell_value = (f"{percent(rows['test_error'].mean())} ± "
                  f"{percent(float(np.std(rows['test_error'])))}")
    # Early stopping (from 10,000 rows) records the error of rows held out of training.
    held = (" (less those it held out to decide when to stop)"
            if np.isfinite(model.history_["validation_error"]).any() else "")
    if folds:
        over = f"the {folds} folds" + (f" and {n_seeds} seeds" if n_seeds > 1 else "")
        st.markdown(f"{name}: the sweep's model for fold 1 of {folds} (seed {seed}), trained "
                    f"on the fold's {n_fit:,} training rows{held}; on the fold's "
                    f"{n_scored:,} validation rows, its **validation error is "
                    f"{percent(error)}**. The "
                    f"heatmap shows the cell's mean over {over}: {cell_value}.")
    else:
        value = ("the cell's value in the heatmap" if n_seeds == 1 else
                 f"the heatmap shows the cell's mean over {n_seeds} seeds, {cell_value}")
        st.markdown(f"{name}: the model the sweep trained with seed {seed} on the "
                    f"{n_fit:,} training rows{held} and scored: **test error "
                    f"{percent(error)}** ({value}).")


def _cell_model_figure(view, split, result, cell, model, folds, fit, scored, predictions):
    """The cell's model on the rows it was scored on: its decision boundary (2-D data) or
    the histogram of its decision values; ``fit``, ``scored``: (X, y) pairs,
    ``predictions``: on both."""
    (X_fit, y_fit), (X_scored, y_scored) = fit, scored
    fit_pred, scored_pred = predictions
    classes = class_names(split)
    if split.n_features == 2:
        surface = cached.cell_surfaces(result, [cell], split)[0]
        figure = decision_boundary_figure(
            surface, X_fit, y_fit, X_scored, y_scored, classes=classes, train_pred=fit_pred,
            test_pred=scored_pred, landmarks=model.embedding_.landmarks_,
            style=BoundaryStyle(axis_titles=split.feature_names[:2],
                                height=CELL_BOUNDARY_HEIGHT, legend_above=True))
        if folds:
            figure = rename_test_points(figure, "validation")
        view.plotly_chart(figure, width="stretch", key="cell_boundary")
    else:
        figure = margin_histogram_figure(
            model.margin_values(X_scored), y_scored, classes=classes,
            height=CELL_FIGURE_HEIGHT, rows="fold's validation rows" if folds else "test rows")
        view.plotly_chart(figure, width="stretch", key="cell_margins")


def _cell_convergence_figure(view, model, solver):
    """How the cell's solver converged, without the error panel: under early stopping the
    history's errors are on rows held out of training, not on the rows the panel names."""
    history = first_problem(model.history_)
    history["validation_error"] = np.full_like(history["objective"], np.nan)
    view.plotly_chart(convergence_figure(
        {solver: history}, labels={solver: solver_label(solver)},
        height=CELL_FIGURE_HEIGHT), width="stretch", key="cell_convergence")


def _describe_solver_run(table, lam, mine):
    """How the cell's solve started (warm or cold) and stopped (``mine``: its table row)."""
    larger = table.loc[table["lam"] > lam, "lam"]
    start = (f"warm-started from its solution at λ = {larger.min():g}" if mine["warm_start"]
             else "started from w = 0")
    st.caption(f"Its solver {start} (each column of the sweep runs λ from large to small) "
               f"and stopped {STOP_REASON_WORDS.get(mine['stop_reason'].split(',')[0], '')} "
               f"after {mine['epochs']:.3g} epochs, on {int(mine['n_components'])} "
               "dimensions. A sweep's checkpoints record no test error: the figure has no "
               "error panel.")


def heatmap_cell_view(split, result, folds, solver):
    """The clicked cell's model, the one the sweep trained and scored (its first seed; with
    cross-validation, on its first fold): its decision boundary (2-D data) or margin
    histogram on the rows it was scored on, its error, and its ``solver``'s convergence."""
    axis, table, models = result["axis"], result["table"], result["models"]
    cell = _kept_cell(models, st.session_state.get(Keys.HEATMAP_CELL))
    if cell is None:
        _no_cell_shown(result)
        return
    row_value, lam = cell
    model, seed = models[cell], result["models_seed"]
    rows = table[np.isclose(table[axis], row_value) & np.isclose(table["lam"], lam)]
    mine = rows[rows["seed"] == seed]
    mine = mine[mine["fold"] == 0] if folds else mine
    fit, scored = _scored_rows(split, folds)
    predictions = cached.cell_predictions(result, cell, fit[0], scored[0])
    name = f"**Cell {GRID_AXIS_SYMBOLS[axis]} = {row_value:g}, λ = {lam:g}**"
    _describe_cell(name, rows, model, seed, folds, len(fit[1]), len(scored[1]),
                   error_rate(scored[1], predictions[1]))
    beside = st.container(horizontal=True, wrap=True, gap="small")
    _cell_model_figure(beside.container(width=CELL_FIGURE_WIDTH), split, result, cell, model,
                       folds, fit, scored, predictions)
    _cell_convergence_figure(beside.container(width=CELL_FIGURE_WIDTH), model, solver)
    _describe_solver_run(table, lam, mine.iloc[0])


def cell_thumbnails(split, result, folds, best, row_values, col_values):
    """Small multiples (2-D data): every cell's kept model as a decision-boundary thumbnail,
    laid out as the heatmap (largest row value on top, λ across), each titled with the
    error of the model drawn; in an expander whose content is computed only when open."""
    models = result["models"]
    if split.n_features != 2 or not models:
        return
    expander = st.expander(f"Decision boundaries of the {len(models)} cells, side by side",
                           key=Keys.CELL_THUMBNAILS, on_change="rerun",
                           icon=":material/grid_view:")
    if not expander.open:
        return
    axis, table, seed = result["axis"], result["table"], result["models_seed"]
    row_values = list(row_values)[::-1]
    cells = [_kept_cell(models, (row, lam)) for row in row_values for lam in col_values]
    best = None if best is None else (len(row_values) - 1 - int(best[0]), int(best[1]))
    # Rows about as tall as a column is wide in a 1400 px window's main area.
    height = 60 + len(row_values) * min(150, 720 // len(col_values))

    def build():
        drawn = table[table["seed"] == seed]
        drawn = drawn[drawn["fold"] == 0] if folds else drawn
        errors = np.array([[drawn.loc[np.isclose(drawn[axis], row)
                                      & np.isclose(drawn["lam"], lam), "test_error"].mean()
                            for lam in col_values] for row in row_values])
        surfaces = iter(cached.cell_surfaces(result, [c for c in cells if c is not None],
                                             split, resolution=cached.THUMBNAIL_RESOLUTION))
        grid = [[None if cells[i * len(col_values) + j] is None else next(surfaces)
                 for j in range(len(col_values))] for i in range(len(row_values))]
        return boundary_thumbnails_figure(
            grid, errors, row_values, col_values, row_symbol=GRID_AXIS_SYMBOLS[axis],
            col_symbol="λ", X=split.X_train, y=split.y_train, classes=class_names(split),
            best=best, height=height)

    with expander:
        what = (f"trained on fold 1's training rows (seed {seed}), titled with its validation "
                "error on the rows that fold held out; the heatmap shows the mean over folds"
                if folds else f"trained with seed {seed}, titled with its test error")
        st.caption(f"Each thumbnail is the model the sweep scored for that cell, {what}. "
                   f"★ and the red frame: {'the chosen cell' if folds else 'the best cell'}. "
                   f"Rows: {GRID_AXIS_SYMBOLS[axis]}, largest on top as in the heatmap; "
                   f"columns: λ. Points: a sample of at most {THUMBNAIL_POINTS}. "
                   "Drawn only while this section is open.")
        figure = cached.figure_once(repr((result["key"], cells, folds, best, height)), build)
        st.plotly_chart(figure, width="stretch", key="cell_thumbnails_chart",
                        config={"displayModeBar": False})


def best_cell(table, axis, row_values, col_values, mean):
    """(row, column) index of the best cell: with cross-validation the sweep's chosen cell
    (``attrs['chosen']``), otherwise the lowest mean error."""
    chosen = table.attrs.get("chosen")
    if chosen is None or "fold" not in table:
        return np.unravel_index(np.nanargmin(mean), mean.shape) if np.isfinite(mean).any() \
            else None
    return (int(np.flatnonzero(np.isclose(row_values, chosen[axis]))[0]),
            int(np.flatnonzero(np.isclose(col_values, chosen["lam"]))[0]))


def _embedding_bytes(models):
    """Bytes the embeddings of a grid's kept ``models`` hold: each group's whole embedding
    once (shared by the prefixes its cells' models read), and the factor of each prefix
    that computed its own."""
    prefixes = {id(model.embedding_): model.embedding_ for model in models}
    wholes = {id(prefix.embedding): prefix.embedding for prefix in prefixes.values()}
    return (sum(e.components_.nbytes + e.landmarks_.data.nbytes for e in wholes.values())
            + sum(p.components.nbytes for p in prefixes.values() if p.components is not None))


def grid_result(key, table, axis, split, stopped=None, previous=None) -> dict:
    """What the Robustness page keeps of a sweep in the session: the table, its test
    decision values apart (``scores``, for :func:`explorer.selection_optimism`, which
    measures how much choosing on the test rows flatters the choice: ``optimism``, None
    when the cells were scored by cross-validation, or there is one fit to choose from),
    and the models kept by :func:`sweep_models_to_keep` apart (``models``: {(row value,
    λ): model}, empty when their embeddings would take more than
    :data:`KEPT_MODELS_MAX_BYTES`; their size in ``models_bytes``).

    ``previous``, a result of this function for other cells of the same grid (before an
    extension: :func:`reusable_result`), is merged in: its cells are not computed again.
    """
    scores = None
    if "test_scores" in table:
        scores = table[["seed", "gamma", "m", "lam", "test_scores"]]
        table = table.drop(columns="test_scores")
    models = {}
    if "model" in table:
        kept = table[table["model"].notna()]
        models = {(float(row[axis]), float(row["lam"])): row["model"]
                  for _, row in kept.iterrows()}
        table = table.drop(columns="model")
    # The models' own arrays are small; their groups' embeddings are not, and shared.  A
    # block's embeddings are its own: the grid's bytes are the blocks' sum, whether the
    # earlier blocks' models were kept or dropped over the cap.
    n_bytes = _embedding_bytes(models.values())
    if previous is not None:
        table = explorer.merge_grid_tables([previous["table"], table])
        if scores is not None and previous["scores"] is not None:
            scores = pd.concat([previous["scores"], scores], ignore_index=True)
        models = {**previous["models"], **models}
        n_bytes += previous["models_bytes"]
    optimism = None
    if scores is not None and table["seed"].nunique() * table.groupby([axis, "lam"]).ngroups > 1:
        optimism = explorer.selection_optimism(scores, split.y_train, split.y_test)
    if n_bytes > KEPT_MODELS_MAX_BYTES:
        models = {}
    return {"key": key, "table": table, "axis": axis, "stopped": stopped, "scores": scores,
            "optimism": optimism, "models": models, "models_bytes": n_bytes,
            "models_seed": int(table["seed"].min()) if len(table) else None}


def reusable_result(result, key, axis_values, lams):
    """``result`` when its cells all belong to the grid ``key`` names (the same data,
    settings, seeds and scoring; its axes within ``axis_values`` × ``lams``) and it
    finished: the grid's new cells can be added to it.  None otherwise.

    Keys are the Robustness page's: (data, model parameters, grid kind, row values,
    λ values, seeds, folds)."""
    if not result or result.get("stopped") or result["key"] == key:
        return None
    if result["key"][:3] + result["key"][5:] != key[:3] + key[5:]:
        return None
    old_rows, old_lams = result["key"][3], result["key"][4]
    inside = (all(np.isclose(v, axis_values).any() for v in old_rows)
              and all(np.isclose(v, lams, rtol=1e-9).any() for v in old_lams))
    return result if inside else None


# The settings an extension of the grid raises, by (axis, side): side 0 is below the
# smallest value tried, 1 above the largest.
EXTENSION_SETTINGS = {("lam", 0): "rob_lam_below", ("lam", 1): "rob_lam_above",
                      ("axis", 0): "rob_axis_below", ("axis", 1): "rob_axis_above"}


def grid_edges(best, mean) -> list:
    """The edges of a rows × columns grid of errors ``mean`` that the cell ``best`` (row,
    column) lies on and towards which the error still falls (the best cell beats its
    neighbour inside the grid; a tie, as when more landmarks change nothing, says nothing
    of what lies beyond), as (axis, side): 'axis' for the rows (m or γ), 'lam' for the
    columns; side 0 the smallest value, 1 the largest."""
    if best is None:
        return []
    i, j = int(best[0]), int(best[1])
    edges = []
    for name, index, length in (("lam", j, mean.shape[1]), ("axis", i, mean.shape[0])):
        for side, at_edge, step in ((0, index == 0, 1), (1, index == length - 1, -1)):
            if not at_edge or length < 2:
                continue
            inner = mean[i, j + step] if name == "lam" else mean[i + step, j]
            if not np.isfinite(inner) or mean[i, j] < inner:
                edges.append((name, side))
    return edges


def one_more_step(steps) -> int:
    """An extension setting's value one step further beyond its edge, at most
    :data:`GRID_EXTRA_MAX` (what the button sets and what the page probes)."""
    return min(int(steps) + 1, GRID_EXTRA_MAX)


def extend_grid(settings):
    """The edge warning's button: one more step beyond each edge named by ``settings``, and
    the new cells computed at the next run (the page's :data:`Keys.GRID_EXTEND`)."""
    for name in settings:
        st.session_state[name] = one_more_step(st.session_state.get(name, 0))
    st.session_state[Keys.GRID_EXTEND] = True


def reset_grid_extension():
    """Back to the default axes (a new grid kind or size starts from the defaults)."""
    for name in EXTENSION_SETTINGS.values():
        st.session_state[name] = 0


def row_axis_limits(axis, n_train, folds) -> str:
    """Why the grid's row axis stops where it does, in words for :func:`edge_warning`."""
    if axis == "m":
        n_fit = fold_training_rows(n_train, folds)
        return (f"m is at most the {n_fit:,} rows a cell trains on, and at most "
                f"{GRID_M_MAX:,} on this server")
    return f"γ stays within {GAMMA_RANGE[0]:g} … {GAMMA_RANGE[1]:g}"


def edge_warning(edges, axis, axes, extended_axes, limits, extras):
    """Say that the best cell lies on an edge of the grid, and offer one click that extends
    the grid that way (:func:`extend_grid`) where that adds values.

    ``edges`` from :func:`grid_edges`; ``axes`` the grid's (row values, λ values);
    ``extended_axes(setting)`` the (row values, λ values) with :func:`one_more_step` for
    that :data:`EXTENSION_SETTINGS` value; ``limits`` says in words why the row axis stops
    (the rows, the server's largest m or the γ range); ``extras`` the extension settings'
    values (an edge extended :data:`GRID_EXTRA_MAX` steps goes no further)."""
    if not edges:
        return
    symbol = GRID_AXIS_SYMBOLS[axis]
    places, growing, stuck = [], [], []
    for name, side in edges:
        values = axes[1] if name == "lam" else axes[0]
        letter = "λ" if name == "lam" else symbol
        value = values[0] if side == 0 else values[-1]
        places.append(f"the {'smallest' if side == 0 else 'largest'} {letter} tried "
                      f"({letter} = {value:g})")
        setting = EXTENSION_SETTINGS[(name, side)]
        new = extended_axes(setting)
        grows = len(new[1] if name == "lam" else new[0]) > len(values)
        (growing if grows else stuck).append((setting, letter, side))
    text = (f"The best cell is at {' and at '.join(places)}, and the error still falls "
            "towards it: the good models may lie beyond the grid.")
    for setting, letter, side in stuck:
        why = (f"the grid is already {GRID_EXTRA_MAX} steps beyond its default there, the "
               "most an extension goes" if extras[setting] >= GRID_EXTRA_MAX else limits)
        text += f" {letter} cannot go {'lower' if side == 0 else 'higher'} here ({why})."
    st.warning(text, icon=":material/border_outer:")
    if growing:
        what = ", ".join(f"{'smaller' if side == 0 else 'larger'} {letter}"
                         for _, letter, side in growing)
        st.button(f"Extend the grid: {what}", key="extend_grid", icon=":material/open_in_full:",
                  on_click=extend_grid, args=([setting for setting, _, _ in growing],),
                  help="Adds one step beyond that edge and computes only the new cells; the "
                       "cells already computed are kept.")


def chosen_cell(table, axis, split, folds, best, summary, optimism):
    """The best cell and what its choice is worth: chosen by cross-validation, the chosen
    model's test error measured once; chosen on the test rows, how much that flatters it
    (``optimism``, from :func:`grid_result`)."""
    if best is None:
        return
    row_values, col_values, mean, std = summary
    i, j = best
    n_train = split.X_train.shape[0]
    where = (f"{grid_axis_title(axis)} = {row_values[i]:g}, λ = {col_values[j]:g} "
             f"(C = {lam_to_C(col_values[j], n_train):.3g})")
    spread = f" ± {percent(std[i, j])}" if np.isfinite(std[i, j]) and std[i, j] > 0 else ""
    if folds:
        chosen = table.attrs.get("chosen")
        text = f"Chosen by {folds}-fold cross-validation: {where}: CV error " \
               f"{percent(mean[i, j])}{spread}."
        if chosen is not None:
            text += (f" Refitted on all {n_train:,} training rows, its **test error** "
                     f"(measured once, after the choice) is **{percent(chosen['test_error'])}**.")
        st.success(text, icon=":material/star:")
        return
    st.success(f"Lowest test error: {where}: {percent(mean[i, j])}{spread}.",
               icon=":material/star:")
    if optimism is not None:
        gap = optimism
        st.warning(
            f"Chosen on the test rows, so its test error flatters it. Measured here: "
            f"choosing among the {gap['n_cells']} cells on a random half of the "
            f"{gap['n_test']:,} test rows, the chosen cell's error is "
            f"{percent(gap['picked'])} on that half and {percent(gap['fresh'])} on the "
            f"other half (mean of {gap['n_halvings']} halvings): {100 * gap['gap']:+.2f} "
            "points. Choose by "
            "cross-validation to keep the test rows for one honest measurement.",
            icon=":material/visibility:")
