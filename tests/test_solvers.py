"""Objective and solvers of F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², against oracles.

Generic solver tests run over every module of ``SOLVER_NAMES``, imported plainly (a broken
module fails, it is not skipped); the oracles live in ``tests/reference.py``.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from numbers import Integral, Real

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import laplacian_kernel, linear_kernel, polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

import reference
from snacks_core.solvers import REGISTRY, check_solver_params
from snacks_core.solvers.base import (
    CONVERGED,
    HISTORY_COLUMNS,
    MAX_EPOCHS,
    MAX_ITER,
    STOP_REASONS,
    TOL_GAP,
    SolverResult,
)
from snacks_core.solvers.objective import (
    dual_objective,
    duality_gap,
    hinge_loss,
    lam_to_C,
    primal_objective,
)

SOLVER_NAMES = ("pegasos", "liblinear", "snacks")

# Options that make each solver reach its accuracy target on the fixtures, and that target
# as a bound on (F(w) − F*) / F*.  Snacks' targets are the lead's (Snacks paper, Fig. 1).
CONVERGENCE = {
    "pegasos": ({"max_epochs": 100, "tol": 0.0}, 1e-2),
    "liblinear": ({"max_epochs": 10000, "tol": 1e-6}, 1e-6),
    "snacks": ({"max_epochs": 50}, 1e-3),
}


@pytest.fixture(params=SOLVER_NAMES)
def solver(request):
    return importlib.import_module(f"snacks_core.solvers.{request.param}")


def _relative_excess(w, problem):
    f = reference.objective(w, problem.Z, problem.y, problem.lam, problem.sample_weight)
    return (f - problem.f_star) / problem.f_star


# --------------------------------------------------------------------------- objective.py


@st.composite
def random_problems(draw):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    Z = rng.normal(size=(n, m)).astype(dtype)
    y = rng.choice([-1.0, 1.0], size=n)
    lam = draw(st.floats(1e-4, 10.0))
    weights = rng.uniform(0.0, 3.0, size=n) if draw(st.booleans()) else None
    w = rng.normal(scale=draw(st.floats(0.0, 5.0)), size=m)
    beta = rng.uniform(0.0, 1.0, size=n)
    return Z, y, lam, weights, w, beta


@settings(max_examples=60, deadline=None)
@given(random_problems())
def test_objective_matches_reference(problem):
    Z, y, lam, weights, w, beta = problem
    np.testing.assert_allclose(
        hinge_loss(w, Z, y, weights), reference.hinge(w, Z, y, weights), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        primal_objective(w, Z, y, lam, weights),
        reference.objective(w, Z, y, lam, weights),
        rtol=1e-9,
        atol=1e-12,
    )
    dual, w_beta = dual_objective(beta, Z, y, lam, weights)
    np.testing.assert_allclose(
        dual, reference.dual(beta, Z, y, lam, weights), rtol=1e-9, atol=1e-12
    )
    np.testing.assert_allclose(
        w_beta, reference.primal_from_dual(beta, Z, y, lam, weights), rtol=1e-9, atol=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(random_problems())
def test_duality_gap_is_nonnegative(problem):
    Z, y, lam, weights, w, beta = problem
    scale = 1e-9 * (1.0 + reference.objective(w, Z, y, lam, weights))
    assert duality_gap(w, beta, Z, y, lam, weights) >= -scale
    # β outside the box is clipped into it, so the certificate stays valid.
    assert duality_gap(w, 3.0 * beta - 1.0, Z, y, lam, weights) >= -scale


def test_dual_qp_certifies_optimum(tiny_problem):
    p = tiny_problem
    d_star, beta_star = reference.dual_box_qp(p.Z, p.y, p.lam)
    w_beta = reference.primal_from_dual(beta_star, p.Z, p.y, p.lam)
    assert abs(duality_gap(w_beta, beta_star, p.Z, p.y, p.lam)) <= 1e-8 * d_star
    # The LIBLINEAR-based F* helper used by every other test agrees with the brute force.
    assert abs(p.f_star - d_star) <= 1e-7 * d_star
    np.testing.assert_allclose(p.w_star, w_beta, rtol=1e-4, atol=1e-6)


def test_reference_subgradient_and_descent(tiny_problem):
    p = tiny_problem
    rng = np.random.default_rng(0)
    w, d = rng.normal(size=p.Z.shape[1]), rng.normal(size=p.Z.shape[1])
    eps = 1e-7
    numeric = (
        reference.objective(w + eps * d, p.Z, p.y, p.lam)
        - reference.objective(w - eps * d, p.Z, p.y, p.lam)
    ) / (2 * eps)
    np.testing.assert_allclose(numeric, reference.subgradient(w, p.Z, p.y, p.lam) @ d, rtol=1e-5)
    averaged = reference.subgradient_descent(p.Z, p.y, p.lam, 3000)
    assert 0.0 <= _relative_excess(averaged, p) <= 2e-2


# ----------------------------------------------------------------- every solver, generically


def test_result_contract(solver, moons_problem):
    p = moons_problem
    result = solver.solve(p.Z, p.y, p.lam, max_epochs=5, random_state=0)
    assert isinstance(result, SolverResult)
    assert result.coef.shape == (p.Z.shape[1],) and result.coef.dtype == np.float64
    assert np.all(np.isfinite(result.coef))
    assert set(result.history) == set(HISTORY_COLUMNS)
    lengths = {len(values) for values in result.history.values()}
    assert len(lengths) == 1 and lengths.pop() >= 1
    assert np.all(np.diff(result.history["iteration"]) >= 0)
    assert np.all(np.diff(result.history["time"]) >= 0) and result.history["time"][0] >= 0
    assert result.history["iteration"][-1] == result.n_iter
    np.testing.assert_allclose(
        result.history["objective"][-1],
        reference.objective(result.coef, p.Z, p.y, p.lam),
        rtol=1e-10,
    )
    tol = inspect.signature(solver.solve).parameters["tol"].default
    _assert_stop_reason_agrees(result, 5, tol)


@pytest.mark.parametrize("name", SOLVER_NAMES)
def test_reaches_optimum(name, moons_problem):
    solver = importlib.import_module(f"snacks_core.solvers.{name}")
    options, target = CONVERGENCE[name]
    p = moons_problem
    result = solver.solve(p.Z, p.y, p.lam, random_state=0, **options)
    assert _relative_excess(result.coef, p) <= target


@pytest.mark.parametrize("name", SOLVER_NAMES)
def test_weighted_problem(name, weighted_problem):
    solver = importlib.import_module(f"snacks_core.solvers.{name}")
    p = weighted_problem
    result = solver.solve(
        p.Z, p.y, p.lam, sample_weight=p.sample_weight, max_epochs=100, random_state=0
    )
    assert _relative_excess(result.coef, p) <= 2e-2
    # The weights returned are those of one of the recorded checkpoints.
    objective = reference.objective(result.coef, p.Z, p.y, p.lam, p.sample_weight)
    assert np.any(np.isclose(result.history["objective"], objective, rtol=1e-10))


def test_same_seed_same_weights(solver, moons_problem):
    p = moons_problem
    first = solver.solve(p.Z, p.y, p.lam, max_epochs=3, random_state=42)
    second = solver.solve(p.Z, p.y, p.lam, max_epochs=3, random_state=42)
    np.testing.assert_array_equal(first.coef, second.coef)


def test_float32_embedding(solver, moons_problem):
    p = moons_problem
    result = solver.solve(p.Z.astype(np.float32), p.y, p.lam, random_state=0)
    assert result.coef.dtype == np.float64
    assert _relative_excess(result.coef, p) <= 2e-2


def test_validation_and_callback(solver, moons_problem):
    p = moons_problem
    rows = []
    result = solver.solve(
        p.Z, p.y, p.lam, max_epochs=3, random_state=0,
        validation=(p.Z[:200], p.y[:200]), callback=lambda row, w: rows.append((row, w.copy())),
    )
    assert len(rows) == len(result.history["objective"])
    assert set(rows[-1][0]) == set(HISTORY_COLUMNS)
    errors = result.history["validation_error"]
    assert np.all((errors >= 0) & (errors <= 1))
    last_w = rows[-1][1]
    expected = np.mean(np.sign(p.Z[:200] @ last_w) != p.y[:200])
    assert errors[-1] == pytest.approx(expected)


def _bad_inputs(Z, y):
    with_nan = Z.copy()
    with_nan[3, 1] = np.nan
    with_inf = Z.copy()
    with_inf[0, 0] = np.inf
    return {
        "lam_zero": (Z, y, 0.0),
        "lam_negative": (Z, y, -1e-3),
        "lam_nan": (Z, y, np.nan),
        "labels_01": (Z, (y > 0).astype(float), 1e-3),
        "labels_nan": (Z, np.where(np.arange(len(y)) == 2, np.nan, y), 1e-3),
        "shape_mismatch": (Z, y[:-1], 1e-3),
        "nan_in_Z": (with_nan, y, 1e-3),
        "inf_in_Z": (with_inf, y, 1e-3),
    }


@pytest.mark.parametrize("case", list(_bad_inputs(np.ones((4, 2)), np.ones(4))))
def test_bad_input_raises(solver, case, tiny_problem):
    """Refused with a message that names what is wrong."""
    Z, y, lam = _bad_inputs(tiny_problem.Z, tiny_problem.y)[case]
    what = {"lam": "lam must be a positive finite number", "labels": "labels in {-1, +1}",
            "shape": "rows but y has", "nan": "NaN or infinite", "inf": "NaN or infinite"}
    with pytest.raises(ValueError, match=re.escape(what[case.split("_")[0]])):
        solver.solve(Z, y, lam, max_epochs=1, random_state=0)


# --------------------------------------------------------------------------------- Pegasos


def _pegasos_reference(p, seed, epochs, projection):
    rng = np.random.default_rng(seed)
    indices = [rng.integers(0, p.Z.shape[0], size=p.Z.shape[0]) for _ in range(epochs)]
    s = np.ones(p.Z.shape[0]) if p.sample_weight is None else p.sample_weight
    radius = np.sqrt(s.mean() / p.lam) if projection else np.inf
    return reference.pegasos_steps(p.Z, p.y, p.lam, indices, p.sample_weight, radius)


@pytest.mark.parametrize("projection", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pegasos_matches_plain_implementation(projection, dtype, tiny_problem, weighted_problem):
    from snacks_core.solvers import pegasos

    for p in (tiny_problem, weighted_problem):
        result = pegasos.solve(
            p.Z.astype(dtype), p.y, p.lam, sample_weight=p.sample_weight,
            max_epochs=3, tol=0.0, random_state=7, projection=projection,
        )
        expected = _pegasos_reference(p, 7, 3, projection)
        rtol = 1e-9 if dtype == np.float64 else 1e-4
        np.testing.assert_allclose(
            result.coef, expected, rtol=rtol, atol=rtol * np.abs(expected).max()
        )


def test_pegasos_projection_is_active_and_respected(tiny_problem):
    from snacks_core.solvers import pegasos

    p = tiny_problem
    assert not np.allclose(_pegasos_reference(p, 7, 3, True), _pegasos_reference(p, 7, 3, False))
    radius = np.sqrt(1.0 / p.lam)
    norms = []
    pegasos.solve(p.Z, p.y, p.lam, max_epochs=20, tol=0.0, random_state=1, checkpoints_per_epoch=5,
                  callback=lambda row, w: norms.append(np.linalg.norm(w)))
    assert max(norms) <= radius * (1 + 1e-9)


def test_pegasos_checkpoints_and_stopping(moons_problem, tiny_problem):
    from snacks_core.solvers import pegasos

    p = moons_problem
    n = p.Z.shape[0]
    result = pegasos.solve(
        p.Z, p.y, p.lam, max_epochs=2, tol=0.0, random_state=0, checkpoints_per_epoch=4
    )
    np.testing.assert_allclose(result.history["epoch"], np.arange(9) / 4)
    np.testing.assert_array_equal(result.history["iteration"], np.arange(9) * n / 4)
    assert result.stop_reason == "max_epochs" and result.n_iter == 2 * n and result.n_epochs == 2.0
    assert result.history["objective"][0] == pytest.approx(1.0)

    tiny = pegasos.solve(
        tiny_problem.Z,
        tiny_problem.y,
        tiny_problem.lam,
        max_epochs=2,
        tol=0.0,
        checkpoints_per_epoch=100,
    )
    np.testing.assert_array_equal(tiny.history["iteration"], np.arange(61))

    early = pegasos.solve(p.Z, p.y, p.lam, max_epochs=50, tol=0.05, random_state=0)
    assert early.stop_reason == "tol_gap" and early.n_epochs < 50
    assert early.history["gap"][-1] <= 0.05 * early.history["objective"][-1]


@pytest.mark.parametrize("fixture", ["moons_problem", "weighted_problem"])
def test_pegasos_certificate_bounds_the_true_gap(fixture, request):
    """Issue 12: Pegasos stops on Snacks' rule, the certified relative gap; the gap is
    valid at every checkpoint (against LIBLINEAR's F*) and the objective is F(w)."""
    from snacks_core.solvers import pegasos

    p = request.getfixturevalue(fixture)
    rows = []
    result = pegasos.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, max_epochs=30, tol=0.0,
                           random_state=0, callback=lambda row, w: rows.append(w.copy()))
    h = result.history
    assert np.all(np.isfinite(h["gap"])) and np.all(h["gap"] >= 0)
    assert np.all(h["objective"] - h["gap"] <= p.f_star * (1 + 1e-9))
    for objective, w in zip(h["objective"], rows, strict=False):
        assert objective == pytest.approx(reference.objective(w, p.Z, p.y, p.lam, p.sample_weight),
                                          rel=1e-9)
    # The certificate closes as Pegasos converges, if slowly (no dual-ascent polish here).
    assert h["gap"][-1] <= h["gap"][1] / 5


