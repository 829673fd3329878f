"""The Snacks steps on a cluster: ASSG on each worker's rows, averaged across workers each
round, a certified duality gap at every stage's end, then CoCoA+ to polish.

The problem is the estimator's F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², and the
method the in-memory Snacks solver's (:mod:`snacks_core.solvers.snacks`, Algorithm 1 of the
Snacks paper): stages of projected stochastic subgradient steps in the ball of radius D
around the stage's centre c (the previous stage's average), η and D divided by ω = 2 and
the stage's length doubled at each stage, η₀ and D₀ from the data.  On K workers each round
is local SGD with one averaging (Stich, "Local SGD converges fast and communicates little",
ICLR 2019): every worker runs ⌈r/K⌉ steps of the jitted ``assg_steps`` on its own rows from
the round's w (r the rows of a checkpoint in memory, :func:`rows_between_checks`), and the
client averages the workers' last iterates and their sums of iterates, weighted by their
rows (Σ_k (n_k/n) ∇F_k = ∇F).  Averages of points of the ball stay in it, so the stage's
average is ASSG's.  The drift between workers in a round is of the order of η times the
round's steps: it shrinks with η from stage to stage, so the stages converge on partitions
that are not i.i.d. (sorted by label) as well.

Each checkpoint (a round's running stage average) is evaluated in the next round's task,
before its steps: the held-out errors at every checkpoint, and at a stage's end a full pass
at the new centre that gives the hinge sum (F), ASSG's dual estimate β (the rows' averaged
margin-violation indicators) and Σ s_i β_i y_i z_i (a certified gap F − D(β), as in memory)
and the table ⟨z_i, c⟩ of the new stage.  What a round exchanges: w, c and the checkpoint to
each worker; its last iterate and its sum of iterates back (two m-vectors; three at a stage's
end).

Early stopping is the in-memory rule
(:class:`~snacks_core.solvers.snacks.HeldOutPatience`).  Without it, or where dual ascent
is fast (as in memory), ASSG hands over after
:data:`~snacks_core.solvers.snacks.POLISH_AFTER_EPOCHS` epochs to CoCoA+
(:mod:`~snacks_core.distributed.cocoa`) started from α_i = C s_i β_i, whose rounds reach the
certified ``tol``.
"""

from __future__ import annotations

import operator
import time
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from snacks_core.core.cancellation import raise_if_stopped
from snacks_core.core.threads import numba_threads
from snacks_core.distributed.cocoa import (
    COMPACT_BLOCK_ROWS,
    RESTARTS,
    shuffled_blocks,
    solve_cocoa,
)
from snacks_core.distributed.waiting import wait_for
from snacks_core.solvers import snacks_kernels as loops
from snacks_core.solvers.base import (
    EARLY_STOPPING,
    HISTORY_COLUMNS,
    MAX_EPOCHS,
    TOL_GAP,
    SolverResult,
)
from snacks_core.solvers.objective import matvec
from snacks_core.solvers.snacks import (
    POLISH_AFTER_EPOCHS,
    AssgSchedule,
    HeldOutPatience,
    default_step_and_radius,
    dual_ascent_is_fast,
    rows_between_checks,
)


class AssgState(NamedTuple):
    """Kept on a worker between rounds: ⟨z_i, c⟩ of the stage's centre, the rows' sampling
    and violation counts (halved at each stage, as in memory) and β of the last
    certificate."""

    zc: np.ndarray
    hits: np.ndarray
    violations: np.ndarray
    beta: np.ndarray


class AssgTask(NamedTuple):
    """One round of one subproblem for every worker: the stage's centre, the round's start
    w, the checkpoint to evaluate (held-out errors; a certificate and a new table when
    ``new_stage``: ``check`` is then ``centre``), ASSG's step and radius, λ, the steps each
    worker makes, and their seeds (one per worker)."""

    problem: int
    centre: np.ndarray
    start: np.ndarray
    check: np.ndarray
    new_stage: bool
    eta: float
    radius: float
    lam: float
    steps: int
    seeds: tuple


