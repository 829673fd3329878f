"""The Robustness heatmap page's figures: the error over a grid, and small multiples of
the decision boundaries over it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from snacks_core.app.figures.boundary import stratified_sample, surface_traces
from snacks_core.app.figures.style import (
    DECISION_CLIP,
    DECISION_COLORSCALE,
    apply_layout,
    class_colors,
    dense,
    tick_label,
)
from snacks_core.model.sweeps import GRID_AXIS_SYMBOLS


# The axes of a robustness grid, by their column in the sweep's table: the symbol that
# names each in text ("m = 50, λ = 0.001").
def grid_axis_title(axis) -> str:
    """The title of a grid axis on a figure: its symbol, with what m counts."""
    return "landmarks m" if axis == "m" else GRID_AXIS_SYMBOLS[axis]


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
                   title=None, height=520, spread=True, value_label="test error", best=None,
                   partial=None):
    """An error over a grid (rows × columns): each cell's mean in %, ★ on the best cell.

    The label of a cell is its mean alone (two decimals where the colours span less than a
    point, none in cells narrower than :data:`HEATMAP_MIN_DECIMAL_CELL`), in a font that
    fits the cells of the narrowest plot (:func:`_cell_label_size`); the hover adds the
    spread (± the standard deviation over seeds and folds, unless ``spread=False``: one
    seed per cell has no spread) and the fit time.  The colour scale stops at
    :func:`robust_color_range`'s upper end, said in its title; ``value_label`` names the
    error ('test error', 'CV error'); ``best``, the (row, column) index of the ★ (default:
    the lowest mean, the first one on a tie); ``partial``, a boolean array of the cells a
    stopped sweep averaged over fewer fits than asked, whose labels end in *.
    """
    rows = [tick_label(v) for v in row_values]
    cols = [tick_label(v) for v in col_values]
    zmin, zmax = robust_color_range(100 * mean)
    # Colours that span less than a point would differ under labels that all read the same
    # at one decimal: two decimals then.
    digits = 2 if zmax - zmin < 1.0 else 1
    if HEATMAP_MIN_PLOT_WIDTH / max(len(cols), 1) < HEATMAP_MIN_DECIMAL_CELL:
        # An extended grid's narrow cells: whole percents fit, the hover keeps the rest.
        digits = 0
    text = np.where(np.isfinite(mean), np.char.mod(f"%.{digits}f", 100 * np.nan_to_num(mean)),
                    "").astype(object)
    if partial is not None:
        text[partial & np.isfinite(mean)] += "*"
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
    return apply_layout(fig, title, height)


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
    X, y = dense(X), np.asarray(y)
    sample = stratified_sample(y, THUMBNAIL_POINTS)
    colors = class_colors(classes)
    points = [(X[sample][y[sample] == label], colors[label]) for label in classes]
    panels, axes = [], {}
    for i in range(n_rows):
        for j in range(n_cols):
            if surfaces[i][j] is not None:
                suffix = _subplot_suffix(i, j, n_cols)
                panels += _thumbnail_traces(surfaces[i][j], suffix, points, classes)
                axes.update(_thumbnail_axes(surfaces[i][j], suffix))
    _label_outer_axes(axes, row_values, col_values, row_symbol, col_symbol)
    fig.add_traces(panels)
    fig.update_layout(axes)
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, ticks="")
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, ticks="")
    if best is not None:
        suffix = _subplot_suffix(*best, n_cols)
        fig.add_shape(type="rect", xref=f"x{suffix} domain", yref=f"y{suffix} domain",
                      x0=0, x1=1, y0=0, y1=1, line=dict(color="#ff2b2b", width=3))
    fig.update_annotations(font_size=11)
    fig = apply_layout(fig, None, height or 70 + 100 * n_rows, legend_top=False)
    fig.update_layout(margin=dict(l=60, r=10, t=30, b=45))
    return fig


def _subplot_suffix(i, j, n_cols):
    """What plotly appends to 'x', 'y', 'xaxis'… for the subplot at row ``i``, column ``j``
    (counted from 0): nothing for the first, its 1-based number after."""
    return "" if i == j == 0 else str(i * n_cols + j + 1)


def _thumbnail_traces(surface, suffix, points, classes):
    """One thumbnail's traces on the subplot ``suffix``: f(x) with its line f = 0 (the
    predicted class's regions for more classes), and the sampled ``points`` (a (rows,
    colour) pair per class)."""
    # Each trace names its axes: add_trace(row=, col=) looks the subplot up anew for each
    # of the hundreds of traces.
    on = dict(xaxis=f"x{suffix}", yaxis=f"y{suffix}", showlegend=False, hoverinfo="skip")
    if surface.scores.ndim == 2:
        # One trace: f as a heatmap under its line f = 0, in float32 (64 thumbnails of
        # float64 made megabytes for the browser to read).
        traces = [go.Contour(
            x=surface.xs, y=surface.ys, z=surface.scores.astype(np.float32),
            zmin=-DECISION_CLIP, zmax=DECISION_CLIP, colorscale=DECISION_COLORSCALE,
            showscale=False, contours=dict(coloring="heatmap", start=0, end=0, size=1),
            line=dict(color="#111111", width=1.5), **on)]
    else:
        traces = [trace.update(**on) for trace in surface_traces(surface, classes)]
    return traces + [go.Scatter(x=P[:, 0], y=P[:, 1], mode="markers",
                                marker=dict(size=3, color=color), **on)
                     for P, color in points]


def _thumbnail_axes(surface, suffix):
    """The layout of one thumbnail's axes: equal scales, as the large boundary figure, so
    that a thumbnail shrinks to the data's shape instead of stretching it to its slot's."""
    return {f"xaxis{suffix}": dict(range=[surface.xs[0], surface.xs[-1]], constrain="domain"),
            f"yaxis{suffix}": dict(range=[surface.ys[0], surface.ys[-1]], constrain="domain",
                                   scaleanchor=f"x{suffix}", scaleratio=1)}


def _label_outer_axes(axes, row_values, col_values, row_symbol, col_symbol):
    """Title the left column's y axes "``row_symbol`` = value" and the bottom row's x axes
    "``col_symbol`` = value", in the layout ``axes`` (updated in place)."""
    n_rows, n_cols = len(row_values), len(col_values)
    label = dict(font=dict(size=11), standoff=4)
    for i, value in enumerate(row_values):
        axes.setdefault(f"yaxis{_subplot_suffix(i, 0, n_cols)}", {})["title"] = dict(
            text=f"{row_symbol} = {tick_label(value)}", **label)
    for j, value in enumerate(col_values):
        axes.setdefault(f"xaxis{_subplot_suffix(n_rows - 1, j, n_cols)}", {})["title"] = dict(
            text=f"{col_symbol} = {tick_label(value)}", **label)
