"""The one feature scaling: which one ('auto' by the kind of data), its statistics, how it is
applied, and how a model file stores it.

Every place that scales rows goes through here: a split fits it on its training rows
(:func:`fit_scaler`), a cluster fit from the sums each worker computes over its own rows
(:func:`column_sums`, :func:`scaling_from_sums`), and a model file saves and reads it back
(:func:`scaling_fields`, :func:`scaling_from_fields`).  The rule is one for all three:

* ``'auto'`` is :func:`snacks_core.model.defaults.default_scaling` of the rows: standard
  for dense rows, none for sparse ones (binary or not, such as tf-idf) and for dense
  columns on one scale (pixels; on a cluster decided on all the files' columns);
* ``'standard'`` divides each column by its standard deviation and centres it on dense
  rows only (sparse rows stay sparse: scikit-learn's ``StandardScaler(with_mean=False)``);
* ``'minmax'`` maps each column to [−1, 1] on dense rows, and divides it by its largest
  absolute value on sparse ones (``MaxAbsScaler``);
* ``'none'`` leaves the rows as they are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from snacks_core.model.defaults import default_scaling

# 'auto': the scaling for the kind of data (default_scaling).
SCALINGS = ("standard", "minmax", "none", "auto")
# The kinds a model file stores: 'maxabs' is 'minmax' on sparse rows.
SAVED_KINDS = ("standard", "minmax", "maxabs")


def resolve_scaling(scaling, X) -> str:
    """``scaling`` itself, or for 'auto' the scaling of the kind of data X is (on a cluster,
    each worker resolves it on its own rows).

    Raises
    ------
    ValueError
        For a name not in :data:`SCALINGS`.
    """
    if scaling not in SCALINGS:
        raise ValueError(f"unknown scaling {scaling!r}; choose one of {SCALINGS}.")
    return default_scaling(X) if scaling == "auto" else scaling


def saved_kind(scaling, sparse) -> str | None:
    """The kind a model file records for ``scaling`` (resolved) fitted on rows that are
    ``sparse`` or not; None for 'none'."""
    if scaling == "none":
        return None
    return "maxabs" if scaling == "minmax" and sparse else scaling


class FeatureScaling(TransformerMixin, BaseEstimator):
    """A fitted scaling from plain arrays: ``standard`` (x − offset) / factor, ``minmax``
    x · factor + offset, ``maxabs`` x / factor (sparse rows stay sparse)."""

    def __init__(self, kind="standard", offset=None, factor=None):
        self.kind, self.offset, self.factor = kind, offset, factor

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        if sp.issparse(X):
            if self.kind == "minmax" or (self.kind == "standard" and np.any(self.offset)):
                raise ValueError("this scaling centres the data, so it needs dense rows.")
            X = sp.csr_matrix(X, dtype=np.float64)
            return sp.csr_matrix(X.multiply(1.0 / self.factor if self.kind != "minmax"
                                            else self.factor))
        X = np.asarray(X, dtype=np.float64)
        if self.kind == "standard":
            return (X - self.offset) / self.factor
        if self.kind == "minmax":
            return X * self.factor + self.offset
        return X / self.factor


def fit_scaler(X_train, X_test, scaling, copy=True):
    """``(X_train, X_test, scaler)``: the resolved ``scaling`` fitted on the training rows
    and applied to both parts (scikit-learn's scalers; ``copy=False`` scales in place);
    ``scaler`` is None for 'none'."""
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if scaling == "none":
        return X_train, X_test, None
    sparse = sp.issparse(X_train)
    if scaling == "standard":
        scaler = StandardScaler(with_mean=not sparse, copy=copy)
    else:
        scaler = (MaxAbsScaler(copy=copy) if sparse
                  else MinMaxScaler(feature_range=(-1, 1), copy=copy))
    X_train, X_test = scaler.fit_transform(X_train), scaler.transform(X_test)
    # The fitted scaler is kept for new rows: those it must copy, never change.
    scaler.set_params(copy=True)
    return X_train, X_test, scaler


class ColumnSums(NamedTuple):
    """Per-column statistics of some rows, combinable across parts (a cluster's
    partitions): their count, mean, sum of squared deviations from the mean, minimum and
    maximum."""

    rows: int
    mean: np.ndarray
    squared_deviations: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray

    def combine(self, other) -> ColumnSums:
        """The statistics of both parts' rows (Chan et al.'s pairwise update)."""
        rows = self.rows + other.rows
        if not self.rows or not other.rows:
            return self if other.rows == 0 else other
        delta = other.mean - self.mean
        return ColumnSums(rows, self.mean + delta * (other.rows / rows),
                          self.squared_deviations + other.squared_deviations
                          + delta**2 * (self.rows * other.rows / rows),
                          np.minimum(self.minimum, other.minimum),
                          np.maximum(self.maximum, other.maximum))


def column_sums(X) -> ColumnSums:
    """The :class:`ColumnSums` of the rows X (dense or sparse; run where the rows are)."""
    rows = X.shape[0]
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        if not rows:
            return _no_rows(X.shape[1])
        mean = np.asarray(X.mean(axis=0)).ravel()
        squares = np.asarray(X.multiply(X).sum(axis=0)).ravel()
        deviations = np.maximum(squares - rows * mean**2, 0.0)
        minimum = np.asarray(X.min(axis=0).toarray()).ravel()
        maximum = np.asarray(X.max(axis=0).toarray()).ravel()
    else:
        X = np.asarray(X, dtype=np.float64)
        if not rows:
            return _no_rows(X.shape[1])
        mean = X.mean(axis=0)
        deviations = np.sum((X - mean) ** 2, axis=0)
        minimum, maximum = X.min(axis=0), X.max(axis=0)
    return ColumnSums(rows, mean, deviations, minimum, maximum)


def _no_rows(width):
    return ColumnSums(0, np.zeros(width), np.zeros(width), np.full(width, np.inf),
                      np.full(width, -np.inf))


def scaling_from_sums(scaling, sums, sparse) -> FeatureScaling | None:
    """The resolved ``scaling`` of rows whose statistics are ``sums``, as
    :func:`fit_scaler` fits it on them (to rounding); ``sparse`` says whether the rows are
    sparse, where it neither centres nor shifts."""
    kind = saved_kind(scaling, sparse)
    if kind is None:
        return None
    if kind == "standard":
        scale = np.sqrt(sums.squared_deviations / max(sums.rows, 1))
        offset = np.zeros_like(sums.mean) if sparse else sums.mean
        return FeatureScaling(kind, offset, _nonzero(scale))
    if kind == "maxabs":
        largest = np.maximum(np.abs(sums.minimum), np.abs(sums.maximum))
        return FeatureScaling(kind, np.zeros_like(largest), _nonzero(largest))
    span = _nonzero(sums.maximum - sums.minimum)
    factor = 2.0 / span
    return FeatureScaling(kind, -1.0 - sums.minimum * factor, factor)


def _nonzero(scale):
    """Zero (and negligible) scales replaced by 1, as scikit-learn's scalers do."""
    return np.where(scale < 10 * np.finfo(np.float64).eps, 1.0, scale)


