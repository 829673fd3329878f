"""Robustness heatmap: test error over an (m, λ) or (γ, λ) grid, several seeds per cell."""

import numpy as np
import streamlit as st

from snacks_core import figures
from snacks_core.objective import lam_to_C
from snacks_core.sweeps import summarize_grid
from snacks_core.ui import cached, pipeline, state, widgets
from snacks_core.ui.state import Keys
from snacks_core.ui.text import CAPTIONS, HELP, solver_label

widgets.require_entry_point("robustness")
st.title("Robustness heatmap")
st.caption("Is there a wide region of good settings, or a narrow ridge? Each cell trains the "
           "model once per seed and shows the mean test error (± spread over seeds).")
widgets.lesson_banner()

request, split = widgets.load_split_or_stop()
params = cached.model_params()
a, b, c = st.columns(3)
a.segmented_control("Grid", state.GRIDS, key="rob_grid", help=HELP["rob_grid"])
b.slider("Values per axis", 2, 8, key="rob_size", help=HELP["rob_size"])
c.slider("Seeds per cell", 1, 5, key="rob_seeds", help=HELP["rob_seeds"])
kind = state.current("rob_grid") or state.GRIDS[0]
try:
    axis, axis_values, lams = pipeline.grid_axes(kind, params, split.X_train,
                                                 state.current("rob_size"))
except widgets.USER_ERRORS as exc:
    widgets.show_error(exc)
    st.stop()
seeds = [request.seed + k for k in range(state.current("rob_seeds"))]
n_fits = len(axis_values) * len(lams) * len(seeds)
key = (request.key(), repr(sorted(params.items())), kind, tuple(axis_values), tuple(lams),
       tuple(seeds))
solver = pipeline.grid_solver(params)
notes = [f"{len(axis_values)} × {len(lams)} cells × {len(seeds)} seeds = {n_fits} fits with "
         f"{solver_label(solver)}; the other sidebar settings stay fixed. Cells share "
         "landmarks and kernel blocks, and each λ starts from the previous one's solution."]
if solver != params["solver"]:
    notes.append("The exact solver has no landmarks to vary: the grid uses Snacks.")
if params["class_weight"]:
    notes.append("Class weights are not applied in the grid.")
st.caption(" ".join(notes) + " Stop a long sweep with the Stop button at the top right.")

if st.button("Run sweep", type="primary", icon=":material/grid_on:", key="run_sweep"):
    bar = st.progress(0.0, text="Starting…")
    try:
        table = pipeline.robustness(
            split, params, axis, axis_values, lams, seeds,
            progress=lambda fraction, text: bar.progress(fraction, text=text))
    except widgets.USER_ERRORS as exc:
        widgets.show_error(exc)
        st.stop()
    bar.empty()
    st.session_state[Keys.GRID_RESULT] = {"key": key, "table": table, "axis": axis}

result = st.session_state.get(Keys.GRID_RESULT)
if not result or result["key"] != key:
    st.info("Click **Run sweep** to fill the grid.", icon=":material/info:")
    st.stop()

LABELS = {"m": "landmarks m", "lam": "λ", "gamma": "γ"}
table = result["table"]
rows_v, cols_v, mean, std, seconds = summarize_grid(table, rows=result["axis"], columns="lam")
figure = figures.heatmap_figure(rows_v, cols_v, mean, std, seconds,
                                row_label=LABELS[result["axis"]], col_label="λ")
config = {"toImageButtonOptions": {"format": "png", "filename": "snacks_robustness", "scale": 2}}
st.plotly_chart(figure, width="stretch", key="heatmap", config=config)
i, j = np.unravel_index(np.nanargmin(mean), mean.shape)
n_train = split.X_train.shape[0]
st.success(f"Best cell: {LABELS[result['axis']]} = {rows_v[i]:g}, λ = {cols_v[j]:g} "
           f"(C = {lam_to_C(cols_v[j], n_train):.3g}): test error "
           f"{100 * mean[i, j]:.1f} % ± {100 * std[i, j]:.1f}.", icon=":material/star:")
st.caption(CAPTIONS["heatmap"])

left, middle, _ = st.columns([1, 1, 2])
left.download_button("Download CSV", table.to_csv(index=False), file_name="robustness.csv",
                     mime="text/csv", icon=":material/table:")
middle.download_button("Download figure (HTML)", figure.to_html(include_plotlyjs=True),
                       file_name="robustness.html", mime="text/html",
                       icon=":material/download:")
st.caption("For a PNG, use the camera button of the figure's toolbar.")
