"""The exact kernel SVM (no Nyström approximation) by LIBSVM's SMO, through scikit-learn.

LIBSVM solves, with C = 1/(2nλ) and kernel k, the problem with an unregularised intercept

    F(f) = (1/n) Σ_i s_i max(0, 1 − y_i f(x_i)) + λ ‖h‖²_H,    f = h + b,  h ∈ H,

whose minimiser is f(x) = Σ_j α_j y_j k(x_j, x) + b.  It is the "optimal" reference of the
Snacks paper's tables (Section III, LibSVM column); the Nyström problem
(Primal Nyström L2-SVM) approaches it as the number of landmarks grows.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils import check_array

from snacks_core.kernels.functions import check_kernel_params, kernel_matrix, resolve_gamma
from snacks_core.solvers.base import (
    CONVERGED,
    HISTORY_COLUMNS,
    MAX_ITER,
    SolverResult,
    check_problem,
)
from snacks_core.solvers.objective import lam_to_C

# Our kernel names (see kernels.py) → LIBSVM's built-in kernels; the laplacian is precomputed.
_NATIVE_KERNELS = {"rbf": "rbf", "polynomial": "poly", "linear": "linear"}
_MAX_PRECOMPUTED_BYTES = 2 * 1024**3


def fit_reporting_convergence(estimator, X, y, sample_weight=None) -> bool:
    """Fit a scikit-learn estimator; True unless it raised a ConvergenceWarning.

    The warning is consumed (callers report it as a stop reason); other warnings are
    passed on unchanged.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y, sample_weight=sample_weight)
    converged = True
    for warning in caught:
        if issubclass(warning.category, ConvergenceWarning):
            converged = False
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return converged


def solve(
    X,
    y,
    lam,
    *,
    kernel="rbf",
    gamma,
    degree=3,
    coef0=1.0,
    sample_weight=None,
    tol=1e-3,
    max_iter=-1,
    cache_size=2000,
    validation=None,
):
    """Minimise the exact kernel SVM objective with LIBSVM (``sklearn.svm.SVC``).

    The objective is F = (1/n) Σ s_i max(0, 1 − y_i f(x_i)) + λ‖h‖²_H with
    f(x) = Σ_j dual_coef_j k(x_sv_j, x) + intercept and ‖h‖²_H = dual_coefᵀ K_sv dual_coef,
    i.e. LIBSVM's ½‖h‖² + C Σ s_i ξ_i scaled by 2λ, with C = 1/(2nλ).  RBF, polynomial
    and linear kernels use LIBSVM's own implementation; the Laplacian kernel, which LIBSVM
    lacks, is precomputed as an n × n matrix.  Snacks paper, Section III (LibSVM).

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n, d)
        Training data.
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    lam : float
        Regularisation λ > 0.
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear'}
        Kernel k, with the parameters below as in
        :func:`snacks_core.kernels.functions.kernel_matrix`.
    gamma : float or {'scale', 'auto'}
        Kernel scale γ > 0, or a rule resolved on ``X`` as scikit-learn does
        (:func:`snacks_core.kernels.functions.resolve_gamma`).
    degree : int
        Degree p of the polynomial kernel (γ⟨x, x'⟩ + c₀)^p.
    coef0 : float
        Offset c₀ of the polynomial kernel.
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights s_i (LIBSVM's per-sample C_i = C s_i).
    tol : float
        LIBSVM's tolerance on the KKT conditions.
    max_iter : int
        Limit on SMO iterations; −1 for none.
    cache_size : float
        LIBSVM's kernel cache in MB, allocated as it fills (scikit-learn's default of 200
        recomputes kernel columns on w8a-sized data: far slower, see BENCHMARKS.md,
        bench_solvers).
    validation : tuple (X_val, y_val), optional
        Held-out raw data whose error rate is recorded.

    Returns
    -------
    SolverResult
        ``support`` holds the rows of ``X`` that are support vectors (int64), ``coef``
        their α_j y_j, ``intercept`` b; one history checkpoint after the fit, whose time
        is the fit time, whose objective is F above and whose gap is the certified
        duality gap F − (2λ Σ_j α_j − λ‖h‖²_H).  SMO iterations are not passes over the
        data, so ``epoch`` and ``n_epochs`` are NaN.  ``stop_reason`` is ``'converged'``
        or ``'max_iter'``.

    Raises
    ------
    ValueError
        On bad input, an unknown kernel, or a Laplacian kernel whose n × n matrix would
        exceed 2 GiB (use the Nyström embedding for such n).
    """
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32))
    n = X.shape[0]
    # X may be sparse, so check_problem sees an empty dense stand-in with X's row count.
    _, y, sample_weight = check_problem(np.empty((n, 0)), y, lam, sample_weight)
    check_kernel_params(kernel, gamma, degree, coef0)
    kernel_params = {"gamma": resolve_gamma(gamma, X), "degree": degree, "coef0": coef0}
    precomputed = kernel not in _NATIVE_KERNELS
    if precomputed and 8 * n * n > _MAX_PRECOMPUTED_BYTES:
        raise ValueError(
            f"The exact {kernel} kernel SVM needs an n × n kernel matrix: "
            f"{8 * n * n / 1024**3:.1f} GiB for n = {n}, above the 2 GiB limit. "
            "Subsample the data or use the Nyström embedding."
        )
    model, fitted_on, converged, fit_time = _fit_svc(
        X, y, lam, sample_weight, kernel, kernel_params, tol=tol, max_iter=max_iter,
        cache_size=cache_size)
    support = model.support_.astype(np.int64)
    dual_coef = _dual_coef(model)
    intercept = float(model.intercept_[0])
    decision = model.decision_function(fitted_on)
    objective, gap = _certificate(decision, support, dual_coef, intercept, y, lam, sample_weight)
    validation_error = np.nan
    if validation is not None:
        scores = _kernel_scores(validation[0], X[support], dual_coef, kernel, kernel_params)
        validation_error = float(np.mean(np.sign(scores + intercept) != np.ravel(validation[1])))
    n_iter = int(model.n_iter_[0])
    checkpoint = (n_iter, np.nan, fit_time, objective, gap, validation_error)
    return SolverResult(
        coef=dual_coef,
        history={
            name: np.array([value], dtype=np.float64)
            for name, value in zip(HISTORY_COLUMNS, checkpoint, strict=False)
        },
        n_iter=n_iter,
        n_epochs=np.nan,
        stop_reason=CONVERGED if converged else MAX_ITER,
        intercept=intercept,
        support=support,
    )


