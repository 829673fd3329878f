"""C wherever λ is, and the data-aware 'auto' values of SnacksClassifier."""

import numpy as np
import pytest
from sklearn.datasets import make_moons

from snacks_core import SnacksClassifier
from snacks_core.model.defaults import SMALL_SET_PAIR_ROWS, default_lam, default_m
from snacks_core.model.search import SnacksSearchCV


@pytest.fixture(scope="module")
def moons():
    return make_moons(900, noise=0.25, random_state=0)


def test_C_is_lambda_over_the_training_rows(moons):
    X, y = moons
    by_C = SnacksClassifier(C=10.0, n_components=30, gamma=2.0, random_state=0).fit(X, y)
    lam = 1.0 / (2 * X.shape[0] * 10.0)
    by_lam = SnacksClassifier(lam=lam, n_components=30, gamma=2.0, random_state=0).fit(X, y)
    assert by_C.lam_ == pytest.approx(lam, rel=1e-15)
    assert by_C.C_ == pytest.approx(10.0, rel=1e-12)
    np.testing.assert_array_equal(by_C.coef_, by_lam.coef_)


def test_C_and_lam_together_are_refused(moons):
    with pytest.raises(ValueError, match="Give C or lam, not both"):
        SnacksClassifier(C=1.0, lam=1e-3).fit(*moons)


@pytest.mark.parametrize("params", [{"C": 0.0}, {"C": -1.0}, {"lam": "big"},
                                    {"n_components": "many"}])
def test_bad_regularization_values_are_refused(moons, params):
    with pytest.raises(ValueError):
        SnacksClassifier(**params).fit(*moons)


def test_auto_values_follow_the_data():
    """Beyond the small sets (two classes: more than 15,000 rows): λ = 0.02/n (C = 25) and
    m = 2√n (100 at most on two features)."""
    X, y = make_moons(SMALL_SET_PAIR_ROWS + 100, noise=0.25, random_state=0)
    model = SnacksClassifier(gamma=2.0, random_state=0).fit(X, y)
    assert model.lam_ == default_lam(X.shape[0]) == pytest.approx(0.02 / X.shape[0])
    assert model.C_ == pytest.approx(25.0) and model.C_cv_errors_ is None
    # Two features: at most 100 landmarks; rows repeating a landmark are dropped.
    assert model.embedding_.landmarks_.shape[0] <= default_m(X.shape[0], X.shape[1]) == 100
    assert model.score(X, y) > 0.9


def test_search_takes_C_with_an_estimator_set_by_C(moons):
    X, y = moons
    base = SnacksClassifier(C=1.0, n_components=20, gamma=2.0, random_state=0)
    search = SnacksSearchCV(base, {"C": [0.1, 10.0]}, cv=2).fit(X, y)
    assert search.best_params_["C"] in (0.1, 10.0)
    assert search.best_estimator_.C is None
    n = X.shape[0]
    assert search.best_estimator_.lam_ == pytest.approx(1 / (2 * n * search.best_params_["C"]))
    # A grid over other parameters keeps the estimator's C.
    kept = SnacksSearchCV(base, {"n_components": [10, 20]}, cv=2).fit(X, y)
    assert kept.best_estimator_.lam_ == pytest.approx(1 / (2 * n * 1.0))
