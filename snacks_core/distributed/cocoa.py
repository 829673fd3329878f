"""CoCoA+ on the partitions of a cluster: local dual coordinate descent, one m-vector per
partition per round, a certified duality gap each round.

The problem is the estimator's F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², in
LIBLINEAR's scaling (:mod:`snacks_core.solvers.liblinear`): C = 1/(2nλ), dual variables
α_i ∈ [0, C s_i], w = Σ α_i y_i z_i, and F(w) = 2λ P(w), D(α) = 2λ (Σ α_i − ½‖w‖²).

CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtárik & Takáč, "Adding vs. averaging in distributed
primal-dual optimization", ICML 2015) with adding (γ = 1) and σ' = K, the number of blocks
updated independently: the worker groups (the partitions one worker holds make one
"partition" k below, :func:`~snacks_core.distributed.fit.fit_cluster`), not the Dask
partitions.  In each round every partition k improves its own α_[k] on the local subproblem

    max_Δ Σ_{i∈k} Δ_i − ⟨w, Σ_{i∈k} Δ_i y_i z_i⟩ − (σ'/2) ‖Σ_{i∈k} Δ_i y_i z_i‖²,

α_i + Δ_i ∈ [0, C s_i], by :data:`LOCAL_PASSES` passes of LIBLINEAR's coordinate step
(the jitted ``dual_ascent_sweep`` of :mod:`snacks_core.solvers.liblinear`, on the
variables scaled by σ' so that its step is the subproblem's); it sends Δw_k = Σ Δ_i y_i z_i
and Σ Δ_i, and the client adds them: w ← w + t Σ_k Δw_k and α ← α + tΔ, which keeps
w = Σ α_i y_i z_i.  The subproblems' sum bounds the dual's increase at t = 1 from below
(σ' = K makes it safe for any partition of the rows); t ∈ [0, 1] is the exact maximiser of
the dual along the step (a concave quadratic in t, whose terms the client has), so D(α)
rises every round at least as much as CoCoA+'s own step.  The rounds start from α = 0, or
from the averaged Snacks steps' dual estimate when they polish them
(:mod:`~snacks_core.distributed.assg`).

The first local pass reads every row at the round's w, so each partition also returns
C Σ s_i max(0, 1 − y_i⟨w, z_i⟩) and Σ α_i at no extra read: the client has F(w) and D(α)
for the w it sent, and F(w) − F* ≤ F(w) − D(α), the certified gap of the history.
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from snacks_core.core.cancellation import raise_if_stopped
from snacks_core.distributed.waiting import DEFAULT_TIMEOUT_S, wait_for
from snacks_core.solvers.base import (
    EARLY_STOPPING,
    HISTORY_COLUMNS,
    MAX_EPOCHS,
    TOL_GAP,
    SolverResult,
)
from snacks_core.solvers.liblinear import dual_ascent_sweep
from snacks_core.solvers.objective import matvec
from snacks_core.solvers.snacks import HeldOutPatience

# Local passes of coordinate descent per round: more passes solve the local subproblems
# better (fewer rounds), fewer keep the workers' time per round short.
LOCAL_PASSES = 2
# Times a round is run again after partitions lost their dual variables with a worker.
RESTARTS = 3
# Rows of a float16 (compact) embedding converted to float32 at once for the local solver.
COMPACT_BLOCK_ROWS = 8192


class RoundSummary(NamedTuple):
    """What one partition sends the client after a round: Δw_k, the hinge sum
    C Σ s_i max(0, 1 − y_i⟨w, z_i⟩) and Σ α_i at the round's w and α, Σ Δα_i, and its
    held-out rows' errors at w."""

    dw: np.ndarray
    hinge: float
    alpha_sum: float
    step_sum: float
    held_errors: int


def shuffled_blocks(Z, rng):
    """``(start, block)`` of Z in a random order, float32 or float64: one block in memory,
    blocks converted from float16 in turn for a compact Z."""
    if Z.dtype != np.float16:
        yield 0, Z
        return
    starts = rng.permutation(np.arange(0, Z.shape[0], COMPACT_BLOCK_ROWS))
    for s in starts:
        yield int(s), Z[s:s + COMPACT_BLOCK_ROWS].astype(np.float32)


