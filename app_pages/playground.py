"""Playground: train on the chosen data and see the decision boundary, landmarks and metrics;
or draw the data point by point on a plane."""

import streamlit as st

from snacks_core.app import (
    auto_tune,
    cached,
    drawing,
    export,
    lessons,
    run_view,
    training,
    user_errors,
)
from snacks_core.app.state import Keys, current
from snacks_core.app.teaching import CAPTIONS, HELP, solver_label

st.title("Playground")
st.caption("Pick data, a kernel, the number of landmarks m and the regularization λ in the "
           "sidebar; the kernel SVM is trained on a Nyström embedding of m landmarks.")
lessons.lesson_banner()

drawn = cached.data_request().dataset == cached.DRAWN_OPTION


def _columns():
    """The picture and the notes beside it (below it on a narrow screen, see app.py)."""
    with st.container(key="playground_columns"):
        return st.columns([7, 3], gap="medium")


if drawn:
    waiting = drawing.not_ready_reason(current("test_size"))
    if waiting is not None:
        # Above the plane, where a narrow screen shows it too; the plane keeps the size it
        # will have beside the notes once a model is trained.
        st.info(waiting, icon=":material/ads_click:")
        picture, _ = _columns()
        with picture:
            drawing.controls()
            drawing.plane()
        st.stop()

request, split = user_errors.load_split_or_stop()
params = cached.model_params()
# Settings as Auto-tune chose them stand for a click on Train.
if not (training.tuned_settings_hold(request)
        or training.training_gate("playground", split, params)):
    if drawn:
        drawing.controls()
        drawing.plane()
    st.stop()
run = training.train_or_stop(request, split, params)
run_view.metrics_row(run, split)

classes = run_view.class_names(split)
picture, notes = _columns()
with picture:
    if drawn:
        drawing.controls()
        drawing.plane(request, split, params, run)
    else:
        if split.n_features != 2:
            st.info(f"{split.name} has {split.n_features} features, so there is no boundary "
                    "to draw. Tick **Train on a 2-D PCA projection** in the sidebar to see one "
                    "(the model then learns from the projection only).", icon=":material/info:")
        elif split.projection:
            # Above the figure rather than in it: a figure title would run into the legend.
            st.markdown(f"**{split.projection}**")
        run_view.decision_view(request, split, params, run, key_prefix="",
                              boundary_height=None, margins_height=run_view.MARGINS_HEIGHT)
with notes:
    st.markdown("**How to read it**")
    if split.n_features != 2:
        st.caption(CAPTIONS["margins"])
    elif drawn:
        st.caption(CAPTIONS["drawing_boundary"])
    elif len(classes) == 2:
        st.caption(CAPTIONS["boundary"])
    else:
        st.caption(CAPTIONS["boundary_multiclass"])
    run_view.run_facts(run, split)
    auto_tune.auto_tune_section(request, split, params)
    st.markdown("**Try this**")
    run_view.try_this_hints(run, split)

# Across the page: at 1400 px the notes column is too narrow for its columns.
auto_tune.tried_table(request, split, run)

# Built only when asked for: the animation is the page's costliest figure to redraw.
if split.n_features == 2 and run.checkpoints and st.toggle(
        "Watch it learn: the boundary and the test error, epoch by epoch",
        key=Keys.WATCH_LEARNING, help=HELP["watch_learning"]):
    with st.container(border=True):
        run_view.boundary_replay(request, split, params, run, key="learning", error_panel=True,
                                height=520)
        st.caption(CAPTIONS["learning"].format(solver=solver_label(params["solver"])))

export.export_section(request, split, params, run)
