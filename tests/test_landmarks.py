"""Landmark selection: valid, reproducible, nested samples; leverage and k-means++ beat uniform;
balanced landmarks give each class its share."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from snacks_core.kernels.functions import kernel_matrix
from snacks_core.kernels.landmarks import (
    SAMPLINGS,
    _bless_leverage_scores,
    _ridge_leverage_scores,
    distinct_rows,
    select_landmarks,
)

RBF = {"kernel": "rbf", "gamma": 0.5, "degree": 3, "coef0": 1.0}


def clustered(seed, n_big=500, n_small=10, n_clusters=10):
    """One big cluster (std 0.5) and ``n_clusters`` tight clusters (std 0.05) at distance 8."""
    rng = np.random.default_rng(seed)
    big = 0.5 * rng.normal(size=(n_big, 2))
    angles = rng.uniform(0.0, 2.0 * np.pi, size=n_clusters)
    centers = 8.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    small = [c + 0.05 * rng.normal(size=(n_small, 2)) for c in centers]
    return np.vstack([big] + small)


def nystrom_error(K, landmarks):
    """‖K − K_nm K_mm⁺ K_mn‖_F, the oracle computed with numpy's pseudo-inverse."""
    K_nm = K[:, landmarks]
    K_mm = K[np.ix_(landmarks, landmarks)]
    return np.linalg.norm(K - K_nm @ np.linalg.pinv(K_mm, hermitian=True) @ K_nm.T)


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(120, 4))


# Labels of X's 120 rows for the balanced sampling: 12 of class "b", the rest "a".
LABELS = np.where(np.arange(120) % 10 == 3, "b", "a")


def assert_valid(indices, n_components, n_samples):
    assert indices.dtype == np.int64 and indices.shape == (n_components,)
    assert np.unique(indices).size == n_components
    assert indices.min() >= 0 and indices.max() < n_samples


@pytest.mark.parametrize("sampling", SAMPLINGS)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_valid_and_reproducible(X, sampling, sparse):
    data = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0)) if sparse else X
    common = {"sampling": sampling, "gamma": 0.2, "y": LABELS}
    first = select_landmarks(data, 30, random_state=7, **common)
    assert_valid(first, 30, 120)
    np.testing.assert_array_equal(first, select_landmarks(data, 30, random_state=7, **common))
    np.testing.assert_array_equal(
        first, select_landmarks(data, 30, random_state=np.random.default_rng(7), **common))
    assert not np.array_equal(first, select_landmarks(data, 30, random_state=8, **common))
    legacy = select_landmarks(data, 30, random_state=np.random.RandomState(7), **common)
    assert_valid(legacy, 30, 120)


@pytest.mark.parametrize("sampling, lam", [("uniform", None), ("kmeans++", None),
                                           ("leverage", 1e-2), ("balanced", None)])
def test_prefixes_are_the_smaller_samples(X, sampling, lam):
    """The first m' of m landmarks are exactly the landmarks drawn for m' (same seed)."""
    full = select_landmarks(X, 40, sampling=sampling, lam=lam, random_state=3, y=LABELS)
    for m in (1, 5, 17, 39):
        np.testing.assert_array_equal(
            select_landmarks(X, m, sampling=sampling, lam=lam, random_state=3, y=LABELS),
            full[:m])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(counts=st.lists(st.integers(1, 40), min_size=1, max_size=5),
       m=st.integers(1, 120), seed=st.integers(0, 2**16))
