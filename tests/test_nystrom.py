"""NystromEmbedding z(x) = Λ_k^{−1/2} U_kᵀ k_m(x) against sklearn's kernels and ``Nystroem``."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.kernel_approximation import Nystroem
from sklearn.metrics.pairwise import laplacian_kernel, linear_kernel, polynomial_kernel, rbf_kernel
from threadpoolctl import threadpool_limits

import snacks_core.kernels.nystrom as nystrom
from snacks_core.core.threads import effective_n_threads
from snacks_core.kernels.nystrom import NystromEmbedding, _landmark_factor

# name: (parameters of NystromEmbedding, sklearn's kernel as an oracle, sklearn's metric name)
KERNELS = {
    "rbf": ({"gamma": 0.5}, lambda A, B: rbf_kernel(A, B, gamma=0.5), "rbf"),
    "laplacian": ({"gamma": 0.3}, lambda A, B: laplacian_kernel(A, B, gamma=0.3), "laplacian"),
    "polynomial": ({"gamma": 0.5, "degree": 2, "coef0": 1.0},
                   lambda A, B: polynomial_kernel(A, B, degree=2, gamma=0.5, coef0=1.0), "poly"),
    "linear": ({}, lambda A, B: linear_kernel(A, B), "linear"),
}
SKLEARN_PARAMS = {
    "rbf": {"gamma": 0.5},
    "laplacian": {"gamma": 0.3},
    "polynomial": {"gamma": 0.5, "degree": 2, "coef0": 1.0},
    "linear": {},
}
# Relative Frobenius tolerance on Z Zᵀ for each embedding dtype.
GRAM_RTOL = {np.float64: 1e-10, np.float32: 1e-5}


def _data(n=60, d=4, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _embed(kernel, X, **options):
    params, _, _ = KERNELS[kernel]
    return NystromEmbedding(kernel=kernel, random_state=0, **params, **options).fit(X)


def _relative_error(A, B):
    return np.linalg.norm(A - B) / np.linalg.norm(B)


# --------------------------------------------------------------------------- m = n


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_all_landmarks_reproduce_the_kernel(kernel, dtype):
    X = _data()
    _, oracle, _ = KERNELS[kernel]
    embedding = _embed(kernel, X, n_components=X.shape[0], dtype=dtype)
    Z = embedding.transform(X)
    assert Z.dtype == dtype and Z.shape == (60, embedding.n_components_)
    K = oracle(X, X)
    assert _relative_error(Z.astype(np.float64) @ Z.astype(np.float64).T, K) <= GRAM_RTOL[dtype]
    # Null directions are dropped: the polynomial kernel of degree 2 in 4 variables has
    # rank C(4 + 2, 2) = 15, the linear kernel rank d = 4.
    expected_rank = {"polynomial": 15, "linear": 4}.get(kernel, 60)
    assert embedding.n_components_ == expected_rank
    assert embedding.approximation_error(X) == pytest.approx(
        _relative_error(Z.astype(np.float64) @ Z.astype(np.float64).T, K), abs=GRAM_RTOL[dtype])


@settings(max_examples=20, deadline=None, derandomize=True)
@given(n=st.integers(2, 30), d=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       gamma=st.floats(0.05, 2.0), kernel=st.sampled_from(["rbf", "laplacian"]))
def test_all_landmarks_reproduce_kernel_on_random_data(n, d, seed, gamma, kernel):
    X = _data(n, d, seed)
    oracle = rbf_kernel if kernel == "rbf" else laplacian_kernel
    K = oracle(X, X, gamma=gamma)
    embedding = NystromEmbedding(kernel=kernel, gamma=gamma, n_components=n, random_state=0).fit(X)
    Z = embedding.transform(X)
    # Dropped eigenvalues are below eigen_tol · λ_max, so ‖K − Z Zᵀ‖_F ≤ n · 1e-10 · λ_max.
    tolerance = n * 1e-10 * embedding.eigenvalues_[0] + 1e-12 * np.linalg.norm(K)
    assert np.linalg.norm(K - Z @ Z.T) <= tolerance


# ----------------------------------------------------------------------- spectrum, rank


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_spectrum_of_the_landmark_matrix(kernel):
    X = _data()
    _, oracle, _ = KERNELS[kernel]
    embedding = _embed(kernel, X, n_components=25)
    eigenvalues = embedding.eigenvalues_
    assert eigenvalues.shape == (25,)
    assert np.all(eigenvalues >= 0) and np.all(np.diff(eigenvalues) <= 0)
    landmarks = X[embedding.landmark_indices_]
    expected = np.clip(np.linalg.eigvalsh(oracle(landmarks, landmarks))[::-1], 0, None)
    np.testing.assert_allclose(eigenvalues, expected, rtol=1e-10, atol=1e-10 * expected[0])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(m=st.integers(1, 12), seed=st.integers(0, 2**16),
       smallest=st.sampled_from([1e-16, 1e-13, 1e-11, 1e-9, 1e-6, 1e-2]))
def test_landmark_factor_keeps_what_the_spectrum_allows(m, seed, smallest):
    """Oracle: numpy's eigenvalues of K = Q diag(λ) Qᵀ with λ from 1 down to ``smallest``.
    The factor is triangular (Cholesky, proved without the spectrum) only when every
    eigenvalue exceeds eigen_tol · λ_max, and then F Fᵀ = K⁻¹; otherwise it keeps the
    eigenpairs above that threshold, and F Fᵀ = K⁺ on them."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(m, m)))
    K = (Q * np.geomspace(1.0, smallest, m)) @ Q.T
    K = (K + K.T) / 2
    eigenvalues, factor, triangular = _landmark_factor(K, 1e-10, None)
    exact = np.linalg.eigvalsh(K)
    if triangular:
        assert np.all(exact > 1e-10 * exact[-1])
        np.testing.assert_allclose(factor, np.triu(factor))
        np.testing.assert_allclose(factor @ factor.T @ K, np.eye(m), atol=1e-6)
    else:
        kept = int(np.sum(exact > 1e-10 * exact[-1] * (1 + 1e-6)))
        assert factor.shape[1] in (kept, kept + 1)  # rounding at the threshold
        assert eigenvalues is not None
    if eigenvalues is not None:
        np.testing.assert_allclose(eigenvalues, np.clip(exact[::-1], 0, None), atol=1e-12)


