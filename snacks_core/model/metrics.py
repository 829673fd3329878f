"""The classification numbers every view reports, defined once.

The app, the sweeps (heatmap cells), the command line and the search all score a model with
these functions, so that one setting shows the same numbers everywhere:

* **error**: the share of rows whose predicted label differs from the true one;
* **majority error**: the error of always predicting the most frequent *training* label;
* **F1**: for two classes, the F1 score of the **minority class of the training labels**
  (the larger label on a tie): F1 of a 90 % majority class says little about a model.
  With more classes, the macro average over the model's classes (each class's F1 counted
  once, 0 for a class never predicted nor present).
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import f1_score

__all__ = ["TrainingLabels", "classification_scores", "error_rate", "f1", "minority_class"]


def error_rate(y_true, y_pred) -> float:
    """Share of rows with ``y_pred != y_true``."""
    return float(np.mean(np.asarray(y_pred) != np.asarray(y_true)))


class TrainingLabels:
    """What the training labels decide, computed once for scoring many models trained on
    them: the ``majority`` class, the ``minority`` class (the larger label on a tie) and
    ``f1_label``, the class whose F1 is reported (the minority one for two classes, None
    for the macro average over more)."""

    def __init__(self, y_train):
        labels, counts = np.unique(np.asarray(y_train), return_counts=True)
        self.majority = labels[int(np.argmax(counts))]
        self.minority = labels[len(counts) - 1 - int(np.argmin(counts[::-1]))]
        self.f1_label = self.minority if len(labels) == 2 else None


def minority_class(y):
    """The least frequent label of ``y`` (the larger label on a tie)."""
    return TrainingLabels(y).minority


def f1(y_true, y_pred, label, classes) -> float:
    """F1 of class ``label``, or the macro average over ``classes`` when ``label`` is None
    (0 where a class has no true nor predicted row)."""
    if label is not None:
        # F1 of that class alone, whatever other labels the rows hold.
        return float(f1_score(y_true, y_pred, labels=[label], average="macro",
                              zero_division=0.0))
    return float(f1_score(y_true, y_pred, labels=classes, average="macro",
                          zero_division=0.0))


def classification_scores(y_train, y_test, test_pred, classes, *, pos_label=None) -> dict:
    """The test-set numbers of a model trained on labels ``y_train``.

    Parameters
    ----------
    y_train : array-like or TrainingLabels
        The training labels (they choose the F1 class and the majority baseline).
    y_test, test_pred : array-like
        True and predicted test labels.
    classes : ndarray
        The model's classes (``classes_``).
    pos_label : label, optional
        For two classes, the class whose F1 is reported instead of the minority one.

    Returns
    -------
    dict
        ``test_error``, ``majority_error``, ``f1``, ``f1_label`` (None for the macro
        average) and ``predicted_classes`` (distinct test predictions).
    """
    reference = y_train if isinstance(y_train, TrainingLabels) else TrainingLabels(y_train)
    label = reference.f1_label if pos_label is None or len(classes) != 2 else pos_label
    return {
        "test_error": error_rate(y_test, test_pred),
        "majority_error": error_rate(y_test, reference.majority),
        "f1": f1(y_test, test_pred, label, classes),
        "f1_label": label,
        "predicted_classes": int(np.unique(test_pred).shape[0]),
    }
