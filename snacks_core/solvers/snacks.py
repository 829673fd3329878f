"""Snacks: accelerated stochastic subgradient (ASSG) on the Nyström embedding.

Minimises F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖² with Algorithm 1 of
Snacks (Tanji et al., "Snacks: a fast large-scale kernel SVM solver"), itself ASSG of
Xu, Lin & Yang (2017): stages of T projected stochastic subgradient steps with step η
inside the ball B(c, D) around the stage's starting point c; the stage returns the
average of its projected iterates; η and D are divided by ω after each stage.

**What the default does.**  ASSG does the work to the first digits: its first two stages
(1 + 2 epochs) bring the test error to its final value on a9a and w8a (BENCHMARKS.md,
"Snacks engine").  ASSG's certified gap then shrinks only like 1/T, so, unless a stop rule
already holds, the solver *polishes*: dual coordinate ascent (LIBLINEAR's update, Hsieh
et al. 2008) started from ASSG's dual estimate (the rows' averaged margin-violation
indicators, refined on the rows near the hinge's kink) converges linearly to the
requested certified relative gap ``tol``.  Each polishing sweep certifies the point it
started from in the same read of the data (the hinge at the sweep's starting w needs one
more dot product per row, nothing more), so its checkpoints cost almost nothing.
``polish=False`` gives the paper's pure ASSG.  Stopping rules, reported as the
``stop_reason``: the certified gap (``'tol_gap'``, always true: F(w) − F* ≤ gap), early
stopping on a validation set (``'early_stopping'``: its error did not improve for
``n_iter_no_change`` checkpoints), ASSG's noise floor (``'tol_objective'``, pure ASSG
only) and the budget (``'max_epochs'``).

**Against the paper's Algorithm 1.**  The paper runs K stages of a fixed length T from
fixed η₀ and D₀ and returns the last stage's average; its subgradient λw − y_i z_i
minimises hinge + (λ/2)‖w‖², half our λ's penalty (see :mod:`snacks_core.solvers.objective`).
Here, as in ASSG-r of Xu, Lin & Yang (2017): T grows by ``stage_growth`` (default ω)
after each stage, so that η·T stays constant as η shrinks; η₀ and D₀ come from the data
(:func:`default_step_and_radius`; fixed values that suit one scaling of the data diverge
on another); the fit returns the best checkpoint, not the last; it stops on the rules
above rather than after K stages; and the polish above follows ASSG.  The paper's
schedule is ``stage_growth=1`` with ``max_epochs`` = K·``stage_epochs`` and
``polish=False`` (pass ``eta0``/``radius0`` for its fixed starts).

The inner loop keeps w = a·v + b·c (scaled-vector trick): the shrink w ← (1 − 2ηλ) w
and the projection onto B(c, D) are O(1) updates of (a, b); ‖w − c‖ follows from the
running ‖v‖², ⟨v, c⟩ and the per-stage table ⟨z_i, c⟩.  The running average
Σ_t w_t = S·v − u + B·c is maintained lazily (S = Σ a_t, B = Σ b_t, u gets S·δ z_i
when v moves by δ z_i), so a step costs one dot product and, on a margin violation, one
fused pass updating v and u.  The table ⟨z_i, c⟩ of a stage is the margin pass of the
checkpoint that ended the previous stage: one parallel pass per checkpoint, no other.

The embedding may be an in-memory array or an :class:`~snacks_core.solvers.storage.EmbeddingStore`
(compact float16 rows, or rows on disk) read in blocks: ASSG then samples each epoch's
rows block by block, visiting the blocks in a random order, and every pass streams them.

``penalty='l1'`` minimises the ℓ1-SVM F₁(w) = (1/n) Σ_i s_i max(0, 1 − y_i⟨w, z_i⟩) +
λ‖w‖₁ instead, to which ASSG applies as well (Snacks paper, Theorem 2).  Its subgradient
λ·sign(w) − s_i y_i z_i 1[margin < 1] moves every coordinate at every step, so the step is
O(m) whatever the trick; the ℓ1 stage keeps w = c + a·v, which makes the projection onto
B(c, D) an O(1) rescaling of a, and folds the running sum of the iterates into the next
step's dot-product pass: two fused passes over the m coordinates per step.  Its
certificate is the ℓ1-SVM dual D₁(β) = (1/n) Σ s_i β_i, feasible when
‖(1/n) Σ s_i β_i y_i z_i‖_∞ ≤ λ: the averaged violation indicators are scaled down into
that set.  It is not polished.
"""

from __future__ import annotations

import queue
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields

import numpy as np

from snacks_core.core.cancellation import carry, raise_if_stopped
from snacks_core.core.threads import numba_threads
from snacks_core.solvers import snacks_kernels as loops
from snacks_core.solvers.base import (
    EARLY_STOPPING,
    MAX_EPOCHS,
    TOL_GAP,
    TOL_OBJECTIVE,
    HistoryRecorder,
    SolverResult,
    check_labels_and_weights,
    check_problem,
    resolve_seed,
)
from snacks_core.solvers.objective import matvec
from snacks_core.solvers.storage import RowBlocks

PENALTIES = ("l2", "l1")

# Epochs of ASSG before polishing, rounded up to a stage's end (stages of 1 and 2 epochs
# by default; one 3-epoch stage for a warm start with stage_epochs=3).
POLISH_AFTER_EPOCHS = 3.0
# Rows whose margin at the ASSG point lies within this distance of the kink get up to this
# many restricted sweeps of dual ascent before the first full one, within a budget of
# this many epochs: there the averaged indicators are least accurate (on w8a at λ = 1e-5
# this reached a certified 1e-3 in fewer epochs than without).
_REFINE_BAND = 1.0
_REFINE_SWEEPS = 10
_REFINE_EPOCHS = 2.0
# Between two full sweeps, up to this many restricted sweeps over the rows with α_i > 0
# (shrinking), within one epoch of rows: with 30 instead of 10 the 26 one-vs-rest columns
# of the letters look-alike reached their certified tolerance in 0.9x the time, pendigits'
# 10 in 0.7x (BENCHMARKS.md, "Rows in a random order").  More rows between the full
# sweeps would space the certificates further apart.
_SHRUNK_SWEEPS = 30
_SHRUNK_EPOCHS = 1.0
# C·mean(s_i‖z_i‖²) up to which dual ascent polishes even under early stopping.
FAST_DUAL_LIMIT = 10.0
# Early stopping counts an improvement of the validation error only if it is at least
# this fraction of the validation rows (and at least one row): a change of a few rows
# of a large validation set is noise, not learning.
MIN_VALIDATION_GAIN = 1e-3
# Under early stopping ASSG checks the held-out error k times per epoch, k = n // the
# rows below clipped to [1, the checks per epoch below] (one check every ⌈n/k⌉ steps): at
# one check per epoch, a patience of five checks costs five epochs after the best point,
# most of a fit on millions of rows (bench_early_stopping.py).  Small problems keep one
# check per epoch.
EARLY_STOPPING_CHECKS_PER_EPOCH = 4
EARLY_STOPPING_MIN_CHECK_ROWS = 10_000
# The patience is also measured in data: besides ``n_iter_no_change`` checks, at least
# EARLY_STOPPING_EPOCHS_PER_CHECK · ``n_iter_no_change`` epochs of rows visited since the
# last improvement, up to this many rows.  Five quarter-epoch checks (1.25 epochs) stopped
# too soon at 50,000 rows (BENCHMARKS.md, 'Early stopping that scales'); from that many
# rows on the checks alone decide, as before.  Five epochs still stopped a little soon on
# w8a's 36,000 rows: seven gave 1.46 % test error against 1.50 % over three splits
# (exact SVC: 1.34 %) for 8 % more time (BENCHMARKS.md, 'Patience on mid-size sets').
EARLY_STOPPING_PATIENCE_ROWS = 250_000
EARLY_STOPPING_EPOCHS_PER_CHECK = 1.4