@pytest.mark.parametrize(
    "options", [{"max_epochs": 0}, {"max_epochs": 2.5}, {"checkpoints_per_epoch": 0},
                {"tol": -1.0}]
)
def test_pegasos_bad_options(options):
    """Refused once, at the boundary (check_solver_params): Pegasos counts whole epochs."""
    budget = {"max_epochs": 10, "tol": 1e-3}
    solver_options = {k: v for k, v in options.items() if k not in budget}
    budget.update({k: v for k, v in options.items() if k in budget})
    [name] = options
    with pytest.raises(ValueError, match=f"'{name}' parameter of solver='pegasos'"):
        check_solver_params("pegasos", **budget, solver_options=solver_options)


# ------------------------------------------------------------------------------- LIBLINEAR


def test_liblinear_stop_reasons(moons_problem):
    from snacks_core.solvers import liblinear

    p = moons_problem
    converged = liblinear.solve(p.Z, p.y, p.lam, random_state=0)
    h = converged.history
    assert converged.stop_reason == "tol_gap" and converged.n_iter < 1000
    assert h["gap"][-1] <= 1e-4 * h["objective"][-1]
    truncated = liblinear.solve(p.Z, p.y, p.lam, max_epochs=2, tol=1e-12, random_state=0)
    assert truncated.stop_reason == "max_epochs" and truncated.n_epochs == 2
    # w_0 = 0 and w_1 certified by the two sweeps, then the final w_2 (certified apart).
    np.testing.assert_array_equal(truncated.history["iteration"], [0, 1, 2])
    assert truncated.n_iter == 2


