"""Primal objective of the Nyström L2-SVM, its hinge loss and a duality-gap certificate.

The problem solved by every primal solver of the project (Snacks paper, eq. "Primal
Nyström L2-SVM") is

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²,

with optional sample weights s_i (class weights).  Its Lagrange dual, with β_i ∈ [0, 1], is

    D(β) = (1/n) Σ_i s_i β_i − λ ‖w(β)‖²,    w(β) = (1/(2λn)) Σ_i s_i β_i y_i z_i,

so that F(w) − D(β) ≥ F(w) − F* ≥ 0 for any w and any β in the box: a certificate.
It is the problem of LIBLINEAR/LIBSVM with C = 1/(2nλ).

**λ against the Snacks paper.**  The paper's subgradient (its eq. (8), λw − y_i z_i) and
its reference code minimise hinge + (λ_paper/2)‖w‖², so its λ grids and tables (Fig. 2,
Tables III–VII) are in that convention: λ here = λ_paper / 2 (:func:`paper_lam_to_lam`).
"""

from __future__ import annotations

import numpy as np


def lam_to_C(lam: float, n_samples: int) -> float:
    """LIBSVM/LIBLINEAR's C for the same problem: C = 1/(2 n λ).

    Examples
    --------
    >>> from snacks_core.solvers.objective import C_to_lam, lam_to_C
    >>> lam_to_C(1e-3, 500)
    1.0
    >>> C_to_lam(1.0, 500)
    0.001
    """
    return 1.0 / (2.0 * n_samples * lam)


def paper_lam_to_lam(lam_paper: float) -> float:
    """Our λ for the Snacks paper's λ (hinge + (λ_paper/2)‖w‖², its eq. (8)): λ_paper / 2."""
    return lam_paper / 2.0


def C_to_lam(C: float, n_samples: int) -> float:
    """Inverse of :func:`lam_to_C`: λ = 1/(2 n C)."""
    return 1.0 / (2.0 * n_samples * C)


# Rows of a float32 (or float16) Z converted to float64 at once in the products below
# (~16 MiB).
_BLOCK_ENTRIES = 2**21
_NARROW = (np.float16, np.float32)


def _float64_blocks(Z):
    """Row blocks of a dense float32/float16 Z as float64, so products are exact without a
    full copy."""
    rows = max(1, _BLOCK_ENTRIES // max(Z.shape[1], 1))
    for start in range(0, Z.shape[0], rows):
        yield start, Z[start:start + rows].astype(np.float64)


def matvec(Z, w):
    """Z·w accumulated in float64 (Z dense float16/float32/float64 or sparse)."""
    w = np.asarray(w, dtype=np.float64).ravel()
    if isinstance(Z, np.ndarray) and Z.dtype in _NARROW:
        out = np.empty(Z.shape[0])
        for start, block in _float64_blocks(Z):
            out[start:start + block.shape[0]] = block @ w
        return out
    return np.asarray(Z @ w, dtype=np.float64).ravel()



def decision_values(Z, coef):
    """Z·coefᵀ, rows × columns (one per one-vs-rest problem), accumulated in float64 from
    cache-sized float64 blocks of a narrow Z (a whole float32 copy is slower): the one
    product behind a model's decision values, a fit's measures of its training rows and a
    grid's test scores, so that they agree to the bit."""
    coef = np.asarray(coef, dtype=np.float64)
    if isinstance(Z, np.ndarray) and Z.dtype in _NARROW:
        out = np.empty((Z.shape[0], coef.shape[0]))
        for start, block in _float64_blocks(Z):
            out[start:start + block.shape[0]] = block @ coef.T
        return out
    return np.asarray(Z @ coef.T, dtype=np.float64)

def rmatvec(Z, v):
    """Zᵀ·v accumulated in float64 (Z dense float16/float32/float64 or sparse)."""
    v = np.asarray(v, dtype=np.float64).ravel()
    if isinstance(Z, np.ndarray) and Z.dtype in _NARROW:
        out = np.zeros(Z.shape[1])
        for start, block in _float64_blocks(Z):
            out += v[start:start + block.shape[0]] @ block
        return out
    return np.asarray(Z.T @ v, dtype=np.float64).ravel()


def margins(w, Z, y):
    """y_i ⟨w, z_i⟩ for every row (Z dense or sparse)."""
    return y * matvec(Z, w)


def hinge_loss(w, Z, y, sample_weight=None):
    """(1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩)."""
    return _mean_hinge(margins(w, Z, y), sample_weight)


def _mean_hinge(margins_, sample_weight):
    losses = np.maximum(0.0, 1.0 - margins_)
    if sample_weight is not None:
        losses = losses * sample_weight
    return float(losses.mean())


def primal_objective(w, Z, y, lam, sample_weight=None):
    """F(w) = (1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖².

    Examples
    --------
    >>> import numpy as np
    >>> from snacks_core.solvers.objective import hinge_loss, primal_objective
    >>> Z, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0])
    >>> w = np.array([0.5, -0.5])
    >>> hinge_loss(w, Z, y), primal_objective(w, Z, y, lam=0.1)
    (0.5, 0.55)
    """
    w = np.asarray(w, dtype=np.float64)
    return hinge_loss(w, Z, y, sample_weight) + lam * float(w @ w)


def dual_objective(beta, Z, y, lam, sample_weight=None):
    """D(β) for β ∈ [0, 1]^n; returns (D(β), w(β))."""
    n = Z.shape[0]
    sb = beta if sample_weight is None else beta * sample_weight
    w_beta = rmatvec(Z, sb * y) / (2.0 * lam * n)
    return float(sb.sum() / n - lam * (w_beta @ w_beta)), w_beta


def duality_gap(w, beta, Z, y, lam, sample_weight=None):
    """Certified gap F(w) − D(β) ≥ F(w) − F*, with β clipped into the box [0, 1]."""
    beta = np.clip(np.asarray(beta, dtype=np.float64), 0.0, 1.0)
    dual, _ = dual_objective(beta, Z, y, lam, sample_weight)
    return primal_objective(w, Z, y, lam, sample_weight) - dual
