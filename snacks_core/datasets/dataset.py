"""The types every source returns: :class:`Dataset` (validated by :func:`make_dataset`) and
:class:`Split` (what a model trains on), and :class:`FeatureNames` for wide files."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from snacks_core.core.validation import check_data

# What rows are read for: 'train' needs two classes or more, 'predict' any labels or none.
PURPOSES = ("train", "predict")


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features, labels and names; ``X_test``/``y_test`` when the source fixes a test split.

    ``file_format`` ('csv' or 'libsvm') and ``label_column`` (a CSV's label column: its name,
    or its index when the file has no header) say how to read a file dataset again;
    ``index_base`` (0 or 1) is the feature index base a LIBSVM file was read with (None for
    other sources), which a saved model keeps so that new files are read with it.  ``y`` is
    None only for a file without labels read to predict on (``purpose='predict'``).
    """

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    name: str
    feature_names: Sequence = ()
    description: str = ""
    X_test: np.ndarray | sp.csr_matrix | None = None
    y_test: np.ndarray | None = None
    file_format: str | None = None
    label_column: str | int | None = None
    index_base: int | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def classes(self) -> np.ndarray:
        """The distinct labels of ``y`` (none when the file has no labels)."""
        return np.unique(self.y) if self.y is not None else np.array([])

    def class_counts(self) -> dict:
        """Number of rows of each class in ``y`` (the training part); empty without labels."""
        if self.y is None:
            return {}
        values, counts = np.unique(self.y, return_counts=True)
        return {value.item(): int(count) for value, count in zip(values, counts, strict=True)}


@dataclass(frozen=True, eq=False)
class Split:
    """A train/test split ready for a model: scaled, optionally projected to 2-D."""

    X_train: np.ndarray | sp.csr_matrix
    y_train: np.ndarray
    X_test: np.ndarray | sp.csr_matrix
    y_test: np.ndarray
    name: str
    feature_names: Sequence
    projection: str | None = None
    # The fitted scaler and 2-D projection, in the order applied: a model trained on this
    # split predicts on raw rows through make_pipeline(*preprocessing, model).
    preprocessing: tuple = ()

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def n_classes(self) -> int:
        """The classes among the training labels."""
        return np.unique(self.y_train).shape[0]


def make_dataset(X: ArrayLike | sp.spmatrix, y: ArrayLike | None, name: str, *,
                 feature_names: Sequence[str] | None = None, description: str = "",
                 X_test: ArrayLike | sp.spmatrix | None = None, y_test: ArrayLike | None = None,
                 file_format: str | None = None, label_column: str | int | None = None,
                 index_base: int | None = None, purpose: str = "train") -> Dataset:
    """A validated :class:`Dataset`: numeric finite X, one label per row, two classes or more.

    Parameters
    ----------
    X, y, name, feature_names, description, X_test, y_test, file_format, label_column,
    index_base
        The fields of :class:`Dataset`.
    purpose : {'train', 'predict'}, default='train'
        'train': ``y`` needs two classes or more (a classifier learns from them).
        'predict': rows to predict on: ``y`` may hold a single label (a placeholder, or a
        batch of one class) or be None (no labels).

    Examples
    --------
    >>> from snacks_core.datasets import make_dataset
    >>> data = make_dataset([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]], ["a", "b", "a"], "toy")
    >>> data.n_samples, data.n_features, list(data.feature_names), data.class_counts()
    (3, 2, ['x1', 'x2'], {'a': 2, 'b': 1})
    >>> make_dataset([[0.0], [1.0]], [1, 1], "toy")
    Traceback (most recent call last):
    ...
    ValueError: toy: all rows have the same label (1); a classifier needs at least two classes. ...
    """
    if purpose not in PURPOSES:
        raise ValueError(f"purpose must be one of {PURPOSES}, not {purpose!r}.")
    X = check_data(X)
    if y is not None or purpose == "train":
        y = _check_labels(y, X.shape[0], name, 2 if purpose == "train" else 1)
    if X_test is not None:
        X_test = check_data(X_test, name="X_test")
        if X_test.shape[1] != X.shape[1]:
            raise ValueError(f"{name}: the test part has {X_test.shape[1]} features, the training "
                             f"part {X.shape[1]}; both need the same columns.")
        y_test = _check_labels(y_test, X_test.shape[0], f"{name} (test part)", min_classes=1)
    if feature_names is None or len(feature_names) != X.shape[1]:
        feature_names = FeatureNames(X.shape[1])
    elif not isinstance(feature_names, FeatureNames):
        feature_names = tuple(str(f) for f in feature_names)
    return Dataset(X, y, name, feature_names, description, X_test, y_test, file_format,
                   label_column, index_base)


def _check_labels(y, n_rows, name, min_classes=2):
    if y is None:
        raise ValueError(f"{name}: the data has no labels; a file to train on needs a label "
                         "column (a file to predict on may lack one: purpose='predict').")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"{name}: {n_rows} rows of features but labels of shape {y.shape}; "
                         "give one label per row.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name}: some labels are NaN or infinite; remove those rows.")
    if y.dtype.kind == "O":
        y = y.astype(str)
    if np.unique(y).shape[0] < min_classes:
        raise ValueError(f"{name}: all rows have the same label ({y[0].item()!r}); a "
                         "classifier needs at least two classes. Check the label column.")
    return y


class FeatureNames(Sequence):
    """``x1, x2, …`` made on demand: a LIBSVM file may have millions of columns."""

    def __init__(self, n_features):
        self._n = int(n_features)

    def __len__(self):
        return self._n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        i = operator.index(index)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"feature {index} of {self._n}")
        return f"x{i + 1}"

    def __eq__(self, other):
        if isinstance(other, FeatureNames):
            return self._n == other._n
        if isinstance(other, (tuple, list)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self):
        return hash((FeatureNames, self._n))

    def __repr__(self):
        return f"FeatureNames({self._n})"
