"""Robustness heatmap: test error over an (m, λ) or (γ, λ) grid, several seeds per cell."""

import pandas as pd
import streamlit as st

from snacks_core.app import (
    cached,
    explorer,
    heatmap,
    lessons,
    server,
    state,
    user_errors,
)
from snacks_core.app.figures.robustness import grid_axis_title, heatmap_figure
from snacks_core.app.state import Keys
from snacks_core.app.teaching import CAPTIONS, HELP, solver_label
from snacks_core.model.sweeps import summarize_grid

st.title("Robustness heatmap")
st.caption("Is there a wide region of good settings, or a narrow ridge? Each cell trains the "
           "model once per seed (and fold) and shows its mean error (its spread on hover).")
lessons.lesson_banner()

request, split = user_errors.load_split_or_stop()
params = cached.model_params()
a, b, c = st.columns(3)
a.segmented_control("Grid", state.GRIDS, key="rob_grid", format_func=state.GRID_LABELS.get,
                    help=HELP["rob_grid"], on_change=heatmap.reset_grid_extension)
b.slider("Values per axis", 2, 8, key="rob_size", help=HELP["rob_size"],
         on_change=heatmap.reset_grid_extension)
c.slider("Seeds per cell", 1, 5, key="rob_seeds", help=HELP["rob_seeds"])
st.segmented_control("Choose the best cell by", state.SELECTIONS, key="rob_select",
                     format_func=state.SELECTION_LABELS.get, help=HELP["rob_select"])
kind = state.current("rob_grid") or state.GRIDS[0]
folds = state.ROBUSTNESS_FOLDS if (state.current("rob_select") or "cv") == "cv" else None
extras = {name: state.current(name) for name in heatmap.EXTENSION_SETTINGS.values()}


def axes_with(extra):
    """The grid's axes with the extension settings ``extra`` (defaults around the data)."""
    return explorer.grid_axes(
        kind, params, split.X_train, state.current("rob_size"), folds,
        axis_extra=(extra["rob_axis_below"], extra["rob_axis_above"]),
        lam_extra=(extra["rob_lam_below"], extra["rob_lam_above"]), n_classes=split.n_classes)


with user_errors.stop_on_user_error():
    axis, axis_values, lams = axes_with(extras)
seeds = [request.seed + k for k in range(state.current("rob_seeds"))]
key = (request.key(), cached.params_key(params), kind, tuple(axis_values), tuple(lams),
       tuple(seeds), folds)
previous = heatmap.reusable_result(st.session_state.get(Keys.GRID_RESULT), key, axis_values,
                                   lams)
blocks = (explorer.missing_blocks(previous["key"][3], previous["key"][4], axis_values, lams)
          if previous else [(axis_values, lams)])
n_cells = sum(len(rows) * len(columns) for rows, columns in blocks)
n_fits = n_cells * len(seeds) * (folds or 1)
solver = explorer.grid_solver(params)
centre = (("m" if axis == "m" else "γ") + " and λ around the data-aware defaults"
          + (", extended beyond them" if any(extras.values()) else ""))
notes = [f"{len(axis_values)} × {len(lams)} cells ({centre}) × {len(seeds)} "
         f"seed{'s' * (len(seeds) > 1)}" + (f" × {folds} folds" if folds else "")
         + (f": {n_cells} new cells, {n_fits} fits" if previous else f" = {n_fits} fits")
         + f" with {solver_label(solver)}; the other sidebar settings stay fixed. Cells "
         "share landmarks and kernel blocks, and each λ starts from the previous one's "
         "solution."]
if folds:
    notes.append(f"Each cell is scored by {folds}-fold cross-validation on the training rows; "
                 "only the chosen cell's model sees the test rows.")
if solver != params["solver"]:
    notes.append(f"{solver_label(params['solver'])} has no landmarks to vary: the grid uses "
                 "Snacks.")
st.caption(" ".join(notes) + " While a sweep runs, **Stop sweep** ends it after the columns "
           "in progress and keeps the finished cells.")

buttons = st.container(horizontal=True)
run_clicked = buttons.button("Run sweep", type="primary", icon=":material/grid_on:",
                             key="run_sweep")
if any(extras.values()):
    buttons.button("Default axes", icon=":material/restart_alt:", key="default_axes",
                   on_click=heatmap.reset_grid_extension,
                   help="Back to the axes around the data-aware defaults.")
# The edge warning's "Extend the grid" click computes the new cells at once.
run_clicked = st.session_state.pop(Keys.GRID_EXTEND, False) and bool(previous) or run_clicked
stopped = st.session_state.pop(Keys.SWEEP_ROWS, None)
if stopped is not None and stopped["key"] == key:
    # The Stop button's click interrupted the sweep's run; this rerun keeps what finished.
    table = pd.DataFrame(stopped["rows"])
    if len(table):
        st.session_state[Keys.GRID_RESULT] = heatmap.grid_result(
            key, table, axis, split, stopped=(len(table), stopped["total"]),
            previous=stopped["previous"])
    else:
        st.session_state.pop(Keys.GRID_RESULT, None)
        st.warning(f"Sweep stopped before any of its {stopped['total']} fits finished: "
                   "nothing to show.", icon=":material/stop_circle:")
