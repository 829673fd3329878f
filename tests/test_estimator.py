"""SnacksClassifier: the scikit-learn contract, accuracy against exact SVC, bad input."""

from __future__ import annotations

import itertools
import time
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_iris,
    load_wine,
    make_classification,
    make_moons,
)
from sklearn.metrics import f1_score, recall_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.kernels.random_features import RandomFourierFeatures
from snacks_core.model.estimator import SnacksClassifier
from snacks_core.solvers.base import HISTORY_COLUMNS
from snacks_core.solvers.objective import lam_to_C

SOLVERS = ("snacks", "pegasos", "liblinear", "libsvm")


def _expected_failed_checks(estimator):
    if isinstance(estimator, (NystromEmbedding, RandomFourierFeatures)):
        return {}
    reason = ("fitting with integer sample weights differs from fitting on repeated rows: "
              "the landmarks are drawn from a different row set and the stochastic solver "
              "samples rows uniformly, so weights and repetitions give different iterates")
    return {
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason,
    }


@parametrize_with_checks(
    [SnacksClassifier(n_components=20, max_epochs=20, random_state=0),
     # The feature maps too (issue 11).
     RandomFourierFeatures(n_components=20, random_state=0),
     RandomFourierFeatures(kernel="laplacian", n_components=20, random_state=0),
     NystromEmbedding(n_components=5, random_state=0)],
    expected_failed_checks=_expected_failed_checks,
    xfail_strict=True,
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # The checks fit on 10–20 rows: m landmarks are clipped, as documented.
        warnings.filterwarnings("ignore", "n_components=.* is larger", UserWarning)
        check(estimator)


# ------------------------------------------------------------------ accuracy vs exact SVC


@pytest.fixture(scope="module")
def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, random_state=0, stratify=y
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


@pytest.fixture(scope="module")
def digits_seven():
    X, y = load_digits(return_X_y=True)
    return train_test_split(
        X / 16.0, (y == 7).astype(int), test_size=0.5, random_state=0, stratify=y
    )


def test_breast_cancer_accuracy_matches_svc(breast_cancer):
    X_train, X_test, y_train, y_test = breast_cancer
    lam = 1e-3
    exact = (
        SVC(C=lam_to_C(lam, len(y_train)), gamma="scale")
        .fit(X_train, y_train)
        .score(X_test, y_test)
    )
    for seed in (0, 1):
        model = SnacksClassifier(n_components=200, lam=lam, random_state=seed).fit(X_train, y_train)
        assert abs(model.score(X_test, y_test) - exact) <= 0.01


def test_digits_seven_f1_matches_svc(digits_seven):
    X_train, X_test, y_train, y_test = digits_seven
    lam = 1e-4
    exact = SVC(C=lam_to_C(lam, len(y_train)), gamma="scale").fit(X_train, y_train)
    exact_f1 = f1_score(y_test, exact.predict(X_test))
    for seed in (0, 1):
        model = SnacksClassifier(n_components=300, lam=lam, random_state=seed).fit(X_train, y_train)
        assert abs(f1_score(y_test, model.predict(X_test)) - exact_f1) <= 0.01


def test_libsvm_solver_is_the_exact_svc(breast_cancer):
    X_train, X_test, y_train, y_test = breast_cancer
    lam = 1e-3
    exact = SVC(C=lam_to_C(lam, len(y_train)), gamma="scale").fit(X_train, y_train)
    model = SnacksClassifier(lam=lam, solver="libsvm").fit(X_train, y_train)
    np.testing.assert_allclose(model.decision_function(X_test), exact.decision_function(X_test),
                               rtol=1e-7, atol=1e-7)
    np.testing.assert_array_equal(model.landmark_indices_, np.sort(exact.support_))


# --------------------------------------------------------------------- labels and shapes


@pytest.mark.parametrize("loader", [load_iris, load_wine])
def test_multiclass_string_labels_one_vs_rest(loader):
    data = loader()
    X = StandardScaler().fit_transform(data.data)
    labels = data.target_names[data.target]
    model = SnacksClassifier(n_components=60, lam=1e-3, random_state=0).fit(X, labels)
    k = model.embedding_.n_components_
    assert list(model.classes_) == sorted(data.target_names)
    assert model.coef_.shape == (3, k) and model.intercept_.shape == (3,)
    assert model.decision_function(X).shape == (len(X), 3)
    predicted = model.predict(X)
    assert predicted.dtype == labels.dtype and set(predicted) <= set(labels)
    assert model.score(X, labels) >= 0.9
    h = model.history_
    assert set(h) == {"problem", *HISTORY_COLUMNS}
    assert len({len(column) for column in h.values()}) == 1
    np.testing.assert_array_equal(np.unique(h["problem"]), [0, 1, 2])
    assert len(model.stop_reasons_) == 3


def test_digits_ten_classes():
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.3, random_state=0)
    for multiclass, n_problems in (("auto", 45), ("ovr", 10)):
        model = SnacksClassifier(n_components=150, lam=1e-4, max_epochs=20, random_state=0,
                                 multiclass=multiclass).fit(X_train, y_train)
        # One problem a pair of classes (one-vs-one, 'auto' here), or a class.
        assert model.multiclass_ == multiclass.replace("auto", "ovo")
        assert model.coef_.shape == (n_problems, model.embedding_.n_components_)
        assert model.score(X_test, y_test) >= 0.95