def test_spectrum_is_computed_on_first_use_when_the_fit_does_not_need_it():
    X = _data()
    embedding = NystromEmbedding(gamma=0.5, n_components=20, random_state=0).fit(X)
    assert embedding.triangular_ and embedding._eigenvalues is None
    landmarks = X[embedding.landmark_indices_]
    expected = np.linalg.eigvalsh(rbf_kernel(landmarks, landmarks, gamma=0.5))[::-1]
    np.testing.assert_allclose(embedding.eigenvalues_, expected, rtol=1e-10)
    with pytest.raises(NotFittedError):
        _ = NystromEmbedding().eigenvalues_


def test_rank_truncation_keeps_the_leading_eigenpairs():
    X = _data(80)
    K = rbf_kernel(X, X, gamma=0.5)
    full = NystromEmbedding(gamma=0.5, n_components=30, random_state=1).fit(X)
    Z_full = full.transform(X)
    K_mm = rbf_kernel(full.landmarks_, full.landmarks_, gamma=0.5)
    values, vectors = np.linalg.eigh(K_mm)
    Z_eigen = rbf_kernel(X, full.landmarks_, gamma=0.5) @ (vectors / np.sqrt(values))[:, ::-1]
    errors = []
    for k in (1, 5, 10, 20):
        truncated = NystromEmbedding(gamma=0.5, n_components=30, rank=k, random_state=1).fit(X)
        Z = truncated.transform(X)
        assert truncated.n_components_ == k and Z.shape == (80, k)
        np.testing.assert_array_equal(truncated.landmark_indices_, full.landmark_indices_)
        np.testing.assert_allclose(truncated.eigenvalues_, full.eigenvalues_)
        # Columns come in the eigenbasis: the leading k of K_nm U Λ^{-1/2}, up to the sign
        # of each eigenvector.
        signs = np.sign(np.sum(Z * Z_eigen[:, :k], axis=0))
        np.testing.assert_allclose(Z * signs, Z_eigen[:, :k], rtol=1e-8, atol=1e-10)
        # On the landmarks, Z_k Z_kᵀ is the best rank-k approximation of K_mm
        # (Eckart–Young): its error is the tail of the spectrum.
        Z_landmarks = Z[truncated.landmark_indices_]
        tail = np.sqrt(np.sum(full.eigenvalues_[k:] ** 2))
        residual = np.linalg.norm(K_mm - Z_landmarks @ Z_landmarks.T)
        assert residual == pytest.approx(tail, rel=1e-7, abs=1e-10)
        errors.append(_relative_error(Z @ Z.T, K))
    full_error = _relative_error(Z_full @ Z_full.T, K)
    assert all(error >= full_error * (1 - 1e-12) for error in errors)
    assert errors == sorted(errors, reverse=True)
    # A rank above what eigen_tol keeps changes nothing.
    above = NystromEmbedding(gamma=0.5, n_components=30, rank=100, random_state=1).fit(X)
    assert above.n_components_ == full.n_components_