def _fit_svc(X, y, lam, sample_weight, kernel, kernel_params, **svc_options):
    """``sklearn.svm.SVC`` fitted on X, or on its kernel matrix K for a kernel LIBSVM lacks.

    Returns the model, what it was fitted on (X or K: its ``decision_function`` takes the
    same), whether it converged, and the seconds spent (forming K included).
    """
    precomputed = kernel not in _NATIVE_KERNELS
    model = SVC(C=lam_to_C(lam, X.shape[0]),
                kernel="precomputed" if precomputed else _NATIVE_KERNELS[kernel],
                **svc_options, **kernel_params)
    start = time.perf_counter()
    K = kernel_matrix(X, X, kernel, dtype=np.float64, **kernel_params) if precomputed else None
    converged = fit_reporting_convergence(model, X if K is None else K, y, sample_weight)
    return model, X if K is None else K, converged, time.perf_counter() - start


def _kernel_scores(X_new, support_rows, dual_coef, kernel, kernel_params):
    """Σ_j dual_coef_j k(x_j, x) for every row x of ``X_new`` (checked as X is)."""
    X_new = check_array(X_new, accept_sparse="csr", dtype=(np.float64, np.float32))
    return kernel_matrix(X_new, support_rows, kernel, **kernel_params) @ dual_coef


def _dual_coef(model):
    """The fitted SVC's α_j y_j as a float64 vector (SVC keeps them sparse when it was
    fitted on sparse data)."""
    dual_coef_matrix = model.dual_coef_
    if sp.issparse(dual_coef_matrix):
        dual_coef_matrix = dual_coef_matrix.toarray()
    return np.ravel(dual_coef_matrix).astype(np.float64)


def _certificate(decision, support, dual_coef, intercept, y, lam, sample_weight):
    """F of the fitted model, whose values on the training rows are ``decision``, and its
    duality gap F − (2λ Σ_j α_j − λ‖h‖²_H)."""
    n = y.shape[0]
    sample_weight = np.ones(n) if sample_weight is None else sample_weight
    # dual_coefᵀ K_sv dual_coef without K_sv: h(x_j) = f(x_j) − b on the support vectors.
    norm2 = float(dual_coef @ (decision[support] - intercept))
    objective = float(np.mean(sample_weight * np.maximum(0.0, 1.0 - y * decision))) + lam * norm2
    dual = 2.0 * lam * float(np.abs(dual_coef).sum()) - lam * norm2
    return objective, objective - dual
