"""Nyström landmark selection: class-balanced, uniform, approximate ridge leverage scores,
kernel k-means++.

Every sampling returns landmarks in an order whose prefixes are themselves samples of the
same kind, so that the first m' of m landmarks can be reused for a smaller embedding:

* ``balanced``: uniform within each class, the classes taking turns in a random order, so
  that every prefix holds as many landmarks of each class as its rows allow (a class with
  fewer rows than its share gives them all, and the others fill the rest).  It needs the
  labels.  The model f(x) = Σ_j c_j k(l_j, x) can only bend around where its landmarks
  are, and a hinge-loss SVM's boundary (its support vectors) lies along the rarer class:
  uniform landmarks give a 3 %-positive set 3 % of them.  On such data balanced landmarks
  bring the test error closer to exact SVC's than uniform ones (BENCHMARKS.md,
  "Class-balanced landmarks", ``benchmarks/bench_landmarks.py``); on balanced classes the
  two are the same sampling up to stratification.
* ``uniform``: a prefix of a random permutation of the rows.
* ``kmeans++``: the seeding order of k-means++ (Arthur & Vassilvitskii, 2007) in the
  kernel's feature space, d²(x, c) = k(x, x) + k(c, c) − 2 k(x, c).
* ``leverage``: rows drawn without replacement, one after the other, with probabilities
  proportional to their approximate ridge leverage scores

      ℓ_i(λ) = (K (K + λ n I)⁻¹)_ii,

  computed by BLESS (Rudi, Calandriello, Carratino & Rosasco, "On fast leverage score
  sampling and optimal learning", NeurIPS 2018) without ever forming the n × n kernel.

Real data repeat rows (a third of w8a's are copies of another), and a landmark equal to
an earlier one adds nothing to K_nm K_mm⁺ K_mn while making K_mm singular:
:func:`distinct_rows` finds the first occurrences, which keeps the prefix property.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg

from snacks_core.core.validation import clip_n_components
from snacks_core.kernels.functions import (
    as_float_matrix,
    check_kernel_params,
    kernel_diagonal,
    kernel_matrix,
    resolve_gamma,
)

SAMPLINGS = ("balanced", "uniform", "leverage", "kmeans++")

# BLESS: λ is divided by _BLESS_STEP at each step; a step draws
# _BLESS_CANDIDATES · κ²/λ uniform candidates (κ² = max_i k(x_i, x_i) bounds n · max_i ℓ_i)
# and keeps a dictionary of about _BLESS_DICTIONARY · d_eff(λ) rows among them.
_BLESS_STEP = 2.0
_BLESS_CANDIDATES = 4.0
_BLESS_DICTIONARY = 2.0
# Kernel blocks in the score computation hold at most this many float64 values (32 MiB).
_MAX_BLOCK_ENTRIES = 2**22


def select_landmarks(X, n_components, *, sampling="uniform", kernel="rbf", gamma=1.0, degree=3,
                     coef0=1.0, lam=None, random_state=None, y=None) -> np.ndarray:
    """Choose ``n_components`` distinct rows of X as Nyström landmarks.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Dense array or scipy.sparse matrix (used as CSR).
    n_components : int
        Number m of landmarks, at least 1; more than n_samples is clipped to n_samples
        with a warning.
    sampling : {'balanced', 'uniform', 'leverage', 'kmeans++'}, default='uniform'
        How to choose them; see the module docstring.  ``'balanced'`` needs ``y``.
    kernel, gamma, degree, coef0
        The kernel, as in :func:`snacks_core.kernels.functions.kernel_matrix`; ``gamma`` may be
        ``'scale'`` or ``'auto'``, resolved on X.  Unused by ``'uniform'`` and
        ``'balanced'``.
    lam : float or None, default=None
        Ridge regularisation λ > 0 of the leverage scores (convention K + λ n I).  None
        gives λ = mean_i k(x_i, x_i) / m.  Since d_eff(λ) = Σ_i ℓ_i(λ) ≤ tr(K) / (λ n),
        the effective dimension is then at most m (close to m when the spectrum of K
        decays slowly): the scores rank the directions that m landmarks can capture, and
        BLESS needs O(m κ² / mean k(x, x)) candidates per step and O(m) dictionary rows.
        On clustered data it gave lower Nyström errors than smaller λ with d_eff ≈ m.
        The cost grows as 1/λ.  Used by ``'leverage'`` only.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        Source of randomness; the same seed gives the same landmarks.
    y : array-like of shape (n_samples,) or None, default=None
        Class labels of the rows of X, for ``'balanced'`` (ignored by the others).

    Returns
    -------
    ndarray of shape (min(m, n_samples),), dtype int64
        Distinct row indices into X, in selection order.

    Raises
    ------
    ValueError
        For an unknown sampling, m < 1, λ ≤ 0, invalid kernel parameters or invalid X,
        or ``'balanced'`` without one label per row.

    Notes
    -----
    Costs: uniform O(n); balanced O(n log n); k-means++ O(m) kernel columns; leverage
    O(n m²) for the default λ (scores of all rows against a BLESS dictionary of about
    2 d_eff(λ) rows).
    """
    if not isinstance(sampling, str) or sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}; valid samplings are "
                         + ", ".join(repr(name) for name in SAMPLINGS))
    if lam is not None and (not isinstance(lam, numbers.Real) or isinstance(lam, bool)
                            or not np.isfinite(lam) or lam <= 0):
        raise ValueError(f"lam must be a positive finite number or None; got {lam!r}")
    check_kernel_params(kernel, gamma, degree, coef0)
    # Float64 once, rather than in each of the many kernel calls below.
    X = as_float_matrix(X, "X").astype(np.float64, copy=False)
    n_samples = X.shape[0]
    n_components = clip_n_components(n_components, n_samples)
    rng = _as_generator(random_state)
    if sampling == "uniform":
        return rng.permutation(n_samples)[:n_components].astype(np.int64)
    if sampling == "balanced":
        return class_balanced_order(y, n_samples, rng)[:n_components]

    params = {"kernel": kernel, "gamma": None if kernel == "linear" else
              resolve_gamma(gamma, X), "degree": degree, "coef0": coef0}
    if sampling == "kmeans++":
        return _kmeans_plus_plus(X, n_components, params, rng)
    scores = _bless_leverage_scores(X, n_components, lam, params, rng)
    # Exponential keys E_i / ℓ_i in increasing order are successive sampling without
    # replacement with probabilities ∝ ℓ_i (Efraimidis & Spirakis, 2006): each prefix is
    # such a sample too.
    keys = rng.standard_exponential(n_samples) / scores
    return np.argsort(keys, kind="stable")[:n_components].astype(np.int64)


def distinct_rows(rows):
    """Positions (increasing) of the rows of ``rows`` that equal no earlier row.

    ``rows`` is a dense array or a sparse matrix, e.g. the selected landmarks; equality is
    of values (0.0 equals −0.0, explicit sparse zeros are ignored).  The positions kept among
    the first m' rows are the same whatever follows them.
    """
    import scipy.sparse as sp

    if sp.issparse(rows):
        rows = sp.csr_matrix(rows, dtype=np.float64, copy=True)
        rows.sum_duplicates()
        rows.eliminate_zeros()
        rows.sort_indices()
        data = rows.data + 0.0
        keys = [rows.indices[a:b].tobytes() + data[a:b].tobytes()
                for a, b in zip(rows.indptr[:-1], rows.indptr[1:], strict=True)]
    else:
        dense = np.ascontiguousarray(np.asarray(rows, dtype=np.float64) + 0.0)
        keys = [row.tobytes() for row in dense.reshape(dense.shape[0], -1)]
    seen = set()
    first = []
    for position, key in enumerate(keys):
        if key not in seen:
            seen.add(key)
            first.append(position)
    return np.asarray(first, dtype=np.int64)


def _as_generator(random_state):
    """A numpy Generator from None, an int seed, a Generator or a legacy RandomState."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(np.iinfo(np.int32).max))
    if random_state is None or (isinstance(random_state, numbers.Integral)
                                and not isinstance(random_state, bool)):
        return np.random.default_rng(random_state)
    raise ValueError("random_state must be None, an int, a numpy.random.Generator or a "
                     f"numpy.random.RandomState; got {random_state!r}")