def test_balanced_gives_every_class_its_share(counts, m, seed):
    """Oracle: with m' landmarks a class with c rows holds min(c, s) of them, where s is
    the share that, given to every class (as far as its rows allow), sums to m' (classes
    left with one landmark more or less than s only where s is not whole)."""
    y = np.repeat(np.arange(len(counts)) * 7 - 3, counts)  # labels need not be 0..k-1
    y = y[np.random.default_rng(seed).permutation(y.shape[0])]
    X = np.arange(y.shape[0], dtype=np.float64)[:, None]
    m = min(m, y.shape[0])
    chosen = select_landmarks(X, m, sampling="balanced", y=y, random_state=seed)
    assert_valid(chosen, m, y.shape[0])
    # The labels increase with the class's position in ``counts``, as np.unique orders them.
    held = np.array([np.sum(y[chosen] == label) for label in np.unique(y)])
    full = np.array(counts)
    # The rounds: in round r every class with more than r rows gives one landmark.
    rounds = sum(1 for r in range(max(counts)) if np.minimum(full, r + 1).sum() <= m)
    assert np.all(held >= np.minimum(full, rounds))
    assert np.all(held <= np.minimum(full, rounds + 1))


def test_balanced_needs_one_label_per_row(X):
    with pytest.raises(ValueError, match="sampling='balanced'.*needs the labels y"):
        select_landmarks(X, 10, sampling="balanced")
    with pytest.raises(ValueError, match="one label per row of X: y has shape \\(119,\\)"):
        select_landmarks(X, 10, sampling="balanced", y=LABELS[:119])


def test_leverage_prefix_with_default_lam_is_weighted_sample():
    """The default λ depends on m; every prefix is still a distinct weighted sample that
    favours the small clusters over uniform sampling (10 % of the rows)."""
    data = clustered(0)
    small = np.mean([np.mean(select_landmarks(data, 30, sampling="leverage", random_state=s,
                                              **RBF)[:10] >= 500) for s in range(10)])
    assert small > 0.25


