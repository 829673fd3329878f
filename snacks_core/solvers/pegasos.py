"""Pegasos: primal estimated sub-gradient solver for the Nyström L2-SVM.

Minimises

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²

by the stochastic subgradient method of Shalev-Shwartz, Singer, Srebro and Cotter,
"Pegasos: primal estimated sub-gradient solver for SVM" (Math. Program. 2011), the
primal baseline of the Snacks paper (Section II-C, reference [17]; Fig. 1).  F is
2λ-strongly convex, so the step size is η_t = 1/(2λt), and the optional projection is onto
the ball of radius sqrt(mean(s)/λ), which holds the minimiser because
λ‖w*‖² ≤ F(w*) ≤ F(0) = mean(s).

Every checkpoint is certified the way Snacks' are: the steps count, per row, how often it
was drawn and how often it violated the margin since the last power-of-two epoch; the
averaged indicators β_i ∈ [0, 1] give a dual point D(β) ≤ F* (:mod:`snacks_core.solvers.objective`),
computed in the same parallel pass as F(w)
(:func:`snacks_core.solvers.snacks_kernels.checkpoint_pass`).  Pegasos thus stops on
the same rule as Snacks, the certified relative gap ``tol``, within the same epoch budget,
so a comparison never ends one of them on a looser rule than the other (the relative change
of F between checkpoints, used before, stopped Pegasos at F = 0.267 where Snacks reached
0.206).
"""

from __future__ import annotations

import math
import time

import numpy as np

from snacks_core.core.compiled import njit
from snacks_core.solvers.base import (
    MAX_EPOCHS,
    TOL_GAP,
    HistoryRecorder,
    SolverResult,
    check_problem,
    resolve_seed,
)
from snacks_core.solvers.snacks_kernels import CHECKPOINT_TASK_ROWS, checkpoint_pass

# Below this the scale of w = scale · v is folded into v, before it underflows.
_MIN_SCALE = 1e-9


@njit(cache=True, nogil=True)
def _pegasos_steps(Z, y, sw, row_sqnorms, indices, v, scale, v_sqnorm, t0, lam, radius, hits,
                   violations):
    """Run one Pegasos step per entry of ``indices`` on w = scale · v, updating ``v`` in place.

    ``sw`` holds the sample weights s_i (the short name of the jitted loops).

    ``hits[i]`` and ``violations[i]`` count the draws of row i and those where its margin
    was violated (the dual estimate of the certificate).

    ``v_sqnorm`` is ‖v‖² on entry; ``t0`` the number of steps already made.  The shrink
    w ← (1 − 2η_tλ) w only rescales ``scale``; ‖v‖² follows each rank-one update from
    ⟨v, z_i⟩ and ‖z_i‖², so a step costs one pass over z_i whether or not it projects.
    Returns the new ``scale``.
    """
    m = Z.shape[1]
    for k in range(indices.shape[0]):
        i = indices[k]
        eta = 1.0 / (2.0 * lam * (t0 + k + 1))
        dot = 0.0
        for j in range(m):
            dot += v[j] * Z[i, j]
        margin = y[i] * scale * dot
        hits[i] += 1.0
        scale *= 1.0 - 2.0 * eta * lam
        if scale < _MIN_SCALE:
            for j in range(m):
                v[j] *= scale
            v_sqnorm *= scale * scale
            dot *= scale
            scale = 1.0
        if margin < 1.0:
            violations[i] += 1.0
            step = eta * sw[i] * y[i] / scale
            for j in range(m):
                v[j] += step * Z[i, j]
            v_sqnorm += 2.0 * step * dot + step * step * row_sqnorms[i]
        norm = scale * math.sqrt(max(v_sqnorm, 0.0))
        if norm > radius:
            scale *= radius / norm
    return scale


