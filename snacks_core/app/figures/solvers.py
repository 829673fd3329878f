"""The Solver comparison page's figure."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from snacks_core.app.figures.style import PALETTE, apply_layout


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
    fig = apply_layout(fig, None, height)
    fig.update_layout(legend=dict(orientation="h", x=1, xanchor="right", y=-0.12,
                                  yanchor="top"), margin=dict(t=40, l=10))
    return fig