def test_ridge_scores_with_every_row_in_the_dictionary_are_exact():
    """With J = all rows and unit weights, Woodbury gives diag(K (K + λ n I)⁻¹) exactly."""
    data = clustered(1, n_big=80, n_small=4, n_clusters=5)
    n, lam = data.shape[0], 1e-3
    K = kernel_matrix(data, data, **RBF)
    exact = np.diag(K @ np.linalg.inv(K + lam * n * np.eye(n)))
    scores = _ridge_leverage_scores(data, np.arange(n), np.arange(n), np.ones(n), np.diag(K),
                                    lam, RBF)
    np.testing.assert_allclose(scores, exact, rtol=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_bless_scores_approximate_exact_scores(seed):
    """At the default λ = mean k(x, x) / m, BLESS is within a small factor of the exact
    ridge leverage scores diag(K (K + λ n I)⁻¹), and so is the small clusters' share."""
    data = clustered(seed)
    n, m = data.shape[0], 25
    K = kernel_matrix(data, data, **RBF)
    exact = np.diag(K @ np.linalg.inv(K + n / m * np.eye(n)))
    approx = _bless_leverage_scores(data, m, None, RBF, np.random.default_rng(seed))
    assert np.all((exact / 3 < approx) & (approx < 4 * exact))
    exact_share, approx_share = exact[500:].sum() / exact.sum(), approx[500:].sum() / approx.sum()
    assert 0.7 * exact_share < approx_share < 1.3 * exact_share


def test_leverage_and_kmeans_beat_uniform_on_imbalanced_clusters():
    """Uniform sampling misses most of the 10 small clusters (100 of 600 rows) with m = 25;
    leverage scores and k-means++ seeding find them, so the Nyström error drops."""
    samplings = ("uniform", "leverage", "kmeans++")
    errors = {sampling: [] for sampling in samplings}
    for seed in range(10):
        data = clustered(seed)
        K = kernel_matrix(data, data, **RBF)
        for sampling in samplings:
            landmarks = select_landmarks(data, 25, sampling=sampling, random_state=seed, **RBF)
            errors[sampling].append(nystrom_error(K, landmarks))
    mean = {sampling: np.mean(values) for sampling, values in errors.items()}
    assert mean["leverage"] < 0.9 * mean["uniform"]
    assert mean["kmeans++"] < 0.5 * mean["uniform"]


def test_kmeans_seeds_each_separated_cluster_once():
    rng = np.random.default_rng(4)
    centers = 20.0 * rng.normal(size=(6, 3))
    data = np.repeat(centers, 15, axis=0) + 0.01 * rng.normal(size=(90, 3))
    landmarks = select_landmarks(data, 6, sampling="kmeans++", random_state=4, **RBF)
    assert sorted(landmarks // 15) == list(range(6))


@pytest.mark.parametrize("sampling", ["leverage", "kmeans++"])
def test_duplicated_rows(sampling):
    """Three distinct rows repeated: D² and scores vanish, landmarks stay distinct."""
    data = np.repeat(np.eye(3), 10, axis=0)
    assert_valid(select_landmarks(data, 12, sampling=sampling, random_state=0, **RBF), 12, 30)


@pytest.mark.parametrize("sampling", ["leverage", "kmeans++"])
@pytest.mark.parametrize("kernel", ["laplacian", "polynomial", "linear"])
def test_other_kernels(X, sampling, kernel):
    assert_valid(select_landmarks(X, 20, sampling=sampling, kernel=kernel, gamma="scale",
                                  random_state=0), 20, 120)


def test_zero_kernel_falls_back_to_uniform_scores():
    assert_valid(select_landmarks(np.zeros((20, 3)), 5, sampling="leverage", kernel="linear",
                                  random_state=0), 5, 20)


@pytest.mark.parametrize("sampling", SAMPLINGS)
def test_more_landmarks_than_rows_is_clipped_with_a_warning(X, sampling):
    with pytest.warns(UserWarning, match="n_components=150 is larger than the number of "
                                         "samples \\(120\\); using m = 120"):
        landmarks = select_landmarks(X, 150, sampling=sampling, random_state=0, y=LABELS)
    assert_valid(landmarks, 120, 120)


@pytest.mark.parametrize("kwargs, message", [
    ({"n_components": 0}, "n_components"),
    ({"n_components": -3}, "n_components"),
    ({"n_components": 2.5}, "n_components"),
    ({"n_components": True}, "n_components"),
    ({"sampling": "greedy"}, "unknown sampling 'greedy'; valid samplings are 'balanced', "
                             "'uniform', 'leverage', 'kmeans\\+\\+'"),
    ({"lam": 0.0}, "lam must be a positive finite number"),
    ({"lam": -1.0}, "lam must be a positive finite number"),
    ({"lam": np.nan}, "lam must be a positive finite number"),
    ({"random_state": "seed"}, "random_state must be"),
    ({"random_state": 1.5}, "random_state must be"),
    ({"kernel": "sigmoid"}, "unknown kernel"),
    ({"sampling": "kmeans++", "gamma": 0.0}, "gamma must be"),
])
def test_rejects_bad_parameters(X, kwargs, message):
    arguments = {"n_components": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        select_landmarks(X, **arguments)


def test_rejects_bad_data():
    with pytest.raises(ValueError, match="NaN or infinite"):
        select_landmarks(np.array([[0.0, np.inf], [1.0, 2.0]]), 1)
    with pytest.raises(ValueError, match="empty"):
        select_landmarks(np.zeros((0, 3)), 1)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(-1, 1)), min_size=1, max_size=30))
def test_distinct_rows_are_first_occurrences(rows):
    """Oracle: a brute-force scan; sparse and dense agree, −0.0 equals 0.0."""
    X = np.array(rows, dtype=np.float64) * 0.5
    X[(X == 0) & (np.arange(len(rows)) % 2 == 1)[:, None]] = -0.0  # mixed with +0.0
    expected = [i for i in range(len(rows))
                if not any(np.array_equal(X[i], X[j]) for j in range(i))]
    np.testing.assert_array_equal(distinct_rows(X), expected)
    np.testing.assert_array_equal(distinct_rows(sp.csr_matrix(X)), expected)
    # The first m' rows keep the same distinct positions whatever follows them.
    cut = max(1, len(rows) // 2)
    np.testing.assert_array_equal(distinct_rows(X[:cut]), [i for i in expected if i < cut])
