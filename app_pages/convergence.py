"""Convergence: objective, gap to the best value and test error of several solvers overlaid."""

import streamlit as st

from snacks_core.app import (
    cached,
    lessons,
    run_view,
    state,
    training,
    user_errors,
)
from snacks_core.app.figures.convergence import convergence_figure
from snacks_core.app.teaching import CAPTIONS, HELP, solver_label

st.title("Convergence")
st.caption("Several solvers on the same Nyström embedding (same landmarks, same λ): how fast "
           "does each one drive the objective F(w) down, and when does the test error settle?")
lessons.lesson_banner()

request, split = user_errors.load_split_or_stop()
params = cached.model_params()
left, right = st.columns([3, 2])
solvers = training.solver_multiselect("conv_solvers", left)
right.segmented_control("x axis", state.CONVERGENCE_AXES, key="conv_axis",
                        help=HELP["conv_axis"])
runs = training.train_solvers("convergence", request, split, params, solvers)
histories = {solver: run_view.first_problem(run.model.history_) for solver, run in runs.items()}
classes = run_view.class_names(split)
if len(classes) > 2:
    pairs = [solver_label(s) for s, run in runs.items() if run.model.multiclass_ == "ovo"]
    rest = [solver_label(s) for s, run in runs.items() if run.model.multiclass_ != "ovo"]
    parts = ([f"{', '.join(pairs)}: {classes[0]} against {classes[1]} (one-vs-one)"]
             if pairs else []) + ([f"{', '.join(rest)}: {classes[0]} against the rest "
                                   "(one-vs-rest)"] if rest else [])
    st.caption(f"{len(classes)} classes: curves of each solver's first two-class problem; "
               f"{'; '.join(parts)}.")
figure = convergence_figure(histories, x_axis=state.current("conv_axis") or "epoch",
                            labels={solver: solver_label(solver) for solver in runs})
st.plotly_chart(figure, width="stretch", key="convergence")
st.caption(CAPTIONS["convergence"])
single = [solver_label(s) for s, history in histories.items() if len(history["objective"]) == 1]
if single:
    st.caption(f"{', '.join(single)}: one checkpoint only (the solver records no history "
               "along the way), drawn as a single diamond at its end.")

cols = st.columns(len(runs))
for col, (solver, run) in zip(cols, runs.items(), strict=True):
    metrics = run.metrics
    length = (f"{metrics['epochs']:.3g} epochs" if metrics["epochs"] is not None
              else f"{metrics['iterations']:,} iterations")
    col.metric(solver_label(solver), f"F = {metrics['objective']:.5g}",
               delta=f"{length}, stopped by {metrics['stop']}", delta_color="off",
               delta_arrow="off", help=f"Training time {metrics['training_time']:.3f} s"
                    + (" (from cache: measured when first trained)."
                       if training.from_cache(run) else "."))

animated = [s for s, run in runs.items() if run.checkpoints]
if split.n_features == 2 and animated:
    st.subheader("The boundary as the solver converges")
    solver = st.radio("Replay", animated, horizontal=True, format_func=solver_label,
                      key=state.Keys.CONV_REPLAY)
    run_view.boundary_replay(request, split, {**params, "solver": solver}, runs[solver],
                            key="animation")
    st.caption(CAPTIONS["animation"])