def test_binary_labels_keep_their_type():
    X, y = make_classification(120, 4, random_state=0)
    labels = np.where(y == 1, "spam", "ham")
    model = SnacksClassifier(n_components=30, random_state=0).fit(X, labels)
    assert model.coef_.shape == (1, model.embedding_.n_components_)
    assert model.intercept_.shape == (1,)
    assert model.decision_function(X).shape == (120,)
    predicted = model.predict(X)
    assert predicted.dtype == labels.dtype
    # classes_[1] is the positive class: positive scores predict it.
    np.testing.assert_array_equal(predicted == "spam", model.decision_function(X) > 0)
    h = model.history_
    np.testing.assert_array_equal(h["problem"], np.zeros(len(h["iteration"])))


def test_eval_set_records_a_validation_error():
    X, y = make_classification(300, 5, random_state=1)
    model = SnacksClassifier(n_components=40, max_epochs=10, random_state=0)
    model.fit(X[:200], y[:200], eval_set=(X[200:], y[200:]))
    errors = model.history_["validation_error"]
    assert np.all(np.isfinite(errors)) and np.all((errors >= 0) & (errors <= 1))
    assert errors[-1] == pytest.approx(np.mean(model.predict(X[200:]) != y[200:]))
    plain = SnacksClassifier(n_components=40, max_epochs=10, random_state=0).fit(X[:200], y[:200])
    assert np.all(np.isnan(plain.history_["validation_error"]))
    np.testing.assert_array_equal(plain.coef_, model.coef_)


def test_same_random_state_same_model():
    X, y = make_classification(200, 5, random_state=2)
    first = SnacksClassifier(n_components=30, random_state=7).fit(X, y)
    second = SnacksClassifier(n_components=30, random_state=7).fit(X, y)
    np.testing.assert_array_equal(first.coef_, second.coef_)
    np.testing.assert_array_equal(first.landmark_indices_, second.landmark_indices_)
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    other = SnacksClassifier(n_components=30, random_state=8).fit(X, y)
    assert not np.array_equal(first.landmark_indices_, other.landmark_indices_)


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_fits_and_predicts(solver):
    X, y = make_moons(200, noise=0.15, random_state=3)
    labels = np.array(["a", "b"])[y]
    start = time.perf_counter()
    model = SnacksClassifier(n_components=40, lam=1e-3, solver=solver, random_state=0).fit(
        X, labels
    )
    wall_time = time.perf_counter() - start
    assert model.score(X, labels) >= 0.95
    assert set(model.history_) == {"problem", *HISTORY_COLUMNS}
    assert model.n_iter_ > 0 and model.training_time_ > 0
    # Both stages are timed inside the call, one after the other.
    assert model.embedding_time_ + model.training_time_ <= wall_time
    dense_sparse = model.predict(sp.csr_matrix(X))
    np.testing.assert_array_equal(dense_sparse, model.predict(X))


def test_balanced_class_weight_helps_the_minority():
    X, y = make_classification(600, 5, n_informative=3, weights=[0.92], flip_y=0.02, class_sep=0.6,
                               random_state=0)
    X_train, y_train, X_test, y_test = X[:400], y[:400], X[400:], y[400:]
    plain = SnacksClassifier(n_components=50, lam=1e-3, random_state=0).fit(X_train, y_train)
    balanced = SnacksClassifier(n_components=50, lam=1e-3, class_weight="balanced",
                                random_state=0).fit(X_train, y_train)
    assert not np.allclose(plain.coef_, balanced.coef_)
    assert (
        recall_score(y_test, balanced.predict(X_test))
        > recall_score(y_test, plain.predict(X_test)) + 0.3
    )
    assert recall_score(y_train, balanced.predict(X_train)) > recall_score(
        y_train, plain.predict(X_train)
    )


