"""ADMM on the dual kernel SVM, with the shifted kernel factorised once (Cipolla & Gondzio).

The dual of the kernel SVM with an intercept, in LIBSVM's form with C = 1/(2nλ), is

    min_x  ½ xᵀ Y K̃ Y x − eᵀx   s.t.  yᵀx = 0,  0 ≤ x_i ≤ C s_i,             (1)

for a kernel matrix K̃ (exact or approximated).  Splitting x = z, with the equality in the
x-block and the box in the z-block, ADMM (Algorithm 2 of S. Cipolla & J. Gondzio,
"Training very large scale nonlinear SVMs using Alternating Direction Method of
Multipliers coupled with the Hierarchically Semi-Separable kernel approximations", 2021)
has closed-form steps with K̃_β = K̃ + βI:

    x ← Y K̃_β⁻¹ Y q − (eᵀ K̃_β⁻¹ Y q / eᵀ K̃_β⁻¹ e) · Y K̃_β⁻¹ e,   q = e + μ + βz,
    z ← Π_[0, C s](x − μ/β),
    μ ← μ − β (x − z).

K̃_β⁻¹e and eᵀK̃_β⁻¹e depend on neither the labels nor C: with the factorisation of K̃_β
they are computed once and reused for every C of a grid and every class of a one-vs-rest
fit (Algorithm 3).  The model is f(x) = Σ_i y_i z_i k̃(x_i, x) + b with b the minimiser of
the primal objective for the current z, which at the optimum agrees with eq. (7) (the mean
over the margin support vectors 0 < z_j < C s_j of y_j − Σ_i y_i z_i K̃_ij; the paper
prints its sign reversed) and before it is far more accurate (see ``_intercept``).

What differs from the paper, measured on w8a and a9a-shaped data (BENCHMARKS.md, "Other
solvers"): the paper runs 10 iterations at β = 10²–10⁴ and returns an early-stopped point
(certified gap 85–99 %, the same model for every C of its grid); here the stop is the
certified relative gap ``tol`` (1 % by default) at β = 3 with over-relaxation, checked every
``checkpoint_every`` iterations by one product with K̃.  New rows of an HSS model are
evaluated with the exact kernel, as in the paper, or with K̃'s own extension when the
approximation is too coarse for the exact kernel to reproduce the fitted values
(:func:`choose_evaluation`).

The kernel enters only through a *shifted-kernel operator* of :mod:`snacks_core.kernels.operators`
(``matvec(v)`` = K̃v, ``solve(b)`` = K̃_β⁻¹b, ``decision(X, coef)`` on new rows): the exact
kernel (``DenseKernel``), a Nyström Gram matrix (``NystromKernel``) or the paper's HSS
approximation (``HSSKernel``), made by :func:`snacks_core.kernels.operators.build_operator`.
"""

from __future__ import annotations

import time

import numpy as np

from snacks_core.solvers.base import (
    HISTORY_COLUMNS,
    MAX_ITER,
    TOL_GAP,
    SolverResult,
    check_problem,
)
from snacks_core.solvers.objective import lam_to_C

# Defaults of solve(): a certified relative gap of 1 %, reached on w8a and a9a-shaped data
# in well under the budget (BENCHMARKS.md, "Other solvers"); over-relaxation and a checkpoint (one
# product with K̃, about one iteration's cost) every 5 iterations.
DEFAULT_TOL = 1e-2
DEFAULT_MAX_ITER = 1000
DEFAULT_RELAXATION = 1.6
DEFAULT_CHECKPOINT_EVERY = 5


def default_beta(n_samples: int) -> float:
    """The paper's ADMM penalty β by training-set size: 10² for n in [10⁴, 10⁵), 10³ in
    [10⁵, 10⁶), 10⁴ above; continued downwards by decades (10 below 10⁴, 1 below 10³).

    Tuned for the paper's 10 early-stopped iterations; for a stop on the gap it is far
    too large (it needs several times the iterations of a β near 1–3 to a 1 % gap), so
    :func:`snacks_core.kernels.operators.build_operator` uses its ``DEFAULT_BETA`` = 3 unless told
    otherwise.  Pass ``beta=default_beta(n)`` to
    reproduce the paper."""
    return float(10.0 ** np.clip(np.floor(np.log10(max(n_samples, 1))) - 2, 0, 4))


