"""The code a fit needs, loaded (or, once after installing, compiled) before the fit is
timed, so that the embedding and training times printed are the fit's own."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from snacks_core.cli.model import make_estimator, measure

# Rows of each class the warm-up fit trains on: enough for every class and a few landmarks.
WARM_UP_ROWS_PER_CLASS = 20


def warm_up(args, split) -> None:
    """Fit and measure the configuration of ``args`` on a few rows of ``split``: numba loads
    the compiled code of each new combination of argument types (kernel, sparse or dense
    rows, dtype, solver) at its first call, or compiles it when the cache has none."""
    classes = np.unique(split.y_train)
    rows = np.concatenate([np.flatnonzero(split.y_train == c)[:WARM_UP_ROWS_PER_CLASS]
                           for c in classes])
    few = replace(split, X_train=split.X_train[rows], y_train=split.y_train[rows],
                  X_test=split.X_train[rows], y_test=split.y_train[rows])
    model = make_estimator(args, args.solver, classes)
    model.set_params(n_components=max(1, min(int(args.m), rows.shape[0] // 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(few.X_train, few.y_train)
        measure(model, few)
