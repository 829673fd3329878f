"""One engine: a grid cell, a search's refit, the estimator, the command line and the app
train the same model and report the same numbers for one setting.

Oracle: the estimator's own fit.  Every other path builds the same specification and calls
the same column trainer (``engine.train_columns``) and the same measures
(``engine.score_sums`` / ``training_measures``, ``metrics.classification_scores``), so
the models agree to rounding and the errors, F1 and objective agree.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, make_classification

from snacks_core.cli import main
from snacks_core.datasets import make_dataset, split_dataset
from snacks_core.model.estimator import SnacksClassifier
from snacks_core.model.evaluation import evaluate, train
from snacks_core.model.search import SnacksSearchCV
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import GridSchedule, robustness_grid
from snacks_core.persistence import model_from_npz

SETTING = {"gamma": 0.5, "n_components": 30, "lam": 2e-3, "random_state": 4,
           "max_epochs": 20, "dtype": np.float64}


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(400, n_features=4, n_informative=3, n_redundant=0,
                               flip_y=0.05, random_state=2)
    return X[:300], y[:300], X[300:], y[300:]


@pytest.fixture(scope="module")
def reference(data):
    X, y, X_test, y_test = data
    split = split_dataset(make_dataset(X, y, "engine", X_test=X_test, y_test=y_test),
                          scaling="none")
    model = SnacksClassifier(**SETTING).fit(X, y)
    return split, model, evaluate(model, split)


def _same_model(model, reference_model, X_test):
    np.testing.assert_array_equal(model.classes_, reference_model.classes_)
    assert model.coef_.shape == reference_model.coef_.shape
    np.testing.assert_allclose(model.coef_, reference_model.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(model.predict(X_test), reference_model.predict(X_test))


def _same_numbers(metrics, expected):
    for name in ("train_error", "test_error", "f1"):
        assert metrics[name] == expected[name], name
    assert metrics["objective"] == pytest.approx(expected["objective"], rel=1e-6)


def test_grid_cell_is_the_estimators_fit(data, reference):
    X, y, X_test, y_test = data
    split, model, expected = reference
    table = robustness_grid(
        X, y, X_test, y_test, m=[SETTING["n_components"]], lam=[SETTING["lam"]],
        gamma=SETTING["gamma"], seeds=[SETTING["random_state"]],
        estimator=SnacksClassifier(max_epochs=SETTING["max_epochs"]),
        schedule=GridSchedule(warm_start=False, keep_models=True),
        resources=Resources(dtype="float64"))
    row = table.iloc[0]
    _same_model(row["model"], model, X_test)
    _same_numbers({"train_error": row["train_error"], "test_error": row["test_error"],
                   "f1": row["f1"], "objective": row["objective"]}, expected)
    # The kept model, measured as any fitted model is, gives the row's numbers.
    _same_numbers(evaluate(row["model"], split), expected)


def test_search_refit_is_the_estimators_fit(data, reference):
    X, y, X_test, _ = data
    _, model, _ = reference
    search = SnacksSearchCV(SnacksClassifier(**SETTING), {"lam": [SETTING["lam"]]}, cv=3)
    _same_model(search.fit(X, y).best_estimator_, model, X_test)


def test_app_run_is_the_estimators_fit(data, reference):
    _, _, X_test, _ = data
    split, model, expected = reference
    run = train(split, {**SETTING, "dtype": "float64"})
    _same_model(run.model, model, X_test)
    _same_numbers(run.metrics, expected)


def test_command_line_fit_is_the_estimators_fit(data, reference, tmp_path, capsys):
    X, y, X_test, y_test = data
    _, model, expected = reference
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=False)
    dump_svmlight_file(X_test, y_test, str(tmp_path / "test.svm"), zero_based=False)
    saved = tmp_path / "model.npz"
    assert main([
        "fit", str(tmp_path / "train.svm"), "--test", str(tmp_path / "test.svm"),
        "--scaling", "none", "--gamma", str(SETTING["gamma"]),
        "--m", str(SETTING["n_components"]), "--lam", str(SETTING["lam"]),
        "--seed", str(SETTING["random_state"]), "--max-epochs", str(SETTING["max_epochs"]),
        "--dtype", "float64", "--progress", "never", "--model", str(saved)]) == 0
    # The metrics lines: f"  {name:<20} {value}".
    printed = {line[2:22].strip(): line[23:].strip()
               for line in capsys.readouterr().out.splitlines() if line.startswith("  ")}
    assert float(printed["test error"]) == pytest.approx(expected["test_error"], abs=5e-7)
    assert float(printed["train error"]) == pytest.approx(expected["train_error"], abs=5e-7)
    assert float(printed["objective"]) == pytest.approx(expected["objective"], rel=1e-5)
    _same_model(model_from_npz(saved), model, X_test)
