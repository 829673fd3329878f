"""The one rule for defaults that fit the data: scaling, λ (or C) and m, and grids around them.

The command line, the library ('auto' values) and the app all start from these: the scaling
by the kind of data (:func:`default_scaling`), γ by the 'scale' rule
(:func:`snacks_core.kernels.resolve_gamma`, which adapts by itself), λ = 0.02/n so that
C = 1/(2nλ) = 25 on any n (:func:`default_lam`) and m = 2√n within bounds
(:func:`default_m`).  Grids and searches centre their axes on these values
(:func:`C_values_around_default`, :func:`gamma_values_around`).

Only NumPy and SciPy are imported here, so that the readers of :mod:`snacks_core.datasets`
can resolve ``scaling='auto'`` without pulling in the estimators.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# The number of landmarks m and the regularisation λ of a setting that names no data (the
# app's settings before a dataset is loaded); a dataset's own defaults are
# :func:`data_aware_defaults`.
DEFAULT_M = 50
DEFAULT_LAM = 1e-3
# λ = DEFAULT_LAM_TIMES_N / n (C = 1/(2nλ) = 25 on any n), and m = 2√n within
# DEFAULT_M_RANGE: measured on 17 real and synthetic sets (BENCHMARKS.md, "Defaults that
# learn"), where a fixed λ lets the hinge terms fade as n grows until the model predicts the
# majority class.
DEFAULT_LAM_TIMES_N = 0.02
DEFAULT_M_RANGE = (50, 500)
# On two features a Gaussian K_mm has numerical rank under 100 at any m (moons, spirals,
# circles, checkerboard at 50,000 rows: 88–99 dimensions kept at m = 300, the same test
# error from m = 50): more landmarks only cost time and hide the picture under stars.
DEFAULT_M_MAX_2D = 100
# The C = 1/(2nλ) that grids centre on: the default C = 25 on the sliders' 1-2-5 steps.
DEFAULT_C_ON_STEPS = 20.0
# The range of γ a grid may reach (the app's γ slider spans it too).
GAMMA_RANGE = (1e-5, 1e3)


def default_lam(n_train) -> float:
    """The regularisation λ = 0.02/n of ``n_train`` training rows (C = 1/(2nλ) = 25)."""
    return DEFAULT_LAM_TIMES_N / max(int(n_train), 1)


def default_m(n_train, n_features=None) -> int:
    """m = 2√n landmarks, at least 50 and at most 500 (100 on two features or fewer), and
    at most n."""
    low, high = DEFAULT_M_RANGE
    if n_features is not None and n_features <= 2:
        high = DEFAULT_M_MAX_2D
    return int(min(n_train, max(low, min(high, round(2 * np.sqrt(n_train))))))


def sparse_binary(X) -> bool:
    """Whether X is sparse with every stored value 1 (one-hot rows such as a9a or w8a)."""
    return sp.issparse(X) and X.nnz > 0 and bool(np.all(X.data == 1))


def default_scaling(X) -> str:
    """The feature scaling for the kind of data X is: 'standard' for dense X, 'none' for
    sparse X.

    Sparse binary data (one-hot rows) are used as they are: standardising divides each
    column by its spread and so inflates the rare ones.  Sparse non-binary data such as
    tf-idf text are used as they are too, for the same reason (rare words become loud) and
    because their rows are already on one scale (BENCHMARKS.md, "Defaults for text").
    """
    return "none" if sp.issparse(X) else "standard"


def resolve_scaling(scaling, X) -> str:
    """``scaling`` itself, or :func:`default_scaling` of X for 'auto'."""
    return default_scaling(X) if scaling == "auto" else scaling


def data_aware_defaults(X, n_train) -> dict:
    """Settings that learn on this data: ``scaling``, ``lam`` and ``n_components`` (m) for
    ``n_train`` training rows of the kind of X (γ stays the 'scale' rule).

    λ = 0.02/n keeps the hinge terms' weight C = 1/(2nλ) = 25 whatever n, and m = 2√n grows
    the model with the data at a cost that stays interactive (m ≤ 500; ≤ 100 on two
    features, where more adds nothing).  The scaling is :func:`default_scaling`.

    Examples
    --------
    >>> import numpy as np
    >>> d = data_aware_defaults(np.zeros((10, 20)), 35_000)
    >>> d["scaling"], d["n_components"], float(f"{d['lam']:.3g}")
    ('standard', 374, 5.71e-07)
    >>> data_aware_defaults(np.zeros((10, 2)), 35_000)["n_components"]
    100
    """
    return {"scaling": default_scaling(X), "lam": default_lam(n_train),
            "n_components": default_m(n_train, X.shape[1])}


def round_125(value) -> float:
    """The nearest (in log scale) of 1, 2 or 5 times a power of ten."""
    exponent = np.floor(np.log10(value))
    candidates = np.array([1.0, 2.0, 5.0, 10.0]) * 10.0**exponent
    return float(f"{candidates[np.argmin(np.abs(np.log(candidates / value)))]:.0e}")


def C_values_around_default(decades_each_side=3) -> tuple:
    """C = 1/(2nλ) values a decade apart, centred on the default C (on the 1-2-5 steps,
    :data:`DEFAULT_C_ON_STEPS`): a λ grid that moves with n as the default does.

    Examples
    --------
    >>> C_values_around_default(2)
    (0.2, 2.0, 20.0, 200.0, 2000.0)
    """
    return tuple(float(f"{DEFAULT_C_ON_STEPS * 10.0**k:.0e}")
                 for k in range(-decades_each_side, decades_each_side + 1))


def gamma_values_around(gamma, factors) -> list:
    """γ times each factor, rounded to 1, 2 or 5 times a power of ten and kept within
    :data:`GAMMA_RANGE`, sorted without repeats."""
    low, high = GAMMA_RANGE
    return sorted({min(max(round_125(gamma * factor), low), high) for factor in factors})
