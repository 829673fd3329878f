"""The HSS kernel approximation and its fast solver, against the dense kernel matrix."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from snacks_core.kernels.hss import BASES, HSSKernel, HSSOptions, kernel_expansion


@pytest.fixture(scope="module")
def moons():
    X, _ = make_moons(1000, noise=0.2, random_state=0)
    return X, rbf_kernel(X, X, gamma=2.0)


def dense_of(operator):
    """K̃ as a dense matrix, column by column through the fast product."""
    return operator.matvec(np.eye(operator.n))


@pytest.mark.parametrize("basis", BASES)
def test_error_falls_as_tolerance_tightens(basis, moons):
    X, K = moons
    errors, ranks, memory = [], [], []
    for tol, max_rank in ((1e-2, 10), (1e-4, 30), (1e-8, 120)):
        options = HSSOptions(tol=tol, max_rank=max_rank, leaf_size=64, basis=basis)
        operator = HSSKernel(X, beta=10.0, gamma=2.0, options=options, random_state=0)
        errors.append(np.linalg.norm(dense_of(operator) - K) / np.linalg.norm(K))
        ranks.append(operator.ranks.mean())
        memory.append(operator.nbytes)
    assert errors[0] > errors[1] > errors[2]
    assert ranks[0] < ranks[1] < ranks[2] and memory[0] < memory[2]
    assert errors[2] <= (1e-6 if basis == "interpolative" else 5e-3)


@pytest.mark.parametrize("basis", BASES)
def test_structure_of_the_approximation(basis, moons):
    X, K = moons
    operator = HSSKernel(X, beta=1.0, gamma=2.0,
                         options=HSSOptions(tol=1e-3, max_rank=20, leaf_size=64, basis=basis),
                         random_state=0)
    K_tilde = dense_of(operator)
    np.testing.assert_allclose(K_tilde, K_tilde.T, atol=1e-12)
    # Leaf blocks are the exact kernel.
    leaf = operator.perm[:operator._stop[operator._postorder[0]]]
    np.testing.assert_allclose(K_tilde[np.ix_(leaf, leaf)], K[np.ix_(leaf, leaf)], atol=1e-12)
    # Every node is a contiguous range of the permutation, the leaves no larger than leaf_size.
    assert np.array_equal(np.sort(operator.perm), np.arange(1000))
    sizes = [operator._stop[v] - operator._start[v] for v in operator._postorder
             if operator._children[v] is None]
    assert max(sizes) <= 64 and sum(sizes) == 1000
    if basis == "nystrom":
        # Nyström interpolation makes K̃ positive semi-definite at any tolerance.
        assert np.linalg.eigvalsh(K_tilde)[0] >= -1e-9 * np.linalg.norm(K, 2)


@pytest.mark.parametrize("basis", BASES)
def test_solve_inverts_the_shifted_approximation(basis, moons):
    X, K = moons
    rng = np.random.default_rng(1)
    beta = 0.5
    operator = HSSKernel(X, beta=beta, gamma=2.0,
                         options=HSSOptions(tol=1e-6, max_rank=60, leaf_size=64, basis=basis),
                         random_state=0)
    b = rng.normal(size=1000)
    x = operator.solve(b)
    # Exact for K̃: (K̃ + βI) x = b to rounding.
    np.testing.assert_allclose(operator.matvec(x) + beta * x, b, atol=1e-9 * np.abs(b).max())
    np.testing.assert_allclose(x, np.linalg.solve(dense_of(operator) + beta * np.eye(1000), b),
                               rtol=1e-8, atol=1e-10)
    # Close to the exact kernel's solution at this tolerance.
    exact = np.linalg.solve(K + beta * np.eye(1000), b)
    assert np.linalg.norm(x - exact) / np.linalg.norm(exact) <= (
        2e-3 if basis == "interpolative" else 2e-2
    )
    # Blocks of right-hand sides are solved column by column (to rounding: BLAS takes
    # other paths for blocks).
    B = rng.normal(size=(1000, 3))
    np.testing.assert_allclose(operator.solve(B), np.column_stack([operator.solve(c) for c in B.T]),
                               rtol=1e-9, atol=1e-10)


def test_single_leaf_is_the_dense_kernel(moons):
    X, K = moons
    X, K = X[:200], K[:200, :200]
    operator = HSSKernel(X, beta=2.0, gamma=2.0, options=HSSOptions(leaf_size=200))
    np.testing.assert_allclose(dense_of(operator), K, atol=1e-12)
    b = np.arange(200.0)
    np.testing.assert_allclose(
        operator.solve(b), np.linalg.solve(K + 2.0 * np.eye(200), b), rtol=1e-9
    )


def test_sparse_input_and_other_kernels(moons):
    X, _ = moons
    X = X[:500]
    dense = HSSKernel(X, beta=1.0, kernel="laplacian", gamma=1.0,
                      options=HSSOptions(leaf_size=50, tol=1e-6, max_rank=50), random_state=3)
    sparse = HSSKernel(sp.csr_matrix(X), beta=1.0, kernel="laplacian", gamma=1.0,
                       options=HSSOptions(leaf_size=50, tol=1e-6, max_rank=50), random_state=3)
    v = np.random.default_rng(0).normal(size=500)
    np.testing.assert_allclose(dense.matvec(v), sparse.matvec(v), rtol=1e-9, atol=1e-9)
    K = laplacian_kernel(X, X, gamma=1.0)
    assert np.linalg.norm(dense.matvec(v) - K @ v) <= 3e-2 * np.linalg.norm(K @ v)


def test_memory_grows_linearly(moons):
    X, _ = make_moons(4000, noise=0.2, random_state=0)
    small = HSSKernel(X[:2000], beta=1.0, gamma=2.0,
                      options=HSSOptions(leaf_size=64, max_rank=20), random_state=0)
    large = HSSKernel(X, beta=1.0, gamma=2.0,
                      options=HSSOptions(leaf_size=64, max_rank=20), random_state=0)
    assert 1.6 <= large.nbytes / small.nbytes <= 2.4


def test_kernel_expansion_is_the_exact_decision_function(moons):
    X, _ = moons
    coef = np.zeros(1000)
    coef[::7] = np.random.default_rng(2).normal(size=coef[::7].shape)
    X_new = X[:30] + 0.1
    np.testing.assert_allclose(
        kernel_expansion(
            X_new, X, coef, {"kernel": "rbf", "gamma": 2.0, "degree": 3, "coef0": 1.0}
        ),
        rbf_kernel(X_new, X, gamma=2.0) @ coef,
        rtol=1e-10,
    )
    operator = HSSKernel(X, beta=1.0, gamma=2.0, options=HSSOptions(leaf_size=128), random_state=0)
    np.testing.assert_allclose(
        operator.exact_decision(X_new, coef), rbf_kernel(X_new, X, gamma=2.0) @ coef, rtol=1e-10
    )


@pytest.mark.parametrize("basis", BASES)
def test_model_extends_the_approximation_to_new_rows(basis, moons):
    """On training rows the model is K̃c (exactly for Nyström bases); on new rows it is as
    close to the exact expansion as K̃ is to K; one column per problem gives the same as one
    at a time."""
    X, K = moons
    operator = HSSKernel(X, beta=1.0, gamma=2.0,
                         options=HSSOptions(tol=1e-6, max_rank=60, leaf_size=64, basis=basis),
                         random_state=0)
    coef = np.random.default_rng(3).normal(size=(1000, 2))
    model = operator.model(coef)
    on_training_rows = operator.matvec(coef)
    if basis == "nystrom":
        np.testing.assert_allclose(model.decision(X), on_training_rows, rtol=1e-9, atol=1e-9)
    else:
        # The extension interpolates through the skeleton with the kernel (Nyström) while
        # the training rows use the decomposition's own coefficients.
        assert (np.linalg.norm(model.decision(X) - on_training_rows)
                <= 1e-3 * np.linalg.norm(on_training_rows))
    # Training rows route to their own leaf.
    leaf_of = operator.route(X[operator.perm])
    for node in operator._postorder:
        if operator._children[node] is None:
            assert np.all(leaf_of[operator._start[node]:operator._stop[node]] == node)
    X_new = make_moons(400, noise=0.2, random_state=5)[0]
    exact = rbf_kernel(X_new, X, gamma=2.0) @ coef
    assert np.linalg.norm(model.decision(X_new) - exact) <= 0.05 * np.linalg.norm(exact)
    np.testing.assert_allclose(operator.decision(X_new, coef[:, 1]), model.decision(X_new)[:, 1],
                               rtol=1e-8, atol=1e-9)
    features = model.transform(X_new)
    assert features.shape == (400, model.landmark_indices_.shape[0])
    assert features.getnnz(axis=1).max() <= 64 + 60


def test_exact_evaluation_is_the_kernel_expansion(moons):
    X, _ = moons
    operator = HSSKernel(X, beta=1.0, gamma=2.0, options=HSSOptions(leaf_size=64), random_state=0)
    coef = np.zeros(1000)
    coef[::5] = np.random.default_rng(4).normal(size=200)
    X_new = X[:40] + 0.05
    model = operator.model(coef, "exact")
    np.testing.assert_allclose(model.decision(X_new), rbf_kernel(X_new, X, gamma=2.0) @ coef,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(model.landmark_indices_, np.arange(0, 1000, 5))
    np.testing.assert_allclose(model.transform(X_new) @ model.weights, model.decision(X_new),
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="evaluation"):
        operator.model(coef, "nearest")


def test_ranks_meet_the_target_on_the_sampled_entries():
    """The rank kept is the smallest whose interpolation error on the sampled block is at
    most tol·‖F‖_F (oracle: the error of the interpolative decomposition itself)."""
    from snacks_core.kernels.hss import _interpolation_matrix, _pivoted_qr

    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(80, 2)), rng.normal(size=(300, 2)) + 3.0
    F = rbf_kernel(A, B, gamma=0.5)
    for tol in (1e-2, 1e-4, 1e-6):
        R, pivots, rank, capped = _pivoted_qr(F, tol, 80)
        assert not capped

        def error(k, R=R, pivots=pivots):
            U = _interpolation_matrix(R, pivots, k)
            return np.linalg.norm(F - U @ F[pivots[:k]]) / np.linalg.norm(F)

        assert error(rank) <= tol * (1 + 1e-8)
        if rank > 1:
            assert error(rank - 1) > tol
    R, pivots, rank, capped = _pivoted_qr(F, 1e-12, 3)
    assert rank == 3 and capped


@pytest.mark.parametrize("tol", [1e-2, 1e-3, 1e-4])
def test_nystrom_bases_meet_the_target_accuracy(tol, moons):
    """Issue 12: ranks chosen from a target accuracy give an approximation within a factor
    10 of it (1.3, 2.0 and 8.6 measured; the nested bases compound the blocks' errors;
    oracle: the dense kernel), when max_rank does not cut them."""
    X, K = moons
    operator = HSSKernel(X, beta=1.0, gamma=2.0,
                         options=HSSOptions(tol=tol, max_rank=200, leaf_size=64), random_state=0)
    assert operator.compression["ranks_capped"] == 0
    assert np.linalg.norm(dense_of(operator) - K) / np.linalg.norm(K) <= 10 * tol


def test_unreachable_target_is_reported_with_the_svd_bound():
    """Issue 12: a target the kernel cannot meet within max_rank is reported, not met.

    On 40-dimensional Gaussian data a leaf's off-diagonal block is nearly full rank: its
    SVD (oracle: the best error of any basis of that rank) is far above 1e-4 at rank 10,
    so every basis is capped, the report says the target was not reached and the measured
    error stays above the target; on two moons at the same settings it is reached."""
    X = np.random.default_rng(0).normal(size=(600, 40))
    gamma = 1.0 / 40
    operator = HSSKernel(X, beta=1.0, gamma=gamma,
                         options=HSSOptions(tol=1e-4, max_rank=10, leaf_size=64, error_columns=100),
                         random_state=0)
    leaf = operator._postorder[0]
    rows = operator.perm[operator._start[leaf]:operator._stop[leaf]]
    outside = np.setdiff1d(np.arange(600), rows)
    singular = np.linalg.svd(rbf_kernel(X[rows], X[outside], gamma=gamma), compute_uv=False)
    best = np.sqrt(np.sum(singular[10:] ** 2) / np.sum(singular ** 2))
    assert best > 100 * 1e-4
    report = operator.compression
    assert not report["target_reached"] and report["ranks_capped"] == report["nodes"]
    assert report["relative_error"] > 10 * report["target"]
    moons_X, _ = make_moons(600, noise=0.2, random_state=0)
    reached = HSSKernel(moons_X, beta=1.0, gamma=2.0,
                        options=HSSOptions(tol=1e-2, max_rank=200, leaf_size=64),
                        random_state=0).compression
    assert reached["target_reached"] and reached["ranks_capped"] == 0


def test_compression_report_and_sampled_error(moons):
    X, K = moons
    operator = HSSKernel(X, beta=1.0, gamma=2.0,
                         options=HSSOptions(tol=1e-3, max_rank=30, leaf_size=64, error_columns=200),
                         random_state=0)
    report = operator.compression
    true_error = np.linalg.norm(dense_of(operator) - K) / np.linalg.norm(K)
    assert report["relative_error"] == operator.relative_error
    assert true_error / 2 <= report["relative_error"] <= 2 * true_error
    assert report["memory_bytes"] == operator.nbytes and report["dense_bytes"] == 8 * 1000 ** 2
    assert report["compression_ratio"] == pytest.approx(8e6 / operator.nbytes)
    nonroot = operator.ranks[np.asarray(operator._parent) >= 0]
    assert report["mean_rank"] == pytest.approx(nonroot.mean()) and report["max_rank_reached"] <= 30
    assert report["target"] == 1e-3 and report["error_columns"] == 200
    unmeasured = HSSKernel(X, beta=1.0, gamma=2.0,
                           options=HSSOptions(leaf_size=64, error_columns=0), random_state=0)
    assert np.isnan(unmeasured.relative_error)


@pytest.mark.parametrize("options, match", [
    ({"beta": 0.0}, "beta"),
    ({"beta": -1.0}, "beta"),
    ({"leaf_size": 201}, "leaf_size"),
    ({"leaf_size": 0}, "leaf_size"),
    ({"max_rank": 0}, "max_rank"),
    ({"max_rank": 2.5}, "max_rank must be an integer >= 1, got 2.5"),
    ({"leaf_size": True}, "leaf_size must be an integer >= 1, got True"),
    ({"tol": 0.0}, "tol"),
    ({"tol": -1e-3}, "tol"),
    ({"tol": 1.5}, "tol"),
    ({"n_samples": 0}, "n_samples"),
    ({"basis": "svd"}, "basis"),
    ({"error_columns": -1}, "error_columns"),
    ({"kernel": "sigmoid"}, "kernel"),
])
def test_bad_parameters(options, match, moons):
    X, _ = moons
    fields = {k: v for k, v in options.items() if k in HSSOptions.__dataclass_fields__}
    kwargs = {"beta": 1.0, "gamma": 2.0} | {k: v for k, v in options.items() if k not in fields}
    with pytest.raises(ValueError, match=match):
        HSSKernel(X[:200], options=HSSOptions(**fields), **kwargs)


def test_indefinite_approximation_is_reported(moons):
    X, _ = moons
    with pytest.raises(ValueError, match="not positive definite"):
        HSSKernel(X, beta=1e-8, gamma=2.0,
                  options=HSSOptions(tol=0.5, max_rank=1, leaf_size=32, basis="interpolative"),
                  random_state=0)
