"""Primal objective of the Nyström L2-SVM, its hinge loss and a duality-gap certificate.

The problem solved by every primal solver of the project (Snacks paper, eq. "Primal
Nyström L2-SVM") is

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²,

with optional sample weights s_i (class weights).  Its Lagrange dual, with β_i ∈ [0, 1], is

    D(β) = (1/n) Σ_i s_i β_i − λ ‖w(β)‖²,    w(β) = (1/(2λn)) Σ_i s_i β_i y_i z_i,

so that F(w) − D(β) ≥ F(w) − F* ≥ 0 for any w and any β in the box: a certificate.
It is the problem of LIBLINEAR/LIBSVM with C = 1/(2nλ).
"""

from __future__ import annotations

import numpy as np


def lam_to_C(lam: float, n_samples: int) -> float:
    """LIBSVM/LIBLINEAR's C for the same problem: C = 1/(2 n λ)."""
    return 1.0 / (2.0 * n_samples * lam)


def C_to_lam(C: float, n_samples: int) -> float:
    """Inverse of :func:`lam_to_C`: λ = 1/(2 n C)."""
    return 1.0 / (2.0 * n_samples * C)


def matvec(Z, w):
    """Z·w in float64, computed in Z's own precision (no float64 copy of a float32 Z)."""
    w = np.asarray(w)
    if Z.dtype == np.float32:
        w = w.astype(np.float32)
    return np.asarray(Z @ w, dtype=np.float64).ravel()


def margins(w, Z, y):
    """y_i ⟨w, z_i⟩ for every row (Z dense or sparse)."""
    return y * matvec(Z, w)


def hinge_loss(w, Z, y, sample_weight=None):
    """(1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩)."""
    losses = np.maximum(0.0, 1.0 - margins(w, Z, y))
    if sample_weight is not None:
        losses = losses * sample_weight
    return float(losses.mean())


def primal_objective(w, Z, y, lam, sample_weight=None):
    """F(w) = (1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²."""
    w = np.asarray(w, dtype=np.float64)
    return hinge_loss(w, Z, y, sample_weight) + lam * float(w @ w)


def dual_objective(beta, Z, y, lam, sample_weight=None):
    """D(β) for β ∈ [0, 1]^n; returns (D(β), w(β))."""
    n = Z.shape[0]
    sb = beta if sample_weight is None else beta * sample_weight
    w_beta = matvec(Z.T, sb * y) / (2.0 * lam * n)
    return float(sb.sum() / n - lam * (w_beta @ w_beta)), w_beta


def duality_gap(w, beta, Z, y, lam, sample_weight=None):
    """Certified gap F(w) − D(β) ≥ F(w) − F*, with β clipped into the box [0, 1]."""
    beta = np.clip(np.asarray(beta, dtype=np.float64), 0.0, 1.0)
    dual, _ = dual_objective(beta, Z, y, lam, sample_weight)
    return primal_objective(w, Z, y, lam, sample_weight) - dual