def precompute(operator):
    """K̃_β⁻¹e and eᵀK̃_β⁻¹e: once per factorisation (Algorithm 3, lines 4–5)."""
    ones_solve = operator.solve(np.ones(operator.n))
    return ones_solve, float(ones_solve.sum())


def solve(operator, y, lam, *, sample_weight=None, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
          relaxation=DEFAULT_RELAXATION, checkpoint_every=DEFAULT_CHECKPOINT_EVERY,
          validation=None, callback=None, precomputed=None):
    """Solve the dual kernel SVM (1) with C = 1/(2nλ) by closed-form ADMM (Algorithm 2).

    The primal problem is F(f) = (1/n) Σ s_i max(0, 1 − y_i f(x_i)) + λ‖h‖²_H, f = h + b,
    over the kernel K̃ of ``operator`` (see the module docstring).  The paper runs 10
    iterations at a large β, which returns an early-stopped point (a certified relative gap
    near 1, and the same model for every C: BENCHMARKS.md, "Other solvers"); here the
    default stop is the certified relative gap ``tol``, with over-relaxation (Boyd et al.,
    Section 3.4.3) to get there in fewer iterations.

    Parameters
    ----------
    operator : DenseKernel, NystromKernel or HSSKernel
        The factorised shifted kernel K̃ + βI (:mod:`snacks_core.kernels.operators`); reusable
        across calls.
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    lam : float
        Regularisation λ > 0.
    sample_weight : ndarray of shape (n,), optional
        Weights s_i: the box is 0 ≤ z_i ≤ C s_i.
    max_iter : int
        Budget of ADMM iterations.
    tol : float
        Stop at the first checkpoint whose certified relative gap (F − D)/F is at most
        ``tol``; 0 runs ``max_iter`` iterations.
    relaxation : float in (0, 2)
        Over-relaxation factor ρ: the z- and μ-steps use ρx + (1 − ρ)z in place of x
        (1 is the paper's plain ADMM; 1.5–1.8 is the usual faster choice).
    checkpoint_every : int
        Iterations between checkpoints (and gap tests); the last iteration always is one.
        A checkpoint costs one product with K̃ (two columns), about one ADMM iteration.
    validation : tuple (X_val, y_val), optional
        Held-out raw data whose error rate is recorded at each checkpoint, as the model
        would predict then (for HSS, with the evaluation :func:`choose_evaluation` picks
        at that checkpoint).
    callback : callable(record: dict, dual_coef: ndarray), optional
        Called at each checkpoint with the full vector y∘z.
    precomputed : tuple, optional
        :func:`precompute` of ``operator``, shared by several calls (λ grid, classes).

    Returns
    -------
    SolverResult
        ``support`` holds the rows with z_j > 0 (int64), ``coef`` their y_j z_j and
        ``intercept`` b, the minimiser of the primal objective for the returned z
        (``_intercept``).  One checkpoint every ``checkpoint_every`` iterations with the
        primal objective F on K̃ (f = K̃(y∘z) + b) and the certified gap F − D(ẑ),
        D(α) = 2λΣα_i − λ(y∘α)ᵀK̃(y∘α) at ẑ, z with one class scaled down so that
        yᵀẑ = 0; the history ends with the returned point.  Time excludes the
        factorisation (``operator.build_time``), :func:`precompute` and the checkpoints;
        ``epoch`` is NaN (an iteration is a solve, not a pass over the data).
        ``stop_reason`` is ``'tol_gap'`` or ``'max_iter'``.  ``info`` holds ``beta``,
        ``relaxation``, ``solve_time`` and ``checkpoint_time`` (seconds) and, for an
        HSS operator, its ``compression`` report and the ``evaluation`` of new rows
        chosen by :func:`choose_evaluation` (pass it to ``operator.model``).
    """
    return solve_path(operator, y, [lam], sample_weight=sample_weight, max_iter=max_iter,
                      tol=tol, relaxation=relaxation, checkpoint_every=checkpoint_every,
                      validation=validation, callback=callback, precomputed=precomputed)[0]


