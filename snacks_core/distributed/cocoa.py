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

import time
from dataclasses import dataclass, replace
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
from snacks_core.solvers.objective import decision_values, matvec
from snacks_core.solvers.snacks import HeldOutPatience
from snacks_core.solvers.snacks_kernels import dual_ascent_sweep, dual_ascent_sweep_columns

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


class CocoaTask(NamedTuple):
    """One subproblem's part of a round on a partition: the round's w, the local passes
    (0: only certify w) and the local solver's seed (on the client, before the round is
    sent: every partition's seed)."""

    problem: int
    w: np.ndarray
    passes: int
    seed: int


def local_rounds(partition, alphas, tasks, C, sigma):
    """Run on a worker: one round of several subproblems (a :class:`CocoaTask` each) on a
    :class:`~snacks_core.distributed.fit.Partition` from their dual variables ``alphas``
    (problem → α; None, or a problem left out or None: zeros); returns problem →
    ``(Δα, RoundSummary)``.

    The subproblems making the same number of passes make them together, in one order of
    the rows drawn from the first one's seed: each visit of a row reads z_i once for all of
    them (:func:`~snacks_core.solvers.snacks_kernels.dual_ascent_sweep_columns`), each
    making its own coordinate step, exactly as separate passes in that order would (a
    subproblem alone makes LIBLINEAR's single-problem sweep)."""
    alphas = alphas or {}
    weight, n = partition.weight, partition.weight.shape[0]
    problems = [task.problem for task in tasks]
    W = np.vstack([task.w for task in tasks])
    A = np.vstack([np.zeros(n) if alphas.get(p) is None else alphas[p] for p in problems])
    held_errors = np.zeros(len(tasks), np.int64)
    if partition.Z_held is not None:
        held_errors = np.sum(partition.targets_held[problems]
                             * decision_values(partition.Z_held, W).T <= 0, axis=1)
    steps, local_W, hinge = np.zeros_like(A), W.copy(), np.zeros(len(tasks))
    for passes in sorted({task.passes for task in tasks}):
        ks = [k for k, task in enumerate(tasks) if task.passes == passes]
        Y = partition.targets[[problems[k] for k in ks]]
        if passes == 0:
            margins = Y * decision_values(partition.Z, W[ks]).T
            hinge[ks] = C * (np.maximum(0.0, 1.0 - margins) @ weight)
            continue
        rng = np.random.default_rng(tasks[ks[0]].seed)
        scaled, joint_W, start_W, sums = sigma * A[ks], W[ks], W[ks], np.zeros(len(ks))
        upper = np.empty_like(scaled)
        upper[:] = (sigma * C) * weight
        for sweep in range(passes):
            for start, block in shuffled_blocks(partition.Z, rng):
                order = start + rng.permutation(block.shape[0]).astype(np.int64)
                if len(ks) == 1:
                    sums[0] += dual_ascent_sweep(block, start, Y[0], upper[0],
                                                 partition.sqnorm, order, scaled[0],
                                                 joint_W[0], start_W[0])
                else:
                    dual_ascent_sweep_columns(block, start, Y, upper, partition.sqnorm,
                                              order, scaled, joint_W, start_W, sums)
            if sweep == 0:
                hinge[ks] = sums / sigma
        steps[ks] = scaled / sigma - A[ks]
        local_W[ks] = joint_W
    return {p: (steps[k], RoundSummary((local_W[k] - W[k]) / sigma, float(hinge[k]),
                                       float(A[k].sum()), float(steps[k].sum()),
                                       int(held_errors[k])))
            for k, p in enumerate(problems)}


def take_steps(alphas, round_result, sizes):
    """Run on a worker: α + size·Δα of each problem in ``sizes`` (problem → size), from a
    :func:`local_rounds` result; the problems left out are done and dropped."""
    alphas = alphas or {}
    return {p: size * round_result[p][0] if alphas.get(p) is None
            else alphas[p] + size * round_result[p][0] for p, size in sizes.items()}


