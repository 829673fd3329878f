"""The Snacks (ASSG) solver against the plain NumPy Algorithm 1 of ``tests/reference.py``.

F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖²; the fixtures carry F* (conftest.py).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
from snacks_core.solvers import REGISTRY, check_solver_params, pegasos, snacks
from snacks_core.solvers import snacks_kernels as loops
from snacks_core.solvers.snacks import AssgSchedule, EarlyStopping, SnacksOptions
from snacks_core.solvers.storage import EmbeddingStore

# Relative accuracy (F(w) − F*) / F* of the Snacks paper's comparisons (Fig. 1).
TARGET = 1e-3

def _relative_excess(w, problem):
    f = reference.objective(w, problem.Z, problem.y, problem.lam, problem.sample_weight)
    return (f - problem.f_star) / problem.f_star


def _epochs_to_reach(result, problem, target=TARGET):
    """Epoch of the first checkpoint with (F(w) − F*) / F* ≤ target (inf if never)."""
    excess = (result.history["objective"] - problem.f_star) / problem.f_star
    reached = np.flatnonzero(excess <= target)
    return result.history["epoch"][reached[0]] if reached.size else np.inf


def _run_stage(Z, y, lam, rows, eta, radius, center, sample_weight=None, split=None):
    """One stage of the jitted steps from w = center; returns (last iterate, average).

    ``split`` cuts ``rows`` in two calls, as the driver does at each checkpoint.
    """
    n, m = Z.shape
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    center = np.asarray(center, dtype=np.float64)
    zc = np.asarray(Z, dtype=np.float64) @ center
    sqnorm = np.einsum("ij,ij->i", Z, Z, dtype=np.float64)
    v, u = np.zeros(m), np.zeros(m)
    state = snacks._L2Stages.new_state()
    hits, violations = np.zeros(n), np.zeros(n)
    rows = np.asarray(rows, dtype=np.int64)
    parts = [rows] if split is None else [rows[:split], rows[split:]]
    for part in parts:
        loops.assg_steps(Z, 0, y, sw, part, zc, sqnorm, float(center @ center), lam, eta,
                           radius, v, u, state, hits, violations)
    np.testing.assert_array_equal(hits, np.bincount(rows, minlength=n))
    last = state[loops.A] * v + state[loops.B] * center
    average = (state[loops.S_SUM] * v - u + state[loops.B_SUM] * center) / state[loops.STEPS]
    return last, average


def _stage_rows(n, seed, n_steps, stage_epochs=1.0, growth=2.0):
    """The rows ``snacks.solve`` samples: its generator, stage lengths and ≤ n-row chunks."""
    rng = np.random.default_rng(seed)
    stage_steps, steps, stages = stage_epochs * n, 0, []
    while steps < n_steps:
        T = max(1, min(int(round(stage_steps)), n_steps - steps))
        stage_steps *= growth
        chunks, done = [], 0
        while done < T:
            chunk = min(T - done, n)
            chunks.append(rng.integers(0, n, size=chunk))
            done += chunk
        stages.append(np.concatenate(chunks))
        steps += T
    return stages


def _documented_step_and_radius(Z, sample_weight, lam, stage_steps, gap0):
    """Snacks' default η₀ from w₀ = 0, from its docstring:
    η₀ = min(D₀ / (G √T₁), 1 / (2λT₁), 3 min(gap₀, F(0)) / G²) with G² = mean of s_i² ‖z_i‖²
    and gap₀ the certified gap at 0 (the history's first entry), and the radius bound
    D₀ ≤ √(F(0)/λ).

    The solver's own D₀ (from gap₀) can be smaller; on the problems below neither ball
    binds, so these values reproduce its trajectory (the test asserts it step by step).
    """
    s = np.ones(Z.shape[0]) if sample_weight is None else sample_weight
    radius = np.sqrt(s.mean() / lam)
    g2 = np.mean(s * s * np.sum(np.asarray(Z, dtype=np.float64) ** 2, axis=1))
    eta = min(radius / np.sqrt(g2 * stage_steps), 1.0 / (2.0 * lam * stage_steps),
              3.0 * min(gap0, s.mean()) / g2)
    return eta, radius


def _assert_close(actual, expected, tol=1e-10):
    np.testing.assert_allclose(actual, expected, rtol=tol,
                               atol=tol * max(1.0, np.abs(expected).max()))


# ------------------------------------------------------------------------ convergence


def test_reaches_target_within_200_epochs(moons_problem):
    p = moons_problem
    result = snacks.solve(p.Z, p.y, p.lam, max_epochs=200, tol=0.0, random_state=0,
                          options=SnacksOptions(polish=False))
    assert result.stop_reason == "max_epochs" and result.n_epochs == 200
    assert _relative_excess(result.coef, p) <= TARGET


def test_needs_fewer_epochs_than_pegasos(moons_problem):
    p = moons_problem

    def epochs(module, seed):
        options = {"options": SnacksOptions(polish=False)} if module is snacks else {}
        result = module.solve(p.Z, p.y, p.lam, max_epochs=200, tol=0.0, random_state=seed,
                              **options)
        return _epochs_to_reach(result, p)

    assert epochs(snacks, 0) < epochs(pegasos, 0)
    # Not a lucky seed: the median over seeds too.
    seeds = range(5)
    assert (np.median([epochs(snacks, s) for s in seeds])
            < np.median([epochs(pegasos, s) for s in seeds]))


def test_float32_embedding_reaches_target(moons_problem):
    p = moons_problem
    result = snacks.solve(p.Z.astype(np.float32), p.y, p.lam, max_epochs=200, tol=0.0,
                          random_state=0, options=SnacksOptions(polish=False))
    assert result.coef.dtype == np.float64
    assert _relative_excess(result.coef, p) <= TARGET


# ------------------------------------------------------- the inner loop vs Algorithm 1


STAGE_CASES = {
    # name: (eta, radius, start at w*, weighted)
    "free": (0.05, 1e3, False, False),
    "free_from_optimum": (0.05, 1e3, True, False),
    "weighted": (0.05, 1e3, False, True),
    "projected": (0.05, 1.0, False, False),
    "projected_around_optimum": (0.05, 1.0, True, True),
}
# These fold the scale a of w = a·v into v within the stage (a < _RESCALE_BELOW).
RESCALING_CASES = {
    "small_ball": (0.5, 0.1, True, False),
    "large_step": (5.0, 1e3, False, False),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "case",
    list(STAGE_CASES) + list(RESCALING_CASES),
)
def test_stage_matches_algorithm_1(case, dtype, weighted_problem):
    eta, radius, from_optimum, weighted = {**STAGE_CASES, **RESCALING_CASES}[case]
    p = weighted_problem
    Z = p.Z[:40].astype(dtype)
    y, weights = p.y[:40], p.sample_weight[:40] if weighted else None
    center = p.w_star if from_optimum else np.zeros(Z.shape[1])
    rows = np.random.default_rng(3).integers(0, 40, size=300)
    expected = reference.assg_reference(Z, y, p.lam, [rows], eta, radius, w0=center,
                                        sample_weight=weights)[0]
    # The cases exercise the projection exactly when they name a ball.
    assert (expected["distances"].max() == pytest.approx(radius)) == (radius < 1e3)
    last, average = _run_stage(Z, y, p.lam, rows, eta, radius, center, weights, split=137)
    _assert_close(last, expected["last"])
    _assert_close(average, expected["average"])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), eta=st.floats(1e-3, 1.0), radius=st.floats(1e-2, 10.0),
       from_optimum=st.booleans(), split=st.integers(0, 60))
def test_iterates_match_algorithm_1_and_stay_in_the_ball(seed, eta, radius, from_optimum, split,
                                                          tiny_problem):
    p = tiny_problem
    center = p.w_star if from_optimum else np.zeros(p.Z.shape[1])
    rows = np.random.default_rng(seed).integers(0, p.Z.shape[0], size=60)
    expected = reference.assg_reference(p.Z, p.y, p.lam, [rows], eta, radius, w0=center)[0]
    # The projection of the jitted loop, iterate by iterate.
    for t in (split, 59):
        last, _ = _run_stage(p.Z, p.y, p.lam, rows[:t + 1], eta, radius, center)
        assert np.linalg.norm(last - center) <= radius * (1 + 1e-9)
    _assert_close(last, expected["last"])
    assert np.all(expected["distances"] <= radius * (1 + 1e-12))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), eta=st.floats(1e-3, 0.5), split=st.integers(1, 199),
       weighted=st.booleans())
def test_stage_average_matches_algorithm_1_without_projection(seed, eta, split, weighted,
                                                                weighted_problem):
    p = weighted_problem
    weights = p.sample_weight if weighted else None
    rows = np.random.default_rng(seed).integers(0, p.Z.shape[0], size=200)
    expected = reference.assg_reference(p.Z, p.y, p.lam, [rows], eta, 1e6, sample_weight=weights)[0]
    last, average = _run_stage(p.Z, p.y, p.lam, rows, eta, 1e6, np.zeros(p.Z.shape[1]), weights,
                               split)
    _assert_close(last, expected["last"])
    _assert_close(average, expected["average"])


def test_reference_projection_is_active_with_a_small_radius(tiny_problem):
    p = tiny_problem
    rows = [np.random.default_rng(k).integers(0, 30, size=60 * 2**k) for k in range(3)]
    radius0 = 0.2
    stages = reference.assg_reference(p.Z, p.y, p.lam, rows, 0.5, radius0)
    for k, stage in enumerate(stages):
        radius = radius0 / 2**k
        assert np.all(stage["distances"] <= radius * (1 + 1e-12))
        assert stage["distances"].max() == pytest.approx(radius)
        assert np.linalg.norm(stage["average"] - stage["center"]) <= radius * (1 + 1e-12)


def test_solve_matches_algorithm_1(tiny_problem, weighted_problem):
    """The whole driver: stage lengths T_k = 2^k n, η and D halved, centre = previous average."""
    for p in (tiny_problem, weighted_problem):
        n = p.Z.shape[0]
        seen = []
        result = snacks.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, max_epochs=15,
                              tol=0.0, random_state=5,
                              callback=lambda row, w, seen=seen: seen.append(w.copy()),
                              options=SnacksOptions(polish=False))
        eta, radius = _documented_step_and_radius(p.Z, p.sample_weight, p.lam, n,
                                                  result.history["gap"][0])
        stages = reference.assg_reference(p.Z, p.y, p.lam, _stage_rows(n, 5, result.n_iter), eta,
                                          radius, sample_weight=p.sample_weight)
        # The result is the best checkpoint; every stage's output was recorded at its end.
        best = int(np.argmin(result.history["objective"]))
        _assert_close(result.coef, seen[best])
        ends = np.cumsum([len(stage["distances"]) for stage in stages])
        at_end = [seen[list(result.history["iteration"]).index(end)] for end in ends]
        for w, stage in zip(at_end, stages, strict=True):
            _assert_close(w, stage["average"])


def test_solve_with_a_small_ball_matches_algorithm_1(tiny_problem):
    p = tiny_problem
    seen = []
    result = snacks.solve(p.Z, p.y, p.lam, max_epochs=7, tol=0.0, random_state=5, w0=p.w_star,
                          callback=lambda row, w: seen.append(w.copy()),
                          options=SnacksOptions(polish=False,
                                                schedule=AssgSchedule(eta0=0.5, radius0=0.1)))
    stages = reference.assg_reference(p.Z, p.y, p.lam, _stage_rows(30, 5, result.n_iter), 0.5, 0.1,
                                      w0=p.w_star)
    # The last stage's output (the history may end with a repeat of the best point).
    _assert_close(seen[list(result.history["iteration"]).index(result.n_iter)],
                  stages[-1]["average"])


# --------------------------------------------------------- history, stopping, certificate


def test_history_time_excludes_evaluation(moons_problem, monkeypatch):
    """Slow the certificate and the callback down: the time column must not see it."""
    p = moons_problem
    pause = 0.05
    real_certificate = snacks._L2Stages.certificate

    def slow_certificate(self, w, with_dual=True):
        objective, gap = real_certificate(self, w, with_dual)
        started = time.perf_counter()
        time.sleep(pause)
        self.recorder.exclude_since(started)
        return objective, gap

    monkeypatch.setattr(snacks._L2Stages, "certificate", slow_certificate)
    start = time.perf_counter()
    result = snacks.solve(p.Z, p.y, p.lam, max_epochs=7, tol=0.0, random_state=0,
                          callback=lambda row, w: time.sleep(pause),
                          options=SnacksOptions(polish=False))
    wall = time.perf_counter() - start
    elapsed = result.history["time"]
    checkpoints = len(elapsed)
    assert checkpoints == 8
    assert elapsed[0] >= 0 and np.all(np.diff(elapsed) >= 0)
    slept = pause * (2 * checkpoints - 1)
    assert wall >= slept
    # What remains is the optimisation itself: a few milliseconds here.
    assert elapsed[-1] < wall - 0.9 * slept


def test_loose_tolerance_stops_on_the_gap(moons_problem):
    p = moons_problem
    result = snacks.solve(p.Z, p.y, p.lam, max_epochs=200, tol=0.5, random_state=0)
    h = result.history
    assert result.stop_reason == "tol_gap" and result.n_epochs < 200
    assert h["gap"][-1] <= 0.5 * h["objective"][-1]
    assert np.all(h["gap"][1:-1] > 0.5 * h["objective"][1:-1])


@pytest.mark.parametrize("problem", ["moons_problem", "weighted_problem"])
def test_gap_certifies_the_excess_at_every_checkpoint(problem, request):
    p = request.getfixturevalue(problem)
    result = snacks.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, max_epochs=63, tol=0.0,
                          random_state=0)
    h = result.history
    assert np.all(np.isfinite(h["gap"]))
    # F(w) − D(β) ≥ F(w) − F* ≥ 0, up to the accuracy of the LIBLINEAR F*.
    slack = 1e-9 * p.f_star
    assert np.all(h["gap"] >= h["objective"] - p.f_star - slack)
    assert np.all(h["objective"] >= p.f_star - slack)
    # The certificate tightens as the stages proceed.
    assert h["gap"][-1] < 0.5 * h["gap"][1]


def test_warm_start_begins_at_w0(moons_problem):
    p = moons_problem
    result = snacks.solve(p.Z, p.y, p.lam, w0=p.w_star, max_epochs=20, tol=0.0, random_state=0,
                          options=SnacksOptions(polish=False, schedule=AssgSchedule(eta0=1e-3)))
    h = result.history
    assert h["objective"][0] == pytest.approx(p.f_star, rel=1e-12)
    assert np.all((h["objective"] - p.f_star) / p.f_star <= TARGET)
    with pytest.raises(ValueError, match="w0"):
        snacks.solve(p.Z, p.y, p.lam, w0=np.zeros(3))


def test_warm_start_at_the_optimum_stays_there(moons_problem):
    p = moons_problem
    result = snacks.solve(p.Z, p.y, p.lam, w0=p.w_star, max_epochs=20, tol=0.0, random_state=0)
    assert _relative_excess(result.coef, p) <= TARGET


@pytest.mark.parametrize(
    "options",
    [{"omega": 1.0}, {"stage_epochs": 0}, {"max_epochs": 0}, {"max_epochs": np.inf},
     {"tol": -1.0}, {"eta0": -1.0}, {"radius0": 0.0}, {"penalty": "l3"},
     {"n_iter_no_change": 0}, {"stage_growth": 0.5}],
)
def test_bad_options(options, tiny_problem):
    """Refused once, at the boundary (solvers.check_solver_params), naming the option."""
    budget = {"max_epochs": 10, "tol": 1e-3}
    solver_options = {k: v for k, v in options.items() if k not in budget}
    budget.update({k: v for k, v in options.items() if k in budget})
    [name] = options
    with pytest.raises(ValueError, match=f"'{name}' parameter of solver='snacks'"):
        check_solver_params("snacks", **budget, solver_options=solver_options)


def test_w0_must_match_the_embedding(tiny_problem):
    p = tiny_problem
    with pytest.raises(ValueError, match="w0 has 2 entries, the embedding has 5 columns"):
        snacks.solve(p.Z, p.y, p.lam, w0=np.ones(2))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_bad_sample_weights(bad, tiny_problem):
    p = tiny_problem
    weights = np.ones(30)
    weights[4] = bad
    with pytest.raises(ValueError, match="sample_weight must be finite and non-negative"):
        snacks.solve(p.Z, p.y, p.lam, sample_weight=weights)


# ------------------------------------------- the default: ASSG, then polishing to tol


@pytest.mark.parametrize("tol", [1e-3, 1e-6])
@pytest.mark.parametrize("problem", ["moons_problem", "weighted_problem"])
def test_default_reaches_a_true_gap_below_tol(problem, tol, request):
    """tol means what it says: (F(w) − F*)/F(w) ≤ certified gap/F(w) ≤ tol at the stop."""
    p = request.getfixturevalue(problem)
    result = snacks.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, tol=tol,
                          max_epochs=2000, random_state=0)
    h = result.history
    objective = reference.objective(result.coef, p.Z, p.y, p.lam, p.sample_weight)
    assert result.stop_reason == "tol_gap"
    assert objective == pytest.approx(h["objective"][-1], rel=1e-12)
    assert (objective - p.f_star) / objective <= tol + 1e-9
    assert h["gap"][-1] <= tol * h["objective"][-1]
    # ASSG ran its stages first, the dual ascent finished.
    assert result.info["assg_epochs"] == 3.0 and result.info["polish_epochs"] > 0
    slack = 1e-9 * p.f_star
    assert np.all(h["gap"] >= h["objective"] - p.f_star - slack)


def test_polishing_starts_from_the_assg_dual_estimate(moons_problem):
    """The polish's first certified point comes from ASSG's averaged indicators: far
    better than dual ascent from zero after one sweep."""
    p = moons_problem
    hybrid = snacks.solve(p.Z, p.y, p.lam, tol=0.0, max_epochs=5, random_state=0)
    cold = snacks.solve(p.Z, p.y, p.lam, tol=0.0, max_epochs=5, random_state=0,
                        options=SnacksOptions(schedule=AssgSchedule(eta0=1e-12, radius0=1e-12)))
    assert hybrid.history["gap"][-1] < 0.1 * cold.history["gap"][-1]


def test_dual_ascent_sweep_certifies_its_starting_point(weighted_problem):
    p = weighted_problem
    n = p.Z.shape[0]
    C = 1.0 / (2.0 * p.lam * n)
    upper = C * p.sample_weight
    rng = np.random.default_rng(0)
    alpha = upper * rng.uniform(0.0, 1.0, size=n)
    before = reference.dual(alpha / upper, p.Z, p.y, p.lam, p.sample_weight)
    w = (alpha * p.y) @ p.Z
    w_start = w.copy()
    sqnorm = np.einsum("ij,ij->i", p.Z, p.Z)
    hinge = loops.dual_ascent_sweep(p.Z, 0, p.y, upper, sqnorm, rng.permutation(n), alpha,
                                      w, w_start)
    assert hinge / (C * n) == pytest.approx(reference.hinge(w_start, p.Z, p.y, p.sample_weight),
                                            rel=1e-12)
    # w stays w(α) = C·Σ s β y z, α stays in its box, and the dual objective went up.
    np.testing.assert_allclose(w, (alpha * p.y) @ p.Z, rtol=1e-10, atol=1e-12)
    assert np.all((alpha >= 0) & (alpha <= upper))
    after = reference.dual(alpha / upper, p.Z, p.y, p.lam, p.sample_weight)
    assert after > before


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 3 * loops.PREFETCH_AHEAD),
       offset=st.integers(0, 5), dtype=st.sampled_from([np.float32, np.float64]),
       refine=st.booleans())
def test_dual_ascent_sweeps_step_by_step_against_numpy(seed, n_rows, offset, dtype, refine):
    """Both sweeps of dual ascent take the reference's steps, in the order given (rows of a
    block at an offset, repeated rows, orders shorter and longer than the prefetch's reach:
    the hint for the row ahead changes nothing)."""
    rng = np.random.default_rng(seed)
    n, m = offset + 12, 7
    Z = rng.normal(size=(12, m)).astype(dtype)
    Z[rng.integers(12)] = 0.0  # a row with ‖z_i‖ = 0 is skipped
    y = rng.choice([-1.0, 1.0], size=n)
    upper = rng.uniform(0.0, 2.0, size=n) * (rng.random(n) > 0.1)
    alpha = upper * rng.uniform(0.0, 1.0, size=n)
    order = rng.integers(offset, n, size=n_rows)
    w = rng.normal(size=m)
    sqnorm = np.zeros(n)
    sqnorm[offset:] = np.einsum("ij,ij->i", Z, Z, dtype=np.float64)
    expected_alpha, expected_w = alpha.copy(), w.copy()
    padded = np.zeros((n, m))
    padded[offset:] = Z
    reference.dual_ascent_steps(padded, y, upper, order, expected_alpha, expected_w)
    if refine:
        loops.dual_refine_sweep(Z, offset, y, upper, sqnorm, order, alpha, w)
    else:
        w_start = w.copy()
        hinge = loops.dual_ascent_sweep(Z, offset, y, upper, sqnorm, order, alpha, w, w_start)
        margins = y[order] * (padded[order] @ w_start)
        assert hinge == pytest.approx(float(np.sum(upper[order] * np.maximum(0.0, 1.0 - margins))),
                                      rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(alpha, expected_alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(w, expected_w, rtol=1e-9, atol=1e-12)


def test_shuffled_orders_are_uniform_permutations():
    """Each order is a permutation of the rows, the same for the same seed; over many seeds
    every row lands in every place about equally often (chi-squared against the uniform),
    and the sweeps of one call differ."""
    from scipy import stats

    rows = np.array([3, 8, 11, 20, 21])
    first = loops.shuffled_orders(rows, 4, 12345)
    np.testing.assert_array_equal(first, loops.shuffled_orders(rows, 4, 12345))
    assert all(np.array_equal(np.sort(order), rows) for order in first)
    assert len({tuple(order) for order in first}) > 1
    counts = np.zeros((rows.size, rows.size))
    for seed in range(4000):
        order = loops.shuffled_orders(rows, 1, seed)[0]
        counts[np.arange(rows.size), np.searchsorted(rows, order)] += 1
    assert stats.chisquare(counts.ravel()).pvalue > 1e-3
    assert loops.shuffled_orders(rows[:0], 3, 1).shape == (3, 0)


def _shrinking_sweeps_against_the_reference(seed, sweeps, offset, dtype):
    """The restricted sweeps and the NumPy reference of LIBLINEAR's shrinking on one random
    case (boxes small enough that rows sit at both bounds); returns (visits, sweeps ×
    usable rows)."""
    rng = np.random.default_rng(seed)
    n, m = offset + 30, 5
    Z = rng.normal(size=(30, m)).astype(dtype)
    y = rng.choice([-1.0, 1.0], size=n)
    upper = rng.uniform(0.0, 0.3, size=n) * (rng.random(n) > 0.1)
    alpha = upper * rng.choice([0.0, 0.5, 1.0], size=n)
    rows = np.sort(rng.choice(np.arange(offset, n), size=20, replace=False))
    orders = np.stack([rng.permutation(rows) for _ in range(sweeps)])
    w = rng.normal(size=m) * 0.3
    padded = np.zeros((n, m))
    padded[offset:] = Z
    sqnorm = np.einsum("ij,ij->i", padded, padded)
    expected_alpha, expected_w = alpha.copy(), w.copy()
    expected_visits = reference.shrinking_dual_ascent_steps(padded, y, upper, orders,
                                                            expected_alpha, expected_w)
    visits = loops.dual_refine_sweeps(Z, offset, y, upper, sqnorm, orders, alpha, w)
    assert visits == expected_visits
    np.testing.assert_allclose(alpha, expected_alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(w, expected_w, rtol=1e-9, atol=1e-12)
    return visits, sweeps * int(np.count_nonzero((upper[rows] > 0) & (sqnorm[rows] > 0)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sweeps=st.integers(1, 8), offset=st.integers(0, 5),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_restricted_sweeps_shrink_as_liblinear(seed, sweeps, offset, dtype):
    """The restricted sweeps leave out, for the sweeps after, each row at a bound whose
    gradient points out by more than the last sweep's largest violation: the reference's
    steps, row by row, and its count of rows visited."""
    _shrinking_sweeps_against_the_reference(seed, sweeps, offset, dtype)


def test_restricted_sweeps_leave_rows_out():
    """A case where rows are left out: fewer visits than sweeps × usable rows."""
    visits, without_shrinking = _shrinking_sweeps_against_the_reference(4, 6, 2, np.float64)
    assert visits < without_shrinking


@pytest.mark.parametrize("parallel", [False, True])
def test_checkpoint_pass_against_numpy(weighted_problem, monkeypatch, parallel):
    if parallel:  # the threaded pass, which large blocks take
        monkeypatch.setattr(loops, "PARALLEL_MIN_ENTRIES", 0)
    p = weighted_problem
    n, m = p.Z.shape
    rng = np.random.default_rng(1)
    w = rng.normal(size=m)
    hits = rng.integers(0, 3, size=n).astype(float)
    violations = np.minimum(hits, rng.integers(0, 3, size=n))
    tasks = -(-n // loops.CHECKPOINT_TASK_ROWS)
    beta, margin = np.empty(n), np.empty(n)
    hinge_parts, g_parts = np.empty(tasks), np.empty((tasks, m))
    loops.checkpoint_pass(p.Z, 0, p.y, p.sample_weight, w, hits, violations, beta, margin,
                            hinge_parts, g_parts, True)
    expected_margin = p.y * (p.Z @ w)
    np.testing.assert_allclose(margin, expected_margin, rtol=1e-12, atol=1e-12)
    expected_beta = np.where(hits > 0, violations / np.maximum(hits, 1), expected_margin < 1)
    np.testing.assert_allclose(beta, expected_beta)
    assert hinge_parts.sum() / n == pytest.approx(reference.hinge(w, p.Z, p.y, p.sample_weight))
    np.testing.assert_allclose(g_parts.sum(axis=0), (p.sample_weight * beta * p.y) @ p.Z,
                               rtol=1e-10)


def test_registry_groups_the_flat_solver_options(moons_problem):
    """The registry's entry takes ``solver_options``' flat keys, accepts exactly today's
    names, and gives the bits of :func:`snacks.solve` on the grouped options."""
    p = moons_problem
    validation = (p.Z[:100], p.y[:100])
    flat = REGISTRY["snacks"].solve(p.Z, p.y, p.lam, max_epochs=6, random_state=4,
                                    validation=validation, n_iter_no_change=4, omega=3.0,
                                    stage_epochs=2.0, stage_growth=1.5, eta0=0.2, polish=False,
                                    penalty="l2", n_jobs=1)
    grouped = snacks.solve(p.Z, p.y, p.lam, max_epochs=6, random_state=4, validation=validation,
                           options=SnacksOptions(polish=False, n_jobs=1, schedule=AssgSchedule(
                               eta0=0.2, omega=3.0, stage_epochs=2.0, stage_growth=1.5)),
                           early_stopping=EarlyStopping(4))
    np.testing.assert_array_equal(flat.coef, grouped.coef)
    for column in ("iteration", "objective", "gap", "validation_error"):
        np.testing.assert_array_equal(flat.history[column], grouped.history[column])
    assert REGISTRY["snacks"].option_names() == {
        "callback", "w0", "n_iter_no_change", "eta0", "radius0", "omega", "stage_epochs",
        "stage_growth", "penalty", "polish", "n_jobs"}


def test_same_result_for_any_thread_count(moons_problem, monkeypatch):
    """Serial passes (small blocks), and parallel ones on 1 or 2 threads: the same bits."""
    p = moons_problem
    held = {"validation": (p.Z[:100], p.y[:100]), "early_stopping": EarlyStopping(3)}
    serial = snacks.solve(p.Z, p.y, p.lam, max_epochs=10, random_state=3, **held)
    monkeypatch.setattr(loops, "PARALLEL_MIN_ENTRIES", 0)
    one = snacks.solve(p.Z, p.y, p.lam, max_epochs=10, random_state=3, **held,
                       options=SnacksOptions(n_jobs=1))
    two = snacks.solve(p.Z, p.y, p.lam, max_epochs=10, random_state=3, **held,
                       options=SnacksOptions(n_jobs=2))
    for result in (one, two):
        np.testing.assert_array_equal(serial.coef, result.coef)
        np.testing.assert_array_equal(serial.history["objective"], result.history["objective"])
        np.testing.assert_array_equal(serial.history["gap"], result.history["gap"])


# ------------------------------------------------------------------- early stopping


def test_early_stopping_on_a_validation_plateau(moons_problem):
    p = moons_problem
    train, held = np.arange(800), np.arange(800, 1000)
    result = snacks.solve(p.Z[train], p.y[train], p.lam, tol=0.0, max_epochs=200, random_state=0,
                          validation=(p.Z[held], p.y[held]), early_stopping=EarlyStopping(3))
    errors = result.history["validation_error"]
    assert result.stop_reason == "early_stopping" and result.n_epochs < 200
    # Each of the last three checkpoints missed the best error before it by less than a
    # row (of 200): no improvement.
    for k in range(len(errors) - 3, len(errors)):
        assert errors[k] > errors[:k].min() - 0.5 / 200
    with pytest.raises(ValueError, match="validation"):
        snacks.solve(p.Z, p.y, p.lam, early_stopping=EarlyStopping(3))
    with pytest.raises(ValueError, match="'n_iter_no_change' parameter of solver='snacks'"):
        check_solver_params("snacks", max_epochs=200, tol=0.0,
                            solver_options={"n_iter_no_change": 0})



def test_early_stopping_never_returns_an_untrained_warm_start(moons_problem):
    """From a point whose held-out error training does not beat (here the optimum itself),
    the fit still returns a point it trained (not w0), whose F is recorded."""
    p = moons_problem
    train, held = np.arange(800), np.arange(800, 1000)
    Z, y = p.Z[train], p.y[train]
    w0 = snacks.solve(Z, y, p.lam, tol=1e-8, max_epochs=500, random_state=0).coef
    errors = lambda w: np.sum(np.sign(p.Z[held] @ w) != p.y[held])  # noqa: E731
    result = snacks.solve(Z, y, p.lam, w0=w0, random_state=0, validation=(p.Z[held], p.y[held]),
                          options=SnacksOptions(polish=False), early_stopping=EarlyStopping(2))
    assert result.stop_reason == "early_stopping"
    assert not np.array_equal(result.coef, w0) and result.history["epoch"][-1] > 0
    assert errors(result.coef) >= errors(w0)  # nothing beat the start: the old answer was w0
    assert result.history["objective"][-1] == pytest.approx(
        reference.objective(result.coef, Z, y, p.lam), rel=1e-9)


def test_early_stopping_measures_f_only_at_stage_ends_and_at_the_returned_point(moons_problem):
    """Inside a stage early stopping reads the held-out error only (F and gap NaN); the
    stage ends (epochs 1, 3, 7, ... with T doubling) and the point returned have F, and the
    returned point's certified gap still bounds its true excess."""
    p = moons_problem
    train, held = np.arange(800), np.arange(800, 1000)
    Z, y = p.Z[train], p.y[train]
    result = snacks.solve(Z, y, p.lam, tol=0.0, max_epochs=60, random_state=1,
                          validation=(p.Z[held], p.y[held]), options=SnacksOptions(polish=False),
                          early_stopping=EarlyStopping(20))
    h = result.history
    inner = ~np.isin(h["epoch"][:-1], [0, 1, 3, 7, 15, 31])
    assert inner.any() and (~inner).sum() >= 4
    assert np.all(np.isnan(h["objective"][:-1][inner]) & np.isnan(h["gap"][:-1][inner]))
    assert np.all(np.isfinite(h["objective"][:-1][~inner]))
    F = reference.objective(result.coef, Z, y, p.lam)
    assert h["objective"][-1] == pytest.approx(F, rel=1e-9)
    f_star, _ = reference.optimal_objective(Z, y, p.lam)
    assert F - f_star <= h["gap"][-1] * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize(("n", "rows"), [(800, 800), (10_800, 10_800), (25_000, 12_500),
                                         (45_001, 11_251), (1_000_000, 250_000)])
