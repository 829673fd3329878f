"""Snacks (ASSG) on the ℓ1-SVM F₁(w) = (1/n) Σ s_i hinge_i + λ‖w‖₁, against a plain NumPy
stage and an LP oracle for F₁*."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

import reference
from snacks_core import SnacksClassifier
from snacks_core.solvers import check_solver_params, snacks
from snacks_core.solvers import snacks_kernels as loops
from snacks_core.solvers.snacks import SnacksOptions


def l1_svm_lp(Z, y, lam, sample_weight=None):
    """min (1/n) Σ s_i ξ_i + λ Σ (p + q), ξ_i ≥ 1 − y_i⟨p − q, z_i⟩, p, q, ξ ≥ 0 (HiGHS)."""
    n, m = Z.shape
    s = np.ones(n) if sample_weight is None else sample_weight
    cost = np.concatenate([lam * np.ones(2 * m), s / n])
    A = -np.hstack([y[:, None] * Z, -y[:, None] * Z, np.eye(n)])
    result = linprog(cost, A_ub=A, b_ub=-np.ones(n), bounds=(0, None), method="highs")
    assert result.status == 0
    return float(result.fun), result.x[:m] - result.x[m:2 * m]


def l1_objective(w, problem):
    return (reference.hinge(w, problem.Z, problem.y, problem.sample_weight)
            + problem.lam * np.abs(w).sum())


def plain_l1_stage(Z, y, sw, rows, center, lam, eta, radius):
    """ASSG's inner loop on F₁ as written:
    w ← Π_B(c,D)(w − η(λ sign(w) − s_i y_i z_i 1[y_i⟨w, z_i⟩ < 1])).

    Returns the last iterate and the average of the iterates."""
    w = center.copy()
    total = np.zeros_like(w)
    for i in rows:
        violated = y[i] * (w @ Z[i]) < 1.0
        w = w - eta * lam * np.sign(w) + (eta * sw[i] * y[i] * Z[i] if violated else 0.0)
        distance = np.linalg.norm(w - center)
        if distance > radius:
            w = center + (w - center) * (radius / distance)
        total += w
    return w, total / len(rows)


@pytest.mark.parametrize("radius", [np.inf, 0.5])
@pytest.mark.parametrize("split", [None, 37])
def test_stage_matches_plain_assg(radius, split, weighted_problem):
    p = weighted_problem
    n, m = p.Z.shape
    rng = np.random.default_rng(3)
    rows = rng.integers(0, n, size=400)
    center = rng.normal(scale=0.3, size=m)
    lam, eta = 0.05, 0.02
    expected_last, expected_average = plain_l1_stage(p.Z, p.y, p.sample_weight, rows, center,
                                                     lam, eta, radius)
    v, total, state = np.zeros(m), np.zeros(m), np.array([1.0, 0.0])
    hits, violations = np.zeros(n), np.zeros(n)
    zc = p.Z @ center
    for part in ([rows] if split is None else [rows[:split], rows[split:]]):
        loops.assg_l1_steps(p.Z, 0, p.y, p.sample_weight, part, center, zc, lam, eta, radius,
                              v, total, state, hits, violations)
    np.testing.assert_allclose(center + state[0] * v, expected_last, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(center + total / state[1], expected_average, rtol=1e-9, atol=1e-12)
    assert state[1] == 400
    np.testing.assert_array_equal(hits, np.bincount(rows, minlength=n))
    if np.isfinite(radius):
        # The ball binds: the last iterate lies on its boundary.
        assert np.linalg.norm(center + state[0] * v - center) == pytest.approx(radius)


@pytest.mark.parametrize("fixture, target", [("weighted_problem", 2e-2), ("moons_problem", 5e-2)])
def test_history_is_the_l1_problem_and_converges(fixture, target, request):
    p = request.getfixturevalue(fixture)
    f_star, _ = l1_svm_lp(p.Z, p.y, p.lam, p.sample_weight)
    rows = []
    result = snacks.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, max_epochs=60, tol=0.0,
                          random_state=0,
                          callback=lambda row, w: rows.append((row, w.copy())),
                          options=SnacksOptions(penalty="l1"))
    h = result.history
    for row, w in rows[:: max(1, len(rows) // 5)]:
        assert row["objective"] == pytest.approx(l1_objective(w, p), rel=1e-9)
    # The certificate is the ℓ1 dual's: it bounds F₁ − F₁* at every checkpoint.
    assert np.all(h["objective"] - h["gap"] <= f_star * (1 + 1e-9))
    assert np.all(h["objective"] >= f_star * (1 - 1e-9))
    assert (l1_objective(result.coef, p) - f_star) / f_star <= target


def test_l2_path_is_unchanged(moons_problem):
    p = moons_problem
    default = snacks.solve(p.Z, p.y, p.lam, max_epochs=3, random_state=5)
    explicit = snacks.solve(p.Z, p.y, p.lam, max_epochs=3, random_state=5,
                            options=SnacksOptions(penalty="l2"))
    np.testing.assert_array_equal(default.coef, explicit.coef)


def test_same_seed_same_weights_and_float32(moons_problem):
    p = moons_problem
    l1 = SnacksOptions(penalty="l1")
    first = snacks.solve(p.Z, p.y, p.lam, max_epochs=4, random_state=1, options=l1)
    second = snacks.solve(p.Z, p.y, p.lam, max_epochs=4, random_state=1, options=l1)
    np.testing.assert_array_equal(first.coef, second.coef)
    single = snacks.solve(p.Z.astype(np.float32), p.y, p.lam, max_epochs=4, random_state=1,
                          options=SnacksOptions(penalty="l1"))
    assert single.coef.dtype == np.float64
    assert l1_objective(single.coef, p) == pytest.approx(l1_objective(first.coef, p), rel=1e-2)


def test_estimator_and_bad_penalty():
    X = np.random.default_rng(0).normal(size=(300, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    model = SnacksClassifier(n_components=20, lam=1e-3, random_state=0,
                             solver_options={"penalty": "l1"}).fit(X, y)
    assert model.score(X, y) >= 0.9
    with pytest.raises(ValueError, match="'penalty' parameter of solver='snacks'"):
        check_solver_params("snacks", max_epochs=50, tol=1e-3,
                            solver_options={"penalty": "elasticnet"})
