"""numba's compiled code loaded before a user's first fit: every solver trained once on a
few rows, dense and sparse (the app's server at start, the install's compile step)."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from snacks_core.datasets import make_synthetic, split_dataset
from snacks_core.model.evaluation import train
from snacks_core.solvers import EMBEDDED_SOLVERS, SOLVERS


def warm_up() -> None:
    """Train every solver once on a few rows, dense and sparse, so that numba's compiled
    code is loaded before a user's first click (:func:`train` warms any other
    configuration up itself before it measures a fit)."""
    split = split_dataset(make_synthetic("moons", 60, noise=0.2, random_state=0),
                          random_state=0)
    sparse = replace(split, X_train=sp.csr_matrix(np.abs(split.X_train)),
                     X_test=sp.csr_matrix(np.abs(split.X_test)))
    params = {"kernel": "rbf", "gamma": "scale", "n_components": 10, "lam": 1e-3,
              "sampling": "balanced", "max_epochs": 3, "class_weight": None, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for solver in SOLVERS:
            train(split, {**params, "solver": solver}, keep_checkpoints=True)
        for solver in EMBEDDED_SOLVERS:
            train(sparse, {**params, "solver": solver})
