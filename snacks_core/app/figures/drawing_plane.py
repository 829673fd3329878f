"""The plane a user draws points on (the Playground's drawing mode)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from snacks_core.app.figures.boundary import (
    MAX_TEST_POINTS,
    MAX_TRAIN_POINTS,
    BoundaryStyle,
    boundary_frame,
    decision_boundary_figure,
    sampled_points_traces,
    square_axes,
)
from snacks_core.app.figures.style import apply_layout, dense

# Spacing of the drawing plane's invisible click targets, in the plane's units.
CLICK_STEP = 0.02


def drawing_figure(surface, X_train, y_train, X_test=None, y_test=None, *, classes, plane,
                   train_pred=None, test_pred=None, landmarks=None, height=None,
                   click_step=CLICK_STEP):
    """The plane a user draws points on: the decision boundary of the model trained on them
    (``surface`` over the plane; None before a model exists, the points alone), and an
    invisible grid of click targets every ``click_step`` over the plane.

    A chart reports clicks on markers only: the grid makes a click anywhere on the plane a
    click on the grid point under it, whose coordinates say where the click was.  Zoom
    and pan are off, so that the plane stays put under the mouse.
    """
    low, high = plane
    if surface is not None:
        fig = decision_boundary_figure(surface, X_train, y_train, X_test, y_test,
                                       classes=classes, train_pred=train_pred,
                                       test_pred=test_pred, landmarks=landmarks,
                                       style=BoundaryStyle(height=height, legend_above=True))
    else:
        X_train = dense(X_train)
        fig = go.Figure(sampled_points_traces(
            X_train, np.asarray(y_train), dense(X_test),
            None if y_test is None else np.asarray(y_test), classes, size=9,
            max_train=MAX_TRAIN_POINTS, max_test=MAX_TEST_POINTS))
        fig = apply_layout(fig, None, height)
        fig.update_layout(**boundary_frame(BoundaryStyle(legend_above=True)))
        square_axes(fig, np.array([low, high]), np.array([low, high]), ("x₁", "x₂"))
        # With no decision function to fill it, the plane is shown by a tint and a grid.
        fig.update_layout(plot_bgcolor="#f3f5f9")
        fig.update_xaxes(showgrid=True, gridcolor="#dfe4ec")
        fig.update_yaxes(showgrid=True, gridcolor="#dfe4ec")
    # Bigger points than on a dataset's plot (each one was placed by hand), and smaller
    # landmark stars: every landmark is one of the training points, which must stay visible.
    fig.update_traces(marker_size=13, selector=dict(legendgroup="train"))
    fig.update_traces(marker_size=12, selector=dict(legendgroup="test"))
    fig.update_traces(marker_size=9, selector=dict(marker_symbol="star"))
    # A click selects its grid point; the other points keep their look meanwhile.
    fig.update_traces(unselected=dict(marker=dict(opacity=1.0)), selector=dict(mode="markers"))
    ticks = np.arange(low, high + click_step / 2, click_step)
    gx, gy = np.meshgrid(ticks, ticks)
    fig.add_trace(go.Scattergl(
        x=gx.ravel(), y=gy.ravel(), mode="markers", name="plane", showlegend=False,
        marker=dict(size=4, opacity=0.0, color="#000000"),
        selected=dict(marker=dict(opacity=0.0)), unselected=dict(marker=dict(opacity=0.0)),
        hoverinfo="none"))
    fig.update_xaxes(range=[low, high], fixedrange=True)
    fig.update_yaxes(range=[low, high], fixedrange=True)
    fig.update_layout(dragmode=False, hovermode="closest")
    return fig
