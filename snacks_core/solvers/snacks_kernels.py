"""Jitted loops of the Snacks solver (:mod:`snacks_core.solvers.snacks`).

Every loop takes a block of embedded rows ``Z`` (float32 or float64) holding the global
rows ``offset … offset + len(Z)``; row indices passed in (``rows``, ``order``) are
global, so that an embedding streamed from disk in blocks and one held whole in memory
(one block, offset 0) run the same code.  Per-row vectors (labels, weights, tables) are
global.  Accumulation is in float64 whatever the dtype of ``Z``.  ``sw`` is the sample
weights s_i (all ones when none are given): the loops' short name for ``sample_weight``.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from snacks_core.core.compiled import njit

# Below this scale of w = a·v, fold a into v (an O(m) pass) before precision is lost.
RESCALE_BELOW = 1e-4

# Rows per task of the parallel checkpoint pass.  The tasks' partial sums are added in a
# fixed order, so the result does not depend on the number of threads.
CHECKPOINT_TASK_ROWS = 8192

# The loops that visit rows in a random order ask the CPU for the row this many visits
# ahead (its cache lines and its entries of the per-row vectors) while they work on the
# current one: rows in a random order defeat the hardware's prefetcher, and a sweep of dual
# ascent over 9 to 61 MiB of rows ran 1.4-2.6x faster with it on this project's machine,
# 1.5-2.7x from 31 MiB on a 16-core one (BENCHMARKS.md, "Rows in a random order").  A hint
# only: the results are the same.
PREFETCH_AHEAD = 6
CACHE_LINE_BYTES = 64

# Layout of the ℓ2 stage state carried between calls of the jitted steps.
A, B, VV, VC, S_SUM, B_SUM, STEPS = range(7)
# ... and of the ℓ1 stage's: w = c + a·v, number of steps averaged.
L1_A, L1_STEPS = range(2)


@intrinsic
def _prefetch(typingctx, address):
    """Ask for the cache line at ``address`` (an integer) in the L2 cache, for reading: a
    hint that never faults and changes no result."""

    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], cgutils.voidptr_t)
        i32 = ir.IntType(32)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [cgutils.voidptr_t, i32, i32, i32]),
            "llvm.prefetch." + cgutils.voidptr_t.intrinsic_name)
        # Read (0), locality 2 (the L2 cache: the current row keeps L1), data cache (1).
        builder.call(function, [pointer, i32(0), i32(2), i32(1)])
        return context.get_dummy_value()

    return types.void(types.intp), codegen


@njit(cache=True, nogil=True)
def prefetch_row(Z, i):
    """Ask for every cache line of row ``i`` of the block ``Z``."""
    start = Z.ctypes.data + i * Z.strides[0]
    for offset in range(0, Z.shape[1] * Z.itemsize, CACHE_LINE_BYTES):
        _prefetch(start + offset)


@njit(cache=True, nogil=True)
def prefetch_entry(vector, i):
    """Ask for the cache line of ``vector[i]``."""
    _prefetch(vector.ctypes.data + i * vector.strides[0])


# Reassociation lets LLVM split the sum over SIMD lanes: the plain loop is bound by the
# latency of one chain of additions; results differ from the sequential sum by rounding
# only.
@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def dot(w, z):
    """⟨w, z⟩ accumulated in float64 (``w`` float64, ``z`` float32 or float64)."""
    total = 0.0
    for j in range(z.shape[0]):
        total += w[j] * np.float64(z[j])
    return total


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _dot2(w, c, z):
    """(⟨w, z⟩, ⟨c, z⟩) in one read of z."""
    first = 0.0
    second = 0.0
    for j in range(z.shape[0]):
        zj = np.float64(z[j])
        first += w[j] * zj
        second += c[j] * zj
    return first, second


@njit(cache=True, nogil=True)
def assg_steps(Z, offset, y, sw, rows, zc, sqnorm, cc, lam, eta, radius, v, u, state, hits,
               violations):
    """Run the ℓ2 ASSG steps of one stage for the sampled ``rows``, continuing ``state``.

    w = a·v + b·c; ``zc[i] = ⟨z_i, c⟩`` and ``cc = ‖c‖²`` are the stage's tables.
    ``hits``/``violations`` accumulate, per row, how often it was sampled and how often
    it violated the margin (the dual estimate).
    """
    m = Z.shape[1]
    a = state[A]
    b = state[B]
    vv = state[VV]
    vc = state[VC]
    s_sum = state[S_SUM]
    b_sum = state[B_SUM]
    shrink = 1.0 - 2.0 * eta * lam
    radius2 = radius * radius
    count = rows.shape[0]
    for t in range(count):
        if t + PREFETCH_AHEAD < count:
            ahead = rows[t + PREFETCH_AHEAD]
            prefetch_row(Z, ahead - offset)
            prefetch_entry(y, ahead)
            prefetch_entry(zc, ahead)
            prefetch_entry(hits, ahead)
        i = rows[t]
        zi = Z[i - offset]
        mv = dot(v, zi)
        margin = y[i] * (a * mv + b * zc[i])
        a *= shrink
        b *= shrink
        hits[i] += 1.0
        if margin < 1.0:
            violations[i] += 1.0
            delta = eta * y[i] * sw[i] / a
            sd = s_sum * delta
            for j in range(m):
                zij = np.float64(zi[j])
                v[j] += delta * zij
                u[j] += sd * zij
            vv += 2.0 * delta * mv + delta * delta * sqnorm[i]
            vc += delta * zc[i]
        dist2 = a * a * vv + 2.0 * a * (b - 1.0) * vc + (b - 1.0) * (b - 1.0) * cc
        if dist2 > radius2:
            theta = radius / np.sqrt(dist2)
            a *= theta
            b = theta * b + (1.0 - theta)
        if a < RESCALE_BELOW:
            # Fold a into v; the running sum S·v − u is carried whole into u (S = 0) so no
            # term grows like 1/a and nothing cancels.
            for j in range(m):
                u[j] -= s_sum * v[j]
                v[j] *= a
            vv *= a * a
            vc *= a
            s_sum = 0.0
            a = 1.0
        s_sum += a
        b_sum += b
    state[A] = a
    state[B] = b
    state[VV] = vv
    state[VC] = vc
    state[S_SUM] = s_sum
    state[B_SUM] = b_sum
    state[STEPS] += rows.shape[0]


@njit(cache=True, nogil=True)
def assg_l1_steps(Z, offset, y, sw, rows, c, zc, lam, eta, radius, v, total, state, hits,
                  violations):
    """Run ℓ1 ASSG steps (subgradient λ·sign(w) − s_i y_i z_i 1[margin < 1]) for ``rows``.

    w = c + a·v, ``zc[i] = ⟨z_i, c⟩``.  ``total`` accumulates Σ_t (w_t − c) = Σ_t a_t v_t:
    the previous iterate is added during the next step's dot-product pass, the chunk's last
    one at the end.  ``hits``/``violations`` as in :func:`assg_steps`.
    """
    m = Z.shape[1]
    a = state[L1_A]
    shrink = eta * lam
    radius2 = radius * radius
    for t in range(rows.shape[0]):
        i = rows[t]
        zi = Z[i - offset]
        mv = 0.0
        if t > 0:
            for j in range(m):
                vj = v[j]
                mv += vj * zi[j]
                total[j] += a * vj
        else:
            mv = dot(v, zi)
        margin = y[i] * (zc[i] + a * mv)
        hits[i] += 1.0
        inverse_a = 1.0 / a
        vv = 0.0
        if margin < 1.0:
            violations[i] += 1.0
            delta = eta * y[i] * sw[i]
            for j in range(m):
                vj = v[j]
                wj = c[j] + a * vj
                step = delta * zi[j] - (shrink if wj > 0.0 else -shrink if wj < 0.0 else 0.0)
                vj += step * inverse_a
                v[j] = vj
                vv += vj * vj
        else:
            for j in range(m):
                vj = v[j]
                wj = c[j] + a * vj
                vj -= (shrink if wj > 0.0 else -shrink if wj < 0.0 else 0.0) * inverse_a
                v[j] = vj
                vv += vj * vj
        dist2 = a * a * vv
        if dist2 > radius2:
            a *= radius / np.sqrt(dist2)
        if a < RESCALE_BELOW:
            for j in range(m):
                v[j] *= a
            a = 1.0
    if rows.shape[0] > 0:
        for j in range(m):
            total[j] += a * v[j]
    state[L1_A] = a
    state[L1_STEPS] += rows.shape[0]


# Below this many entries of Z a pass runs on the calling thread: waking the worker threads
# costs more than the pass (on moons-sized data, 1,600 × 50, checkpoints took most of the
# Playground's training time).
PARALLEL_MIN_ENTRIES = 1 << 20


def _parallel(Z):
    return Z.shape[0] * Z.shape[1] >= PARALLEL_MIN_ENTRIES and numba.get_num_threads() > 1


def checkpoint_pass(Z, offset, y, sw, w, hits, violations, beta, margin, hinge_parts, g_parts,
                    with_dual):
    """One pass over a block: margins, hinge sums and (``with_dual``) a dual point.

    ``margin[i]`` receives y_i⟨w, z_i⟩; β_i is row i's averaged margin-violation
    indicator (violations/hits), or the indicator of its current margin when it was not
    sampled.  Task k (rows ``k·CHECKPOINT_TASK_ROWS`` onwards, within the block) writes
    its hinge sum Σ s_i max(0, 1 − margin_i) to ``hinge_parts[k]`` and its
    Σ s_i β_i y_i z_i to ``g_parts[k]``.  The tasks run in parallel on large blocks, one
    after the other on small ones: the same sums either way.
    """
    run = _checkpoint_pass_parallel if _parallel(Z) else _checkpoint_pass_serial
    run(Z, offset, y, sw, w, hits, violations, beta, margin, hinge_parts, g_parts, with_dual)


def squared_norms(Z, out):
    """out[i] = ‖z_i‖² in float64 (numpy's einsum casts float32 slowly)."""
    (_squared_norms_parallel if _parallel(Z) else _squared_norms_serial)(Z, out)


def count_errors(Z, w, y):
    """Σ_i [sign⟨w, z_i⟩ ≠ y_i] (a zero score counts as an error)."""
    return (_count_errors_parallel if _parallel(Z) else _count_errors_serial)(Z, w, y)


@njit(cache=True, nogil=True)
def _checkpoint_task(Z, offset, y, sw, w, hits, violations, beta, margin, g, task, with_dual):
    """Task ``task`` of :func:`checkpoint_pass` (its ``CHECKPOINT_TASK_ROWS`` rows of the
    block); returns their hinge sum."""
    start = task * CHECKPOINT_TASK_ROWS
    stop = min(Z.shape[0], (task + 1) * CHECKPOINT_TASK_ROWS)
    g[:] = 0.0
    hinge = 0.0
    for r in range(start, stop):
        i = r + offset
        zi = Z[r]
        mi = y[i] * dot(w, zi)
        margin[i] = mi
        if mi < 1.0:
            hinge += sw[i] * (1.0 - mi)
        if not with_dual:
            continue
        if hits[i] > 0.0:
            beta[i] = violations[i] / hits[i]
        else:
            beta[i] = 1.0 if mi < 1.0 else 0.0
        if beta[i] > 0.0:
            coef = sw[i] * beta[i] * y[i]
            for j in range(Z.shape[1]):
                g[j] += coef * zi[j]
    return hinge


# Cached although parallel (here and in the two passes below): numba reloads parallel
# functions from its cache, far faster than it compiles them, and the app calls them at
# every fit.  Each pass has a parallel and a serial twin, two Python functions with the same
# loop: numba's cache key ignores the ``parallel`` flag, so one function jitted both ways
# would load one variant's machine code for the other.
@njit(cache=True, nogil=True, parallel=True)
def _checkpoint_pass_parallel(Z, offset, y, sw, w, hits, violations, beta, margin, hinge_parts,
                              g_parts, with_dual):
    for task in prange(hinge_parts.shape[0]):
        # prange's index is unsigned: as int64, the serial twin's compiled task serves both.
        hinge_parts[task] = _checkpoint_task(Z, offset, y, sw, w, hits, violations, beta,
                                             margin, g_parts[task], np.int64(task), with_dual)


@njit(cache=True, nogil=True)
def _checkpoint_pass_serial(Z, offset, y, sw, w, hits, violations, beta, margin, hinge_parts,
                            g_parts, with_dual):
    for task in range(hinge_parts.shape[0]):
        hinge_parts[task] = _checkpoint_task(Z, offset, y, sw, w, hits, violations, beta,
                                             margin, g_parts[task], task, with_dual)


@njit(cache=True, nogil=True)
def _squared_norm(zi):
    total = 0.0
    for j in range(zi.shape[0]):
        zij = np.float64(zi[j])
        total += zij * zij
    return total


@njit(cache=True, nogil=True, parallel=True)
def _squared_norms_parallel(Z, out):
    for i in prange(Z.shape[0]):
        out[i] = _squared_norm(Z[i])


@njit(cache=True, nogil=True)
def _squared_norms_serial(Z, out):
    for i in range(Z.shape[0]):
        out[i] = _squared_norm(Z[i])


@njit(cache=True, nogil=True)
def _misclassified(w, zi, yi):
    """1 when sign⟨w, z_i⟩ ≠ y_i (a zero or NaN score included), else 0."""
    return 0 if dot(w, zi) * yi > 0.0 else 1


@njit(cache=True, nogil=True, parallel=True)
def _count_errors_parallel(Z, w, y):
    errors = 0
    for i in prange(Z.shape[0]):
        errors += _misclassified(w, Z[i], y[i])
    return errors


@njit(cache=True, nogil=True)
def _count_errors_serial(Z, w, y):
    errors = 0
    for i in range(Z.shape[0]):
        errors += _misclassified(w, Z[i], y[i])
    return errors


@njit(cache=True, nogil=True)
def _prefetch_dual(Z, offset, y, upper, sqnorm, alpha, i):
    """Ask for what a dual-ascent step on row ``i`` reads."""
    prefetch_row(Z, i - offset)
    prefetch_entry(y, i)
    prefetch_entry(upper, i)
    prefetch_entry(sqnorm, i)
    prefetch_entry(alpha, i)


@njit(cache=True, nogil=True)
def dual_ascent_sweep(Z, offset, y, upper, sqnorm, order, alpha, w, w_start):
    """One sweep of dual coordinate ascent (LIBLINEAR's L1-loss update) over ``order``.

    In LIBLINEAR's scaling: α_i ∈ [0, upper_i] with upper_i = C s_i, w = Σ α_i y_i z_i;
    the maximiser of the dual along α_i is the clipped Newton step
    α_i − (y_i⟨w, z_i⟩ − 1)/‖z_i‖².  ``w`` is updated in place.  The same read of z_i
    gives the margin at ``w_start`` (w when the sweep began), and the sweep returns the
    hinge sum Σ s_i max(0, 1 − y_i⟨w_start, z_i⟩)·C over the visited rows, so that a
    sweep over every row certifies its starting point at no extra pass.
    """
    hinge = 0.0
    count = order.shape[0]
    for r in range(count):
        if r + PREFETCH_AHEAD < count:
            _prefetch_dual(Z, offset, y, upper, sqnorm, alpha, order[r + PREFETCH_AHEAD])
        i = order[r]
        zi = Z[i - offset]
        current, start = _dot2(w, w_start, zi)
        start_margin = y[i] * start
        if start_margin < 1.0:
            hinge += upper[i] * (1.0 - start_margin)
        if upper[i] <= 0.0 or sqnorm[i] <= 0.0:
            continue
        old = alpha[i]
        new = min(upper[i], max(0.0, old - (y[i] * current - 1.0) / sqnorm[i]))
        if new != old:
            delta = (new - old) * y[i]
            for j in range(w.shape[0]):
                w[j] += delta * zi[j]
            alpha[i] = new
    return hinge


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def dual_ascent_sweep_columns(Z, offset, Y, upper, sqnorm, order, alpha, W, W_start, hinge):
    """:func:`dual_ascent_sweep` for K problems on the same rows in one read of them.

    Row k of ``Y``, ``upper``, ``alpha``, ``W`` and ``W_start`` is problem k's y, upper,
    α, w and w_start; ``hinge[k]`` gets its hinge sum.  Each visit of a row reads z_i once
    for the K margins (2K dot products against ``W`` and ``W_start``, which stay in cache),
    then makes each problem's clipped Newton step, exactly as K sweeps in the same order:
    problem k's step reads only its own w_k.
    """
    K = W.shape[0]
    m = W.shape[1]
    current = np.empty(K)
    start = np.empty(K)
    count = order.shape[0]
    for r in range(count):
        if r + PREFETCH_AHEAD < count:
            prefetch_row(Z, order[r + PREFETCH_AHEAD] - offset)
        i = order[r]
        zi = Z[i - offset]
        for k in range(K):
            first = 0.0
            second = 0.0
            wk = W[k]
            sk = W_start[k]
            for j in range(m):
                zj = np.float64(zi[j])
                first += wk[j] * zj
                second += sk[j] * zj
            current[k] = first
            start[k] = second
        usable = sqnorm[i] > 0.0
        for k in range(K):
            yk = Y[k, i]
            start_margin = yk * start[k]
            if start_margin < 1.0:
                hinge[k] += upper[k, i] * (1.0 - start_margin)
            if not usable or upper[k, i] <= 0.0:
                continue
            old = alpha[k, i]
            new = min(upper[k, i], max(0.0, old - (yk * current[k] - 1.0) / sqnorm[i]))
            if new != old:
                delta = (new - old) * yk
                wk = W[k]
                for j in range(m):
                    wk[j] += delta * zi[j]
                alpha[k, i] = new


@njit(cache=True, nogil=True)
def dual_refine_sweep(Z, offset, y, upper, sqnorm, rows, alpha, w):
    """Dual coordinate ascent over ``rows`` only (no certificate): a sweep restricted to
    the rows near the hinge's kink, where the dual estimate is least certain."""
    count = rows.shape[0]
    for r in range(count):
        if r + PREFETCH_AHEAD < count:
            _prefetch_dual(Z, offset, y, upper, sqnorm, alpha, rows[r + PREFETCH_AHEAD])
        i = rows[r]
        if upper[i] <= 0.0 or sqnorm[i] <= 0.0:
            continue
        zi = Z[i - offset]
        old = alpha[i]
        new = min(upper[i], max(0.0, old - (y[i] * dot(w, zi) - 1.0) / sqnorm[i]))
        if new != old:
            delta = (new - old) * y[i]
            for j in range(w.shape[0]):
                w[j] += delta * zi[j]
            alpha[i] = new


@njit(cache=True, nogil=True)
def shuffled_orders(rows, sweeps, seed):
    """``sweeps`` random orders of ``rows``, one a row of the result: each a Fisher–Yates
    shuffle of the one before, drawn by splitmix64 from ``seed`` (drawn here, not from
    NumPy one sweep at a time, which cost a small problem's polish more than its sweeps)."""
    count = rows.shape[0]
    orders = np.empty((sweeps, count), dtype=np.int64)
    state = np.uint64(seed)
    order = rows.astype(np.int64)
    for s in range(sweeps):
        for k in range(count - 1, 0, -1):
            state += np.uint64(0x9E3779B97F4A7C15)
            mixed = state
            mixed = (mixed ^ (mixed >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            mixed = (mixed ^ (mixed >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            mixed ^= mixed >> np.uint64(31)
            j = np.int64(mixed % np.uint64(k + 1))
            order[k], order[j] = order[j], order[k]
        orders[s] = order
    return orders


# |projected gradient| up to which a row counts as optimal in the restricted sweeps'
# shrinking (LIBLINEAR's 1e-12).
_NO_VIOLATION = 1e-12


@njit(cache=True, nogil=True)
def dual_refine_sweeps(Z, offset, y, upper, sqnorm, orders, alpha, w):
    """:func:`dual_refine_sweep` over each row of ``orders`` in turn, with LIBLINEAR's
    shrinking: a row at a bound whose gradient G_i = y_i⟨w, z_i⟩ − 1 pushes it further
    out than the last sweep's largest violation (α_i = 0 with G_i above it, α_i = upper_i
    with G_i below its opposite) would only be clipped again, and is left out of the
    sweeps that follow; returns the row visits made.  (The next full sweep visits every
    row again.)  Violations within :data:`_NO_VIOLATION` of zero count as none: rounding
    alone must not decide what is left out."""
    shrunk = np.zeros(Z.shape[0] + offset, dtype=np.bool_)
    high, low = np.inf, -np.inf
    visits = 0
    for s in range(orders.shape[0]):
        order = orders[s]
        count = order.shape[0]
        top, bottom = -np.inf, np.inf
        for r in range(count):
            if r + PREFETCH_AHEAD < count:
                ahead = order[r + PREFETCH_AHEAD]
                if not shrunk[ahead]:
                    _prefetch_dual(Z, offset, y, upper, sqnorm, alpha, ahead)
            i = order[r]
            if upper[i] <= 0.0 or sqnorm[i] <= 0.0 or shrunk[i]:
                continue
            visits += 1
            zi = Z[i - offset]
            gradient = y[i] * dot(w, zi) - 1.0
            old = alpha[i]
            if old == 0.0:
                if gradient > high:
                    shrunk[i] = True
                    continue
                violation = min(gradient, 0.0)
            elif old == upper[i]:
                if gradient < low:
                    shrunk[i] = True
                    continue
                violation = max(gradient, 0.0)
            else:
                violation = gradient
            if abs(violation) > _NO_VIOLATION:
                top = max(top, violation)
                bottom = min(bottom, violation)
            new = min(upper[i], max(0.0, old - gradient / sqnorm[i]))
            if new != old:
                delta = (new - old) * y[i]
                for j in range(w.shape[0]):
                    w[j] += delta * zi[j]
                alpha[i] = new
        high = top if top > 0.0 else np.inf
        low = bottom if bottom < 0.0 else -np.inf
    return visits


@njit(cache=True, nogil=True)
def pair_dual_ascent(Z, y, upper, sqnorm, rows, max_sweeps, tol, seed, shrunk_sweeps,
                     alpha, w, trace):
    """A two-class problem on the rows ``rows`` of Z solved as Snacks' polish solves one
    (:func:`snacks_core.solvers.snacks._polish`), from α = 0, in one compiled call: in
    LIBLINEAR's scaling (min ½‖w‖² + Σ upper_i max(0, 1 − y_i⟨w, z_i⟩)), full sweeps of
    dual coordinate ascent (:func:`dual_ascent_sweep`), each certifying the point it
    starts from, and between them, while at most half the rows have α_i > 0, up to
    ``shrunk_sweeps`` restricted sweeps over those rows that shrink
    (:func:`dual_refine_sweeps`, one full sweep's worth of rows in all); until the
    relative duality gap of a certified point is at most ``tol``, or ``max_sweeps`` full
    sweeps' worth of row visits.  Orders are drawn by splitmix64 from ``seed``; ``alpha``
    (zero, indexed as Z's rows) and ``w`` (zero) are updated in place.

    Each certified point's row visits (when its sweep ended), primal value and gap go in
    a row of ``trace`` (at least ``max_sweeps`` rows of three).  Returns ``(best,
    checkpoints, best_row)``: the certified point of lowest primal value, the rows of
    ``trace`` filled, and its row.
    """
    n = rows.shape[0]
    best = w.copy()
    best_primal = np.inf
    best_gap = np.inf
    best_row = 0
    checkpoints = 0
    visits = 0
    draws = 0
    w_start = np.empty_like(w)
    while visits + n <= max_sweeps * n:
        order = shuffled_orders(rows, 1, seed + draws)[0]
        draws += 1
        w_start[:] = w
        alpha_sum = alpha[rows].sum()
        hinge = dual_ascent_sweep(Z, 0, y, upper, sqnorm, order, alpha, w, w_start)
        visits += n
        norm2 = np.dot(w_start, w_start)
        primal = 0.5 * norm2 + hinge
        gap = max(primal - (alpha_sum - 0.5 * norm2), 0.0)
        trace[checkpoints, 0] = visits
        trace[checkpoints, 1] = primal
        trace[checkpoints, 2] = gap
        if primal < best_primal:
            best[:] = w_start
            best_primal = primal
            best_gap = gap
            best_row = checkpoints
        checkpoints += 1
        if best_gap <= tol * best_primal:
            break
        # Room left for the next full sweep.
        refined = shrinking_sweeps(Z, y, upper, sqnorm, rows, alpha, w, shrunk_sweeps,
                                   (max_sweeps - 1) * n - visits, seed + draws)
        if refined > 0:
            visits += refined
            draws += 1
    return best, checkpoints, best_row


@njit(cache=True, nogil=True)
def shrinking_sweeps(Z, y, upper, sqnorm, rows, alpha, w, shrunk_sweeps, budget, seed):
    """What a two-class solve does between two full sweeps (:func:`pair_dual_ascent`,
    and its rounds under joint early stopping): where at most half of its ``rows`` have
    α_i > 0 (α indexed as Z's rows), up to ``shrunk_sweeps`` restricted sweeps over those
    rows (:func:`dual_refine_sweeps`, one full sweep's worth of rows in all, in orders
    drawn from ``seed``) if they fit in ``budget`` row visits; returns the row visits
    made (0: none ran)."""
    n = rows.shape[0]
    active = rows[alpha[rows] > 0.0]
    count = active.shape[0]
    if count == 0 or count > n // 2:
        return 0
    sweeps = min(shrunk_sweeps, n // count)
    if sweeps * count > budget:
        return 0
    return dual_refine_sweeps(Z, 0, y, upper, sqnorm, shuffled_orders(active, sweeps, seed),
                              alpha, w)
