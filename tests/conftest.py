"""Shared fixtures: small fixed-seed problems F(w) = (1/n) Σ s_i hinge_i + λ‖w‖² on an embedding.

Each problem carries its optimal value F*, computed by the LIBLINEAR oracle of
``tests/reference.py`` (itself checked against a brute-force dual QP in the tests).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_moons

from reference import optimal_objective

# The app sets the BLAS threads of its server process once (snacks_core.app.cpu_sharing); AppTest
# runs the app inside this process, where later tests must keep theirs: 0 leaves them.
os.environ.setdefault("SNACKS_BLAS_THREADS", "0")


@dataclass(frozen=True)
class EmbeddedProblem:
    """An embedded SVM problem and its optimum F* = F(w*)."""

    Z: np.ndarray
    y: np.ndarray
    lam: float
    sample_weight: np.ndarray | None
    f_star: float
    w_star: np.ndarray


def make_problem(Z, y, lam, sample_weight=None) -> EmbeddedProblem:
    f_star, w_star = optimal_objective(Z, y, lam, sample_weight)
    return EmbeddedProblem(np.ascontiguousarray(Z), y, lam, sample_weight, f_star, w_star)


def random_fourier_features(X, n_features, gamma, seed):
    """z(x) = sqrt(2/m) cos(Wᵀx + b), W ~ N(0, 2γ), b ~ U[0, 2π): the RBF kernel's features."""
    rng = np.random.default_rng(seed)
    W = rng.normal(scale=np.sqrt(2.0 * gamma), size=(X.shape[1], n_features))
    b = rng.uniform(0.0, 2.0 * np.pi, size=n_features)
    return np.sqrt(2.0 / n_features) * np.cos(X @ W + b)


def labels_pm1(y01):
    return np.where(y01 > 0, 1.0, -1.0)


@pytest.fixture(scope="session")
def moons_problem() -> EmbeddedProblem:
    """Two moons (n = 1000, noise 0.2) in 50 RBF random features (γ = 1), λ = 1e-3."""
    X, y01 = make_moons(1000, noise=0.2, random_state=0)
    return make_problem(random_fourier_features(X, 50, 1.0, seed=0), labels_pm1(y01), 1e-3)


@pytest.fixture(scope="session")
def weighted_problem() -> EmbeddedProblem:
    """Linear features (n = 600, m = 20), sample weights in [0.2, 3], λ = 1e-2."""
    X, y01 = make_classification(600, 20, n_informative=6, flip_y=0.05, random_state=1)
    weights = np.random.default_rng(1).uniform(0.2, 3.0, size=600)
    return make_problem(X, labels_pm1(y01), 1e-2, weights)


@pytest.fixture(scope="session")
def tiny_problem() -> EmbeddedProblem:
    """30 points in 5 linear features, λ = 1e-2: small enough for the brute-force dual QP."""
    X, y01 = make_classification(30, 5, n_informative=3, flip_y=0.1, random_state=2)
    return make_problem(X, labels_pm1(y01), 1e-2)


@pytest.fixture(scope="session")
def kernel_data():
    """Raw data for the exact kernel SVM: make_moons, n = 300, labels in {−1, +1}."""
    X, y01 = make_moons(300, noise=0.25, random_state=3)
    return X, labels_pm1(y01)