def test_error_falls_as_m_grows():
    X = _data(150, 3)
    mean_errors = []
    for m in (5, 10, 20, 40, 80):
        errors = [NystromEmbedding(gamma=0.5, n_components=m, random_state=seed)
                  .fit(X).approximation_error(X)
                  for seed in range(5)]
        mean_errors.append(np.mean(errors))
    assert np.all(np.diff(mean_errors) < 0)
    assert mean_errors[-1] < 0.2 * mean_errors[0]


# ----------------------------------------------------------------- sklearn's Nystroem


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_agrees_with_sklearn_nystroem_on_the_same_landmarks(kernel):
    X = _data(120, 4, seed=1)
    X_new = _data(30, 4, seed=2)
    m = 12
    ours = _embed(kernel, X, n_components=m)
    idx = ours.landmark_indices_
    _, _, metric = KERNELS[kernel]
    # sklearn's Nystroem, fitted on the landmark rows only (all of them become its
    # components, in its own order): the same embedding up to a rotation of the columns.
    theirs = Nystroem(kernel=metric, n_components=m, random_state=0, **SKLEARN_PARAMS[kernel])
    theirs.fit(X[idx])
    order = theirs.component_indices_
    np.testing.assert_array_equal(theirs.components_, X[idx][order])
    Z_ours, Z_theirs = ours.transform(X_new), theirs.transform(X_new)
    k = ours.n_components_
    gram = Z_theirs @ Z_theirs.T
    tol = 1e-8 if k == m else 1e-6
    np.testing.assert_allclose(Z_ours @ Z_ours.T, gram, rtol=tol, atol=tol * np.abs(gram).max())
    if k == m:
        # Z_ours = K_nm F and Z_theirs = K_nm P N (P: their order, N = K_mm^{-1/2}):
        # Q = F⁻¹ P N is a rotation taking ours to theirs.
        PN = np.empty_like(theirs.normalization_)
        PN[order] = theirs.normalization_
        Q = np.linalg.solve(ours.components_, PN)
        np.testing.assert_allclose(Q.T @ Q, np.eye(m), atol=1e-6)
        np.testing.assert_allclose(Z_ours @ Q, Z_theirs, rtol=1e-6,
                                   atol=1e-6 * np.abs(Z_theirs).max())