def test_rows_between_held_out_checks(n, rows):
    """One check per epoch below twice the floor, then up to four per epoch."""
    assert snacks.rows_between_checks(n, early_stopping=True) == rows
    assert snacks.rows_between_checks(n, early_stopping=False) == n


def test_early_stopping_checks_the_held_out_set_four_times_an_epoch(moons_problem, monkeypatch):
    """With the floor at 200 rows, 800 training rows get a check every 200 steps; stage
    ends (epochs 1, 3, 7) keep F; without early stopping the checkpoints stay per epoch."""
    monkeypatch.setattr(snacks, "EARLY_STOPPING_MIN_CHECK_ROWS", 200)
    p = moons_problem
    train, held = np.arange(800), np.arange(800, 1000)
    options = dict(tol=0.0, max_epochs=7, random_state=0, options=SnacksOptions(polish=False))
    result = snacks.solve(p.Z[train], p.y[train], p.lam, **options,
                          early_stopping=EarlyStopping(100, (p.Z[held], p.y[held])))
    h = result.history
    assert result.stop_reason == "max_epochs"
    np.testing.assert_array_equal(h["epoch"][:29], np.arange(29) / 4)
    assert np.all(np.isfinite(h["validation_error"]))
    np.testing.assert_array_equal(np.isfinite(h["objective"][:29]),
                                  np.isin(np.arange(29) / 4, [0, 1, 3, 7]))
    plain = snacks.solve(p.Z[train], p.y[train], p.lam, **options)
    np.testing.assert_array_equal(plain.history["epoch"][:8], np.arange(8))
    assert np.all(np.isnan(plain.history["validation_error"]))