def class_balanced_order(y, n_samples, rng):
    """All rows in an order where the classes take turns: the key of a row is its rank in a
    random permutation of its class plus a uniform number in [0, 1), so round r holds the
    r-th row of every class that has one, in a random order."""
    if y is None:
        raise ValueError("sampling='balanced' draws landmarks per class and needs the labels "
                         "y; pass y, or choose sampling='uniform' for unlabelled rows.")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(f"sampling='balanced' needs one label per row of X: y has shape "
                         f"{y.shape} for {n_samples} rows.")
    _, classes = np.unique(y, return_inverse=True)
    keys = np.empty(n_samples)
    for label in range(int(classes.max()) + 1):
        rows = rng.permutation(np.flatnonzero(classes == label))
        keys[rows] = np.arange(rows.shape[0]) + rng.random(rows.shape[0])
    return np.argsort(keys, kind="stable").astype(np.int64)


def _kmeans_plus_plus(X, n_components, params, rng):
    """k-means++ seeding in feature space: each new center drawn with probability ∝ D²(x).

    D²(x) = min over chosen centers c of k(x, x) + k(c, c) − 2 k(x, c), updated with one
    kernel column per new center.  When every remaining D² is 0 (duplicated rows), the next
    center is uniform among the rows not chosen yet.
    """
    n_samples = X.shape[0]
    diagonal = kernel_diagonal(X, **params)
    chosen = np.empty(n_components, dtype=np.int64)
    is_chosen = np.zeros(n_samples, dtype=bool)
    squared_distance = np.full(n_samples, np.inf)
    center = int(rng.integers(n_samples))
    for t in range(n_components):
        chosen[t] = center
        is_chosen[center] = True
        if t == n_components - 1:
            break
        column = kernel_matrix(X, X[center:center + 1], **params)[:, 0]
        np.minimum(squared_distance,
                   np.maximum(diagonal + diagonal[center] - 2.0 * column, 0.0),
                   out=squared_distance)
        # Rounding can leave a chosen row a tiny positive distance to itself.
        squared_distance[is_chosen] = 0.0
        cumulative = np.cumsum(squared_distance)
        u = rng.random()
        if cumulative[-1] > 0.0:
            center = int(np.searchsorted(cumulative, u * cumulative[-1], side="right"))
        else:
            remaining = np.flatnonzero(~is_chosen)
            center = int(remaining[int(u * remaining.size)])
    return chosen


