"""Early stopping on more than two classes: the columns (one-vs-one's pairs, one-vs-rest's
columns) go in rounds and stop together on the held-out error of the multiclass
prediction (``snacks.JointEarlyStopping``, the engine's ``multiclass_stopping``)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_classification
from sklearn.metrics import f1_score, recall_score
from sklearn.model_selection import train_test_split

import reference
from snacks_core import SnacksClassifier
from snacks_core.model.engine import binary_targets, draw_seeds, validation_split
from snacks_core.solvers.snacks import JointEarlyStopping, registry_solve_pairs


def _problem(seed, n=150, m=8, classes=3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    Z = rng.normal(size=(n, m)) / np.sqrt(m)
    Z[:, 0] += 0.5 * labels
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    return Z, labels


class _Script:
    """A held-out error count per call, from a list (the last repeated), keeping each W it
    is shown."""

    def __init__(self, counts):
        self.counts, self.seen = counts, []

    def __call__(self, W):
        self.seen.append(W.copy())
        return self.counts[min(len(self.seen), len(self.counts)) - 1]


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), C=st.sampled_from([0.1, 1.0, 10.0]),
       one_vs_one=st.booleans(), weighted=st.booleans())
def test_rounds_that_never_stop_early_solve_every_column_to_its_gap(seed, C, one_vs_one,
                                                                    weighted):
    """With a held-out error that keeps falling, the rounds end where every column is at its
    certified tolerance: within it of LIBLINEAR's optimum on the column's rows (the pair's,
    or all for one-vs-rest), at the whole problem's C; the history ends with that point."""
    Z, labels = _problem(seed)
    n = Z.shape[0]
    weight = np.random.default_rng(seed).uniform(0.5, 2.0, n) if weighted else None
    targets = binary_targets(labels, np.arange(3), one_vs_one=one_vs_one)
    tol = 1e-4
    falling = _Script(list(range(10**6, 0, -1)))
    results = registry_solve_pairs(Z, targets, 1.0 / (2.0 * n * C), sample_weight=weight,
                                   tol=tol, max_epochs=20_000, random_state=seed,
                                   joint=JointEarlyStopping(1, falling, n))
    for t, result in zip(targets, results, strict=True):
        rows, best, found = reference.pair_primals(Z, t, C, result.coef, weight)
        assert result.stop_reason == "tol_gap"
        assert found <= best * (1 + 2 * tol) + 1e-9
        assert result.history["objective"][-1] == pytest.approx(found / (C * rows.size))
        assert np.all(result.history["objective"][:-1] * (C * rows.size) >= best * (1 - 1e-9))


def test_rounds_return_the_points_of_the_fewest_held_out_errors():
    """The patience counts rounds and rows: with two rounds (and 2.8 epochs of rows) of
    patience, errors 90, 70, 75, 70, 72 after rounds 1-5 stop at round 5, and every column
    returns its point after round 2 (the first to reach 70), the history's last row that
    point's F and its recorded error."""
    Z, labels = _problem(0, n=120)
    targets = binary_targets(labels, np.arange(3), one_vs_one=True)
    script = _Script([100, 90, 70, 75, 70, 72, 71])
    results = registry_solve_pairs(Z, targets, 1e-4, tol=1e-12, max_epochs=100,
                                   random_state=0,
                                   joint=JointEarlyStopping(2, script, 100))
    assert len(script.seen) == 6  # the start and five rounds
    C = 1.0 / (2.0 * 1e-4 * Z.shape[0])
    for k, (t, result) in enumerate(zip(targets, results, strict=True)):
        rows = np.flatnonzero(t)
        assert result.stop_reason == "early_stopping"
        np.testing.assert_array_equal(result.coef, script.seen[2][k])
        history = result.history
        np.testing.assert_allclose(history["validation_error"],
                                   [1.0, 0.9, 0.7, 0.75, 0.7, 0.7])
        assert history["objective"][-1] * C * rows.size == pytest.approx(
            reference.liblinear_primal(Z[rows], t[rows], C, result.coef))
        # Certified by round 3's sweep (and the restricted sweeps before it).
        assert history["epoch"][-1] >= 3


def test_a_stop_at_its_best_round_measures_that_point():
    """A round that is the best by less than a gain can end the patience: its point, which
    no sweep certified, is measured for the history."""
    Z, labels = _problem(1, n=120)
    targets = binary_targets(labels, np.arange(3), one_vs_one=True)
    # Three rounds and 4.2 epochs of patience from round 1: spent at round 6.
    script = _Script([100, 70, 80, 80, 80, 80, 69.5])
    results = registry_solve_pairs(Z, targets, 1e-4, tol=1e-12, max_epochs=100,
                                   random_state=0, joint=JointEarlyStopping(3, script, 100))
    C = 1.0 / (2.0 * 1e-4 * Z.shape[0])
    assert len(script.seen) == 7
    for k, (t, result) in enumerate(zip(targets, results, strict=True)):
        rows = np.flatnonzero(t)
        assert result.stop_reason == "early_stopping"
        np.testing.assert_array_equal(result.coef, script.seen[6][k])
        assert result.history["objective"][-1] * C * rows.size == pytest.approx(
            reference.liblinear_primal(Z[rows], t[rows], C, result.coef))
        assert result.history["gap"][-1] >= 0