def local_round(partition, alpha, problem, w, C, sigma, passes, seed):
    """Run on a worker: ``passes`` passes of the local solver on subproblem ``problem`` of a
    :class:`~snacks_core.distributed.fit.Partition` from its dual variables ``alpha`` (None:
    zeros) and the round's ``w``; returns ``(Δα, RoundSummary)``.

    ``passes=0`` only certifies w (Δα and Δw are zero)."""
    y = partition.targets[problem]
    weight = partition.weight
    alpha = np.zeros(y.shape[0]) if alpha is None else alpha
    held_errors = 0
    if partition.Z_held is not None:
        held_errors = int(np.sum(partition.targets_held[problem]
                                 * matvec(partition.Z_held, w) <= 0))
    if passes == 0:
        hinge = C * float(np.sum(weight * np.maximum(0.0, 1.0 - y * matvec(partition.Z, w))))
        return np.zeros_like(alpha), RoundSummary(np.zeros_like(w), hinge, float(alpha.sum()),
                                                  0.0, held_errors)
    rng = np.random.default_rng(seed)
    scaled, local_w = sigma * alpha, w.copy()
    upper = (sigma * C) * weight
    hinge = 0.0
    for sweep in range(passes):
        for start, block in shuffled_blocks(partition.Z, rng):
            order = start + rng.permutation(block.shape[0]).astype(np.int64)
            total = dual_ascent_sweep(block, start, y, upper, partition.sqnorm, order,
                                      scaled, local_w, w)
            if sweep == 0:
                hinge += total / sigma
    step = scaled / sigma - alpha
    return step, RoundSummary((local_w - w) / sigma, hinge, float(alpha.sum()),
                              float(step.sum()), held_errors)


def take_step(alpha, round_result, size):
    """Run on a worker: α + size·Δα, from a :func:`local_round`'s result."""
    step = round_result[0]
    return size * step if alpha is None else alpha + size * step


class EmbeddedPartitions(NamedTuple):
    """The embedded partitions on the workers: futures of
    :class:`~snacks_core.distributed.fit.Partition` (one per worker group), the embedding's
    width k, the rows held out for early stopping across them and the rows each trains on."""

    futures: list
    width: int
    held_rows: int
    rows: np.ndarray


@dataclass(frozen=True)
class CocoaOptions:
    """The rounds' budget and stopping rules: at most ``max_rounds`` rounds (CoCoA+; the
    averaged Snacks steps read it as epochs), stop when the certified relative gap is at
    most ``tol``, or (``n_iter_no_change`` not None) by the in-memory early-stopping rule
    (:class:`~snacks_core.solvers.snacks.HeldOutPatience`): that many checkpoints without a
    lower held-out error, spanning as many epochs of rows (at most 250,000 rows); ``timeout``
    seconds per round."""

    max_rounds: int
    tol: float
    local_passes: int = LOCAL_PASSES
    n_iter_no_change: int | None = None
    timeout: float = DEFAULT_TIMEOUT_S