def test_early_stopping_records_and_returns_the_best_held_out_error(moons_problem, monkeypatch):
    """Without a validation set the history's validation_error is the stopping set's error,
    equal to a NumPy count at every checkpoint; the fit returns the first trained
    checkpoint with the lowest of them, and the history ends with it."""
    monkeypatch.setattr(snacks, "EARLY_STOPPING_MIN_CHECK_ROWS", 200)
    p = moons_problem
    train, held = np.arange(800), np.arange(800, 1000)
    Z_stop, y_stop = p.Z[held], p.y[held]
    seen = []
    result = snacks.solve(p.Z[train], p.y[train], p.lam, tol=0.0, max_epochs=60, random_state=0,
                          callback=lambda record, w: seen.append(
                              (record["iteration"], record["validation_error"], w.copy())),
                          options=SnacksOptions(polish=False),
                          early_stopping=EarlyStopping(3, (Z_stop, y_stop)))
    assert result.stop_reason == "early_stopping" and result.n_epochs < 60
    for _, recorded, w in seen:
        assert recorded == np.mean(np.sign(Z_stop @ w) != y_stop)
    errors = result.history["validation_error"]
    assert errors[-1] == np.mean(np.sign(Z_stop @ result.coef) != y_stop)
    # The last record repeats the returned point when it is not the last checkpoint.
    checks = [(error, w) for iteration, error, w in seen if iteration > 0]
    best = min(error for error, _ in checks)
    assert errors[-1] == best
    np.testing.assert_array_equal(result.coef, next(w for error, w in checks if error == best))


