"""The Playground's drawing plane: click to add points of a class or erase them, and see
the model trained on them at once.

The points are the ``points`` setting (their text form, in the URL like any setting); a
click on the plane lands on a grid point of
:func:`snacks_core.app.figures.drawing_plane.drawing_figure`, whose coordinates a callback
turns into an edit before the next run.  The chart's key
counts the clicks handled, so that each run draws a chart with no selection: a second
click on the same spot is a new selection, not the old one repeated.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from sklearn.pipeline import make_pipeline

from snacks_core.app import cached, run_view
from snacks_core.app.figures.boundary import decision_surface
from snacks_core.app.figures.drawing_plane import drawing_figure
from snacks_core.app.state import Keys, current
from snacks_core.app.teaching import CAPTIONS, HELP
from snacks_core.datasets.drawn import (
    CLASSES,
    EXAMPLE_POINTS,
    MAX_POINTS,
    PLANE,
    add_point,
    decode_points,
    describe_points,
    encode_points,
    erase_nearest,
    held_out_mask,
    holdout_period,
    missing_points,
    ordinal,
    points_csv,
)

MODES = {"A": "Add class A", "B": "Add class B", "erase": "Erase"}


def points():
    """The drawing, as a list of (label, x1, x2)."""
    return decode_points(current("points"))


def _chart_key():
    return f"drawing_plane_{st.session_state.get(Keys.DRAW_CLICKS, 0)}"


def _set_points(drawing):
    st.session_state["points"] = encode_points(drawing)
    st.session_state[Keys.DRAW_CLICKS] = st.session_state.get(Keys.DRAW_CLICKS, 0) + 1


def _on_click():
    """Add a point where the plane was clicked, or erase the one nearest to it."""
    # Called before the next run, while the key still names the chart clicked.
    selected = st.session_state[_chart_key()].selection.points
    if not selected:
        return
    x1, x2 = float(selected[0]["x"]), float(selected[0]["y"])
    mode = st.session_state.get(Keys.DRAW_MODE) or "A"
    drawing = points()
    if mode == "erase":
        _set_points(erase_nearest(drawing, x1, x2))
    elif len(drawing) < MAX_POINTS:
        _set_points(add_point(drawing, mode, x1, x2))


def _clear():
    _set_points([])


def _example():
    _set_points(decode_points(EXAMPLE_POINTS))


def controls():
    """What a click does (add A, add B, erase), Clear, the example points, the CSV, and how
    many points there are of each class."""
    drawing = points()
    with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
        st.segmented_control("A click on the plane", list(MODES), format_func=MODES.get,
                             default="A", required=True, key=Keys.DRAW_MODE,
                             help=HELP["draw_mode"])
        st.button("Clear", key="drawing_clear", on_click=_clear, icon=":material/delete:",
                  help="Remove every point.")
        st.button("Example", key="drawing_example", on_click=_example,
                  icon=":material/restart_alt:", help="Start again from the example points.")
        st.download_button("CSV", points_csv(drawing), file_name="drawn_points.csv",
                           mime="text/csv", key="drawing_csv", icon=":material/download:",
                           on_click="ignore",
                           help="The points as CSV (x1, x2, label): upload it on the Data "
                                "page to use it as a file.")
    st.markdown(f"**{describe_points(drawing)}**"
                + (" (the most a drawing holds: erase some to add more)"
                   if len(drawing) >= MAX_POINTS else ""))


def not_ready_reason(test_size):
    """Why the drawing cannot train a model yet, or None."""
    missing = missing_points(points(), test_size)
    if not missing:
        return None
    period = holdout_period(test_size)
    return ("Training needs at least " + f"{period} points of each class: add "
            + " and ".join(f"{n} more of class {label}" for label, n in missing.items())
            + f". Every {ordinal(period)} point you add to a class is held out to measure "
            "the test error.")


@st.cache_data(max_entries=16, show_spinner=False)
def _plane_surface(data_key, model_key, _split, _model):
    # The model learned on scaled points; the plane shows them where they were drawn.
    corners = np.array([[PLANE[0], PLANE[0]], [PLANE[1], PLANE[1]]])
    return decision_surface(make_pipeline(*_split.preprocessing, _model), corners,
                            resolution=cached.SURFACE_RESOLUTION, padding=0.0)


def _to_plane(split, Z):
    """Rows of the model's (scaled) space back on the drawing plane."""
    for step in reversed(split.preprocessing):
        Z = step.inverse_transform(Z)
    return Z


def plane(request=None, split=None, params=None, run=None):
    """The drawing plane with the points, and the model trained on them when there is one;
    a click on it edits the drawing."""
    drawing = points()
    classes = np.array(CLASSES)
    if run is None:
        X = np.array([(p[1], p[2]) for p in drawing]).reshape(-1, 2)
        y = np.array([p[0] for p in drawing])
        test = held_out_mask(drawing, current("test_size"))
        figure = drawing_figure(None, X[~test], y[~test], X[test], y[test],
                                classes=classes, plane=PLANE)
    else:
        dataset = cached.load_dataset(request)
        landmarks = run_view.landmarks_of(run)
        figure = drawing_figure(
            _plane_surface(request.key(), cached.params_key(params), split, run.model),
            dataset.X, dataset.y, dataset.X_test, dataset.y_test, classes=classes,
            plane=PLANE, train_pred=run.metrics["train_pred"],
            test_pred=run.metrics["test_pred"],
            landmarks=None if landmarks is None else _to_plane(split, landmarks))
    with st.container(key="drawing_figure"):
        st.plotly_chart(figure, width="stretch", height="stretch", key=_chart_key(),
                        on_select=_on_click, selection_mode="points")
    period = holdout_period(current("test_size"))
    st.caption(CAPTIONS["drawing"].format(period=ordinal(period)))
