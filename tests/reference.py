"""Plain NumPy/scipy oracles for the Nyström L2-SVM and its solvers.

Everything here is written for clarity, not speed, and independently of ``snacks_core``:

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²                (primal)
    D(β) = (1/n) Σ_i s_i β_i − (1/(4λn²)) (s∘β∘y)ᵀ Z Zᵀ (s∘β∘y),  β ∈ [0, 1]ⁿ  (dual)

(Snacks paper, Section II-A, with C = 1/(2nλ)).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from sklearn.svm import LinearSVC


def _weights(sample_weight, n):
    return np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)


def hinge(w, Z, y, sample_weight=None):
    """(1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩), one row at a time."""
    Z = np.asarray(Z, dtype=np.float64)
    s = _weights(sample_weight, Z.shape[0])
    total = 0.0
    for z_i, y_i, s_i in zip(Z, y, s, strict=True):
        total += s_i * max(0.0, 1.0 - y_i * float(np.dot(w, z_i)))
    return total / Z.shape[0]


def objective(w, Z, y, lam, sample_weight=None):
    """F(w) = (1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²."""
    w = np.asarray(w, dtype=np.float64)
    return hinge(w, Z, y, sample_weight) + lam * float(np.sum(w * w))


def subgradient(w, Z, y, lam, sample_weight=None):
    """A subgradient of F at w: 2λw − (1/n) Σ_{y_i⟨w,z_i⟩<1} s_i y_i z_i."""
    Z = np.asarray(Z, dtype=np.float64)
    s = _weights(sample_weight, Z.shape[0])
    active = y * (Z @ w) < 1.0
    return 2.0 * lam * np.asarray(w, dtype=np.float64) - (s * y * active) @ Z / Z.shape[0]


def dual(beta, Z, y, lam, sample_weight=None):
    """D(β) through the Gram matrix Z Zᵀ (not through w(β))."""
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    a = _weights(sample_weight, n) * beta * y
    return float(np.sum(_weights(sample_weight, n) * beta) / n
                 - a @ (Z @ Z.T) @ a / (4.0 * lam * n * n))


def primal_from_dual(beta, Z, y, lam, sample_weight=None):
    """w(β) = (1/(2λn)) Σ s_i β_i y_i z_i, the primal point attached to β."""
    Z = np.asarray(Z, dtype=np.float64)
    return (_weights(sample_weight, Z.shape[0]) * beta * y) @ Z / (2.0 * lam * Z.shape[0])


def subgradient_descent(Z, y, lam, n_steps, sample_weight=None):
    """Full-batch subgradient method with step 1/(2λt), returning the running average.

    For the 2λ-strongly convex F this converges as O(log t / t); used as a sanity oracle
    for "F decreases towards F*", not for precision.
    """
    w = np.zeros(Z.shape[1])
    average = np.zeros(Z.shape[1])
    for t in range(1, n_steps + 1):
        w = w - subgradient(w, Z, y, lam, sample_weight) / (2.0 * lam * t)
        average += (w - average) / t
    return average


def pegasos_steps(Z, y, lam, epoch_indices, sample_weight=None, radius=np.inf):
    """Pegasos exactly as written by Shalev-Shwartz et al., on an explicit w (no scaling trick).

    ``epoch_indices`` is a sequence of index arrays (one per epoch); step t uses
    η_t = 1/(2λt), then projects onto the ball of the given radius.
    """
    Z = np.asarray(Z, dtype=np.float64)
    s = _weights(sample_weight, Z.shape[0])
    w = np.zeros(Z.shape[1])
    t = 0
    for indices in epoch_indices:
        for i in indices:
            t += 1
            eta = 1.0 / (2.0 * lam * t)
            violates = y[i] * (w @ Z[i]) < 1.0
            w = (1.0 - 2.0 * eta * lam) * w
            if violates:
                w = w + eta * s[i] * y[i] * Z[i]
            norm = np.linalg.norm(w)
            if norm > radius:
                w = w * (radius / norm)
    return w


def dual_ascent_steps(Z, y, upper, order, alpha, w):
    """LIBLINEAR's dual coordinate steps (Hsieh et al. 2008) over the rows ``order``, one
    at a time: α_i ← clip(α_i − (y_i⟨w, z_i⟩ − 1)/‖z_i‖², 0, upper_i), w ← w + Δα_i y_i z_i.
    Updates ``alpha`` and ``w`` in place."""
    Z = np.asarray(Z, dtype=np.float64)
    for i in order:
        sqnorm = Z[i] @ Z[i]
        if upper[i] <= 0.0 or sqnorm <= 0.0:
            continue
        new = min(upper[i], max(0.0, alpha[i] - (y[i] * (w @ Z[i]) - 1.0) / sqnorm))
        w += (new - alpha[i]) * y[i] * Z[i]
        alpha[i] = new


def optimal_objective(Z, y, lam, sample_weight=None):
    """F* and w* from LIBLINEAR run to a tight tolerance (C = 1/(2nλ), no intercept)."""
    Z = np.asarray(Z, dtype=np.float64)
    model = LinearSVC(
        C=1.0 / (2.0 * Z.shape[0] * lam),
        loss="hinge",
        dual=True,
        fit_intercept=False,
        tol=1e-8,
        max_iter=100000,
        random_state=0,
    )
    model.fit(Z, y, sample_weight=sample_weight)
    w = model.coef_.ravel()
    return objective(w, Z, y, lam, sample_weight), w


def dual_box_qp(Z, y, lam, sample_weight=None):
    """max_β D(β) over the box [0, 1]ⁿ by L-BFGS-B: a brute-force oracle for small n.

    Returns (D(β*), β*).  D is a concave quadratic, so a tight projected-gradient
    tolerance gives D* = F* to near machine precision on a few dozen points.
    """
    Z = np.asarray(Z, dtype=np.float64)
    n = Z.shape[0]
    s = _weights(sample_weight, n)
    G = (s * y)[:, None] * (Z @ Z.T) * (s * y)[None, :] / (4.0 * lam * n * n)

    def negative_dual(beta):
        Gb = G @ beta
        return beta @ Gb - s @ beta / n, 2.0 * Gb - s / n

    result = minimize(
        negative_dual,
        np.full(n, 0.5),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, 1.0)] * n,
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000},
    )
    return -float(result.fun), result.x


def kernel_svm_objective(decision, dual_coef, K_sv, y, lam, sample_weight=None):
    """F of an intercept kernel SVM:
    (1/n) Σ s_i max(0, 1 − y_i f(x_i)) + λ dual_coefᵀ K_sv dual_coef."""
    s = _weights(sample_weight, len(y))
    return float(np.mean(s * np.maximum(0.0, 1.0 - y * decision))
                 + lam * dual_coef @ K_sv @ dual_coef)


def assg_reference(Z, y, lam, stage_rows, eta0, radius0, omega=2.0, w0=None, sample_weight=None):
    """Snacks Algorithm 1 (ASSG) on an explicit w, one stage per entry of ``stage_rows``.

    Stage k starts at the centre c = output of stage k − 1 (``w0``, zero by default), runs
    projected stochastic subgradient steps on the sampled rows,

        w ← Π_{B(c, D)}[w − η (2λw − s_i y_i z_i 1{y_i⟨w, z_i⟩ < 1})],

    and outputs the average of its projected iterates; then η ← η/ω and D ← D/ω.
    Returns one dict per stage: ``center``, ``average`` (the stage's output), ``last``
    (its final iterate) and ``distances`` (‖w_t − c‖ after every step).
    """
    Z = np.asarray(Z, dtype=np.float64)
    s = _weights(sample_weight, Z.shape[0])
    w = np.zeros(Z.shape[1]) if w0 is None else np.array(w0, dtype=np.float64)
    eta, radius = float(eta0), float(radius0)
    stages = []
    for rows in stage_rows:
        center = w.copy()
        total = np.zeros_like(w)
        distances = []
        for i in rows:
            gradient = 2.0 * lam * w
            if y[i] * (w @ Z[i]) < 1.0:
                gradient = gradient - s[i] * y[i] * Z[i]
            w = w - eta * gradient
            distance = np.linalg.norm(w - center)
            if distance > radius:
                w = center + (w - center) * (radius / distance)
            distances.append(np.linalg.norm(w - center))
            total += w
        stages.append({"center": center, "average": total / len(rows), "last": w.copy(),
                       "distances": np.array(distances)})
        w = total / len(rows)
        eta /= omega
        radius /= omega
    return stages


def shrinking_dual_ascent_steps(Z, y, upper, orders, alpha, w):
    """:func:`dual_ascent_steps` over each row of ``orders`` in turn with LIBLINEAR's
    shrinking (Hsieh et al. 2008, §3.2): after each sweep, a row at a bound whose gradient
    G_i = y_i⟨w, z_i⟩ − 1 pushes out by more than the sweep's largest violation (α_i = 0
    and G_i > max PG, α_i = upper_i and G_i < min PG) is skipped in the sweeps after.
    Updates ``alpha`` and ``w`` in place; returns the steps tried (rows not skipped)."""
    Z = np.asarray(Z, dtype=np.float64)
    shrunk, high, low, visits = set(), np.inf, -np.inf, 0
    for order in orders:
        violations = []
        for i in order:
            sqnorm = Z[i] @ Z[i]
            if upper[i] <= 0.0 or sqnorm <= 0.0 or i in shrunk:
                continue
            visits += 1
            gradient = y[i] * (w @ Z[i]) - 1.0
            if alpha[i] == 0.0 and gradient > high or alpha[i] == upper[i] and gradient < low:
                shrunk.add(i)
                continue
            violation = (min(gradient, 0.0) if alpha[i] == 0.0 else
                         max(gradient, 0.0) if alpha[i] == upper[i] else gradient)
            if abs(violation) > 1e-12:  # smaller ones: rounding, none
                violations.append(violation)
            dual_ascent_steps(Z, y, upper, [i], alpha, w)
        high = max(violations, default=0.0) if max(violations, default=0.0) > 0 else np.inf
        low = min(violations, default=0.0) if min(violations, default=0.0) < 0 else -np.inf
    return visits


def liblinear_primal(Z, y, C, w, sample_weight=None):
    """LIBLINEAR's primal ½‖w‖² + C Σ s_i max(0, 1 − y_i⟨w, z_i⟩)."""
    s = _weights(sample_weight, len(y))
    return 0.5 * w @ w + C * np.sum(s * np.maximum(0.0, 1.0 - y * (Z @ w)))


def pair_primals(Z, target, C, w, sample_weight=None):
    """A two-class problem on the rows where ``target`` ≠ 0 (a one-vs-one pair; every row
    for one-vs-rest): ``(rows, F at LinearSVC's optimum, F at w)``, F
    :func:`liblinear_primal` at C on those rows."""
    rows = np.flatnonzero(target)
    s = None if sample_weight is None else np.asarray(sample_weight)[rows]
    optimum = LinearSVC(loss="hinge", C=C, fit_intercept=False, tol=1e-10,
                        max_iter=200_000).fit(Z[rows], target[rows], sample_weight=s)
    return (rows, liblinear_primal(Z[rows], target[rows], C, optimum.coef_.ravel(), s),
            liblinear_primal(Z[rows], target[rows], C, w, s))
