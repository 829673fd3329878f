"""Random Fourier features against the exact rbf and laplacian kernels."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from snacks_core.kernels.random_features import RandomFourierFeatures

KERNELS = {"rbf": rbf_kernel, "laplacian": laplacian_kernel}


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(120, 3))


def relative_error(K, Z):
    return np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_features_reproduce_the_kernel(X, kernel):
    gamma = 0.3
    K = KERNELS[kernel](X, gamma=gamma)
    Z = RandomFourierFeatures(kernel, gamma=gamma, n_components=20000,
                              random_state=0).fit_transform(X)
    assert np.max(np.abs(Z @ Z.T - K)) < 0.06
    assert relative_error(K, Z) < 0.03


@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_error_falls_like_one_over_root_d(X, kernel):
    K = KERNELS[kernel](X, gamma=0.5)
    errors = [np.mean([relative_error(K, RandomFourierFeatures(
        kernel, gamma=0.5, n_components=D, random_state=seed).fit_transform(X))
        for seed in range(5)]) for D in (50, 800)]
    # 16 times more features: about 4 times less error (1/√D), with slack for noise.
    assert 2.5 < errors[0] / errors[1] < 6.5


def test_unbiased_on_average(X):
    K = rbf_kernel(X[:10], gamma=1.0)
    mean = np.mean([(lambda Z: Z @ Z.T)(RandomFourierFeatures(
        gamma=1.0, n_components=50, random_state=seed).fit_transform(X[:10]))
        for seed in range(400)], axis=0)
    assert np.max(np.abs(mean - K)) < 0.03


def test_sparse_input_float32_and_reproducible(X):
    rff = RandomFourierFeatures(gamma=0.2, n_components=64, dtype=np.float32, random_state=3)
    dense = rff.fit_transform(X)
    assert dense.dtype == np.float32
    np.testing.assert_allclose(rff.transform(sp.csr_matrix(X)), dense, rtol=1e-5, atol=1e-6)
    again = RandomFourierFeatures(gamma=0.2, n_components=64, dtype=np.float32,
                                  random_state=3).fit_transform(X)
    np.testing.assert_array_equal(dense, again)


def test_gamma_scale_matches_svc_rule(X):
    rff = RandomFourierFeatures(gamma="scale", n_components=8, random_state=0).fit(X)
    assert rff.gamma_ == pytest.approx(1.0 / (X.shape[1] * X.var()))


@pytest.mark.parametrize("params, message", [
    ({"kernel": "polynomial"}, "shift-invariant"),
    ({"kernel": "sigmoid"}, "unknown kernel"),
    ({"gamma": -1.0}, "gamma"),
    ({"n_components": 0}, "n_components"),
])
def test_bad_parameters_are_rejected(X, params, message):
    with pytest.raises(ValueError, match=message):
        RandomFourierFeatures(**params).fit(X)


def test_bad_input_is_rejected(X):
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomFourierFeatures(gamma=1.0).fit(bad)
    rff = RandomFourierFeatures(gamma=1.0).fit(X)
    with pytest.raises(ValueError, match="features"):
        rff.transform(X[:, :2])
