"""Nyström embedding z(x) = F ᵀ k_m(x) with F Fᵀ = K_mm⁺: a scikit-learn transformer.

With landmarks x̃₁…x̃ₘ and the eigen-decomposition K_mm = U Λ Uᵀ, the embedding keeps the
k leading eigenpairs (k ≤ m: eigenvalues below a relative threshold are dropped, and an
optional ``rank`` truncates further, as in the kernel-approximation tutorial), with
F = U_k Λ_k^{−1/2}, so that Z Zᵀ = K_nm U_k Λ_k⁻¹ U_kᵀ K_mn ≈ K; its columns then come
sorted by decreasing eigenvalue.  When every eigenvalue is kept, F = L⁻ᵀ from the
Cholesky factorisation K_mm = L Lᵀ instead: the same Gram matrix K_nm K_mm⁻¹ K_mn at
half the cost, since applying the triangular F takes n·m² operations against 2·n·m²
for a full one.  Either way the embedding equals sklearn's ``Nystroem``
(K_nm K_mm^{−1/2}) up to a rotation, which a linear SVM with ‖w‖² does not see.
"""

from __future__ import annotations

import ctypes
import functools
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from numba.extending import get_cython_function_address
from numpy.typing import ArrayLike, DTypeLike
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from snacks_core.core.cancellation import raise_if_stopped
from snacks_core.core.memory import check_fits_in_memory
from snacks_core.core.threads import blas_controller, effective_n_threads, for_row_blocks
from snacks_core.core.validation import check_data, clip_n_components, explain_non_numeric
from snacks_core.kernels.functions import (
    KERNEL_PARAM_CONSTRAINTS,
    KernelBlocks,
    check_kernel_params,
    kernel_matrix,
    resolve_gamma,
)
from snacks_core.kernels.landmarks import SAMPLINGS, distinct_rows, select_landmarks

# Rows of X transformed at once by one thread: the kernel block (rows × m) stays near 32 MiB.
_CHUNK_ENTRIES = 2**22
# A transform of few rows is cut into this many tasks (of at least the rows below), so
# that up to as many threads share it.
_MIN_TASKS = 8
_MIN_TASK_ROWS = 256

# What ``transform(X, out=...)`` can write into: blocks are cast from the embedding's dtype.
_OUT_DTYPES = (np.float16, np.float32, np.float64)


