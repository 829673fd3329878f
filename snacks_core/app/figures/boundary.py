"""The decision function of one model (the Playground, a heatmap cell): its surface over
the plane and the boundary figure for 2-D data, the histogram of its values for any data."""

from __future__ import annotations

from dataclasses import dataclass

import contourpy
import numpy as np
import plotly.graph_objects as go

from snacks_core.app.figures.style import (
    DECISION_CLIP,
    DECISION_COLORSCALE,
    LANDMARK_COLOR,
    PALETTE,
    apply_layout,
    class_colors,
    class_points_traces,
    dense,
    point_trace_type,
    shown_count,
)


@dataclass(frozen=True)
class DecisionSurface:
    """The decision function on a grid: ``scores[i, j]`` at (xs[j], ys[i]).

    Two classes: ``scores`` is (ny, nx) with f(x) itself; more classes: (ny, nx, K) with
    one score per class (:meth:`~snacks_core.SnacksClassifier.decision_function`'s).
    """

    xs: np.ndarray
    ys: np.ndarray
    scores: np.ndarray


def decision_surface(model, X, resolution=150, padding=0.12) -> DecisionSurface:
    """Evaluate ``model.decision_function`` on a grid covering the 2-D points ``X``."""
    X = dense(X)
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


def clipped_scores(scores):
    """``scores`` within ±DECISION_CLIP, the range the decision colours span."""
    return np.clip(scores, -DECISION_CLIP, DECISION_CLIP)


def decision_fill(xs, ys, z, **options):
    """f(x) as an image in the decision colours; ``z`` clipped to ±DECISION_CLIP.

    A heatmap smoothed by the browser's own image scaling: one grid sent and drawn as one
    picture, where a filled contour made Plotly trace 21 levels' polygons in the visitor's
    browser (BENCHMARKS.md, 'First picture': the decision surface as an image)."""
    return go.Heatmap(x=xs, y=ys, z=z, zmin=-DECISION_CLIP, zmax=DECISION_CLIP,
                      colorscale=DECISION_COLORSCALE, zsmooth="fast", opacity=0.85, **options)


def level_lines(xs, ys, z, levels):
    """The curves f = level of the grid ``z`` (``z[i, j]`` at (xs[j], ys[i])) for each of
    ``levels``, as (x, y) arrays with NaN between curves, ready for one line trace."""
    generator = contourpy.contour_generator(xs, ys, np.asarray(z, dtype=np.float64),
                                            line_type=contourpy.LineType.Separate)
    curves = [curve for level in levels for curve in generator.lines(float(level))]
    if not curves:
        return np.empty(0), np.empty(0)
    gap = np.full((1, 2), np.nan)
    points = np.vstack([part for curve in curves for part in (curve, gap)][:-1])
    return points[:, 0], points[:, 1]


def surface_traces(surface, classes):
    """Two classes: f(x) shaded, the boundary f = 0 and the margins f = ±1; more classes:
    the regions of the predicted class."""
    if surface.scores.ndim == 2:
        # Float32 halves what a visitor downloads at no visible cost (BENCHMARKS.md, 'First
        # picture'); the curves f = 0 and f = ±1 are traced here, so the grid is sent once.
        scores = surface.scores.astype(np.float32, copy=False)
        fill = decision_fill(
            surface.xs, surface.ys, clipped_scores(scores),
            colorbar=dict(title=dict(text="f(x)", side="top"), orientation="v", thickness=10,
                          len=0.3, x=1.02, xanchor="left", y=0, yanchor="bottom"),
            hovertemplate="x₁=%{x:.2f}<br>x₂=%{y:.2f}<br>f(x)=%{z:.2f}<extra></extra>",
            name="f(x)", showlegend=False)
        line_x, line_y = level_lines(surface.xs, surface.ys, scores, [0.0])
        boundary = go.Scatter(
            x=line_x, y=line_y, mode="lines",
            line=dict(color="#111111", width=2.5), hoverinfo="skip", name="f = 0",
            showlegend=True)
        margin_x, margin_y = level_lines(surface.xs, surface.ys, scores, [-1.0, 1.0])
        margins = go.Scatter(
            x=margin_x, y=margin_y, mode="lines",
            line=dict(color="#333333", width=1.3, dash="dash"), hoverinfo="skip",
            name="margins f = ±1", showlegend=True)
        return [fill, boundary, margins]
    predicted = np.argmax(surface.scores, axis=2)
    n_classes = surface.scores.shape[2]
    scale = []
    for c in range(n_classes):
        color = PALETTE[c % len(PALETTE)]
        scale += [(c / n_classes, color), ((c + 1) / n_classes, color)]
    regions = go.Heatmap(
        x=surface.xs, y=surface.ys, z=predicted, zmin=-0.5, zmax=n_classes - 0.5,
        colorscale=scale, opacity=0.35, showscale=False, hoverinfo="skip",
        name="predicted class")
    return [regions]


