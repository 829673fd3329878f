"""LIBLINEAR's dual coordinate descent on the Nyström L2-SVM, with a certified history.

Minimises

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²,

which is LIBLINEAR's L1-loss SVM ½‖w‖² + C Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) divided by
nC, with C = 1/(2nλ) and no intercept.  The Snacks paper (Section II-B, Tables III–VII)
runs LIBLINEAR on the same embedding as a dual baseline (Hsieh et al., "A dual coordinate
descent method for large-scale linear SVM", ICML 2008, Algorithm 1).

The method is LIBLINEAR's: outer iterations, each a sweep over the dual variables
α_i ∈ [0, C s_i] in a fresh random order, with the clipped Newton step along α_i and
w = Σ α_i y_i z_i kept up to date.  It runs here in numba (the jitted sweep of
:mod:`snacks_core.solvers.snacks_kernels`, shared with Snacks' polishing) instead of
through scikit-learn, so that every outer iteration becomes a checkpoint: the sweep that
starts at w_k reads every row once and, in the same read, sums the hinge at w_k, which
gives F(w_k); with D(α_k) = 2λ Σ α_i − λ‖w_k‖² (the dual of
:mod:`snacks_core.solvers.objective` at β_i = α_i/(C s_i)) it certifies F(w_k) − F* ≤
F(w_k) − D(α_k) at no extra pass.  LIBLINEAR's shrinking heuristic is left out: each sweep
visits every row, so each one certifies.
"""

from __future__ import annotations

import time

import numpy as np

from snacks_core.solvers.base import (
    MAX_EPOCHS,
    TOL_GAP,
    HistoryRecorder,
    SolverResult,
    check_problem,
    resolve_seed,
)
from snacks_core.solvers.objective import lam_to_C, primal_objective

# dual_ascent_sweep is LIBLINEAR's coordinate step: the distributed solver's local step too.
from snacks_core.solvers.snacks_kernels import dual_ascent_sweep, squared_norms


def solve(Z, y, lam, *, sample_weight=None, max_epochs=1000, tol=1e-4, random_state=None,
          validation=None, callback=None):
    """Minimise F(w) = (1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ‖w‖² by LIBLINEAR's dual
    coordinate descent (Hsieh et al. 2008, Algorithm 1; Snacks paper, Section II-B).

    Parameters
    ----------
    Z, y, lam, sample_weight
        The problem, as for every embedded solver (:mod:`snacks_core.solvers.base`):
        LIBLINEAR's C = 1/(2nλ), and its per-sample C_i = C s_i.
    max_epochs : int
        Outer iterations (sweeps over the n dual variables) at most: LIBLINEAR's
        ``max_iter``.
    tol : float
        Stop when the certified relative duality gap (F(w) − D(α)) / F(w) ≤ tol, the rule
        of Snacks and SmSVM (LIBLINEAR's own rule, a bound on the projected gradient,
        certifies nothing about F).  0 runs every sweep.
    random_state : None, int or numpy generator
        Seed of the coordinate orders.
    validation, callback
        Checkpoint hooks (:mod:`snacks_core.solvers.base`).

    Returns
    -------
    SolverResult
        One checkpoint per outer iteration k = 0, 1, …: w_k (w_0 = 0) with F(w_k) and its
        certified gap, recorded when the sweep that certifies it ends (``iteration`` is k,
        ``epoch`` the sweeps made by then, k + 1).  ``coef`` is the last certified w_k
        when the gap reached ``tol`` (``stop_reason='tol_gap'``); when the budget ends
        first (``'max_epochs'``) it is the final w, certified by one more read of the
        data outside the measured time.  ``n_iter`` is the returned point's k,
        ``n_epochs`` the sweeps made; ``info['dual_coef']`` holds the returned point's α
        (LIBLINEAR's scaling, w = Σ α_i y_i z_i).
    """
    Z, y, sample_weight = check_problem(Z, y, lam, sample_weight)
    n, m = Z.shape
    lam = float(lam)
    C = lam_to_C(lam, n)
    upper = C * (np.ones(n) if sample_weight is None else sample_weight)
    sqnorm = np.empty(n)
    squared_norms(Z, sqnorm)
    rng = np.random.default_rng(resolve_seed(random_state))
    alpha = np.zeros(n)
    w = np.zeros(m)
    # A sweep over no rows compiles (or loads) the kernel outside the measured time.
    dual_ascent_sweep(Z, 0, y, upper, sqnorm, np.empty(0, np.int64), alpha, w, w.copy())
    recorder = HistoryRecorder(Z, y, lam, sample_weight, validation, callback)
    stop_reason = MAX_EPOCHS
    sweeps = 0
    while sweeps < int(max_epochs):
        start, alpha_start = w.copy(), alpha.copy()
        # D(α_k) = 2λ Σ α_i − λ‖w_k‖², α and w as they stand before the sweep.
        dual = 2.0 * lam * float(alpha.sum()) - lam * float(start @ start)
        hinge = dual_ascent_sweep(Z, 0, y, upper, sqnorm, rng.permutation(n).astype(np.int64),
                                  alpha, w, start)
        sweeps += 1
        # The sweep's hinge sum is C Σ s_i max(0, 1 − y_i⟨w_k, z_i⟩), and 1/n = 2λC.
        objective = 2.0 * lam * hinge + lam * float(start @ start)
        recorder.record(start, sweeps - 1, sweeps, objective=objective,
                        gap=max(objective - dual, 0.0))
        if objective - dual <= tol * objective:
            stop_reason = TOL_GAP
            w, alpha = start, alpha_start
            break
    if stop_reason == MAX_EPOCHS:
        evaluation = time.perf_counter()
        objective = primal_objective(w, Z, y, lam, sample_weight)
        recorder.exclude_since(evaluation)
        dual = 2.0 * lam * float(alpha.sum()) - lam * float(w @ w)
        recorder.record(w, sweeps, sweeps, objective=objective, gap=max(objective - dual, 0.0))
    history = recorder.as_arrays()
    return SolverResult(
        coef=w,
        history=history,
        n_iter=int(history["iteration"][-1]),
        n_epochs=float(sweeps),
        stop_reason=stop_reason,
        info={"dual_coef": alpha, "checkpoint_time": recorder.excluded},
    )