def test_liblinear_history_is_one_certified_checkpoint_per_outer_iteration(weighted_problem):
    """Issue 12: LIBLINEAR records F and a certified gap per outer iteration (a curve, not a
    dot); its certificate bounds the true excess, its dual rises, and it ends where
    sklearn's LinearSVC (the same method) ends."""
    from sklearn.svm import LinearSVC

    from snacks_core.solvers import liblinear

    p = weighted_problem
    rows = []
    result = liblinear.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, tol=1e-7,
                             max_epochs=5000, random_state=0,
                             callback=lambda row, w: rows.append(w.copy()))
    h = result.history
    n_checkpoints = len(h["objective"])
    assert result.stop_reason == "tol_gap" and n_checkpoints >= 5
    np.testing.assert_array_equal(h["iteration"], np.arange(n_checkpoints))
    np.testing.assert_array_equal(h["epoch"], np.arange(1, n_checkpoints + 1))
    for objective, w in zip(h["objective"], rows, strict=False):
        assert objective == pytest.approx(reference.objective(w, p.Z, p.y, p.lam, p.sample_weight),
                                          rel=1e-10)
    assert h["objective"][0] == pytest.approx(np.mean(p.sample_weight))
    assert np.all(h["objective"] - h["gap"] <= p.f_star * (1 + 1e-9))
    assert np.all(np.diff(h["objective"] - h["gap"]) >= -1e-12)
    # The LIBLINEAR oracle: same problem, same method.
    model = LinearSVC(C=lam_to_C(p.lam, p.Z.shape[0]), loss="hinge", fit_intercept=False,
                      tol=1e-10, max_iter=100000, random_state=0)
    model.fit(p.Z, p.y, sample_weight=p.sample_weight)
    f_sklearn = reference.objective(model.coef_.ravel(), p.Z, p.y, p.lam, p.sample_weight)
    assert h["objective"][-1] == pytest.approx(f_sklearn, rel=1e-6)
    np.testing.assert_allclose(result.coef, model.coef_.ravel(), rtol=1e-2,
                               atol=1e-2 * np.abs(model.coef_).max())
    # The returned α is LIBLINEAR's: in the box [0, C s_i], with w = Σ α_i y_i z_i.
    alpha = result.info["dual_coef"]
    assert np.all(alpha >= 0) and np.all(
        alpha <= lam_to_C(p.lam, p.Z.shape[0]) * p.sample_weight * (1 + 1e-12)
    )