def test_agrees_with_sklearn_nystroem_given_its_attributes():
    """Set sklearn's fitted attributes from our landmarks and normalisation."""
    X = _data(100, 5, seed=3)
    ours = NystromEmbedding(gamma=0.5, n_components=20, random_state=4).fit(X)
    theirs = Nystroem(gamma=0.5, n_components=20)
    theirs.components_ = ours.landmarks_
    theirs.component_indices_ = ours.landmark_indices_
    theirs.normalization_ = ours.components_.T
    theirs._n_features_out = ours.n_components_
    theirs.n_features_in_ = X.shape[1]
    np.testing.assert_allclose(theirs.transform(X), ours.transform(X), rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------- dtype, sparse, chunks


def test_float32_is_close_to_float64():
    X = _data(200, 4)
    e64 = NystromEmbedding(gamma=0.5, n_components=50, random_state=0).fit(X)
    e32 = NystromEmbedding(gamma=0.5, n_components=50, random_state=0, dtype=np.float32).fit(X)
    np.testing.assert_array_equal(e32.landmark_indices_, e64.landmark_indices_)
    assert e32.components_.dtype == np.float32
    Z64, Z32 = e64.transform(X), e32.transform(X)
    assert Z32.dtype == np.float32
    assert _relative_error(Z32.astype(np.float64), Z64) <= 1e-5
    assert _relative_error(Z32.astype(np.float64) @ Z32.T.astype(np.float64), Z64 @ Z64.T) <= 1e-6
    # A float32 X gives the same embedding as its float64 copy.
    Z_from32 = e64.transform(X.astype(np.float32))
    np.testing.assert_allclose(Z_from32, e64.transform(X.astype(np.float32).astype(np.float64)),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_sparse_input_gives_the_dense_results(kernel):
    rng = np.random.default_rng(5)
    X = sp.random(80, 12, density=0.3, format="csr", random_state=5, data_rvs=rng.standard_normal)
    params, _, _ = KERNELS[kernel]
    dense = NystromEmbedding(kernel=kernel, n_components=20, random_state=0,
                             **params).fit(X.toarray())
    sparse = NystromEmbedding(kernel=kernel, n_components=20, random_state=0, **params).fit(X)
    assert sp.issparse(sparse.landmarks_)
    np.testing.assert_array_equal(sparse.landmark_indices_, dense.landmark_indices_)
    np.testing.assert_allclose(sparse.eigenvalues_, dense.eigenvalues_, rtol=1e-10,
                               atol=1e-12 * dense.eigenvalues_[0])
    Z_dense, Z_sparse = dense.transform(X.toarray()), sparse.transform(X)
    np.testing.assert_allclose(Z_sparse @ Z_sparse.T, Z_dense @ Z_dense.T, rtol=1e-9,
                               atol=1e-9 * np.abs(Z_dense).max() ** 2)
    # Mixed: fitted on sparse, applied to dense rows and the other way around.
    np.testing.assert_allclose(sparse.transform(X.toarray()), Z_sparse, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(dense.transform(X) @ Z_dense.T, Z_dense @ Z_dense.T, rtol=1e-9,
                               atol=1e-9 * np.abs(Z_dense).max() ** 2)


def test_sparse_gamma_scale_matches_dense():
    X = sp.random(60, 8, density=0.4, format="csr", random_state=6)
    dense = NystromEmbedding(gamma="scale", n_components=10, random_state=0).fit(X.toarray())
    sparse = NystromEmbedding(gamma="scale", n_components=10, random_state=0).fit(X)
    assert sparse.gamma_ == pytest.approx(dense.gamma_, rel=1e-12)
    assert dense.gamma_ == pytest.approx(1.0 / (8 * X.toarray().var()), rel=1e-12)


def test_given_landmark_indices_are_used():
    X = _data(50)
    chosen = np.array([7, 3, 41, 19, 0])
    embedding = NystromEmbedding(gamma=0.5, n_components=2, random_state=0).fit(
        X, landmark_indices=chosen)
    np.testing.assert_array_equal(embedding.landmark_indices_, chosen)
    np.testing.assert_array_equal(embedding.landmarks_, X[chosen])
    K_nm = rbf_kernel(X, X[chosen], gamma=0.5)
    K_mm = rbf_kernel(X[chosen], X[chosen], gamma=0.5)
    Z = embedding.transform(X)
    np.testing.assert_allclose(Z @ Z.T, K_nm @ np.linalg.solve(K_mm, K_nm.T), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rank", [None, 12])
def test_transform_in_chunks_equals_one_block(monkeypatch, rank):
    """Chunks of 7 rows (15 of them, the last short) on 1 or 2 threads, triangular and
    eigen factors: the same embedding as one block, bitwise so for any number of threads."""
    X = _data(103, 4)
    embedding = NystromEmbedding(gamma=0.5, n_components=20, rank=rank, random_state=0).fit(X)
    whole = embedding.transform(X)
    monkeypatch.setattr(nystrom, "_CHUNK_ENTRIES", 20 * 7)
    chunked = embedding.set_params(n_jobs=1).transform(X)
    np.testing.assert_allclose(chunked, whole, rtol=1e-13, atol=1e-14)
    np.testing.assert_array_equal(embedding.set_params(n_jobs=2).transform(X), chunked)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
def test_threads_give_identical_results_and_match_sklearn(dtype, sparse):
    """n_jobs=1 and n_jobs=2 agree bitwise; Z Zᵀ is sklearn's Nystroem Gram matrix."""
    X = _data(300, 5, seed=3)
    X[np.abs(X) < 0.5] = 0.0
    data = sp.csr_matrix(X) if sparse else X
    chunks = {}
    for n_jobs in (1, 2):
        embedding = NystromEmbedding(gamma=0.2, n_components=40, dtype=dtype, random_state=1,
                                     n_jobs=n_jobs).fit(data)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(nystrom, "_CHUNK_ENTRIES", 40 * 16)
            chunks[n_jobs] = embedding.transform(data)
    np.testing.assert_array_equal(chunks[1], chunks[2])
    reference = Nystroem(kernel="rbf", gamma=0.2, n_components=40)
    reference.component_indices_ = embedding.landmark_indices_
    reference.components_ = X[embedding.landmark_indices_]
    K_mm = rbf_kernel(reference.components_, gamma=0.2)
    U, S, V = np.linalg.svd(K_mm)
    reference.normalization_ = (U / np.sqrt(S)) @ V
    Z_sklearn = reference.transform(X)
    Z = chunks[1].astype(np.float64)
    assert _relative_error(Z @ Z.T, Z_sklearn @ Z_sklearn.T) <= 10 * GRAM_RTOL[dtype]


@pytest.mark.parametrize("out_dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rank", [None, 10])
def test_transform_into_out(monkeypatch, out_dtype, dtype, rank):
    """``out`` of any float dtype is filled chunk by chunk with the embedding rounded to it
    (compared on the same chunks: a product's rounding depends on the block it is in)."""
    X = _data(90, 4, seed=5)
    embedding = NystromEmbedding(gamma=0.5, n_components=25, rank=rank, dtype=dtype,
                                 random_state=2, n_jobs=2).fit(X)
    monkeypatch.setattr(nystrom, "_CHUNK_ENTRIES", 25 * 8)
    expected = embedding.transform(X)
    out = np.full((90, embedding.n_components_), np.nan, dtype=out_dtype)
    assert embedding.transform(X, out=out) is out
    np.testing.assert_array_equal(out, expected.astype(out_dtype))


def test_transform_into_a_memmap(tmp_path, monkeypatch):
    X = _data(70, 3, seed=6)
    embedding = NystromEmbedding(gamma=0.5, n_components=20, dtype=np.float32,
                                 random_state=0).fit(X)
    monkeypatch.setattr(nystrom, "_CHUNK_ENTRIES", 20 * 9)
    expected = embedding.transform(X)
    for out_dtype in (np.float32, np.float16):
        path = tmp_path / f"z_{np.dtype(out_dtype).name}.npy"
        out = np.lib.format.open_memmap(path, mode="w+", dtype=out_dtype, shape=expected.shape)
        assert embedding.transform(X, out=out) is out
        out.flush()
        del out
        np.testing.assert_array_equal(np.load(path), expected.astype(out_dtype))


def test_n_jobs_none_follows_the_blas_limit(monkeypatch):
    """Inside threadpool_limits(1) a default embedding runs its chunks on one thread."""
    X = _data(200, 4)
    embedding = NystromEmbedding(gamma=0.5, n_components=20, random_state=0).fit(X)
    monkeypatch.setattr(nystrom, "_CHUNK_ENTRIES", 20 * 10)
    threads = set()
    real_fill = nystrom.KernelBlocks.fill

    def recording_fill(self, start, stop, out):
        threads.add(threading.get_ident())
        return real_fill(self, start, stop, out)

    monkeypatch.setattr(nystrom.KernelBlocks, "fill", recording_fill)
    with threadpool_limits(1, user_api="blas"):
        assert effective_n_threads() == 1
        embedding.transform(X)
    assert threads == {threading.get_ident()}


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("bad", ["nan", "inf"])
def test_non_finite_values_are_refused(bad):
    X = _data(20)
    X[3, 1] = np.nan if bad == "nan" else np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        NystromEmbedding(n_components=5).fit(X)
    embedding = NystromEmbedding(n_components=5).fit(_data(20))
    with pytest.raises(ValueError, match="NaN or infinite"):
        embedding.transform(X)


def test_non_numeric_values_are_refused():
    X = _data(10).astype(object)
    X[2, 2] = "abc"
    with pytest.raises(ValueError, match="must be numeric.*Encode categorical"):
        NystromEmbedding(n_components=5).fit(X)


def _refused(name, accepted):
    """scikit-learn's parameter-validation message for ``name``: what it must be."""
    return rf"The '{name}' parameter of NystromEmbedding must be {accepted}"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"n_components": 0}, _refused("n_components", r"an int in the range \[1, inf\)")),
        ({"n_components": 2.5}, _refused("n_components", "an int in the range")),
        ({"kernel": "sigmoid"}, _refused("kernel", "a str among.*'rbf'.*Got 'sigmoid'")),
        ({"sampling": "random"}, _refused("sampling", "a str among.*'uniform'.*Got 'random'")),
        ({"gamma": 0.0}, _refused("gamma", "a float in the range.*or a str among")),
        ({"gamma": -1.0}, _refused("gamma", "a float in the range")),
        ({"gamma": "median"}, _refused("gamma", "a float in the range.*Got 'median'")),
        ({"rank": 0}, _refused("rank", r"an int in the range \[1, inf\) or None")),
        ({"rank": 2.0}, _refused("rank", "an int in the range")),
        ({"eigen_tol": 1.0}, _refused("eigen_tol", r"a float in the range \[0(\.0)?, 1(\.0)?\)")),
        ({"eigen_tol": np.nan}, _refused("eigen_tol", "a float in the range")),
        ({"coef0": np.inf}, _refused("coef0", "a float in the range")),
        ({"random_state": "seed"}, _refused("random_state", "an int in the range")),
        ({"dtype": np.float16}, "dtype must be float32 or float64"),
        ({"dtype": "not a dtype"}, "dtype must be float32 or float64"),
        ({"degree": 0, "kernel": "polynomial"}, _refused("degree", "an int in the range")),
        ({"degree": True, "kernel": "polynomial"}, "degree must be a positive integer"),
    ],
)
def test_bad_parameters_are_refused(options, message):
    """Refused before anything else happens, with a message naming the parameter."""
    with warnings.catch_warnings():
        # Parameters are checked before landmarks are chosen: no m > n warning first.
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=message):
            NystromEmbedding(**options).fit(_data(20))