# ------------------------------------------------------------------------------ bad input


def _small_data():
    X, y = make_classification(40, 3, n_informative=2, n_redundant=0, random_state=4)
    return X, y


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_values_are_refused(value):
    X, y = _small_data()
    X[5, 1] = value
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        SnacksClassifier(n_components=10).fit(X, y)
    model = SnacksClassifier(n_components=10, random_state=0).fit(*_small_data())
    with pytest.raises(ValueError, match="Input X contains (NaN|infinity)"):
        model.predict(X)


def test_single_class_is_refused():
    X, _ = _small_data()
    with pytest.raises(ValueError, match="only one class.*at least 2 classes"):
        SnacksClassifier(n_components=10).fit(X, np.full(40, "cat"))


def _refused(name, accepted):
    """scikit-learn's parameter-validation message for ``name``: what it must be."""
    return rf"The '{name}' parameter of SnacksClassifier must be {accepted}"


@pytest.mark.parametrize(
    "options, message",
    [
        ({"lam": 0.0}, _refused("lam", r"a float in the range \(0(\.0)?, inf\)")),
        ({"lam": -1e-3}, _refused("lam", "a float in the range")),
        ({"lam": np.nan}, _refused("lam", "a float in the range")),
        ({"gamma": 0.0}, _refused("gamma", "a float in the range.*or a str among")),
        ({"gamma": -2.0}, _refused("gamma", "a float in the range")),
        ({"kernel": "sigmoid"}, _refused("kernel", "a str among.*'rbf'.*Got 'sigmoid'")),
        ({"solver": "sgd"}, _refused("solver", "a str among.*'snacks'.*Got 'sgd'")),
        ({"solver": "libsvm", "gamma": 0.0}, _refused("gamma", "a float in the range")),
        ({"sampling": "random"}, _refused("sampling", "a str among.*'uniform'")),
        ({"early_stopping": "yes"}, _refused("early_stopping", "an instance of 'bool'")),
        ({"early_stopping": True, "validation_fraction": 1.5},
         _refused("validation_fraction", r"a float in the range \(0(\.0)?, 1(\.0)?\)")),
        ({"n_jobs": 0}, "n_jobs must be"),
        ({"storage": "tape"}, _refused("storage", "a str among.*'memory'")),
        ({"max_epochs": 0}, _refused("max_epochs", "a float in the range")),
        ({"n_components": 0}, _refused("n_components", "an int in the range")),
    ],
)
def test_bad_parameters_are_refused(options, message):
    X, y = _small_data()
    with pytest.raises(ValueError, match=message):
        SnacksClassifier(**{"n_components": 10, **options}).fit(X, y)


def test_non_numeric_columns_are_refused():
    pd = pytest.importorskip("pandas")
    X, y = _small_data()
    frame = pd.DataFrame({"a": X[:, 0], "colour": np.where(y == 1, "red", "blue")})
    with pytest.raises(ValueError, match="X must be numeric.*'(red|blue)'.*Encode categorical"):
        SnacksClassifier(n_components=10).fit(frame, y)
    model = SnacksClassifier(n_components=10, random_state=0).fit(X, y)
    strings = X.astype(object)
    strings[0, 0] = "abc"
    with pytest.raises(ValueError, match="X must be numeric.*Encode categorical"):
        model.predict(strings)


def test_bad_sample_weights_are_refused():
    X, y = _small_data()
    with pytest.raises(ValueError, match="(?i)weights must contain at least one non-zero"):
        SnacksClassifier(n_components=10).fit(X, y, sample_weight=np.zeros(40))
    with pytest.raises(ValueError, match="All sample weights are zero"):
        SnacksClassifier(n_components=10, class_weight={0: 0.0, 1: 0.0}).fit(X, y)
    with pytest.raises(ValueError, match="Negative values"):
        SnacksClassifier(n_components=10).fit(X, y, sample_weight=-np.ones(40))
    with pytest.raises(ValueError, match="sample_weight"):
        SnacksClassifier(n_components=10).fit(X, y, sample_weight=np.ones(39))


def test_more_landmarks_than_rows_warns_and_fits():
    X, y = _small_data()
    with pytest.warns(UserWarning, match="n_components=100 is larger than the number of samples"):
        model = SnacksClassifier(n_components=100, random_state=0).fit(X, y)
    assert model.landmark_indices_.shape == (40,)
    assert model.score(X, y) >= 0.8


