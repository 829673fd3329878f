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

import time
from typing import NamedTuple

import numpy as np

from snacks_core.core.cancellation import raise_if_stopped
from snacks_core.core.threads import numba_threads
from snacks_core.distributed.cocoa import (
    COMPACT_BLOCK_ROWS,
    RESTARTS,
    named_problems,
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
    stage_plan,
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


def local_assg_rounds(partition, previous, tasks, worker):
    """Run on a worker: one round of several subproblems (an :class:`AssgTask` each) by
    :func:`local_assg_round`, from the previous round's results (problem → ``(AssgState,
    AssgSummary)``; None: every problem's counts restart); returns problem → its result."""
    previous = previous or {}
    return {task.problem: local_assg_round(partition, previous.get(task.problem), task,
                                           worker) for task in tasks}


def assg_summaries(round_result):
    """Run on a worker: each problem's :class:`AssgSummary` of a round (what the client
    gathers; the states stay)."""
    return {p: summary for p, (_, summary) in round_result.items()}


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


def dual_variables(round_results, partition, C):
    """Run on a worker: α_i = C s_i β_i (LIBLINEAR's scaling) of each problem's last
    certificate's β, where the CoCoA+ polish starts; ``round_results`` holds, for each
    problem, the round (a :func:`local_assg_rounds` result) that certified it."""
    return {p: C * partition.weight * result[p][0].beta for p, result in round_results.items()}


def solve_assg(client, partitions, problems, lam, n_train, options, *, seed,
               validation=None, progress=None) -> list[SolverResult]:
    """Minimise F on the embedded ``partitions`` for the one-vs-rest subproblems
    ``problems`` by the Snacks steps averaged across workers (module docstring), polished
    by CoCoA+.  The subproblems make their rounds together: one task per worker group a
    round makes every subproblem's steps (:func:`local_assg_rounds`), so K subproblems
    take the rounds of one; each keeps its own stages, checkpoints and stop rules and
    leaves the rounds when one holds, and those that hand over to CoCoA+ are polished
    together (:func:`~snacks_core.distributed.cocoa.solve_cocoa`).

    Parameters are those of :func:`~snacks_core.distributed.cocoa.solve_cocoa` (without
    ``warm``); ``options.max_rounds`` is the budget in epochs (n_train steps each, across
    workers).

    Returns
    -------
    list of SolverResult, in the order of ``problems``
        ``coef``: on early stopping the checkpoint after the start with the fewest held-out
        errors; else the last checkpoint (certified: a stage's centre, or CoCoA+'s point).
        The history has one row per round (its checkpoint; F and the gap NaN inside a
        stage, as in memory under early stopping), then CoCoA+'s rounds; ``info`` holds
        ``bytes_per_round``, ``partitions`` (K), ``assg_epochs`` and ``restarted``.
    """
    columns = [_AssgRounds(partitions, p, lam, n_train, options,
                           None if validation is None else (validation[0], validation[1][p]),
                           progress) for p in problems]
    streams = {p: np.random.SeedSequence([seed, p]) for p in problems}
    previous, active, t = [None] * len(partitions.futures), list(columns), 0
    # Per worker group: the round that certified each problem handing over to CoCoA+.
    certified = [{} for _ in partitions.futures]
    while active:
        raise_if_stopped()
        for column in active:
            column.task = column.task._replace(seeds=tuple(
                int(s) for s in streams[column.problem].spawn(1)[0].generate_state(
                    column.K)))
        previous, summaries = _run_round(client, partitions, previous, active,
                                         f"Snacks round {t} of {named_problems(active)}",
                                         options.timeout)
        for column in active:
            column.summaries = [s[column.problem] for s in summaries]
            column.after_round()
            if column.done and column.handover:
                for p, r in enumerate(previous):
                    certified[p][column.problem] = r
        active = [column for column in active if not column.done]
        t += 1
    # The workers' states are released as soon as the polish has its starting point.
    previous = None
    polished = _polish(client, partitions, [c for c in columns if c.handover], certified,
                       lam, n_train, options, seed, validation, progress)
    results = []
    for column in columns:
        info = {"bytes_per_round": 5 * column.K * partitions.width * 8,
                "partitions": column.K, "assg_epochs": column.visited / n_train,
                "restarted": column.restarted}
        coef, stop_reason = column.task.check, column.stop_reason
        if column.problem in polished:
            coef, stop_reason = column.take_polish(polished[column.problem])
        history = {name: np.asarray(values) for name, values in column.history.items()}
        results.append(SolverResult(coef=coef, history=history,
                                    n_iter=int(history["iteration"][-1]),
                                    n_epochs=float(history["epoch"][-1]),
                                    stop_reason=stop_reason, info=info))
    return results


def _polish(client, partitions, columns, certified, lam, n, options, seed, validation,
            progress):
    """CoCoA+ from α_i = C s_i β_i of each handing-over problem's last certificate, on the
    epochs it has left, the problems together; problem → its SolverResult."""
    if not columns:
        return {}
    C = 1.0 / (2.0 * n * lam)
    alphas = [client.submit(dual_variables, dict(rounds), future, C, pure=False)
              for rounds, future in zip(certified, partitions.futures, strict=True)]
    for rounds in certified:
        rounds.clear()
    shares = {c.problem: np.array([C * s.g for s in c.summaries]) for c in columns}
    budgets = {c.problem: max(1, int(np.ceil((c.max_rows - c.visited) / n
                                             / options.local_passes))) for c in columns}
    problems = [c.problem for c in columns]
    results = solve_cocoa(client, partitions, problems, lam, n, options, seed=seed,
                          validation=validation, progress=progress,
                          warm=(alphas, shares, budgets))
    return dict(zip(problems, results, strict=True))


class _AssgRounds:
    """The rounds of one subproblem and what they carry from one to the next: the task sent
    to the workers, the stage plan (:func:`~snacks_core.solvers.snacks.stage_plan`, the
    in-memory stages' rules), the running stage average, the rows visited, the best dual
    value, early stopping's patience and the history."""

    def __init__(self, partitions, problem, lam, n_train, options, validation, progress):
        self.partitions, self.problem = partitions, problem
        self.lam, self.n_train, self.options = lam, n_train, options
        self.validation, self.progress = validation, progress
        self.K = len(partitions.futures)
        self.share = partitions.rows / partitions.rows.sum()
        self.early = options.n_iter_no_change is not None
        self.patience = (HeldOutPatience(partitions.held_rows, options.n_iter_no_change,
                                         n_train) if self.early else None)
        self.check_rows = rows_between_checks(n_train, self.early)
        self.max_rows = int(np.ceil(options.max_rounds * n_train))
        self.history = {name: [] for name in HISTORY_COLUMNS}
        self.restarted, self.summaries = [], None
        zero = np.zeros(partitions.width)
        self.task = AssgTask(problem, zero, zero, zero, True, 0.0, 0.0, lam, 0, ())
        # The stage plan comes with the first round's sums (η₀ and D₀ from the data).
        self.plan, self.stage_left, self.stage_sum, self.stage_steps = None, 0, None, 0
        self.visited, self.best_dual, self.t = 0, -np.inf, 0
        self.polish_after = self.handover = self.done = False
        self.stop_reason, self.start = None, time.perf_counter()

    def after_round(self):
        """Take the round's ``summaries``: the checkpoint and the stop rules, then the next
        round's task; sets ``done`` when the rounds end (``stop_reason`` or ``handover``
        says why)."""
        measured = (np.nan, np.nan)
        if self.task.check is not None:
            measured, held = self._checkpoint()
            decision = self._decide(*measured, held)
            if decision == "stop":
                self.done = True
                return
            if decision == "certify":
                self.t += 1
                return
        self._advance(*measured)
        self.t += 1

    def _checkpoint(self):
        """Record the round's checkpoint; ``((F, gap), held-out errors)`` (F and the gap
        NaN inside a stage)."""
        task, summaries = self.task, self.summaries
        objective = gap = np.nan
        held = sum(s.held_errors for s in summaries)
        if task.new_stage:
            objective, gap = self._certificate()
        validation = self.validation
        error = (float(np.mean(validation[1] * matvec(validation[0], task.check) <= 0))
                 if validation is not None else
                 held / self.partitions.held_rows if self.early else np.nan)
        epochs = self.visited / self.n_train
        for name, value in zip(HISTORY_COLUMNS, (len(self.history["iteration"]), epochs,
                                                 time.perf_counter() - self.start, objective,
                                                 gap, error), strict=True):
            self.history[name].append(float(value))
        if self.progress is not None:
            # Epochs, as in memory (options.max_rounds is the budget in epochs here).
            self.progress("training", epochs, self.options.max_rounds)
        return (objective, gap), held

    def _certificate(self):
        """``(F, gap)`` at the stage's centre: the gap to the best dual value so far."""
        summaries, lam, n = self.summaries, self.lam, self.n_train
        centre = self.task.centre
        objective = float(sum(s.hinge for s in summaries)) / n + lam * float(centre @ centre)
        g = sum(s.g for s in summaries) / (2.0 * lam * n)
        self.best_dual = max(self.best_dual,
                             sum(s.beta_sum for s in summaries) / n - lam * float(g @ g))
        return objective, max(objective - self.best_dual, 0.0)

    def _decide(self, objective, gap, held):
        """After a checkpoint: 'stop', 'certify' (one more round measures the point early
        stopping returns, as in memory the history ends with it) or None (go on)."""
        task = self.task
        if self.stop_reason is not None:
            return "stop"
        if task.new_stage and gap <= self.options.tol * objective:
            self.stop_reason = TOL_GAP
        elif self.early and self.patience.stop(held, task.check, self.visited):
            self.stop_reason = EARLY_STOPPING
            best = self.patience.best
            if best is not task.check or not task.new_stage:
                self.task = task._replace(centre=best, start=best, check=best,
                                          new_stage=True, steps=0)
                return "certify"
        elif task.steps == 0 and self.t > 0 and not self.handover:
            self.stop_reason = MAX_EPOCHS
        return "stop" if self.stop_reason is not None or self.handover else None

    def _advance(self, objective, gap):
        """The next round's task: the first stage's plan after the first round, else the
        steps made added to the stage's average; each worker's share of the steps."""
        if self.plan is None:
            self._first_stage(objective, gap)
        else:
            self._add_steps()
        steps = 0 if self.handover else -(-min(self.stage_left, self.check_rows,
                                               self.max_rows - self.visited) // self.K)
        self.stage_left -= self.K * steps
        self.task = self.task._replace(eta=self.plan.eta, radius=self.plan.radius,
                                       steps=max(steps, 0))

    def _first_stage(self, objective, gap):
        """η₀ and D₀ by the in-memory rule, from the workers' sums: one row whose weight and
        squared norm give the mean weight and the mean s²‖z‖² of all rows."""
        n = self.n_train
        weight_sum, weighted_sqnorm, gradient_sum = np.sum([s.sums for s in self.summaries],
                                                           axis=0)
        mean_weight = weight_sum / n
        schedule = AssgSchedule()
        eta, radius = default_step_and_radius(
            np.array([gradient_sum / n / mean_weight**2]), np.array([mean_weight]), self.lam,
            schedule.stage_epochs * n, gap, 0.0, objective)
        self.plan = stage_plan(eta, radius, n, schedule)
        self.polish_after = (not self.early
                             or dual_ascent_is_fast(weighted_sqnorm / n, self.lam, n))
        self._next_stage()
        self.task = self.task._replace(check=None, new_stage=False)

    def _next_stage(self):
        self.stage_left = self.plan.next_stage(self.max_rows - self.visited)
        self.stage_sum, self.stage_steps = np.zeros(self.partitions.width), 0

    def _add_steps(self):
        """The round's steps into the stage's average; at the stage's end (or the budget's)
        the next round certifies that average and starts the next stage there."""
        self.visited += self.K * self.task.steps
        self.stage_sum = self.stage_sum + sum(p * s.total for p, s in zip(
            self.share, self.summaries, strict=True))
        self.stage_steps += self.task.steps
        point = self.stage_sum / self.stage_steps
        if self.stage_left <= 0 or self.visited >= self.max_rows:
            self.task = self.task._replace(centre=point, start=point, check=point,
                                           new_stage=True)
            self.plan.shrink()
            self._next_stage()
            self.handover = (self.polish_after
                             and self.visited >= POLISH_AFTER_EPOCHS * self.n_train)
        else:
            last = sum(p * s.last for p, s in zip(self.share, self.summaries, strict=True))
            self.task = self.task._replace(start=last, check=point, new_stage=False)

    def take_polish(self, polished):
        """CoCoA+'s rounds (a SolverResult) after the steps: they extend the history;
        ``(coef, stop reason)``."""
        n = self.n_train
        offset = {"iteration": len(self.history["iteration"]), "epoch": self.visited / n,
                  "time": self.history["time"][-1]}
        for name, values in polished.history.items():
            self.history[name].extend((values + offset.get(name, 0.0)).tolist())
        self.restarted += polished.info["restarted"]
        return polished.coef, polished.stop_reason


def _run_round(client, partitions, previous, columns, what, timeout):
    """Submit one round of the subproblems ``columns`` (their tasks) on every worker group
    and wait for their summaries; returns ``(round futures, summaries)``, one per group
    (each problem → its part).

    A group whose state was lost with a worker (its rows and embedding are recomputed by
    Dask; the counts and the tables, products of earlier rounds, are not kept) runs the
    round again from no state: its counts restart from zero and its tables are recomputed
    at the centres, while each w, which lives on the client, is unchanged.  At most
    :data:`~snacks_core.distributed.cocoa.RESTARTS` times in a row.
    """
    rounds, todo = list(previous), range(len(previous))
    tasks = [column.task for column in columns]
    for _attempt in range(RESTARTS + 1):
        for k in todo:
            rounds[k] = client.submit(local_assg_rounds, partitions.futures[k], previous[k],
                                      tasks, k, pure=False)
        summaries = [client.submit(assg_summaries, r) for r in rounds]
        todo = wait_for(client, summaries, what, timeout, lost_ok=True)
        if not todo:
            return rounds, client.gather(summaries)
        for k in todo:
            previous[k] = None
        for column in columns:
            column.restarted.append((what, todo))
    raise RuntimeError(f"{what}: worker group(s) {todo} were lost {RESTARTS + 1} times in "
                       "a row; the cluster is losing workers faster than the fit can recover.")