def test_more_landmarks_than_rows_are_clipped_with_a_warning():
    X = _data(20)
    with pytest.warns(UserWarning, match="n_components=50 is larger than the number of samples"):
        embedding = NystromEmbedding(gamma=0.5, n_components=50, random_state=0).fit(X)
    assert embedding.landmark_indices_.shape == (20,)
    assert sorted(embedding.landmark_indices_) == list(range(20))


@pytest.mark.parametrize(
    "indices, message",
    [([], "non-empty 1-D"), ([0, 20], r"in \[0, 20\)"), ([-1, 3], r"in \[0, 20\)"),
     ([0.5, 2.0], "integer row indices"), ([[0, 1]], "1-D")],
)
def test_bad_landmark_indices_are_refused(indices, message):
    with pytest.raises(ValueError, match=message):
        NystromEmbedding(n_components=5).fit(_data(20), landmark_indices=indices)


@pytest.mark.parametrize(
    "make_out, message",
    [
        (lambda n, k: np.empty((n, k + 1)), r"got shape \(30, 6\)"),
        (lambda n, k: np.empty((n + 1, k)), r"got shape \(31, 5\)"),
        (lambda n, k: np.empty((n, k), dtype=np.int32), "got dtype int32"),
        (lambda n, k: np.empty((n, k), dtype=np.complex128), "got dtype complex128"),
        (lambda n, k: np.empty((k, n)).T, "non-contiguous or read-only"),
        (lambda n, k: np.broadcast_to(np.zeros(k), (n, k)), "non-contiguous or read-only"),
        (lambda n, k: [[0.0] * k] * n, "got list"),
    ],
)
def test_bad_out_is_refused(make_out, message):
    X = _data(30)
    embedding = NystromEmbedding(gamma=0.5, n_components=5, random_state=0).fit(X)
    assert embedding.n_components_ == 5
    with pytest.raises(ValueError, match="out must be a C-contiguous, writeable 30 × 5 array"):
        embedding.transform(X, out=make_out(30, 5))
    with pytest.raises(ValueError, match=message):
        embedding.transform(X, out=make_out(30, 5))


