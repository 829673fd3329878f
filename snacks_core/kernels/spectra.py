"""Spectra and approximation errors of kernel matrices: the eigenvalues of K_mm, the
effective dimension they give, and how well Nyström and random features approximate K."""

from __future__ import annotations

import warnings

import numpy as np

from snacks_core.kernels.functions import kernel_matrix, resolve_gamma
from snacks_core.kernels.landmarks import select_landmarks
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.kernels.random_features import RFF_KERNELS, RandomFourierFeatures


def spectrum_curves(X, params, factors, m, seed) -> dict:
    """Eigenvalues of K_mm on the same m landmarks for γ times each factor."""
    X = _subsample(X, 20_000, seed)
    m = min(int(m), X.shape[0])
    landmarks = select_landmarks(X, m, sampling="uniform", random_state=seed)
    base = resolve_gamma(params.get("gamma", "scale"), X)
    curves = {}
    for factor in factors:
        embedding = NystromEmbedding(kernel=params["kernel"], gamma=base * factor,
                                     degree=params.get("degree", 3),
                                     coef0=params.get("coef0", 1.0))
        embedding.fit(X, landmark_indices=landmarks)
        curves[f"γ = {base * factor:.3g} (×{factor:g})"] = embedding.eigenvalues_
    return curves


def effective_dimension(eigenvalues, lam) -> float:
    """d_eff(λ) = Σ μᵢ/(μᵢ + mλ) from the m eigenvalues of K_mm.

    K_mm/m approximates the kernel operator, whose regularised spectrum is μ/(μ + λ) in
    the convention F = (1/n) Σ loss + λ‖w‖²; eigen-directions far below mλ are not learned.
    """
    eigenvalues = np.asarray(eigenvalues, dtype=np.float64)
    return float(np.sum(eigenvalues / (eigenvalues + len(eigenvalues) * lam)))


def approximation_errors(X, params, m_values, seeds, max_rows=600) -> dict:
    """Relative error ‖K − ZZᵀ‖_F/‖K‖_F on a subsample, per method and m: mean and std.

    Methods: Nyström with uniform and with leverage-score landmarks, Nyström on 2m landmarks
    truncated to rank m (the tutorial's variant), and random Fourier features with D = m
    (rbf and laplacian kernels only).
    """
    X = _subsample(X, max_rows, 0)
    kernel_params = {"kernel": params["kernel"],
                     "gamma": resolve_gamma(params.get("gamma", "scale"), X),
                     "degree": params.get("degree", 3), "coef0": params.get("coef0", 1.0)}
    K = kernel_matrix(X, X, **kernel_params)
    norm = np.linalg.norm(K)

    def error(Z):
        Z = np.asarray(Z, dtype=np.float64)
        return float(np.linalg.norm(K - Z @ Z.T) / norm)

    methods = {
        "Nyström, uniform landmarks": lambda m, s: NystromEmbedding(
            n_components=m, sampling="uniform", random_state=s, **kernel_params),
        "Nyström, leverage-score landmarks": lambda m, s: NystromEmbedding(
            n_components=m, sampling="leverage", random_state=s, **kernel_params),
        "Nyström, 2m landmarks at rank m": lambda m, s: NystromEmbedding(
            n_components=min(2 * m, X.shape[0]), rank=m, sampling="uniform", random_state=s,
            **kernel_params),
    }
    if params["kernel"] in RFF_KERNELS:
        methods["random Fourier features, D = m"] = lambda m, s: RandomFourierFeatures(
            kernel=params["kernel"], gamma=kernel_params["gamma"], n_components=m,
            random_state=s)
    m_values = [m for m in m_values if m <= X.shape[0]]
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, make in methods.items():
            values = np.array([[error(make(m, s).fit_transform(X)) for s in seeds]
                               for m in m_values])
            results[name] = (values.mean(axis=1), values.std(axis=1))
    return m_values, results


def _subsample(X, max_rows, seed):
    if X.shape[0] <= max_rows:
        return X
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
    return X[rows]
