"""Generated datasets: 2-D toy problems, make_classification-style problems, and the
a9a- and SUSY-shaped problems of the benchmarks (fixed seeds give equal data)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from snacks_core.datasets.dataset import Dataset, make_dataset

SYNTHETIC = ("moons", "circles", "xor", "checkerboard", "spirals", "blobs", "classification")

# Refuse generated datasets larger than this: the app and the tests stay responsive.
MAX_SYNTHETIC_SAMPLES = 200_000


def make_synthetic(name: str, n_samples: int = 400, *, noise: float = 0.2,
                   random_state: int | np.random.Generator | None = 0, n_features: int = 10,
                   positive_fraction: float = 0.5) -> Dataset:
    """A synthetic dataset by name; two classes are labelled −1/+1, ``blobs`` has three.

    Parameters
    ----------
    name : {'moons', 'circles', 'xor', 'checkerboard', 'spirals', 'blobs', 'classification'}
    n_samples : int
        Number of rows, 10 to 200,000.
    noise : float
        Standard deviation of the jitter added to 2-D points (label-flip rate of
        ``classification``, spread of ``blobs``), 0 to 2.
    random_state : int, Generator or None, default=0
        Seed; equal seeds give equal data.
    n_features, positive_fraction
        Width and class balance of ``classification`` (a make_classification-style problem).

    Examples
    --------
    >>> from snacks_core.datasets import make_synthetic
    >>> moons = make_synthetic("moons", 200, noise=0.1, random_state=0)
    >>> moons.X.shape, sorted(moons.class_counts())
    ((200, 2), [-1, 1])
    >>> make_synthetic("blobs", 90).classes
    array([0, 1, 2])
    """
    if name not in SYNTHETIC:
        raise ValueError(f"unknown synthetic dataset {name!r}; choose one of {SYNTHETIC}.")
    if (isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer))
            or not 10 <= n_samples <= MAX_SYNTHETIC_SAMPLES):
        raise ValueError(f"n_samples must be an integer from 10 to {MAX_SYNTHETIC_SAMPLES:,}, "
                         f"got {n_samples!r}.")
    if not np.isfinite(noise) or not 0 <= noise <= 2:
        raise ValueError(f"noise must be between 0 and 2, got {noise!r}.")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    if name == "classification":
        return _make_classification(n, noise, rng, n_features, positive_fraction)
    if name == "blobs":
        centers = np.array([[-1.5, -1.0], [1.5, -1.0], [0.0, 1.6]])
        y = rng.integers(0, 3, size=n)
        X = centers[y] + rng.normal(scale=0.35 + noise, size=(n, 2))
        return make_dataset(X, y, "blobs", feature_names=("x1", "x2"),
                            description="Three Gaussian blobs: a three-class problem.")
    X, positive = _TWO_D[name](n, rng)
    X = X + rng.normal(scale=noise * _NOISE_SCALE[name], size=X.shape)
    return make_dataset(X, np.where(positive, 1, -1), name, feature_names=("x1", "x2"),
                        description=_DESCRIPTIONS[name])


def _moons(n, rng):
    upper = rng.random(n) < 0.5
    t = rng.uniform(0.0, np.pi, size=n)
    X = np.column_stack([np.cos(t), np.sin(t)])
    X[~upper] = np.column_stack([1.0 - np.cos(t[~upper]), 0.5 - np.sin(t[~upper])])
    return X, ~upper


def _circles(n, rng):
    inner = rng.random(n) < 0.5
    t = rng.uniform(0.0, 2.0 * np.pi, size=n)
    radius = np.where(inner, 0.5, 1.0)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t)]), inner


def _xor(n, rng):
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    # Keep a thin gap along the axes so that the clean problem is separable.
    X += 0.1 * np.sign(X)
    return X, X[:, 0] * X[:, 1] > 0


def _checkerboard(n, rng):
    X = rng.uniform(-2.0, 2.0, size=(n, 2))
    return X, (np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0


def _spirals(n, rng):
    first = rng.random(n) < 0.5
    t = np.sqrt(rng.random(n)) * 3.0 * np.pi
    angle = t + np.where(first, 0.0, np.pi)
    X = np.column_stack([t * np.cos(angle), t * np.sin(angle)]) / np.pi
    return X, first


_TWO_D = {"moons": _moons, "circles": _circles, "xor": _xor, "checkerboard": _checkerboard,
          "spirals": _spirals}
# Jitter per unit of ``noise``, relative to each shape's size.
_NOISE_SCALE = {"moons": 1.0, "circles": 0.5, "xor": 0.5, "checkerboard": 0.5, "spirals": 0.6}
_DESCRIPTIONS = {
    "moons": "Two interleaving half circles: the classic non-linear toy problem.",
    "circles": "A small circle inside a large one: no line separates them, an RBF kernel does.",
    "xor": "Four quadrants, opposite ones share a class: the XOR problem no linear model solves.",
    "checkerboard": "A 4 × 4 checkerboard: many small regions, needs a narrow kernel and many "
                    "landmarks.",
    "spirals": "Two interleaved spirals: hard for wide kernels, needs landmarks along both arms.",
}


def _make_classification(n, noise, rng, n_features, positive_fraction):
    from sklearn.datasets import make_classification

    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
            or not 2 <= n_features <= 1000:
        raise ValueError(f"n_features must be an integer from 2 to 1000, got {n_features!r}.")
    if not 0.01 <= positive_fraction <= 0.99:
        raise ValueError("positive_fraction must be between 0.01 and 0.99, got "
                         f"{positive_fraction!r}.")
    informative = max(2, n_features // 2)
    X, y = make_classification(
        n_samples=n, n_features=n_features, n_informative=informative,
        n_redundant=min(n_features - informative, 2), n_clusters_per_class=2,
        weights=[1.0 - positive_fraction], flip_y=min(noise, 1.0) / 4.0,
        random_state=int(rng.integers(0, 2**31 - 1)))
    return make_dataset(X, np.where(y == 1, 1, -1), "classification",
                        description=f"make_classification-style: {informative} informative of "
                        f"{n_features} features, {positive_fraction:.0%} positives.")


# Cardinalities of the 14 one-hot attribute groups of a9a (Adult): 123 binary columns.
A9A_GROUP_SIZES = (5, 8, 5, 16, 5, 7, 14, 6, 5, 2, 2, 2, 5, 41)


def make_a9a_like(n_train: int = 32561, n_test: int = 16281, *, positive_rate: float = 0.24,
                  noise: float = 0.08, random_state: int | None = 0
                  ) -> tuple[sp.csr_matrix, np.ndarray, sp.csr_matrix, np.ndarray]:
    """An a9a-shaped problem: sparse binary one-hot rows, 123 columns, 14 non-zeros a row.

    Each row picks one category in each of 14 attribute groups (sizes as in a9a), with
    categories correlated through three latent factors and skewed popularity.  The label
    is +1 for the top ``positive_rate`` of a non-linear score (main effects plus pairwise
    interactions between groups), then a fraction ``noise`` of labels is flipped, so that
    no classifier reaches zero error and a kernel helps over a linear model.

    Returns
    -------
    X_train, y_train, X_test, y_test : CSR float64 matrices and labels in {−1, +1}.

    Examples
    --------
    >>> from snacks_core.datasets import make_a9a_like
    >>> X_train, y_train, X_test, y_test = make_a9a_like(1000, 500, random_state=0)
    >>> X_train.shape, X_test.shape, X_train.nnz // X_train.shape[0]
    ((1000, 123), (500, 123), 14)
    """
    rng = np.random.default_rng(random_state)
    n = n_train + n_test
    latent = rng.standard_normal((n, 3))
    columns = []
    effects = np.zeros(n)
    chosen = []
    for size in A9A_GROUP_SIZES:
        loadings = rng.normal(scale=1.2, size=(3, size))
        popularity = -1.5 * np.log1p(np.arange(size)) + rng.normal(scale=0.3, size=size)
        logits = latent @ loadings + popularity
        prob = np.exp(logits - logits.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        category = (prob.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)
        category = np.minimum(category, size - 1)
        chosen.append(category)
        effects += rng.normal(scale=0.6, size=size)[category]
    offsets = np.concatenate(([0], np.cumsum(A9A_GROUP_SIZES)[:-1]))
    for g in range(0, len(A9A_GROUP_SIZES) - 1, 2):
        table = rng.normal(scale=0.8, size=(A9A_GROUP_SIZES[g], A9A_GROUP_SIZES[g + 1]))
        effects += table[chosen[g], chosen[g + 1]]
    effects += 0.8 * np.tanh(latent[:, 0] * latent[:, 1])
    # Flipping moves a fraction `noise` of each class, so aim the threshold accordingly.
    clean_rate = (positive_rate - noise) / (1.0 - 2.0 * noise)
    labels = np.where(effects > np.quantile(effects, 1.0 - clean_rate), 1.0, -1.0)
    flip = rng.random(n) < noise
    labels[flip] = -labels[flip]
    columns = np.stack(chosen, axis=1) + offsets
    X = sp.csr_matrix(
        (np.ones(n * len(A9A_GROUP_SIZES)), columns.ravel(),
         np.arange(0, n * len(A9A_GROUP_SIZES) + 1, len(A9A_GROUP_SIZES))),
        shape=(n, sum(A9A_GROUP_SIZES)),
    )
    X.sort_indices()
    return X[:n_train], labels[:n_train], X[n_train:], labels[n_train:]


def _wrap_angle(angle):
    """Angles mapped to [−π, π): azimuths and their differences live on a circle."""
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


def make_susy_like(n_samples: int, *,
                   random_state: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """A SUSY-shaped problem: 18 dense columns, 8 "low-level" and 10 "high-level" features.

    Synthetic, not the UCI SUSY data set (5M Monte Carlo events, which this project cannot
    download): it only mimics its shape and difficulty for benchmarks at 10⁵–10⁶ rows.
    Each row is an "event" with two leptons and missing energy.  The 8 low-level columns
    are drawn independently from class-dependent distributions: lepton transverse momenta
    (the larger and the smaller of two Gamma(2, s) draws), pseudorapidities (normal),
    azimuths (the first uniform, the second opposite to it up to a von Mises deviation),
    missing energy (Gamma(2, s)) and its azimuth (uniform, uninformative).  Signal events
    (+1, 46 % as in SUSY) have harder leptons, more central pseudorapidities, less
    back-to-back leptons and more missing energy.  The 10 high-level columns are
    deterministic non-linear functions of the low-level ones, simplified versions of
    SUSY's: relative and axial missing energy, dilepton mass and transverse momentum,
    the leading lepton's transverse mass, the smaller transverse mass of the two leptons,
    the scalar sum of momenta, missing energy over lepton momenta, the azimuthal
    separation of the leptons and tanh(Δη/2).  They add no information, only easier
    coordinates, as in SUSY.  The Bayes error, computed by Monte Carlo from the known
    class densities, is about 20 % (SUSY's best published test errors are about 20 %).

    Parameters
    ----------
    n_samples : int
        Number of rows.
    random_state : int, default=0
        Seed; equal seeds give equal data.

    Returns
    -------
    X : ndarray of shape (n_samples, 18), float64
    y : ndarray of shape (n_samples,), labels in {−1, +1}

    Examples
    --------
    >>> from snacks_core.datasets import make_susy_like
    >>> X, y = make_susy_like(1000, random_state=0)
    >>> X.shape, sorted(set(y.tolist()))
    ((1000, 18), [-1.0, 1.0])
    """
    if int(n_samples) < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
    n = int(n_samples)
    rng = np.random.default_rng(random_state)
    signal = rng.random(n) < 0.46

    def by_class(signal_value, background_value):
        return np.where(signal, signal_value, background_value)

    first, second = (rng.gamma(2.0, by_class(0.55, 0.4)) for _ in range(2))
    pt1, pt2 = np.maximum(first, second), np.minimum(first, second)
    eta1, eta2 = (rng.normal(0.0, by_class(0.9, 1.2)) for _ in range(2))
    phi1 = rng.uniform(-np.pi, np.pi, n)
    phi2 = _wrap_angle(phi1 + np.pi + rng.vonmises(0.0, by_class(1.0, 3.0)))
    met = rng.gamma(2.0, by_class(0.7, 0.3))
    met_phi = rng.uniform(-np.pi, np.pi, n)

    px, py = pt1 * np.cos(phi1) + pt2 * np.cos(phi2), pt1 * np.sin(phi1) + pt2 * np.sin(phi2)
    pt_ll, phi_ll = np.hypot(px, py), np.arctan2(py, px)
    dphi_met = np.minimum(np.abs(_wrap_angle(met_phi - phi1)), np.abs(_wrap_angle(met_phi - phi2)))
    met_rel = np.where(dphi_met < np.pi / 2, met * np.sin(dphi_met), met)
    axial_met = -met * np.cos(met_phi - phi_ll)
    dphi_ll = _wrap_angle(phi1 - phi2)
    m_ll = np.sqrt(2.0 * pt1 * pt2 * (np.cosh(eta1 - eta2) - np.cos(dphi_ll)))
    mt1 = np.sqrt(2.0 * pt1 * met * (1.0 - np.cos(met_phi - phi1)))
    mt2 = np.sqrt(2.0 * pt2 * met * (1.0 - np.cos(met_phi - phi2)))
    X = np.column_stack([
        pt1, eta1, phi1, pt2, eta2, phi2, met, met_phi,
        met_rel, axial_met, m_ll, pt_ll, mt1, np.minimum(mt1, mt2), pt1 + pt2 + met,
        met / (pt1 + pt2), np.abs(dphi_ll), np.tanh((eta1 - eta2) / 2.0),
    ])
    return X, np.where(signal, 1.0, -1.0)