def default_step_and_radius(sqnorm, sample_weight, lam, stage_steps, gap0, norm_w0, objective0):
    """Data-driven η₀ and D₀ (no per-dataset tuning).

    D₀ bounds the distance from the start w₀ to the minimiser: F is 2λ-strongly convex,
    so λ‖w₀ − w*‖² ≤ F(w₀) − F* ≤ gap₀ (the certified gap at w₀), and λ‖w*‖² ≤ F(0) =
    mean(s); D₀ is the smaller of √(gap₀/λ) and ‖w₀‖ + √(F(0)/λ).  η₀ is the smallest
    of three classical choices for a first stage of T₁ steps: D₀/(G√T₁), the subgradient
    step that crosses the ball in one stage (G² the mean squared subgradient norm at the
    start, mean of s_i² ‖z_i‖²); 1/(2λT₁), the step at which the strong convexity
    contracts by a constant factor over a stage (Epoch-GD of Hazan & Kale; Pegasos's
    1/(2λt) at t = T₁); and 3ε₀/G², nine times ASSG's η₁ = ε₀/(3G²) with
    ε₀ = min(gap₀, F(w₀)) ≥ F(w₀) − F*, which bounds the step when λ is tiny.  A warm
    start with a small certified gap thus gets a small ball and a small step.
    """
    sample_weight = np.ones(sqnorm.shape[0]) if sample_weight is None else sample_weight
    f0 = float(sample_weight.mean())
    g2 = float(np.mean(sample_weight * sample_weight * sqnorm)) or 1.0
    radius = min(np.sqrt(gap0 / lam), norm_w0 + np.sqrt(f0 / lam))
    if not radius > 0:
        radius = np.sqrt(f0 / lam)
    eta = min(radius / np.sqrt(g2 * stage_steps), 1.0 / (2.0 * lam * stage_steps),
              3.0 * max(min(gap0, objective0), np.finfo(float).tiny) / g2)
    return eta, radius


def default_step_and_radius_l1(sqnorm, sample_weight, lam, stage_steps, norm_w0, objective0, m):
    """Data-driven η₀ and D₀ for the ℓ1-SVM F₁, from the start w₀ and F₁(w₀).

    D₀ = ‖w₀‖ + √(F₁(w₀)/λ), the radius the ℓ2 problem's bound gives.  For F₁ the bound
    is λ‖w*‖₁ ≤ F₁(w₀), i.e. D₀ = ‖w₀‖ + F₁(w₀)/λ, but F₁ is not strongly convex and that
    bound is loose by the factor √(F₁(w₀)/λ) (10²–10³ for λ = 10⁻⁴–10⁻⁵): its first stages
    wander far from F₁* on an a9a-shaped problem where the smaller radius converges, and
    the smaller one held ‖w* − w₀‖ on every test problem (the stages can travel up to 2D₀
    in all).  Pass ``radius0`` = ‖w₀‖ + F₁(w₀)/λ
    for the guaranteed ball.  η₀ = D₀/(G√T₁) crosses the ball in one stage, with G² the
    mean of (λ√m + s_i‖z_i‖)², a bound on the squared subgradient norms.
    """
    sample_weight = np.ones(sqnorm.shape[0]) if sample_weight is None else sample_weight
    radius = norm_w0 + np.sqrt(objective0 / lam)
    g2 = float(np.mean((lam * np.sqrt(m) + sample_weight * np.sqrt(sqnorm)) ** 2)) or 1.0
    return radius / np.sqrt(g2 * stage_steps), radius


