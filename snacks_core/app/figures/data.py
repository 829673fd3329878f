"""The Data page's figures: class balance and the points of 2-D data."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from snacks_core.app.figures.style import apply_layout, class_colors, class_points_traces, dense


def class_balance_figure(train_counts, test_counts, *, height=260):
    """Rows per class in the training and test parts."""
    classes = list(dict.fromkeys([*train_counts, *test_counts]))
    colors = class_colors(classes)
    fig = go.Figure()
    for part, counts, pattern in (("train", train_counts, ""), ("test", test_counts, "/")):
        fig.add_trace(go.Bar(
            y=[str(c) for c in classes], x=[counts.get(c, 0) for c in classes], name=part,
            orientation="h", marker=dict(color=[colors[c] for c in classes],
                                         pattern_shape=pattern, line=dict(width=0)),
            hovertemplate=f"{part} · class %{{y}}: %{{x}} rows<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="rows")
    fig.update_yaxes(title="class", type="category")
    return apply_layout(fig, None, height)


def data_scatter_figure(X, y, *, classes, axis_titles=("x₁", "x₂"), title=None, height=460,
                        max_points=5000, random_state=0):
    """The points of 2-D data by class (a random subset beyond ``max_points``)."""
    X = dense(X)
    y = np.asarray(y)
    if X.shape[0] > max_points:
        keep = np.random.default_rng(random_state).choice(X.shape[0], max_points, replace=False)
        X, y = X[keep], y[keep]
    fig = go.Figure(class_points_traces(X, y, classes, class_colors(classes), name="points",
                                        symbol="circle", size=6, outline="white", hover="point"))
    fig.update_xaxes(title=axis_titles[0], zeroline=False)
    fig.update_yaxes(title=axis_titles[1], zeroline=False, scaleanchor="x", scaleratio=1)
    return apply_layout(fig, title, height)
