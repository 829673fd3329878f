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

from snacks_core.model.sweeps import GRID_AXIS_SYMBOLS

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


def _dense(A):
    """``A`` as a dense array (None stays None): the figures draw coordinates, not CSR rows."""
    if A is None:
        return None
    return A.toarray() if sp.issparse(A) else np.asarray(A)


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
    X = _dense(X)
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


def _clipped(scores):
    return np.clip(scores, -DECISION_CLIP, DECISION_CLIP)


def _decision_fill(xs, ys, z, **options):
    """The filled contour of f(x) in the decision colours; ``z`` clipped to ±DECISION_CLIP."""
    return go.Contour(x=xs, y=ys, z=z, zmin=-DECISION_CLIP, zmax=DECISION_CLIP,
                      colorscale=DECISION_COLORSCALE, ncontours=21, line_width=0, opacity=0.85,
                      **options)


def _surface_traces(surface, classes):
    if surface.scores.ndim == 2:
        # Float32 halves what a visitor downloads (the contours carry the grid three times)
        # at no visible cost (BENCHMARKS.md, 'First picture').
        scores = surface.scores.astype(np.float32, copy=False)
        fill = _decision_fill(
            surface.xs, surface.ys, _clipped(scores),
            colorbar=dict(title=dict(text="f(x)", side="top"), orientation="v", thickness=10,
                          len=0.3, x=1.02, xanchor="left", y=0, yanchor="bottom"),
            hovertemplate="x₁=%{x:.2f}<br>x₂=%{y:.2f}<br>f(x)=%{z:.2f}<extra></extra>",
            name="f(x)", showlegend=False)
        boundary = go.Contour(
            x=surface.xs, y=surface.ys, z=scores, showscale=False,
            contours=dict(coloring="none", start=0, end=0, size=1),
            line=dict(color="#111111", width=2.5), hoverinfo="skip", name="f = 0",
            showlegend=True)
        margins = go.Contour(
            x=surface.xs, y=surface.ys, z=scores, showscale=False,
            contours=dict(coloring="none", start=-1, end=1, size=2),
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


def _points_trace(X, labels, classes, colors, *, name, symbol, size, outline, hover, opacity=1.0,
                  totals=None):
    """One trace per class; ``totals`` (all the labels, when ``labels`` is a sample) puts
    the class's full count beside the number drawn in the legend."""
    traces = []
    for label in classes:
        rows = labels == label
        if not np.any(rows):
            continue
        legend = f"{name} · {label}"
        if totals is not None:
            total = int(np.sum(np.asarray(totals) == label))
            if total != int(np.sum(rows)):
                legend += f" ({_shown(total, int(np.sum(rows)))})"
        traces.append(go.Scattergl(
            x=X[rows, 0], y=X[rows, 1], mode="markers", name=legend,
            legendgroup=name,
            marker=dict(color=colors[label], symbol=symbol, size=size, opacity=opacity,
                        line=dict(color=outline, width=1)),
            hovertemplate=f"{hover} · class {label}<br>(%{{x:.2f}}, %{{y:.2f}})<extra></extra>"))
    return traces


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


def _shown(total, shown):
    return f"{total:,}" if shown == total else f"{shown:,} of {total:,} shown"


def _landmarks_trace(landmarks, *, scatter, name, size, outline_width, hovertemplate=None):
    """The landmarks as gold stars."""
    return scatter(x=landmarks[:, 0], y=landmarks[:, 1], mode="markers", name=name,
                   marker=dict(symbol="star", size=size, color=LANDMARK_COLOR,
                               line=dict(color="#111111", width=outline_width)),
                   hovertemplate=hovertemplate)


def _square_axes(fig, xs, ys, axis_titles, **subplot):
    """Equal scales on both axes over the grid, the plot area shrinking to the data instead
    of padding it; ``subplot`` (row, col) names the panel when there are several."""
    fig.update_xaxes(title=axis_titles[0], range=[xs[0], xs[-1]], showgrid=False,
                     zeroline=False, constrain="domain", **subplot)
    fig.update_yaxes(title=axis_titles[1], range=[ys[0], ys[-1]], showgrid=False,
                     zeroline=False, scaleanchor="x", scaleratio=1, constrain="domain",
                     **subplot)


def _sampled_points_traces(X_train, y_train, X_test, y_test, classes, *, size, max_train,
                           max_test):
    """Training circles and test diamonds, each a class-stratified sample."""
    colors = class_colors(classes)
    train_rows = stratified_sample(y_train, max_train)
    traces = _points_trace(X_train[train_rows], y_train[train_rows], classes, colors,
                           name="train", symbol="circle", size=size, outline="white",
                           hover="train", totals=y_train)
    if X_test is not None and len(X_test):
        test_rows = stratified_sample(y_test, max_test, random_state=1)
        traces += _points_trace(X_test[test_rows], y_test[test_rows], classes, colors,
                                name="test", symbol="diamond", size=size + 1,
                                outline="#222222", hover="test", totals=y_test)
    return traces


def _misclassified_trace(X_train, y_train, train_pred, X_test, y_test, test_pred, *,
                         max_crosses, large):
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
    return go.Scattergl(
        x=wrong[:, 0], y=wrong[:, 1], mode="markers",
        name=f"misclassified ({_shown(total, wrong.shape[0])})",
        marker=dict(symbol="x-thin-open", size=9 if large else 11, color="#111111",
                    line=dict(width=1.8 if large else 2.2)),
        hoverinfo="skip")


def _boundary_legend(legend_above):
    """The legend in rows above the plot (a column no wider than the plot), or beside it."""
    if legend_above:
        return dict(orientation="h", x=0, xanchor="left", y=1.01, yanchor="bottom",
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
    """Filled contour of f(x), the boundary f = 0 and margins f = ±1, the points by class
    (train: circles, test: diamonds), misclassified points crossed, landmarks as stars.

    For more than two classes the regions of the predicted class replace the contour.
    ``style`` (:class:`BoundaryStyle`) sets the titles, the height, where the legend sits
    and how many points large data shows; the landmarks are always all drawn, on top.
    """
    max_train, max_test = style.max_train, style.max_test
    X_train, X_test, landmarks = _dense(X_train), _dense(X_test), _dense(landmarks)
    y_train = np.asarray(y_train)
    y_test = None if y_test is None else np.asarray(y_test)
    fig = go.Figure(_surface_traces(surface, classes))
    large = X_train.shape[0] > max_train or (X_test is not None and len(X_test) > max_test)
    fig.add_traces(_sampled_points_traces(X_train, y_train, X_test, y_test, classes,
                                          size=5 if large else 7, max_train=max_train,
                                          max_test=max_test))
    crosses = _misclassified_trace(X_train, y_train, train_pred, X_test, y_test, test_pred,
                                   max_crosses=style.max_crosses, large=large)
    if crosses is not None:
        fig.add_trace(crosses)
    if landmarks is not None and len(landmarks):
        fig.add_trace(_landmarks_trace(
            landmarks, scatter=go.Scattergl, name=f"landmarks (m = {len(landmarks)})",
            size=14 if large else 12, outline_width=1.2,
            hovertemplate="landmark<br>(%{x:.2f}, %{y:.2f})<extra></extra>"))
    fig = _layout(fig, style.title, style.height)
    # Legend above or beside the square plot and the colour bar right beside it: nothing
    # below, so a figure as tall as its column is wide keeps the plot square and no gap
    # opens between the plot and the colour bar.
    fig.update_layout(margin=dict(l=50, r=10, t=40 if style.title else 10, b=45),
                      legend=_boundary_legend(style.legend_above))
    _square_axes(fig, surface.xs, surface.ys, style.axis_titles)
    # A figure wider than the square plot leaves the room on the left, not between the
    # plot and its colour bar.
    fig.update_xaxes(constraintoward="right")
    return fig


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
        X_train = _dense(X_train)
        fig = go.Figure(_sampled_points_traces(
            X_train, np.asarray(y_train), _dense(X_test),
            None if y_test is None else np.asarray(y_test), classes, size=9,
            max_train=MAX_TRAIN_POINTS, max_test=MAX_TEST_POINTS))
        fig = _layout(fig, None, height)
        fig.update_layout(margin=dict(l=50, r=10, t=10, b=45), legend=_boundary_legend(True))
        _square_axes(fig, np.array([low, high]), np.array([low, high]), ("x₁", "x₂"))
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
    fig.update_traces(unselected=dict(marker=dict(opacity=1.0)), selector=dict(type="scattergl"))
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


def _animation_contours(xs, ys, scores):
    """A frame's traces: f(x) filled, and the lines f = −1, 0, +1 labelled."""
    z = np.round(_clipped(scores), 3)
    return [
        _decision_fill(xs, ys, z, showscale=False, hoverinfo="skip", showlegend=False),
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
    fig.add_traces(_points_trace(_dense(X_train), y_train, classes, class_colors(classes),
                                 name="train", symbol="circle", size=6, outline="white",
                                 hover="train"))
    if landmarks is not None:
        fig.add_trace(_landmarks_trace(_dense(landmarks), scatter=go.Scatter, name="landmarks",
                                       size=12, outline_width=1))
    if error_panel:
        fig.frames = _add_error_panel(fig, xs, ys, frames)
    else:
        fig.frames = [go.Frame(data=_animation_contours(xs, ys, scores), traces=[0, 1],
                               name=label) for label, scores, *_ in frames]
    fig.update_layout(**_player_controls([label for label, *_ in frames]))
    _square_axes(fig, xs, ys, axis_titles, **(dict(row=1, col=1) if error_panel else {}))
    fig = _layout(fig, title, height)
    fig.update_layout(margin=dict(b=150))
    return fig


# ---------------------------------------------------------------------------- convergence

AXIS_TITLES = {"iteration": "iterations", "epoch": "epochs (passes over the data)",
               "time": "wall time (s, log scale)"}


def convergence_figure(histories, *, x_axis="epoch", best=None, labels=None, height=720):
    """Objective, gap to the best value found (log scale) and test error against
    iterations, epochs or wall time (log scale), one colour per solver.

    ``histories`` maps a solver name to its history dict (columns iteration, epoch, time,
    objective, gap, validation_error); ``labels`` maps it to its display name.  ``best``
    defaults to the smallest objective seen.  A solver with a single checkpoint is drawn
    as one marker, named so in the legend.  Without a finite error in any history (a
    sweep's solves record none) the test-error panel is left out.
    """
    if x_axis not in AXIS_TITLES:
        raise ValueError(f"x_axis must be one of {tuple(AXIS_TITLES)}, got {x_axis!r}.")
    labels = labels or {}
    if best is None:
        # NaN objectives (checkpoints inside a Snacks stage under early stopping) are skipped.
        best = min(float(np.nanmin(h["objective"])) for h in histories.values())
    with_errors = any(np.any(np.isfinite(np.asarray(h["validation_error"], dtype=np.float64)))
                      for h in histories.values())
    # Panel names are the y-axis titles: subplot titles would sit under the legend.
    fig = make_subplots(rows=3 if with_errors else 2, cols=1, shared_xaxes=True,
                        vertical_spacing=0.04)
    largest_error = 0.0
    for k, (name, history) in enumerate(histories.items()):
        color = SOLVER_COLORS.get(name, PALETTE[k % len(PALETTE)])
        label = labels.get(name, name)
        x = np.asarray(history[x_axis], dtype=np.float64)
        if x_axis == "time":
            # The first checkpoint (w = 0, t = 0) has no place on a log axis.
            x = np.where(x > 0, x, np.nan)
        single = len(x) == 1
        if single:
            label += " (1 checkpoint)"
        common = dict(x=x, mode="markers" if single else "lines+markers",
                      marker=dict(size=11 if single else 4, symbol="diamond" if single
                                  else "circle"),
                      legendgroup=name, line=dict(color=color, width=2), connectgaps=True)
        fig.add_trace(go.Scatter(y=history["objective"], name=label, **common), row=1, col=1)
        excess = np.asarray(history["objective"]) - best
        # The best point itself has no excess: nothing to draw on a log axis.
        excess = np.where(excess > 1e-12 * max(abs(best), 1e-300), excess, np.nan)
        fig.add_trace(go.Scatter(y=excess, name=label, showlegend=False, **common), row=2, col=1)
        gap = np.asarray(history["gap"])
        if np.any(np.isfinite(gap)):
            fig.add_trace(go.Scatter(x=x, y=np.where(gap > 0, gap, np.nan), mode="lines",
                                     name=f"{labels.get(name, name)}: certified duality gap",
                                     legendgroup=name,
                                     line=dict(color=color, width=1.5, dash="dot")),
                          row=2, col=1)
        # At w = 0 every prediction is 0, so the error there says nothing: leave it out.
        errors = np.where(np.asarray(history["iteration"]) > 0,
                          np.asarray(history["validation_error"], dtype=np.float64), np.nan)
        if np.any(np.isfinite(errors)):
            largest_error = max(largest_error, float(np.nanmax(errors)))
            fig.add_trace(go.Scatter(y=errors, name=label, showlegend=False, **common),
                          row=3, col=1)
    fig.update_yaxes(title="F(w)", row=1, col=1)
    fig.update_yaxes(type="log", row=2, col=1, exponentformat="power",
                     title="F(w) − F_best",
                     **_log_panel_ticks(fig, height / (3 if with_errors else 2)))
    # From 0 to a little above the largest error: a flat line stays a flat line at its value.
    if with_errors:
        fig.update_yaxes(tickformat=".0%", row=3, col=1, title="test error",
                         range=[0, min(1.0, 1.15 * largest_error + 0.01)])
    fig.update_xaxes(title=AXIS_TITLES[x_axis], row=3 if with_errors else 2, col=1)
    if x_axis == "time":
        fig.update_xaxes(type="log", exponentformat="power")
    else:
        fig.update_xaxes(rangemode="tozero")
    return _layout(fig, None, height)


# The most decades a log panel of the convergence figure shows below its largest value (a
# gap of 1e-16 says no more than one of 1e-10 to a reader), and the height one tick label
# takes on it (px).
LOG_PANEL_DECADES = 10
LOG_TICK_PX = 28


def _log_panel_ticks(fig, panel_px):
    """The range and tick step of the gap panel (row 2): at most :data:`LOG_PANEL_DECADES`
    decades below its largest value, and a tick every k decades, k such that the labels of
    a short panel (a heatmap cell's figure) are :data:`LOG_TICK_PX` apart and never
    stacked."""
    values = np.concatenate([np.asarray(trace.y, dtype=np.float64) for trace in fig.data
                             if trace.yaxis == "y2" and trace.y is not None] or [np.ones(1)])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return {"dtick": 1}
    # Powers of ten land on a whole decade despite their rounding (log10(0.1) ≠ −1 exactly).
    high = float(np.ceil(np.log10(values.max()) - 1e-9))
    low = max(float(np.floor(np.log10(values.min()) + 1e-9)), high - LOG_PANEL_DECADES)
    ticks = max(1, int(panel_px // LOG_TICK_PX) - 1)
    return {"range": [low, high], "dtick": max(1, int(np.ceil((high - low) / ticks)))}


# ---------------------------------------------------------------------------- spectrum


# Eigenvalues of K_mm below this fraction of the largest are at the level of float64
# round-off in an eigensolver (≈ m · 1e-16 · μ₁).
ROUND_OFF = 1e-13


def spectrum_figure(curves, *, threshold=None, threshold_label=None, height=460):
    """Normalized eigenvalue decay μᵢ/μ₁ (log scale) of K_mm, one curve per bandwidth.

    Values below ``ROUND_OFF`` times the largest are round-off of the eigensolver, not
    properties of the kernel: they are left out.  ``threshold`` draws a horizontal line
    (e.g. mλ/μ₁: eigenvalues below it are regularised away).
    """
    fig = go.Figure()
    for k, (label, values) in enumerate(curves.items()):
        values = np.asarray(values, dtype=np.float64)
        normalized = values / values[0] if values[0] > 0 else values
        normalized = np.where(normalized > ROUND_OFF, normalized, np.nan)
        fig.add_trace(go.Scatter(
            x=np.arange(1, len(values) + 1), y=normalized, mode="lines", name=label,
            line=dict(color=PALETTE[k % len(PALETTE)], width=2.2),
            hovertemplate="i = %{x}<br>μᵢ/μ₁ = %{y:.2e}<extra>" + label + "</extra>"))
    if threshold is not None and threshold > 0:
        fig.add_hline(y=threshold, line=dict(color="#555555", dash="dash", width=1.2))
        if threshold_label:
            # Placed by hand: on a log axis add_hline's own annotation takes y as log10(y)
            # and lands far from its line.
            fig.add_annotation(x=1, xref="paper", xanchor="right", y=np.log10(threshold),
                               yref="y", yanchor="bottom", text=threshold_label,
                               showarrow=False, font=dict(size=11, color="#555555"),
                               bgcolor="rgba(255, 255, 255, 0.85)")
    fig.update_yaxes(type="log", title="μᵢ / μ₁", exponentformat="power")
    fig.update_xaxes(title="index i of the eigenvalue of K_mm")
    return _layout(fig, None, height)


def approximation_error_figure(m_values, errors, *, height=460):
    """Relative kernel approximation error ‖K − ZZᵀ‖_F/‖K‖_F against m, mean ± spread.

    ``errors`` maps a method name to (mean, std) arrays aligned with ``m_values``.
    """
    fig = go.Figure()
    for k, (name, (mean, std)) in enumerate(errors.items()):
        color = PALETTE[k % len(PALETTE)]
        mean, std = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
        fig.add_trace(go.Scatter(
            x=m_values, y=mean, name=name, mode="lines+markers",
            line=dict(color=color, width=2.2),
            # On a log axis the bar below the mean must stay above zero.
            error_y=dict(type="data", array=std, arrayminus=np.minimum(std, 0.9 * mean),
                         visible=True, thickness=1, width=3),
            hovertemplate="m = %{x}<br>error = %{y:.3g}<extra>" + name + "</extra>"))
    fig.update_xaxes(type="log", title="number of landmarks / features m",
                     tickvals=list(m_values), ticktext=[str(m) for m in m_values])
    fig.update_yaxes(type="log", title="relative kernel error (Frobenius)",
                     exponentformat="power")
    return _layout(fig, None, height)


# ---------------------------------------------------------------------------- robustness


# The axes of a robustness grid, by their column in the sweep's table: the symbol that
# names each in text ("m = 50, λ = 0.001").
def grid_axis_title(axis) -> str:
    """The title of a grid axis on a figure: its symbol, with what m counts."""
    return "landmarks m" if axis == "m" else GRID_AXIS_SYMBOLS[axis]


def _tick(value):
    return f"{value:g}"


def robust_color_range(values):
    """(low, high) of a colour scale that one outlying cell does not flatten: up to the
    upper Tukey fence q₃ + 1.5 (q₃ − q₁) of the finite values (cells above it take the
    darkest colour; their text still gives their value)."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return 0.0, 1.0
    low, high = float(finite.min()), float(finite.max())
    q1, q3 = np.percentile(finite, [25, 75])
    fence = q3 + 1.5 * (q3 - q1)
    if fence < high:
        high = max(float(fence), float(np.max(finite[finite <= fence])))
    if high - low < 1e-9:
        high = low + 1.0
    return low, high


# The narrowest the heatmap's plot area is drawn (a 1024 px window's main column, less the
# axis titles and the colour bar): the cell labels are sized to fit cells of that width.
HEATMAP_MIN_PLOT_WIDTH = 480
# The narrowest cell (px) whose label keeps its decimals ('★ 17.9' in 8 px type).
HEATMAP_MIN_DECIMAL_CELL = 36


def _cell_label_size(n_rows, n_cols, height):
    """The font size (px) that fits a cell label such as '★ 17.9' in a cell of the narrowest
    plot (:data:`HEATMAP_MIN_PLOT_WIDTH`, the figure's ``height`` less its margins): six
    characters are about 3.6 font sizes wide, a line about 1.3 tall."""
    cell_width = HEATMAP_MIN_PLOT_WIDTH / max(n_cols, 1)
    cell_height = (height - 140) / max(n_rows, 1)
    return int(max(8, min(13, cell_width / 4.2, cell_height / 1.5)))


def heatmap_figure(row_values, col_values, mean, std, seconds, *, row_label, col_label,
                   title=None, height=520, spread=True, value_label="test error", best=None):
    """An error over a grid (rows × columns): each cell's mean in %, ★ on the best cell.

    The label of a cell is its mean alone (two decimals where the colours span less than a
    point, none in cells narrower than :data:`HEATMAP_MIN_DECIMAL_CELL`), in a font that
    fits the cells of the narrowest plot (:func:`_cell_label_size`); the hover adds the
    spread (± the standard deviation over seeds and folds, unless ``spread=False``: one
    seed per cell has no spread) and the fit time.  The colour scale stops at
    :func:`robust_color_range`'s upper end, said in its title; ``value_label`` names the
    error ('test error', 'CV error'); ``best``, the (row, column) index of the ★ (default:
    the lowest mean, the first one on a tie).
    """
    rows = [_tick(v) for v in row_values]
    cols = [_tick(v) for v in col_values]
    zmin, zmax = robust_color_range(100 * mean)
    # Colours that span less than a point would differ under labels that all read the same
    # at one decimal: two decimals then.
    digits = 2 if zmax - zmin < 1.0 else 1
    if HEATMAP_MIN_PLOT_WIDTH / max(len(cols), 1) < HEATMAP_MIN_DECIMAL_CELL:
        # An extended grid's narrow cells: whole percents fit, the hover keeps the rest.
        digits = 0
    text = np.where(np.isfinite(mean), np.char.mod(f"%.{digits}f", 100 * np.nan_to_num(mean)),
                    "").astype(object)
    if best is None and np.any(np.isfinite(mean)):
        best = np.unravel_index(np.nanargmin(mean), mean.shape)
    if best is not None:
        text[best] = "★ " + text[best]
    custom = np.dstack([100 * np.nan_to_num(std), np.nan_to_num(seconds)])
    capped = np.nanmax(100 * mean) > zmax if np.any(np.isfinite(mean)) else False
    color_title = f"{value_label} (%)" + (f"<br>≥ {zmax:.{digits}f} %: darkest" if capped
                                          else "")
    fig = go.Figure(go.Heatmap(
        x=cols, y=rows, z=100 * mean, text=text, texttemplate="%{text}",
        textfont=dict(size=_cell_label_size(len(rows), len(cols), height)), zmin=zmin,
        zmax=zmax, hoverinfo="skip",
        colorscale="Viridis_r", colorbar=dict(title=dict(text=color_title, side="right"),
                                              thickness=12),
        xgap=1, ygap=1))
    # Plotly reports no click on a heatmap cell (streamlit/streamlit#8760): one square
    # marker per finished cell, invisible until selected, carries the hover text and the
    # click.  customdata: row value, column value, spread (%), fit time (s).
    i, j = np.nonzero(np.isfinite(mean))
    size = max(8.0, min(60.0, 0.8 * (height - 140) / max(len(rows), 1)))
    fig.add_trace(go.Scatter(
        x=[cols[k] for k in j], y=[rows[k] for k in i], mode="markers", name="cells",
        showlegend=False,
        # A list, not an array: a selection sends each point's customdata back as it is in
        # the figure, and a row of a typed array would come back as an object.
        customdata=np.column_stack([np.asarray(row_values, dtype=float)[i],
                                    np.asarray(col_values, dtype=float)[j], custom[i, j, 0],
                                    custom[i, j, 1], 100 * mean[i, j]]).tolist(),
        marker=dict(symbol="square-open", size=size, color="#ff2b2b", opacity=0.0,
                    line=dict(width=3)),
        selected=dict(marker=dict(opacity=1.0)), unselected=dict(marker=dict(opacity=0.0)),
        hovertemplate=(f"{row_label} = %{{y}}<br>{col_label} = %{{x}}<br>"
                       f"{value_label} = %{{customdata[4]:.2f}} %"
                       + (" ± %{customdata[2]:.2f}" if spread else "") + "<br>"
                       "fit time = %{customdata[3]:.3f} s<extra></extra>")))
    # Ranges fixed to the cells: the markers would otherwise pad the autorange.
    fig.update_xaxes(title=col_label, type="category", categoryorder="array",
                     categoryarray=cols, range=[-0.5, len(cols) - 0.5])
    fig.update_yaxes(title=row_label, type="category", categoryorder="array",
                     categoryarray=rows, range=[-0.5, len(rows) - 0.5])
    return _layout(fig, title, height)


def rename_test_points(fig, name):
    """A :func:`decision_boundary_figure` whose test points are called ``name`` instead, in
    the legend and on hover (a fold's held-out rows: 'validation')."""
    def rename(trace):
        trace.update(name=trace.name.replace("test", name, 1), legendgroup=name,
                     hovertemplate=trace.hovertemplate.replace("test", name, 1))

    return fig.for_each_trace(rename, selector=dict(legendgroup="test"))


# Points drawn on each small-multiple thumbnail: enough to see the classes, few enough to
# leave the boundary visible at 90 px.
THUMBNAIL_POINTS = 60


def boundary_thumbnails_figure(surfaces, errors, row_values, col_values, *, row_symbol,
                               col_symbol, X, y, classes, best=None, height=None):
    """Small multiples of decision boundaries over a grid, as scikit-learn's RBF-parameters
    example: one thumbnail per cell (rows × columns), titled with its model's error.

    ``surfaces[i][j]`` is the cell's :class:`DecisionSurface` (all on the same points) or
    None for a cell without a model (left blank); ``errors[i, j]`` the error of the model
    drawn, in [0, 1].  Each thumbnail shows f(x) (two classes; the predicted class's
    regions otherwise) with the boundary f = 0, and a class-stratified sample of at most
    :data:`THUMBNAIL_POINTS` points of ``X``; ``best``, the (row, column) index of the cell
    to mark (★ and a red frame).  The left column is labelled "``row_symbol`` = value", the
    bottom row "``col_symbol`` = value".
    """
    n_rows, n_cols = len(row_values), len(col_values)
    errors = np.asarray(errors, dtype=np.float64)
    best = None if best is None else tuple(best)
    titles = [("★ " if (i, j) == best else "") + f"{100 * errors[i, j]:.1f} %"
              if surfaces[i][j] is not None else ""
              for i in range(n_rows) for j in range(n_cols)]
    fig = make_subplots(rows=n_rows, cols=n_cols, horizontal_spacing=0.012,
                        vertical_spacing=0.2 / n_rows, subplot_titles=titles)
    X, y = _dense(X), np.asarray(y)
    sample = stratified_sample(y, THUMBNAIL_POINTS)
    colors = class_colors(classes)
    points = [(X[sample][y[sample] == label], colors[label]) for label in classes]
    panels, axes = [], {}
    for i in range(n_rows):
        for j in range(n_cols):
            surface = surfaces[i][j]
            if surface is None:
                continue
            k = "" if i == j == 0 else str(i * n_cols + j + 1)
            # Each trace names its axes: add_trace(row=, col=) looks the subplot up anew
            # for each of the hundreds of traces.
            on = dict(xaxis=f"x{k}", yaxis=f"y{k}", showlegend=False, hoverinfo="skip")
            if surface.scores.ndim == 2:
                # One trace: f as a heatmap under its line f = 0, in float32 (64 thumbnails
                # of float64 made megabytes for the browser to read).
                panels.append(go.Contour(
                    x=surface.xs, y=surface.ys, z=surface.scores.astype(np.float32),
                    zmin=-DECISION_CLIP, zmax=DECISION_CLIP, colorscale=DECISION_COLORSCALE,
                    showscale=False, contours=dict(coloring="heatmap", start=0, end=0, size=1),
                    line=dict(color="#111111", width=1.5), **on))
            else:
                panels += [trace.update(**on) for trace in _surface_traces(surface, classes)]
            panels += [go.Scatter(x=P[:, 0], y=P[:, 1], mode="markers",
                                  marker=dict(size=3, color=color), **on)
                       for P, color in points]
            # Equal scales, as the large boundary figure: a thumbnail shrinks to the data's
            # shape instead of stretching it to its slot's.
            axes[f"xaxis{k}"] = dict(range=[surface.xs[0], surface.xs[-1]], constrain="domain")
            axes[f"yaxis{k}"] = dict(range=[surface.ys[0], surface.ys[-1]], constrain="domain",
                                     scaleanchor=f"x{k}", scaleratio=1)
    label = dict(font=dict(size=11), standoff=4)
    for i, value in enumerate(row_values):
        k = "" if i == 0 else str(i * n_cols + 1)
        axes.setdefault(f"yaxis{k}", {})["title"] = dict(
            text=f"{row_symbol} = {_tick(value)}", **label)
    for j, value in enumerate(col_values):
        k = str((n_rows - 1) * n_cols + j + 1) if n_rows * n_cols > 1 else ""
        axes.setdefault(f"xaxis{k}", {})["title"] = dict(
            text=f"{col_symbol} = {_tick(value)}", **label)
    fig.add_traces(panels)
    fig.update_layout(axes)
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, ticks="")
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, ticks="")
    if best is not None:
        k = "" if best == (0, 0) else str(best[0] * n_cols + best[1] + 1)
        fig.add_shape(type="rect", xref=f"x{k} domain", yref=f"y{k} domain",
                      x0=0, x1=1, y0=0, y1=1, line=dict(color="#ff2b2b", width=3))
    fig.update_annotations(font_size=11)
    fig = _layout(fig, None, height or 70 + 100 * n_rows, legend_top=False)
    fig.update_layout(margin=dict(l=60, r=10, t=30, b=45))
    return fig


# ---------------------------------------------------------------------------- solvers


def solver_bar_figure(rows, *, majority_error=None, height=420):
    """Test error and time (embedding + training, stacked) per solver, as horizontal bars;
    ``majority_error`` (always predicting the most frequent class) as a dashed line."""
    solvers = [r["solver"] for r in rows][::-1]
    rows = rows[::-1]
    colors = [PALETTE[k % len(PALETTE)] for k in range(len(rows))][::-1]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Test error", "Time (s)"),
                        shared_yaxes=True, horizontal_spacing=0.04)
    fig.add_trace(go.Bar(y=solvers, x=[r["test error"] for r in rows], orientation="h",
                         marker_color=colors, showlegend=False, texttemplate="%{x:.1%}",
                         textposition="outside", cliponaxis=False,
                         hovertemplate="%{y}: %{x:.2%}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(y=solvers, x=[r["embedding time (s)"] for r in rows], orientation="h",
                         name="embedding", marker_color="#b9c3cf",
                         hovertemplate="%{y}: embedding %{x:.4f} s<extra></extra>"), row=1, col=2)
    fig.add_trace(go.Bar(y=solvers, x=[r["training time (s)"] for r in rows], orientation="h",
                         name="training", marker_color=colors,
                         hovertemplate="%{y}: training %{x:.4f} s<extra></extra>"), row=1, col=2)
    fig.update_layout(barmode="stack")
    # Room beyond the longest bar for its "23.3%" label, inside the panel.
    largest = max([r["test error"] for r in rows] + [majority_error or 0.0, 0.01])
    fig.update_xaxes(tickformat=".0%", row=1, col=1, range=[0, 1.35 * largest])
    if majority_error is not None:
        fig.add_vline(x=majority_error, row=1, col=1,
                      line=dict(color="#555555", dash="dash", width=1.2),
                      annotation_text=f"majority class {majority_error:.1%}",
                      annotation_position="bottom right", annotation_font_size=11)
    fig = _layout(fig, None, height)
    fig.update_layout(legend=dict(orientation="h", x=1, xanchor="right", y=-0.12,
                                  yanchor="top"), margin=dict(t=40, l=10))
    return fig


# ---------------------------------------------------------------------------- data


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
    return _layout(fig, None, height)


def data_scatter_figure(X, y, *, classes, axis_titles=("x₁", "x₂"), title=None, height=460,
                        max_points=5000, random_state=0):
    """The points of 2-D data by class (a random subset beyond ``max_points``)."""
    X = _dense(X)
    y = np.asarray(y)
    if X.shape[0] > max_points:
        keep = np.random.default_rng(random_state).choice(X.shape[0], max_points, replace=False)
        X, y = X[keep], y[keep]
    fig = go.Figure(_points_trace(X, y, classes, class_colors(classes), name="points",
                                  symbol="circle", size=6, outline="white", hover="point"))
    fig.update_xaxes(title=axis_titles[0], zeroline=False)
    fig.update_yaxes(title=axis_titles[1], zeroline=False, scaleanchor="x", scaleratio=1)
    return _layout(fig, title, height)


def margin_histogram_figure(scores, y, *, classes, height=420, rows="test rows"):
    """Histogram of decision values by true class, with the boundary and margins marked.

    For more than two classes ``scores`` is (n, K) and the predicted class's score is shown;
    ``rows`` names the rows scored, in the axis title.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 2:
        scores = scores.max(axis=1)
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
    return _layout(fig, None, height)