# ---------------------------------------------------------------------- exact kernel (LIBSVM)

KERNELS = {
    "rbf": ({"gamma": 2.0}, "rbf", lambda A, B: rbf_kernel(A, B, gamma=2.0)),
    "polynomial": ({"gamma": 0.5, "degree": 3, "coef0": 1.0}, "poly",
                   lambda A, B: polynomial_kernel(A, B, degree=3, gamma=0.5, coef0=1.0)),
    "linear": ({"gamma": 1.0}, "linear", lambda A, B: linear_kernel(A, B)),
    "laplacian": ({"gamma": 1.5}, None, lambda A, B: laplacian_kernel(A, B, gamma=1.5)),
}


def _sklearn_svc(kernel, X, y, lam, sample_weight=None):
    params, native, oracle = KERNELS[kernel]
    kernel_params = {k: v for k, v in params.items() if native in ("rbf", "poly")}
    model = SVC(C=lam_to_C(lam, len(y)), kernel=native or oracle, **kernel_params)
    return model.fit(X, y, sample_weight=sample_weight)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_libsvm_matches_svc(kernel, weighted, kernel_data):
    from snacks_core.solvers import libsvm
    X, y = kernel_data
    X_train, y_train, X_test, y_test = X[:200], y[:200], X[200:], y[200:]
    lam = 1e-3
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=200) if weighted else None
    params, _, oracle = KERNELS[kernel]

    result = libsvm.solve(
        X_train,
        y_train,
        lam,
        kernel=kernel,
        sample_weight=weights,
        validation=(X_test, y_test),
        **params,
    )
    support, dual_coef, intercept = result.support, result.coef, result.intercept
    expected = _sklearn_svc(kernel, X_train, y_train, lam, weights)
    decision = oracle(X_test, X_train[support]) @ dual_coef + intercept
    np.testing.assert_allclose(decision, expected.decision_function(X_test), rtol=1e-7, atol=1e-7)
    np.testing.assert_array_equal(np.where(decision > 0, 1.0, -1.0), expected.predict(X_test))

    train_decision = oracle(X_train, X_train[support]) @ dual_coef + intercept
    K_sv = oracle(X_train[support], X_train[support])
    objective = reference.kernel_svm_objective(
        train_decision, dual_coef, K_sv, y_train, lam, weights
    )
    np.testing.assert_allclose(result.history["objective"], [objective], rtol=1e-8)
    assert -1e-9 <= result.history["gap"][0] <= 1e-3 * objective
    assert result.history["validation_error"][0] == pytest.approx(
        np.mean(expected.predict(X_test) != y_test)
    )
    assert result.stop_reason == "converged" and result.n_iter > 0


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_libsvm_sparse_input_and_gamma_rule(kernel, kernel_data):
    import scipy.sparse as sp

    from snacks_core.solvers import libsvm

    X, y = kernel_data
    dense = libsvm.solve(X, y, 1e-3, kernel=kernel, gamma="scale")
    sparse = libsvm.solve(sp.csr_matrix(X), y, 1e-3, kernel=kernel, gamma="scale")
    np.testing.assert_array_equal(dense.support, sparse.support)
    np.testing.assert_allclose(dense.coef, sparse.coef, rtol=1e-6, atol=1e-9)
    if kernel == "rbf":
        expected = SVC(C=lam_to_C(1e-3, len(y)), gamma="scale").fit(X, y)
        np.testing.assert_array_equal(dense.support, expected.support_)
        np.testing.assert_allclose(dense.coef, expected.dual_coef_.ravel(), rtol=1e-9)