# Beyond these counts a scatter hides the decision function under a blob of points: a
# class-stratified sample is drawn instead, and its size is said in the legend.
MAX_TRAIN_POINTS = 1500
MAX_TEST_POINTS = 600
MAX_CROSSES = 200


def stratified_sample(labels, max_points, random_state=0):
    """Row indices of at most ``max_points`` rows, each class keeping its share (at least
    one row per class), in increasing order; every row when there are few enough."""
    labels = np.asarray(labels)
    if labels.shape[0] <= max_points:
        return np.arange(labels.shape[0])
    rng = np.random.default_rng(random_state)
    keep = []
    for label in np.unique(labels):
        rows = np.flatnonzero(labels == label)
        count = max(1, round(max_points * rows.shape[0] / labels.shape[0]))
        keep.append(rng.choice(rows, min(count, rows.shape[0]), replace=False))
    return np.sort(np.concatenate(keep))


def landmarks_trace(landmarks, *, scatter, name, size, outline_width, hovertemplate=None):
    """The landmarks as gold stars."""
    return scatter(x=landmarks[:, 0], y=landmarks[:, 1], mode="markers", name=name,
                   marker=dict(symbol="star", size=size, color=LANDMARK_COLOR,
                               line=dict(color="#111111", width=outline_width)),
                   hovertemplate=hovertemplate)


def square_axes(fig, xs, ys, axis_titles, **subplot):
    """Equal scales on both axes over the grid, the plot area shrinking to the data instead
    of padding it; ``subplot`` (row, col) names the panel when there are several."""
    fig.update_xaxes(title=axis_titles[0], range=[xs[0], xs[-1]], showgrid=False,
                     zeroline=False, constrain="domain", **subplot)
    fig.update_yaxes(title=axis_titles[1], range=[ys[0], ys[-1]], showgrid=False,
                     zeroline=False, scaleanchor="x", scaleratio=1, constrain="domain",
                     **subplot)


def sampled_points_traces(X_train, y_train, X_test, y_test, classes, *, size, max_train,
                          max_test, scatter=go.Scattergl):
    """Training circles and test diamonds, each a class-stratified sample, as ``scatter``
    traces."""
    colors = class_colors(classes)
    train_rows = stratified_sample(y_train, max_train)
    traces = class_points_traces(X_train[train_rows], y_train[train_rows], classes, colors,
                                 name="train", symbol="circle", size=size, outline="white",
                                 hover="train", totals=y_train, scatter=scatter)
    if X_test is not None and len(X_test):
        test_rows = stratified_sample(y_test, max_test, random_state=1)
        traces += class_points_traces(X_test[test_rows], y_test[test_rows], classes, colors,
                                      name="test", symbol="diamond", size=size + 1,
                                      outline="#222222", hover="test", totals=y_test,
                                      scatter=scatter)
    return traces


def _misclassified_trace(X_train, y_train, train_pred, X_test, y_test, test_pred, *,
                         max_crosses, large, scatter):
    """Crosses on the misclassified points (a random sample of ``max_crosses`` beyond it),
    or None when no predictions are given."""
    wrong = []
    if train_pred is not None:
        wrong.append(X_train[np.asarray(train_pred) != y_train])
    if test_pred is not None and X_test is not None:
        wrong.append(X_test[np.asarray(test_pred) != y_test])
    if not wrong:
        return None
    wrong = np.vstack(wrong)
    total = wrong.shape[0]
    if total > max_crosses:
        wrong = wrong[np.sort(np.random.default_rng(2).choice(total, max_crosses,
                                                               replace=False))]
    return scatter(
        x=wrong[:, 0], y=wrong[:, 1], mode="markers",
        name=f"misclassified ({shown_count(total, wrong.shape[0])})",
        marker=dict(symbol="x-thin-open", size=9 if large else 11, color="#111111",
                    line=dict(width=1.8 if large else 2.2)),
        hoverinfo="skip")


# The room above the plot for a legend above it (three rows of items at the widths the
# Playground's column has): reserved, not left to Plotly's automatic margins, which on a
# short figure (1024 × 768) drew the legend over the top of the square plot.
LEGEND_ABOVE_MARGIN = 70


def boundary_frame(style):
    """The margins and the legend of a boundary figure in ``style``: above the plot, the
    title's room and the legend's when it sits above."""
    top = (40 if style.title else 10) + (LEGEND_ABOVE_MARGIN if style.legend_above else 0)
    return dict(margin=dict(l=50, r=10, t=top, b=45),
                legend=boundary_legend(style.legend_above))


def boundary_legend(legend_above):
    """The legend in rows above the plot (a column no wider than the plot), or beside it."""
    if legend_above:
        # At the top of the figure (its container), in the room boundary_frame keeps.
        return dict(orientation="h", x=0, xanchor="left", y=1, yanchor="top", yref="container",
                    font=dict(size=11), traceorder="normal", tracegroupgap=0)
    return dict(orientation="v", x=1.02, xanchor="left", y=1, yanchor="top",
                font=dict(size=12))


