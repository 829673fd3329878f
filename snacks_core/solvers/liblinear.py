"""LIBLINEAR's dual coordinate descent on the Nyström L2-SVM, through scikit-learn.

Minimises

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²,

which is LIBLINEAR's L1-loss SVM ½‖w‖² + C Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) divided by
nC, with C = 1/(2nλ) and no intercept.  The Snacks paper (Section II-B, Tables III–VII)
runs LIBLINEAR on the same embedding as a dual baseline (Hsieh et al., ICML 2008).
"""

from __future__ import annotations

import warnings

from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from ..objective import lam_to_C
from .base import HistoryRecorder, SolverResult, check_problem, resolve_seed


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
    Z,
    y,
    lam,
    *,
    sample_weight=None,
    max_epochs=1000,
    tol=1e-4,
    random_state=None,
    validation=None,
    callback=None,
):
    """Minimise F(w) = (1/n) Σ s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ‖w‖² with LIBLINEAR.

    Runs ``sklearn.svm.LinearSVC(loss='hinge', dual=True, fit_intercept=False)`` with
    C = 1/(2nλ): dual coordinate descent (Hsieh et al. 2008), the LIBLINEAR baseline of
    the Snacks paper (Section II-B).

    Parameters
    ----------
    Z : ndarray of shape (n, m), float32 or float64
        Embedded data (e.g. the Nyström embedding).
    y : ndarray of shape (n,)
        Labels in {−1, +1}.
    lam : float
        Regularisation λ > 0.
    sample_weight : ndarray of shape (n,), optional
        Non-negative weights s_i (LIBLINEAR's per-sample C_i = C s_i).
    max_epochs : int
        LIBLINEAR's ``max_iter``: passes of coordinate descent over the dual variables.
    tol : float
        LIBLINEAR's stopping tolerance on the projected dual gradient.
    random_state : None, int or numpy generator
        Seed of the coordinate order.
    validation : tuple (Z_val, y_val), optional
        Held-out embedded data whose error rate is recorded.
    callback : callable, optional
        Called as ``callback(row, w)`` at the single checkpoint.

    Returns
    -------
    SolverResult
        The weights, one history checkpoint after the fit (its time is the fit time),
        ``n_iter`` and ``n_epochs`` from LIBLINEAR's ``n_iter_``; ``stop_reason`` is
        ``'converged'`` or ``'max_iter'``.
    """
    Z, y, sample_weight = check_problem(Z, y, lam, sample_weight)
    model = LinearSVC(
        C=lam_to_C(lam, Z.shape[0]),
        loss="hinge",
        dual=True,
        fit_intercept=False,
        tol=tol,
        max_iter=max_epochs,
        random_state=resolve_seed(random_state),
    )
    recorder = HistoryRecorder(Z, y, lam, sample_weight, validation, callback)
    converged = fit_reporting_convergence(model, Z, y, sample_weight)
    coef = model.coef_.ravel().copy()
    n_iter = int(model.n_iter_)
    recorder.record(coef, n_iter, n_iter)
    return SolverResult(
        coef=coef,
        history=recorder.as_arrays(),
        n_iter=n_iter,
        n_epochs=float(n_iter),
        stop_reason="converged" if converged else "max_iter",
    )
