"""ADMM on the dual kernel SVM against LIBSVM (sklearn's SVC) and dense oracles."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_moons
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

import reference
from snacks_core import NystromEmbedding, SnacksClassifier
from snacks_core.kernels import operators
from snacks_core.solvers import EXACT_SOLVERS, admm, check_solver_params
from snacks_core.solvers.base import HISTORY_COLUMNS
from snacks_core.solvers.objective import lam_to_C

GAMMA = 2.0
LAM = 1e-3


@pytest.fixture(scope="module")
def data():
    X, y01 = make_moons(1500, noise=0.25, random_state=3)
    y = np.where(y01 > 0, 1.0, -1.0)
    return X[:1000], y[:1000], X[1000:], y[1000:]


@pytest.fixture(scope="module")
def dense(data):
    return operators.DenseKernel(data[0], beta=1.0, gamma=GAMMA)


def svc_dual(model, K, y, lam):
    """D(α) = 2λ Σ α_i − λ (y∘α)ᵀ K (y∘α) of a fitted SVC (LIBSVM's dual scaled by 2λ)."""
    coef = np.zeros(len(y))
    coef[model.support_] = model.dual_coef_.ravel()
    return 2 * lam * np.abs(coef).sum() - lam * coef @ K @ coef


def full(result, n):
    """The dual coefficients of a kernel solver's result on all n rows."""
    coef = np.zeros(n)
    coef[result.support] = result.coef
    return coef


def test_default_beta_follows_the_paper():
    assert admm.default_beta(50_000) == 100.0
    assert admm.default_beta(10_000) == 100.0
    assert admm.default_beta(500_000) == 1000.0
    assert admm.default_beta(5_000_000) == 10_000.0
    assert admm.default_beta(2_000) == 10.0
    assert admm.default_beta(300) == 1.0


@pytest.mark.parametrize("weighted", [False, True])
def test_dense_agrees_with_svc(weighted, data, dense):
    X, y, X_test, _ = data
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=1000) if weighted else None
    model = SVC(C=lam_to_C(LAM, 1000), gamma=GAMMA, tol=1e-8).fit(X, y, sample_weight=weights)
    K = rbf_kernel(X, X, gamma=GAMMA)
    result = admm.solve(dense, y, LAM, sample_weight=weights, max_iter=1000, tol=1e-6)
    support, dual_coef, intercept = result.support, result.coef, result.intercept
    expected = svc_dual(model, K, y, LAM)
    dual = result.history["objective"][-1] - result.history["gap"][-1]
    assert abs(dual - expected) <= 1e-3 * abs(expected)
    decision = rbf_kernel(X_test, X[support], gamma=GAMMA) @ dual_coef + intercept
    assert np.mean(np.where(decision > 0, 1.0, -1.0) == model.predict(X_test)) >= 0.99
    assert intercept == pytest.approx(model.intercept_[0], abs=1e-2)
    # The box holds and the labels' constraint nearly: z ∈ [0, C s], yᵀz ≈ 0.
    z = np.abs(dual_coef)
    upper = lam_to_C(LAM, 1000) * (np.ones(1000) if weights is None else weights)[support]
    assert np.all(z <= upper + 1e-12)
    assert abs(np.sum(dual_coef)) <= 1e-3 * z.sum()


