"""SmSVM: Newton's method on a smoothed hinge loss, with an active set for an ℓ1 penalty.

Minimises, over the rows z_i of an embedding,

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖² + μ ‖w‖₁

(μ = 0 for ``penalty='l2'``), after Hajewski, Oliveira & Stewart, "Smoothed hinge loss and
support vector machines" (ICDM 2018 and its extended version, the SmSVM algorithm).  The
hinge max(0, u) of the margin deficit u_i = 1 − y_i⟨w, z_i⟩ is replaced by its convolution
with the uniform density on [−α/2, α/2] (the Huberized hinge),

    h_α(u) = 0 for u ≤ −α/2,   (u + α/2)² / (2α) for |u| < α/2,   u for u ≥ α/2,

which is C¹ with h_α' = clip((u + α/2)/α, 0, 1), h_α'' = 1/α inside the band and
0 ≤ h_α − max(0, ·) ≤ α/8.  Newton steps minimise G_α(w) = (1/n) Σ s_i h_α(u_i) + λ‖w‖²
(+ μ‖w‖₁), each followed by an exact line search; α is halved once the smoothed problem is
solved to within its smoothing error (below), until the certified gap meets ``tol``: the
paper stops once α is below about 1/n, which on real data can leave a relative excess far
above the tolerance asked for (7.7·10⁻⁴ at tol = 10⁻⁶ on breast cancer, λ = 10⁻⁵), so α
keeps halving past 1/n when the gap still needs it.

The ℓ1 term is not smoothed (paper, Section 2.3): an active set A holds the weights free
to move, the Newton system involves only H_AA, a zero weight joins A when its gradient
exceeds μ in magnitude, and the line search minimises the convex piecewise-quadratic
φ(t) = G_α(w + t d) exactly, ℓ1 kinks included (Section 2.2): a weight whose kink is the
minimiser is set to exactly zero and leaves A.

Cost is counted, as in the paper, in passes over the data.  One Newton step makes a full
pass for Z d (the line search then needs no data at all: the margins move as u − t·y∘Zd);
the gradient Zᵀ(s∘h_α'∘y) and the data part of the Hessian Σ_{|u_i|<α/2} s_i z_i z_iᵀ are
updated from the rows whose h_α' changed or that entered or left the band, so near the
solution a step costs little more than one pass.

Every checkpoint carries a certified duality gap at no extra pass: with β_i = h_α'(u_i) ∈
[0, 1] and v = (1/n) Zᵀ(s∘β∘y) (the data part of the gradient),

    D(β) = (1/n) Σ s_i β_i − (1/(4λ)) Σ_j (|v_j| − μ)₊²  ≤  min F,

the Lagrange dual of F (for μ = 0 it is the dual of :mod:`snacks_core.solvers.objective`).  Since
h_α(u) = max_{β∈[0,1]} βu + (α/2)β(1 − β), the gap splits exactly into the smoothed
problem's own duality gap (what Newton steps on G_α can still remove; λ‖w − w(β)‖² for
μ = 0) and ε_α = (1/n) Σ_{|u_i|<α/2} s_i (|u_i|/2 − u_i²/α), at most α/16 per row in the
band, which only a smaller α removes.  The paper halves α "when the predicted reduction is
small"; here that is when the smoothed gap, a bound on any reduction still available, is
below ε_α/2.  Right after a halving, the margin support vectors sit in the band of the
previous width 2α, with deficits u_i = α(β_i − 1/2) that should halve: the first Newton
step takes its curvature from that band.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import scipy.linalg
import scipy.linalg.blas

from snacks_core.core.compiled import njit
from snacks_core.solvers.base import (
    CONVERGED,
    MAX_EPOCHS,
    TOL_GAP,
    HistoryRecorder,
    SolverResult,
    check_problem,
)

PENALTIES = ("l2", "l1+l2")

# The problem for the current α counts as solved, and α is halved, once its own duality
# gap is below this fraction of the part of the gap due to the smoothing...
_SMOOTHING_FRACTION = 0.5
# ...or once a Newton step predicts less than this fraction of the objective.
_NEGLIGIBLE_REDUCTION = 1e-13
# Safeguarded Newton iterations of the one-dimensional line search.
_LINE_SEARCH_ITERATIONS = 100
# Smallest α by default: below it the band |u_i| < α/2 only holds rows whose margins equal
# 1 to rounding, so halving further changes nothing the certificate can see.
_ALPHA_FLOOR = 1e-12


@njit(cache=True, nogil=True)
def _loss_slope(u, v, sw, alpha, t):
    """Derivatives in t of Σ_i s_i h_α(u_i − t v_i): first (Σ −s_i h_α' v_i) and second
    (``sw`` the sample weights s_i)."""
    half = 0.5 * alpha
    first = 0.0
    second = 0.0
    for i in range(u.shape[0]):
        ui = u[i] - t * v[i]
        if ui >= half:
            first -= sw[i] * v[i]
        elif ui > -half:
            first -= sw[i] * v[i] * (ui + half) / alpha
            second += sw[i] * v[i] * v[i] / alpha
    return first, second


def smoothed_hinge(u, alpha):
    """h_α(u): the hinge max(0, u) convolved with the uniform density on [−α/2, α/2]."""
    half = 0.5 * alpha
    inside = (u + half) ** 2 / (2.0 * alpha)
    return np.where(u >= half, u, np.where(u > -half, inside, 0.0))


def smoothed_hinge_derivative(u, alpha):
    """h_α'(u) = clip((u + α/2)/α, 0, 1): also the dual variable β attached to u."""
    return np.clip((u + 0.5 * alpha) / alpha, 0.0, 1.0)


class _DataTerms:
    """The data part of the gradient and Hessian of G_α, kept up to date by changed rows.

    ``q = Zᵀ(s∘β∘y)`` with β = h_α'(u), and ``M = Σ_{i in band} s_i z_i z_iᵀ`` (its upper
    triangle: the Cholesky factorisation reads nothing else).  After the
    margins or α change, only the rows whose β changed (for q) or that entered or left the
    band (for M) are read; when they are more than half the rows, q (or M) is recomputed.
    ``rows_read`` counts the rows touched, for the passes-over-the-data measure.
    """

    def __init__(self, Z, y, sample_weight, u, alpha):
        self.Z, self.y, self.sample_weight = Z, y, sample_weight
        self.rows_read = 0
        self.beta = smoothed_hinge_derivative(u, alpha)
        self.band = np.abs(u) < 0.5 * alpha
        self.q = self._full_gradient()
        self.M = self._add_gram(np.flatnonzero(self.band), 1.0)

    def _full_gradient(self):
        self.rows_read += self.Z.shape[0]
        r = self.sample_weight * self.beta * self.y
        return np.asarray(self.Z.T @ r.astype(self.Z.dtype), dtype=np.float64)

    def _add_gram(self, rows, sign, M=None):
        """M + sign · Σ_{i in rows} s_i z_i z_iᵀ, upper triangle only (BLAS syrk)."""
        self.rows_read += rows.shape[0]
        Zr = np.asarray(self.Z[rows], dtype=np.float64) * np.sqrt(self.sample_weight[rows])[:, None]
        if M is None:
            M = np.zeros((self.Z.shape[1], self.Z.shape[1]), order="F")
        if rows.shape[0] == 0:
            return M
        return scipy.linalg.blas.dsyrk(sign, Zr, beta=1.0, c=M, trans=1, lower=0,
                                       overwrite_c=1)

    def update(self, u, alpha, band_alpha=None):
        """New margins or α; the band of M may use another width ``band_alpha``."""
        beta = smoothed_hinge_derivative(u, alpha)
        changed = np.flatnonzero(beta != self.beta)
        if 2 * changed.shape[0] > self.Z.shape[0]:
            self.beta = beta
            self.q = self._full_gradient()
        elif changed.shape[0]:
            delta = (self.sample_weight[changed] * (beta[changed] - self.beta[changed])
                     * self.y[changed])
            self.rows_read += changed.shape[0]
            self.q += np.asarray(self.Z[changed].T @ delta.astype(self.Z.dtype), dtype=np.float64)
            self.beta = beta
        band = np.abs(u) < 0.5 * (alpha if band_alpha is None else band_alpha)
        entered = np.flatnonzero(band & ~self.band)
        left = np.flatnonzero(self.band & ~band)
        if entered.shape[0] + left.shape[0] >= max(1, np.count_nonzero(band)):
            self.M = self._add_gram(np.flatnonzero(band), 1.0)
        else:
            self.M = self._add_gram(entered, 1.0, self.M)
            self.M = self._add_gram(left, -1.0, self.M)
        self.band = band


def _minimize_on_line(w, d, mu, smooth_slope):
    """Exact minimiser t ≥ 0 of φ(t) = S(t) + μ Σ_j |w_j + t d_j| for a convex S.

    ``smooth_slope(t)`` returns S'(t) and S''(t), S' continuous, piecewise linear and
    non-decreasing; each |w_j + t d_j| adds a jump of 2μ|d_j| to φ' at its kink
    t_j = −w_j/d_j.  A binary search over the sorted kinks finds the first one where the
    right derivative is non-negative; the minimiser is that kink if the left derivative
    there is non-positive, otherwise the root of the (kink-free) derivative before it,
    found by safeguarded Newton steps on the piecewise-linear φ' (Hajewski et al.,
    Section 2.2: no evaluation of φ itself is needed).

    Returns ``(t, j)``: the step and the index of the weight set to zero by it (−1 if
    none).
    """
    nonzero = w != 0.0
    moving = nonzero & (d != 0.0) & (mu > 0.0)
    kinks = -w[moving] / d[moving]
    ahead = kinks > 0.0
    kink_t = kinks[ahead]
    kink_j = np.flatnonzero(moving)[ahead]
    order = np.argsort(kink_t)
    kink_t, kink_j = kink_t[order], kink_j[order]
    # ℓ1 slope just after t = 0: weights at zero move away from their kink.
    l1_start = mu * (float(np.sign(w[nonzero]) @ d[nonzero]) + float(np.abs(d[~nonzero]).sum()))
    # Each kink passed turns −|d_j| into +|d_j|: the slope jumps by 2μ|d_j|.
    l1_jumps = 2.0 * mu * np.abs(d[kink_j])

    def right_slope(k):
        # φ'(t_k+): all kinks up to and including k passed.
        return smooth_slope(kink_t[k])[0] + l1_start + l1_jumps[:k + 1].sum()

    if smooth_slope(0.0)[0] + l1_start >= 0.0:
        return 0.0, -1
    lo_k, hi_k = 0, kink_t.shape[0]
    while lo_k < hi_k:
        mid = (lo_k + hi_k) // 2
        if right_slope(mid) >= 0.0:
            hi_k = mid
        else:
            lo_k = mid + 1
    first = lo_k
    l1_slope = l1_start + l1_jumps[:first].sum()
    if first < kink_t.shape[0]:
        t_kink = kink_t[first]
        if smooth_slope(t_kink)[0] + l1_slope <= 0.0:
            return float(t_kink), int(kink_j[first])
        hi = t_kink
    else:
        hi = max(1.0, kink_t[-1] if kink_t.shape[0] else 0.0)
        while smooth_slope(hi)[0] + l1_slope < 0.0:
            hi *= 2.0
    lo = kink_t[first - 1] if first > 0 else 0.0
    t = min(max(1.0, lo), hi)
    for _ in range(_LINE_SEARCH_ITERATIONS):
        slope, curvature = smooth_slope(t)
        slope += l1_slope
        if slope == 0.0:
            break
        if slope > 0.0:
            hi = t
        else:
            lo = t
        step = t - slope / curvature
        t = step if lo < step < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * hi:
            break
    return float(t), -1


def _line_search(u, v, sample_weight, n, lam, mu, w, d, alpha):
    """Exact minimiser t ≥ 0 of G_α(w + t d) (+ μ‖w + t d‖₁), margins u − t v, v = y∘Zd.

    The smoothed loss makes a continuous, piecewise-linear derivative, evaluated from the
    n margins alone: no pass over the data.  Returns ``(t, j)`` as
    :func:`_minimize_on_line`.
    """
    wd, dd = float(w @ d), float(d @ d)

    def smooth_slope(t):
        first, second = _loss_slope(u, v, sample_weight, alpha, t)
        return first / n + 2.0 * lam * (wd + t * dd), second / n + 2.0 * lam * dd

    return _minimize_on_line(w, d, mu, smooth_slope)


def _dual_bound(v, s_beta_mean, lam, mu):
    """D(β) = (1/n) Σ s_i β_i − (1/(4λ)) Σ_j (|v_j| − μ)₊², v = (1/n) Zᵀ(s∘β∘y)."""
    excess = np.maximum(np.abs(v) - mu, 0.0)
    return s_beta_mean - float(excess @ excess) / (4.0 * lam)


@dataclass(frozen=True)
class SmoothedNewtonOptions:
    """The penalty and the smoothing schedule of :func:`solve`.

    Attributes
    ----------
    penalty : {'l2', 'l1+l2'}
        'l1+l2' adds μ‖w‖₁ and solves with the active-set strategy.
    lam_l1 : float, optional
        μ ≥ 0 for ``penalty='l1+l2'``; defaults to λ.  Must be left unset for 'l2'
        (ValueError).
    alpha0 : float > 0
        Initial smoothing width α (half the margin: the first bands hold many rows).
    alpha_min : float > 0, optional
        Stop (``'converged'``) once α is below it and a Newton step predicts a negligible
        reduction, even if the gap is still above ``tol``.  By default α keeps halving
        until the gap meets ``tol`` (the paper's "α below about 1/n" is not enough for a
        tight ``tol``), down to 10⁻¹², where the smoothing is at rounding level.
    """

    penalty: str = "l2"
    lam_l1: float | None = None
    alpha0: float = 0.5
    alpha_min: float | None = None

    def __post_init__(self):
        if self.penalty == "l2" and self.lam_l1 is not None:
            raise ValueError("lam_l1 is the weight of ‖w‖₁: use it with penalty='l1+l2'.")


# The flat keywords of ``solver_options`` that :func:`registry_solve` groups.
OPTION_KEYWORDS = frozenset(field.name for field in fields(SmoothedNewtonOptions))


def registry_solve(Z, y, lam, *, sample_weight=None, max_epochs=100, tol=1e-4,
                   random_state=None, validation=None, callback=None, w0=None, **options):
    """:func:`solve` from flat keywords: the registry's entry for ``solver='smoothed_newton'``.

    ``options`` (:data:`OPTION_KEYWORDS`, as ``solver_options`` spells them, checked once
    by :func:`snacks_core.solvers.check_solver_params`) are the fields of
    :class:`SmoothedNewtonOptions`; the other keywords are :func:`solve`'s.
    """
    return solve(Z, y, lam, sample_weight=sample_weight, max_epochs=max_epochs, tol=tol,
                 random_state=random_state, validation=validation, callback=callback, w0=w0,
                 options=SmoothedNewtonOptions(**options))


def solve(Z, y, lam, *, sample_weight=None, max_epochs=100, tol=1e-4, random_state=None,
          validation=None, callback=None, w0=None, options=SmoothedNewtonOptions()):
    """Minimise F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖² (+ μ‖w‖₁) by SmSVM.

    Newton's method on the smoothed hinge h_α (see the module docstring), exact line
    search, α halved once the smoothed problem is solved within its smoothing error; with
    ``options.penalty='l1+l2'`` an active set keeps the Newton system to the free weights
    (Hajewski, Oliveira & Stewart, "Smoothed hinge loss and support vector machines",
    Algorithms 1–4).

    Parameters
    ----------
    Z : ndarray of shape (n, m), float32 or float64
        Embedded training rows z_i.
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    lam : float
        λ > 0, the weight of ‖w‖² (LIBLINEAR's C = 1/(2nλ) for ``penalty='l2'``).
    sample_weight : ndarray of shape (n,), optional
        Weights s_i of the hinge terms.
    max_epochs : float
        Budget in passes over the data (rows read / n).
    tol : float
        Stop when the certified relative duality gap (F(w) − D(β)) / F(w) ≤ tol.
    random_state : ignored
        The method is deterministic; accepted for the common solver signature.
    validation : tuple (Z_val, y_val), optional
        Held-out rows whose error is recorded at each checkpoint.
    callback : callable(record: dict, w: ndarray), optional
        Called at each checkpoint.
    w0 : ndarray of shape (m,), optional
        Starting point; zero by default (all weights inactive for 'l1+l2').
    options : SmoothedNewtonOptions
        The penalty (μ) and the smoothing schedule (α₀, the floor of α).

    Returns
    -------
    SolverResult
        History checkpoints after every Newton step and every change of α: ``iteration``
        counts Newton steps, ``epoch`` passes over the data.  ``stop_reason`` is
        ``'tol_gap'`` (the certified relative gap is at most ``tol``), ``'converged'`` (α
        below ``alpha_min`` and a negligible Newton step, the gap above ``tol``) or
        ``'max_epochs'``.  ``info['alpha']`` is the final smoothing width and
        ``info['passes']`` the passes over the data.
    """
    Z, y, sample_weight = check_problem(Z, y, lam, sample_weight)
    lam_l1 = options.lam_l1
    mu = 0.0 if options.penalty == "l2" else float(lam if lam_l1 is None else lam_l1)
    n, m = Z.shape
    alpha_min = _ALPHA_FLOOR if options.alpha_min is None else options.alpha_min
    lam = float(lam)
    w = np.zeros(m) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    if w.shape[0] != m or not np.all(np.isfinite(w)):
        raise ValueError(f"w0 must be a finite vector of {m} entries.")

    # Compile (or load) the line-search kernel outside the measured time.
    _loss_slope(np.zeros(1), np.zeros(1), np.ones(1), 1.0, 0.0)
    recorder = HistoryRecorder(Z, y, lam, sample_weight, validation, callback)
    sample_weight = np.ones(n) if sample_weight is None else sample_weight
    state = _Smoothing(Z, y, sample_weight, lam, mu, w, float(options.alpha0))
    stop_reason = _run(state, recorder, max_epochs, tol, alpha_min)
    passes = state.passes()
    return SolverResult(coef=state.w, history=recorder.as_arrays(), n_iter=state.newton_steps,
                        n_epochs=passes, stop_reason=stop_reason,
                        info={"alpha": state.alpha, "passes": passes,
                              "checkpoint_time": recorder.excluded})


def _run(state, recorder, max_epochs, tol, alpha_min):
    """Newton steps, and halvings of α, until a stop rule holds; returns the stop reason."""
    while True:
        gradient, objective, gap = state.certificate()
        passes = state.passes()
        recorder.record(state.w, state.newton_steps, passes, objective=objective, gap=gap)
        if gap <= tol * objective:
            return TOL_GAP
        if passes >= max_epochs:
            return MAX_EPOCHS
        direction = state.newton_direction(gradient, objective, gap)
        if direction is not None:
            state.move(direction)
        elif state.alpha <= alpha_min:
            return CONVERGED
        else:
            state.halve_alpha()


class _Smoothing:
    """The iterate w, its margin deficits u = 1 − y∘Zw, the smoothing width α and the data
    terms of G_α, with the passes over the data made so far."""

    def __init__(self, Z, y, sample_weight, lam, mu, w, alpha):
        n, m = Z.shape
        self.Z, self.y, self.sample_weight, self.n, self.lam, self.mu = (
            Z, y, sample_weight, n, lam, mu)
        self.w = w
        self.rows_read = 0
        if np.any(w):
            self.u = 1.0 - y * np.asarray(Z @ w.astype(Z.dtype), dtype=np.float64)
            self.rows_read += n
        else:
            self.u = np.ones(n)
        self.alpha = alpha
        self.data = _DataTerms(Z, y, sample_weight, self.u, alpha)
        self.active = np.ones(m, bool) if mu == 0.0 else w != 0.0
        self.newton_steps = 0
        # No progress along a descent direction: rounding level for this α.
        self.stalled = False

    def passes(self):
        return (self.rows_read + self.data.rows_read) / self.n

    def certificate(self):
        """The gradient of G_α, F(w) and the certified gap F(w) − D(β), β = h_α'(u)."""
        n, lam, mu, w = self.n, self.lam, self.mu, self.w
        v = self.data.q / n
        gradient = 2.0 * lam * w - v
        objective = (float(self.sample_weight @ np.maximum(self.u, 0.0)) / n + lam * float(w @ w)
                     + mu * float(np.abs(w).sum()))
        dual = _dual_bound(v, float(self.sample_weight @ self.data.beta) / n, lam, mu)
        gap = max(objective - dual, 0.0)
        return gradient, objective, gap

    def newton_direction(self, gradient, objective, gap):
        """The Newton step on G_α, or None once the problem for this α counts as solved.

        The certified gap splits into the smoothed problem's own gap (what Newton steps
        can still remove) and the part the smoothing leaves (only halving α removes it).
        """
        u, alpha = self.u, self.alpha
        band = np.abs(u) < 0.5 * alpha
        smoothing_part = float(self.sample_weight[band]
                               @ (0.5 * np.abs(u[band]) - u[band] ** 2 / alpha)) / self.n
        if self.stalled or gap - smoothing_part <= _SMOOTHING_FRACTION * smoothing_part:
            return None
        if self.mu > 0.0:
            self.active = (self.w != 0.0) | (np.abs(gradient) > self.mu)
        direction, predicted = _newton_step(self.data.M, gradient, self.w, self.active,
                                            self.lam, self.mu, self.n * alpha)
        return None if predicted <= _NEGLIGIBLE_REDUCTION * objective else direction

    def halve_alpha(self):
        self.alpha *= 0.5
        self.stalled = False
        # The rows in the band for 2α hold the margin support vectors, whose deficits
        # u_i = α(β_i − 1/2) shrink with α: their curvature steers the first step.
        self.data.update(self.u, self.alpha, band_alpha=2.0 * self.alpha)

    def move(self, direction):
        """w ← w + t·direction, t from the exact line search (one pass for Z·direction)."""
        zd = self.y * np.asarray(self.Z @ direction.astype(self.Z.dtype), dtype=np.float64)
        self.rows_read += self.n
        t, zeroed = _line_search(self.u, zd, self.sample_weight, self.n, self.lam, self.mu,
                                 self.w, direction, self.alpha)
        self.w = self.w + t * direction
        if zeroed >= 0:
            self.w[zeroed] = 0.0
        self.u = self.u - t * zd
        self.stalled = t == 0.0 and zeroed < 0
        self.newton_steps += 1
        self.data.update(self.u, self.alpha)


def _newton_step(M, gradient, w, active, lam, mu, n_alpha):
    """Minimiser x of the local model over the active weights: the (ℓ1-aware) Newton step.

    The model is q(x) = gᵀ(x − w) + ½ (x − w)ᵀ H (x − w) + μ‖x‖₁ with H = 2λI + M/(nα),
    the Hessian of G_α, and x_j = 0 off the active set A.  With μ = 0 it is one Newton
    step.  Otherwise the paper's active-set method runs on the model alone, without
    touching the data: a Newton step for the current signs (μ·sign(x_j), or −μ·sign(∂_j q)
    for a weight at zero, which moves in its descent direction), cut by the exact model
    line search at the first kink where q stops decreasing; that weight is set to zero,
    leaves A, and the step is recomputed from there.  A weight at zero whose Newton
    component points uphill, or whose model gradient is within ±μ, leaves A too.

    Returns the direction x − w and the predicted reduction q(w) − q(x).
    """
    idx = np.flatnonzero(active)
    direction = np.zeros_like(w)
    if idx.shape[0] == 0:
        return direction, 0.0
    upper = M[np.ix_(idx, idx)] / n_alpha
    H = np.triu(upper) + np.triu(upper, 1).T
    H[np.diag_indices_from(H)] += 2.0 * lam
    g0 = gradient[idx]
    x = w[idx].copy()
    free = np.ones(idx.shape[0], bool)
    while np.any(free):
        pos = np.flatnonzero(free)
        Hf = H[np.ix_(pos, pos)]
        g = g0[pos] + H[pos] @ (x - w[idx])
        xf = x[pos]
        if mu > 0.0:
            idle = (xf == 0.0) & (np.abs(g) <= mu)
            if np.any(idle):
                free[pos[idle]] = False
                continue
        signs = np.where(xf != 0.0, np.sign(xf), -np.sign(g))
        reduced = g + mu * signs
        d = -scipy.linalg.cho_solve(scipy.linalg.cho_factor(Hf, check_finite=False), reduced,
                                    check_finite=False)
        uphill = (xf == 0.0) & (np.sign(d) != signs)
        if mu > 0.0 and np.any(uphill):
            free[pos[uphill]] = False
            continue
        gd, dHd = float(g @ d), float(d @ (Hf @ d))
        t, zeroed = _minimize_on_line(xf, d, mu, lambda t, gd=gd, dHd=dHd: (gd + t * dHd, dHd))
        x[pos] = xf + t * d
        if zeroed < 0:
            break
        x[pos[zeroed]] = 0.0
        free[pos[zeroed]] = False
    step = x - w[idx]
    direction[idx] = step
    predicted = -(float(g0 @ step) + 0.5 * float(step @ (H @ step))
                  + mu * (float(np.abs(x).sum()) - float(np.abs(w[idx]).sum())))
    return direction, predicted