def solve_path(operator, y, lams, *, sample_weight=None, max_iter=DEFAULT_MAX_ITER,
               tol=DEFAULT_TOL, relaxation=DEFAULT_RELAXATION,
               checkpoint_every=DEFAULT_CHECKPOINT_EVERY, validation=None, callback=None,
               precomputed=None):
    """:func:`solve` for each λ of a grid, reusing the one factorisation of K̃ + βI.

    This is Algorithm 3 of the paper: a grid costs the factorisation, one
    :func:`precompute` and the ADMM iterations.  The runs for the different λ are
    independent and iterate together: each iteration makes one solve with a block of
    right-hand sides, one column per λ still running, which costs far less than as many
    separate solves; each λ stops on its own certified gap, so each C gets its own model.
    Each λ's history time is its share of the joint iterations (their time divided by the
    number of λ in them).  Options are those of :func:`solve`; ``callback`` is called
    for every λ's checkpoints.  Returns the list of :func:`solve`'s results, in the
    order of ``lams``.
    """
    n = operator.n
    lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if lams.ndim != 1 or lams.shape[0] == 0:
        raise ValueError("lams must be a non-empty 1-D sequence of regularisation values.")
    for lam in lams:
        _, y, sample_weight = check_problem(np.empty((n, 0)), y, lam, sample_weight)
    path = _Path(operator, y, lams, sample_weight, relaxation,
                 precompute(operator) if precomputed is None else precomputed)
    for iteration in range(1, int(max_iter) + 1):
        columns = np.flatnonzero(path.running)
        z_next = path.iterate(columns, iteration)
        if iteration % checkpoint_every and iteration < max_iter:
            continue
        path.checkpoint(columns, z_next, iteration, tol, validation, callback)
        if not np.any(path.running):
            break
    return path.results()