def summaries_of(round_result):
    """Run on a worker: the :class:`RoundSummary` of each problem of a round (what the client
    gathers; Δα stays)."""
    return {p: summary for p, (_, summary) in round_result.items()}


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
    lower held-out error, spanning 1.4 times as many epochs of rows (at most 250,000 rows);
    ``timeout``
    seconds per round."""

    max_rounds: int
    tol: float
    local_passes: int = LOCAL_PASSES
    n_iter_no_change: int | None = None
    timeout: float = DEFAULT_TIMEOUT_S


def solve_cocoa(client, partitions, problems, lam, n_train, options, *, seed,
                validation=None, progress=None, warm=None) -> list[SolverResult]:
    """Minimise F on the embedded ``partitions`` for the one-vs-rest subproblems
    ``problems`` by CoCoA+ rounds, all of them in the same rounds: one task per partition a
    round makes every subproblem's local passes (:func:`local_rounds`), so K subproblems
    take the rounds of one, not K times as many.  Each keeps its own w, dual variables,
    step size, history and stop rules, and leaves the rounds when one holds.

    Parameters
    ----------
    partitions : EmbeddedPartitions
    problems : list of int
        The subproblems (rows of each partition's ``targets``).
    lam : float
        λ; ``n_train`` the rows trained on across partitions (C = 1/(2 n_train λ)).
    options : CocoaOptions
    seed : int
        Seeds the local solvers' coordinate orders (one stream per round and partition).
    validation : (Z_val, targets) or None
        An eval_set embedded on the client (``targets`` one vector per problem): its error
        is recorded each round.
    progress : callable or None
        Called as ``progress('training', round, rounds)`` after each round (``rounds``:
        the largest budget of the problems).
    warm : (alphas, shares, max_rounds) or None
        A start other than α = 0: futures of each partition's α (problem → α, LIBLINEAR's
        scaling), each problem's shares Σ_{i∈k} α_i y_i z_i of w (K × k, on the client) and
        each problem's budget of rounds (instead of ``options.max_rounds``).

    Returns
    -------
    list of SolverResult, in the order of ``problems``
        ``coef``: the w of the last certified round (gap ≤ tol), the final w (certified by
        one more read) when the rounds run out, or the round's w with the lowest held-out
        error on early stopping.  The history has one row per round (iteration = round,
        epoch = local passes made by then); ``info`` holds ``bytes_per_round`` (the bytes
        of the vectors sent each round: w to each partition, Δw back), ``partitions`` (K)
        and ``restarted`` (the rounds whose lost dual variables restarted from zero).
    """
    C = 1.0 / (2.0 * n_train * lam)
    K = len(partitions.futures)
    alphas = [None] * K if warm is None else list(warm[0])
    columns = [_CocoaColumn(
        problem, options if warm is None else replace(options, max_rounds=warm[2][problem]),
        np.zeros((K, partitions.width)) if warm is None
        else np.array(warm[1][problem], dtype=np.float64),
        np.random.SeedSequence([seed, problem]), None if options.n_iter_no_change is None
        else HeldOutPatience(partitions.held_rows, options.n_iter_no_change, n_train),
        None if validation is None else (validation[0], validation[1][problem]))
        for problem in problems]
    active, start = list(columns), time.perf_counter()
    budget = max(column.options.max_rounds for column in columns)
    for t in range(budget + 1):
        raise_if_stopped()
        tasks = [column.task(t, K) for column in active]
        rounds, summaries = _run_round(client, partitions, alphas, active, tasks, C,
                                       f"CoCoA+ round {t} of {named_problems(active)}",
                                       options.timeout)
        sizes = {}
        for column, task in zip(active, tasks, strict=True):
            size = column.measure(t, task, [s[column.problem] for s in summaries], lam,
                                  partitions, n_train, time.perf_counter() - start)
            if size is not None:
                sizes[column.problem] = size
        if progress is not None:
            progress("training", t, budget)
        active = [column for column in active if column.stop_reason is None]
        if not active:
            break
        alphas = [client.submit(take_steps, alphas[p], r, sizes, pure=False)
                  for p, r in enumerate(rounds)]
    return [column.result(K) for column in columns]


def named_problems(columns):
    """The problems of a round, for its messages."""
    if len(columns) == 1:
        return f"problem {columns[0].problem}"
    return f"problems {', '.join(str(column.problem) for column in columns)}"


class _CocoaColumn:
    """One subproblem's rounds: its w (the sum of the partitions' ``shares``), options,
    seeds, early stopping's patience, validation rows, history and stop reason."""

    def __init__(self, problem, options, shares, streams, patience, validation):
        self.problem, self.options, self.shares = problem, options, shares
        self.w = shares.sum(axis=0)
        self.streams = streams.spawn(options.max_rounds + 1)
        self.patience, self.validation = patience, validation
        self.history = {name: [] for name in HISTORY_COLUMNS}
        self.stop_reason, self.restarted = None, []

    def task(self, t, K):
        """Round t's :class:`CocoaTask` for every partition but the w (set when sent)."""
        passes = self.options.local_passes if t < self.options.max_rounds else 0
        return CocoaTask(self.problem, None, passes,
                         [int(s) for s in self.streams[t].generate_state(K)])

    def measure(self, t, task, summaries, lam, partitions, n_train, elapsed):
        """Record round t from the partitions' summaries; sets the stop reason when a rule
        holds, else moves w (and its shares) by the round's step and returns the step's
        size (the dual variables' move, on the workers)."""
        w, options = self.w, self.options
        objective = 2.0 * lam * sum(s.hinge for s in summaries) + lam * float(w @ w)
        dual = 2.0 * lam * sum(s.alpha_sum for s in summaries) - lam * float(w @ w)
        held = sum(s.held_errors for s in summaries)
        validation = self.validation
        error = (np.nan if validation is None else
                 float(np.mean(validation[1] * matvec(validation[0], w) <= 0)))
        for name, value in zip(HISTORY_COLUMNS, (t, t * options.local_passes + task.passes,
                                                 elapsed, objective, max(objective - dual, 0.0),
                                                 error), strict=True):
            self.history[name].append(float(value))
        if validation is None and options.n_iter_no_change is not None:
            self.history["validation_error"][-1] = held / max(partitions.held_rows, 1)
        if objective - dual <= options.tol * objective:
            self.stop_reason = TOL_GAP
        elif self.patience is not None and self.patience.stop(
                held, w, t * options.local_passes * n_train):
            self.stop_reason, self.w = EARLY_STOPPING, self.patience.best
        elif task.passes == 0:
            self.stop_reason = MAX_EPOCHS
        if self.stop_reason is not None:
            return None
        dw = sum(s.dw for s in summaries)
        size = _step_size(w, dw, sum(s.step_sum for s in summaries))
        for p, summary in enumerate(summaries):
            self.shares[p] += size * summary.dw
        self.w = w + size * dw
        return size

    def lose(self, p):
        """Partition p's dual variables were lost: its share leaves w."""
        self.w = self.w - self.shares[p]
        self.shares[p] = 0.0

    def result(self, K):
        history = {name: np.asarray(values) for name, values in self.history.items()}
        return SolverResult(coef=self.w, history=history,
                            n_iter=int(history["iteration"][-1]),
                            n_epochs=float(history["epoch"][-1]), stop_reason=self.stop_reason,
                            info={"bytes_per_round": 2 * K * self.w.nbytes, "partitions": K,
                                  "restarted": self.restarted})