def test_history_objective_and_certificate(data, dense):
    X, y, X_test, y_test = data
    rows = []
    result = admm.solve(
        dense, y, LAM, max_iter=20, tol=0.0, checkpoint_every=1, validation=(X_test, y_test),
        callback=lambda row, coef: rows.append((row, coef.copy())))
    support, dual_coef, intercept = result.support, result.coef, result.intercept
    h = result.history
    assert set(h) == set(HISTORY_COLUMNS) and len(h["objective"]) == 20 == len(rows)
    np.testing.assert_array_equal(h["iteration"], np.arange(1, 21))
    assert np.all(np.isnan(h["epoch"])) and np.all(np.diff(h["time"]) >= 0)
    assert result.n_iter == 20 and result.stop_reason == "max_iter"
    # The objective is the kernel SVM's primal F at the returned model (oracle formula).
    K = rbf_kernel(X, X, gamma=GAMMA)
    coef = full(result, 1000)
    F = reference.kernel_svm_objective(
        K @ coef + intercept, dual_coef, K[np.ix_(support, support)], y, LAM
    )
    assert h["objective"][-1] == pytest.approx(F, rel=1e-9)
    np.testing.assert_array_equal(rows[-1][1], coef)
    # The gap certifies: F − gap ≤ F* (LIBSVM's optimum), and it shrinks.
    model = SVC(C=lam_to_C(LAM, 1000), gamma=GAMMA, tol=1e-8).fit(X, y)
    f_star = svc_dual(model, K, y, LAM)
    assert np.all(h["objective"] - h["gap"] <= f_star * (1 + 1e-9))
    assert np.all(h["objective"] >= f_star * (1 - 1e-9))
    assert h["gap"][-1] < h["gap"][0]
    decision = rbf_kernel(X_test, X[support], gamma=GAMMA) @ dual_coef + intercept
    assert h["validation_error"][-1] == pytest.approx(
        np.mean(np.where(decision > 0, 1.0, -1.0) != y_test)
    )


@pytest.mark.parametrize("relaxation", [1.0, 1.6])
def test_default_stop_is_the_certified_gap(relaxation, data, dense):
    """Issue 12: the default stop is a certified relative gap, not a fixed count; the gap
    is honest against LIBSVM's optimum, and over-relaxation gets there sooner."""
    X, y, _, _ = data
    K = rbf_kernel(X, X, gamma=GAMMA)
    f_star = svc_dual(SVC(C=lam_to_C(LAM, 1000), gamma=GAMMA, tol=1e-8).fit(X, y), K, y, LAM)
    result = admm.solve(dense, y, LAM, relaxation=relaxation)
    h = result.history
    assert result.stop_reason == "tol_gap" and result.n_iter < admm.DEFAULT_MAX_ITER
    assert h["gap"][-1] <= admm.DEFAULT_TOL * h["objective"][-1]
    assert 0.0 <= h["objective"][-1] - f_star <= h["gap"][-1] + 1e-12
    np.testing.assert_array_equal(h["iteration"] % admm.DEFAULT_CHECKPOINT_EVERY, 0)
    tight = admm.solve(dense, y, LAM, tol=1e-4, relaxation=relaxation)
    assert (
        tight.stop_reason == "tol_gap" and tight.history["objective"][-1] - f_star <= 1e-4 * f_star
    )
    assert set(result.info) >= {"beta", "relaxation", "solve_time", "checkpoint_time"}
    if relaxation == 1.6:
        plain = admm.solve(dense, y, LAM, tol=1e-4, relaxation=1.0)
        assert tight.n_iter < plain.n_iter


def test_checkpoint_uses_one_product(data, dense):
    """A checkpoint costs one block product with K̃ (two columns), never two products."""
    _, y, _, _ = data

    class Counting(CountingOperator):
        products = 0

        def matvec(self, v):
            Counting.products += 1
            return self.operator.matvec(v)

    result = admm.solve(Counting(dense), y, LAM, max_iter=20, tol=0.0, checkpoint_every=5)
    assert len(result.history["objective"]) == 4 and Counting.products == 4


