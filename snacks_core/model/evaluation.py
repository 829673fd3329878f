"""A trained model and its measurements: what a fitted model achieved on a train/test split.

:func:`evaluate` gives the app, the command line and the sweeps the same numbers under the
same names: errors beside the majority-class baseline, F1 of a named positive class (the
minority class of the training labels by default), the objective F of the weights the
model returns, the times, and how the solver stopped.  :func:`train` fits a model on a
:class:`~snacks_core.datasets.Split` from a dict of estimator settings and measures it (a
:class:`Run`), after warming numba's code for that configuration up on a few rows.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.model.engine import (
    binary_targets,
    hinge_weights,
    labels_from_scores,
    score_sums,
    training_measures,
)
from snacks_core.model.estimator import SnacksClassifier, estimator_from_settings
from snacks_core.model.metrics import classification_scores, error_rate
from snacks_core.solvers import EMBEDDED_SOLVERS


def solver_objective(model):
    """F of the returned point as the solver measured it (its history's last row, which is
    the point returned), averaged over the one-vs-rest problems."""
    history = model.history_
    last = [np.flatnonzero(history["problem"] == k)[-1]
            for k in np.unique(history["problem"]).astype(int)]
    return float(np.mean(history["objective"][last]))


def returned_objective(model, y, scores):
    """F(w) of the returned weights, averaged over the two-class problems, from the
    model's :meth:`~snacks_core.SnacksClassifier.subproblem_decisions` ``scores`` on its
    training rows (labels ``y``), measured as a
    fit measures its own (:func:`~snacks_core.model.engine.score_sums`).

    For a model on an embedding it is computed from ``coef_`` (a solver's last history row
    can be a later point than the best one it returns).  Models on the data or on a kernel
    operator (LIBSVM, ADMM) report their own objective: the last row of their history.
    """
    if model.solver not in EMBEDDED_SOLVERS:
        return solver_objective(model)
    targets = np.vstack(binary_targets(np.asarray(y), model.classes_,
                                       model._one_vs_one))
    wrong, hinge = score_sums(scores, targets, hinge_weights(model.class_weight, y))
    return training_measures(wrong, hinge, len(y), model.coef_, model.lam_)[1]


def evaluate(model, split, *, pos_label=None, test_pred=None, max_train_rows=None) -> dict:
    """Metrics of a fitted :class:`~snacks_core.SnacksClassifier` on a split.

    Parameters
    ----------
    model : SnacksClassifier
        Fitted on ``split.X_train``.
    split : snacks_core.datasets.Split
    pos_label : label, optional
        The class whose F1 is reported for two-class data; default: the minority class of
        the training labels (F1 of a 90 % majority class says little).  With more classes
        F1 is the macro average and ``pos_label`` is ignored.
    test_pred : ndarray, optional
        The model's predictions of ``split.X_test``, when the caller has made them.
    max_train_rows : int, optional
        Without it the training rows are predicted once more: ``train_pred`` holds their
        predictions and the objective is F of the returned weights on them.  With it, no
        row is predicted again when the fit measured them from its embedding
        (``train_error_`` and ``train_objective_``).  For a model without them, the
        training rows are predicted, a random sample of ``max_train_rows`` of them when
        there are more (``train_error_rows`` says how many), and the objective of a sample
        is the one the solver measured at the returned point (its history's last row).

    Returns
    -------
    dict
        ``train_error``, ``test_error``, ``majority_error`` (test error of always predicting
        the most frequent training class), ``f1``, ``f1_label`` (the class of the F1, None
        for the macro average), ``predicted_classes`` (number of distinct test
        predictions), ``embedding_time``, ``training_time``, ``objective`` (F of the returned
        weights), ``epochs`` (None for solvers that do not count passes), ``iterations``,
        ``n_components``, ``n_landmarks`` (None without a Nyström embedding), ``C``,
        ``stop``, ``train_pred`` (of the rows predicted; None when none were), ``test_pred``,
        ``train_error_rows``.
    """
    n_train = split.X_train.shape[0]
    measured = max_train_rows is not None and getattr(model, "train_error_", None) is not None
    sampled = not measured and max_train_rows is not None and n_train > max_train_rows
    train_rows = (np.sort(np.random.default_rng(0).choice(n_train, max_train_rows, replace=False))
                  if sampled else slice(None))
    if measured:
        train_error, train_pred, train_scores = model.train_error_, None, None
    else:
        # One pass over the training rows gives their predictions and F.
        train_scores = model.subproblem_decisions(split.X_train[train_rows])
        train_pred = labels_from_scores(model.class_scores(train_scores), model.classes_)
        train_error = error_rate(split.y_train[train_rows], train_pred)
    if test_pred is None:
        test_pred = model.predict(split.X_test)
    history = model.history_
    epochs = history["epoch"][np.isfinite(history["epoch"])]
    embedding = model.embedding_
    return {
        "train_error": train_error,
        "train_error_rows": n_train if measured else train_pred.shape[0],
        **classification_scores(split.y_train, split.y_test, test_pred, model.classes_,
                                pos_label=pos_label),
        "embedding_time": float(model.embedding_time_),
        "training_time": float(model.training_time_),
        "objective": (model.train_objective_ if measured else solver_objective(model)
                      if sampled else returned_objective(model, split.y_train, train_scores)),
        "epochs": float(np.max(epochs)) if epochs.size else None,
        "iterations": int(model.n_iter_),
        "n_components": int(model.coef_.shape[1]),
        "n_landmarks": (int(embedding.landmarks_.shape[0])
                        if isinstance(embedding, NystromEmbedding) else None),
        "C": model.C_,
        "stop": ", ".join(sorted(set(model.stop_reasons_))),
        "train_pred": train_pred,
        "test_pred": test_pred,
    }


@dataclass(frozen=True)
class Run:
    """A trained model with its metrics, the warnings it raised and optional checkpoints.

    ``checkpoints`` holds (history record, weights) pairs of a two-class embedded solver,
    for replaying the decision boundary as it converged.  ``created`` is the
    ``time.time()`` at the end of training: a page tells a run from the cache by it.
    Nothing changes a run (or its model) after it is made: the app caches and shares it.
    """

    model: SnacksClassifier
    metrics: dict
    notes: list = field(default_factory=list)
    checkpoints: list = field(default_factory=list)
    created: float = 0.0


class CheckpointRecorder:
    """A solver callback that keeps a copy of the weights at every checkpoint."""

    def __init__(self):
        self.checkpoints = []

    def __call__(self, record, w):
        self.checkpoints.append((dict(record), np.array(w)))


def train(split, params, *, keep_checkpoints=False) -> Run:
    """Fit on the training part with the test part as ``eval_set`` and measure the result.

    Warnings of the estimator (m clipped to n, …) come back in ``Run.notes``.  The model is
    built with its final parameters (the checkpoint recorder included) and never modified
    after ``fit``.
    """
    _warm_up_for(split, params, keep_checkpoints)
    return _fit_and_measure(split, params, keep_checkpoints)


# The configurations trained in this process (see _warm_up_for).
_WARM_CONFIGURATIONS = set()


_WARM_ROWS_PER_CLASS = 20


def _warm_up_for(split, params, keep_checkpoints):
    """Train the configuration once on a few rows when this process has not trained it yet.

    numba loads (or compiles) a function's code for each new combination of argument types
    at its first call: without this, the first fit of a kernel, a sampling or a sparse
    format would show that start-up cost as its training time, and the app would keep that
    time in its cache.  Every time shown is then a warm one, measured the same way.
    """
    X, y = split.X_train, split.y_train
    classes = np.unique(y)
    key = (params.get("solver"), params.get("kernel"), params.get("sampling"),
           params.get("class_weight") is not None, sp.issparse(X), np.dtype(X.dtype).str,
           classes.shape[0] > 2, bool(keep_checkpoints), params.get("dtype"))
    if key in _WARM_CONFIGURATIONS:
        return
    rows = np.concatenate([np.flatnonzero(y == c)[:_WARM_ROWS_PER_CLASS] for c in classes])
    few = replace(split, X_train=X[rows], y_train=y[rows], X_test=X[rows], y_test=y[rows])
    m = int(params.get("n_components", 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit_and_measure(few, {**params, "n_components": max(1, min(m, rows.shape[0] // 2))},
                         keep_checkpoints)
    _WARM_CONFIGURATIONS.add(key)


def _fit_and_measure(split, params, keep_checkpoints):
    binary = split.n_classes == 2
    recorder = None
    if keep_checkpoints and binary and params.get("solver") in EMBEDDED_SOLVERS:
        recorder = CheckpointRecorder()
    model = estimator_from_settings(
        params, solver_options=None if recorder is None else {"callback": recorder})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(split.X_train, split.y_train, eval_set=(split.X_test, split.y_test))
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, UserWarning)))
    return Run(model, evaluate(model, split), notes,
               [] if recorder is None else recorder.checkpoints, time.time())