@pytest.mark.parametrize("n_jobs, message", [
    (0, _refused("n_jobs", r"an int in the range \(-inf, -1\], an int in the range \[1, inf\) "
                           "or None")),
    (1.5, _refused("n_jobs", "an int in the range")),
    ("2", _refused("n_jobs", "an int in the range")),
    (True, "n_jobs must be None or a non-zero integer"),
])
def test_bad_n_jobs_is_refused(n_jobs, message):
    with pytest.raises(ValueError, match=message):
        NystromEmbedding(n_components=5, n_jobs=n_jobs).fit(_data(20))


def test_transform_checks_the_number_of_features():
    embedding = NystromEmbedding(n_components=5).fit(_data(20, 4))
    with pytest.raises(ValueError, match="X has 3 features, but NystromEmbedding is expecting 4"):
        embedding.transform(_data(5, 3))
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        embedding.transform(np.ones(4))


def test_full_rank_uses_the_triangular_factor_with_the_same_gram_matrix():
    X = _data(90)
    ours = NystromEmbedding(gamma=0.5, n_components=25, random_state=2).fit(X)
    assert ours.triangular_ and ours.n_components_ == 25
    np.testing.assert_array_equal(np.tril(ours.components_, -1), 0.0)
    values, vectors = np.linalg.eigh(rbf_kernel(ours.landmarks_, ours.landmarks_, gamma=0.5))
    Z_eigen = rbf_kernel(X, ours.landmarks_, gamma=0.5) @ (vectors / np.sqrt(values))
    Z = ours.transform(X)
    np.testing.assert_allclose(Z @ Z.T, Z_eigen @ Z_eigen.T, rtol=1e-8, atol=1e-10)
    # Dropping eigenvalues (or a rank) falls back to the eigenbasis.
    embedding = NystromEmbedding(gamma=0.5, n_components=25, rank=10, random_state=2).fit(X)
    assert not embedding.triangular_


