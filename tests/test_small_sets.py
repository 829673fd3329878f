"""lam='auto' on small sets: C from 1, 5 and 25 by a 3-fold cross-validation on the fit's
own embedding (snacks_core.model.small_sets)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits, load_wine, make_classification
from sklearn.model_selection import StratifiedKFold
from sklearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from snacks_core import SnacksClassifier
from snacks_core.model.defaults import (
    SEARCH_FOLDS,
    SMALL_SET_C_VALUES,
    SMALL_SET_PAIR_ROWS,
    SMALL_SET_ROWS,
)
from snacks_core.model.small_sets import chooses_C
from snacks_core.solvers.objective import C_to_lam


def _standard(X):
    return StandardScaler().fit_transform(X)


def test_the_choice_is_the_least_cv_error_and_a_fit_at_that_C():
    """C_ is the candidate of least CV error (the smallest among ties), λ = 1/(2nC), and
    the model is the one a fit given that C returns."""
    X, y = load_breast_cancer(return_X_y=True)
    X = _standard(X)
    model = SnacksClassifier(random_state=0).fit(X, y)
    errors = model.C_cv_errors_
    assert tuple(errors) == SMALL_SET_C_VALUES
    assert model.C_ == min(SMALL_SET_C_VALUES, key=lambda C: (errors[C], C))
    assert model.lam_ == pytest.approx(C_to_lam(model.C_, X.shape[0]))
    given_C = SnacksClassifier(C=model.C_, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.coef_, given_C.coef_)
    assert given_C.C_cv_errors_ is None


def _digits_600():
    X, y = load_digits(return_X_y=True)
    return X[:600], y[:600]


@pytest.mark.parametrize("data, multiclass, wrapper", [
    (lambda: load_breast_cancer(return_X_y=True), "auto", None),
    (_digits_600, "ovo", OneVsOneClassifier),
    (_digits_600, "ovr", OneVsRestClassifier),
])
def test_cv_errors_match_liblinear_on_the_same_folds(data, multiclass, wrapper):
    """Oracle: on the fit's own embedding (every row a landmark), LIBLINEAR's hinge-loss SVM
    without intercept at the same C on the same stratified shuffled folds (one-vs-one's
    pairs and one-vs-rest's columns by scikit-learn's wrappers) makes the same held-out
    errors, within a row where 20 epochs (the cross-validation's budget) converge and
    within three rows at C = 25, which they may leave short of LIBLINEAR's optimum."""
    X, y = data()
    X = _standard(X)
    model = SnacksClassifier(random_state=3, multiclass=multiclass).fit(X, y)
    assert model.embedding_.landmarks_.shape[0] == min(X.shape[0], 500)
    Z = model.embedding_.transform(X)
    seed = np.random.RandomState(3).randint(0, 2**31 - 1, size=2)[1]  # draw_seeds' solver seed
    folds = StratifiedKFold(SEARCH_FOLDS, shuffle=True, random_state=int(seed))
    for C in SMALL_SET_C_VALUES:
        wrong = 0
        for train, test in folds.split(Z, y):
            oracle = LinearSVC(C=C, loss="hinge", fit_intercept=False, tol=1e-6,
                               max_iter=100_000)
            oracle = (oracle if wrapper is None else wrapper(oracle)).fit(Z[train], y[train])
            wrong += np.sum(oracle.predict(Z[test]) != y[test])
        rows = 1 if C < 25 else 3
        assert abs(model.C_cv_errors_[C] - wrong / len(y)) <= rows / len(y) + 1e-12


def test_a_noisy_set_chooses_a_small_C_and_a_many_class_set_a_large_one():
    """Label noise: C = 25 fits the noise, the CV prefers less; well-separated classes
    with few rows each: the CV keeps a large C."""
    X, y = make_classification(300, 10, n_informative=5, flip_y=0.3, random_state=0)
    noisy = SnacksClassifier(random_state=0).fit(_standard(X), y)
    assert noisy.C_ < 25.0
    assert noisy.C_cv_errors_[noisy.C_] < noisy.C_cv_errors_[25.0]
    X, y = load_wine(return_X_y=True)
    assert SnacksClassifier(random_state=0).fit(_standard(X), y).C_cv_errors_ is not None


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(1, 9_000), min_size=2, max_size=12))
def test_which_fits_choose_C(sizes):
    """At most SMALL_SET_ROWS rows, or at most SMALL_SET_PAIR_ROWS rows in all over the
    one-vs-one problems (counted pair by pair here), and every class on 3 rows or more."""
    n = sum(sizes)
    pair_rows = sum(a + b for a, b in itertools.combinations(sizes, 2))
    small = n <= SMALL_SET_ROWS or pair_rows <= SMALL_SET_PAIR_ROWS
    assert chooses_C(n, sizes) == (small and min(sizes) >= SEARCH_FOLDS)