class AssgSummary(NamedTuple):
    """What a worker sends back: its last iterate and sum of iterates, its held-out errors at
    the checkpoint, and with a certificate (else NaN and None) its hinge sum
    Σ s_i max(0, 1 − y_i⟨c, z_i⟩), Σ s_i β_i and Σ s_i β_i y_i z_i; and the sums Σ s_i,
    Σ s_i‖z_i‖², Σ s_i²‖z_i‖² (for η₀, D₀ and whether dual ascent is fast)."""

    last: np.ndarray
    total: np.ndarray
    held_errors: int
    hinge: float
    beta_sum: float
    g: np.ndarray | None
    sums: tuple


def local_assg_round(partition, previous, task, worker):
    """Run on a worker: the round ``task`` on a :class:`~snacks_core.distributed.fit.Partition`
    from the previous round's ``(AssgState, AssgSummary)`` (None: counts restart from zero,
    the table is recomputed at the centre); returns ``(AssgState, AssgSummary)``."""
    y = partition.targets[task.problem]
    weight, sqnorm = partition.weight, partition.sqnorm
    n, k = y.shape[0], task.centre.shape[0]
    held_errors = 0
    if partition.Z_held is not None and task.check is not None:
        held_errors = int(np.sum(partition.targets_held[task.problem]
                                 * matvec(partition.Z_held, task.check) <= 0))
    rng = np.random.default_rng(task.seeds[worker])
    if previous is None:
        state = AssgState(None, np.zeros(n, np.float32), np.zeros(n, np.float32), np.zeros(n))
    else:
        state = previous[0]._replace(hits=previous[0].hits.copy(),
                                     violations=previous[0].violations.copy())
    hinge, beta_sum, g = np.nan, np.nan, None
    with numba_threads(1):
        if task.new_stage or state.zc is None:
            beta, margin, g_sum, hinge_sum = np.empty(n), np.empty(n), np.zeros(k), 0.0
            for start, block in shuffled_blocks(partition.Z, rng):
                tasks = -(-block.shape[0] // loops.CHECKPOINT_TASK_ROWS)
                hinge_parts, g_parts = np.empty(tasks), np.empty((tasks, k))
                loops.checkpoint_pass(block, start, y, weight, task.centre, state.hits,
                                      state.violations, beta, margin, hinge_parts, g_parts, True)
                hinge_sum += float(hinge_parts.sum())
                g_sum += g_parts.sum(axis=0)
            state = state._replace(zc=y * margin)
            if task.new_stage:
                hinge, beta_sum, g = hinge_sum, float(weight @ beta), g_sum
                state.hits[:] *= 0.5
                state.violations[:] *= 0.5
                state = state._replace(beta=beta)
        v, u = task.start - task.centre, np.zeros(k)
        steps = np.array([1.0, 1.0, float(v @ v), float(v @ task.centre), 0.0, 0.0, 0.0])
        if task.steps:
            for start, block, rows in _sampled_blocks(partition.Z, task.steps, rng):
                loops.assg_steps(block, start, y, weight, rows, state.zc, sqnorm,
                                 float(task.centre @ task.centre), task.lam, task.eta,
                                 task.radius, v, u, steps, state.hits, state.violations)
    last = steps[loops.A] * v + steps[loops.B] * task.centre
    total = steps[loops.S_SUM] * v - u + steps[loops.B_SUM] * task.centre
    return state, AssgSummary(last, total, held_errors, hinge, beta_sum, g,
                              (float(weight.sum()), float(weight @ sqnorm),
                               float(weight**2 @ sqnorm)))


def _sampled_blocks(Z, count, rng):
    """``(start, block, rows)``: ``count`` rows of Z drawn uniformly with replacement, grouped
    by block (float16 blocks converted to float32 as in
    :func:`~snacks_core.distributed.cocoa.shuffled_blocks`; global row indices)."""
    n = Z.shape[0]
    if Z.dtype != np.float16:
        yield 0, Z, rng.integers(0, n, size=count)
        return
    starts = np.arange(0, n, COMPACT_BLOCK_ROWS)
    sizes = np.minimum(starts + COMPACT_BLOCK_ROWS, n) - starts
    for start, size, drawn in zip(starts, sizes, rng.multinomial(count, sizes / n),
                                  strict=True):
        if drawn:
            yield (int(start), Z[start:start + size].astype(np.float32),
                   start + rng.integers(0, size, size=drawn))


def dual_variables(round_result, partition, C):
    """Run on a worker: α_i = C s_i β_i (LIBLINEAR's scaling) of the last certificate's β,
    where the CoCoA+ polish starts."""
    return C * partition.weight * round_result[0].beta


def solve_assg(client, partitions, problem, lam, n_train, options, *, seed,
               validation=None, progress=None) -> SolverResult:
    """Minimise F on the embedded ``partitions`` for one-vs-rest subproblem ``problem`` by
    the Snacks steps averaged across workers (module docstring), polished by CoCoA+.

    Parameters are those of :func:`~snacks_core.distributed.cocoa.solve_cocoa`;
    ``options.max_rounds`` is the budget in epochs (n_train steps each, across workers).

    Returns
    -------
    SolverResult
        ``coef``: on early stopping the checkpoint after the start with the fewest held-out
        errors; else the last checkpoint (certified: a stage's centre, or CoCoA+'s point).
        The history has one row per round (its checkpoint; F and the gap NaN inside a
        stage, as in memory under early stopping), then CoCoA+'s rounds; ``info`` holds
        ``bytes_per_round``, ``partitions`` (K), ``assg_epochs`` and ``restarted``.
    """
    K, width = len(partitions.futures), partitions.width
    share = partitions.rows / partitions.rows.sum()
    early = options.n_iter_no_change is not None
    patience = (HeldOutPatience(partitions.held_rows, options.n_iter_no_change, n_train)
                if early else None)
    check_rows = rows_between_checks(n_train, early)
    max_rows = int(np.ceil(options.max_rounds * n_train))
    schedule = AssgSchedule()
    growth = schedule.growth
    streams = np.random.SeedSequence([seed, problem])
    history = {name: [] for name in HISTORY_COLUMNS}
    restarted, previous = [], [None] * K
    zero = np.zeros(width)
    task = AssgTask(problem, zero, zero, zero, True, 0.0, 0.0, lam, 0, ())
    stage_rows, stage_left = schedule.stage_epochs * n_train, 0
    visited, best_dual, t = 0, -np.inf, 0
    eta = radius = None
    polish = handover = False
    stop_reason, start = None, time.perf_counter()
    while True:
        raise_if_stopped()
        task = task._replace(seeds=tuple(int(s) for s in streams.spawn(1)[0].generate_state(K)))
        rounds, summaries = _run_round(client, partitions, previous, task,
                                       f"Snacks round {t} of problem {problem}",
                                       options.timeout, restarted)
        previous = rounds
        if task.check is not None:
            objective = gap = np.nan
            held = sum(s.held_errors for s in summaries)
            if task.new_stage:
                objective = (float(sum(s.hinge for s in summaries)) / n_train
                             + lam * float(task.centre @ task.centre))
                g = sum(s.g for s in summaries) / (2.0 * lam * n_train)
                best_dual = max(best_dual,
                                sum(s.beta_sum for s in summaries) / n_train - lam * float(g @ g))
                gap = max(objective - best_dual, 0.0)
            error = (float(np.mean(validation[1] * matvec(validation[0], task.check) <= 0))
                     if validation is not None else
                     held / partitions.held_rows if early else np.nan)
            for name, value in zip(HISTORY_COLUMNS, (len(history["iteration"]),
                                                     visited / n_train,
                                                     time.perf_counter() - start, objective,
                                                     gap, error), strict=True):
                history[name].append(float(value))
            if progress is not None:
                # Epochs, as in memory (options.max_rounds is the budget in epochs here).
                progress("training", visited / n_train, options.max_rounds)
            if stop_reason is not None:
                break
            if task.new_stage and gap <= options.tol * objective:
                stop_reason = TOL_GAP
            elif early and patience.stop(held, task.check, visited):
                stop_reason = EARLY_STOPPING
                if patience.best is not task.check or not task.new_stage:
                    # As in memory, the history ends with the point returned, measured:
                    # one more round certifies it.
                    task = task._replace(centre=patience.best, start=patience.best,
                                         check=patience.best, new_stage=True, steps=0)
                    t += 1
                    continue
            elif task.steps == 0 and t > 0 and not handover:
                stop_reason = MAX_EPOCHS
            if stop_reason is not None or handover:
                break
        if eta is None:
            # η₀ and D₀ by the in-memory rule, from the workers' sums: one row whose weight
            # and squared norm give the mean weight and the mean s²‖z‖² of all rows.
            weight_sum, weighted_sqnorm, gradient_sum = np.sum([s.sums for s in summaries],
                                                               axis=0)
            mean_weight = weight_sum / n_train
            eta, radius = default_step_and_radius(
                np.array([gradient_sum / n_train / mean_weight**2]), np.array([mean_weight]),
                lam, stage_rows, gap, 0.0, objective)
            polish = not early or dual_ascent_is_fast(weighted_sqnorm / n_train, lam, n_train)
            stage_left, stage_rows = int(round(stage_rows)), stage_rows * growth
            stage_sum, stage_steps = np.zeros(width), 0
            task = task._replace(check=None, new_stage=False)
        else:
            visited += K * task.steps
            stage_sum = stage_sum + sum(p * s.total for p, s in zip(share, summaries,
                                                                    strict=True))
            stage_steps += task.steps
            point = stage_sum / stage_steps
            if stage_left <= 0 or visited >= max_rows:
                # The stage's end (or the budget's): the next round certifies its average
                # and starts the next stage there.
                task = task._replace(centre=point, start=point, check=point, new_stage=True)
                eta, radius = eta / schedule.omega, radius / schedule.omega
                stage_left, stage_rows = int(round(stage_rows)), stage_rows * growth
                stage_sum, stage_steps = np.zeros(width), 0
                handover = polish and visited >= POLISH_AFTER_EPOCHS * n_train
            else:
                last = sum(p * s.last for p, s in zip(share, summaries, strict=True))
                task = task._replace(start=last, check=point, new_stage=False)
        steps = 0 if handover else -(-min(stage_left, check_rows, max_rows - visited) // K)
        stage_left -= K * steps
        task = task._replace(eta=eta, radius=radius, steps=max(steps, 0))
        t += 1
    info = {"bytes_per_round": 5 * K * width * 8, "partitions": K,
            "assg_epochs": visited / n_train, "restarted": restarted}
    coef = task.check
    if handover:
        C = 1.0 / (2.0 * n_train * lam)
        alpha = [client.submit(dual_variables, r, future, C, pure=False)
                 for r, future in zip(previous, partitions.futures, strict=True)]
        polished = solve_cocoa(
            client, partitions, problem, lam, n_train,
            replace(options, max_rounds=max(1, int(np.ceil((max_rows - visited) / n_train
                                                           / options.local_passes)))),
            seed=seed, validation=validation, progress=progress,
            warm=(alpha, np.array([C * s.g for s in summaries])))
        offset = {"iteration": len(history["iteration"]), "epoch": visited / n_train,
                  "time": history["time"][-1]}
        for name, values in polished.history.items():
            history[name].extend((values + offset.get(name, 0.0)).tolist())
        coef, stop_reason = polished.coef, polished.stop_reason
        info["restarted"] += polished.info["restarted"]
    history = {name: np.asarray(values) for name, values in history.items()}
    return SolverResult(coef=coef, history=history, n_iter=int(history["iteration"][-1]),
                        n_epochs=float(history["epoch"][-1]), stop_reason=stop_reason,
                        info=info)


def _run_round(client, partitions, previous, task, what, timeout, restarted):
    """Submit one round on every worker group and wait for its summaries; returns
    ``(round futures, summaries)``.

    A group whose state was lost with a worker (its rows and embedding are recomputed by
    Dask; the counts and the table, products of earlier rounds, are not kept) runs the
    round again from no state: its counts restart from zero and its table is recomputed
    at the centre, while w, which lives on the client, is unchanged.  At most
    :data:`~snacks_core.distributed.cocoa.RESTARTS` times in a row.
    """
    rounds, todo = list(previous), range(len(previous))
    for _attempt in range(RESTARTS + 1):
        for k in todo:
            rounds[k] = client.submit(local_assg_round, partitions.futures[k], previous[k],
                                      task, k, pure=False)
        summaries = [client.submit(operator.itemgetter(1), r) for r in rounds]
        todo = wait_for(client, summaries, what, timeout, lost_ok=True)
        if not todo:
            return rounds, client.gather(summaries)
        for k in todo:
            previous[k] = None
        restarted.append((what, todo))
    raise RuntimeError(f"{what}: worker group(s) {todo} were lost {RESTARTS + 1} times in "
                       "a row; the cluster is losing workers faster than the fit can recover.")
