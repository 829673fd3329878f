"""From a dataset to what a model trains on: train/test split, scaling fit on the training
rows, and an optional 2-D projection for pictures."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from snacks_core.datasets.dataset import Dataset, Split
from snacks_core.datasets.scaling import fit_scaler, resolve_scaling
from snacks_core.model.defaults import DEFAULT_TEST_SIZE


def split_dataset(dataset: Dataset, *, test_size: float = DEFAULT_TEST_SIZE,
                  scaling: str = "standard", random_state: int | None = 0,
                  project_2d: bool = False) -> Split:
    """Train/test split (stratified; the dataset's own test part when it has one), scaling fit
    on the training rows, and optionally a 2-D PCA projection (for pictures).

    Examples
    --------
    >>> from snacks_core.datasets import load_bundled, split_dataset
    >>> split = split_dataset(load_bundled("wine"), test_size=0.25, project_2d=True)
    >>> split.X_train.shape, split.X_test.shape, split.feature_names
    ((133, 2), (45, 2), ('PC 1', 'PC 2'))
    >>> [type(step).__name__ for step in split.preprocessing]
    ['StandardScaler', 'PCA']
    """

    scaling = resolve_scaling(scaling, dataset.X)
    if dataset.X_test is not None:
        X_train, y_train, X_test, y_test = dataset.X, dataset.y, dataset.X_test, dataset.y_test
    else:
        if not 0.05 <= test_size <= 0.9:
            raise ValueError(f"test_size must be between 0.05 and 0.9, got {test_size!r}.")
        X_train, X_test, y_train, y_test = _stratified_split(dataset, test_size,
                                                             random_state)
        if np.unique(y_train).shape[0] < 2:
            raise ValueError(f"{dataset.name}: the training part has a single class; use a "
                             "smaller test fraction or more data.")
    # A split's parts are fresh copies, scaled in place (a large X is not copied twice);
    # a dataset's own parts are not ours to change.
    X_train, X_test, scaler = fit_scaler(X_train, X_test, scaling,
                                         copy=dataset.X_test is not None)
    preprocessing = () if scaler is None else (scaler,)
    names, projection = dataset.feature_names, None
    if project_2d and X_train.shape[1] > 2:
        X_train, X_test, model = _project_2d(X_train, X_test, random_state)
        preprocessing += (model,)
        names = ("PC 1", "PC 2")
        projection = (f"2-D PCA projection of {dataset.n_features} features "
                      f"({model.explained_variance_ratio_.sum():.0%} of the variance)")
    return Split(X_train, y_train, X_test, y_test, dataset.name, names, projection,
                 preprocessing)


def _stratified_split(dataset, test_size, random_state):
    """A stratified split of the dataset's rows, where a class of a single row stays in
    training (with a warning that names it): in the test part alone no model could predict
    it, and its F1 would mix labels the model does not know."""
    import warnings

    from sklearn.model_selection import train_test_split

    labels, counts = np.unique(dataset.y, return_counts=True)
    single = labels[counts < 2]
    if not single.size:
        return train_test_split(dataset.X, dataset.y, test_size=test_size,
                                random_state=random_state, stratify=dataset.y)
    named = ", ".join(map(str, single[:5].tolist()))
    which = (f"the class {named} has 1 row, which stays" if single.size == 1 else
             f"the classes {named} have 1 row each, which stay")
    warnings.warn(f"{dataset.name}: {which} in the training part (a test part could not "
                  "measure them); check the labels, or add rows of that class.", UserWarning,
                  stacklevel=3)
    alone = np.isin(dataset.y, single)
    rest = np.flatnonzero(~alone)
    y_rest = dataset.y[rest]
    # The other rows, stratified when every class of them has two rows or more.
    train, test = train_test_split(rest, test_size=test_size, random_state=random_state,
                                   stratify=y_rest if np.unique(y_rest).size > 1 else None)
    train = np.sort(np.concatenate([train, np.flatnonzero(alone)]))
    return dataset.X[train], dataset.X[test], dataset.y[train], dataset.y[test]


def with_test_part(dataset: Dataset, test: Dataset) -> Dataset:
    """``dataset`` with the rows of ``test`` as its own test part, which
    :func:`split_dataset` then uses instead of a random split (scaled with what it fits on
    the training rows).

    ``test`` must be read as the training file is (:func:`~snacks_core.datasets.load_files`
    reads a pair with one LIBSVM index base and one width) and hold labels.

    Examples
    --------
    >>> from snacks_core.datasets import load_files, sample_data_dir, split_dataset
    >>> from snacks_core.datasets import with_test_part
    >>> train, test = load_files([sample_data_dir() / "a9a_small.svm"] * 2,
    ...                          purpose=("train", "predict"))
    >>> split = split_dataset(with_test_part(train, test))
    >>> split.X_train.shape[0] == split.X_test.shape[0] == train.n_samples
    True
    """
    if test.y is None:
        raise ValueError(f"{test.name} has no labels: a test file needs them to measure the "
                         "test error (the same label column as the training file).")
    if test.n_features != dataset.n_features:
        raise ValueError(f"{test.name} has {test.n_features:,} features where the training "
                         f"file {dataset.name} has {dataset.n_features:,}: read the two with "
                         "snacks_core.datasets.load_files, which gives them one width.")
    # A built-in dataset (no index base) takes its LIBSVM test file's, which a model keeps.
    return replace(dataset, X_test=test.X, y_test=test.y,
                   index_base=(test.index_base if dataset.index_base is None
                               else dataset.index_base))


def _project_2d(X_train, X_test, random_state):
    from sklearn.decomposition import PCA, TruncatedSVD

    if sp.issparse(X_train):
        model = TruncatedSVD(2, random_state=random_state)
    else:
        model = PCA(2, random_state=random_state)
    train = model.fit_transform(X_train)
    return (np.ascontiguousarray(train), np.ascontiguousarray(model.transform(X_test)), model)