# ------------------------------------------------- early stopping, threads and storage


def _large_binary_problem(n=12000, seed=0):
    X, y = make_classification(n, 8, n_informative=5, flip_y=0.05, random_state=seed)
    return X, y


def test_early_stopping_auto_holds_out_a_validation_set_on_large_data():
    X_all, y_all = _large_binary_problem(16000)
    X, y, X_test, y_test = X_all[:12000], y_all[:12000], X_all[12000:], y_all[12000:]
    model = SnacksClassifier(n_components=60, lam=1e-6, random_state=0).fit(X, y)
    assert model.stop_reasons_ == ["early_stopping"]
    small = SnacksClassifier(n_components=60, lam=1e-4, random_state=0).fit(X[:2000], y[:2000])
    assert small.stop_reasons_ == ["tol_gap"]
    certified = SnacksClassifier(n_components=60, lam=1e-6, random_state=0, early_stopping=False,
                                 max_epochs=5000).fit(X, y)
    h = certified.history_
    assert certified.stop_reasons_ == ["tol_gap"] and h["gap"][-1] <= 1e-3 * h["objective"][-1]
    # Stopping on the validation plateau costs at most a point of accuracy here.
    assert model.score(X_test, y_test) >= certified.score(X_test, y_test) - 0.01


def test_early_stopping_never_looks_at_the_eval_set():
    """The eval_set (a test set in the app) is recorded; stopping uses held-out training
    rows, so the model does not depend on the eval_set."""
    X, y = _large_binary_problem()
    options = dict(n_components=40, lam=1e-4, random_state=0, n_iter_no_change=2)
    plain = SnacksClassifier(**options).fit(X[:11000], y[:11000])
    watched = SnacksClassifier(**options).fit(X[:11000], y[:11000],
                                               eval_set=(X[11000:], y[11000:]))
    np.testing.assert_array_equal(plain.coef_, watched.coef_)
    assert plain.stop_reasons_ == watched.stop_reasons_
    # Without an eval_set the history shows the held-out rows' error, with one the eval_set's.
    assert np.all(np.isfinite(plain.history_["validation_error"]))
    assert np.all(np.isfinite(watched.history_["validation_error"]))
    assert not np.array_equal(plain.history_["validation_error"],
                              watched.history_["validation_error"])


def test_one_vs_rest_in_threads_equals_one_thread():
    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    one = SnacksClassifier(n_components=30, random_state=0, n_jobs=1).fit(X, y)
    many = SnacksClassifier(n_components=30, random_state=0, n_jobs=3).fit(X, y)
    np.testing.assert_array_equal(one.coef_, many.coef_)
    assert one.stop_reasons_ == many.stop_reasons_


@pytest.mark.parametrize("storage", ["compact", "disk"])
def test_streamed_storage_fits_like_memory(storage):
    X, y = _large_binary_problem(6000)
    options = dict(n_components=50, lam=1e-4, random_state=0, early_stopping=False,
                   max_epochs=500, dtype=np.float32)
    memory = SnacksClassifier(**options).fit(X, y)
    with pytest.warns(UserWarning, match="float16|temporary file"):
        streamed = SnacksClassifier(**options, storage=storage).fit(X, y)
    assert streamed.storage_ == storage and memory.storage_ == "memory"
    # Both reach the certified tol on (nearly) the same problem: float16 rows perturb it.
    for model in (memory, streamed):
        assert model.stop_reasons_ == ["tol_gap"]
    assert abs(streamed.history_["objective"][-1] - memory.history_["objective"][-1]) <= (
        3e-3 * memory.history_["objective"][-1])
    assert np.mean(streamed.predict(X) == memory.predict(X)) > 0.99