def test_nystrom_representation_is_the_linear_kernel_svm_on_the_embedding(data):
    X, y, X_test, _ = data
    embedding = NystromEmbedding(gamma=GAMMA, n_components=60, random_state=0).fit(X)
    Z = embedding.transform(X)
    operator = operators.NystromKernel(embedding, Z, beta=1.0)
    b = np.random.default_rng(0).normal(size=1000)
    np.testing.assert_allclose(operator.matvec(b), Z @ (Z.T @ b), rtol=1e-12)
    np.testing.assert_allclose(
        operator.solve(b), np.linalg.solve(Z @ Z.T + np.eye(1000), b), rtol=1e-8
    )
    result = admm.solve(operator, y, LAM, max_iter=1500, tol=1e-6)
    model = SVC(C=lam_to_C(LAM, 1000), kernel="linear", tol=1e-8).fit(Z, y)
    expected = svc_dual(model, Z @ Z.T, y, LAM)
    dual = result.history["objective"][-1] - result.history["gap"][-1]
    assert abs(dual - expected) <= 1e-3 * abs(expected)
    w = operator.primal_weights(full(result, 1000))
    agreement = np.mean(
        np.sign(embedding.transform(X_test) @ w + result.intercept)
        == model.predict(embedding.transform(X_test))
    )
    assert agreement >= 0.99


def test_hss_at_tight_tolerance_agrees_with_dense(data, dense):
    X, y, X_test, _ = data
    hss = operators.build_operator(X, representation="hss", beta=1.0, gamma=GAMMA, random_state=0,
                              hss_options={"tol": 1e-8, "max_rank": 200, "leaf_size": 64,
                                           "basis": "interpolative"})
    exact = admm.solve(dense, y, LAM, max_iter=300, tol=0.0)
    approx = admm.solve(hss, y, LAM, max_iter=300, tol=0.0)
    coef_exact, coef_approx = full(exact, 1000), full(approx, 1000)
    assert np.linalg.norm(coef_approx - coef_exact) <= 1e-4 * np.linalg.norm(coef_exact)
    assert approx.intercept == pytest.approx(exact.intercept, abs=1e-4)
    same = (np.sign(hss.decision(X_test, coef_approx) + approx.intercept)
            == np.sign(dense.decision(X_test, coef_exact) + exact.intercept))
    assert np.mean(same) >= 0.999


@pytest.mark.slow
def test_crude_hss_models_predict_with_the_extension_of_k_tilde(data):
    """Issue 12: a converged model fitted on a crude K̃ must not be evaluated with the exact
    kernel (the paper's Algorithm 3): the fit picks K̃'s extension from the hinge on
    training rows, and it predicts far better there (oracle: the test labels)."""
    X, y, X_test, y_test = data
    crude = operators.build_operator(X, representation="hss", beta=1.0, gamma=GAMMA, random_state=0,
                                hss_options={"tol": 0.3, "max_rank": 2, "leaf_size": 32})
    result = admm.solve(crude, y, 1e-6, max_iter=2000)
    intercept = result.intercept
    assert result.stop_reason == "tol_gap" and crude.relative_error > 0.1
    hinge = result.info["evaluation_hinge"]
    assert result.info["evaluation"] == "extension" and hinge["extension"] < hinge["exact"]
    coef = full(result, 1000)
    errors = {e: np.mean(np.sign(crude.decision(X_test, coef, e) + intercept) != y_test)
              for e in ("exact", "extension")}
    assert errors["extension"] <= errors["exact"] - 0.05
    svc = SVC(C=lam_to_C(1e-6, 1000), gamma=GAMMA).fit(X, y)
    assert errors["extension"] <= np.mean(svc.predict(X_test) != y_test) + 0.03
    # The estimator follows the fit's choice.
    model = SnacksClassifier(solver="admm", gamma=GAMMA, lam=1e-6, random_state=0,
                             solver_options={"beta": 1.0, "max_iter": 2000, "hss_options": {
                                 "tol": 0.3, "max_rank": 2, "leaf_size": 32}}).fit(X, y)
    assert 1 - model.score(X_test, y_test) == pytest.approx(errors["extension"], abs=0.01)
    # The recorded validation error is that of the evaluation chosen at each checkpoint.
    validated = admm.solve(crude, y, 1e-6, max_iter=2000, validation=(X_test, y_test))
    assert validated.history["validation_error"][-1] == pytest.approx(errors["extension"])


