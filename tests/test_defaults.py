"""The one defaults rule (snacks_core.model.defaults) and the one settings → estimator translation
(snacks_core.model.estimator)."""

from __future__ import annotations

import doctest

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis.extra.numpy import arrays

from snacks_core.datasets import make_dataset, split_dataset
from snacks_core.model import defaults
from snacks_core.model import estimator as settings
from snacks_core.model.estimator import estimator_from_settings
from snacks_core.solvers.objective import lam_to_C


def _tfidf_like(n=60, d=40, seed=0):
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr")
    X.data = 0.1 + X.data
    return X


@pytest.mark.parametrize("X, expected", [
    (np.ones((5, 3)), "standard"),
    (sp.csr_matrix(np.eye(5)), "none"),        # sparse binary (one-hot)
    (_tfidf_like(), "none"),                   # sparse non-binary (tf-idf)
])
def test_scaling_follows_the_kind_of_data(X, expected):
    assert defaults.default_scaling(X) == expected
    assert defaults.data_aware_defaults(X, 1000)["scaling"] == expected
    assert defaults.resolve_scaling("auto", X) == expected
    assert defaults.resolve_scaling("minmax", X) == "minmax"


def test_dense_columns_on_one_scale_are_used_as_they_are():
    """Oracle: the sets measured in BENCHMARKS.md ("Data on one scale"): digits' pixels
    (0 to 16, border pixels rarely inked) on one scale, the same standardised or any set
    of mixed units not; two columns never tell."""
    from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
    from sklearn.preprocessing import StandardScaler

    digits = load_digits().data
    assert defaults.default_scaling(digits) == "none"
    assert defaults.default_scaling(digits.astype(np.float32)) == "none"
    assert defaults.default_scaling(digits.astype(np.uint8)) == "none"
    assert defaults.default_scaling(StandardScaler().fit_transform(digits)) == "standard"
    for load in (load_iris, load_wine, load_breast_cancer):
        assert defaults.default_scaling(load().data) == "standard"
    rng = np.random.default_rng(0)
    assert defaults.default_scaling(rng.integers(0, 101, (50, 2)).astype(float)) == "standard"
    assert defaults.default_scaling(rng.integers(0, 101, (50, 3)).astype(float)) == "none"
    with_nan = digits.copy()
    with_nan[0, 0] = np.nan  # refused later by the checks; never 'none' by accident
    assert defaults.default_scaling(with_nan) == "standard"
    assert defaults.default_scaling(np.zeros((0, 5))) == "standard"


@given(arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(3, 12)),
              elements=st.floats(-1e6, 1e6)), st.floats(0.01, 100.0), st.floats(-50.0, 50.0))
def test_one_scale_does_not_depend_on_the_unit_or_the_origin(X, unit, origin):
    """Brute force: a shared unit and origin change nothing, and the rule is the median of
    the columns' spans against the whole range."""
    spans = X.max(axis=0) - X.min(axis=0)
    whole = X.max() - X.min()
    expected = bool(whole > 0 and np.median(spans) >= defaults.SHARED_SCALE_SPAN * whole)
    assert defaults.on_one_scale(X.min(axis=0), X.max(axis=0)) == expected
    moved = X * unit + origin
    # Clear of rounding: not at the threshold itself, nor a range lost in the origin.
    clear = whole > 0 and abs(np.median(spans) / whole - defaults.SHARED_SCALE_SPAN) > 1e-9
    if clear and whole * unit > 1e-6 * max(1.0, np.abs(moved).max()):
        assert defaults.on_one_scale(moved.min(axis=0), moved.max(axis=0)) == expected


@pytest.mark.parametrize("n", [1, 100, 35_000, 10**7])
def test_lam_keeps_C_at_25(n):
    assert lam_to_C(defaults.default_lam(n), n) == pytest.approx(25.0)


@pytest.mark.parametrize("n, d, m", [(10, 5, 10), (400, 5, 50), (10_000, 5, 200),
                                     (10**6, 5, 500), (10**6, 2, 100)])
def test_m_is_two_root_n_within_bounds(n, d, m):
    assert defaults.default_m(n, d) == m


@pytest.mark.parametrize("n, d, classes, m", [
    (1_257, 64, 10, 300),   # digits: 30 a class, not 2√n = 71
    (1_257, 64, 2, 71),     # two classes keep 2√n
    (16_000, 16, 26, 500),  # 26 classes: 780, capped at 500
    (100_000, 16, 3, 500),  # 2√n = 632 above 90: the cap
    (40_000, 16, 3, 400),   # 2√n = 400 above 90
    (80, 5, 3, 80),         # at most n
    (400, 2, 5, 50),        # two features: the 2-D range, whatever the classes
])
def test_many_classes_get_thirty_landmarks_a_class(n, d, classes, m):
    assert defaults.default_m(n, d, classes) == m


def test_grids_centre_on_the_defaults():
    Cs = defaults.C_values_around_default(3)
    assert Cs[3] == defaults.DEFAULT_C_ON_STEPS == defaults.round_125(25.0)
    assert np.allclose(np.diff(np.log10(Cs)), 1.0)
    gammas = defaults.gamma_values_around(0.37, (0.1, 1.0, 10.0, 1e9))
    assert gammas == [0.05, 0.5, 5.0, defaults.GAMMA_RANGE[1]]
    assert [defaults.round_125(v) for v in (0.013, 0.3, 4.0, 7.5)] == [0.01, 0.2, 5.0, 10.0]


def test_split_resolves_auto_scaling():
    y = np.arange(60) % 2
    sparse = split_dataset(make_dataset(_tfidf_like(), y, "text"), scaling="auto")
    assert sparse.preprocessing == ()
    dense = split_dataset(make_dataset(np.random.default_rng(0).normal(size=(60, 3)), y, "d"),
                          scaling="auto")
    assert [type(step).__name__ for step in dense.preprocessing] == ["StandardScaler"]


def test_estimator_from_settings():
    model = estimator_from_settings({"kernel": "linear", "n_components": 7, "tol": 1e-4},
                                    solver_options={"polish": False})
    assert (model.kernel, model.n_components, model.tol) == ("linear", 7, 1e-4)
    assert model.solver_options == {"polish": False}
    with pytest.raises(ValueError, match="unknown model parameters \\['bogus'\\]"):
        estimator_from_settings({"bogus": 1})
    with pytest.raises(ValueError, match="solver_options"):
        estimator_from_settings({"solver_options": {}})


@pytest.mark.parametrize("module", [defaults, settings])
def test_examples_run(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