def test_budget_below_the_embedding_streams_it_from_disk():
    """A float32 embedding twice the memory budget trains out of core."""
    X, y = _large_binary_problem(6000)
    n_components = 50
    budget = 6000 * n_components * 4 // 2
    with pytest.warns(UserWarning, match="temporary file"):
        model = SnacksClassifier(n_components=n_components, lam=1e-4, random_state=0,
                                 early_stopping=False, max_epochs=500,
                                 memory_budget=budget).fit(X, y)
    assert model.storage_ == "disk" and model.stop_reasons_ == ["tol_gap"]
    reference_model = SnacksClassifier(n_components=n_components, lam=1e-4, random_state=0,
                                       early_stopping=False, max_epochs=500).fit(X, y)
    assert model.score(X, y) == pytest.approx(reference_model.score(X, y), abs=0.01)
    with pytest.raises(ValueError, match="snacks"):
        SnacksClassifier(n_components=n_components, solver="pegasos",
                         memory_budget=budget).fit(X, y)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_train_error_is_the_error_of_predict_on_the_training_rows(n_classes):
    # Early stopping holds rows out, and the error counts them too.
    X, y = make_classification(12_000, 8, n_informative=5, n_classes=n_classes,
                               flip_y=0.1, random_state=0)
    model = SnacksClassifier(n_components=40, lam=1e-4, random_state=0,
                             early_stopping=True).fit(X, y)
    assert np.isfinite(model.history_["validation_error"]).all()  # rows were held out
    assert model.train_error_ == pytest.approx(np.mean(model.predict(X) != y), abs=0)
    assert model.train_error_ > 0
    # F(w) on every row from the decision values, averaged over the two-class problems:
    # for one-vs-one (three classes here) each pair's hinge on its own rows, the others
    # at weight 0.
    scores = model.subproblem_decisions(X)
    classes = model.classes_
    targets = ([np.where(y == classes[1], 1.0, -1.0)] if n_classes == 2 else
               [np.where(y == classes[a], 1.0, np.where(y == classes[b], -1.0, 0.0))
                for a, b in itertools.combinations(range(n_classes), 2)])
    expected = np.mean([np.mean(np.maximum(0, 1 - t * scores[:, k]) * (t != 0))
                        + model.lam_ * w @ w
                        for k, (t, w) in enumerate(zip(targets, model.coef_, strict=True))])
    assert model.train_objective_ == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("options", [{"solver": "libsvm"}, {"storage": "compact"}])
