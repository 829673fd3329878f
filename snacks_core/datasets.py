"""Datasets: synthetic generators the project makes itself, all validated on the way in."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# Cardinalities of the 14 one-hot attribute groups of a9a (Adult): 123 binary columns.
A9A_GROUP_SIZES = (5, 8, 5, 16, 5, 7, 14, 6, 5, 2, 2, 2, 5, 41)


def make_a9a_like(n_train=32561, n_test=16281, *, positive_rate=0.24, noise=0.08,
                  random_state=0):
    """An a9a-shaped problem: sparse binary one-hot rows, 123 columns, 14 non-zeros a row.

    Each row picks one category in each of 14 attribute groups (sizes as in a9a), with
    categories correlated through three latent factors and skewed popularity.  The label
    is +1 for the top ``positive_rate`` of a non-linear score (main effects plus pairwise
    interactions between groups), then a fraction ``noise`` of labels is flipped, so that
    no classifier reaches zero error and a kernel helps over a linear model.

    Returns
    -------
    X_train, y_train, X_test, y_test : CSR float64 matrices and labels in {−1, +1}.
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