if run_clicked:
    buttons.button("Stop sweep", icon=":material/stop_circle:", key="stop_sweep")
    partial = {"key": key, "rows": [], "total": n_fits, "previous": previous}
    st.session_state[Keys.SWEEP_ROWS] = partial

    with (server.heavy_run("The sweep"),
          st.status(f"Sweep running: {n_fits} fits…", expanded=True) as status):
        bar = st.progress(0.0, text=f"0 of {n_fits} fits done")

        def report(done, total, row):
            partial["rows"].append(dict(row))
            bar.progress(done / total, text=explorer.progress_text(done, total, axis, row))

        try:
            tables = []
            for rows, columns in blocks:
                done = len(partial["rows"])
                tables.append(explorer.robustness(
                    split, params, axis, rows, columns, seeds,
                    progress=lambda k, _, row, done=done: report(done + k, n_fits, row),
                    cv=folds, keep_test_scores=not folds,
                    keep_models=heatmap.sweep_models_to_keep(seeds[0])))
            table = explorer.merge_grid_tables(tables)
        except user_errors.USER_ERRORS as exc:
            st.session_state.pop(Keys.SWEEP_ROWS, None)
            status.update(label="Sweep failed", state="error")
            user_errors.show_error(exc)
            st.stop()
        status.update(label=f"Sweep done: {n_fits} fits", state="complete", expanded=False)
    st.session_state.pop(Keys.SWEEP_ROWS, None)
    st.session_state[Keys.GRID_RESULT] = heatmap.grid_result(key, table, axis, split,
                                                             previous=previous)
    st.rerun()

result = st.session_state.get(Keys.GRID_RESULT)
if not result or result["key"] != key:
    st.info(f"Click **Run sweep** to compute the {n_cells} new cells; the "
            f"{previous['table'].groupby([axis, 'lam']).ngroups} cells already computed are "
            "kept." if previous else "Click **Run sweep** to fill the grid.",
            icon=":material/info:")
    st.stop()
table = result["table"]
value_label = "CV error" if folds else "test error"
spread = table["seed"].nunique() > 1 or bool(folds)
rows_v, cols_v, mean, std, seconds = summarize_grid(table, rows=result["axis"], columns="lam")
partial = None
if result.get("stopped"):
    done, total = result["stopped"]
    partial, note = explorer.stopped_sweep_cells(
        table, result["axis"], rows_v, cols_v, fits_per_cell=len(seeds) * (folds or 1),
        done=done, total=total, n_cells=len(axis_values) * len(lams))
    st.warning(note, icon=":material/stop_circle:")
best = heatmap.best_cell(table, result["axis"], rows_v, cols_v, mean)
figure = heatmap_figure(rows_v, cols_v, mean, std, seconds,
                        row_label=grid_axis_title(result["axis"]),
                        col_label=grid_axis_title("lam"),
                        spread=spread, value_label=value_label, best=best, partial=partial)
config = {"toImageButtonOptions": {"format": "png", "filename": "snacks_robustness", "scale": 2}}
# The heatmap takes the main column's width; the clicked cell's model comes below it, its
# two figures side by side where the column is wide enough (heatmap.heatmap_cell_view).
st.plotly_chart(figure, width="stretch", key=Keys.HEATMAP, config=config,
                on_select=heatmap.pick_heatmap_cell, selection_mode="points")
heatmap.chosen_cell(table, result["axis"], split, folds, best, (rows_v, cols_v, mean, std),
                    result["optimism"])
heatmap.edge_warning(
    heatmap.grid_edges(best, mean), result["axis"], (rows_v, cols_v),
    lambda setting: axes_with({**extras, setting: heatmap.one_more_step(extras[setting])})[1:],
    heatmap.row_axis_limits(result["axis"], split.X_train.shape[0], folds), extras)
heatmap.heatmap_cell_view(split, result, folds, solver)
heatmap.cell_thumbnails(split, result, folds, best, rows_v, cols_v)
spread_over = " and ".join(["folds"] * bool(folds) + ["seeds"] * (table["seed"].nunique() > 1))
st.caption(CAPTIONS["heatmap" if result["axis"] == "m" else "heatmap_gamma"].format(
    value=value_label, spread=spread_over or "seeds (one here: no spread)"))

downloads = st.container(horizontal=True)
downloads.download_button("Download CSV", table.to_csv(index=False),
                          file_name="robustness.csv", mime="text/csv", icon=":material/table:")
downloads.download_button("Download figure (HTML)", figure.to_html(include_plotlyjs=True),
                          file_name="robustness.html", mime="text/html",
                          icon=":material/download:")
st.caption("For a PNG, use the camera button of the figure's toolbar.")