class CountingOperator:
    """Wraps an operator and counts its solves and their right-hand sides."""

    def __init__(self, operator):
        self.operator, self.n, self.beta = operator, operator.n, operator.beta
        self.solves = self.columns = 0

    def solve(self, b):
        self.solves += 1
        self.columns += 1 if b.ndim == 1 else b.shape[1]
        return self.operator.solve(b)

    def matvec(self, v):
        return self.operator.matvec(v)

    def decision(self, X, coef):
        return self.operator.decision(X, coef)


def test_solve_path_reuses_the_factorization(data, dense):
    _, y, X_test, y_test = data
    lams = np.logspace(-4, -2, 10)
    counting = CountingOperator(dense)
    path = admm.solve_path(counting, y, lams, max_iter=15, tol=0.0, validation=(X_test, y_test))
    # One solve for K̃_β⁻¹e, then one block solve (a column per λ) per iteration.
    assert counting.solves == 1 + 15 and counting.columns == 1 + 10 * 15
    for lam, result in zip(lams, path, strict=False):
        single = admm.solve(dense, y, lam, max_iter=15, tol=0.0, validation=(X_test, y_test))
        np.testing.assert_allclose(full(result, 1000), full(single, 1000), rtol=1e-9, atol=1e-12)
        assert result.intercept == pytest.approx(single.intercept, abs=1e-9)
        np.testing.assert_allclose(
            result.history["objective"], single.history["objective"], rtol=1e-9
        )
        np.testing.assert_array_equal(
            result.history["validation_error"], single.history["validation_error"]
        )
        assert np.abs(result.coef).max() <= lam_to_C(lam, 1000) * (1 + 1e-12)


def test_path_columns_stop_on_their_own_gaps(data, dense):
    _, y, _, _ = data
    path = admm.solve_path(dense, y, [1e-2, 1e-4], max_iter=3000, tol=1e-4)
    for lam, result in zip([1e-2, 1e-4], path, strict=False):
        single = admm.solve(dense, y, lam, max_iter=3000, tol=1e-4)
        assert result.stop_reason == single.stop_reason == "tol_gap"
        assert result.n_iter == single.n_iter == result.history["iteration"][-1]
    assert path[0].n_iter != path[1].n_iter


def test_path_over_C_gives_libsvm_models_per_C(data, dense):
    """Issue 12: under the paper's settings C = 1 and C = 10 gave the same model; the path
    must give, per C, LIBSVM's model (same predictions, objective within the stated gap)."""
    X, y, X_test, _ = data
    n = X.shape[0]
    Cs = np.array([0.1, 1.0, 10.0])
    lams = 1.0 / (2.0 * n * Cs)
    K = rbf_kernel(X, X, gamma=GAMMA)
    path = admm.solve_path(dense, y, lams, tol=1e-3)
    predictions = []
    for C, lam, result in zip(Cs, lams, path, strict=False):
        support, dual_coef, intercept = result.support, result.coef, result.intercept
        model = SVC(C=C, gamma=GAMMA, tol=1e-8).fit(X, y)
        f_star = svc_dual(model, K, y, lam)
        h = result.history
        assert result.stop_reason == "tol_gap" and h["gap"][-1] <= 1e-3 * h["objective"][-1]
        assert h["objective"][-1] - f_star <= h["gap"][-1] + 1e-12
        ours = np.sign(rbf_kernel(X_test, X[support], gamma=GAMMA) @ dual_coef + intercept)
        assert np.mean(ours == model.predict(X_test)) >= 0.98
        assert abs(len(support) - len(model.support_)) <= 0.15 * len(model.support_)
        predictions.append(ours)
    # The models differ per C, as LIBSVM's do.
    assert not np.array_equal(predictions[0], predictions[2])
    assert len(path[0].support) != len(path[2].support)


