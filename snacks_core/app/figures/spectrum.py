"""The Spectrum page's figures: eigenvalue decay of K_mm and kernel approximation error."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from snacks_core.app.figures.style import PALETTE, apply_layout

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
    return apply_layout(fig, None, height)


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
    return apply_layout(fig, None, height)