def _bless_leverage_scores(X, n_components, lam, params, rng):
    """Approximate ridge leverage scores ℓ_i(λ) of every row of X, all positive.

    BLESS (Rudi et al., 2018, Algorithm 1): starting from λ₀ = κ² = max_i k(x_i, x_i),
    where d_eff ≤ 1, λ is divided by ``_BLESS_STEP`` until it reaches ``lam`` (None:
    mean_i k(x_i, x_i) / n_components).  At each step, the scores of uniform candidates are
    computed against the previous dictionary, which stays accurate because λ changed by a
    bounded factor, and a new weighted dictionary is drawn among the candidates with
    probabilities growing with their scores.  Finally the scores of all rows are computed
    against the last dictionary.
    """
    n_samples = X.shape[0]
    diagonal = kernel_diagonal(X, **params)
    kappa2 = diagonal.max()
    if kappa2 <= 0.0:
        # k(x, x) = 0 everywhere: the kernel is identically 0 and no row is special.
        return np.ones(n_samples)
    if lam is None:
        lam = diagonal.mean() / n_components
    dictionary = np.empty(0, dtype=np.int64)
    weights = np.empty(0)
    step_lam = kappa2
    while step_lam > lam:
        step_lam = max(step_lam / _BLESS_STEP, lam)
        n_candidates = int(min(n_samples, np.ceil(_BLESS_CANDIDATES * kappa2 / step_lam)))
        candidates = rng.choice(n_samples, size=n_candidates, replace=False)
        scores = _ridge_leverage_scores(X, candidates, dictionary, weights, diagonal,
                                        step_lam, params)
        # Each candidate stands for n / n_candidates rows; keeping it with probability
        # p = min(1, q₂ · ℓ̃ · n / n_candidates) and weight (n / n_candidates) / p keeps
        # Σ_i φ_i φ_iᵀ unbiased, takes about q₂ · d_eff rows and never misses a row whose
        # score is large (Bernoulli sampling, as in Musco & Musco, 2017).
        represented = n_samples / n_candidates
        inclusion = np.minimum(1.0, _BLESS_DICTIONARY * represented * scores)
        kept = rng.random(n_candidates) < inclusion
        dictionary = candidates[kept]
        weights = represented / inclusion[kept]
    return _ridge_leverage_scores(X, np.arange(n_samples), dictionary, weights, diagonal,
                                  lam, params)


def _ridge_leverage_scores(X, rows, dictionary, weights, diagonal, lam, params):
    """Approximate scores of ``rows`` against a weighted dictionary J, in (0, 1].

    With Σ_i φ_i φ_iᵀ ≈ Σ_{j∈J} w_j φ_j φ_jᵀ, Woodbury's identity gives

        ℓ̃_i = (k_ii − k_Jiᵀ (K_JJ + λ n W⁻¹)⁻¹ k_Ji) / (λ n),

    evaluated with a Cholesky factor and kernel blocks of bounded size.  Exact scores lie
    in (0, 1]; ℓ̃ can exceed 1 for rows the dictionary does not represent, and is clipped
    so that such rows cannot swamp the sampling; it is floored so every row can be drawn.
    """
    n_samples = X.shape[0]
    scale = lam * n_samples
    scores = diagonal[rows] / scale
    if dictionary.size:
        X_dictionary = X[dictionary]
        system = kernel_matrix(X_dictionary, X_dictionary, **params)
        # Tiny jitter against the rounding errors of K_JJ, far below λ n / w_j.
        system[np.diag_indices_from(system)] += (scale / weights
                                                 + 100 * dictionary.size
                                                 * np.finfo(float).eps * diagonal.max())
        factor = scipy.linalg.cholesky(system, lower=True)
        block = max(1, _MAX_BLOCK_ENTRIES // dictionary.size)
        for start in range(0, rows.size, block):
            chunk = rows[start:start + block]
            cross = kernel_matrix(X[chunk], X_dictionary, **params)
            whitened = scipy.linalg.solve_triangular(factor, cross.T, lower=True,
                                                     check_finite=False)
            scores[start:start + block] -= np.einsum("ij,ij->j", whitened, whitened) / scale
    return np.clip(scores, np.finfo(float).tiny + 1e-12 * scores.max(), 1.0)
