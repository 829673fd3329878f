"""Kernel registry and blockwise kernel matrices for dense and sparse (CSR) data.

The kernels, in the notation used throughout the project (README, app labels, docstrings;
see CONTRIBUTING.md):

==========  ==================================
rbf         k(x, x') = exp(−γ ‖x − x'‖²)
laplacian   k(x, x') = exp(−γ ‖x − x'‖₁)
polynomial  k(x, x') = (γ ⟨x, x'⟩ + c₀)^p
linear      k(x, x') = ⟨x, x'⟩
==========  ==================================

Every row of a kernel matrix is computed from a row of *statistics* — inner products
⟨x_i, y_j⟩ (rbf, polynomial, linear) or ℓ1 distances ‖x_i − y_j‖₁ (laplacian) — that a
shared finishing step turns into kernel values; the rbf uses
‖x − y‖² = ‖x‖² + ‖y‖² − 2⟨x, y⟩ clipped at 0 (k(x, x) may differ from 1 by a rounding
error), the laplacian of a sparse row against a dense one
‖y‖₁ + Σ_{x_k≠0} (|x_k − y_k| − |y_k|), exact up to rounding relative to ‖y‖₁.
Statistics are accumulated in float64 whatever the output dtype: float32 output halves the
memory of the result, not its accuracy.

Paths, chosen from the input formats:

* CSR ``X`` against dense (or densified) ``Y``: a fused numba kernel per row of ``X``
  (sparse row times the dense ``Yᵀ``, then norms, clipping and exp written straight into
  the output).  A sparse ``Y`` is densified when ``n_Y × n_features`` is small.
* dense ``X`` against dense ``Y``: BLAS ``gemm`` for the inner products of a block of rows,
  then a numba pass for norms, clipping and exp; the laplacian uses a numba loop.
* anything against a sparse ``Y`` too large to densify: a numba kernel merging the sorted
  index lists of both CSR rows.

Threads: :class:`KernelBlocks` computes any range of rows on the calling thread, and
:func:`snacks_core.core.threads.for_row_blocks` hands blocks of rows to a pool of Python
threads, each running BLAS on one thread and ``nogil`` jitted code, so that the work of a
block (gemm, exp, and for the Nyström embedding the product by its factor) stays on one
core and in its cache.
The jitted kernels are serial on purpose: numba's ``parallel=True`` regions competed with
BLAS threads spinning after a gemm, and its cache handles them poorly.  Being serial, every
jitted function here is ``cache=True`` (the app does not recompile them at each start), and
every one that Python calls on a long array (the row kernels, the finishing pass, the CSR
row norms) is ``nogil=True`` so that the pool's threads run it side by side; the helpers
called only from jitted code run inside their caller and need neither.  Block boundaries
depend on the problem only, so results are bitwise the same for any number of threads.
"""

from __future__ import annotations

import numbers
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from snacks_core.core.compiled import njit
from snacks_core.core.memory import check_fits_in_memory
from snacks_core.core.threads import effective_n_threads, for_row_blocks
from snacks_core.core.validation import check_data

KERNELS = ("rbf", "laplacian", "polynomial", "linear")
# The kernel parameters of every estimator, as scikit-learn parameter constraints.
KERNEL_PARAM_CONSTRAINTS = {
    "kernel": [StrOptions(set(KERNELS))],
    "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale", "auto"})],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "coef0": [Interval(Real, None, None, closed="neither")],
}

# Integer codes for the jitted code, in the order of KERNELS.
_RBF, _LAPLACIAN, _POLYNOMIAL, _LINEAR = range(4)

# A sparse Y with at most this many entries (n_Y × n_features; 256 MiB in float64) is
# densified, so that every sparse row of X meets contiguous rows of Yᵀ.
_DENSIFY_MAX_ENTRIES = 2**25

# Multiply-adds of one task of the thread pool: enough to amortise handing it to a thread,
# small enough to balance the load on a busy machine.
_TASK_WORK = 2**24

_LOG2_E = 1.4426950408889634
# ln 2 split so that k * _LN2_HI is exact for the |k| <= 1022 used here (Cody–Waite).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# exp(x) for x below this is subnormal (< 3.3e-308) and is returned as 0.
_EXP_UNDERFLOW = -708.0