def solve(Z, y, lam, *, sample_weight=None, max_epochs=50, tol=1e-3, random_state=None,
          validation=None, callback=None, projection=True, checkpoints_per_epoch=1):
    """Minimise F(w) = (1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ‖w‖² with Pegasos.

    Each step draws a row i uniformly and moves along the stochastic subgradient
    2λw − s_i y_i z_i 1[y_i⟨w, z_i⟩ < 1] with step 1/(2λt) (Shalev-Shwartz et al. 2011;
    Snacks paper, Section II-C).  An epoch is n steps; its rows are drawn with replacement.

    Parameters
    ----------
    Z, y, lam, sample_weight
        The problem, as for every embedded solver (:mod:`snacks_core.solvers.base`).
    max_epochs : int
        Number of epochs (n steps each) at most.
    tol : float
        Stop when the certified relative duality gap (F(w) − D) / F(w) ≤ tol, D the best
        dual value of the checkpoints so far (Snacks' rule); 0 runs all epochs.
    random_state : None, int or numpy generator
        Seed of the row draws; the same seed gives the same weights.
    validation, callback
        Checkpoint hooks (:mod:`snacks_core.solvers.base`).
    projection : bool
        Project onto the ball of radius sqrt(mean(s)/λ) after each step.
    checkpoints_per_epoch : int
        History checkpoints (and stopping tests) per epoch; at most n are made.

    Returns
    -------
    SolverResult
        The last iterate, with the history at w = 0 and at every checkpoint (objective
        and certified gap); ``stop_reason`` is ``'max_epochs'`` or ``'tol_gap'``.
        ``info['checkpoint_time']`` is the time spent certifying (not in the history).
    """
    Z, y, sample_weight = check_problem(Z, y, lam, sample_weight)
    n, m = Z.shape
    sample_weight = np.ones(n) if sample_weight is None else sample_weight
    radius = math.sqrt(sample_weight.mean() / lam) if projection else np.inf
    rng = np.random.default_rng(resolve_seed(random_state))
    iterate = _Iterate(Z, y, sample_weight, float(lam), radius)
    certificate = _Certificate(Z, y, sample_weight, float(lam))
    # A call with no steps compiles (or loads) the kernels, so that is not timed below.
    iterate.step(np.empty(0, np.int64))
    certificate(np.zeros(m), iterate.hits, iterate.violations)
    certificate.seconds = 0.0
    recorder = HistoryRecorder(Z, y, lam, sample_weight, validation, callback)
    recorder.record(np.zeros(m), 0, 0.0, *certificate(np.zeros(m), iterate.hits,
                                                      iterate.violations))
    stop_reason = _run(iterate, certificate, recorder, rng, int(max_epochs),
                       min(int(checkpoints_per_epoch), n), tol)
    return SolverResult(
        coef=iterate.w(),
        history=recorder.as_arrays(),
        n_iter=iterate.steps,
        n_epochs=iterate.steps / n,
        stop_reason=stop_reason,
        info={"checkpoint_time": certificate.seconds},
    )


def _run(iterate, certificate, recorder, rng, max_epochs, parts, tol):
    """Epochs of n steps (rows drawn with replacement), each cut into ``parts`` checkpoints;
    returns the stop reason."""
    n = iterate.Z.shape[0]
    bounds = np.linspace(0, n, parts + 1).round().astype(np.int64)
    for checkpoint in range(max_epochs * parts):
        part = checkpoint % parts
        if part == 0:
            indices = rng.integers(0, n, size=n)
        iterate.step(indices[bounds[part] : bounds[part + 1]])
        start = time.perf_counter()
        objective, gap = certificate(iterate.w(), iterate.hits, iterate.violations)
        epochs_done = (checkpoint + 1) / parts
        if epochs_done == int(epochs_done) and int(epochs_done) & (int(epochs_done) - 1) == 0:
            # After 1, 2, 4, … epochs the counts restart, so the dual estimate averages the
            # iterates of the last half of the run or more (suffix averaging), not the
            # early ones far from w*.
            iterate.hits[:] = 0.0
            iterate.violations[:] = 0.0
        recorder.exclude_since(start)
        recorder.record(iterate.w(), iterate.steps, iterate.steps / n, objective, gap)
        if gap <= tol * objective:
            return TOL_GAP
    return MAX_EPOCHS


class _Iterate:
    """The iterate w = scale · v, the steps made, and the per-row counts of draws and margin
    violations (the certificate's dual estimate)."""

    def __init__(self, Z, y, sample_weight, lam, radius):
        self.Z, self.y, self.sample_weight, self.lam, self.radius = Z, y, sample_weight, lam, radius
        n, m = Z.shape
        self.row_sqnorms = np.einsum("ij,ij->i", Z, Z, dtype=np.float64)
        self.v = np.zeros(m)
        self.scale = 1.0
        self.steps = 0
        self.hits, self.violations = np.zeros(n), np.zeros(n)

    def step(self, rows):
        """One Pegasos step per entry of ``rows``."""
        self.scale = _pegasos_steps(
            self.Z, self.y, self.sample_weight, self.row_sqnorms, rows, self.v, self.scale,
            float(self.v @ self.v), self.steps, self.lam, self.radius, self.hits,
            self.violations,
        )
        self.steps += rows.shape[0]

    def w(self):
        return self.scale * self.v


class _Certificate:
    """F(w) and the certified gap F(w) − max(D so far) in one parallel pass over Z."""

    def __init__(self, Z, y, sample_weight, lam):
        self.Z, self.y, self.sample_weight, self.lam = Z, y, sample_weight, lam
        n, m = Z.shape
        tasks = (n + CHECKPOINT_TASK_ROWS - 1) // CHECKPOINT_TASK_ROWS
        self.beta, self.margin = np.zeros(n), np.zeros(n)
        self.hinge_parts, self.g_parts = np.zeros(tasks), np.zeros((tasks, m))
        self.best_dual = -np.inf
        self.seconds = 0.0

    def __call__(self, w, hits, violations):
        start = time.perf_counter()
        n = self.Z.shape[0]
        checkpoint_pass(self.Z, 0, self.y, self.sample_weight, w, hits, violations, self.beta,
                        self.margin, self.hinge_parts, self.g_parts, True)
        objective = float(self.hinge_parts.sum()) / n + self.lam * float(w @ w)
        w_beta = self.g_parts.sum(axis=0) / (2.0 * self.lam * n)
        dual = float(self.sample_weight @ self.beta) / n - self.lam * float(w_beta @ w_beta)
        self.best_dual = max(self.best_dual, dual)
        self.seconds += time.perf_counter() - start
        return objective, max(objective - self.best_dual, 0.0)