@pytest.mark.parametrize("params", [{"C": 25.0}, {"lam": 1e-3}, {"solver": "libsvm"},
                                    {"n_components": "auto"}])
def test_given_regularisation_or_another_input_keeps_it(params):
    X, y = make_classification(200, 6, random_state=0)
    model = SnacksClassifier(random_state=0, **params).fit(X, y)
    assert model.C_cv_errors_ is None
    if "lam" not in params:
        assert model.C_ == pytest.approx(25.0)


def test_a_class_on_fewer_rows_than_folds_keeps_C_25():
    """A class of two rows cannot appear in the training part of three folds."""
    X, y = make_classification(120, 6, random_state=0)
    y[:2], y[2:] = 2, np.where(y[2:] == 2, 0, y[2:])
    model = SnacksClassifier(random_state=0).fit(X, y)
    assert model.C_ == pytest.approx(25.0) and model.C_cv_errors_ is None


def test_sample_weights_weigh_the_cv_errors():
    """Weights of one are no weights; each candidate's error is a weighted rate."""
    X, y = make_classification(240, 6, flip_y=0.1, random_state=1)
    plain = SnacksClassifier(random_state=0).fit(X, y)
    ones = SnacksClassifier(random_state=0).fit(X, y, sample_weight=np.ones(len(y)))
    assert ones.C_cv_errors_ == pytest.approx(plain.C_cv_errors_)
    heavy = SnacksClassifier(random_state=0).fit(
        X, y, sample_weight=np.where(y == 1, 3.0, 1.0))
    assert all(0.0 <= e <= 1.0 for e in heavy.C_cv_errors_.values())


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(6, 150), d=st.integers(1, 6),
       n_classes=st.integers(2, 4), repeats=st.integers(1, 3), sparse=st.booleans(),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_odd_small_sets_fit_and_choose_from_the_candidates(seed, n, d, n_classes, repeats,
                                                           sparse, dtype):
    """Repeated rows (landmarks dropped as duplicates), one or two features, sparse rows,
    float32, classes of a handful of rows: the fit chooses one of the candidates when every
    class has at least three rows (C = 25 otherwise), and predicts one of the classes."""
    rng = np.random.default_rng(seed)
    X = np.repeat(rng.normal(size=(-(-n // repeats), d)), repeats, axis=0)[:n]
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    X = X.astype(dtype)
    if sparse:
        X = scipy.sparse.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    model = SnacksClassifier(random_state=seed, dtype=dtype).fit(X, y)
    if np.bincount(y).min() >= SEARCH_FOLDS:
        assert model.C_ in SMALL_SET_C_VALUES and tuple(model.C_cv_errors_) == SMALL_SET_C_VALUES
        assert all(0.0 <= e <= 1.0 for e in model.C_cv_errors_.values())
    else:
        assert model.C_ == pytest.approx(25.0) and model.C_cv_errors_ is None
    assert set(model.predict(X)) <= set(range(n_classes))