# Fused multiply-adds only (no other fastmath): they speed up the whole sparse rbf kernel,
# and the tests' tolerances still hold.
@njit(cache=True, fastmath={"contract"})
def _exp_nonpositive(z, bits, out):
    """``out[j] = exp(z[j])`` for ``z[j] <= 0``; overwrites ``z`` and the int64 ``bits``.

    numba's ``np.exp`` calls libm once per element; this form vectorises.  It writes
    exp(x) = 2^k exp(r) with k = round(x / ln 2), |r| <= ln(2)/2, evaluates exp(r) by
    its Taylor polynomial of degree 13 (truncation error below 1e-17) and builds 2^k from
    its IEEE-754 bit pattern.  Results are within 2 ulp of ``np.exp``; values below
    exp(-708) are flushed to 0.
    """
    for j in range(z.size):
        x = max(z[j], _EXP_UNDERFLOW)
        k = np.floor(x * _LOG2_E + 0.5)
        r = (x - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        z[j] = p if z[j] >= _EXP_UNDERFLOW else 0.0
        bits[j] = (np.int64(k) + 1023) << 52
    scale = bits.view(np.float64)
    for j in range(z.size):
        out[j] = z[j] * scale[j]


@njit(cache=True)
def _finish_row(stat, x_norm, y_norms, code, gamma, degree, coef0, bits, out_row):
    """Turn one row of statistics into kernel values written to ``out_row``.

    ``stat`` holds inner products (ℓ1 distances for the laplacian) and is overwritten;
    ``x_norm``/``y_norms`` are squared ℓ2 norms, read by the rbf only.
    """
    if code == _RBF:
        for j in range(stat.size):
            stat[j] = -gamma * max(x_norm + y_norms[j] - 2.0 * stat[j], 0.0)
        _exp_nonpositive(stat, bits, out_row)
    elif code == _LAPLACIAN:
        for j in range(stat.size):
            stat[j] = -gamma * max(stat[j], 0.0)
        _exp_nonpositive(stat, bits, out_row)
    elif code == _POLYNOMIAL:
        for j in range(stat.size):
            out_row[j] = (gamma * stat[j] + coef0) ** degree
    else:
        for j in range(stat.size):
            out_row[j] = stat[j]


@njit(cache=True)
def _sparse_row_dot(data, indices, start, stop, Yt, stat):
    """``stat[j] = Σ_p data[p] Yt[indices[p], j]`` over the non-zeros start..stop of a row."""
    stat[:] = 0.0
    p = start
    # Four non-zeros per sweep over stat: a quarter of the loads and stores of stat per
    # multiply-add, which matters most on one-hot data such as a9a.
    while p + 4 <= stop:
        v0, v1, v2, v3 = data[p], data[p + 1], data[p + 2], data[p + 3]
        y0, y1 = Yt[indices[p]], Yt[indices[p + 1]]
        y2, y3 = Yt[indices[p + 2]], Yt[indices[p + 3]]
        for j in range(stat.size):
            stat[j] += (v0 * y0[j] + v1 * y1[j]) + (v2 * y2[j] + v3 * y3[j])
        p += 4
    while p < stop:
        v = data[p]
        y = Yt[indices[p]]
        for j in range(stat.size):
            stat[j] += v * y[j]
        p += 1


@njit(cache=True)
def _sparse_row_l1(data, indices, start, stop, Yt, y_l1, stat):
    """``stat[j] = ‖x − y_j‖₁`` for a sparse row x, as ‖y_j‖₁ + Σ_{x_k≠0} (|x_k − y_jk| − |y_jk|).

    Only the non-zeros of x are visited; the row must not repeat a column index.
    """
    # An explicit copy: the slice assignment ``stat[:] = y_l1`` compiles numba's whole
    # broadcasting machinery, over a second of a first run.
    for j in range(stat.size):
        stat[j] = y_l1[j]
    for p in range(start, stop):
        v = data[p]
        y = Yt[indices[p]]
        for j in range(stat.size):
            stat[j] += abs(v - y[j]) - abs(y[j])


@njit(cache=True, nogil=True)
def _csr_dense_rows(data, indices, indptr, start, stop, Yt, y_norms, code, gamma, degree, coef0,
                    out):
    """Kernel between the CSR rows start..stop of (data, indices, indptr) and the columns of
    ``Yt`` (d × n_Y), written to ``out[0:stop - start]``.

    ``y_norms`` holds the squared ℓ2 norms of Y's rows for the rbf, their ℓ1 norms for the
    laplacian.
    """
    n_y = Yt.shape[1]
    stat = np.empty(n_y)
    bits = np.empty(n_y, np.int64)
    for i in range(start, stop):
        x_norm = 0.0
        if code == _LAPLACIAN:
            _sparse_row_l1(data, indices, indptr[i], indptr[i + 1], Yt, y_norms, stat)
        else:
            _sparse_row_dot(data, indices, indptr[i], indptr[i + 1], Yt, stat)
            for p in range(indptr[i], indptr[i + 1]):
                x_norm += data[p] * data[p]
        _finish_row(stat, x_norm, y_norms, code, gamma, degree, coef0, bits, out[i - start])


@njit(cache=True, nogil=True)
def _dense_laplacian_rows(X, Yt, gamma, out):
    """Laplacian kernel between the dense rows of ``X`` and the columns of ``Yt``."""
    n_features = X.shape[1]
    n_y = Yt.shape[1]
    no_norms = np.empty(0)
    stat = np.empty(n_y)
    bits = np.empty(n_y, np.int64)
    for i in range(X.shape[0]):
        stat[:] = 0.0
        for k in range(n_features):
            v = X[i, k]
            y = Yt[k]
            for j in range(n_y):
                stat[j] += abs(v - y[j])
        _finish_row(stat, 0.0, no_norms, _LAPLACIAN, gamma, 1, 0.0, bits, out[i])


@njit(cache=True, nogil=True)
def _finish_block(S, x_norms, y_norms, code, gamma, degree, coef0, out):
    """Apply :func:`_finish_row` to every row of the float64 statistics ``S`` (may be ``out``).

    Serial: each thread of the pool finishes the block its own one-thread ``gemm`` made.
    """
    bits = np.empty(S.shape[1], np.int64)
    for i in range(S.shape[0]):
        _finish_row(S[i], x_norms[i], y_norms, code, gamma, degree, coef0, bits, out[i])


@njit(cache=True)
def _merged_dot(a_data, a_indices, a_start, a_stop, b_data, b_indices, b_start, b_stop):
    """Inner product of two sparse rows with sorted column indices."""
    total = 0.0
    p, q = a_start, b_start
    while p < a_stop and q < b_stop:
        if a_indices[p] == b_indices[q]:
            total += a_data[p] * b_data[q]
            p += 1
            q += 1
        elif a_indices[p] < b_indices[q]:
            p += 1
        else:
            q += 1
    return total


@njit(cache=True)
def _merged_l1(a_data, a_indices, a_start, a_stop, b_data, b_indices, b_start, b_stop):
    """ℓ1 distance between two sparse rows with sorted, distinct column indices."""
    total = 0.0
    p, q = a_start, b_start
    while p < a_stop and q < b_stop:
        if a_indices[p] == b_indices[q]:
            total += abs(a_data[p] - b_data[q])
            p += 1
            q += 1
        elif a_indices[p] < b_indices[q]:
            total += abs(a_data[p])
            p += 1
        else:
            total += abs(b_data[q])
            q += 1
    for r in range(p, a_stop):
        total += abs(a_data[r])
    for r in range(q, b_stop):
        total += abs(b_data[r])
    return total


@njit(cache=True, nogil=True)
def _csr_csr_rows(x_data, x_indices, x_indptr, start, stop, y_data, y_indices, y_indptr,
                  y_norms, code, gamma, degree, coef0, out):
    """Kernel between the CSR rows start..stop of X and all CSR rows of Y (sorted, distinct
    column indices), written to ``out[0:stop - start]``; ``y_norms`` as in
    :func:`_csr_dense_rows`.
    """
    n_y = y_indptr.size - 1
    stat = np.empty(n_y)
    bits = np.empty(n_y, np.int64)
    for i in range(start, stop):
        x_norm = 0.0
        for p in range(x_indptr[i], x_indptr[i + 1]):
            x_norm += x_data[p] * x_data[p]
        for j in range(n_y):
            if code == _LAPLACIAN:
                stat[j] = _merged_l1(x_data, x_indices, x_indptr[i], x_indptr[i + 1],
                                     y_data, y_indices, y_indptr[j], y_indptr[j + 1])
            else:
                stat[j] = _merged_dot(x_data, x_indices, x_indptr[i], x_indptr[i + 1],
                                      y_data, y_indices, y_indptr[j], y_indptr[j + 1])
        _finish_row(stat, x_norm, y_norms, code, gamma, degree, coef0, bits, out[i - start])


@njit(cache=True, nogil=True)
def _csr_row_norms(data, indptr, squared):
    """Squared ℓ2 norms (``squared``) or ℓ1 norms of CSR rows (float64 ``data``)."""
    n_rows = indptr.size - 1
    norms = np.zeros(n_rows)
    for i in range(n_rows):
        total = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            v = data[p]
            total += v * v if squared else abs(v)
        norms[i] = total
    return norms


def check_kernel_params(kernel, gamma=None, degree=3, coef0=1.0) -> None:
    """Validate a kernel name and its parameters.

    Parameters
    ----------
    kernel : str
        One of :data:`KERNELS`.
    gamma : float, {'scale', 'auto'} or None, default=None
        Positive finite scale γ, a rule for :func:`resolve_gamma`, or None when not given.
    degree : int, default=3
        Positive integer degree p of the polynomial kernel.
    coef0 : float, default=1.0
        Finite offset c₀ of the polynomial kernel.

    Raises
    ------
    ValueError
        Naming the offending parameter, its value and what is accepted.
    """
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"unknown kernel {kernel!r}; valid kernels are "
                         + ", ".join(repr(name) for name in KERNELS))
    if gamma is not None:
        _check_gamma(gamma)
    if (not isinstance(degree, numbers.Integral) or isinstance(degree, bool)
            or degree < 1):
        raise ValueError(f"degree must be a positive integer; got {degree!r}")
    if not _is_real(coef0) or not np.isfinite(coef0):
        raise ValueError(f"coef0 must be a finite number; got {coef0!r}")