class NystromEmbedding(TransformerMixin, BaseEstimator):
    """Nyström feature map z(x) = Λ_k^{−1/2} U_kᵀ k_m(x) on m landmarks.

    Parameters
    ----------
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear'}, default='rbf'
    gamma : float, 'scale' or 'auto', default='scale'
        Kernel parameter γ ('scale' = 1 / (d · Var(X)) as in sklearn's SVC).
    degree : int, default=3
        Degree p of the polynomial kernel.
    coef0 : float, default=1.0
        c₀ of the polynomial kernel.
    n_components : int, default=100
        Number m of landmarks; clipped to n with a warning.
    sampling : {'uniform', 'balanced', 'leverage', 'kmeans++'}, default='uniform'
        Landmark selection (see :mod:`snacks_core.kernels.landmarks`); ``'balanced'`` takes the
        same number of landmarks from every class and needs ``y`` in :meth:`fit`.
    rank : int or None, default=None
        Keep at most this many leading eigenpairs of K_mm (k ≤ m).
    eigen_tol : float, default=1e-10
        Eigenvalues below ``eigen_tol · λ_max`` are dropped (pseudo-inverse square root).
    dtype : {np.float64, np.float32}, default=np.float64
        Precision of the embedding; float32 halves memory and speeds up the solvers.
    random_state : int, Generator or None
        Seed of the landmark selection.
    n_jobs : int or None, default=None
        Threads for the kernel blocks and the transform.  None uses every core the current
        limits allow: the process's CPU affinity, numba's thread count and the BLAS limit,
        so that inside ``threadpoolctl.threadpool_limits(1)`` (one job of a parallel sweep)
        it runs on one thread.  A positive integer asks for that many threads (at most the
        cores available), −1 for all cores.  Each row chunk is embedded by one thread with
        one BLAS thread, so the result is bitwise the same for any ``n_jobs``.

    Attributes
    ----------
    gamma_ : float
        The resolved γ.
    landmark_indices_ : ndarray of shape (m,)
        Rows of the training X used as landmarks, in selection order; a selected row equal
        to an earlier landmark is left out (it adds nothing to K_nm K_mm⁺ K_mn), so m can
        be less than ``n_components`` on data with repeated rows.
    landmarks_ : ndarray or CSR matrix of shape (m, d)
    eigenvalues_ : ndarray of shape (m,)
        Full spectrum of K_mm in decreasing order (for decay plots).
    components_ : ndarray of shape (m, k)
        F, with z(x)ᵀ = k_m(x)ᵀ F: U_k Λ_k^{−1/2}, or the upper-triangular L⁻ᵀ when
        every eigenvalue is kept (``triangular_`` is then True).
    triangular_ : bool
        Whether ``components_`` is the triangular Cholesky factor.
    selected_positions_ : ndarray of shape (m,)
        Positions of the landmarks in the selection (drawn or given), which may repeat a
        row: the first j selected hold ``searchsorted(selected_positions_, j)`` landmarks.
    n_components_ : int
        k, the dimension of the embedding.

    Examples
    --------
    >>> import numpy as np
    >>> from snacks_core.kernels.functions import kernel_matrix
    >>> from snacks_core.kernels.nystrom import NystromEmbedding
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> embedding = NystromEmbedding(gamma=0.5, n_components=50, random_state=0).fit(X)
    >>> Z = embedding.transform(X)
    >>> Z.shape
    (200, 50)

    Z Zᵀ reproduces the kernel exactly on the landmarks, and approximately elsewhere:

    >>> K = kernel_matrix(X, X, gamma=0.5)
    >>> rows = embedding.landmark_indices_
    >>> bool(np.allclose(Z[rows] @ Z[rows].T, K[np.ix_(rows, rows)]))
    True
    >>> bool(np.linalg.norm(K - Z @ Z.T) < 0.1 * np.linalg.norm(K))
    True
    """

    _parameter_constraints: dict = {
        **KERNEL_PARAM_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "sampling": [StrOptions(set(SAMPLINGS))],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "eigen_tol": [Interval(Real, 0, 1, closed="left")],
        # float32 or float64 given as a type, a name or an np.dtype: checked in fit.
        "dtype": "no_validation",
        "random_state": ["random_state", np.random.Generator],
        "n_jobs": [Interval(Integral, None, -1, closed="right"),
                   Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, kernel: str = "rbf", *, gamma: float | str = "scale", degree: int = 3,
                 coef0: float = 1.0, n_components: int = 100, sampling: str = "uniform",
                 rank: int | None = None, eigen_tol: float = 1e-10,
                 dtype: DTypeLike = np.float64,
                 random_state: int | np.random.Generator | None = None,
                 n_jobs: int | None = None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.sampling = sampling
        self.rank = rank
        self.eigen_tol = eigen_tol
        self.dtype = dtype
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X: ArrayLike | sp.spmatrix, y: object = None,
            landmark_indices: ArrayLike | None = None) -> NystromEmbedding:
        """Choose landmarks (or take ``landmark_indices``) and eigen-decompose K_mm; ``y``
        (class labels) is used by ``sampling='balanced'`` only."""
        self._validate_params()
        # What the constraints cannot say: a bool is no degree, and which dtypes.
        check_kernel_params(self.kernel, self.gamma, self.degree, self.coef0)
        if _as_dtype(self.dtype) not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype!r}.")
        X = self._validate(X, reset=True)
        self.gamma_ = resolve_gamma(self.gamma, X)
        if landmark_indices is None:
            m = clip_n_components(self.n_components, X.shape[0])
            landmark_indices = select_landmarks(
                X, m, sampling=self.sampling, random_state=self.random_state, y=y,
                **self._kernel_params())
        landmark_indices = _check_landmark_indices(landmark_indices, X.shape[0])
        # A landmark repeating an earlier one's row adds nothing and makes K_mm singular.
        self.selected_positions_ = distinct_rows(X[landmark_indices])
        self.landmark_indices_ = landmark_indices[self.selected_positions_]
        self.landmarks_ = X[self.landmark_indices_]
        self._eigenvalues, factor, self.triangular_ = _landmark_factor(
            self._landmark_kernel(), self.eigen_tol, self.rank)
        self.n_components_ = factor.shape[1]
        self.components_ = np.ascontiguousarray(factor, dtype=self.dtype)
        return self

    @property
    def eigenvalues_(self) -> np.ndarray:
        """Full spectrum of K_mm in decreasing order; computed on first use when the fit did
        not need it (every eigenvalue kept, which the Cholesky factor proves)."""
        check_is_fitted(self, "components_")
        if self._eigenvalues is None:
            with blas_controller().limit(limits=1):
                self._eigenvalues = _spectrum(self._landmark_kernel())
        return self._eigenvalues

    @eigenvalues_.setter
    def eigenvalues_(self, value):
        self._eigenvalues = value

    def _landmark_kernel(self):
        """K_mm, the kernel between the landmarks, in float64."""
        return kernel_matrix(self.landmarks_, self.landmarks_, dtype=np.float64,
                             n_jobs=self.n_jobs, **self._kernel_params())

    def _validate(self, X, reset):
        """scikit-learn's input contract (``n_features_in_``, its messages for empty, 1-D,
        complex or object input), then the project's: finite values, CSR or a float array."""
        with explain_non_numeric("X"):
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                              ensure_all_finite=False, reset=reset)
        return check_data(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def transform(self, X: ArrayLike | sp.spmatrix, out: np.ndarray | None = None, *,
                  first_column: int = 0) -> np.ndarray:
        """Z = K(X, landmarks) · F, in row chunks spread over ``n_jobs`` threads.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        out : ndarray of shape (n_samples, n_components_ - first_column), optional
            C-contiguous, writeable float64, float32 or float16 array (an ``np.memmap``
            included) to write Z into instead of allocating it.  Chunks are computed in the
            embedding's ``dtype`` and cast into ``out`` one at a time, so a float16 or
            on-disk ``out`` never needs the whole embedding in memory.
        first_column : int, default=0
            Compute only the columns of Z from this one on, K(X, landmarks) · F[:, j:].
            With a triangular factor these are the columns that landmarks appended to
            an embedding's add (Cholesky factors nest, :class:`EmbeddingPrefix`): the
            first ones are the smaller embedding's and need not be computed again.

        Returns
        -------
        ndarray of shape (n_samples, n_components_ - first_column)
            ``out`` when given; else a new array of the embedding's ``dtype``.
        """
        check_is_fitted(self, "components_")
        X = self._validate(X, reset=False)
        n_threads = effective_n_threads(self.n_jobs)
        n = X.shape[0]
        if not 0 <= first_column < self.components_.shape[1]:
            raise ValueError(f"first_column must be in [0, {self.components_.shape[1]}), "
                             f"got {first_column!r}.")
        factor = self.components_
        if first_column:
            factor = np.ascontiguousarray(factor[:, first_column:])
        m, k = factor.shape
        dtype = np.dtype(self.dtype)
        if out is None:
            check_fits_in_memory(n * k * dtype.itemsize,
                                 f"The embedding of {n} rows in {k} dimensions",
                                 "Use fewer landmarks, dtype=float32, pass out= (an np.memmap "
                                 "on disk), or transform the data in parts.")
            out = np.empty((n, k), dtype=dtype)
        else:
            _check_out(out, n, k)
        blocks = KernelBlocks(X, self.landmarks_, **self._kernel_params())
        # Rows per task: about _CHUNK_ENTRIES kernel entries, and a small X (a block of a
        # store) in several tasks; never from the thread count, so that every row is
        # computed in the same task, hence bitwise the same, whatever the threads.
        chunk = max(1, min(_CHUNK_ENTRIES // m, max(_MIN_TASK_ROWS, -(-n // _MIN_TASKS))))
        # Computing the kernel block in place in ``out`` saves a copy when the triangular
        # factor is applied in place and ``out`` has the embedding's dtype.
        triangular = self.triangular_ and not first_column
        in_place = triangular and out.dtype == dtype

        def embed_chunk(start, stop, scratch):
            block = out[start:stop] if in_place else scratch[:stop - start]
            blocks.fill(start, stop, block)
            if triangular:
                _multiply_by_triangular(block, factor)
                if not in_place:
                    out[start:stop] = block
            elif out.dtype == dtype:
                np.matmul(block, factor, out=out[start:stop])
            else:
                out[start:stop] = block @ factor

        for_row_blocks(n, chunk, n_threads, embed_chunk,
                       None if in_place else lambda: np.empty((min(chunk, n), m), dtype=dtype))
        return out

    def _kernel_params(self):
        gamma = getattr(self, "gamma_", None)
        if gamma is None:
            gamma = self.gamma
        return {"kernel": self.kernel, "gamma": gamma, "degree": self.degree, "coef0": self.coef0}

    def approximation_error(self, X: ArrayLike | sp.spmatrix) -> float:
        """Relative Frobenius error ‖K − Z Zᵀ‖_F / ‖K‖_F on X (forms the n × n K: small X)."""
        X = check_data(X)
        check_fits_in_memory(8 * X.shape[0] ** 2, "The exact kernel matrix", "Use fewer rows.")
        K = kernel_matrix(X, X, **self._kernel_params())
        Z = self.transform(X).astype(np.float64)
        return float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))



class EmbeddingPrefix:
    """A fitted :class:`NystromEmbedding` on m_max landmarks restricted to its first ones:
    z_k(x), the embedding on the first ``n_landmarks`` distinct landmarks, computed from
    the whole embedding's block of rows (what a robustness grid computes once per group and
    slices for each of its landmark counts).

    When the whole embedding's factor is triangular (Cholesky factors nest: the first k
    columns of K_nm L⁻ᵀ are the embedding on the first k landmarks), z_k is the first
    ``n_landmarks`` columns of its embedding; otherwise its kernel block on the first
    landmarks times ``components``, the factor of those landmarks' own K_kk.  Either way it
    is what a :class:`NystromEmbedding` fitted on those landmarks gives, to rounding.

    It has what a fitted model reads of its embedding (``transform``, ``landmarks_``,
    ``landmark_indices_``, ``n_components_``), so a grid cell's model is a
    :class:`~snacks_core.SnacksClassifier` over it.
    """

    def __init__(self, embedding, n_landmarks, components=None):
        self.embedding = embedding
        self.n_landmarks = n_landmarks
        self.components = components
        self.nested = bool(embedding.triangular_)
        self.landmarks_ = embedding.landmarks_[:n_landmarks]
        self.landmark_indices_ = embedding.landmark_indices_[:n_landmarks]
        self.n_components_ = n_landmarks if components is None else components.shape[1]

    @classmethod
    def of(cls, embedding, m, dtype) -> EmbeddingPrefix:
        """The prefix of ``embedding`` on its first m selected landmarks (those repeating
        an earlier row dropped); ``dtype`` of a factor computed anew."""
        n_landmarks = int(np.searchsorted(embedding.selected_positions_, m))
        if embedding.triangular_:
            return cls(embedding, n_landmarks)
        own = NystromEmbedding(**embedding._kernel_params(), dtype=dtype).fit(
            embedding.landmarks_[:n_landmarks], landmark_indices=np.arange(n_landmarks))
        return cls(embedding, n_landmarks, own.components_)

    def whole_block(self, X, n_jobs=None):
        """What the prefix is computed from: the whole embedding of X when it nests, else
        X's kernel block on all the landmarks."""
        if self.nested:
            return self.embedding.transform(X)
        embedding = self.embedding
        return kernel_matrix(X, embedding.landmarks_, dtype=embedding.dtype, n_jobs=n_jobs,
                             **embedding._kernel_params())

    def from_block(self, block) -> np.ndarray:
        """z_k of the rows whose :meth:`whole_block` is ``block`` (C-contiguous)."""
        block = block[:, :self.n_landmarks]
        if self.nested:
            return np.ascontiguousarray(block)
        return block @ self.components

    def transform(self, X) -> np.ndarray:
        """z_k(X), computed as the grid computed its rows' (one BLAS thread, so that the
        products sum in the grid's order)."""
        with blas_controller().limit(limits=1):
            return self.from_block(self.whole_block(check_data(X, name="X")))

def _multiply_by_triangular(block, factor):
    """block ← block · factor in place, for C-contiguous arrays of one dtype (float32 or
    float64) and an upper-triangular m × m ``factor``: BLAS ``trmm``, n·m² multiply-adds.

    In column-major terms this is Fᵀ·Kᵀ on the transposed (Fortran) views, with Fᵀ lower
    triangular.  ``trmm`` runs on the calling thread's BLAS setting and releases the GIL.
    """
    trmm, real = _trmm(block.dtype.char)
    m = ctypes.c_int(factor.shape[0])
    rows = ctypes.c_int(block.shape[0])
    trmm(b"L", b"L", b"N", b"N", ctypes.byref(m), ctypes.byref(rows), ctypes.byref(real(1.0)),
         factor.ctypes.data, ctypes.byref(m), block.ctypes.data, ctypes.byref(m))


@functools.lru_cache(maxsize=2)
def _trmm(dtype_char):
    """scipy's BLAS ``dtrmm``/``strmm`` as a ctypes function, and its scalar type.

    scipy.linalg.blas's f2py wrappers hold the GIL, which serialised the transform's
    threads (BENCHMARKS.md, "Embedding on all cores", ``bench_embedding.py``); a ctypes
    call of the same routine, taken from scipy's Cython BLAS table as numba does, releases
    it.
    """
    real = ctypes.c_double if dtype_char == "d" else ctypes.c_float
    pointer_int = ctypes.POINTER(ctypes.c_int)
    prototype = ctypes.CFUNCTYPE(None, *[ctypes.c_char_p] * 4, pointer_int, pointer_int,
                                 ctypes.POINTER(real), ctypes.c_void_p, pointer_int,
                                 ctypes.c_void_p, pointer_int)
    name = "dtrmm" if dtype_char == "d" else "strmm"
    return prototype(get_cython_function_address("scipy.linalg.cython_blas", name)), real


def _check_out(out, n, k):
    """Refuse an ``out`` that transform cannot fill in place, saying what it needs."""
    expected = f"a C-contiguous, writeable {n} × {k} array of float64, float32 or float16"
    if not isinstance(out, np.ndarray):
        raise ValueError(f"out must be {expected} (np.memmap included); got {type(out).__name__}.")
    if out.shape != (n, k):
        raise ValueError(f"out must be {expected}; got shape {out.shape}: one row per row "
                         f"of X and one column per component (n_components_ = {k}).")
    if out.dtype not in _OUT_DTYPES:
        raise ValueError(f"out must be {expected}; got dtype {out.dtype}.")
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ValueError(f"out must be {expected}; got a non-contiguous or read-only array "
                         "(pass np.ascontiguousarray(out) or a fresh array).")


def _check_landmark_indices(landmark_indices, n_samples):
    """Landmark rows as int64, refusing what would silently pick other rows (negative,
    fractional or out-of-range indices)."""
    indices = np.asarray(landmark_indices)
    if indices.ndim != 1 or indices.shape[0] == 0 or (
            indices.dtype.kind not in "iu" and not (
                indices.dtype.kind == "f" and np.all(indices == np.round(indices)))):
        raise ValueError("landmark_indices must be a non-empty 1-D sequence of integer row "
                         f"indices, got {landmark_indices!r}.")
    if indices.min() < 0 or indices.max() >= n_samples:
        raise ValueError(f"landmark_indices must lie in [0, {n_samples}) (rows of X); got "
                         f"values from {indices.min()} to {indices.max()}.")
    return indices.astype(np.int64)


def _as_dtype(dtype):
    """np.dtype(dtype), or None for what numpy does not recognise as a dtype."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def _spectrum(K_mm):
    """Eigenvalues of K_mm in decreasing order, clipped at 0."""
    return np.maximum(scipy.linalg.eigvalsh(K_mm)[::-1], 0.0)


def _landmark_factor(K_mm, eigen_tol, rank):
    """Spectrum of K_mm (decreasing; None when not computed), a factor F with
    F Fᵀ = K_mm⁺ on the kept eigenpairs, and whether F is the triangular Cholesky one
    (every eigenvalue kept).

    Every eigenvalue is kept when λ_min > ``eigen_tol`` · λ_max.  The Cholesky factor
    K_mm = L Lᵀ proves it without the spectrum: λ_min = 1/‖L⁻¹‖₂² ≥ 1/‖L⁻¹‖_F² and
    λ_max ≤ tr K_mm, and F = L⁻ᵀ is needed anyway, so the eigen-decomposition is skipped.
    Otherwise the spectrum decides.

    The m × m factorisations run on one BLAS thread: on a busy machine the threaded LAPACK
    drivers spin-wait and run slower, for little gain when idle.
    """
    m = K_mm.shape[0]
    # The cached controller: threadpool_limits would inspect the loaded libraries anew,
    # which costs more than a Playground-sized embedding.
    with blas_controller().limit(limits=1):
        inverse = _inverse_cholesky(K_mm) if rank is None or rank >= m else None
        if inverse is not None and 1.0 / np.sum(inverse * inverse) > eigen_tol * np.trace(K_mm):
            return None, inverse.T, True
        # Each m × m LAPACK call runs to its end (seconds at large m): a cancelled
        # embedding stops between them (snacks_core.core.cancellation).
        raise_if_stopped()
        values = vectors = None
        if inverse is None:
            # Not numerically positive definite (or a rank asked for): the full
            # decomposition is needed, and its values are the spectrum (computing them
            # first on their own took a third more time).
            values, vectors = scipy.linalg.eigh(K_mm)
            eigenvalues = np.maximum(values[::-1], 0.0)
        else:
            eigenvalues = _spectrum(K_mm)
        top = eigenvalues[0]
        keep = int(np.sum(eigenvalues > eigen_tol * top)) if top > 0 else 0
        if rank is not None:
            keep = min(keep, int(rank))
        if keep == 0:
            raise ValueError("The landmark kernel matrix is zero: check gamma and the data.")
        if keep == m and inverse is not None:
            return eigenvalues, inverse.T, True
        if values is None:
            # The full decomposition: LAPACK's subset driver is slower here.
            raise_if_stopped()
            values, vectors = scipy.linalg.eigh(K_mm)
        values, vectors = values[::-1][:keep], vectors[:, ::-1][:, :keep]
        return eigenvalues, vectors / np.sqrt(np.maximum(values, 1e-300)), False


def _inverse_cholesky(K_mm):
    """L⁻¹ for the Cholesky factor K_mm = L Lᵀ (lower triangular, exact zeros above the
    diagonal), or None when K_mm is not numerically positive definite."""
    try:
        lower = scipy.linalg.cholesky(K_mm, lower=True)
    except np.linalg.LinAlgError:
        return None
    inverse, info = scipy.linalg.lapack.dtrtri(lower, lower=1)
    return np.tril(inverse) if info == 0 else None


def prefix_unexplained(rows, counts, *, kernel="rbf", gamma=1.0, degree=3, coef0=1.0):
    """For each k of ``counts``, the share of the kernel's diagonal that the Nyström
    embedding on the first k of ``rows`` leaves unexplained on the rows after them:
    Σ_{j ≥ k} (k(x_j, x_j) − ‖z_k(x_j)‖²) / Σ_{j ≥ k} k(x_j, x_j), the trace-norm error of
    the approximation on those rows (0: the k landmarks capture the kernel there).

    ``rows`` are landmarks in selection order (distinct rows, ``gamma`` a number), and
    every k is less than their number.  One Cholesky factor K = L Lᵀ of their kernel
    matrix serves every k: the first k entries of L's row j are z_k(x_j) in the
    triangular factor's coordinates (Cholesky factors nest), so ‖z_k(x_j)‖² = Σ_{i<k} L_ji².
    Returns None where K is not numerically positive definite (a row the others nearly
    repeat): more landmarks add no new direction there.
    """
    K = kernel_matrix(rows, rows, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                      dtype=np.float64)
    with blas_controller().limit(limits=1):
        try:
            lower = scipy.linalg.cholesky(K, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return None
    diagonal = np.diag(K)
    shares = []
    for k in counts:
        if not 0 < k < rows.shape[0]:
            raise ValueError(f"each count must lie in [1, {rows.shape[0]}); got {k!r}.")
        total = float(np.sum(diagonal[k:]))
        captured = float(np.sum(lower[k:, :k] * lower[k:, :k]))
        shares.append((total - captured) / total if total > 0 else 0.0)
    return shares