def rows_between_checks(n, early_stopping):
    """ASSG steps between two checkpoints inside a stage: one epoch, or under early
    stopping a k-th of it (k from :data:`EARLY_STOPPING_CHECKS_PER_EPOCH` and
    :data:`EARLY_STOPPING_MIN_CHECK_ROWS`)."""
    if not early_stopping:
        return n
    checks = min(max(n // EARLY_STOPPING_MIN_CHECK_ROWS, 1), EARLY_STOPPING_CHECKS_PER_EPOCH)
    return -(-n // checks)


def patience_rows(n, n_iter_no_change):
    """Rows visited (ASSG steps, dual-ascent updates) since the last improvement of the
    held-out error before early stopping may stop, on top of its ``n_iter_no_change``
    checks: :data:`EARLY_STOPPING_EPOCHS_PER_CHECK` · ``n_iter_no_change`` epochs of n
    rows, at most :data:`EARLY_STOPPING_PATIENCE_ROWS`."""
    return min(int(np.ceil(EARLY_STOPPING_EPOCHS_PER_CHECK * n_iter_no_change * n)),
               EARLY_STOPPING_PATIENCE_ROWS)


class HeldOutPatience:
    """Early stopping's rule on ``held_rows`` held-out rows, for a solve on ``n_train`` rows
    (in memory here, and on a cluster).

    A checkpoint's held-out error renews the patience only when it is lower than the best so
    far by :data:`MIN_VALIDATION_GAIN` of the held-out rows (one row at least); the solve
    stops after ``n_iter_no_change`` checkpoints without such a gain that together span
    :func:`patience_rows` rows visited.  :attr:`best` is the point of the checkpoint after
    the start with the fewest errors (the first to reach them): the start is the patience's
    reference but never the answer (a warm start's w0, another λ's solution, would
    otherwise come back untrained whenever the held-out error does not move)."""

    def __init__(self, held_rows, n_iter_no_change, n_train):
        self.min_gain = max(1, int(np.ceil(MIN_VALIDATION_GAIN * held_rows)))
        self.checks = n_iter_no_change
        self.rows = patience_rows(n_train, n_iter_no_change)
        self.reference, self.no_change, self.improved_at = np.inf, 0, 0
        self.best_errors, self.best = np.inf, None

    def stop(self, errors, point, rows_visited) -> bool:
        """Record a checkpoint (``point`` reached after ``rows_visited`` rows, ``errors``
        held-out rows misclassified there); whether the patience is spent."""
        if rows_visited > 0 and errors < self.best_errors:
            self.best_errors, self.best = errors, point
        if errors <= self.reference - self.min_gain:
            self.reference, self.no_change, self.improved_at = errors, 0, rows_visited
            return False
        self.no_change += 1
        self.reference = min(self.reference, errors)
        return self.no_change >= self.checks and rows_visited - self.improved_at >= self.rows


@dataclass(frozen=True)
class AssgSchedule:
    """ASSG's stages (Algorithm 1): the first step and ball, their shrinking, the stage lengths.

    Attributes
    ----------
    eta0, radius0 : float or None
        Initial step η₀ and ball radius D₀; None: from the data
        (:func:`default_step_and_radius`, :func:`default_step_and_radius_l1`).
    omega : float > 1
        Factor dividing η and D after each stage.
    stage_epochs : float > 0
        Length T₁ of the first stage in epochs (T₁ = stage_epochs · n).
    stage_growth : float >= 1 or None
        Factor multiplying T after each stage; None: ω, the growth ASSG's analysis
        prescribes for a 2λ-strongly convex objective (error bound exponent θ = 1/2,
        T_k ∝ ω^{2(1−θ)k}), so that η_k·T_k stays constant.  For the polyhedral ℓ1-SVM
        (θ = 1) the analysis allows a constant T above an unknown threshold; growing by ω
        is robust to it.  1 is the paper's fixed schedule.
    """

    eta0: float | None = None
    radius0: float | None = None
    omega: float = 2.0
    stage_epochs: float = 1.0
    stage_growth: float | None = None

    @property
    def growth(self) -> float:
        """The factor T grows by after each stage: ``stage_growth``, or ω."""
        return self.omega if self.stage_growth is None else float(self.stage_growth)


@dataclass(frozen=True)
class SnacksOptions:
    """How :func:`solve` runs: the penalty, the ASSG schedule, the polish and the threads.

    Attributes
    ----------
    penalty : {'l2', 'l1'}
        'l1' solves the ℓ1-SVM F₁ (module docstring); the history's objective and gap are
        then F₁'s.
    polish : bool
        After the ASSG stage that completes :data:`POLISH_AFTER_EPOCHS` epochs, finish
        with dual coordinate ascent from ASSG's dual estimate (ℓ2 only; module
        docstring).  Under early stopping only where dual ascent is fast
        (C·mean(s_i‖z_i‖²) ≤ 10, C = 1/(2λn)).  False runs ASSG alone, as in the paper.
    schedule : AssgSchedule
        ASSG's step, ball and stage lengths.
    n_jobs : int or None
        Threads of the checkpoint passes (None: every core the current numba, BLAS and
        affinity limits allow).  The stochastic steps and the dual ascent are sequential.
    """

    penalty: str = "l2"
    polish: bool = True
    schedule: AssgSchedule = AssgSchedule()
    n_jobs: int | None = None


@dataclass(frozen=True)
class EarlyStopping:
    """Early stopping on held-out rows: the patience and the rows.

    Attributes
    ----------
    n_iter_no_change : int >= 1
        Stop when the error on ``stopping_set`` (default: :func:`solve`'s ``validation``)
        has not improved by at least 0.1 % of its rows (and one row) for this many
        checkpoints (up to :data:`EARLY_STOPPING_CHECKS_PER_EPOCH` per epoch of ASSG,
        :func:`rows_between_checks`: one per epoch below 2·10⁴ rows; one per polishing
        sweep) and over :func:`patience_rows` rows visited (1.4 times this many epochs, at
        most :data:`EARLY_STOPPING_PATIENCE_ROWS` rows).
    stopping_set : tuple (Z_stop, y_stop) or None
        Held-out rows, when they are not :func:`solve`'s recorded ``validation``.
        Without ``validation`` their error is the history's ``validation_error``.
    """

    n_iter_no_change: int
    stopping_set: tuple | None = None


# The flat keywords of ``solver_options`` that :func:`registry_solve` groups: the fields of
# AssgSchedule and the other fields of SnacksOptions.
_SCHEDULE_KEYWORDS = tuple(field.name for field in fields(AssgSchedule))
OPTION_KEYWORDS = frozenset(_SCHEDULE_KEYWORDS) | {
    field.name for field in fields(SnacksOptions) if field.name != "schedule"}


def registry_solve(Z, y, lam, *, sample_weight=None, max_epochs=50, tol=1e-3,
                   random_state=None, validation=None, callback=None, w0=None,
                   n_iter_no_change=None, stopping_set=None, **options):
    """:func:`solve` from flat keywords: the registry's entry for ``solver='snacks'``.

    ``options`` (:data:`OPTION_KEYWORDS`, as ``solver_options`` spells them, checked once
    by :func:`snacks_core.solvers.check_solver_params`) are the fields of
    :class:`AssgSchedule` and of :class:`SnacksOptions`; ``n_iter_no_change`` (None: off)
    and ``stopping_set`` make the :class:`EarlyStopping`.  The other keywords are
    :func:`solve`'s.
    """
    return solve(Z, y, lam, sample_weight=sample_weight, max_epochs=max_epochs, tol=tol,
                 random_state=random_state, validation=validation, callback=callback, w0=w0,
                 options=_grouped_options(options),
                 early_stopping=_early_stopping(n_iter_no_change, stopping_set))


def registry_solve_columns(Z, ys, lam, *, own=None, n_iter_no_change=None, **keywords):
    """:func:`solve_columns` from :func:`registry_solve`'s flat keywords, shared by the
    problems, and each problem's own (``own``: ``validation``, ``w0``, ``stopping_set``)."""
    options = _grouped_options({name: keywords.pop(name) for name in OPTION_KEYWORDS
                                if name in keywords})
    # A w0 among the solver options starts every problem (as it starts each separate solve).
    shared = {"w0": keywords.pop("w0")} if "w0" in keywords else {}
    problems = [{**shared,
                 **{name: value for name, value in mine.items() if name != "stopping_set"},
                 "early_stopping": _early_stopping(n_iter_no_change, mine.get("stopping_set"))}
                for mine in ([{}] * len(ys) if own is None else own)]
    return solve_columns(Z, ys, lam, own=problems, options=options, **keywords)


@dataclass(frozen=True)
class JointEarlyStopping:
    """Early stopping of the two-class problems of one multiclass fit together, judged on
    the multiclass prediction (:func:`registry_solve_pairs`).

    Attributes
    ----------
    n_iter_no_change : int >= 1
        Stop after this many rounds without a gain of the held-out error, over
        :func:`patience_rows` rows of the fit visited (:class:`HeldOutPatience`).
    errors : callable
        ``errors(W)``: the held-out rows the multiclass prediction of the problems' points
        ``W`` (problems × m) misclassifies.
    held_rows : int
        The held-out rows ``errors`` counts.
    recorded : callable or None
        ``recorded(W)``: the error rate the histories record (an eval set's); None: the
        held-out rows' (``errors(W) / held_rows``).
    """

    n_iter_no_change: int
    errors: object
    held_rows: int
    recorded: object = None


def registry_solve_pairs(Z, targets, lam, *, sample_weight=None, max_epochs=50, tol=1e-3,
                         random_state=None, callback=None, penalty="l2", polish=True,
                         w0=None, workers=1, n_iter_no_change=None, n_jobs=None,
                         joint=None, **_schedule):
    """One-vs-one's two-class problems on one embedding in memory, each solved by the
    polish alone (:func:`_polish`'s sweeps of dual coordinate ascent, from α = 0) in one
    compiled call (:func:`~snacks_core.solvers.snacks_kernels.pair_dual_ascent`), to the
    relative duality gap ``tol`` of F or ``max_epochs`` sweeps' worth of its rows; groups
    of pairs on ``workers`` threads.

    ``targets`` holds one vector per problem: ±1 on its rows, 0 on the rows of the other
    classes.  A problem on its n_ab rows at λ_ab = λ·n/n_ab keeps the whole problem's
    C = 1/(2nλ) (:func:`snacks_core.model.engine.pair_subproblem`), so every pair's dual
    box is [0, C s_i].  A pair of one-vs-one has a few hundred or thousand rows, where a
    solve's own stages and checkpoints would cost more than its sweeps; the ASSG
    schedule's options (``_schedule``) are not used, nor ``n_jobs`` and
    ``n_iter_no_change`` (no rows are held out).  With the L1 penalty, ``polish=False``
    or a starting point ``w0`` among the solver's options, it returns None: each pair is
    then a :func:`solve` of its own.

    Returns a :class:`SolverResult` per problem, in order.  Its history has a checkpoint
    per full sweep (the point it started from, certified by it), then the point returned
    again; the one compiled call is timed whole, its time shared out among the
    checkpoints by the rows visited; the callback sees the last, the point returned.
    ``info['polish_epochs']`` counts the row visits over its rows.

    With ``joint`` (a :class:`JointEarlyStopping`) the problems go in rounds instead, and
    ``w0`` is ignored (they start from α = 0): :func:`_rounds`.
    """
    if penalty != "l2" or not polish or (w0 is not None and joint is None):
        return None
    Z = np.ascontiguousarray(Z)
    sqnorm = np.empty(Z.shape[0])
    loops.squared_norms(Z, sqnorm)
    C = 1.0 / (2.0 * lam * Z.shape[0])
    weight = np.ones(Z.shape[0]) if sample_weight is None else sample_weight
    seed = resolve_seed(random_state)
    if joint is not None:
        return _rounds(Z, [np.asarray(t, dtype=np.float64) for t in targets], C, weight,
                       sqnorm, max(1, int(max_epochs)), float(tol), seed, workers, joint,
                       callback)

    def solve_pair(target):
        raise_if_stopped()
        start = time.perf_counter()
        rows = np.flatnonzero(target)
        y = np.asarray(target, dtype=np.float64)
        sweeps = max(1, int(max_epochs))
        trace = np.empty((sweeps, 3))
        coef, checkpoints, best = loops.pair_dual_ascent(
            Z, y, C * weight * (y != 0), sqnorm, rows, sweeps, float(tol), seed,
            _SHRUNK_SWEEPS, np.zeros(Z.shape[0]), np.zeros(Z.shape[1]), trace)
        seconds = time.perf_counter() - start
        # The history ends with the point returned (the lowest F, as :func:`_result`).
        trace = np.vstack([trace[:checkpoints], trace[best]])
        visits = trace[:, 0]
        # F = (1/n_ab) Σ s_i hinge_i + λ_ab‖w‖² is the scaled primal divided by C·n_ab.
        scale = C * rows.shape[0]
        history = {"iteration": visits, "epoch": visits / rows.shape[0],
                   # One compiled call: its time shared out by the rows visited.
                   "time": seconds * visits / visits[-2],
                   "objective": trace[:, 1] / scale, "gap": trace[:, 2] / scale,
                   "validation_error": np.full(visits.shape[0], np.nan)}
        history["time"][-1] = seconds
        if callback is not None:
            callback({name: column[-1] for name, column in history.items()}, coef)
        raise_if_stopped()
        # The work done: the visits when the last certified point was known.
        epochs = float(history["epoch"][-2])
        return SolverResult(
            coef=coef, history=history, n_iter=int(visits[-2]), n_epochs=epochs,
            stop_reason=TOL_GAP if trace[-1, 2] <= tol * trace[-1, 1] else MAX_EPOCHS,
            info={"assg_epochs": 0.0, "polish_epochs": epochs, "checkpoint_time": 0.0})

    if workers <= 1:
        return [solve_pair(target) for target in targets]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # The kernel releases the GIL; each task polls the caller's stop check.
        return list(pool.map(carry(solve_pair), targets))


def _rounds(Z, targets, C, weight, sqnorm, max_sweeps, tol, seed, workers, joint, callback):
    """:func:`registry_solve_pairs`' problems under :class:`JointEarlyStopping`: rounds of
    one full sweep of dual coordinate ascent of every problem not yet at its ``tol``
    (certifying the point it started from) and the restricted sweeps that follow it in a
    solve to ``tol`` (:func:`~snacks_core.solvers.snacks_kernels.pair_dual_ascent`), then
    the held-out error of the multiclass prediction of all the problems' points.  The
    rounds stop when every problem is at its ``tol``, at ``max_sweeps`` rounds, or when
    that error has not gained for ``n_iter_no_change``
    rounds over :func:`patience_rows` rows (a round visits each row of the fit at least
    once: the rows of a rare class as often as the others).  A problem still running at the
    stop returns its point after the round with the fewest held-out errors (the first to
    reach them); one that reached its ``tol`` the certified point it reached; at
    ``max_sweeps`` rounds its certified point of lowest primal value.

    The dual variables of each problem are kept on its own rows only (one-vs-one's pairs
    hold (K − 1)·n of them in all), a thread's sweeps using one n-vector.  A problem's
    history has a row per round it ran (the point the round started from: its F, gap and
    the recorded error there), then the point returned again."""
    n, m = Z.shape
    P = len(targets)
    rows = [np.flatnonzero(t) for t in targets]
    uppers = [C * weight * (t != 0) for t in targets]
    alphas = [np.zeros(r.shape[0]) for r in rows]
    W = np.zeros((P, m))
    running = np.ones(P, dtype=bool)
    coef = [None] * P
    reasons = [MAX_EPOCHS] * P
    traces = [[] for _ in range(P)]  # per round: visits, primal, gap, seconds
    lowest = [(np.inf, None, 0) for _ in range(P)]  # (primal, point, trace row) of the lowest F
    patience = HeldOutPatience(joint.held_rows, joint.n_iter_no_change, n)
    # The recorded error at each round's starting point (the first: W = 0).
    recorded_errors = [joint.errors(W) / joint.held_rows if joint.recorded is None
                       else joint.recorded(W)]
    best_W, best_round = None, 0
    threads = max(1, min(workers, P))
    # One n-vector of dual variables a thread; the largest problems first.
    scratches = queue.SimpleQueue()
    for _ in range(threads):
        scratches.put(np.zeros(n))
    by_size = sorted(range(P), key=lambda k: -rows[k].shape[0])

    def sweep(k, round_):
        raise_if_stopped()
        start = time.perf_counter()
        scratch, trace = scratches.get(), np.empty((1, 3))
        scratch[rows[k]] = alphas[k]
        point, _, _ = loops.pair_dual_ascent(
            Z, targets[k], uppers[k], sqnorm, rows[k], 1, tol, seed + 2 * round_, 0,
            scratch, W[k], trace)
        visits = rows[k].shape[0] + (traces[k][-1][0] if traces[k] else 0)
        if trace[0, 2] > tol * trace[0, 1]:
            # As between the full sweeps of a solve to tol (they never visit more than a
            # full sweep's worth of rows: the rounds are not limited by visits).
            visits += loops.shrinking_sweeps(
                Z, targets[k], uppers[k], sqnorm, rows[k], scratch, W[k], _SHRUNK_SWEEPS,
                rows[k].shape[0], seed + 2 * round_ + 1)
        alphas[k] = scratch[rows[k]]
        scratch[rows[k]] = 0.0
        scratches.put(scratch)
        seconds = time.perf_counter() - start + (traces[k][-1][3] if traces[k] else 0.0)
        traces[k].append((visits, trace[0, 1], trace[0, 2], seconds))
        if trace[0, 1] < lowest[k][0]:
            lowest[k] = (trace[0, 1], point, len(traces[k]) - 1)
        if trace[0, 2] <= tol * trace[0, 1]:
            # The point the sweep started from is certified: this problem is done.
            running[k], coef[k], reasons[k] = False, point, TOL_GAP
            W[k] = point

    pool = ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
    round_ = 0
    try:
        while running.any() and round_ < max_sweeps:
            ks = [k for k in by_size if running[k]]
            if pool is None:
                for k in ks:
                    sweep(k, round_)
            else:
                # The kernels release the GIL; each task polls the caller's stop check.
                list(pool.map(carry(sweep), ks, [round_] * len(ks)))
            round_ += 1
            if not running.any():
                break
            errors = joint.errors(W)
            recorded_errors.append(errors / joint.held_rows if joint.recorded is None
                                   else joint.recorded(W))
            if callback is not None:
                k = int(np.flatnonzero(running)[0])
                callback({"iteration": traces[k][-1][0], "epoch": float(round_),
                          "time": traces[k][-1][3], "objective": np.nan, "gap": np.nan,
                          "validation_error": recorded_errors[-1]}, W[k])
            if errors < patience.best_errors:
                best_W, best_round = W.copy(), round_
            if patience.stop(errors, round_, round_ * n):
                for k in np.flatnonzero(running):
                    coef[k], reasons[k] = best_W[k], EARLY_STOPPING
                running[:] = False
    finally:
        if pool is not None:
            pool.shutdown()
    for k in np.flatnonzero(running):
        coef[k] = lowest[k][1]  # the budget spent: the certified point of lowest F
    results = []
    for k in range(P):
        trace = np.array(traces[k]).reshape(-1, 4)
        if reasons[k] == EARLY_STOPPING and best_round == trace.shape[0]:
            # The last round's point, the best by less than a gain: no sweep certified it.
            margins = np.concatenate([Z[part] @ coef[k]
                                      for part in np.array_split(rows[k], -(-n // 4096))])
            norm2 = float(coef[k] @ coef[k])
            primal = 0.5 * norm2 + float(uppers[k][rows[k]]
                                         @ np.maximum(0.0, 1.0 - targets[k][rows[k]] * margins))
            trace = np.vstack([trace, [trace[-1, 0], primal,
                                       max(primal - (alphas[k].sum() - 0.5 * norm2), 0.0),
                                       trace[-1, 3]]])
        if reasons[k] == EARLY_STOPPING:
            # The point after round b is certified by round b + 1's sweep.
            returned = best_round
        elif reasons[k] == TOL_GAP:
            returned = trace.shape[0] - 1
        else:
            returned = lowest[k][2]
        rounds = trace.shape[0]
        scale = C * rows[k].shape[0]
        history = {"iteration": np.append(trace[:, 0], trace[returned, 0]),
                   "epoch": np.append(trace[:, 0], trace[returned, 0]) / rows[k].shape[0],
                   "time": np.append(trace[:, 3], trace[-1, 3]),
                   "objective": np.append(trace[:, 1], trace[returned, 1]) / scale,
                   "gap": np.append(trace[:, 2], trace[returned, 2]) / scale,
                   "validation_error": np.append(recorded_errors[:rounds],
                                                 recorded_errors[returned])}
        epochs = float(history["epoch"][-1])
        results.append(SolverResult(
            coef=coef[k], history=history, n_iter=int(history["iteration"][-1]),
            n_epochs=epochs, stop_reason=reasons[k],
            info={"assg_epochs": 0.0, "polish_epochs": epochs, "checkpoint_time": 0.0}))
    return results


def _grouped_options(options):
    """:class:`SnacksOptions` from the flat ``solver_options``."""
    options = dict(options)
    schedule = AssgSchedule(**{name: options.pop(name) for name in _SCHEDULE_KEYWORDS
                               if name in options})
    return SnacksOptions(schedule=schedule, **options)


def _early_stopping(n_iter_no_change, stopping_set):
    return None if n_iter_no_change is None else EarlyStopping(n_iter_no_change, stopping_set)


def solve(Z, y, lam, *, sample_weight=None, max_epochs=50, tol=1e-3, random_state=None,
          validation=None, callback=None, w0=None, options=SnacksOptions(),
          early_stopping=None):
    """Minimise F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖² with Snacks (ASSG).

    With ``options.penalty='l1'``, minimise F₁(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) +
    λ‖w‖₁ instead (Snacks paper, Theorem 2; module docstring).  The options are trusted:
    the registry checks them once (:func:`registry_solve`).

    Parameters
    ----------
    Z : ndarray of shape (n, m), float32 or float64, or EmbeddingStore
        Embedded training rows z_i, in memory or in a store read in row blocks.
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    lam : float
        Regularisation λ > 0 (LIBSVM's C = 1/(2nλ)).
    sample_weight : ndarray of shape (n,), optional
        Weights s_i of the hinge terms (class weights).
    max_epochs : float
        Budget in passes over the data (one epoch = n stochastic steps, or one sweep of
        dual ascent over the n rows).
    tol : float
        Stop when the certified relative duality gap (F(w) − D) / F(w) ≤ tol, D the best
        dual value found so far.  The gap bounds the true excess F(w) − F*.
    random_state : int, Generator or None
        Seed of the row sampling and of the polishing order.
    validation : tuple (Z_val, y_val), optional
        Held-out rows whose error each checkpoint records (``validation_error``).
    callback : callable(record: dict, w: ndarray), optional
        Called at each checkpoint.
    w0 : ndarray of shape (m,), optional
        Starting point (warm start); zero by default.
    options : SnacksOptions
        Penalty, ASSG schedule, polish and threads.
    early_stopping : EarlyStopping or None
        Stop on the error of held-out rows (by default ``validation``); None: off.

    Returns
    -------
    SolverResult
        ``coef`` is the checkpoint with the lowest F (a subgradient method is not
        monotone; checkpoints are the stage averages and the running stage average once
        per epoch, then the start of each polishing sweep, recorded when the sweep that
        certifies it ends); after early stopping, the checkpoint after the start (never
        a warm start's ``w0``) with the lowest held-out error.  The history ends with it.
        Under early stopping the checkpoints inside a stage measure the held-out error
        only (F and the gap NaN; the stage ends and the returned point have them), and
        ``validation_error`` is the error on ``validation`` if given, else on the
        stopping rows.  ``stop_reason`` is ``'tol_gap'``, ``'early_stopping'``,
        ``'tol_objective'`` (pure ASSG: no decrease of F over two stages, the stochastic
        noise floor) or ``'max_epochs'``.  ``info`` holds ``assg_epochs`` and
        ``polish_epochs`` (the epochs of each phase) and ``checkpoint_time`` (seconds
        spent certifying and recording, excluded from the history's clock).

    Raises
    ------
    ValueError
        When ``w0`` does not have m entries, or early stopping has no held-out rows.
    """
    Z, y, sample_weight = check_problem(Z, y, lam, sample_weight)
    with numba_threads(options.n_jobs):
        return _alone(_solve_steps(_Rows(Z), y, lam, sample_weight, max_epochs, tol,
                                   random_state, validation, callback, w0, options,
                                   early_stopping))


class _Rows:
    """The embedded rows (checked), as the solves on them read them: their blocks and
    squared norms ‖z_i‖², shared by the problems of :func:`solve_columns`."""

    def __init__(self, Z):
        self.blocks = RowBlocks(Z)
        self.sqnorm = np.empty(self.blocks.shape[0])
        for block in self.blocks:
            loops.squared_norms(block.Z, self.sqnorm[block.start:block.stop])


def _solve_steps(rows, y, lam, sample_weight, max_epochs, tol, random_state, validation,
                 callback, w0, options, early_stopping):
    """:func:`solve` on checked inputs (:class:`_Rows`) as a generator: it yields a
    :class:`_FullSweep` for each full sweep of dual ascent, is sent the sweep's hinge sum,
    and returns the :class:`SolverResult`.  The caller makes the sweeps: :func:`_alone` one
    by one, :func:`solve_columns` those of several problems together."""
    n_iter_no_change, stopping_set = None, validation
    if early_stopping is not None:
        n_iter_no_change = early_stopping.n_iter_no_change
        if early_stopping.stopping_set is not None:
            stopping_set = early_stopping.stopping_set
        if stopping_set is None:
            raise ValueError("n_iter_no_change (early stopping) needs a validation set.")
    blocks = rows.blocks
    n, m = blocks.shape
    w = np.zeros(m) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    if w.shape[0] != m:
        raise ValueError(f"w0 has {w.shape[0]} entries, the embedding has {m} columns.")
    max_steps = int(np.ceil(max_epochs * n))
    rng = np.random.default_rng(resolve_seed(random_state))
    recorder = HistoryRecorder(blocks.array, y, lam, sample_weight, validation, callback)
    sample_weight = np.ones(n) if sample_weight is None else sample_weight
    early = n_iter_no_change is not None
    stages = (_L1Stages if options.penalty == "l1" else _L2Stages)(rows, y, sample_weight,
                                                                    lam, recorder)
    run = _Run(recorder, tol, n_iter_no_change, stopping_set, n)
    objective, gap = stages.certificate(w)
    run.checkpoint(w, 0, 0.0, objective, gap)
    schedule = _Schedule.first(stages, w, objective, gap, n, options.schedule)
    polish = (options.polish and options.penalty == "l2"
              and (not early or _dual_ascent_is_fast(stages, lam)))
    steps = yield from _optimise(stages, run, w, objective, schedule, rng, max_steps, polish,
                                 early)
    return _result(stages, run, recorder, steps)


@dataclass
class _FullSweep:
    """One full sweep of dual ascent that a solve asks for (:func:`_polish`): over every
    row of ``stages.blocks`` from ``w``, certifying ``w_start``; ``rng`` is the solve's
    own, for a sweep made alone."""

    stages: _L2Stages
    upper: np.ndarray
    alpha: np.ndarray
    w: np.ndarray
    w_start: np.ndarray
    rng: np.random.Generator


def _alone(steps):
    """Drive one solve's generator (:func:`_solve_steps`), making its full sweeps in its
    own random order: the rows of each block shuffled, the blocks in a random order."""
    try:
        sweep = next(steps)
        order = np.arange(sweep.stages.blocks.shape[0])
        while True:
            stages = sweep.stages
            hinge = 0.0
            for block, rows in _shuffled_rows(stages.blocks, order, sweep.rng):
                hinge += loops.dual_ascent_sweep(block.Z, block.start, stages.y, sweep.upper,
                                                 stages.sqnorm, rows, sweep.alpha, sweep.w,
                                                 sweep.w_start)
            sweep = steps.send(hinge)
    except StopIteration as done:
        return done.value


def _shuffled_rows(blocks, order, rng):
    """The blocks of a full sweep in a random order, each with its rows of ``order`` (global
    indices) shuffled in place."""
    for block in blocks.shuffled(rng):
        rows = order[block.start:block.stop]
        rng.shuffle(rows)
        yield block, rows


def solve_columns(Z, ys, lam, *, own=None, sample_weight=None, max_epochs=50, tol=1e-3,
                  random_state=None, callback=None, options=SnacksOptions()):
    """:func:`solve` for several problems on the same embedding (one-vs-rest columns), their
    full sweeps of dual ascent made together: each visit of a row reads z_i once for every
    problem still polishing (:func:`~snacks_core.solvers.snacks_kernels.dual_ascent_sweep_columns`).

    Each problem runs its own ASSG stages, restricted sweeps, checkpoints and stop rules as
    :func:`solve` does; only the order of the rows in the shared sweeps differs (one order
    for all, drawn from ``random_state``), so each result is :func:`solve`'s to its
    certified tolerance.  The histories' clocks count the time of the problems solved
    together.

    Parameters
    ----------
    Z : ndarray or EmbeddingStore
        The embedded rows, shared by the problems.
    ys : list of ndarray
        Each problem's ±1 labels.
    lam : float
        Regularisation λ, shared.
    own : list of dict or None
        Each problem's own keywords of :func:`solve` (``validation``, ``w0``,
        ``early_stopping``); None: none.
    sample_weight, max_epochs, tol, random_state, callback, options
        As :func:`solve`'s, shared by the problems (``random_state`` seeds each problem as
        it seeds :func:`solve`, and the shared sweeps' order).

    Returns
    -------
    list of SolverResult, in the order of ``ys``.
    """
    own = [{} for _ in ys] if own is None else own
    Z, _, sample_weight = check_problem(Z, ys[0], lam, sample_weight)
    seed = resolve_seed(random_state)
    with numba_threads(options.n_jobs):
        rows = _Rows(Z)
        solves = [_solve_steps(rows, check_labels_and_weights(y, None, rows.blocks.shape[0])[0],
                               lam, sample_weight, max_epochs, tol, seed,
                               mine.get("validation"), callback, mine.get("w0"), options,
                               mine.get("early_stopping"))
                  for y, mine in zip(ys, own, strict=True)]
        return _together(solves, np.random.default_rng(seed))


def _together(solves, rng):
    """Drive several solves' generators, making the full sweeps they ask for at the same
    time in one read of the rows, in one random order."""
    results = [None] * len(solves)
    waiting = {}

    def advance(k, hinge):
        try:
            waiting[k] = next(solves[k]) if hinge is None else solves[k].send(hinge)
        except StopIteration as done:
            results[k] = done.value

    for k in range(len(solves)):
        advance(k, None)
    order = None
    while waiting:
        ks = sorted(waiting)
        sweeps = [waiting.pop(k) for k in ks]
        stages = sweeps[0].stages
        if order is None:
            order = np.arange(stages.blocks.shape[0])
        Y = np.stack([s.stages.y for s in sweeps])
        upper = np.stack([s.upper for s in sweeps])
        alpha = np.stack([s.alpha for s in sweeps])
        W = np.stack([s.w for s in sweeps])
        W_start = np.stack([s.w_start for s in sweeps])
        hinge = np.zeros(len(sweeps))
        for block, rows in _shuffled_rows(stages.blocks, order, rng):
            loops.dual_ascent_sweep_columns(block.Z, block.start, Y, upper, stages.sqnorm,
                                            rows, alpha, W, W_start, hinge)
        for k, sweep, alpha_k, w_k, hinge_k in zip(ks, sweeps, alpha, W, hinge, strict=True):
            sweep.alpha[:] = alpha_k
            sweep.w[:] = w_k
            advance(k, float(hinge_k))
    return results


@dataclass
class _Schedule:
    """ASSG's step η and ball radius D, divided by ω after each stage, and the length of the
    next stage in steps, multiplied by ``stage_growth`` after each stage."""

    eta: float
    radius: float
    omega: float
    stage_steps: float
    stage_growth: float

    @classmethod
    def first(cls, stages, w, objective, gap, n, schedule):
        """The first stage's, for n rows: the :class:`AssgSchedule`'s η₀ and D₀, or from the
        data at the start w."""
        stage_steps = schedule.stage_epochs * n
        eta, radius = stages.defaults(stage_steps, gap, float(np.linalg.norm(w)), objective)
        return cls(eta if schedule.eta0 is None else float(schedule.eta0),
                   radius if schedule.radius0 is None else float(schedule.radius0),
                   schedule.omega, stage_steps, schedule.growth)

    def next_stage(self, steps_left):
        """The length T of the next stage (at least one step, at most ``steps_left``)."""
        T = max(1, min(int(round(self.stage_steps)), steps_left))
        self.stage_steps *= self.stage_growth
        return T

    def shrink(self):
        self.eta /= self.omega
        self.radius /= self.omega


def _optimise(stages, run, w, objective, schedule, rng, max_steps, polish, early):
    """ASSG stages from w (F(w) = ``objective``), then the polish, until a stop rule holds;
    returns the steps made."""
    n = stages.blocks.shape[0]
    stage_best = objective
    stalls = 0
    steps = 0
    check_rows = rows_between_checks(n, early)
    while run.stop_reason is None and steps < max_steps:
        if polish and stages.assg_steps >= POLISH_AFTER_EPOCHS * n:
            return (yield from _polish(stages, run, steps, max_steps, rng))
        T = schedule.next_stage(max_steps - steps)
        w, objective, steps = _stage(stages, run, w, T, steps, rng, schedule, check_rows, early)
        # No decrease over two whole stages: the sampling noise floor is reached.
        if objective < stage_best * (1.0 - run.tol):
            stage_best = objective
            stalls = 0
        else:
            stalls += 1
            if stalls >= 2 and not polish and run.stop_reason is None:
                run.stop_reason = TOL_OBJECTIVE
        schedule.shrink()
    return steps


def _stage(stages, run, c, T, steps, rng, schedule, check_rows, early):
    """One ASSG stage of T steps centred at c, a checkpoint every ``check_rows`` steps and at
    its end; returns the last checkpoint's point and F, and the steps made."""
    n = stages.blocks.shape[0]
    stages.start(c)
    done = 0
    while done < T and run.stop_reason is None:
        # A checkpoint at least every epoch (a fraction of one under early stopping):
        # long stages report their running average.
        chunk = min(T - done, check_rows)
        stages.run(chunk, rng, schedule.eta, schedule.radius)
        done += chunk
        steps += chunk
        w = stages.average()
        if done < T and early:
            # Within a stage early stopping reads the held-out error only: F of the
            # running average is left unknown (NaN) rather than paid a full pass.
            objective = gap = np.nan
        else:
            # The dual point only at a stage's end; within a stage the gap uses the
            # best dual so far (half the pass).
            objective, gap = stages.certificate(w, with_dual=done == T)
        run.checkpoint(w, steps, steps / n, objective, gap)
    return w, objective, steps


def _result(stages, run, recorder, steps):
    """The point to return, with the history ending at it, and the epochs of each phase."""
    n = stages.blocks.shape[0]
    best_w, best_objective = run.result()
    unmeasured = np.isnan(best_objective)
    if unmeasured:
        # Early stopping chose a point inside a stage: one pass measures its F.
        best_objective, _ = stages.certificate(best_w, with_dual=False)
    gap = max(best_objective - run.best_dual, 0.0)
    if best_w is not run.last_w:
        # The history ends with the point returned.
        recorder.record(best_w, steps, steps / n, objective=best_objective, gap=gap,
                        held_out_error=run.held_out_error(best_w))
    elif unmeasured:
        recorder.complete_last(objective=best_objective, gap=gap)
    history = recorder.as_arrays()
    assg_steps = min(steps, stages.assg_steps)
    return SolverResult(coef=best_w, history=history, n_iter=steps, n_epochs=steps / n,
                        stop_reason=run.stop_reason or MAX_EPOCHS,
                        info={"assg_epochs": assg_steps / n,
                              "polish_epochs": (steps - assg_steps) / n,
                              "checkpoint_time": recorder.excluded})


def _dual_ascent_is_fast(stages, lam):
    """Whether dual coordinate ascent improves its primal point quickly on this problem.

    Its linear rate degrades as C·‖z_i‖² grows (C = 1/(2λn)): on a SUSY-shaped problem
    with a large C‖z‖² its iterates w(α) stayed worse than ASSG's, in F and in test error,
    for many sweeps, while with a small one (w8a at λ ≥ 1e-5, a9a at the paper's λ) the
    first polished point already beats ASSG.  With early stopping, where the
    validation error rather than the certified gap ends the fit, ASSG alone goes on
    beyond this limit.
    """
    return dual_ascent_is_fast(float(np.mean(stages.sample_weight * stages.sqnorm)), lam,
                               stages.y.shape[0])


def dual_ascent_is_fast(mean_weighted_sqnorm, lam, n) -> bool:
    """:func:`_dual_ascent_is_fast`'s test from mean(s_i‖z_i‖²) over n rows (a cluster has
    the sum, not the rows): C·mean(s_i‖z_i‖²) ≤ :data:`FAST_DUAL_LIMIT`, C = 1/(2λn)."""
    return mean_weighted_sqnorm / (2.0 * lam * n) <= FAST_DUAL_LIMIT


class _Run:
    """Checkpoints of one solve: the history, the best iterate and the stop rules."""

    def __init__(self, recorder, tol, n_iter_no_change, stopping_set, n):
        self.recorder, self.tol = recorder, tol
        # Early stopping's rule (None without it) on the stopping set, for n rows trained on.
        self.patience = (None if n_iter_no_change is None else
                         HeldOutPatience(len(stopping_set[1]), n_iter_no_change, n))
        self.best_w, self.best_objective, self.best_dual = None, np.inf, -np.inf
        self.stop_reason = None
        self.stopping_set = stopping_set

    def held_out_errors(self, w):
        """Misclassified rows of the stopping set at w (None without early stopping),
        counted outside the history's clock."""
        if self.patience is None:
            return None
        started = time.perf_counter()
        Z_stop, y_stop = self.stopping_set
        if Z_stop.dtype in (np.float32, np.float64):
            errors = loops.count_errors(Z_stop, w, np.asarray(y_stop, np.float64))
        else:
            errors = int(np.sum(np.sign(matvec(Z_stop, w)) != y_stop))
        self.recorder.exclude_since(started)
        return errors

    def held_out_error(self, w, errors=None):
        """The stopping set's error rate at w, from its ``errors`` when they are counted
        (None without early stopping)."""
        errors = self.held_out_errors(w) if errors is None else errors
        return None if errors is None else errors / len(self.stopping_set[1])

    def checkpoint(self, w, iteration, epoch, objective, gap):
        """Record w; ``gap`` is F(w) − D for the checkpoint's own dual point D.

        Every dual point bounds F* from below, so the gap recorded and tested is
        F(w) − (the best dual value so far): the tightest certificate known.
        """
        self.best_dual = max(self.best_dual, objective - gap)
        gap = max(objective - self.best_dual, 0.0)
        # Measured at every checkpoint, also the one that meets tol: the history shows the
        # held-out error when no validation set is recorded.
        errors = self.held_out_errors(w)
        self.recorder.record(w, iteration, epoch, objective=objective, gap=gap,
                             held_out_error=self.held_out_error(w, errors))
        self.last_w = w
        if objective < self.best_objective:
            self.best_w, self.best_objective = w, objective
        if gap <= self.tol * objective:
            self.stop_reason = TOL_GAP
        elif errors is not None and self.patience.stop(errors, (w, objective), iteration):
            self.stop_reason = EARLY_STOPPING

    def result(self):
        """The point to return and its F: on early stopping the checkpoint after the
        start with the lowest held-out error (the first one reaching it), otherwise the
        lowest F."""
        if self.stop_reason == EARLY_STOPPING:
            return self.patience.best
        return self.best_w, self.best_objective


def _polish(stages, run, steps, max_steps, rng):
    """Dual coordinate ascent from ASSG's dual estimate, to the certified ``tol``.

    In LIBLINEAR's scaling α_i = C s_i β_i (C = 1/(2λn)), w(α) = Σ α_i y_i z_i = C·g
    with g from the last checkpoint pass.  Restricted sweeps over the rows near the
    kink refine the estimate first; then every full sweep certifies the point it starts
    from: F(w_start) from the hinge measured during the sweep, and
    D(α_start) = 2λ Σ α_i − λ‖w_start‖².  Between full sweeps, restricted sweeps over
    the rows with α_i > 0 (shrinking, as LIBLINEAR's: a row left at α_i = 0 by a sweep
    had a margin ≥ 1 and mostly keeps it; up to :data:`_SHRUNK_SWEEPS` of them, at most
    :data:`_SHRUNK_EPOCHS` full sweeps' worth of rows in all); the next full sweep brings
    back any row that needs it (not under early stopping, whose patience counts full
    sweeps).  A generator: yields a :class:`_FullSweep` for each full sweep, is sent its
    hinge sum, and returns the number of steps (rows visited).
    """
    blocks, lam = stages.blocks, stages.lam
    n = blocks.shape[0]
    C = 1.0 / (2.0 * lam * n)
    upper = C * stages.sample_weight
    alpha = upper * stages.beta
    w = C * stages.g
    near = np.flatnonzero(np.abs(stages.margin - 1.0) < _REFINE_BAND)
    steps = _restricted_sweeps(stages, near, _REFINE_SWEEPS, _REFINE_EPOCHS, upper, alpha, w,
                               rng, steps, max_steps)
    stages.zc = None
    while run.stop_reason is None and steps + n <= max_steps:
        w_start = w.copy()
        alpha_sum = float(alpha.sum())
        hinge = yield _FullSweep(stages, upper, alpha, w, w_start, rng)
        steps += n
        norm2 = float(w_start @ w_start)
        objective = hinge / (C * n) + lam * norm2
        dual = 2.0 * lam * alpha_sum - lam * norm2
        # Recorded once the sweep that certifies it is done: the history's iteration, epoch
        # and time count the work spent to know F and the gap of this point.
        run.checkpoint(w_start, steps, steps / n, objective, max(objective - dual, 0.0))
        # Under early stopping every full sweep is a checkpoint that counts towards the
        # patience: shrinking sweeps between them would only make each one dearer.
        if run.stop_reason is None and run.patience is None:
            active = np.flatnonzero(alpha > 0.0)
            if active.size <= n // 2:
                steps = _restricted_sweeps(stages, active, _SHRUNK_SWEEPS, _SHRUNK_EPOCHS,
                                           upper, alpha, w, rng, steps, max_steps)
    return steps


def _restricted_sweeps(stages, rows, max_sweeps, epochs, upper, alpha, w, rng, steps,
                       max_steps):
    """Up to ``max_sweeps`` dual-ascent sweeps over ``rows`` (global indices, increasing),
    visiting at most ``epochs`` · n rows in all and leaving room for one full sweep
    within ``max_steps``; returns the updated step count."""
    n = stages.blocks.shape[0]
    sweeps = min(max_sweeps, int(epochs * n // max(rows.size, 1)))
    if steps + sweeps * rows.size + n > max_steps:
        return steps
    blocks = stages.blocks
    if blocks.array is not None and len(blocks.bounds) == 1:
        # One block in memory: the same orders, drawn first, swept in one jitted call (the
        # sweeps of a small problem cost less than calling them one by one from Python).
        return steps + loops.dual_refine_sweeps(
            blocks.array, 0, stages.y, upper, stages.sqnorm,
            _sweep_orders(rng, rows, sweeps), alpha, w)
    if blocks.store is not None and rows.size <= blocks.store.block_rows:
        # A store's rows swept read once, into an array of at most one block (the storage
        # plan counts six), not read (from disk, or widened from float16) at every sweep.
        Z = np.empty((rows.size, blocks.shape[1]), blocks.store.compute_dtype)
        for block in blocks:
            part = slice(np.searchsorted(rows, block.start), np.searchsorted(rows, block.stop))
            Z[part] = block.Z[rows[part] - block.start]
        alpha_rows = alpha[rows]
        visits = loops.dual_refine_sweeps(Z, 0, stages.y[rows], upper[rows],
                                          stages.sqnorm[rows],
                                          _sweep_orders(rng, np.arange(rows.size), sweeps),
                                          alpha_rows, w)
        alpha[rows] = alpha_rows
        return steps + visits
    for _ in range(sweeps):
        for block in stages.blocks.shuffled(rng):
            part = rows[np.searchsorted(rows, block.start):np.searchsorted(rows, block.stop)]
            loops.dual_refine_sweep(block.Z, block.start, stages.y, upper, stages.sqnorm,
                                    rng.permutation(part), alpha, w)
        steps += rows.size
    return steps


def _sweep_orders(rng, rows, sweeps):
    """``sweeps`` random orders of ``rows``, one a row, seeded from ``rng``."""
    return loops.shuffled_orders(rows, sweeps, int(rng.integers(2**63)))


class _L2Stages:
    """Algorithm 1 for F(w) = (1/n) Σ s_i hinge_i + λ‖w‖²: stage state, steps, certificate.

    The last checkpoint pass leaves the margins y_i⟨w, z_i⟩ (``margin``), the dual
    estimate β and g = Σ s_i β_i y_i z_i; the next stage's table ⟨z_i, c⟩ is y·margin.
    """

    def __init__(self, rows, y, sample_weight, lam, recorder):
        n, m = rows.blocks.shape
        self.blocks, self.sqnorm, self.y = rows.blocks, rows.sqnorm, y
        self.sample_weight, self.lam, self.recorder = sample_weight, lam, recorder
        self.v, self.u = np.empty(m), np.empty(m)
        # Counts (halved at each stage): float32 holds them exactly enough, in half the memory.
        self.hits, self.violations = np.zeros(n, np.float32), np.zeros(n, np.float32)
        self.beta, self.margin, self.g = np.empty(n), np.empty(n), np.empty(m)
        self.assg_steps = 0

    def defaults(self, stage_steps, gap0, norm_w0, objective0):
        return default_step_and_radius(self.sqnorm, self.sample_weight, self.lam, stage_steps,
                                       gap0, norm_w0, objective0)

    def start(self, c):
        """A new stage centred at c (the last checkpoint's point): w = c, nothing averaged,
        indicator averages halved."""
        self.c, self.zc, self.cc = c, self.y * self.margin, float(c @ c)
        self.v[:] = 0.0
        self.u[:] = 0.0
        self.state = self.new_state()
        self.hits *= 0.5
        self.violations *= 0.5

    @staticmethod
    def new_state():
        """w = c (a = 1, b = 1, v = 0), nothing averaged yet."""
        return np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0])

    def run(self, count, rng, eta, radius):
        for block, rows in self.blocks.sample(count, rng):
            loops.assg_steps(block.Z, block.start, self.y, self.sample_weight, rows, self.zc,
                             self.sqnorm, self.cc, self.lam, eta, radius, self.v, self.u,
                             self.state, self.hits, self.violations)
        self.assg_steps += count

    def average(self):
        """The average of the stage's projected iterates so far: (S·v − u + B·c) / t."""
        s = self.state
        return (s[loops.S_SUM] * self.v - self.u + s[loops.B_SUM] * self.c) / s[loops.STEPS]

    def checkpoint_pass(self, w, with_dual=True):
        """Margins, β and g (``with_dual``) at w, in one parallel pass; returns the
        weighted hinge sum."""
        hinge = 0.0
        self.g[:] = 0.0
        for block in self.blocks:
            tasks = -(-(block.stop - block.start) // loops.CHECKPOINT_TASK_ROWS)
            hinge_parts, g_parts = np.empty(tasks), np.empty((tasks, self.g.shape[0]))
            loops.checkpoint_pass(block.Z, block.start, self.y, self.sample_weight, w,
                                  self.hits, self.violations, self.beta, self.margin,
                                  hinge_parts, g_parts, with_dual)
            hinge += float(hinge_parts.sum())
            self.g += g_parts.sum(axis=0)
        return hinge

    def certificate(self, w, with_dual=True):
        """F(w) and the certified gap F(w) − D(β) ≥ F(w) − F*, β the averaged indicators
        (without the dual point: an infinite gap, which :class:`_Run` replaces by the one
        of the best dual point so far).

        Only the dual part is evaluation (the margins are the next stage's table), but
        the whole pass is timed as evaluation: the history's clock is the steps'.
        """
        t0 = time.perf_counter()
        hinge = self.checkpoint_pass(w, with_dual)
        objective = hinge / self.y.shape[0] + self.penalty(w)
        gap = max(objective - self.dual(), 0.0) if with_dual else np.inf
        self.recorder.exclude_since(t0)
        return objective, gap

    def penalty(self, w):
        return self.lam * float(w @ w)

    def dual(self):
        """D(β) of the last pass's β and g."""
        n = self.y.shape[0]
        w_beta = self.g / (2.0 * self.lam * n)
        return float(self.sample_weight @ self.beta) / n - self.lam * float(w_beta @ w_beta)


class _L1Stages(_L2Stages):
    """ASSG for the ℓ1-SVM F₁(w) = (1/n) Σ s_i hinge_i + λ‖w‖₁ (Theorem 2 of the paper)."""

    def defaults(self, stage_steps, gap0, norm_w0, objective0):
        return default_step_and_radius_l1(self.sqnorm, self.sample_weight, self.lam, stage_steps,
                                          norm_w0, objective0, self.g.shape[0])

    @staticmethod
    def new_state():
        """w = c + a·v with a = 1, v = 0, no step averaged yet (``u`` holds their sum)."""
        return np.array([1.0, 0.0])

    def run(self, count, rng, eta, radius):
        for block, rows in self.blocks.sample(count, rng):
            loops.assg_l1_steps(block.Z, block.start, self.y, self.sample_weight, rows, self.c,
                                self.zc, self.lam, eta, radius, self.v, self.u, self.state,
                                self.hits, self.violations)
        self.assg_steps += count

    def average(self):
        return self.c + self.u / self.state[loops.L1_STEPS]

    def penalty(self, w):
        return self.lam * float(np.abs(w).sum())

    def dual(self):
        """D₁(κβ) ≤ F₁*: β are the rows' averaged violation indicators; κ = min(1,
        λ/‖(1/n) Σ s_i β_i y_i z_i‖_∞) scales them into the dual's feasible set."""
        n = self.y.shape[0]
        largest = float(np.abs(self.g).max()) / n
        scale = 1.0 if largest <= self.lam else self.lam / largest
        return scale * float(self.sample_weight @ self.beta) / n


def stage_plan(eta, radius, n, schedule=None) -> _Schedule:
    """ASSG's stages for n rows, as :meth:`_Schedule.first` plans them, from the step η₀ and
    radius D₀ the data give (``schedule``'s own η₀ and D₀ when it sets them; default
    :class:`AssgSchedule`): where the rows are not in one place (a cluster's averaged
    steps), the stages shrink η and D and grow by these rules, not by a copy of them."""
    schedule = AssgSchedule() if schedule is None else schedule
    return _Schedule(eta if schedule.eta0 is None else float(schedule.eta0),
                     radius if schedule.radius0 is None else float(schedule.radius0),
                     schedule.omega, schedule.stage_epochs * n, schedule.growth)