def resolve_gamma(gamma, X) -> float:
    """The numeric γ for a data set, resolving scikit-learn's rules.

    Parameters
    ----------
    gamma : float or {'scale', 'auto'}
        ``'scale'`` gives 1 / (n_features · Var(X)) — the variance of all entries of X,
        zeros of a sparse X included — or 1.0 when that variance is 0, as
        :class:`sklearn.svm.SVC` does; ``'auto'`` gives 1 / n_features; a positive finite
        number is returned as a float.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The data the rule refers to (the training data).

    Returns
    -------
    float
        γ > 0.

    Raises
    ------
    ValueError
        For any other ``gamma``, or an invalid X (see :func:`kernel_matrix`).

    Examples
    --------
    >>> import numpy as np
    >>> from snacks_core.kernels.functions import resolve_gamma
    >>> X = np.array([[0.0, 2.0], [2.0, 0.0]])
    >>> resolve_gamma("scale", X), resolve_gamma("auto", X), resolve_gamma(0.1, X)
    (0.5, 0.5, 0.1)
    """
    _check_gamma(gamma)
    if isinstance(gamma, str):
        X = as_float_matrix(X, "X")
        if gamma == "auto":
            return 1.0 / X.shape[1]
        # Same expressions, in float64, as sklearn.svm.SVC.fit (no copy of float64 X).
        X = X.astype(np.float64, copy=False)
        variance = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
        return float(1.0 / (X.shape[1] * variance)) if variance != 0 else 1.0
    return float(gamma)


