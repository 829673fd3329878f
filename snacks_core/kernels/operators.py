"""Kernel operators: a kernel matrix K̃ (exact or approximated) with K̃ + βI factorised.

A kernel solver that works on the whole kernel matrix (ADMM, :mod:`snacks_core.solvers.admm`)
takes an *operator* rather than the data: an object with ``n`` (rows), ``beta`` (the shift),
``matvec(v)`` = K̃v, ``solve(b)`` = (K̃ + βI)⁻¹b (vectors or (n, r) blocks),
``decision(X_new, coef)`` = Σ_j coef_j k̃(x_j, ·) on new rows, ``nbytes`` and
``build_time``.  Three representations of K̃, beside the kernels and their approximations:

* :class:`DenseKernel`: K̃ = K, one Cholesky factorisation (small n);
* :class:`NystromKernel`: K̃ = Z Zᵀ for a Nyström embedding (:mod:`snacks_core.kernels.nystrom`),
  solves by Woodbury in O(nk);
* :class:`~snacks_core.kernels.hss.HSSKernel`: a hierarchically semi-separable approximation with
  a fast recursive solver (:mod:`snacks_core.kernels.hss`), Cipolla & Gondzio's representation.

:func:`build_operator` makes one from X by name.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from snacks_core.core.memory import check_fits_in_memory
from snacks_core.core.validation import check_data
from snacks_core.kernels.functions import check_kernel_params, kernel_matrix, resolve_gamma
from snacks_core.kernels.nystrom import NystromEmbedding

__all__ = ["REPRESENTATIONS", "DenseKernel", "NystromKernel", "build_operator"]

REPRESENTATIONS = ("dense", "nystrom", "hss")

# The dense representation keeps one n × n float64 matrix (the Cholesky factor).
_MAX_DENSE_BYTES = 2 * 1024**3

# The shift β when none is given: ADMM's penalty for a stop on the gap, measured
# (BENCHMARKS.md, "Other solvers", bench_solvers): fewest iterations to a 1 % gap on w8a and
# a9a-shaped data among 1, 3, 10, 30 (the paper's rule, snacks_core.solvers.admm.default_beta,
# gives 100).
DEFAULT_BETA = 3.0
# HSS settings of build_operator: the accuracy that brings ADMM within 0.5 points of exact
# LIBSVM's test error on w8a at the benchmark's C (BENCHMARKS.md, "Other solvers"; smaller
# leaves and ranks did not); leaf_size is clipped to n.  The per-block target 1e-4 is not reached on
# w8a or a9a-shaped data within rank 300 (see HSSKernel: the report says how many bases
# max_rank capped and the relative error measured).
DEFAULT_HSS_OPTIONS = {"leaf_size": 1024, "max_rank": 300, "tol": 1e-4}


def check_beta(beta) -> float:
    if isinstance(beta, bool) or not np.isscalar(beta) or not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta (the ADMM penalty) must be a positive finite number, got {beta!r}.")
    return float(beta)


class DenseKernel:
    """K̃ = K, the exact n × n kernel matrix, with the Cholesky factor of K + βI.

    Only the factor L (K + βI = L Lᵀ) is kept: K̃v = L(Lᵀv) − βv.  Refused above 2 GiB
    (n ≈ 16,000) or half the machine's memory; use 'hss' or 'nystrom' beyond.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
        Training data.
    beta : float
        ADMM penalty β > 0.
    kernel, gamma, degree, coef0
        The kernel, as in :func:`snacks_core.kernels.functions.kernel_matrix`; ``gamma`` may be
        'scale' or 'auto', resolved on X.

    Attributes
    ----------
    n : int
    beta : float
    nbytes : int
        Memory held by the factorisation.
    build_time : float
        Seconds spent forming K and factorising K + βI.
    """

    def __init__(self, X, *, beta, kernel="rbf", gamma="scale", degree=3, coef0=1.0):
        X = check_data(X)
        check_kernel_params(kernel, gamma, degree, coef0)
        self.beta = check_beta(beta)
        self.n = X.shape[0]
        n_bytes = 8 * self.n * self.n
        if n_bytes > _MAX_DENSE_BYTES:
            raise ValueError(
                f"The dense kernel representation needs an n × n matrix: {n_bytes / 2**30:.1f} GiB "
                f"for n = {self.n}, above the {_MAX_DENSE_BYTES / 2**30:.0f} GiB limit. "
                "Use representation='hss' or 'nystrom' for this n.")
        check_fits_in_memory(
            n_bytes, "The dense kernel matrix", "Use representation='hss' or 'nystrom'."
        )
        self.X = X
        self.kernel_params = {"kernel": kernel, "gamma": resolve_gamma(gamma, X),
                              "degree": degree, "coef0": coef0}
        start = time.perf_counter()
        K = kernel_matrix(X, X, dtype=np.float64, **self.kernel_params)
        K[np.diag_indices_from(K)] += self.beta
        try:
            self._factor = scipy.linalg.cholesky(
                K, lower=True, overwrite_a=True, check_finite=False
            )
        except np.linalg.LinAlgError:
            raise ValueError(
                "K + βI is not positive definite (kernel not positive "
                "semi-definite?); increase beta."
            ) from None
        self.nbytes = self._factor.nbytes
        self.build_time = time.perf_counter() - start

    def matvec(self, v):
        return self._factor @ (self._factor.T @ v) - self.beta * v

    def solve(self, b):
        return scipy.linalg.cho_solve((self._factor, True), b, check_finite=False)

    def decision(self, X_new, coef):
        from snacks_core.kernels.hss import kernel_expansion  # the HSS module loads only when used

        return kernel_expansion(X_new, self.X, coef, self.kernel_params)


class NystromKernel:
    """K̃ = Z Zᵀ for a fitted :class:`~snacks_core.kernels.nystrom.NystromEmbedding`.

    (Z Zᵀ + βI)⁻¹ b = (b − Z (βI + ZᵀZ)⁻¹ Zᵀ b) / β (Woodbury): O(n k) per solve after one
    k × k Cholesky factorisation; the model is linear in the embedding,
    f(x) = ⟨Zᵀ(y∘z), z(x)⟩ + b.

    Parameters
    ----------
    embedding : NystromEmbedding
        Fitted embedding (maps new rows for :meth:`decision`).
    Z : ndarray of shape (n, k)
        The embedding of the training rows, ``embedding.transform(X)``.
    beta : float
        ADMM penalty β > 0.
    """

    def __init__(self, embedding, Z, *, beta):
        self.beta = check_beta(beta)
        self.embedding = embedding
        self.Z = np.ascontiguousarray(Z, dtype=np.float64)
        self.n = self.Z.shape[0]
        start = time.perf_counter()
        inner = self.Z.T @ self.Z
        inner[np.diag_indices_from(inner)] += self.beta
        self._factor = scipy.linalg.cho_factor(inner, check_finite=False)
        self.nbytes = self.Z.nbytes + inner.nbytes
        self.build_time = time.perf_counter() - start

    def matvec(self, v):
        return self.Z @ (self.Z.T @ v)

    def solve(self, b):
        inner = scipy.linalg.cho_solve(self._factor, self.Z.T @ b, check_finite=False)
        return (b - self.Z @ inner) / self.beta

    def primal_weights(self, coef):
        """w = Zᵀ coef: the model's weights on the embedding."""
        return self.Z.T @ coef

    def decision(self, X_new, coef):
        return self.embedding.transform(X_new) @ self.primal_weights(coef)