def solve_cocoa(client, partitions, problem, lam, n_train, options, *, seed,
                validation=None, progress=None, warm=None) -> SolverResult:
    """Minimise F on the embedded ``partitions`` for one-vs-rest subproblem ``problem`` by
    CoCoA+ rounds.

    Parameters
    ----------
    partitions : EmbeddedPartitions
    lam : float
        λ; ``n_train`` the rows trained on across partitions (C = 1/(2 n_train λ)).
    options : CocoaOptions
    seed : int
        Seeds the local solvers' coordinate orders (one stream per round and partition).
    validation : (Z_val, targets) or None
        An eval_set embedded on the client: its error is recorded each round.
    progress : callable or None
        Called as ``progress('training', round, max_rounds)`` after each round.
    warm : (alpha, shares) or None
        A start other than α = 0: futures of each partition's α (LIBLINEAR's scaling) and
        its share Σ_{i∈k} α_i y_i z_i of w (K × k, on the client).

    Returns
    -------
    SolverResult
        ``coef``: the w of the last certified round (gap ≤ tol), the final w (certified by
        one more read) when the rounds run out, or the round's w with the lowest held-out
        error on early stopping.  The history has one row per round (iteration = round,
        epoch = local passes made by then); ``info`` holds ``bytes_per_round`` (the bytes
        of the vectors sent each round: w to each partition, Δw back), ``partitions`` (K)
        and ``restarted`` (the rounds whose lost dual variables restarted from zero).
    """
    C = 1.0 / (2.0 * n_train * lam)
    K = len(partitions.futures)
    state = (_DualState([None] * K, np.zeros((K, partitions.width)), []) if warm is None
             else _DualState(list(warm[0]), np.array(warm[1], dtype=np.float64), []))
    w = state.shares.sum(axis=0)
    rows = {name: [] for name in HISTORY_COLUMNS}
    streams = np.random.SeedSequence([seed, problem]).spawn(options.max_rounds + 1)
    patience = (None if options.n_iter_no_change is None
                else HeldOutPatience(partitions.held_rows, options.n_iter_no_change, n_train))
    stop_reason, elapsed, start = MAX_EPOCHS, 0.0, time.perf_counter()
    for t in range(options.max_rounds + 1):
        raise_if_stopped()
        passes = options.local_passes if t < options.max_rounds else 0
        seeds = [int(s) for s in streams[t].generate_state(K)]
        w, rounds, summaries = _run_round(
            client, partitions, state, w,
            (problem, C, K, passes, seeds), f"CoCoA+ round {t} of problem {problem}",
            options.timeout)
        objective = 2.0 * lam * sum(s.hinge for s in summaries) + lam * float(w @ w)
        dual = 2.0 * lam * sum(s.alpha_sum for s in summaries) - lam * float(w @ w)
        held = sum(s.held_errors for s in summaries)
        error = (np.nan if validation is None else
                 float(np.mean(validation[1] * matvec(validation[0], w) <= 0)))
        elapsed = time.perf_counter() - start
        for name, value in zip(HISTORY_COLUMNS, (t, t * options.local_passes + passes,
                                                 elapsed, objective, max(objective - dual, 0.0),
                                                 error), strict=True):
            rows[name].append(float(value))
        if validation is None and options.n_iter_no_change is not None:
            rows["validation_error"][-1] = held / max(partitions.held_rows, 1)
        if progress is not None:
            progress("training", t, options.max_rounds)
        if objective - dual <= options.tol * objective:
            stop_reason = TOL_GAP
            break
        if patience is not None and patience.stop(held, w, t * options.local_passes * n_train):
            stop_reason, w = EARLY_STOPPING, patience.best
            break
        if passes == 0:
            break
        dw = sum(s.dw for s in summaries)
        size = _step_size(w, dw, sum(s.step_sum for s in summaries))
        state.alpha[:] = [client.submit(take_step, state.alpha[p], r, size, pure=False)
                          for p, r in enumerate(rounds)]
        for p, summary in enumerate(summaries):
            state.shares[p] += size * summary.dw
        w = w + size * dw
    history = {name: np.asarray(values) for name, values in rows.items()}
    return SolverResult(coef=w, history=history, n_iter=int(history["iteration"][-1]),
                        n_epochs=float(history["epoch"][-1]), stop_reason=stop_reason,
                        info={"bytes_per_round": 2 * K * w.nbytes, "partitions": K,
                              "restarted": state.restarted})


def _step_size(w, dw, step_sum):
    """The t ∈ [0, 1] that maximises the dual along the round's combined step: D(α + tΔα) =
    2λ (Σα + tΣΔα − ½‖w + tΔw‖²) is a concave quadratic in t, and α + tΔα stays in the
    box for t in [0, 1] (each partition's α + Δα does)."""
    curvature = float(dw @ dw)
    if curvature <= 0.0:
        return 1.0
    return float(np.clip((step_sum - float(w @ dw)) / curvature, 0.0, 1.0))


class _DualState(NamedTuple):
    """The dual variables kept on the workers (a future per partition, None for zeros), each
    partition's share Σ_{i∈k} α_i y_i z_i of w (on the client: K m-vectors), and the
    ``(round, partitions)`` whose variables were lost and restarted from zero."""

    alpha: list
    shares: np.ndarray
    restarted: list


def _run_round(client, partitions, state, w, task, what, timeout):
    """Submit one round (``task``: problem, C, σ', passes, a seed per partition) and wait
    for its summaries; returns ``(w, round futures, summaries)``.

    A partition whose dual variables were lost with a worker (its rows and embedding are
    recomputed by Dask from their graph; its variables, the product of every earlier round,
    are not kept) restarts from α = 0: its share leaves w, which keeps w = Σ α_i y_i z_i and
    the dual feasible, so the rounds go on from a lower dual to the same optimum.  The round
    is then run again, at most :data:`RESTARTS` times.
    """
    problem, C, sigma, passes, seeds = task
    for _attempt in range(RESTARTS + 1):
        rounds = [client.submit(local_round, future, state.alpha[p], problem, w, C, sigma,
                                passes, seeds[p], pure=False)
                  for p, future in enumerate(partitions.futures)]
        summaries = [client.submit(operator.itemgetter(1), r) for r in rounds]
        lost = wait_for(client, summaries, what, timeout, lost_ok=True)
        if not lost:
            return w, rounds, client.gather(summaries)
        for p in lost:
            w = w - state.shares[p]
            state.shares[p] = 0.0
            state.alpha[p] = None
        state.restarted.append((what, lost))
    raise RuntimeError(f"{what}: partition(s) {lost} were lost {RESTARTS + 1} times in a "
                       "row; the cluster is losing workers faster than the fit can recover.")

