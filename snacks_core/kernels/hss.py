"""Hierarchically semi-separable (HSS) approximation of a kernel matrix, with a fast solver.

The representation of Cipolla & Gondzio's ADMM (Section 3.1; built there with STRUMPACK's
HSS-ANN of Chávez et al., IPDPS 2020), written from its definition:

* **Cluster tree.**  The rows are split recursively in two halves at the median of their
  projection on the principal axis (a few power iterations), until a node holds at most
  ``leaf_size`` rows.  The rows are permuted so that every node is a contiguous range.
* **Skeletons and nested bases.**  Every node τ but the root gets skeleton rows Ĩ_τ,
  chosen among its candidate rows R_τ, and a basis U_τ with K(R_τ, I_τᶜ) ≈
  U_τ K(Ĩ_τ, I_τᶜ).  A leaf's candidates are its rows; a parent's are its children's
  skeletons, so that its basis is nested, U_p = diag(U_c1, U_c2) T_p, and only T_p
  ((k₁ + k₂) × k_p) is stored.  The skeleton comes from an interpolative decomposition:
  a column-pivoted QR of a *sample* of the off-diagonal block, never the block itself —
  columns of the sibling that the kernel finds closest to the node (its approximate
  nearest neighbours) and columns drawn uniformly from the rest of the data.  The rank is
  chosen from a target accuracy: the smallest k whose interpolation error on the sampled
  entries, ‖F − U F(Ĩ, :)‖_F read off the QR factor, is at most ``tol``·‖F‖_F for the
  sampled block F, at most ``max_rank``.
* **Measured accuracy.**  After the build, the relative error ‖K̃ − K‖_F/‖K‖_F is
  estimated on ``error_columns`` kernel columns drawn uniformly (K̃ e_j by the fast
  product against the exact k(·, x_j)): an unbiased ratio estimate, reported with the
  ranks and the memory in :attr:`HSSKernel.compression`.
* **The approximation.**  Diagonal leaf blocks are exact, D_τ = K(I_τ, I_τ); the block of
  two siblings is U_c1 B_c1c2 U_c2ᵀ with B_c1c2 = K(Ĩ_c1, Ĩ_c2), the kernel between their
  skeletons.  Storage and matrix-vector products cost O(n (leaf_size + r)).  Two bases:

  - ``basis='nystrom'`` (default) interpolates through the kernel,
    U_τ = K(R_τ, Ĩ_τ) K(Ĩ_τ, Ĩ_τ)⁻¹.  Then K̃ = D̃₀ + U₀K̃₁U₀ᵀ level by level with
    Schur complements D̃ = K(R, R) − U K(Ĩ, Ĩ) Uᵀ ⪰ 0, so K̃ is positive semi-definite at
    any tolerance, like K: the approximate SVM stays a convex problem.
  - ``basis='interpolative'`` keeps the decomposition's own interpolation matrix, fitted
    to the sampled off-diagonal columns.  It is far more accurate at equal rank (by orders of
    magnitude on two moons at tol = 10⁻⁸) but K̃ may be indefinite:
    at a loose tolerance, eigenvalues below 0 distort the SVM (ADMM run to convergence
    drifts to a worse model) and those below −β make K̃ + βI impossible to factorise,
    which is reported.

* **New rows.**  A model fitted on K̃ is evaluated with K̃ (:meth:`HSSKernel.model`): a
  new row is routed down the tree by the same splits and k̃(x, ·) is exact on its leaf,
  interpolated through the leaf's skeleton elsewhere.  The paper evaluates with the exact
  kernel instead (Algorithm 3, line 18; :meth:`HSSKernel.exact_decision`), which is
  harmless for its 10 early-stopped iterations but not for a converged model, whose
  coefficients reach C on thousands of rows: the errors of the far blocks then add up
  (BENCHMARKS.md, "Other solvers", "Where each solver stands against its paper").
* **Fast solver for K̃ + βI** (recursive Woodbury on the telescoping form).  With
  A₀ = blockdiag(D_τ + βI) and U₀ = blockdiag(U_τ), K̃ + βI = A₀ + U₀ K₁ U₀ᵀ where K₁
  is the same structure one level up on the skeletons, with zero diagonal blocks.  For
  S = U₀ᵀA₀⁻¹U₀ and P = A₀⁻¹U₀S⁻¹,

      (A₀ + U₀K₁U₀ᵀ)⁻¹ b = y + P (x₁ − S Pᵀb),   y = A₀⁻¹b,   x₁ = (S⁻¹ + K₁)⁻¹ Pᵀb,

  and S⁻¹ + K₁ = A₁ + U₁K₂U₁ᵀ has the same form with A₁ = blockdiag([[S_c1⁻¹, B], [Bᵀ,
  S_c2⁻¹]]) and U₁ = blockdiag(T_p).  Every Aₗ is symmetric positive definite when
  K̃ + βI is (S⁻¹ + K₁ is a congruence of it), so the factorisation is one Cholesky
  factorisation per node: O(n leaf_size² + n r²) once, O(n (leaf_size + r)) per solve.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from threadpoolctl import ThreadpoolController

from snacks_core.core.validation import check_count, check_data
from snacks_core.kernels.functions import check_kernel_params, kernel_matrix, resolve_gamma

BASES = ("nystrom", "interpolative")
# How a model fitted on K̃ evaluates new rows (HSSKernel.model).
EVALUATIONS = ("extension", "exact")

# Pivots of the column-pivoted QR below this fraction of the largest are numerical noise.
_NUMERICAL_RANK = 1e-8
# Power iterations for a node's principal axis.
_POWER_ITERATIONS = 8
# Rows of a node that probe which sibling rows are its nearest neighbours.
_PROBES = 32
# Every BLAS call here is on a block of at most a few hundred rows, where OpenBLAS's
# threads cost more than they save (far more on a busy machine): construction, products
# and solves run single-threaded.
_BLAS = ThreadpoolController()
# A sparse X with at most this many entries (n × d, 256 MiB in float64) is densified.
_DENSIFY_MAX_ENTRIES = 2**25
# Rows of new data whose kernel block (rows × support vectors) is formed at once.
_DECISION_BLOCK_ENTRIES = 2**22


@dataclass(frozen=True)
class HSSOptions:
    """How :class:`HSSKernel` compresses K and measures the result (checked by it, on X).

    Attributes
    ----------
    leaf_size : int
        Largest number of rows of a leaf (1 ≤ leaf_size ≤ n).
    max_rank : int
        Largest rank of an off-diagonal basis (≥ 1).
    tol : float
        Target relative accuracy in (0, 1) of the off-diagonal blocks: each node keeps the
        smallest rank whose interpolation error on its sampled kernel entries is at most
        ``tol`` times their Frobenius norm (capped by ``max_rank``).  The relative error of
        the whole approximation, measured afterwards on sampled columns, is below it
        when no rank is capped (the diagonal blocks are exact).  A target the data's
        kernel cannot meet at ``max_rank`` is reported, not met
        (``compression['target_reached']``): on high-dimensional data the off-diagonal
        blocks are nearly full rank and most bases are capped (BENCHMARKS.md, "Other
        solvers": w8a and a9a-shaped data at the defaults).
    n_samples : int, optional
        Kernel columns sampled per node for its decomposition, half among the sibling's
        nearest rows and half uniformly outside the node; defaults to 2·max_rank + 32.
    basis : {'nystrom', 'interpolative'}
        How a node's basis interpolates from its skeleton (module docstring): 'nystrom'
        keeps K̃ positive semi-definite, 'interpolative' is more accurate at equal rank.
    error_columns : int
        Kernel columns drawn to measure the relative error of K̃ after the build (0: not
        measured).
    """

    leaf_size: int = 128
    max_rank: int = 100
    tol: float = 1e-3
    n_samples: int | None = None
    basis: str = "nystrom"
    error_columns: int = 32


class HSSKernel:
    """HSS approximation K̃ of the kernel matrix of X, factorised with a shift β.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n, d)
        Training data.
    beta : float
        Shift β > 0 of the factorised K̃ + βI (the ADMM penalty).
    kernel, gamma, degree, coef0
        The kernel, as in :func:`snacks_core.kernels.functions.kernel_matrix`; ``gamma`` may be
        'scale' or 'auto', resolved on X.
    options : HSSOptions
        How K is compressed (leaf size, ranks, accuracy target, sampling, basis) and how
        many columns measure the result; checked against X here.
    random_state : int, Generator or None
        Seeds the power iterations and the column sampling.

    Attributes
    ----------
    n : int
    beta : float
    ranks : ndarray of int
        Rank of each node's basis (the root's is 0).
    nbytes : int
        Memory of the representation and its factorisation.
    compression_time, factorization_time, build_time : float
        Seconds spent building K̃, factorising K̃ + βI, and both.
    relative_error : float
        ‖K̃ − K‖_F/‖K‖_F estimated on ``error_columns`` sampled columns (NaN if none).
    compression : dict
        What the approximation achieved: ``memory_bytes`` (this representation and its
        factorisation), ``dense_bytes`` (the float64 n × n kernel), ``compression_ratio``
        (their ratio), ``mean_rank``, ``max_rank_reached``, ``ranks_capped`` (bases cut
        by ``max_rank`` before reaching ``tol``), ``target_reached`` (no basis capped),
        ``relative_error``, ``target`` (``tol``),
        ``error_columns``, ``leaf_size`` and the times.
    """

    def __init__(self, X, *, beta, kernel="rbf", gamma="scale", degree=3, coef0=1.0,
                 options=HSSOptions(), random_state=None):
        X = check_data(X)
        check_kernel_params(kernel, gamma, degree, coef0)
        n = X.shape[0]
        n_samples = _check_options(n, beta, options)
        self.basis = options.basis
        self.n, self.beta = n, float(beta)
        self.leaf_size, self.max_rank, self.tol, self.n_samples = (
            options.leaf_size,
            options.max_rank,
            options.tol,
            n_samples,
        )
        self.kernel_params = {"kernel": kernel, "gamma": resolve_gamma(gamma, X),
                              "degree": degree, "coef0": coef0}
        self.X = X
        rng = np.random.default_rng(random_state)
        self._build(X, rng)
        self._report(min(options.error_columns, n), rng)

    def _build(self, X, rng):
        """Compress K into K̃ and factorise K̃ + βI, BLAS on one thread; times both."""
        with _BLAS.limit(limits=1, user_api="blas"):
            start = time.perf_counter()
            # Thousands of small row selections: a sparse X that fits is densified first.
            work = (
                X.toarray()
                if sp.issparse(X) and X.shape[0] * X.shape[1] <= _DENSIFY_MAX_ENTRIES
                else X
            )
            self._build_tree(work, rng)
            self._Xp = work[self.perm]
            self._compress(rng)
            self.compression_time = time.perf_counter() - start
            start = time.perf_counter()
            self._factorize()
            self.factorization_time = time.perf_counter() - start
        self.build_time = self.compression_time + self.factorization_time
        del self._Xp

    def _report(self, error_columns, rng):
        """Ranks, memory and the relative error measured on ``error_columns`` columns."""
        n = self.n
        self.ranks = np.array([b.shape[1] if b is not None else 0 for b in self._basis])
        arrays = (self._factor, self._basis, self._coupling, self._P, self._S)
        self.nbytes = int(sum(a.nbytes for group in arrays for a in group if a is not None)
                          + self.perm.nbytes)
        self.relative_error = self.sampled_relative_error(error_columns, rng)
        nonroot = self.ranks[np.asarray(self._parent) >= 0]
        self.compression = {
            "memory_bytes": self.nbytes, "dense_bytes": 8 * n * n,
            "compression_ratio": 8 * n * n / self.nbytes,
            "mean_rank": float(nonroot.mean()) if nonroot.size else 0.0,
            "max_rank_reached": int(nonroot.max()) if nonroot.size else 0,
            "ranks_capped": int(self._capped), "target_reached": self._capped == 0,
            "nodes": int(nonroot.size),
            "relative_error": self.relative_error, "target": self.tol,
            "error_columns": int(error_columns), "leaf_size": self.leaf_size,
            "compression_time": self.compression_time,
            "factorization_time": self.factorization_time}

    def sampled_relative_error(self, n_columns, random_state=None):
        """‖K̃ − K‖_F/‖K‖_F estimated on ``n_columns`` columns drawn uniformly.

        K̃ e_j comes from the fast product, k(·, x_j) from the kernel; the ratio of the two
        sums of squares over the drawn columns estimates the ratio over all n.  NaN for
        no columns.
        """
        if n_columns <= 0:
            return float("nan")
        rng = np.random.default_rng(random_state)
        columns = rng.choice(self.n, n_columns, replace=False)
        unit = np.zeros((self.n, n_columns))
        unit[columns, np.arange(n_columns)] = 1.0
        approximate = self.matvec(unit)
        exact = kernel_matrix(self.X, self.X[columns], dtype=np.float64, **self.kernel_params)
        return float(np.linalg.norm(approximate - exact) / np.linalg.norm(exact))

    # ------------------------------------------------------------------ construction

    def _kernel(self, rows, cols):
        return kernel_matrix(self._Xp[rows], self._Xp[cols], dtype=np.float64, **self.kernel_params)

    def _build_tree(self, X, rng):
        """Recursive principal-axis bisection; nodes are ranges of the permutation."""
        self.perm = np.arange(self.n)
        self._start, self._stop, self._children, self._parent = [], [], [], []
        self._split = []
        self._postorder = []

        def build(start, stop, parent):
            node = len(self._start)
            self._start.append(start)
            self._stop.append(stop)
            self._children.append(None)
            self._parent.append(parent)
            self._split.append(None)
            if stop - start > self.leaf_size:
                rows = self.perm[start:stop]
                projection, axis, shift = _principal_projection(X[rows], rng)
                order = np.argsort(projection, kind="stable")
                self.perm[start:stop] = rows[order]
                middle = (start + stop) // 2
                ranked = projection[order]
                # New rows go left below the midpoint of the two middle projections.
                threshold = 0.5 * (ranked[middle - start - 1] + ranked[middle - start])
                self._split[node] = (axis, shift, threshold)
                self._children[node] = (build(start, middle, node), build(middle, stop, node))
            self._postorder.append(node)
            return node

        build(0, self.n, -1)

    def _sibling(self, node):
        left, right = self._children[self._parent[node]]
        return right if node == left else left

    def _sample_columns(self, node, candidates, rng):
        """Columns outside the node: its approximate nearest neighbours, and uniform ones.

        The neighbours are searched in a pool drawn from the sibling and from the sibling
        of every ancestor (up to ``n_samples`` rows from each): for a local kernel, the
        entries that matter in K(R_τ, I_τᶜ) sit in the rows nearest to τ, which the tree
        puts in the sibling but also in cousins across earlier splits.
        """
        start, stop = self._start[node], self._stop[node]
        outside = self.n - (stop - start)
        if outside <= self.n_samples:
            return np.concatenate([np.arange(0, start), np.arange(stop, self.n)])
        pool = []
        current = node
        while self._parent[current] >= 0:
            sibling = self._sibling(current)
            rows = np.arange(self._start[sibling], self._stop[sibling])
            if rows.shape[0] > self.n_samples:
                rows = rng.choice(rows, self.n_samples, replace=False)
            pool.append(rows)
            current = self._parent[current]
        pool = np.concatenate(pool)
        n_near = min(self.n_samples // 2, pool.shape[0])
        near = pool
        if n_near < pool.shape[0]:
            probes = (candidates if candidates.shape[0] <= _PROBES
                      else rng.choice(candidates, _PROBES, replace=False))
            closeness = self._kernel(pool, probes).max(axis=1)
            near = pool[np.argpartition(-closeness, n_near)[:n_near]]
        draws = rng.choice(outside, self.n_samples - n_near, replace=False)
        far = np.where(draws < start, draws, draws + (stop - start))
        return np.union1d(near, far)

    def _compress(self, rng):
        """Skeletons and nested interpolation bases, bottom-up; sibling couplings B."""
        nodes = len(self._start)
        self._skeleton = [None] * nodes
        self._basis = [None] * nodes
        self._coupling = [None] * nodes
        self._leaf_block = [None] * nodes
        self._capped = 0
        for node in self._postorder:
            children = self._children[node]
            if children is None:
                candidates = np.arange(self._start[node], self._stop[node])
                self._leaf_block[node] = self._kernel(candidates, candidates)
            else:
                left, right = children
                candidates = np.concatenate([self._skeleton[left], self._skeleton[right]])
                self._coupling[node] = self._kernel(self._skeleton[left], self._skeleton[right])
            if self._parent[node] < 0:
                continue
            columns = self._sample_columns(node, candidates, rng)
            F = self._kernel(candidates, columns)
            R, pivots, rank, capped = _pivoted_qr(F, self.tol, self.max_rank)
            if self.basis == "nystrom":
                rank, capped, basis = self._nystrom_rank(F, R, candidates, pivots, rank, capped)
            else:
                basis = _interpolation_matrix(R, pivots, rank)
            self._capped += capped
            keep = pivots[:rank]
            self._basis[node] = basis
            self._skeleton[node] = candidates[keep]

    def _nystrom_rank(self, F, R, candidates, pivots, rank, capped):
        """The rank at which the Nyström basis itself meets ``tol`` on the sampled entries.

        The interpolative decomposition's rank is a lower bound: interpolating through the
        kernel, K(R, Ĩ) K(Ĩ, Ĩ)⁻¹, needs more skeleton rows than the decomposition's own
        coefficients for the same accuracy (on two moons, by orders of magnitude at the
        decomposition's rank).  Along the pivot order
        the rank grows by half until ‖F − U F(Ĩ, :)‖_F ≤ tol·‖F‖_F or ``max_rank`` (or
        every candidate) is reached, or the numerical rank of F (pivots above 10⁻⁸ of the
        largest: further rows are near-copies, e.g. the repeated rows of binary data, and
        would make K(Ĩ, Ĩ) singular).  Returns (rank, capped, basis).
        """
        pivots_size = np.abs(np.diag(R))
        numerical = (
            int(np.sum(pivots_size > _NUMERICAL_RANK * pivots_size[0])) if pivots_size[0] > 0 else 1
        )
        limit = max(rank, min(self.max_rank, candidates.shape[0], numerical))
        target = self.tol * np.linalg.norm(F)
        while True:
            keep = pivots[:rank]
            basis = _nystrom_interpolation(self._kernel(candidates, candidates[keep]), keep)
            if np.linalg.norm(F - basis @ F[keep]) <= target or rank >= limit:
                break
            rank = min(limit, max(rank + 1, (3 * rank) // 2))
        missed = np.linalg.norm(F - basis @ F[keep]) > target
        return rank, bool(capped or (missed and rank >= self.max_rank)), basis

    def _factorize(self):
        """Cholesky factorisation of each level's block-diagonal part (module docstring).

        A leaf's block D_τ + βI is overwritten by its factor L (D_τ v = L(Lᵀv) − βv).
        """
        nodes = len(self._start)
        self._factor = [None] * nodes
        self._P = [None] * nodes
        self._S = [None] * nodes
        inverse_S = [None] * nodes
        for node in self._postorder:
            children = self._children[node]
            if children is None:
                A = self._leaf_block[node]
                A[np.diag_indices_from(A)] += self.beta
                self._leaf_block[node] = None
            else:
                left, right = children
                B = self._coupling[node]
                A = np.block([[inverse_S[left], B], [B.T, inverse_S[right]]])
                inverse_S[left] = inverse_S[right] = None
            try:
                factor = scipy.linalg.cholesky(A, lower=True, overwrite_a=True, check_finite=False)
            except np.linalg.LinAlgError:
                raise ValueError(
                    "The HSS approximation K̃ + βI is not positive definite (K̃ has "
                    "eigenvalues below −β at this tolerance): tighten tol, raise max_rank "
                    "or n_samples, or increase beta.") from None
            self._factor[node] = factor
            if self._parent[node] < 0:
                continue
            basis = self._basis[node]
            W = scipy.linalg.cho_solve((factor, True), basis, check_finite=False)
            S = basis.T @ W
            self._S[node] = 0.5 * (S + S.T)
            inverse = scipy.linalg.inv(self._S[node], check_finite=False)
            inverse_S[node] = 0.5 * (inverse + inverse.T)
            self._P[node] = W @ inverse_S[node]
        del self._leaf_block

    # ------------------------------------------------------------------ operations

    def matvec(self, v):
        """K̃ v for a vector or an (n, r) block of vectors."""
        with _BLAS.limit(limits=1, user_api="blas"):
            return self._matvec(np.asarray(v, dtype=np.float64))

    def _matvec(self, v):
        vp = v[self.perm].reshape(self.n, -1)
        incoming = self._far_field(vp)
        out = np.empty_like(vp)
        for node in self._postorder:
            if self._children[node] is not None:
                continue
            local = vp[self._start[node]:self._stop[node]]
            L = self._factor[node]
            product = L @ (L.T @ local) - self.beta * local
            if incoming[node] is not None:
                product += self._basis[node] @ incoming[node]
            out[self._start[node]:self._stop[node]] = product
        return self._unpermute(out, v.shape)

    def _far_field(self, vp):
        """Per node, the skeleton coordinates of K̃'s product with the rows outside it.

        For a leaf τ, (K̃ v)_τ = D_τ v_τ + U_τ incoming[τ] (None for the root alone).
        """
        up = self._upward(vp)
        incoming = [None] * len(self._start)
        for node in reversed(self._postorder):
            children = self._children[node]
            if children is None:
                continue
            left, right = children
            B = self._coupling[node]
            product = np.vstack([B @ up[right], B.T @ up[left]])
            if incoming[node] is not None:
                product += self._basis[node] @ incoming[node]
            split = self._skeleton[left].shape[0]
            incoming[left], incoming[right] = product[:split], product[split:]
        return incoming

    def _upward(self, vp):
        """Skeleton coordinates v̂_τ = U_τᵀ v_τ of every node (nested: T_pᵀ [v̂_c1; v̂_c2])."""
        up = [None] * len(self._start)
        for node in self._postorder:
            if self._parent[node] < 0:
                continue
            children = self._children[node]
            if children is None:
                local = vp[self._start[node]:self._stop[node]]
            else:
                local = np.vstack([up[c] for c in children])
            up[node] = self._basis[node].T @ local
        return up

    def solve(self, b):
        """(K̃ + βI)⁻¹ b for a vector or an (n, r) block of vectors."""
        with _BLAS.limit(limits=1, user_api="blas"):
            return self._solve(np.asarray(b, dtype=np.float64))

    def _solve(self, b):
        bp = b[self.perm].reshape(self.n, -1)
        y = [None] * len(self._start)
        reduced = [None] * len(self._start)
        solution = None
        for node in self._postorder:
            children = self._children[node]
            if children is None:
                local = bp[self._start[node]:self._stop[node]]
            else:
                local = np.vstack([reduced[c] for c in children])
            y[node] = scipy.linalg.cho_solve((self._factor[node], True), local, check_finite=False)
            if self._parent[node] < 0:
                solution = y[node]
            else:
                reduced[node] = self._P[node].T @ local
        out = np.empty_like(bp)
        incoming = [None] * len(self._start)
        incoming[self._postorder[-1]] = solution
        for node in reversed(self._postorder):
            x = incoming[node]
            children = self._children[node]
            if children is None:
                out[self._start[node]:self._stop[node]] = x
                continue
            left, right = children
            k_left = self._skeleton[left].shape[0]
            for child, part in ((left, x[:k_left]), (right, x[k_left:])):
                incoming[child] = y[child] + self._P[child] @ (
                    part - self._S[child] @ reduced[child]
                )
        return self._unpermute(out, b.shape)

    def _unpermute(self, out_permuted, shape):
        out = np.empty_like(out_permuted)
        out[self.perm] = out_permuted
        return out.reshape(shape)

    def decision(self, X_new, coef, evaluation="extension"):
        """Σ_j coef_j k̃(x, x_j) on new rows, with the ``evaluation`` of :meth:`model`."""
        return self.model(coef, evaluation).decision(X_new)

    def exact_decision(self, X_new, coef):
        """Σ_j coef_j k(x_j, x) with the exact kernel (the paper's Algorithm 3, line 18)."""
        return kernel_expansion(X_new, self.X, coef, self.kernel_params)

    def model(self, coef, evaluation="extension"):
        """The function x ↦ Σ_j coef_j k̃(x, x_j) for new rows.

        With ``evaluation='exact'``, k̃ = k on new rows (the paper's Algorithm 3, line 18):
        a :class:`KernelExpansion` over the rows with a non-zero coefficient.  That is
        right when K̃ is accurate, but a model fitted on an inaccurate K̃ must be evaluated
        with K̃: with the exact kernel, the error of every far block adds up over
        thousands of support vectors (BENCHMARKS.md, "Other solvers": on w8a the exact
        kernel ruins a converged model, on a9a-shaped data it is the better of the two).
        :func:`snacks_core.solvers.admm.solve` picks one per fit from the hinge loss on
        sampled training rows.

        ``evaluation='extension'`` (default) extends K̃ to a new row x as the training
        rows of its leaf do: x is routed down
        the cluster tree by the same principal-axis splits, k̃(x, ·) is exact on the rows
        of its leaf τ and interpolated through τ's skeleton Ĩ_τ elsewhere,

            f(x) = k(x, X_τ) c_τ + k(x, Ĩ_τ) K(Ĩ_τ, Ĩ_τ)⁻¹ g_τ,

        g_τ the skeleton coordinates of the far field of c (for a training row of τ and
        Nyström bases this is exactly (K̃c)_i).  ``coef`` of shape (n,) or (n, r).
        Returns a :class:`HSSModel`: a block-sparse linear map, leaf_size + rank kernel
        evaluations per new row instead of one per support vector.
        """
        if evaluation not in EVALUATIONS:
            raise ValueError(f"evaluation must be one of {EVALUATIONS}, got {evaluation!r}.")
        coef = np.asarray(coef, dtype=np.float64)
        if evaluation == "exact":
            return KernelExpansion(self.X, coef, self.kernel_params)
        width = coef.reshape(self.n, -1).shape[1]
        with _BLAS.limit(limits=1, user_api="blas"):
            vp = coef[self.perm].reshape(self.n, width)
            incoming = self._far_field(vp)
            columns, weights, offsets = [], [], [0]
            for node in self._postorder:
                if self._children[node] is not None:
                    continue
                rows = np.arange(self._start[node], self._stop[node])
                block = [vp[rows]]
                columns.append(rows)
                if incoming[node] is not None:
                    skeleton = self._skeleton[node]
                    core = kernel_matrix(self.X[self.perm[skeleton]], self.X[self.perm[skeleton]],
                                         dtype=np.float64, **self.kernel_params)
                    core[np.diag_indices_from(core)] += 1e-12 * max(
                        float(core.diagonal().max()), 1e-300
                    )
                    block.append(
                        scipy.linalg.cho_solve(
                            scipy.linalg.cho_factor(core, check_finite=False),
                            incoming[node],
                            check_finite=False,
                        )
                    )
                    columns.append(skeleton)
                weights.append(np.vstack(block))
                offsets.append(offsets[-1] + sum(b.shape[0] for b in block))
        leaves = [node for node in self._postorder if self._children[node] is None]
        return HSSModel(self, leaves, self.perm[np.concatenate(columns)], np.vstack(weights),
                        np.asarray(offsets), coef.ndim == 1)

    def route(self, X_new):
        """The leaf (node index) of each new row, by the tree's principal-axis splits."""
        X_new = check_data(X_new)
        node_of = np.zeros(X_new.shape[0], dtype=np.int64)
        root = self._postorder[-1]
        node_of[:] = root
        pending = [(root, np.arange(X_new.shape[0]))]
        while pending:
            node, rows = pending.pop()
            if self._children[node] is None or rows.shape[0] == 0:
                node_of[rows] = node
                continue
            axis, shift, threshold = self._split[node]
            projection = np.asarray(X_new[rows] @ axis).ravel() - shift
            left, right = self._children[node]
            pending.append((left, rows[projection < threshold]))
            pending.append((right, rows[projection >= threshold]))
        return node_of


class HSSModel:
    """f(x) = k(x, X_τ) c_τ + k(x, Ĩ_τ) w_τ for the leaf τ of x: :meth:`HSSKernel.model`.

    As a feature map, ``transform(X)`` is the block-sparse matrix of these kernel values
    (n_new × the stacked leaf rows and skeletons, CSR) and ``weights`` the stacked
    (c_τ; w_τ), so that f = transform(X) @ weights.

    Attributes
    ----------
    landmark_indices_ : ndarray of int
        Training rows the features are kernels against (leaf rows and skeletons).
    landmarks_ : ndarray or CSR matrix
        Those rows.
    weights : ndarray of shape (n_features,) or (n_features, r)
    """

    def __init__(self, operator, leaves, indices, weights, offsets, vector):
        self.kernel_params = operator.kernel_params
        self._operator = operator
        self._leaves = leaves
        self._slot = {leaf: k for k, leaf in enumerate(leaves)}
        self.landmark_indices_ = indices
        self.landmarks_ = operator.X[indices]
        self._offsets = offsets
        self.weights = weights[:, 0] if vector else weights

    def transform(self, X_new):
        """Block-sparse k̃ features of new rows (CSR, n_new × len(landmark_indices_))."""
        X_new = check_data(X_new)
        leaf_of = self._operator.route(X_new)
        order = np.argsort(leaf_of, kind="stable")
        data, indices, counts = [], [], np.zeros(X_new.shape[0], dtype=np.int64)
        bounds = np.flatnonzero(np.diff(leaf_of[order])) + 1
        for rows in np.split(order, bounds) if order.shape[0] else []:
            slot = self._slot[int(leaf_of[rows[0]])]
            start, stop = self._offsets[slot], self._offsets[slot + 1]
            block = kernel_matrix(X_new[rows], self.landmarks_[start:stop], dtype=np.float64,
                                  **self.kernel_params)
            data.append(block.ravel())
            indices.append(np.tile(np.arange(start, stop, dtype=np.int32), rows.shape[0]))
            counts[rows] = stop - start
        # Rows were grouped by leaf: build in that order, then put them back in place.
        indptr = np.concatenate([[0], np.cumsum(counts[order])])
        grouped = sp.csr_matrix((np.concatenate(data) if data else np.zeros(0),
                                 np.concatenate(indices) if indices else np.zeros(0, np.int32),
                                 indptr),
                                shape=(X_new.shape[0], self.landmark_indices_.shape[0]))
        return grouped[np.argsort(order)]

    def decision(self, X_new):
        """f(x) for every new row: shape (n_new,) or (n_new, r), in row blocks."""
        X_new = check_data(X_new)
        block = max(
            1, _DECISION_BLOCK_ENTRIES // max(1, self.weights.shape[0] // len(self._leaves))
        )
        parts = [np.asarray(self.transform(X_new[start:start + block]) @ self.weights)
                 for start in range(0, X_new.shape[0], block)]
        return np.concatenate(parts) if parts else np.zeros((0,) + self.weights.shape[1:])


class KernelExpansion:
    """f(x) = Σ_j weights_j k(x, x_j) over the training rows with a non-zero coefficient.

    The same interface as :class:`HSSModel`: ``transform(X)`` is the kernel block against
    those rows (``landmarks_``), ``weights`` their coefficients.
    """

    def __init__(self, X, coef, kernel_params):
        weights = coef.reshape(coef.shape[0], -1)
        self.landmark_indices_ = np.flatnonzero(np.any(weights != 0.0, axis=1))
        self.landmarks_ = X[self.landmark_indices_]
        self.kernel_params = kernel_params
        self.weights = coef[self.landmark_indices_]

    def transform(self, X_new):
        return kernel_matrix(check_data(X_new), self.landmarks_, dtype=np.float64,
                             **self.kernel_params)

    def decision(self, X_new):
        """f(x) for every new row: shape (n_new,) or (n_new, r), in row blocks."""
        return kernel_expansion(X_new, self.landmarks_, self.weights, self.kernel_params)


def compression_table(X, *, targets=(1e-2, 1e-3, 1e-4), kernel="rbf", gamma="scale", degree=3,
                      coef0=1.0, leaf_size=None, max_rank=300, beta=1.0, random_state=0):
    """The HSS compression of X's kernel matrix for several target accuracies.

    One :class:`HSSKernel` per target ``tol`` (ranks chosen from it, see the class); each
    row holds its :attr:`HSSKernel.compression` report (memory against the dense n × n
    kernel, ranks, relative error measured on sampled columns, times).  ``leaf_size``
    defaults to n/16 within [32, 1024], so that small data still has a tree to compress.
    """
    X = check_data(X)
    n = X.shape[0]
    if leaf_size is None:
        leaf_size = int(min(1024, max(32, n // 16), n))
    rows = []
    for target in targets:
        options = HSSOptions(leaf_size=leaf_size, max_rank=max_rank, tol=float(target))
        operator = HSSKernel(X, beta=beta, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                             options=options, random_state=random_state)
        rows.append(dict(operator.compression))
    return rows


def kernel_expansion(X_new, X_train, coef, kernel_params):
    """Σ_j coef_j k(x_j, x) for every row x of ``X_new``, in row blocks, zero terms skipped.

    ``coef`` of shape (n,) gives shape (n_new,); of shape (n, r), r expansions at once.
    """
    coef = np.asarray(coef, dtype=np.float64)
    weights = coef.reshape(coef.shape[0], -1)
    keep = np.flatnonzero(np.any(weights != 0.0, axis=1))
    X_new = check_data(X_new)
    out = np.zeros((X_new.shape[0], weights.shape[1]))
    if keep.shape[0]:
        support, weights = X_train[keep], weights[keep]
        block = max(1, _DECISION_BLOCK_ENTRIES // keep.shape[0])
        for start in range(0, X_new.shape[0], block):
            rows = X_new[start:start + block]
            out[start:start + block] = kernel_matrix(rows, support, dtype=np.float64,
                                                     **kernel_params) @ weights
    return out.reshape((X_new.shape[0],) + coef.shape[1:])


def _check_options(n, beta, options):
    """Refuse a bad shift β or :class:`HSSOptions` for n rows; returns ``n_samples``
    (2·max_rank + 32 by default)."""
    leaf_size, max_rank, tol, n_samples, basis, error_columns = (
        options.leaf_size, options.max_rank, options.tol, options.n_samples, options.basis,
        options.error_columns)
    if isinstance(beta, bool) or not np.isscalar(beta) or not np.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta must be a positive finite number, got {beta!r}.")
    check_count(leaf_size, "leaf_size")
    if leaf_size > n:
        raise ValueError(f"leaf_size={leaf_size} is larger than the number of rows n = {n}; "
                         "choose a leaf size between 1 and n.")
    check_count(max_rank, "max_rank")
    if isinstance(tol, bool) or not np.isscalar(tol) or not np.isfinite(tol) or not 0 < tol < 1:
        raise ValueError(f"tol must be a number in (0, 1), got {tol!r}.")
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}, got {basis!r}.")
    n_samples = 2 * max_rank + 32 if n_samples is None else n_samples
    check_count(n_samples, "n_samples")
    if (isinstance(error_columns, bool) or not isinstance(error_columns, numbers.Integral)
            or error_columns < 0):
        raise ValueError(f"error_columns must be an integer >= 0, got {error_columns!r}.")
    return n_samples


def _principal_projection(X, rng):
    """Projection of the rows of X (dense or CSR) on their principal axis, centred.

    Returns (projection, axis, shift) with projection = X·axis − shift.
    """
    mean = np.asarray(X.mean(axis=0)).ravel()
    v = rng.standard_normal(X.shape[1])
    for _ in range(_POWER_ITERATIONS):
        p = np.asarray(X @ v).ravel() - mean @ v
        v = np.asarray(X.T @ p).ravel() - mean * p.sum()
        norm = np.linalg.norm(v)
        if norm == 0.0:
            break
        v /= norm
    return np.asarray(X @ v).ravel() - mean @ v, v, float(mean @ v)


def _nystrom_interpolation(K_rows_skeleton, keep):
    """U = K(R, Ĩ) K(Ĩ, Ĩ)⁻¹ from K(R, Ĩ), Ĩ the rows ``keep`` of R.

    A relative jitter of 1e-12 keeps the solve defined for nearly repeated skeleton rows;
    the Schur complement K(R, R) − U K(Ĩ, Ĩ) Uᵀ stays positive semi-definite with it.
    """
    core = K_rows_skeleton[keep].copy()
    core[np.diag_indices_from(core)] += 1e-12 * max(float(np.max(np.diag(core))), 1e-300)
    factor = scipy.linalg.cho_factor(core, check_finite=False)
    return scipy.linalg.cho_solve(factor, K_rows_skeleton.T, check_finite=False).T


def _pivoted_qr(F, tol, max_rank):
    """Column-pivoted QR of Fᵀ and the rank kept for a relative accuracy ``tol``.

    With Fᵀ P = Q R, the row interpolative decomposition of rank k leaves the error
    ‖F − U F[pivots[:k]]‖_F = ‖R[k:, k:]‖_F, the norm of R's last rows; the rank is the
    smallest k ≥ 1 with that error at most ``tol``·‖F‖_F, capped at ``max_rank``.
    Returns (R, pivots, rank, capped) where ``capped`` says whether the cap cut it.
    """
    R, pivots = scipy.linalg.qr(F.T, mode="r", pivoting=True, check_finite=False)
    row_norms = np.einsum("ij,ij->i", R, R)
    # tail[k] = ‖R[k:, k:]‖²_F (R is upper trapezoidal), tail[0] = ‖F‖²_F.
    tail = np.concatenate([np.cumsum(row_norms[::-1])[::-1], [0.0]])
    needed = int(np.argmax(tail <= tol * tol * tail[0])) if tail[0] > 0 else 1
    needed = max(1, needed)
    return R, pivots, min(needed, max_rank), needed > max_rank


def _interpolation_matrix(R, pivots, rank):
    """U of the row interpolative decomposition F ≈ U F[pivots[:rank]], from Fᵀ's QR.

    U has the identity on the kept rows and (R₁₁⁻¹R₁₂)ᵀ on the others.
    """
    rows = R.shape[1]
    U = np.zeros((rows, rank))
    U[pivots[:rank], np.arange(rank)] = 1.0
    if rank < rows and R[0, 0] != 0.0:
        U[pivots[rank:]] = scipy.linalg.solve_triangular(R[:rank, :rank], R[:rank, rank:],
                                                         check_finite=False).T
    return U
