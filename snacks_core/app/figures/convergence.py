"""The Convergence page's figure (and a heatmap cell's): objective, gap and test error
against iterations, epochs or time, one colour per solver."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from snacks_core.app.figures.style import PALETTE, SOLVER_COLORS, apply_layout

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
    return apply_layout(fig, None, height)


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