def kernel_matrix(X, Y, kernel="rbf", *, gamma=1.0, degree=3, coef0=1.0, dtype=None,
                  block_rows=2048, out=None, n_jobs=None) -> np.ndarray:
    """Kernel matrix K[i, j] = k(x_i, y_j) between the rows of X and the rows of Y.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_X, n_features)
        Dense array or scipy.sparse matrix/array (converted to CSR if in another format).
    Y : {ndarray, sparse matrix} of shape (n_Y, n_features)
        Same.  A sparse Y with at most 2**25 entries (n_Y × n_features) is densified.
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear'}, default='rbf'
        See the module docstring for the formulas and how they are computed.
    gamma : float or {'scale', 'auto'}, default=1.0
        Scale γ (unused by the linear kernel).  Strings are resolved on X with
        :func:`resolve_gamma`; when X changes between calls (fit, then transform), resolve
        once on the training data and pass the float.
    degree : int, default=3
        Degree p of the polynomial kernel.
    coef0 : float, default=1.0
        Offset c₀ of the polynomial kernel.
    dtype : {np.float32, np.float64} or None, default=None
        Output dtype; None gives float32 when X and Y are both float32, float64 otherwise.
        Computation is in float64 either way.
    block_rows : int, default=2048
        Rows of a dense X processed at a time by one thread, which bounds the temporaries
        (per thread): the float64 copy of a float32 block, block_rows × n_Y float64 inner
        products for float32 output, the block's CSR copy against a large sparse Y.  A
        sparse X needs no temporaries of that size.
    out : ndarray of shape (n_X, n_Y), optional
        C-contiguous array of the output dtype to write into instead of allocating.
    n_jobs : int or None, default=None
        Threads, as in :func:`snacks_core.core.threads.effective_n_threads`: None uses the cores
        the current limits allow (inside ``threadpoolctl.threadpool_limits(1)``: one).  Each
        row block runs on one thread with one BLAS thread: the result does not depend on it.

    Returns
    -------
    ndarray of shape (n_X, n_Y)
        C-contiguous, in the output dtype.  Allocated once and filled block by block.

    Raises
    ------
    ValueError
        For invalid kernel parameters, ``dtype``, ``block_rows`` or ``n_jobs``; inputs that
        are not non-empty 2-D numeric matrices with finite values; a mismatch of n_features;
        or an output larger than half the machine's memory.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from snacks_core.kernels.functions import kernel_matrix
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> kernel_matrix(X, X, "rbf", gamma=0.5).round(6)
    array([[1.      , 0.606531],
           [0.606531, 1.      ]])
    >>> kernel_matrix(sp.csr_matrix(X), X, "laplacian", gamma=1.0).round(6)
    array([[1.      , 0.367879],
           [0.367879, 1.      ]])
    >>> kernel_matrix(X.astype(np.float32), X.astype(np.float32), "linear").dtype
    dtype('float32')
    """
    blocks = KernelBlocks(X, Y, kernel, gamma=gamma, degree=degree, coef0=coef0,
                          block_rows=block_rows)
    n_threads = effective_n_threads(n_jobs)
    out_dtype = _output_dtype(dtype, blocks.inputs_float32)
    n_x, n_y = blocks.shape
    if out is None:
        check_fits_in_memory(n_x * n_y * out_dtype.itemsize, f"A {n_x} × {n_y} kernel matrix",
                             "Use fewer rows or landmarks, dtype=np.float32, or compute it "
                             "in row blocks.")
        out = np.empty((n_x, n_y), dtype=out_dtype)
    elif (out.shape != (n_x, n_y) or out.dtype != out_dtype
          or not out.flags.c_contiguous):
        raise ValueError(f"out must be a C-contiguous {n_x} × {n_y} array of {out_dtype}; got "
                         f"shape {out.shape}, dtype {out.dtype}")
    for_row_blocks(n_x, blocks.task_rows(), n_threads,
                   lambda start, stop, scratch: blocks.fill(start, stop, out[start:stop]))
    return out