class _Path:
    """The ADMM iterates (z, μ) of every λ of a path, one column each, and their histories.

    A column runs until its certified gap meets ``tol`` at a checkpoint; each iteration
    advances the running columns together (one solve with a block of right-hand sides).
    """

    def __init__(self, operator, y, lams, sample_weight, relaxation, precomputed):
        n, count = operator.n, lams.shape[0]
        self.operator, self.y, self.lams, self.sample_weight = operator, y, lams, sample_weight
        self.relaxation = relaxation
        self.upper = ((np.ones(n) if sample_weight is None else sample_weight)[:, None]
                      * lam_to_C(lams, n)[None, :])
        ones_solve, self.ones_dot = precomputed
        self.labels = y[:, None]
        self.y_ones_solve = (y * ones_solve)[:, None]
        self.z = np.zeros((n, count))
        self.mu = np.zeros((n, count))
        self.histories = [{name: [] for name in HISTORY_COLUMNS} for _ in range(count)]
        self.intercepts = np.zeros(count)
        self.elapsed = np.zeros(count)
        self.checkpoint_time = 0.0
        self.running = np.ones(count, bool)
        self.n_iter = np.zeros(count, dtype=np.int64)
        self.stop_reasons = [MAX_ITER] * count

    def iterate(self, columns, iteration):
        """One ADMM iteration (Algorithm 2) of the ``columns``; returns their new z."""
        n, beta, relaxation = self.operator.n, self.operator.beta, self.relaxation
        z, mu = self.z, self.mu
        start = time.perf_counter()
        r = self.operator.solve(self.labels * (1.0 + mu[:, columns] + beta * z[:, columns]))
        r = r.reshape(n, -1)
        x = self.labels * r - (r.sum(axis=0) / self.ones_dot) * self.y_ones_solve
        relaxed = relaxation * x + (1.0 - relaxation) * z[:, columns]
        z_next = np.clip(relaxed - mu[:, columns] / beta, 0.0, self.upper[:, columns])
        mu[:, columns] -= beta * (relaxed - z_next)
        z[:, columns] = z_next
        self.elapsed[columns] += (time.perf_counter() - start) / columns.shape[0]
        self.n_iter[columns] = iteration
        return z_next

    def checkpoint(self, columns, z_next, iteration, tol, validation, callback):
        """Record F, the certified gap and the held-out error of the ``columns``; those whose
        relative gap is at most ``tol`` stop."""
        start = time.perf_counter()
        self.intercepts[columns], objectives, gaps = _checkpoints(
            self.operator, self.y, z_next, self.upper[:, columns], self.lams[columns],
            self.sample_weight)
        coef = self.labels * z_next
        errors = self._validation_errors(columns, coef, validation)
        converged = gaps <= tol * objectives
        for k, column in enumerate(columns):
            history = self.histories[column]
            row = (iteration, np.nan, self.elapsed[column], objectives[k], gaps[k], errors[k])
            for name, value in zip(HISTORY_COLUMNS, row, strict=False):
                history[name].append(float(value))
            if callback is not None:
                callback({name: history[name][-1] for name in HISTORY_COLUMNS}, coef[:, k])
            if converged[k]:
                self.stop_reasons[column] = TOL_GAP
        self.running[columns[converged]] = False
        self.checkpoint_time += time.perf_counter() - start

    def _validation_errors(self, columns, coef, validation):
        """Error rate on ``validation`` of each column's model as it stands (NaN without)."""
        if validation is None:
            return np.full(columns.shape[0], np.nan)
        X_val, y_val = validation
        operator = self.operator
        if hasattr(operator, "compression"):
            # Each column as its model would predict: the evaluation it would choose now.
            decision = np.column_stack([
                operator.decision(X_val, coef[:, k], choose_evaluation(
                    operator, self.y, coef[:, k], self.intercepts[column],
                    self.sample_weight)["evaluation"])
                for k, column in enumerate(columns)])
        else:
            decision = operator.decision(X_val, coef).reshape(-1, columns.shape[0])
        return np.mean(np.where(decision + self.intercepts[columns] > 0, 1.0, -1.0)
                       != np.ravel(y_val)[:, None], axis=0)

    def results(self):
        """One :class:`SolverResult` per λ: its support rows, their coefficients y_j z_j,
        intercept and history."""
        operator, y = self.operator, self.y
        info = {"beta": operator.beta, "relaxation": float(self.relaxation),
                "checkpoint_time": self.checkpoint_time, "solve_time": float(self.elapsed.sum())}
        if hasattr(operator, "compression"):
            info["compression"] = operator.compression
        results = []
        for column in range(self.z.shape[1]):
            z = self.z[:, column]
            support = np.flatnonzero(z > 0.0).astype(np.int64)
            column_info = dict(info)
            if hasattr(operator, "compression"):
                column_info.update(choose_evaluation(operator, y, self.labels[:, 0] * z,
                                                     self.intercepts[column], self.sample_weight))
            history = {name: np.asarray(v, dtype=np.float64)
                       for name, v in self.histories[column].items()}
            results.append(SolverResult(
                coef=y[support] * z[support], history=history, n_iter=int(self.n_iter[column]),
                n_epochs=np.nan, stop_reason=self.stop_reasons[column], info=column_info,
                intercept=float(self.intercepts[column]), support=support))
        return results


def choose_evaluation(operator, y, coef, intercept, sample_weight=None, rows=1000, seed=0):
    """How an HSS model should evaluate new rows: ``'exact'`` kernel or K̃'s ``'extension'``.

    Both are evaluated on up to ``rows`` training rows drawn with a fixed seed, where K̃'s
    own values (K̃c)_i are known: the one with the smaller mean hinge loss
    (1/|S|) Σ s_i max(0, 1 − y_i f(x_i)) is kept (see :meth:`HSSKernel.model`).  Returns
    ``{'evaluation': …, 'evaluation_hinge': {'exact': …, 'extension': …}}``; the
    extension's value is that of K̃ itself, which it reproduces on training rows.
    """
    sample = np.random.default_rng(seed).choice(operator.n, min(rows, operator.n), replace=False)
    sample_weight = np.ones(operator.n) if sample_weight is None else sample_weight
    values = {"extension": operator.matvec(coef)[sample],
              "exact": operator.exact_decision(operator.X[sample], coef)}
    hinge = {name: float(np.mean(sample_weight[sample]
                                 * np.maximum(0.0, 1.0 - y[sample] * (f + intercept))))
             for name, f in values.items()}
    return {"evaluation": min(hinge, key=hinge.get), "evaluation_hinge": hinge}