def test_libsvm_bad_input(kernel_data):
    from snacks_core.solvers import libsvm
    X, y = kernel_data
    with pytest.raises(ValueError, match="(?i)unknown kernel"):
        libsvm.solve(X, y, 1e-3, kernel="sigmoid", gamma=1.0)
    for gamma in (0.0, -1.0, np.nan, "median"):
        with pytest.raises(ValueError, match="gamma"):
            libsvm.solve(X, y, 1e-3, gamma=gamma)
    with pytest.raises(ValueError):
        libsvm.solve(X, y, 0.0, gamma=1.0)
    with pytest.raises(ValueError):
        libsvm.solve(X, (y > 0).astype(float), 1e-3, gamma=1.0)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError):
        libsvm.solve(X_nan, y, 1e-3, gamma=1.0)
    n = 17_000
    with pytest.raises(ValueError, match="GiB"):
        libsvm.solve(
            np.zeros((n, 1)),
            np.where(np.arange(n) % 2, 1.0, -1.0),
            1e-3,
            kernel="laplacian",
            gamma=1.0,
        )


def test_libsvm_max_iter(kernel_data):
    from snacks_core.solvers import libsvm
    X, y = kernel_data
    result = libsvm.solve(X, y, 1e-4, gamma=5.0, max_iter=3)
    assert result.stop_reason == "max_iter" and result.n_iter == 3


# ---------------------------------------------------------------------------------- Snacks


def test_snacks_needs_fewer_epochs_than_pegasos(moons_problem):
    from snacks_core.solvers import pegasos, snacks

    p = moons_problem

    def epochs_to_reach(module, **options):
        result = module.solve(p.Z, p.y, p.lam, max_epochs=100, random_state=0, **options)
        excess = (result.history["objective"] - p.f_star) / p.f_star
        reached = np.flatnonzero(excess <= 1e-2)
        return result.history["epoch"][reached[0]] if reached.size else np.inf

    # ASSG alone (the paper's claim), and with its dual-ascent polish.
    assert (epochs_to_reach(snacks, tol=0.0, options=snacks.SnacksOptions(polish=False))
            < epochs_to_reach(pegasos, tol=0.0))
    assert epochs_to_reach(snacks, tol=0.0) < epochs_to_reach(pegasos, tol=0.0)


def test_snacks_runs_the_papers_fixed_schedule(weighted_problem):
    """Issue 12: the paper's Algorithm 1 (K stages of a fixed length T = n, fixed η₀ and D₀,
    both divided by ω after each stage) is ``stage_growth=1`` with ``max_epochs=K``: the
    stage outputs are those of the plain-Python Algorithm 1 on the rows the solver draws
    (oracle: tests/reference.py), so the app can race it against the default schedule."""
    from snacks_core.solvers import snacks
    from snacks_core.solvers.snacks import AssgSchedule, SnacksOptions

    p = weighted_problem
    n, K, seed, eta0, radius0 = p.Z.shape[0], 6, 7, 0.05, 5.0
    seen = []
    result = snacks.solve(p.Z, p.y, p.lam, sample_weight=p.sample_weight, max_epochs=K, tol=0.0,
                          random_state=seed, callback=lambda row, w: seen.append(w.copy()),
                          options=SnacksOptions(polish=False, schedule=AssgSchedule(
                              eta0=eta0, radius0=radius0, stage_growth=1.0)))
    assert result.stop_reason == "max_epochs" and result.n_epochs == K
    rng = np.random.default_rng(seed)
    rows = [rng.integers(0, n, size=n) for _ in range(K)]
    stages = reference.assg_reference(p.Z, p.y, p.lam, rows, eta0, radius0,
                                      sample_weight=p.sample_weight)
    # One checkpoint per stage end (epochs 1..K after the start), each the stage's average.
    np.testing.assert_array_equal(result.history["epoch"][1:K + 1], np.arange(1, K + 1))
    for w, stage in zip(seen[1:K + 1], stages, strict=False):
        np.testing.assert_allclose(w, stage["average"], rtol=1e-10,
                                   atol=1e-10 * max(1.0, np.abs(stage["average"]).max()))