class KernelBlocks:
    """Row blocks of the kernel matrix K(X, Y), each computed on the calling thread.

    Y is prepared once (Yᵀ densified, norms of its rows); :meth:`fill` then writes any
    range of rows, so that a pool of threads (:func:`~snacks_core.core.threads.for_row_blocks`)
    can share the work and apply further steps to each block while it is in cache.
    Arguments are validated as in :func:`kernel_matrix`.

    Attributes
    ----------
    shape : tuple of int
        (n_X, n_Y).
    inputs_float32 : bool
        Whether X and Y are both float32 (the default output dtype is then float32).
    """

    def __init__(self, X, Y, kernel="rbf", *, gamma=1.0, degree=3, coef0=1.0, block_rows=2048):
        check_kernel_params(kernel, gamma, degree, coef0)
        X = as_float_matrix(X, "X")
        Y = as_float_matrix(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; "
                             "both must have the same columns")
        if sp.issparse(X) and 3 * X.nnz >= 2 * X.shape[0] * X.shape[1]:
            # Mostly non-zero (a dense file in LIBSVM format): the dense kernels (BLAS) are
            # faster, and the dense array takes no more memory than the CSR one (8 bytes an
            # entry against 12 a non-zero).
            X = X.toarray()
        if (not isinstance(block_rows, numbers.Integral) or isinstance(block_rows, bool)
                or block_rows < 1):
            raise ValueError(f"block_rows must be a positive integer; got {block_rows!r}")
        self._code = KERNELS.index(kernel)
        self._gamma = 0.0 if self._code == _LINEAR else _required_gamma(gamma, X)
        self._degree, self._coef0 = int(degree), float(coef0)
        self._block_rows = int(block_rows)
        self.shape = (X.shape[0], Y.shape[0])
        self.inputs_float32 = X.dtype == np.float32 and Y.dtype == np.float32
        # Float64 values for the jitted kernels: one compiled variant per output dtype (each
        # a long compilation), at the price of a copy of sparse or laplacian float32 input.
        self._X = X.astype(np.float64, copy=False) if sp.issparse(X) else X
        self._y_norms = _row_norms(Y, self._code)
        self._merge = sp.issparse(Y) and Y.shape[0] * Y.shape[1] > _DENSIFY_MAX_ENTRIES
        if self._merge:
            self._Y = Y.astype(np.float64, copy=False)
        elif sp.issparse(Y):
            self._Y = Y.T.toarray(order="C").astype(np.float64, copy=False)
        else:
            self._Y = np.ascontiguousarray(Y.T, dtype=np.float64)

    def task_rows(self):
        """Rows of a task for :func:`~snacks_core.core.threads.for_row_blocks`: about
        ``_TASK_WORK`` multiply-adds.

        It depends on the data only, never on the number of threads, so that every row is
        computed in the same block, hence bitwise the same, for any number of threads.
        """
        X = self._X
        n_x, n_y = self.shape
        stats_per_row = X.nnz / max(n_x, 1) if sp.issparse(X) else X.shape[1]
        return max(1, int(_TASK_WORK // ((stats_per_row + 1) * n_y)))

    def fill(self, start, stop, out):
        """Write the rows start..stop of K into ``out`` (C-contiguous float32/float64, shape
        (stop − start, n_Y)) on the calling thread, BLAS included only as far as its
        current thread limit goes."""
        X, Y = self._X, self._Y
        params = (self._code, self._gamma, self._degree, self._coef0)
        if self._merge:
            if sp.issparse(X):
                _csr_csr_rows(X.data, X.indices, X.indptr, start, stop, Y.data, Y.indices,
                              Y.indptr, self._y_norms, *params, out)
                return
            for first in range(start, stop, self._block_rows):
                last = min(stop, first + self._block_rows)
                Xb = sp.csr_matrix(X[first:last], dtype=np.float64)
                _csr_csr_rows(Xb.data, Xb.indices, Xb.indptr, 0, last - first, Y.data,
                              Y.indices, Y.indptr, self._y_norms, *params,
                              out[first - start:last - start])
        elif sp.issparse(X):
            _csr_dense_rows(X.data, X.indices, X.indptr, start, stop, Y, self._y_norms, *params,
                            out)
        elif self._code == _LAPLACIAN:
            for first in range(start, stop, self._block_rows):
                last = min(stop, first + self._block_rows)
                _dense_laplacian_rows(np.ascontiguousarray(X[first:last], dtype=np.float64), Y,
                                      self._gamma, out[first - start:last - start])
        else:
            # float64 output doubles as the inner-product buffer; float32 output needs its own.
            rows = min(self._block_rows, stop - start)
            stats = None if out.dtype == np.float64 else np.empty((rows, self.shape[1]))
            for first in range(start, stop, self._block_rows):
                last = min(stop, first + self._block_rows)
                Xb = np.asarray(X[first:last], dtype=np.float64)
                block = out[first - start:last - start]
                S = block if stats is None else stats[:last - first]
                np.matmul(Xb, Y, out=S)
                _finish_block(S, _row_norms(Xb, self._code), self._y_norms, *params, block)


def kernel_diagonal(X, kernel="rbf", *, gamma=1.0, degree=3, coef0=1.0,
                    dtype=None) -> np.ndarray:
    """The diagonal k(x_i, x_i) of the kernel matrix of X, without forming the matrix.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Dense array or scipy.sparse matrix/array.
    kernel, gamma, degree, coef0
        As in :func:`kernel_matrix`.
    dtype : {np.float32, np.float64} or None, default=None
        Output dtype; None gives float32 for a float32 X, float64 otherwise.

    Returns
    -------
    ndarray of shape (n_samples,)
        1 for the rbf and laplacian kernels, (γ‖x‖² + c₀)^p and ‖x‖² otherwise.

    Raises
    ------
    ValueError
        As :func:`kernel_matrix`.
    """
    check_kernel_params(kernel, gamma, degree, coef0)
    X = as_float_matrix(X, "X")
    out_dtype = _output_dtype(dtype, X.dtype == np.float32)
    code = KERNELS.index(kernel)
    if code in (_RBF, _LAPLACIAN):
        _required_gamma(gamma, X)
        return np.ones(X.shape[0], dtype=out_dtype)
    squared_norms = _row_norms(X, _RBF)
    if code == _POLYNOMIAL:
        squared_norms = (_required_gamma(gamma, X) * squared_norms + coef0) ** degree
    return squared_norms.astype(out_dtype)


def _is_real(value) -> bool:
    """A real number that is not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _check_gamma(gamma) -> None:
    """Refuse anything but a positive finite number, 'scale' or 'auto'."""
    if isinstance(gamma, str) and gamma in ("scale", "auto"):
        return
    if not _is_real(gamma) or not np.isfinite(gamma) or gamma <= 0:
        raise ValueError(f"gamma must be a positive finite number, 'scale' or 'auto'; "
                         f"got {gamma!r}")


def _required_gamma(gamma, X) -> float:
    """γ as a float for a kernel that uses it; None is refused with a clear message."""
    if gamma is None:
        raise ValueError("gamma=None: this kernel needs gamma, a positive finite number, "
                         "'scale' or 'auto'")
    return resolve_gamma(gamma, X)


def _output_dtype(dtype, inputs_float32):
    """The validated output dtype; None follows the inputs (float32 only if all are)."""
    if dtype is None:
        return np.dtype(np.float32 if inputs_float32 else np.float64)
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        dtype = None
    if dtype not in (np.float32, np.float64):
        raise ValueError("dtype must be np.float32, np.float64 or None")
    return dtype


def as_float_matrix(A, name="X"):
    """The rows the kernel routines read: ``A`` checked, as floats, in canonical form.

    Parameters
    ----------
    A : array-like or scipy.sparse matrix of shape (n, d)
        Rows to check (shape, numbers, finiteness: :func:`snacks_core.core.validation.check_data`).
    name : str
        The argument's name in error messages.

    Returns
    -------
    ndarray or CSR matrix
        ``A`` itself when it is already float32/float64 (and, if sparse, has sorted,
        distinct column indices); otherwise a float64 copy, or a canonical copy of the
        sparse matrix: the caller's matrix is never modified.
    """
    A = check_data(A, name=name)
    if A.dtype not in (np.float32, np.float64):
        A = A.astype(np.float64)
    if sp.issparse(A) and not A.has_canonical_format:
        # The laplacian and merge kernels need canonical rows; the caller's matrix is left
        # untouched.
        A = A.copy()
        A.sum_duplicates()
    return A


def _row_norms(A, code):
    """Per-row float64 norms the kernel needs: squared ℓ2 (rbf), ℓ1 (laplacian), else 0."""
    if code not in (_RBF, _LAPLACIAN):
        return np.zeros(A.shape[0])
    squared = code == _RBF
    if sp.issparse(A):
        return _csr_row_norms(A.data.astype(np.float64, copy=False), A.indptr, squared)
    if squared:
        return np.einsum("ij,ij->i", A, A, dtype=np.float64)
    return np.abs(A).sum(axis=1, dtype=np.float64)
