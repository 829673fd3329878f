"""Kernel matrices against scikit-learn's pairwise kernels, for every input format and dtype."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import pairwise
from sklearn.svm import SVC

from snacks_core.kernels import functions as kernels
from snacks_core.kernels.functions import (
    KERNELS,
    check_kernel_params,
    kernel_diagonal,
    kernel_matrix,
    resolve_gamma,
)

GAMMA, DEGREE, COEF0 = 0.3, 3, 0.5


def sklearn_kernel(X, Y, kernel, gamma=GAMMA, degree=DEGREE, coef0=COEF0):
    """The oracle: sklearn.metrics.pairwise, in float64."""
    X = X.astype(np.float64)
    Y = Y.astype(np.float64)
    if kernel == "rbf":
        return pairwise.rbf_kernel(X, Y, gamma=gamma)
    if kernel == "laplacian":
        return pairwise.laplacian_kernel(X, Y, gamma=gamma)
    if kernel == "polynomial":
        return pairwise.polynomial_kernel(X, Y, degree=degree, gamma=gamma, coef0=coef0)
    return pairwise.linear_kernel(X, Y)


def assert_kernel_close(K, reference, dtype):
    """float64: a few ulps of the largest entry; float32: its rounding error."""
    scale = max(1.0, np.abs(reference).max())
    if dtype == np.float64:
        np.testing.assert_allclose(K, reference, rtol=1e-10, atol=1e-12 * scale)
    else:
        np.testing.assert_allclose(K, reference, rtol=2e-6, atol=2e-6 * scale)


def sparse_data(n, d, seed, density=0.4):
    """A dense array with about ``density`` non-zeros, in (-2, 2)."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(-2.0, 2.0, size=(n, d))
    A[rng.random((n, d)) > density] = 0.0
    return A


@pytest.fixture(scope="module")
def data():
    return sparse_data(53, 9, seed=0), sparse_data(17, 9, seed=1)


