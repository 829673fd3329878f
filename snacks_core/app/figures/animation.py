"""The decision function replayed over a solver's checkpoints (the Playground's 'watch it
learn')."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from snacks_core.app.figures.boundary import (
    clipped_scores,
    decision_fill,
    landmarks_trace,
    square_axes,
)
from snacks_core.app.figures.style import apply_layout, class_colors, class_points_traces, dense


def _animation_contours(xs, ys, scores):
    """A frame's traces: f(x) in the decision colours, and the lines f = −1, 0, +1
    labelled."""
    z = np.round(clipped_scores(scores), 3)
    return [
        decision_fill(xs, ys, z, showscale=False, hoverinfo="skip", showlegend=False),
        go.Contour(x=xs, y=ys, z=z, showscale=False, hoverinfo="skip",
                   name="f = −1, 0, +1", showlegend=True,
                   contours=dict(coloring="none", start=-1, end=1, size=1,
                                 showlabels=True, labelfont=dict(size=10)),
                   line=dict(color="#222222", width=1.5)),
    ]


def _error_marker(epochs, errors, k):
    """The marker of the error panel on checkpoint ``k``, its value beside it."""
    return go.Scatter(x=[epochs[k]], y=[errors[k]], mode="markers+text",
                      text=[f"{errors[k]:.1f} %"],
                      textposition="top right" if 2 * k < len(epochs) else "top left",
                      marker=dict(size=12, color="#d62728"), showlegend=False,
                      hoverinfo="skip", xaxis="x2", yaxis="y2")


def _add_error_panel(fig, xs, ys, frames):
    """Draw the held-out error against epochs in the second panel; return the frames, each
    moving the contours and the panel's marker."""
    epochs = [record["epoch"] for _, _, record in frames]
    errors = [100 * record["validation_error"] for _, _, record in frames]
    fig.add_trace(go.Scatter(x=epochs, y=errors, mode="lines+markers", name="test error",
                             line=dict(color="#777777", width=1.5), marker=dict(size=5),
                             showlegend=False,
                             hovertemplate="epoch %{x:.3g}: %{y:.1f} %<extra></extra>"),
                  row=1, col=2)
    fig.add_trace(_error_marker(epochs, errors, len(frames) - 1), row=1, col=2)
    marker = len(fig.data) - 1
    fig.update_xaxes(title="epochs", row=1, col=2)
    fig.update_yaxes(title="test error (%)", range=[0, 1.1 * max(errors + [1.0])],
                     row=1, col=2)
    return [go.Frame(data=_animation_contours(xs, ys, scores) + [_error_marker(epochs, errors, k)],
                     traces=[0, 1, marker], name=label)
            for k, (label, scores, _) in enumerate(frames)]


def _player_controls(labels):
    """Play/pause buttons and a slider whose steps are the frames named ``labels``."""
    steps = [dict(method="animate", label=label,
                  args=[[label], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                      transition=dict(duration=0))])
             for label in labels]
    play = dict(label="▶ Play", method="animate",
                args=[None, dict(frame=dict(duration=250, redraw=True), fromcurrent=True,
                                 mode="immediate")])
    pause = dict(label="❚❚ Pause", method="animate",
                 args=[[None], dict(frame=dict(duration=0, redraw=False), mode="immediate")])
    return dict(
        updatemenus=[dict(type="buttons", direction="left", x=0, y=-0.15, xanchor="left",
                          yanchor="top", pad=dict(r=10, t=10), buttons=[play, pause])],
        sliders=[dict(active=len(labels) - 1, steps=steps, x=0.18, len=0.82, y=-0.12,
                      currentvalue=dict(prefix="checkpoint: ", font=dict(size=12)))])


def boundary_animation_figure(xs, ys, frames, X_train, y_train, *, classes, landmarks=None,
                              axis_titles=("x₁", "x₂"), title=None, height=560,
                              error_panel=False):
    """The decision function replayed over solver checkpoints, with play/pause and a slider
    whose steps are the checkpoints.

    ``frames`` is a list of (label, scores) or (label, scores, record) with ``scores`` of
    shape (len(ys), len(xs)) and ``record`` the checkpoint's history row.  With
    ``error_panel`` (records needed) a second panel draws the held-out error against epochs,
    a marker following the frame shown.
    """
    if not frames:
        raise ValueError("no checkpoints to animate.")
    if error_panel:
        fig = make_subplots(rows=1, cols=2, column_widths=[0.62, 0.38], horizontal_spacing=0.1)
    else:
        fig = go.Figure()
    fig.add_traces(_animation_contours(xs, ys, frames[-1][1]))
    fig.add_traces(class_points_traces(dense(X_train), y_train, classes, class_colors(classes),
                                       name="train", symbol="circle", size=6, outline="white",
                                       hover="train"))
    if landmarks is not None:
        fig.add_trace(landmarks_trace(dense(landmarks), scatter=go.Scatter, name="landmarks",
                                      size=12, outline_width=1))
    if error_panel:
        fig.frames = _add_error_panel(fig, xs, ys, frames)
    else:
        fig.frames = [go.Frame(data=_animation_contours(xs, ys, scores), traces=[0, 1],
                               name=label) for label, scores, *_ in frames]
    fig.update_layout(**_player_controls([label for label, *_ in frames]))
    square_axes(fig, xs, ys, axis_titles, **(dict(row=1, col=1) if error_panel else {}))
    fig = apply_layout(fig, title, height)
    fig.update_layout(margin=dict(b=150))
    return fig