@dataclass(frozen=True)
class BoundaryStyle:
    """How :func:`decision_boundary_figure` is drawn: titles, size, legend, point caps.

    Attributes
    ----------
    axis_titles : tuple of 2 str
        Titles of the x and y axes.
    title : str or None
        The figure's title.
    height : int or None
        Height in pixels; None leaves it to the page (a chart stretched to its
        container's).
    legend_above : bool
        The legend in rows above the plot (columns whose width the square plot should
        fill), rather than beside it.
    max_train, max_test, max_crosses : int
        Large data is drawn as a class-stratified sample of ``max_train`` training and
        ``max_test`` test points and at most ``max_crosses`` crosses, with the counts in
        the legend.
    """

    axis_titles: tuple = ("x₁", "x₂")
    title: str | None = None
    height: int | None = 680
    legend_above: bool = False
    max_train: int = MAX_TRAIN_POINTS
    max_test: int = MAX_TEST_POINTS
    max_crosses: int = MAX_CROSSES


def decision_boundary_figure(surface, X_train, y_train, X_test=None, y_test=None, *,
                             classes, train_pred=None, test_pred=None, landmarks=None,
                             style=BoundaryStyle()):
    """f(x) in the decision colours, the boundary f = 0 and margins f = ±1, the points by class
    (train: circles, test: diamonds), misclassified points crossed, landmarks as stars.

    For more than two classes the regions of the predicted class replace f(x).
    ``style`` (:class:`BoundaryStyle`) sets the titles, the height, where the legend sits
    and how many points large data shows; the landmarks are always all drawn, on top.
    """
    max_train, max_test = style.max_train, style.max_test
    X_train, X_test, landmarks = dense(X_train), dense(X_test), dense(landmarks)
    y_train = np.asarray(y_train)
    y_test = None if y_test is None else np.asarray(y_test)
    fig = go.Figure(surface_traces(surface, classes))
    n_test = 0 if X_test is None else len(X_test)
    large = X_train.shape[0] > max_train or n_test > max_test
    scatter = point_trace_type(min(X_train.shape[0], max_train) + min(n_test, max_test)
                               + style.max_crosses
                               + (0 if landmarks is None else len(landmarks)))
    fig.add_traces(sampled_points_traces(X_train, y_train, X_test, y_test, classes,
                                         size=5 if large else 7, max_train=max_train,
                                         max_test=max_test, scatter=scatter))
    crosses = _misclassified_trace(X_train, y_train, train_pred, X_test, y_test, test_pred,
                                   max_crosses=style.max_crosses, large=large, scatter=scatter)
    if crosses is not None:
        fig.add_trace(crosses)
    if landmarks is not None and len(landmarks):
        fig.add_trace(landmarks_trace(
            landmarks, scatter=scatter, name=f"landmarks (m = {len(landmarks)})",
            size=14 if large else 12, outline_width=1.2,
            hovertemplate="landmark<br>(%{x:.2f}, %{y:.2f})<extra></extra>"))
    fig = apply_layout(fig, style.title, style.height)
    # Legend above or beside the square plot and the colour bar right beside it: nothing
    # below, so a figure as tall as its column is wide keeps the plot square and no gap
    # opens between the plot and the colour bar.
    fig.update_layout(**boundary_frame(style))
    square_axes(fig, surface.xs, surface.ys, style.axis_titles)
    # A figure wider than the square plot leaves the room on the left, not between the
    # plot and its colour bar.
    fig.update_xaxes(constraintoward="right")
    return fig


def rename_test_points(fig, name):
    """A :func:`decision_boundary_figure` whose test points are called ``name`` instead, in
    the legend and on hover (a fold's held-out rows: 'validation')."""
    def rename(trace):
        trace.update(name=trace.name.replace("test", name, 1), legendgroup=name,
                     hovertemplate=trace.hovertemplate.replace("test", name, 1))

    return fig.for_each_trace(rename, selector=dict(legendgroup="test"))


def margin_histogram_figure(scores, y, *, classes, height=420, rows="test rows"):
    """Histogram of decision values by true class, with the boundary and margins marked.

    ``scores`` is a value a row (:meth:`~snacks_core.SnacksClassifier.margin_values`: for
    more than two classes the predicted class's); ``rows`` names the rows scored, in the
    axis title.
    """
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    colors = class_colors(classes)
    fig = go.Figure()
    for label in classes:
        values = scores[np.asarray(y) == label]
        fig.add_trace(go.Histogram(x=values, name=f"class {label}", opacity=0.7,
                                   marker_color=colors[label], nbinsx=40))
    for x, dash in ((0, "solid"), (-1, "dash"), (1, "dash")):
        fig.add_vline(x=x, line=dict(color="#222222", dash=dash, width=1.5 if x else 2))
    fig.update_layout(barmode="overlay")
    fig.update_xaxes(title=f"decision value f(x) on the {rows}")
    fig.update_yaxes(title="rows")
    return apply_layout(fig, None, height)