def test_registry_declares_every_solver_and_each_returns_the_same_result_type(kernel_data):
    """Issue 11: one result type for every solver of the registry (intercept and support for
    the kernel solvers, whose model is checked against LIBSVM's predictions)."""
    from snacks_core.kernels.operators import build_operator
    from snacks_core.solvers import EMBEDDED_SOLVERS, REGISTRY, SOLVERS

    X, y = kernel_data
    lam = 1e-3
    assert SOLVERS == tuple(REGISTRY)
    assert set(EMBEDDED_SOLVERS) == {n for n, s in REGISTRY.items() if s.input == "embedding"}
    expected = _sklearn_svc("rbf", X, y, lam).predict(X)
    Z = rbf_kernel(X, X[:40], gamma=1.0)
    for name, entry in REGISTRY.items():
        if entry.input == "embedding":
            result = entry.solve(Z, y, lam, max_epochs=5, random_state=0)
            assert result.support is None and result.intercept == 0.0
            assert result.coef.shape == (Z.shape[1],)
        else:
            first = X if entry.input == "data" else build_operator(
                X, representation="dense", gamma=1.0)
            options = {"kernel": "rbf", "gamma": 1.0} if entry.input == "data" else {}
            result = entry.solve(first, y, lam, **options)
            assert result.support.dtype == np.int64 and result.coef.shape == result.support.shape
            decision = (rbf_kernel(X, X[result.support], gamma=1.0) @ result.coef
                        + result.intercept)
            assert np.mean(np.where(decision > 0, 1.0, -1.0) == expected) >= 0.98, name
        assert isinstance(result, SolverResult) and set(result.history) == set(HISTORY_COLUMNS)
        assert set(result.timings) == {"solve", "checkpoints"}
        assert result.timings["solve"] == result.history["time"][-1] > 0.0
        assert result.n_iter >= 1 and result.stop_reason in STOP_REASONS


def test_a_solver_is_added_by_one_registry_line(monkeypatch):
    """Issue 11: a new solver needs its module and one registry entry; the estimator and the
    sweeps find it there (oracle: LinearSVC on the same embedding, hinge loss, no bias)."""
    from sklearn.svm import LinearSVC

    from snacks_core import SnacksClassifier
    from snacks_core.solvers import REGISTRY, Solver

    def solve(Z, y, lam, *, sample_weight=None, max_epochs=50, tol=1e-3, random_state=None,
              validation=None, callback=None):
        model = LinearSVC(C=lam_to_C(lam, Z.shape[0]), loss="hinge", fit_intercept=False,
                          tol=1e-8, max_iter=100_000).fit(Z, y, sample_weight=sample_weight)
        w = model.coef_.ravel()
        history = {name: np.array([np.nan]) for name in HISTORY_COLUMNS}
        history.update(iteration=np.array([1.0]), time=np.array([0.0]),
                       objective=np.array([primal_objective(w, Z, y, lam, sample_weight)]))
        return SolverResult(coef=w, history=history, n_iter=1, n_epochs=np.nan,
                            stop_reason="converged")

    monkeypatch.setitem(REGISTRY, "linear_svc", Solver(solve))
    X, y01 = make_moons_data()
    model = SnacksClassifier(solver="linear_svc", n_components=30, lam=1e-3,
                             random_state=0).fit(X, y01)
    Z = model.embedding_.transform(X)
    oracle = LinearSVC(C=lam_to_C(1e-3, len(y01)), loss="hinge", fit_intercept=False, tol=1e-8,
                       max_iter=100_000).fit(Z, np.where(y01 > 0, 1.0, -1.0))
    np.testing.assert_allclose(model.coef_.ravel(), oracle.coef_.ravel(), rtol=1e-5,
                               atol=1e-5 * np.abs(oracle.coef_).max())
    assert model.stop_reasons_ == ["converged"]


def make_moons_data():
    from sklearn.datasets import make_moons

    return make_moons(300, noise=0.2, random_state=0)


def test_paper_lambda_converts_to_ours(weighted_problem):
    """Issue 12: the Snacks paper minimises hinge + (λ_paper/2)‖w‖² (its subgradient λw −
    y_i z_i); ours is hinge + λ‖w‖², so λ = λ_paper/2 gives the paper's model (oracle:
    LinearSVC at the paper's C = 1/(n λ_paper))."""
    from sklearn.svm import LinearSVC

    from snacks_core.solvers import liblinear
    from snacks_core.solvers.objective import paper_lam_to_lam

    p = weighted_problem
    lam_paper = 2e-2
    oracle = LinearSVC(C=1.0 / (p.Z.shape[0] * lam_paper), loss="hinge", fit_intercept=False,
                       tol=1e-10, max_iter=200_000, random_state=0).fit(p.Z, p.y)
    ours = liblinear.solve(p.Z, p.y, paper_lam_to_lam(lam_paper), tol=1e-9, max_epochs=100_000)
    np.testing.assert_allclose(ours.coef, oracle.coef_.ravel(), rtol=1e-4,
                               atol=1e-4 * np.abs(oracle.coef_).max())


