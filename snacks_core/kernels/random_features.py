"""Random Fourier features (Rahimi & Recht, 2007): z(x) = √(2/D) cos(Wᵀx + b).

For a shift-invariant kernel k(x, x') = κ(x − x'), Bochner's theorem writes κ as the Fourier
transform of a probability density p(ω); with ω₁…ω_D drawn from p and b uniform on
[0, 2π), E[z(x)ᵀz(x')] = k(x, x').  The densities used here:

==========  ===================================  ==================================
rbf         exp(−γ‖x − x'‖²)                     ω ~ N(0, 2γ I)
laplacian   exp(−γ‖x − x'‖₁)                     ω_j ~ Cauchy(0, γ), independent
==========  ===================================  ==================================

The kernel-approximation tutorial of ``papers/`` compares these features with Nyström:
their error falls like 1/√D whatever the data, while Nyström adapts to the spectrum.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from snacks_core.core.memory import check_fits_in_memory
from snacks_core.kernels.functions import check_kernel_params, resolve_gamma

RFF_KERNELS = ("rbf", "laplacian")


class RandomFourierFeatures(TransformerMixin, BaseEstimator):
    """Random Fourier features of the rbf or laplacian kernel.

    Parameters
    ----------
    kernel : {'rbf', 'laplacian'}, default='rbf'
        A shift-invariant kernel (for the others use
        :class:`~snacks_core.kernels.nystrom.NystromEmbedding`).
    gamma : float, 'scale' or 'auto', default='scale'
        Kernel parameter γ ('scale' = 1 / (d · Var(X)) as in sklearn's SVC).
    n_components : int, default=100
        Number D of features.
    dtype : {np.float64, np.float32}, default=np.float64
    random_state : int, Generator or None

    Attributes
    ----------
    gamma_ : float
    frequencies_ : ndarray of shape (d, D)
        The random frequencies W.
    offsets_ : ndarray of shape (D,)
        The random phases b.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from snacks_core.kernels.random_features import RandomFourierFeatures
    >>> X = np.random.default_rng(0).normal(size=(5, 3))
    >>> RandomFourierFeatures(gamma=0.5, n_components=4, random_state=0).fit_transform(X).shape
    (5, 4)
    """

    def __init__(self, kernel="rbf", *, gamma="scale", n_components=100, dtype=np.float64,
                 random_state=None):
        self.kernel = kernel
        self.gamma = gamma
        self.n_components = n_components
        self.dtype = dtype
        self.random_state = random_state

    def fit(self, X, y=None):
        """Draw the frequencies for the width of X (dense or CSR, n × d)."""
        check_kernel_params(self.kernel, self.gamma)
        if self.kernel not in RFF_KERNELS:
            raise ValueError(f"random Fourier features need a shift-invariant kernel "
                             f"{RFF_KERNELS}, got {self.kernel!r}; use NystromEmbedding instead.")
        if (
            isinstance(self.n_components, bool)
            or not isinstance(self.n_components, (int, np.integer))
            or self.n_components < 1
        ):
            raise ValueError(
                f"n_components (D) must be an integer >= 1, got {self.n_components!r}."
            )
        if np.dtype(self.dtype) not in (np.float32, np.float64):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype!r}.")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        self.gamma_ = resolve_gamma(self.gamma, X)
        rng = np.random.default_rng(self.random_state)
        d, D = X.shape[1], int(self.n_components)
        check_fits_in_memory(8 * d * D, f"{D} random frequencies in {d} dimensions",
                             "Use fewer features.")
        if self.kernel == "rbf":
            self.frequencies_ = rng.normal(scale=np.sqrt(2.0 * self.gamma_), size=(d, D))
        else:
            self.frequencies_ = self.gamma_ * rng.standard_cauchy(size=(d, D))
        self.offsets_ = rng.uniform(0.0, 2.0 * np.pi, size=D)
        return self

    def transform(self, X):
        """z(x) = √(2/D) cos(Wᵀx + b) for every row of X."""
        check_is_fitted(self, "frequencies_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32],
                          reset=False)
        D = self.frequencies_.shape[1]
        check_fits_in_memory(8 * X.shape[0] * D, f"The features of {X.shape[0]} rows",
                             "Use fewer features or transform the data in parts.")
        projection = X @ self.frequencies_ if sp.issparse(X) else np.asarray(X) @ self.frequencies_
        projection = np.asarray(projection) + self.offsets_
        return (np.sqrt(2.0 / D) * np.cos(projection)).astype(self.dtype, copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
