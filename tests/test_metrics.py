"""One set of metrics: the definitions against scikit-learn, and the same numbers for the
same setting on the Playground, the heatmap and the command line."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import f1_score

from snacks_core import cli, datasets
from snacks_core.app import explorer
from snacks_core.model import evaluation, metrics


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2), min_size=2, max_size=40), st.integers(0, 2**31 - 1))
def test_scores_equal_sklearn(y_train, seed):
    """Oracle: scikit-learn's f1_score on the documented class and plain NumPy errors."""
    y_train = np.array(y_train)
    rng = np.random.default_rng(seed)
    classes = np.unique(y_train)
    y_test, pred = rng.choice(classes, 25), rng.choice(classes, 25)
    scores = metrics.classification_scores(y_train, y_test, pred, classes)
    assert scores["test_error"] == np.mean(y_test != pred)
    labels, counts = np.unique(y_train, return_counts=True)
    assert scores["majority_error"] == np.mean(y_test != labels[np.argmax(counts)])
    if classes.shape[0] == 2:
        # The least frequent training class; the larger label on a tie.
        least = [c for c, n in zip(labels, counts, strict=True) if n == counts.min()][-1]
        assert scores["f1_label"] == least
        expected = f1_score(y_test, pred, pos_label=least, zero_division=0.0)
    else:
        assert scores["f1_label"] is None
        expected = f1_score(y_test, pred, labels=classes, average="macro", zero_division=0.0)
    assert scores["f1"] == pytest.approx(expected)
    assert scores["predicted_classes"] == np.unique(pred).shape[0]


def test_macro_f1_counts_a_class_absent_from_the_test_part():
    classes = np.array([0, 1, 2])
    scores = metrics.classification_scores([0, 1, 2, 2], [0, 0, 1], [0, 0, 1], classes)
    # Classes 0 and 1 are perfect; class 2 is neither present nor predicted: F1 0.
    assert scores["f1"] == pytest.approx(2 / 3)


def _cli_numbers(capsys, argv):
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    values = {}
    for line in out.splitlines():
        name, _, value = line.strip().rpartition(" ")
        values[name.strip()] = value
    return values


def test_playground_heatmap_and_cli_report_the_same_numbers(capsys, tmp_path):
    """Breast cancer with scikit-learn's labels (minority class 0, malignant): the heatmap
    used to score F1 on classes[1] and the Playground on the minority class (0.959 against
    0.928)."""
    X, y = load_breast_cancer(return_X_y=True)
    path = tmp_path / "cancer.csv"
    np.savetxt(path, np.column_stack([X, y]), delimiter=",", fmt="%.17g",
               header=",".join([f"x{j}" for j in range(X.shape[1])] + ["label"]), comments="")
    split = datasets.split_dataset(datasets.load_file(path), random_state=0)
    assert metrics.minority_class(split.y_train) == 0
    params = {"kernel": "rbf", "gamma": 0.05, "n_components": 30, "lam": 1e-3,
              "solver": "snacks", "sampling": "balanced", "max_epochs": 50,
              "class_weight": None, "random_state": 0, "dtype": np.float32}
    playground = evaluation.train(split, params).metrics
    heatmap = explorer.robustness(split, params, "m", [30], [1e-3], [0]).iloc[0]
    command = _cli_numbers(capsys, ["fit", str(path), "--m", "30", "--lam", "1e-3",
                                    "--gamma", "0.05", "--seed", "0", "--progress", "never"])
    assert playground["f1_label"] == 0 and "F1 (class 0)" in command
    for name, column, line in (("f1", "f1", "F1 (class 0)"),
                               ("test_error", "test_error", "test error"),
                               ("train_error", "train_error", "train error")):
        assert playground[name] == pytest.approx(heatmap[column], abs=1e-12), name
        assert playground[name] == pytest.approx(float(command[line]), rel=1e-5), name
    assert playground["objective"] == pytest.approx(heatmap["objective"], rel=1e-6)