# ------------------------------------------------ declared stop reasons, declared parameters


def _assert_stop_reason_agrees(result, max_epochs=None, tol=None, max_iter=None):
    """The stop reason is a declared one, and the history shows the rule that ended the run."""
    h = result.history
    assert result.stop_reason in STOP_REASONS
    if result.stop_reason == TOL_GAP:
        assert h["gap"][-1] <= tol * h["objective"][-1]
    elif result.stop_reason == MAX_EPOCHS:
        # The budget is spent: no room is left for another epoch (or polishing sweep).
        assert result.n_epochs > max_epochs - 1
    elif result.stop_reason == MAX_ITER:
        assert result.n_iter == max_iter


# The stop reason of each registry solver on ``kernel_data`` with a budget that ends it first
# ("tight") and with one that leaves its own tolerance to end it ("generous").
EXPECTED_STOP = {
    "snacks": (MAX_EPOCHS, TOL_GAP),
    "pegasos": (MAX_EPOCHS, TOL_GAP),
    "liblinear": (MAX_EPOCHS, TOL_GAP),
    "smoothed_newton": (MAX_EPOCHS, TOL_GAP),
    "libsvm": (MAX_ITER, CONVERGED),
    "admm": (MAX_ITER, TOL_GAP),
}


def test_every_registry_solver_has_an_expected_stop_reason():
    assert set(EXPECTED_STOP) == set(REGISTRY)
    assert {reason for pair in EXPECTED_STOP.values() for reason in pair} <= STOP_REASONS


@pytest.mark.parametrize("generous", [False, True], ids=["tight", "generous"])
@pytest.mark.parametrize("name", sorted(EXPECTED_STOP))
def test_every_solver_stops_for_a_declared_reason(name, generous, kernel_data):
    from snacks_core.kernels.operators import build_operator
    from snacks_core.solvers import admm

    X, y = kernel_data
    lam, entry = 1e-3, REGISTRY[name]
    if entry.input == "embedding":
        max_epochs, tol = (1000, 3e-2) if generous else (1, 1e-12)
        result = entry.solve(rbf_kernel(X, X[:40], gamma=1.0), y, lam, max_epochs=max_epochs,
                             tol=tol, random_state=0)
        _assert_stop_reason_agrees(result, max_epochs=max_epochs, tol=tol)
    elif entry.input == "data":
        result = entry.solve(X, y, lam, kernel="rbf", gamma=1.0,
                             **({} if generous else {"max_iter": 3}))
        _assert_stop_reason_agrees(result, max_iter=3)
    else:
        operator = build_operator(X, representation="dense", gamma=1.0)
        options = {} if generous else {"max_iter": 3, "tol": 1e-12}
        result = entry.solve(operator, y, lam, **options)
        _assert_stop_reason_agrees(result, tol=options.get("tol", admm.DEFAULT_TOL), max_iter=3)
    assert result.stop_reason == EXPECTED_STOP[name][generous]


def _finite(v):
    """A finite real number (a bool is one, as for scikit-learn)."""
    return isinstance(v, Real) and math.isfinite(v)


def _whole(v, low, floats=False):
    """An integer (never a bool) ≥ low; with ``floats``, a float of integral value too."""
    if isinstance(v, bool):
        return False
    whole = isinstance(v, Integral) or (floats and _finite(v) and float(v).is_integer())
    return whole and v >= low


# What the solvers' docstrings (and SnacksClassifier's) promise to accept, finite numbers
# only: the oracle of check_solver_params, written from the documentation rather than from
# the registry.
DOCUMENTED = {
    ("snacks", "max_epochs"): lambda v: _finite(v) and v > 0,
    ("snacks", "tol"): lambda v: _finite(v) and v >= 0,
    ("snacks", "omega"): lambda v: _finite(v) and v > 1,
    ("snacks", "stage_epochs"): lambda v: _finite(v) and v > 0,
    ("snacks", "stage_growth"): lambda v: v is None or (_finite(v) and v >= 1),
    ("snacks", "eta0"): lambda v: v is None or (_finite(v) and v > 0),
    ("snacks", "radius0"): lambda v: v is None or (_finite(v) and v > 0),
    ("snacks", "n_iter_no_change"): lambda v: v is None or _whole(v, 1),
    ("pegasos", "max_epochs"): lambda v: _whole(v, 1, floats=True),
    ("pegasos", "tol"): lambda v: _finite(v) and v >= 0,
    ("pegasos", "checkpoints_per_epoch"): lambda v: _whole(v, 1, floats=True),
    ("liblinear", "max_epochs"): lambda v: _whole(v, 1, floats=True),
    ("liblinear", "tol"): lambda v: _finite(v) and v >= 0,
    ("smoothed_newton", "max_epochs"): lambda v: _finite(v) and v > 0,
    ("smoothed_newton", "tol"): lambda v: _finite(v) and v >= 0,
    ("smoothed_newton", "alpha0"): lambda v: _finite(v) and v > 0,
    ("smoothed_newton", "alpha_min"): lambda v: v is None or (_finite(v) and v > 0),
    ("smoothed_newton", "lam_l1"): lambda v: v is None or (_finite(v) and v >= 0),
    ("libsvm", "tol"): lambda v: _finite(v) and v > 0,
    ("libsvm", "max_iter"): lambda v: _whole(v, -1),
    ("libsvm", "cache_size"): lambda v: _finite(v) and v > 0,
    ("admm", "max_iter"): lambda v: _whole(v, 1),
    ("admm", "tol"): lambda v: _finite(v) and v >= 0,
    ("admm", "relaxation"): lambda v: _finite(v) and 0 < v < 2,
    ("admm", "checkpoint_every"): lambda v: _whole(v, 1),
    ("admm", "beta"): lambda v: v is None or (_finite(v) and v > 0),
}

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 5), st.floats(),
    st.sampled_from([0.5, 1.0, 1.5, 2.0, 20.0, np.float64(3.0), np.int64(4), np.inf, -np.inf,
                     np.nan, "3"]),
)