def test_estimator_dispatch(data):
    X, y, X_test, y_test = data
    assert "admm" in EXACT_SOLVERS
    scores = {}
    for representation in ("dense", "hss", "nystrom"):
        model = SnacksClassifier(
            solver="admm",
            gamma=GAMMA,
            lam=LAM,
            n_components=100,
            random_state=0,
            solver_options={"representation": representation, "beta": 1.0},
        )
        model.fit(X, y, eval_set=(X_test, y_test))
        scores[representation] = model.score(X_test, y_test)
        assert model.history_["validation_error"][-1] == pytest.approx(1 - scores[representation])
        assert model.embedding_time_ > 0 and model.stop_reasons_ == ["tol_gap"]
    reference_score = SVC(C=lam_to_C(LAM, 1000), gamma=GAMMA).fit(X, y).score(X_test, y_test)
    for score in scores.values():
        assert score >= reference_score - 0.01
    # One-vs-rest shares the factorisation; HSS models predict with K̃'s extension.
    X, y = load_iris(return_X_y=True)
    model = SnacksClassifier(
        solver="admm",
        lam=1e-3,
        random_state=0,
        solver_options={"max_iter": 100, "hss_options": {"leaf_size": 32}},
    ).fit(X, y)
    assert model.coef_.shape[0] == 3 and model.score(X, y) >= 0.95
    # Issue 12: the compression achieved is reported with the fit, one per subproblem.
    report = model.solver_info_[0]["compression"]
    assert len(model.solver_info_) == 3 and report["memory_bytes"] > 0
    assert {"relative_error", "target", "target_reached", "ranks_capped"} <= set(report)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda X: operators.DenseKernel(X, beta=0.0, gamma=1.0), "beta"),
        (
            lambda X: operators.build_operator(X, representation="dense", beta=-1.0, gamma=1.0),
            "beta",
        ),
        (
            lambda X: operators.build_operator(X, representation="exact", gamma=1.0),
            "representation",
        ),
        (
            lambda X: operators.build_operator(
                X, representation="dense", gamma=1.0, hss_options={"tol": 1e-3}
            ),
            "hss_options",
        ),
        (
            lambda X: operators.build_operator(
                X, representation="hss", gamma=1.0, hss_options={"tol": 0.0}
            ),
            "tol",
        ),
        (
            lambda X: operators.build_operator(
                X, representation="hss", gamma=1.0, hss_options={"max_rank": 0}
            ),
            "max_rank",
        ),
        (
            lambda X: operators.build_operator(
                X, representation="hss", gamma=1.0, hss_options={"leaf_size": 10**6}
            ),
            "leaf_size",
        ),
    ],
)
def test_bad_operators(build, match, data):
    with pytest.raises(ValueError, match=match):
        build(data[0])


@pytest.mark.parametrize("options", [
    {"max_iter": 0}, {"max_iter": 2.5}, {"max_iter": True}, {"tol": -1.0}, {"tol": np.inf},
    {"relaxation": 2.0}, {"relaxation": 0.0}, {"checkpoint_every": 0}, {"beta": 0.0},
    {"representation": "sparse"}])
def test_bad_solver_options(options):
    """Refused once, at the boundary (solvers.check_solver_params), naming the option."""
    [name] = options
    with pytest.raises(ValueError, match=f"'{name}' parameter of solver='admm'"):
        check_solver_params("admm", max_epochs=50, tol=1e-3, solver_options=options)


def test_bad_solver_input(data, dense):
    _, y, _, _ = data
    with pytest.raises(ValueError):
        admm.solve(dense, y, 0.0)
    with pytest.raises(ValueError):
        admm.solve(dense, (y > 0).astype(float), LAM)
    with pytest.raises(ValueError):
        admm.solve(dense, y[:-1], LAM)
    with pytest.raises(ValueError, match="lams"):
        admm.solve_path(dense, y, [])
    with pytest.raises(ValueError):
        admm.solve_path(dense, y, [1e-3, -1e-3])


def test_dense_refuses_large_n():
    n = 17_000
    with pytest.raises(ValueError, match="GiB"):
        operators.DenseKernel(np.zeros((n, 1)), beta=1.0, gamma=1.0)