def test_rounds_on_two_threads_equal_one():
    Z, labels = _problem(2, n=200, classes=4)
    targets = binary_targets(labels, np.arange(4), one_vs_one=True)
    runs = [registry_solve_pairs(Z, targets, 1e-3, tol=1e-6, random_state=5, workers=workers,
                                 joint=JointEarlyStopping(2, _Script([50, 40, 41]), 50))
            for workers in (1, 2)]
    for one, two in zip(*runs, strict=True):
        np.testing.assert_array_equal(one.coef, two.coef)
        assert one.stop_reason == two.stop_reason


def _four_classes(n=4000, weights=None, seed=0):
    X, y = make_classification(n, 8, n_informative=6, n_redundant=0, n_classes=4,
                               n_clusters_per_class=1, weights=weights, flip_y=0.02,
                               random_state=seed)
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)


@pytest.mark.parametrize("multiclass", ["ovo", "ovr"])
def test_a_fit_stops_where_the_multiclass_prediction_errs_least(multiclass):
    """The rows a fit holds out (10 %, stratified with the solver's seed) misclassified by
    the fitted model are the fewest of any round its histories record, every column's
    history records the same multiclass error at each round, and without warnings."""
    X_train, _, y_train, _ = _four_classes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = SnacksClassifier(n_components=60, C=25.0, tol=1e-9, early_stopping=True,
                                 n_iter_no_change=2, multiclass=multiclass,
                                 random_state=0).fit(X_train, y_train)
    assert set(model.stop_reasons_) == {"early_stopping"}
    labels = np.searchsorted(model.classes_, y_train)
    held = validation_split(labels, 0.1, draw_seeds(0).solver)[1]
    error = np.mean(model.predict(X_train[held]) != y_train[held])
    history = model.history_
    rounds = np.stack([history["validation_error"][history["problem"] == k]
                       for k in range(model.coef_.shape[0])])
    assert np.all(rounds == rounds[0])
    assert error == pytest.approx(rounds[0, -1]) and error == pytest.approx(rounds[0].min())


def test_an_eval_set_is_recorded_with_the_multiclass_error_while_held_out_rows_decide():
    X_train, X_test, y_train, y_test = _four_classes()
    model = SnacksClassifier(n_components=60, C=25.0, tol=1e-9, early_stopping=True,
                             n_iter_no_change=2, random_state=0).fit(
        X_train, y_train, eval_set=(X_test, y_test))
    history = model.history_
    last = history["validation_error"][history["problem"] == 0][-1]
    assert last == pytest.approx(np.mean(model.predict(X_test) != y_test))


def test_early_stopping_on_a_rare_class_of_many_waits_until_it_is_learned():
    """A class of 3 % among four: stopped on the multiclass prediction, its recall and the
    macro F1 are those of training to tol (a column stopped on its own held-out 0-1
    error, the rule before, stalls at once on a rare class)."""
    X_train, X_test, y_train, y_test = _four_classes(8000, weights=[0.5, 0.3, 0.17, 0.03],
                                                     seed=3)
    options = dict(n_components=100, C=25.0, random_state=0)
    stopped = SnacksClassifier(**options, early_stopping=True).fit(X_train, y_train)
    to_tol = SnacksClassifier(**options, early_stopping=False).fit(X_train, y_train)
    assert "early_stopping" in stopped.stop_reasons_
    rare = [3]
    assert (recall_score(y_test, stopped.predict(X_test), labels=rare, average="macro")
            >= recall_score(y_test, to_tol.predict(X_test), labels=rare, average="macro") - 0.05)
    assert (f1_score(y_test, stopped.predict(X_test), average="macro")
            >= f1_score(y_test, to_tol.predict(X_test), average="macro") - 0.02)


def test_where_the_joint_rule_cannot_run_each_column_stops_alone_and_says_so():
    X_train, _, y_train, _ = _four_classes(2000)
    with pytest.warns(UserWarning, match="on its own held-out rows here"):
        model = SnacksClassifier(n_components=30, C=25.0, early_stopping=True,
                                 solver_options={"polish": False}, random_state=0).fit(
            X_train, y_train)
    assert np.isfinite(model.history_["validation_error"]).any()
