"""Input checks shared by every entry point: data, counts, λ, non-numeric values.

Memory probing and the check that an array fits are in :mod:`snacks_core.core.memory`.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data


def check_data(X, *, name="X", allow_sparse=True):
    """A 2-D float array (or CSR matrix) with finite values; clear errors otherwise."""
    if sp.issparse(X):
        if not allow_sparse:
            raise ValueError(f"{name} is sparse but a dense array is needed here.")
        X = sp.csr_matrix(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        values = X.data
    else:
        try:
            X = np.asarray(X)
            if X.dtype.kind not in "fiub":
                X = X.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{name} must be numeric; it holds values that are not numbers ({exc}). "
                "Encode categorical columns as numbers first."
            ) from None
        if X.dtype.kind != "f":
            X = X.astype(np.float64)
        values = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}.")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape}); at least one row and column "
                         "are needed.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first.")
    return X


def clip_n_components(n_components, n_samples) -> int:
    """The number of landmarks m, clipped to n with a warning; m < 1 or non-integer is an error."""
    if (isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer))
            or n_components < 1):
        raise ValueError(f"n_components (m) must be an integer >= 1, got {n_components!r}.")
    if n_components > n_samples:
        warnings.warn(
            f"n_components={n_components} is larger than the number of samples "
            f"({n_samples}); using m = {n_samples}.",
            UserWarning,
            stacklevel=3,
        )
        return int(n_samples)
    return int(n_components)


def check_sample_weight(sample_weight, n_samples):
    """``sample_weight`` as a float64 vector of ``n_samples`` finite, non-negative weights."""
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.ndim == 0:
        weights = np.full(n_samples, float(weights))
    if weights.shape != (n_samples,):
        raise ValueError(f"sample_weight must hold one weight per row ({n_samples}), got "
                         f"shape {weights.shape}.")
    if not np.all(np.isfinite(weights)):
        raise ValueError("sample_weight holds NaN or infinite values: fix or drop those rows.")
    if np.any(weights < 0):
        raise ValueError("Negative values in sample_weight: weights must be >= 0.")
    if not np.any(weights > 0):
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return weights


def check_lam(lam) -> float:
    """The regularisation λ as a float; anything but a positive finite number is an error."""
    if (isinstance(lam, bool) or not isinstance(lam, (int, float, np.number))
            or not np.isfinite(lam) or lam <= 0):
        raise ValueError(f"lam (λ) must be a positive finite number, got {lam!r}; "
                         "C = 1/(2nλ) needs λ > 0.")
    return float(lam)


@contextmanager
def explain_non_numeric(name):
    """Turn numpy's "could not convert string to float" into a message that says what to do."""
    try:
        yield
    except ValueError as exc:
        if "could not convert" not in str(exc):
            raise
        raise ValueError(f"{name} must be numeric; it holds values that are not numbers ({exc}). "
                         "Encode categorical columns as numbers first.") from None


def check_count(value, name) -> int:
    """A count (rows, columns, ranks, block sizes) as an int; anything but an integer >= 1
    (a bool included) is an error that names it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")
    return int(value)


def check_classifier_data(estimator, X, y):
    """X and y as a classifier's ``fit`` takes them: scikit-learn's ``validate_data`` (which
    sets ``n_features_in_``; CSR or a float array), class labels, at least two classes.
    Returns ``(X, y, classes)``."""
    with explain_non_numeric("X"):
        X, y = validate_data(estimator, X, y, accept_sparse="csr",
                             dtype=[np.float64, np.float32])
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise ValueError(f"y has only one class ({classes[0]}); a classifier needs at least 2 "
                         "classes.")
    return X, y, classes