@pytest.mark.parametrize("sparse", [False, True])
def test_repeated_landmark_rows_are_dropped_with_the_same_gram_matrix(sparse):
    """Oracle: K_nm K_mm⁺ K_mn over every selected landmark, repeats included (numpy's
    pseudo-inverse); the embedding keeps the distinct rows and the triangular factor."""
    X = _data(60)
    X = np.vstack([X, X[:20], X[5:10]])  # 25 repeated rows
    # Rows 60, 64, 70 and 82 repeat rows 0, 4, 10 and 7; index 3 is chosen twice.
    chosen = np.array([3, 60, 7, 64, 82, 3, 70, 11, 10])
    data = sp.csr_matrix(X) if sparse else X
    embedding = NystromEmbedding(gamma=0.5).fit(data, landmark_indices=chosen)
    np.testing.assert_array_equal(embedding.landmark_indices_, [3, 60, 7, 64, 70, 11])
    assert embedding.triangular_ and embedding.n_components_ == 6
    K_nm = rbf_kernel(X, X[chosen], gamma=0.5)
    K_mm = rbf_kernel(X[chosen], X[chosen], gamma=0.5)
    Z = embedding.transform(data)
    np.testing.assert_allclose(Z @ Z.T, K_nm @ np.linalg.pinv(K_mm, hermitian=True) @ K_nm.T,
                               atol=1e-8)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), kernel=st.sampled_from(["rbf", "laplacian", "polynomial"]),
       count=st.integers(1, 19), sparse=st.booleans())
