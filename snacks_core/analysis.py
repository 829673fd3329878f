"""What a fitted model achieved on a train/test split: one evaluation for every front end.

:func:`evaluate` gives the app (and the command line and the sweeps) the same numbers under
the same names: errors beside the majority-class baseline, F1 of a named positive class
(the minority class of the training labels by default), the objective F of the weights the
model returns, the times, and how the solver stopped.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import f1_score
from sklearn.utils.class_weight import compute_sample_weight

from .nystrom import NystromEmbedding
from .objective import lam_to_C, primal_objective


def minority_class(y):
    """The least frequent label of ``y`` (the larger label on a tie): F1's default class."""
    labels, counts = np.unique(np.asarray(y), return_counts=True)
    return labels[len(counts) - 1 - int(np.argmin(counts[::-1]))]


def majority_error(y_train, y):
    """Error of always predicting the most frequent training label, measured on ``y``."""
    labels, counts = np.unique(np.asarray(y_train), return_counts=True)
    return float(np.mean(np.asarray(y) != labels[int(np.argmax(counts))]))


def returned_objective(model, X, y):
    """F(w) of the returned weights, averaged over the one-vs-rest problems.

    For a Nyström model it is computed from ``coef_`` on the embedded training rows (a
    solver's last history row can be a later point than the best one it returns).  Models
    without a Nyström embedding (LIBSVM, ADMM) report their own objective: the last row of
    their history.
    """
    if not isinstance(model.embedding_, NystromEmbedding):
        history = model.history_
        last = [np.flatnonzero(history["problem"] == k)[-1]
                for k in np.unique(history["problem"]).astype(int)]
        return float(np.mean(history["objective"][last]))
    Z = model.embedding_.transform(X)
    weights = compute_sample_weight(model.class_weight, y) if model.class_weight else None
    classes = model.classes_
    if classes.shape[0] == 2:
        targets = [np.where(np.asarray(y) == classes[1], 1.0, -1.0)]
    else:
        targets = [np.where(np.asarray(y) == c, 1.0, -1.0) for c in classes]
    return float(np.mean([primal_objective(w, Z, t, model.lam, weights)
                          for w, t in zip(model.coef_, targets)]))


def evaluate(model, split, *, pos_label=None) -> dict:
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

    Returns
    -------
    dict
        ``train_error``, ``test_error``, ``majority_error`` (test error of always predicting
        the most frequent training class), ``f1``, ``f1_label`` (the class of the F1, None
        for the macro average), ``predicted_classes`` (number of distinct test
        predictions), ``embedding_time``, ``training_time``, ``objective`` (F of the returned
        weights), ``epochs`` (None for solvers that do not count passes), ``iterations``,
        ``n_components``, ``n_landmarks`` (None without a Nyström embedding), ``C``,
        ``stop``, ``train_pred``, ``test_pred``.
    """
    train_pred = model.predict(split.X_train)
    test_pred = model.predict(split.X_test)
    classes = model.classes_
    if classes.shape[0] == 2:
        f1_label = minority_class(split.y_train) if pos_label is None else pos_label
        f1 = f1_score(split.y_test, test_pred, pos_label=f1_label, zero_division=0.0)
    else:
        f1_label = None
        f1 = f1_score(split.y_test, test_pred, average="macro", zero_division=0.0)
    history = model.history_
    epochs = history["epoch"][np.isfinite(history["epoch"])]
    embedding = model.embedding_
    return {
        "train_error": float(np.mean(train_pred != split.y_train)),
        "test_error": float(np.mean(test_pred != split.y_test)),
        "majority_error": majority_error(split.y_train, split.y_test),
        "f1": float(f1),
        "f1_label": f1_label,
        "predicted_classes": int(np.unique(test_pred).shape[0]),
        "embedding_time": float(model.embedding_time_),
        "training_time": float(model.training_time_),
        "objective": returned_objective(model, split.X_train, split.y_train),
        "epochs": float(np.max(epochs)) if epochs.size else None,
        "iterations": int(model.n_iter_),
        "n_components": int(model.coef_.shape[1]),
        "n_landmarks": (int(embedding.landmarks_.shape[0])
                        if isinstance(embedding, NystromEmbedding) else None),
        "C": lam_to_C(model.lam, split.X_train.shape[0]),
        "stop": ", ".join(sorted(set(model.stop_reasons_))),
        "train_pred": train_pred,
        "test_pred": test_pred,
    }