@pytest.mark.parametrize(("n", "patience", "rows"), [(800, 3, 3_360), (30_000, 5, 210_000),
                                                     (45_000, 5, 250_000),
                                                     (1_000_000, 5, 250_000)])
def test_patience_rows(n, patience, rows):
    """The patience spans 1.4 times ``n_iter_no_change`` epochs of rows, at most 250,000
    rows."""
    assert snacks.patience_rows(n, patience) == rows


def _waits_after_last_improvement(records, min_gain=1):
    """Rows and checks from the last improvement of the held-out error (by ``min_gain``
    rows) to each checkpoint, from the checkpoints' ``(iteration, errors)``; the fit's
    final record repeats a checkpoint and is left out."""
    best, improved_at, checks, waits = np.inf, 0, 0, []
    for k, (iteration, errors) in enumerate(records):
        if k and iteration == records[k - 1][0]:
            break
        if errors <= best - min_gain:
            best, improved_at, checks = errors, iteration, 0
        else:
            checks += 1
        waits.append((iteration - improved_at, checks))
    return waits


@pytest.mark.parametrize("patience_rows", [None, 0])
def test_early_stopping_patience_is_measured_in_rows(moons_problem, monkeypatch, patience_rows):
    """At four checks an epoch (800 rows, a check every 200), a patience of 3 checks also
    waits 4.2 epochs (3,360 rows: the check at 3,400) after the held-out error last
    improved, and stops at the first check that has waited both; with no patience in rows
    (the rule before) 3 checks, 600 rows, suffice."""
    monkeypatch.setattr(snacks, "EARLY_STOPPING_MIN_CHECK_ROWS", 200)
    if patience_rows is not None:
        monkeypatch.setattr(snacks, "EARLY_STOPPING_PATIENCE_ROWS", patience_rows)
    p = moons_problem
    train, held = np.arange(800), np.arange(800, 1000)
    records = []
    result = snacks.solve(
        p.Z[train], p.y[train], p.lam, tol=0.0, max_epochs=60, random_state=0,
        options=snacks.SnacksOptions(polish=False),
        early_stopping=snacks.EarlyStopping(3, stopping_set=(p.Z[held], p.y[held])),
        callback=lambda record, w: records.append(
            (record["iteration"], round(record["validation_error"] * 200))))
    assert result.stop_reason == "early_stopping"
    waits = _waits_after_last_improvement(records)
    enough = 600 if patience_rows == 0 else 3_360
    assert [rows >= enough and checks >= 3 for rows, checks in waits] == \
        [False] * (len(waits) - 1) + [True]
    assert waits[-1][0] == -(-enough // 200) * 200


# ------------------------------------------------------------- embeddings in a store


@pytest.mark.parametrize("kind", ["memory", "disk"])
def test_store_read_as_one_block_gives_the_in_memory_result(kind, moons_problem):
    p = moons_problem
    Z = p.Z.astype(np.float32)
    with EmbeddingStore(*Z.shape, kind, np.float32, block_rows=Z.shape[0]) as store:
        store.write(0, Z)
        streamed = snacks.solve(store, p.y, p.lam, max_epochs=30, random_state=2)
    in_memory = snacks.solve(Z, p.y, p.lam, max_epochs=30, random_state=2)
    np.testing.assert_array_equal(streamed.coef, in_memory.coef)
    assert streamed.stop_reason == in_memory.stop_reason == "tol_gap"


@pytest.mark.parametrize("kind, dtype", [("disk", np.float32), ("compact", np.float16)])
def test_store_in_shuffled_blocks_reaches_the_same_optimum(kind, dtype, weighted_problem):
    """Blocks change the sampling, not the problem: the certified tol holds against the F*
    of the stored rows (float16 rows are a slightly different problem)."""
    p = weighted_problem
    Z = p.Z.astype(dtype)
    with EmbeddingStore(*Z.shape, kind, dtype, block_rows=64) as store:
        store.write(0, Z)
        assert len(store.block_bounds()) > 5
        result = snacks.solve(store, p.y, p.lam, sample_weight=p.sample_weight, tol=1e-4,
                              max_epochs=3000, random_state=0)
    stored = Z.astype(np.float64)
    f_star, _ = reference.optimal_objective(stored, p.y, p.lam, p.sample_weight)
    objective = reference.objective(result.coef, stored, p.y, p.lam, p.sample_weight)
    assert result.stop_reason == "tol_gap"
    assert objective == pytest.approx(result.history["objective"][-1], rel=1e-9)
    assert (objective - f_star) / objective <= 1e-4 + 1e-9


@pytest.mark.parametrize("kind, dtype", [("disk", np.float32), ("compact", np.float16)])
def test_restricted_sweeps_read_a_store_once(kind, dtype, monkeypatch):
    """The sweeps over the rows near the hinge's kink on a store in several blocks: the rows
    are read once (one read a block), not once a sweep, and the sweeps make the in-memory
    steps on the same values in the same orders."""
    from types import SimpleNamespace

    from snacks_core.solvers.storage import RowBlocks

    rng = np.random.default_rng(5)
    n, m = 700, 9
    Z = rng.standard_normal((n, m)).astype(dtype)
    y = np.sign(rng.standard_normal(n))
    upper = rng.uniform(0.0, 1e-3, n)
    rows = np.sort(rng.choice(n, 150, replace=False))
    stored = Z.astype(np.float32)
    sqnorm = np.einsum("ij,ij->i", stored, stored, dtype=np.float64)
    w0, results = rng.standard_normal(m) * 0.01, []
    with EmbeddingStore(n, m, kind, dtype, block_rows=200) as store:
        store.write(0, Z)
        reads = []
        read = store.read
        monkeypatch.setattr(store, "read", lambda *a, **k: reads.append(a) or read(*a, **k))
        for blocks in (RowBlocks(stored), RowBlocks(store)):
            alpha, w = upper * 0.5, w0.copy()
            steps = snacks._restricted_sweeps(
                SimpleNamespace(blocks=blocks, y=y, sqnorm=sqnorm), rows, 12, 100.0, upper,
                alpha, w, np.random.default_rng(3), 0, 10**9)
            results.append((alpha, w, steps))
    (alpha_memory, w_memory, steps), (alpha_store, w_store, steps_store) = results
    assert steps == steps_store <= 12 * rows.size
    assert len(reads) == 4  # the four blocks, once
    np.testing.assert_allclose(alpha_store, alpha_memory, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(w_store, w_memory, rtol=1e-12, atol=1e-15)
    assert not np.array_equal(alpha_store, upper * 0.5)

