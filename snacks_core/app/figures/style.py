"""What every figure shares, so that a class, a solver or a landmark looks the same on
every page: colours (class −1 or the first class blue, class +1 red, landmarks gold stars),
the layout, and points drawn by class."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import scipy.sparse as sp

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


def apply_layout(fig, title=None, height=520, legend_top=True):
    """The look every figure shares: template, font, title, margins, a legend above."""
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


def dense(A):
    """``A`` as a dense array (None stays None): the figures draw coordinates, not CSR rows."""
    if A is None:
        return None
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def class_points_traces(X, labels, classes, colors, *, name, symbol, size, outline, hover,
                        opacity=1.0, totals=None, scatter=go.Scattergl):
    """One trace per class; ``totals`` (all the labels, when ``labels`` is a sample) puts
    the class's full count beside the number drawn in the legend; ``scatter`` the trace
    type (:func:`point_trace_type`)."""
    traces = []
    for label in classes:
        rows = labels == label
        if not np.any(rows):
            continue
        legend = f"{name} · {label}"
        if totals is not None:
            total = int(np.sum(np.asarray(totals) == label))
            if total != int(np.sum(rows)):
                legend += f" ({shown_count(total, int(np.sum(rows)))})"
        traces.append(scatter(
            x=X[rows, 0], y=X[rows, 1], mode="markers", name=legend,
            legendgroup=name,
            marker=dict(color=colors[label], symbol=symbol, size=size, opacity=opacity,
                        line=dict(color=outline, width=1)),
            hovertemplate=f"{hover} · class {label}<br>(%{{x:.2f}}, %{{y:.2f}})<extra></extra>"))
    return traces


# Up to this many markers a figure draws them in SVG: a browser draws a few hundred
# markers sooner in SVG than it starts WebGL, the larger part of a new visitor's first
# picture in a browser without a GPU (BENCHMARKS.md, "First picture"); beyond it, WebGL.
SVG_MAX_POINTS = 1000


def point_trace_type(n_points):
    """``go.Scatter`` (SVG) for a figure of at most SVG_MAX_POINTS markers in all, else
    ``go.Scattergl``: one type for all of a figure's markers, which WebGL would otherwise
    draw over the SVG ones whatever their order."""
    return go.Scatter if n_points <= SVG_MAX_POINTS else go.Scattergl


def shown_count(total, shown):
    """'1,500' when every row is drawn, else '1,500 of 50,000 shown' (legends)."""
    return f"{total:,}" if shown == total else f"{shown:,} of {total:,} shown"


def tick_label(value):
    """A grid value as an axis or title shows it."""
    return f"{value:g}"