def _step_size(w, dw, step_sum):
    """The t ∈ [0, 1] that maximises the dual along the round's combined step: D(α + tΔα) =
    2λ (Σα + tΣΔα − ½‖w + tΔw‖²) is a concave quadratic in t, and α + tΔα stays in the
    box for t in [0, 1] (each partition's α + Δα does)."""
    curvature = float(dw @ dw)
    if curvature <= 0.0:
        return 1.0
    return float(np.clip((step_sum - float(w @ dw)) / curvature, 0.0, 1.0))


def _run_round(client, partitions, alphas, columns, tasks, C, what, timeout):
    """Submit one round of the subproblems ``columns`` (their ``tasks``; σ' = K) on every
    partition and wait for their summaries; returns ``(round futures, summaries)``, one per
    partition (each problem → its part).

    A partition whose dual variables were lost with a worker (its rows and embedding are
    recomputed by Dask from their graph; its variables, the product of every earlier round,
    are not kept) restarts from α = 0 in every subproblem: its share leaves each w, which
    keeps w = Σ α_i y_i z_i and the dual feasible, so the rounds go on from a lower dual to
    the same optimum.  The round is then run again, at most :data:`RESTARTS` times.
    """
    K = len(partitions.futures)
    for _attempt in range(RESTARTS + 1):
        rounds = [client.submit(local_rounds, future, alphas[p],
                                [task._replace(w=column.w, seed=task.seed[p])
                                 for column, task in zip(columns, tasks, strict=True)],
                                C, K, pure=False)
                  for p, future in enumerate(partitions.futures)]
        summaries = [client.submit(summaries_of, r) for r in rounds]
        lost = wait_for(client, summaries, what, timeout, lost_ok=True)
        if not lost:
            return rounds, client.gather(summaries)
        for p in lost:
            alphas[p] = None
            for column in columns:
                column.lose(p)
        for column in columns:
            column.restarted.append((what, lost))
    raise RuntimeError(f"{what}: partition(s) {lost} were lost {RESTARTS + 1} times in a "
                       "row; the cluster is losing workers faster than the fit can recover.")