def as_format(A, sparse, dtype):
    A = A.astype(dtype)
    return sp.csr_matrix(A) if sparse else A


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("x_sparse", [False, True], ids=["Xdense", "Xcsr"])
@pytest.mark.parametrize("y_sparse", [False, True], ids=["Ydense", "Ycsr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_sklearn(data, kernel, x_sparse, y_sparse, dtype):
    X, Y = (as_format(A, sparse, dtype)
            for A, sparse in zip(data, (x_sparse, y_sparse), strict=True))
    K = kernel_matrix(X, Y, kernel, gamma=GAMMA, degree=DEGREE, coef0=COEF0, block_rows=8)
    assert K.shape == (53, 17) and K.dtype == dtype and K.flags.c_contiguous
    assert_kernel_close(K, sklearn_kernel(data[0], data[1], kernel), dtype)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("x_sparse", [False, True], ids=["Xdense", "Xcsr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_sparse_y_uses_the_merge_kernel(data, monkeypatch, kernel, x_sparse, dtype):
    """A sparse Y too large to densify goes through the sorted-index merge."""
    monkeypatch.setattr(kernels, "_DENSIFY_MAX_ENTRIES", 0)
    X = as_format(data[0], x_sparse, dtype)
    K = kernel_matrix(X, sp.csr_matrix(data[1].astype(dtype)), kernel, gamma=GAMMA,
                      degree=DEGREE, coef0=COEF0, block_rows=10)
    assert K.dtype == dtype
    assert_kernel_close(K, sklearn_kernel(data[0], data[1], kernel), dtype)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("block_rows", [1, 7, 52, 53, 54, 2048])
def test_block_boundaries(data, kernel, block_rows):
    X, Y = data
    reference = sklearn_kernel(X, Y, kernel)
    for dtype in (np.float64, np.float32):
        K = kernel_matrix(X, Y, kernel, gamma=GAMMA, degree=DEGREE, coef0=COEF0, dtype=dtype,
                          block_rows=block_rows)
        assert_kernel_close(K, reference, dtype)


def test_output_dtype_follows_inputs(data):
    X, Y = data
    X32, Y32 = X.astype(np.float32), Y.astype(np.float32)
    assert kernel_matrix(X32, Y32).dtype == np.float32
    assert kernel_matrix(sp.csr_matrix(X32), Y32).dtype == np.float32
    assert kernel_matrix(X32, Y).dtype == np.float64
    assert kernel_matrix(X, Y32, dtype=np.float32).dtype == np.float32
    assert kernel_matrix(X.astype(int), Y.astype(int)).dtype == np.float64


def test_non_canonical_and_other_sparse_formats(data):
    """Duplicated, unsorted CSR entries are summed (without touching the input); COO/CSC work."""
    X, Y = data
    # Each non-zero split into two halves, columns in decreasing order within a row.
    indices, values, indptr = [], [], [0]
    for row in X:
        columns = np.flatnonzero(row)[::-1]
        indices.extend(np.concatenate([columns, columns]))
        values.extend(np.concatenate([row[columns], row[columns]]) / 2)
        indptr.append(len(indices))
    messy = sp.csr_matrix((values, indices, indptr), shape=X.shape)
    assert not messy.has_canonical_format
    before = messy.data.copy()
    for kernel in KERNELS:
        reference = sklearn_kernel(X, Y, kernel)
        assert_kernel_close(kernel_matrix(messy, Y, kernel, gamma=GAMMA, degree=DEGREE,
                                          coef0=COEF0), reference, np.float64)
        assert_kernel_close(kernel_matrix(sp.coo_matrix(X), sp.csc_matrix(Y), kernel,
                                          gamma=GAMMA, degree=DEGREE, coef0=COEF0),
                            reference, np.float64)
    np.testing.assert_array_equal(messy.data, before)


@st.composite
def kernel_problems(draw):
    n_x = draw(st.integers(1, 25))
    n_y = draw(st.integers(1, 12))
    d = draw(st.integers(1, 7))
    values = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False, width=32)
    X = np.array(draw(st.lists(values, min_size=n_x * d, max_size=n_x * d))).reshape(n_x, d)
    Y = np.array(draw(st.lists(values, min_size=n_y * d, max_size=n_y * d))).reshape(n_y, d)
    # Zero out entries so that sparse rows, even empty ones, occur.
    X[np.abs(X) < draw(st.floats(0.0, 3.0))] = 0.0
    Y[np.abs(Y) < draw(st.floats(0.0, 3.0))] = 0.0
    return (X, Y, draw(st.sampled_from(KERNELS)), draw(st.floats(0.01, 2.0)),
            draw(st.integers(1, 4)), draw(st.floats(-1.0, 1.0)), draw(st.booleans()),
            draw(st.booleans()), draw(st.sampled_from([np.float64, np.float32])),
            draw(st.integers(1, 30)))


@settings(max_examples=60, deadline=None)
@given(kernel_problems())
def test_fuzzed_against_sklearn(problem):
    X, Y, kernel, gamma, degree, coef0, x_sparse, y_sparse, dtype, block_rows = problem
    K = kernel_matrix(as_format(X, x_sparse, np.float64), as_format(Y, y_sparse, np.float64),
                      kernel, gamma=gamma, degree=degree, coef0=coef0, dtype=dtype,
                      block_rows=block_rows)
    reference = sklearn_kernel(X, Y, kernel, gamma=gamma, degree=degree, coef0=coef0)
    assert_kernel_close(K, reference, dtype)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_diagonal_is_diagonal_of_matrix(data, kernel, sparse, dtype):
    X = as_format(data[0], sparse, dtype)
    diagonal = kernel_diagonal(X, kernel, gamma=GAMMA, degree=DEGREE, coef0=COEF0)
    assert diagonal.shape == (53,) and diagonal.dtype == dtype
    assert_kernel_close(diagonal, np.diag(sklearn_kernel(data[0], data[0], kernel)), dtype)


def test_exp_is_accurate():
    """The vectorisable exp against np.exp: within 2 ulps, 0 below exp(-708)."""
    z = np.concatenate([-np.linspace(0.0, 720.0, 200_001), [-0.0, -1e-300, -5e-324, -1e6]])
    expected = np.exp(z)
    out = np.empty_like(z)
    kernels._exp_nonpositive(z.copy(), np.empty(z.size, dtype=np.int64), out)
    normal = z >= kernels._EXP_UNDERFLOW
    np.testing.assert_allclose(out[normal], expected[normal], rtol=2 * np.finfo(float).eps,
                               atol=0)
    assert np.all(out[~normal] == 0.0)


def test_resolve_gamma_scale_matches_svc():
    rng = np.random.default_rng(3)
    X = 3.0 * sparse_data(40, 6, seed=3) + 1.0
    y = rng.integers(0, 2, size=40)
    for data in (X, X.astype(np.float32), sp.csr_matrix(X), sp.csr_matrix(X.astype(np.float32))):
        svc = SVC(gamma="scale").fit(data, y)
        assert resolve_gamma("scale", data) == svc._gamma
    assert resolve_gamma("scale", sp.csr_matrix(X)) == 1.0 / (
        6 * (sp.csr_matrix(X).multiply(sp.csr_matrix(X)).mean() - sp.csr_matrix(X).mean() ** 2))


def test_resolve_gamma_other_rules():
    X = np.ones((5, 4))
    assert resolve_gamma("scale", X) == 1.0  # zero variance
    assert resolve_gamma("auto", X) == 0.25
    assert resolve_gamma(2, X) == 2.0 and isinstance(resolve_gamma(2, X), float)
    assert resolve_gamma(np.float32(0.5), X) == 0.5
    for bad in (None, 0, -1.0, np.nan, np.inf, "median", True):
        with pytest.raises(ValueError, match="gamma"):
            resolve_gamma(bad, X)


def test_string_gamma_is_resolved_on_x(data):
    X, Y = data
    np.testing.assert_allclose(kernel_matrix(X, Y, gamma="scale"),
                               kernel_matrix(X, Y, gamma=resolve_gamma("scale", X)))


def test_check_kernel_params_accepts_valid():
    for kernel in KERNELS:
        check_kernel_params(kernel)
        check_kernel_params(kernel, gamma=0.1, degree=2, coef0=-1)
        check_kernel_params(kernel, gamma="scale", degree=np.int64(5), coef0=np.float32(0))
        check_kernel_params(kernel, gamma="auto")


@pytest.mark.parametrize("params, message", [
    ({"kernel": "gaussian"}, "unknown kernel 'gaussian'; valid kernels are 'rbf', 'laplacian', "
                             "'polynomial', 'linear'"),
    ({"kernel": None}, "unknown kernel"),
    ({"kernel": "rbf", "gamma": 0.0}, "gamma must be a positive finite number"),
    ({"kernel": "rbf", "gamma": -2}, "gamma must be a positive finite number"),
    ({"kernel": "rbf", "gamma": np.nan}, "gamma must be a positive finite number"),
    ({"kernel": "rbf", "gamma": np.inf}, "gamma must be a positive finite number"),
    ({"kernel": "rbf", "gamma": "median"}, "'scale' or 'auto'"),
    ({"kernel": "rbf", "gamma": True}, "gamma"),
    ({"kernel": "polynomial", "degree": 0}, "degree must be a positive integer"),
    ({"kernel": "polynomial", "degree": 2.5}, "degree must be a positive integer"),
    ({"kernel": "polynomial", "degree": True}, "degree must be a positive integer"),
    ({"kernel": "polynomial", "coef0": np.inf}, "coef0 must be a finite number"),
    ({"kernel": "polynomial", "coef0": "1"}, "coef0 must be a finite number"),
])
def test_check_kernel_params_rejects(params, message):
    with pytest.raises(ValueError, match=message):
        check_kernel_params(**params)


def test_kernel_matrix_rejects_bad_input(data):
    X, Y = data
    bad_x = X.copy()
    bad_x[2, 3] = np.nan
    cases = [
        ((X, Y[:, :5]), {}, "X has 9 features but Y has 5"),
        ((X[0], Y), {}, "2-D"),
        ((bad_x, Y), {}, "NaN or infinite"),
        ((sp.csr_matrix(bad_x), Y), {}, "NaN or infinite"),
        ((np.array([["a", "b"]]), Y[:, :2]), {}, "numeric"),
        ((X[:0], Y), {}, "empty"),
        ((X, Y), {"dtype": np.int32}, "dtype must be"),
        ((X, Y), {"dtype": "complex"}, "dtype must be"),
        ((X, Y), {"block_rows": 0}, "block_rows must be a positive integer"),
        ((X, Y), {"block_rows": 2.0}, "block_rows must be a positive integer"),
        ((X, Y), {"kernel": "sigmoid"}, "unknown kernel"),
        ((X, Y), {"gamma": None}, "gamma=None"),
        ((X, Y), {"gamma": -1.0}, "gamma must be"),
    ]
    for args, kwargs, message in cases:
        with pytest.raises(ValueError, match=message):
            kernel_matrix(*args, **kwargs)
    with pytest.raises(ValueError, match="gamma=None"):
        kernel_diagonal(X, "polynomial", gamma=None)


def test_linear_kernel_ignores_gamma(data):
    X, Y = data
    np.testing.assert_allclose(kernel_matrix(X, Y, "linear", gamma=None), X @ Y.T)
    np.testing.assert_allclose(kernel_diagonal(X, "linear", gamma=None), (X * X).sum(axis=1))


def test_refuses_an_output_larger_than_memory():
    huge = sp.csr_matrix((3_000_000, 2))
    with pytest.raises(ValueError, match="3000000 × 3000000 kernel matrix would need"):
        kernel_matrix(huge, huge)


def test_small_problems_leave_the_thread_count_unchanged(data):
    threads = numba.get_num_threads()
    kernel_matrix(sp.csr_matrix(data[0]), data[1][:1])  # small: runs on one thread
    assert numba.get_num_threads() == threads


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("x_sparse", [False, True], ids=["Xdense", "Xcsr"])
@pytest.mark.parametrize("merge", [False, True], ids=["Ydense", "Ymerge"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_threads_give_identical_blocks(data, monkeypatch, kernel, x_sparse, merge, dtype):
    """Tasks of a few rows on 1 or 2 threads: bitwise the same matrix, sklearn's values."""
    monkeypatch.setattr(kernels, "_TASK_WORK", 100)
    if merge:
        monkeypatch.setattr(kernels, "_DENSIFY_MAX_ENTRIES", 0)
    X = as_format(data[0], x_sparse, np.float64)
    Y = as_format(data[1], merge, np.float64)
    params = {"gamma": GAMMA, "degree": DEGREE, "coef0": COEF0, "dtype": dtype, "block_rows": 3}
    assert kernels.KernelBlocks(X, Y, kernel, gamma=GAMMA).task_rows() < 10
    one = kernel_matrix(X, Y, kernel, n_jobs=1, **params)
    np.testing.assert_array_equal(kernel_matrix(X, Y, kernel, n_jobs=2, **params), one)
    assert_kernel_close(one, sklearn_kernel(data[0], data[1], kernel), dtype)
