"""Plotly figure builders for the explorer: pure functions of arrays, no Streamlit.

Colours are fixed across figures so that a class, a solver or a landmark looks the same on
every page: class −1 (or the first class) is blue, class +1 red, landmarks gold stars.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import scipy.sparse as sp
from plotly.subplots import make_subplots

NEGATIVE_COLOR = "#2f6db5"
POSITIVE_COLOR = "#c8384a"
LANDMARK_COLOR = "#f4b400"
# Qualitative palette for multiclass data and for solvers.
PALETTE = ("#2f6db5", "#c8384a", "#2a9d5c", "#8e5cc4", "#e07b00", "#16a2b8", "#7a7a7a")
SOLVER_COLORS = {"snacks": "#c8384a", "pegasos": "#2f6db5", "liblinear": "#2a9d5c",
                 "libsvm": "#444444"}
# Decision-function colours: saturated enough to read, light enough for points on top.
DECISION_COLORSCALE = [(0.0, "#3a78c2"), (0.35, "#a9c8ea"), (0.5, "#f7f7f7"),
                       (0.65, "#f0b0b6"), (1.0, "#cc4456")]
# Colour range of the decision function: |f| beyond this is off the margin anyway.
DECISION_CLIP = 2.5
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=13)


def _layout(fig, title=None, height=520, legend_top=True):
    fig.update_layout(
        title=dict(text=title, x=0.01, xanchor="left") if title else None,
        template="plotly_white",
        font=FONT,
        height=height,
        margin=dict(l=60, r=20, t=70 if title else 40, b=55),
        legend=dict(orientation="h", yanchor="bottom", y=1.01, xanchor="left", x=0)
        if legend_top else None,
        hoverlabel=dict(font_size=12),
    )
    return fig


def class_colors(classes) -> dict:
    """Colour of each class label: blue/red for two classes, the palette beyond."""
    classes = list(classes)
    if len(classes) == 2:
        return {classes[0]: NEGATIVE_COLOR, classes[1]: POSITIVE_COLOR}
    return {c: PALETTE[k % len(PALETTE)] for k, c in enumerate(classes)}


# ---------------------------------------------------------------------------- decision boundary


@dataclass(frozen=True)
class DecisionSurface:
    """The decision function on a grid: ``scores[i, j]`` at (xs[j], ys[i]).

    Two classes: ``scores`` is (ny, nx) with f(x) itself; more classes: (ny, nx, K) with
    one score per one-vs-rest problem.
    """

    xs: np.ndarray
    ys: np.ndarray
    scores: np.ndarray


def decision_surface(model, X, resolution=150, padding=0.12) -> DecisionSurface:
    """Evaluate ``model.decision_function`` on a grid covering the 2-D points ``X``."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if X.shape[1] != 2:
        raise ValueError(f"a decision surface needs 2-D data, got {X.shape[1]} features.")
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = padding * np.maximum(hi - lo, 1e-9)
    xs = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    ys = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    gx, gy = np.meshgrid(xs, ys)
    scores = model.decision_function(np.column_stack([gx.ravel(), gy.ravel()]))
    shape = (resolution, resolution) if scores.ndim == 1 else (resolution, resolution, -1)
    return DecisionSurface(xs, ys, np.asarray(scores, dtype=np.float64).reshape(shape))