def test_prefix_unexplained_is_what_the_prefix_embedding_leaves_of_the_kernel(seed, kernel,
                                                                               count, sparse):
    """The share of the kernel's diagonal the embedding on the first k rows leaves on the
    rows after them: 1 − Σ‖z_k(x_j)‖² / Σ k(x_j, x_j), with z_k a NystromEmbedding fitted on
    those k rows and the diagonal from sklearn's kernels (the oracle)."""
    params, oracle_kernel, _ = KERNELS[kernel]
    rng = np.random.default_rng(seed)
    # 20 rows: fewer than the 28 dimensions of the polynomial kernel's features.
    rows = rng.normal(size=(20, 6))
    rows[rng.random(rows.shape) < 0.3] = 0.0
    given_rows = sp.csr_matrix(rows) if sparse else rows
    (share,) = nystrom.prefix_unexplained(given_rows, [count], kernel=kernel, **params)
    prefix = NystromEmbedding(kernel, **params).fit(rows, landmark_indices=np.arange(count))
    Z = prefix.transform(rows[count:])
    diagonal = np.diag(oracle_kernel(rows[count:], rows[count:]))
    assert share == pytest.approx(1.0 - np.sum(Z * Z) / np.sum(diagonal), abs=1e-8)
    assert -1e-9 <= share <= 1.0


def test_prefix_unexplained_shrinks_with_more_rows_and_refuses_what_it_cannot_measure():
    rows = np.random.default_rng(1).normal(size=(60, 10))
    shares = nystrom.prefix_unexplained(rows, [5, 20, 40], gamma=0.1)
    assert shares[0] > shares[1] > shares[2] > 0
    # A repeated row: the kernel matrix is singular, no factor to measure with.
    assert nystrom.prefix_unexplained(np.vstack([rows, rows[:1]]), [5], gamma=0.1) is None
    for count in (0, 60):
        with pytest.raises(ValueError, match="count"):
            nystrom.prefix_unexplained(rows, [count], gamma=0.1)