@settings(max_examples=400, deadline=None)
@given(case=st.sampled_from(sorted(DOCUMENTED)), value=VALUES)
def test_check_solver_params_follows_the_documented_constraints(case, value):
    name, param = case
    budget, options = {"max_epochs": 10, "tol": 1e-3}, {}
    if REGISTRY[name].input == "embedding" and param in budget:
        budget[param] = value
    else:
        options[param] = value
    if DOCUMENTED[case](value):
        check_solver_params(name, **budget, solver_options=options)
    else:
        with pytest.raises(ValueError, match=f"'{param}' parameter of solver='{name}'"):
            check_solver_params(name, **budget, solver_options=options)


def test_check_solver_params_refuses_what_solve_does_not_take():
    with pytest.raises(ValueError, match=r"\['omegaa'\] are not options of solver='snacks'.*"
                                         r"'omega'"):
        check_solver_params("snacks", max_epochs=10, tol=1e-3, solver_options={"omegaa": 2.0})
    # What the caller passes itself is no option either.
    with pytest.raises(ValueError, match=r"\['tol'\] are not options of solver='pegasos'"):
        check_solver_params("pegasos", max_epochs=10, tol=1e-3, solver_options={"tol": 1e-3})
    with pytest.raises(ValueError, match=r"\['gamma'\] are not options of solver='libsvm'"):
        check_solver_params("libsvm", max_epochs=10, tol=1e-3, solver_options={"gamma": 1.0})
    with pytest.raises(ValueError, match="unknown solver 'sgd'"):
        check_solver_params("sgd", max_epochs=10, tol=1e-3, solver_options=None)


def test_check_solver_params_accepts_what_the_solvers_document():
    # ADMM and LIBSVM take their budget and tolerance from solver_options (and ADMM the
    # operator's options): the estimator's max_epochs and tol are not theirs to check.
    check_solver_params("admm", max_epochs=-1, tol=-1, solver_options={
        "tol": 1e-2, "max_iter": 10, "relaxation": 1.0, "checkpoint_every": 2,
        "representation": "dense", "beta": 1.0, "hss_options": {"leaf_size": 32}})
    check_solver_params("libsvm", max_epochs=-1, tol=-1, solver_options={"max_iter": -1})
    check_solver_params("snacks", max_epochs=2.5, tol=0.0, solver_options={
        "w0": np.zeros(3), "stage_epochs": 3.0, "n_iter_no_change": 5, "penalty": "l1",
        "polish": False, "n_jobs": 2, "callback": print})
    check_solver_params("smoothed_newton", max_epochs=1e6, tol=0,
                        solver_options={"penalty": "l1+l2", "lam_l1": 1e-3})
    # The command line passes budgets as floats.
    check_solver_params("liblinear", max_epochs=20.0, tol=1e-4, solver_options=None)


def test_registry_constraints_name_parameters_of_the_solvers():
    from snacks_core.kernels.operators import build_operator

    for name, entry in REGISTRY.items():
        accepted = set(inspect.signature(entry.solve).parameters) | entry.option_keywords
        if entry.input == "operator":
            accepted |= set(inspect.signature(build_operator).parameters)
        assert set(entry.constraints) <= accepted, name


def test_a_new_solver_gets_the_estimators_budget_constraints(monkeypatch):
    from snacks_core.solvers import Solver

    def solve(Z, y, lam, *, sample_weight=None, max_epochs=50, tol=1e-3, random_state=None,
              validation=None, callback=None, its_option=1):
        raise AssertionError("not called")

    monkeypatch.setitem(REGISTRY, "new_solver", Solver(solve))
    check_solver_params("new_solver", max_epochs=0.5, tol=0.0, solver_options={"its_option": 2})
    with pytest.raises(ValueError, match="'max_epochs' parameter of solver='new_solver'"):
        check_solver_params("new_solver", max_epochs=0, tol=0.0, solver_options=None)
    with pytest.raises(ValueError, match="'tol' parameter of solver='new_solver'"):
        check_solver_params("new_solver", max_epochs=1, tol=-1.0, solver_options=None)