def _surface_traces(surface, classes):
    if surface.scores.ndim == 2:
        z = np.clip(surface.scores, -DECISION_CLIP, DECISION_CLIP)
        fill = go.Contour(
            x=surface.xs, y=surface.ys, z=z, zmin=-DECISION_CLIP, zmax=DECISION_CLIP,
            colorscale=DECISION_COLORSCALE, ncontours=21, line_width=0, opacity=0.85,
            colorbar=dict(title=dict(text="f(x)", side="right"), thickness=12, len=0.8),
            hovertemplate="x₁=%{x:.2f}<br>x₂=%{y:.2f}<br>f(x)=%{z:.2f}<extra></extra>",
            name="f(x)", showlegend=False)
        boundary = go.Contour(
            x=surface.xs, y=surface.ys, z=surface.scores, showscale=False,
            contours=dict(coloring="none", start=0, end=0, size=1),
            line=dict(color="#111111", width=2.5), hoverinfo="skip", name="f = 0",
            showlegend=True)
        margins = go.Contour(
            x=surface.xs, y=surface.ys, z=surface.scores, showscale=False,
            contours=dict(coloring="none", start=-1, end=1, size=2),
            line=dict(color="#333333", width=1.3, dash="dash"), hoverinfo="skip",
            name="margins f = ±1", showlegend=True)
        return [fill, boundary, margins]
    predicted = np.argmax(surface.scores, axis=2)
    k = surface.scores.shape[2]
    colors = [PALETTE[c % len(PALETTE)] for c in range(k)]
    scale = []
    for c, color in enumerate(colors):
        scale += [(c / k, color), ((c + 1) / k, color)]
    regions = go.Heatmap(
        x=surface.xs, y=surface.ys, z=predicted, zmin=-0.5, zmax=k - 0.5, colorscale=scale,
        opacity=0.28, showscale=False, hoverinfo="skip", name="predicted class")
    margin = np.sort(surface.scores, axis=2)
    gap = margin[:, :, -1] - margin[:, :, -2]
    boundary = go.Contour(
        x=surface.xs, y=surface.ys, z=gap, showscale=False,
        contours=dict(coloring="none", start=0.02, end=0.02, size=1),
        line=dict(color="#111111", width=2), hoverinfo="skip", name="class boundaries")
    return [regions, boundary]


def _points_trace(X, labels, classes, colors, *, name, symbol, size, outline, hover, opacity=1.0):
    traces = []
    for label in classes:
        rows = labels == label
        if not np.any(rows):
            continue
        traces.append(go.Scattergl(
            x=X[rows, 0], y=X[rows, 1], mode="markers", name=f"{name} · {label}",
            legendgroup=name,
            marker=dict(color=colors[label], symbol=symbol, size=size, opacity=opacity,
                        line=dict(color=outline, width=1)),
            hovertemplate=f"{hover} · class {label}<br>(%{{x:.2f}}, %{{y:.2f}})<extra></extra>"))
    return traces


def decision_boundary_figure(surface, X_train, y_train, X_test=None, y_test=None, *,
                             classes, train_pred=None, test_pred=None, landmarks=None,
                             axis_titles=("x₁", "x₂"), title=None, height=560):
    """Filled contour of f(x), the boundary f = 0 and margins f = ±1, the points by class
    (train: circles, test: diamonds), misclassified points crossed, landmarks as stars.

    For more than two classes the regions of the predicted class replace the contour.
    """
    dense = [None if A is None else (A.toarray() if sp.issparse(A) else np.asarray(A))
             for A in (X_train, X_test, landmarks)]
    X_train, X_test, landmarks = dense
    colors = class_colors(classes)
    fig = go.Figure(_surface_traces(surface, classes))
    for trace in _points_trace(X_train, y_train, classes, colors, name="train", symbol="circle",
                               size=7, outline="white", hover="train"):
        fig.add_trace(trace)
    if X_test is not None and len(X_test):
        for trace in _points_trace(X_test, y_test, classes, colors, name="test",
                                   symbol="diamond", size=8, outline="#222222", hover="test"):
            fig.add_trace(trace)
    wrong = []
    if train_pred is not None:
        wrong.append(X_train[train_pred != y_train])
    if test_pred is not None and X_test is not None:
        wrong.append(X_test[test_pred != y_test])
    if wrong:
        wrong = np.vstack(wrong)
        fig.add_trace(go.Scattergl(
            x=wrong[:, 0], y=wrong[:, 1], mode="markers", name=f"misclassified ({len(wrong)})",
            marker=dict(symbol="x-thin-open", size=11, color="#111111", line=dict(width=2.2)),
            hoverinfo="skip"))
    if landmarks is not None and len(landmarks):
        fig.add_trace(go.Scattergl(
            x=landmarks[:, 0], y=landmarks[:, 1], mode="markers",
            name=f"landmarks (m = {len(landmarks)})",
            marker=dict(symbol="star", size=14, color=LANDMARK_COLOR,
                        line=dict(color="#111111", width=1.2)),
            hovertemplate="landmark<br>(%{x:.2f}, %{y:.2f})<extra></extra>"))
    fig.update_xaxes(title=axis_titles[0], range=[surface.xs[0], surface.xs[-1]],
                     showgrid=False, zeroline=False)
    fig.update_yaxes(title=axis_titles[1], range=[surface.ys[0], surface.ys[-1]],
                     showgrid=False, zeroline=False, scaleanchor="x", scaleratio=1)
    return _layout(fig, title, height)
