"""Input checks shared by every entry point: data, labels, sizes that must fit in memory."""

from __future__ import annotations

import os
import warnings

import numpy as np
import scipy.sparse as sp

# Fraction of the machine's physical memory one array may take before we refuse.
_MEMORY_FRACTION = 0.5


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
        raise ValueError(f"{name} is empty (shape {X.shape}); at least one row and column are needed.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first.")
    return X


def available_memory() -> int:
    """Physical memory of the machine in bytes (a conservative 4 GiB when unknown)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 4 * 2**30


def check_fits_in_memory(n_bytes: int, what: str, advice: str) -> None:
    """Refuse, before allocating, an array larger than half the machine's memory."""
    limit = _MEMORY_FRACTION * available_memory()
    if n_bytes > limit:
        raise ValueError(
            f"{what} would need {n_bytes / 2**30:.1f} GiB, more than the "
            f"{limit / 2**30:.1f} GiB this machine can spare. {advice}"
        )


def clip_n_components(n_components, n_samples) -> int:
    """m clipped to n with a warning; m < 1 or non-integer is an error."""
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
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


def check_lam(lam) -> float:
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.number)) or not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam (λ) must be a positive finite number, got {lam!r}; C = 1/(2nλ) needs λ > 0.")
    return float(lam)