def build_operator(X, *, representation="hss", beta=None, kernel="rbf", gamma="scale", degree=3,
                   coef0=1.0, n_components=100, random_state=None, embedding=None, Z=None,
                   hss_options=None):
    """The factorised K̃ + βI of a representation on X.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
        Training data.
    representation : {'dense', 'nystrom', 'hss'}
        See the module docstring.
    beta : float, optional
        ADMM penalty β > 0; defaults to :data:`DEFAULT_BETA` (the paper's is
        :func:`default_beta` of n).
    kernel, gamma, degree, coef0
        The kernel (see :func:`snacks_core.kernels.functions.kernel_matrix`).
    n_components : int
        Landmarks of the Nyström embedding fitted for 'nystrom' (uniform sampling, seeded
        by ``random_state``) when ``embedding`` is not given.
    random_state : int or None
        Seeds the Nyström landmarks or the HSS sampling.
    embedding, Z : NystromEmbedding and ndarray, optional
        For 'nystrom': an embedding already fitted on X, and its ``transform(X)``.
    hss_options : dict, optional
        For 'hss': fields of :class:`snacks_core.kernels.hss.HSSOptions`, over
        :data:`DEFAULT_HSS_OPTIONS`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from snacks_core.kernels.operators import build_operator
    >>> X, _ = make_moons(200, noise=0.2, random_state=0)
    >>> K = build_operator(X, representation="dense", beta=1.0, gamma=2.0)
    >>> b = np.ones(200)
    >>> bool(np.allclose(K.matvec(K.solve(b)) + K.beta * K.solve(b), b))
    True
    """
    if representation not in REPRESENTATIONS:
        raise ValueError(
            f"unknown representation {representation!r}; choose one of {REPRESENTATIONS}."
        )
    if hss_options and representation != "hss":
        raise ValueError("hss_options only apply to representation='hss'.")
    X = check_data(X)
    beta = DEFAULT_BETA if beta is None else check_beta(beta)
    params = {"kernel": kernel, "gamma": gamma, "degree": degree, "coef0": coef0}
    if representation == "dense":
        return DenseKernel(X, beta=beta, **params)
    if representation == "hss":
        from snacks_core.kernels.hss import HSSKernel, HSSOptions

        options = {**DEFAULT_HSS_OPTIONS, **(hss_options or {})}
        if "leaf_size" not in (hss_options or {}):
            options["leaf_size"] = min(options["leaf_size"], X.shape[0])
        return HSSKernel(X, beta=beta, options=HSSOptions(**options), random_state=random_state,
                         **params)
    if embedding is None:
        embedding = NystromEmbedding(n_components=n_components, random_state=random_state,
                                     **params).fit(X)
    return NystromKernel(embedding, embedding.transform(X) if Z is None else Z, beta=beta)