def scaling_fields(step) -> dict | None:
    """The model-file entries (``scaling``, ``scaling_offset``, ``scaling_factor``) of a
    fitted scaling step, or None when ``step`` is no scaling."""
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if isinstance(step, StandardScaler):
        offset = step.mean_ if step.with_mean else np.zeros_like(step.scale_)
        kind, factor = "standard", step.scale_
    elif isinstance(step, MinMaxScaler):
        kind, offset, factor = "minmax", step.min_, step.scale_
    elif isinstance(step, MaxAbsScaler):
        kind, offset, factor = "maxabs", np.zeros_like(step.scale_), step.scale_
    elif isinstance(step, FeatureScaling):
        kind, offset, factor = step.kind, step.offset, step.factor
    else:
        return None
    return {"scaling": np.array(kind), "scaling_offset": offset, "scaling_factor": factor}


def scaling_from_fields(kind, offset, factor) -> FeatureScaling:
    """The :class:`FeatureScaling` of a model file's entries, checked (a ValueError names
    what is wrong); ``offset`` and ``factor`` are 1-D float arrays of one length."""
    if kind not in SAVED_KINDS:
        raise ValueError(f"not a valid Snacks model file: unknown scaling {kind!r}.")
    if kind != "minmax" and np.any(factor == 0):
        raise ValueError("not a valid Snacks model file: a scaling factor is zero.")
    return FeatureScaling(kind, offset, factor)