def test_train_error_is_none_without_an_embedding_in_memory(options):
    X, y = make_moons(300, noise=0.3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = SnacksClassifier(n_components=20, random_state=0, **options).fit(X, y)
    assert model.train_error_ is None and model.train_objective_ is None


def test_train_objective_weighs_each_row_by_its_sample_and_class_weight():
    X, y = make_classification(12_000, 8, n_informative=5, weights=[0.8], random_state=1)
    weight = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    model = SnacksClassifier(n_components=30, lam=1e-4, class_weight="balanced",
                             random_state=0).fit(X, y, sample_weight=weight)
    s = weight * len(y) / (2 * np.bincount(y))[y]  # 'balanced' × the sample weights
    t = np.where(y == 1, 1.0, -1.0)
    w = model.coef_[0]
    expected = np.mean(s * np.maximum(0, 1 - t * model.decision_function(X))) + model.lam_ * w @ w
    assert model.train_objective_ == pytest.approx(expected, rel=1e-9)


def test_auto_early_stopping_is_for_two_classes_only():
    """'auto' holds rows out from EARLY_STOPPING_MIN_SAMPLES rows of two classes; with more
    classes every one-vs-rest column is solved to tol (their scores are compared), and
    early_stopping=True still holds rows out.  (C is given: a fit that chooses it holds
    none out, the next test.)"""
    from snacks_core.model.engine import EARLY_STOPPING_MIN_SAMPLES

    n = EARLY_STOPPING_MIN_SAMPLES
    X, y = make_classification(n, 6, n_informative=4, n_classes=3, random_state=0)
    options = dict(n_components=20, max_epochs=4, C=25.0, random_state=0)
    three = SnacksClassifier(**options).fit(X, y)
    assert "early_stopping" not in three.stop_reasons_
    assert np.isnan(three.history_["validation_error"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Asked for on three classes it holds rows out (the columns stop together on the
        # multiclass prediction: tests/test_joint_early_stopping.py).
        forced = SnacksClassifier(**options, early_stopping=True).fit(X, y)
        two = SnacksClassifier(**options).fit(X, (y == 0).astype(int))
        SnacksClassifier(**options, early_stopping=True).fit(X, (y == 0).astype(int))
    assert np.isfinite(forced.history_["validation_error"]).any()
    assert np.isfinite(two.history_["validation_error"]).any()


def test_a_fit_that_chooses_C_holds_no_rows_out():
    """10,500 training rows of two classes are a small set: the default fit chooses C and
    trains on every row to tol ('auto' early stopping holds none out: at that fit's 500
    landmarks it cost the 2 % class of the next test's set, cut to 10,500 training rows,
    0.04 of its F1), while a given C holds 10 % out."""
    X, y = make_classification(10_500, 6, n_informative=4, weights=[0.9], random_state=0)
    chosen = SnacksClassifier(n_components=50, random_state=0).fit(X, y)
    assert chosen.C_cv_errors_ is not None and "early_stopping" not in chosen.stop_reasons_
    assert np.isnan(chosen.history_["validation_error"]).all()
    given = SnacksClassifier(n_components=50, C=chosen.C_, random_state=0).fit(X, y)
    assert np.isfinite(given.history_["validation_error"]).any()
    # An embedding on a store keeps C = 25 (no CV reads a store), so it holds rows out too.
    with pytest.warns(UserWarning):
        stored = SnacksClassifier(n_components=50, storage="compact", random_state=0).fit(X, y)
    assert stored.storage_ != "memory" and stored.C_cv_errors_ is None
    assert np.isfinite(stored.history_["validation_error"]).any()


def test_early_stopping_on_a_rare_class_waits_until_it_is_learned():
    """A class of 2 % (352 of 15,050 training rows, about 35 of the held-out ones): early
    stopping ('auto', on from 10,000 rows of two classes beyond the small sets) stops long
    before the certified gap, yet its F1 is that of training to the end, well above the
    first epoch's (what a patience spent too soon returns: the held-out 0-1 error barely
    sees the rare class)."""
    X, y = make_classification(21_500, 20, n_informative=8, weights=[0.98, 0.02],
                               flip_y=0.01, random_state=4)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

    def f1(model):
        return f1_score(y_test, model.fit(X_train, y_train).predict(X_test))

    stopped = SnacksClassifier(random_state=4)
    to_the_end = SnacksClassifier(random_state=4, early_stopping=False)
    first_epoch = SnacksClassifier(random_state=4, early_stopping=False, max_epochs=1)
    f1_stopped, f1_end, f1_first = f1(stopped), f1(to_the_end), f1(first_epoch)
    assert stopped.stop_reasons_ == ["early_stopping"]
    assert stopped.history_["epoch"][-1] < to_the_end.history_["epoch"][-1] / 2
    assert f1_stopped >= f1_end - 0.02
    assert f1_stopped >= f1_first + 0.05


def test_a_small_ten_class_fit_makes_every_row_a_landmark_up_to_500():
    """digits (1,257 training rows, 10 classes) is a small set: 500 landmarks, 50 a class
    drawn evenly by 'balanced' sampling, where 2√n = 71 and 30 a class (300) test worse."""
    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.3,
                                                        stratify=y, random_state=0)
    model = SnacksClassifier(random_state=0).fit(X_train, y_train)
    drawn = y_train[model.embedding_.landmark_indices_]
    np.testing.assert_array_equal(np.bincount(drawn), np.full(10, 50))
    for m in (71, 300):
        fewer = SnacksClassifier(n_components=m, C=model.C_, random_state=0)
        assert model.score(X_test, y_test) > fewer.fit(X_train, y_train).score(X_test, y_test)


def _final_relative_gaps(model):
    """Each column's certified relative gap (F(w) − D)/F(w) at its last checkpoint."""
    history = pd.DataFrame(model.history_).groupby("problem").tail(1)
    return (history["gap"] / history["objective"]).to_numpy()


def test_auto_tol_solves_many_class_columns_to_a_looser_certified_gap():
    """tol='auto': one column (two classes) to the certified relative gap TOL, each column
    of more classes to MULTICLASS_TOL; the labels, the argmax of the columns' scores, are
    those of the tight tolerance on all but a few test rows."""
    from snacks_core.model.specs import MULTICLASS_TOL, TOL

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X / 16.0, y, test_size=0.3,
                                                        random_state=0)
    options = dict(n_components=100, random_state=0)
    auto = SnacksClassifier(**options).fit(X_train, y_train)
    tight = SnacksClassifier(**options, tol=TOL, max_epochs=500).fit(X_train, y_train)
    assert set(auto.stop_reasons_) == set(tight.stop_reasons_) == {"tol_gap"}
    loose = _final_relative_gaps(auto)
    assert (loose <= MULTICLASS_TOL).all() and (loose > TOL).any()
    assert (_final_relative_gaps(tight) <= TOL).all()
    assert np.mean(auto.predict(X_test) == tight.predict(X_test)) >= 0.98
    assert abs(auto.score(X_test, y_test) - tight.score(X_test, y_test)) <= 0.01
    binary = SnacksClassifier(**options).fit(X_train, y_train == 7)
    assert (_final_relative_gaps(binary) <= TOL).all()