def _intercept(margin_gap, y, z, upper, sample_weight):
    """The intercept b minimising (1/n) Σ s_i max(0, 1 − y_i (h_i + b)) for the current h.

    ``margin_gap[j]`` is y_j − h_j, h = K̃(y∘z): the hinge of row j has its kink at
    b = margin_gap[j].  At the dual optimum, eq. (7) (the mean of y_j − h_j over the margin
    support vectors 0 < z_j < C s_j) lies among these minimisers; before it, eq. (7) can be
    far off (several times LIBSVM's intercept at a 1 % gap on a9a-shaped data), while the
    minimiser is exact for the h at hand and makes F, and the gap, smaller.
    The objective is convex and piecewise linear in b, its slope Σ_{y_j<0, b>kink} s_j −
    Σ_{y_j>0, b<kink} s_j rising through the sorted kinks; when it is zero on an interval,
    eq. (7)'s value clipped to that interval is taken (the middle without free vectors).
    """
    order = np.argsort(margin_gap, kind="stable")
    kinks = margin_gap[order]
    w = sample_weight[order]
    positive = y[order] > 0
    # Slope just right of kink k: negatives with kink ≤ b count +s, positives above −s.
    negative_below = np.cumsum(np.where(positive, 0.0, w))
    positive_above = w[positive].sum() - np.cumsum(np.where(positive, w, 0.0))
    slope = negative_below - positive_above
    k = int(np.searchsorted(slope, 0.0, side="left"))
    if k >= kinks.shape[0]:
        return float(kinks[-1])
    if slope[k] > 0.0 or k + 1 == kinks.shape[0]:
        return float(kinks[k])
    low, high = kinks[k], kinks[k + 1]
    free = (z > 0.0) & (z < upper)
    middle = float(margin_gap[free].mean()) if np.any(free) else 0.5 * (low + high)
    return float(np.clip(middle, low, high))


def _checkpoints(operator, y, z, upper, lams, sample_weight):
    """Per column of z: intercept, primal objective F on K̃ and certified gap.

    One product with K̃ for both: K̃(y∘z) is split into its positive-class and
    negative-class parts, from which the feasible dual point (one class scaled down so
    that yᵀẑ = 0) gets its quadratic term without a second product.
    """
    labels = y[:, None]
    positive_rows = (y > 0)[:, None]
    coef = labels * z
    count = z.shape[1]
    parts = np.hstack([np.where(positive_rows, coef, 0.0), np.where(positive_rows, 0.0, coef)])
    products = operator.matvec(parts).reshape(parts.shape)
    K_positive, K_negative = products[:, :count], products[:, count:]
    Kc = K_positive + K_negative
    sample_weight = np.ones(y.shape[0]) if sample_weight is None else sample_weight
    intercepts = np.array([_intercept(y - Kc[:, k], y, z[:, k], upper[:, k], sample_weight)
                           for k in range(count)])
    # Weights of 1 leave the losses as they are (x·1 = x exactly).
    loss = np.maximum(0.0, 1.0 - labels * (Kc + intercepts)) * sample_weight[:, None]
    objectives = loss.mean(axis=0) + lams * np.einsum("ij,ij->j", coef, Kc)
    positive, negative = z[y > 0].sum(axis=0), z[y < 0].sum(axis=0)
    scale_positive = np.where(positive > negative, negative / np.maximum(positive, 1e-300), 1.0)
    scale_negative = np.where(negative > positive, positive / np.maximum(negative, 1e-300), 1.0)
    c_positive, c_negative = parts[:, :count], parts[:, count:]
    # (s₊c₊ + s₋c₋)ᵀ K̃ (s₊c₊ + s₋c₋) from K̃c₊ and K̃c₋ (K̃ symmetric).
    quadratic = (
        scale_positive**2 * np.einsum("ij,ij->j", c_positive, K_positive)
        + 2.0 * scale_positive * scale_negative * np.einsum("ij,ij->j", c_positive, K_negative)
        + scale_negative**2 * np.einsum("ij,ij->j", c_negative, K_negative)
    )
    duals = 2.0 * lams * (scale_positive * positive + scale_negative * negative) - lams * quadratic
    return intercepts, objectives, np.maximum(objectives - duals, 0.0)
