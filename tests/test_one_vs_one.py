"""One-vs-one: the pairs' targets, the votes, the pairs' solver against LIBLINEAR, and a
one-vs-one model end to end (its file, its storage, the solvers that cannot run it)."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits, make_blobs

import reference
from snacks_core import SnacksClassifier
from snacks_core.model.engine import (
    binary_targets,
    class_labels,
    class_scores,
    predicted_class_margins,
    train_columns,
)
from snacks_core.model.specs import SolverSpec
from snacks_core.persistence import load_model, model_to_npz
from snacks_core.solvers.snacks import registry_solve, registry_solve_pairs


def test_pair_targets_and_labels_are_the_brute_force_ones():
    rng = np.random.default_rng(0)
    classes = np.array(["ant", "bee", "cat", "dog"])
    y = np.append(rng.choice(classes, 60), "eel")  # the last label is of no class
    targets = binary_targets(y, classes, one_vs_one=True)
    pairs = list(itertools.combinations(range(4), 2))
    assert len(targets) == len(pairs) == 6
    for t, (a, b) in zip(targets, pairs, strict=True):
        expected = [1.0 if label == classes[a] else -1.0 if label == classes[b] else 0.0
                    for label in y]
        np.testing.assert_array_equal(t, expected)
    index = {c: k for k, c in enumerate(classes)}
    np.testing.assert_array_equal(class_labels(targets), [index.get(v, -1) for v in y])


@settings(max_examples=30, deadline=None)
@given(n_classes=st.integers(3, 6), seed=st.integers(0, 2**31 - 1))
def test_votes_are_libsvms(n_classes, seed):
    """Most votes win; the summed confidence, squashed into (−1/3, 1/3), breaks ties."""
    rng = np.random.default_rng(seed)
    pairs = list(itertools.combinations(range(n_classes), 2))
    decisions = rng.normal(size=(40, len(pairs)))
    decisions[:5] = np.sign(decisions[:5])  # ties of votes
    scores = class_scores(decisions, n_classes, one_vs_one=True)
    for row, values in zip(decisions, scores, strict=True):
        votes, confidence = np.zeros(n_classes), np.zeros(n_classes)
        for value, (a, b) in zip(row, pairs, strict=True):
            votes[a if value > 0 else b] += 1
            confidence[a] += value
            confidence[b] -= value
        np.testing.assert_allclose(values, votes + confidence / (3 * (np.abs(confidence) + 1)))
        assert np.argmax(values) in np.flatnonzero(votes == votes.max())
    np.testing.assert_array_equal(class_scores(decisions, n_classes, one_vs_one=False),
                                  decisions)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), C=st.sampled_from([0.1, 1.0, 10.0]),
       weighted=st.booleans())
def test_pairs_are_solved_to_their_gap_against_liblinear(seed, C, weighted):
    """Each pair's point is within its certified relative gap of LIBLINEAR's optimum on the
    pair's rows, at the whole problem's C."""
    rng = np.random.default_rng(seed)
    n, m = 150, 8
    labels = rng.integers(0, 3, n)
    Z = rng.normal(size=(n, m)) / np.sqrt(m)
    Z[:, 0] += 0.5 * labels  # the classes apart along one direction, with overlap
    # ‖z_i‖ ≤ 1, as a Nyström embedding's rows of a kernel with k(x, x) = 1.
    Z /= np.maximum(1.0, np.linalg.norm(Z, axis=1))[:, None]
    weight = rng.uniform(0.5, 2.0, n) if weighted else None
    targets = binary_targets(labels, np.arange(3), one_vs_one=True)
    lam = 1.0 / (2.0 * n * C)
    tol = 1e-4
    results = registry_solve_pairs(Z, targets, lam, sample_weight=weight, tol=tol,
                                   max_epochs=20_000, random_state=seed)
    for t, result in zip(targets, results, strict=True):
        rows, best, found = reference.pair_primals(Z, t, C, result.coef, weight)
        assert result.stop_reason == "tol_gap"
        assert found <= best * (1 + 2 * tol) + 1e-9
        # The history ends with the point returned, its F the pair's own:
        # (1/n_ab) Σ s_i hinge_i + λ_ab‖w‖², and its gaps are certified (never below F*).
        assert np.all(np.diff(result.history["iteration"][:-1]) > 0)
        assert np.all(result.history["objective"][:-1] * (C * rows.size) >= best * (1 - 1e-9))
        assert result.history["objective"][-1] == pytest.approx(found / (C * rows.size))


def test_one_vs_one_columns_equal_separate_solves():
    """The engine's pairs (one compiled loop) solve the problems each pair's own solve on a
    copy of its rows solves, at λ·n/n_ab: the same F to the tolerance, the same labels."""
    X, y = make_blobs(600, centers=4, n_features=6, cluster_std=3.0, random_state=1)
    Z = np.hstack([X, np.ones((X.shape[0], 1))]) / 10
    targets = binary_targets(y, np.arange(4), one_vs_one=True)
    lam = 1e-3
    spec = SolverSpec("snacks", lam, max_epochs=500, tol=1e-5)
    together = train_columns(spec, Z, targets, seed=3, workers=2)
    for t, result in zip(targets, together, strict=True):
        rows = np.flatnonzero(t)
        pair_lam = lam * Z.shape[0] / rows.size
        alone = registry_solve(Z[rows], t[rows], pair_lam, max_epochs=500, tol=1e-5,
                               random_state=3)
        C = 1.0 / (2.0 * pair_lam * rows.size)
        assert reference.liblinear_primal(Z[rows], t[rows], C, result.coef) == pytest.approx(
            reference.liblinear_primal(Z[rows], t[rows], C, alone.coef), rel=1e-4)
        assert np.mean(np.sign(Z[rows] @ result.coef) == np.sign(Z[rows] @ alone.coef)) > 0.98


def test_a_one_vs_one_model_predicts_the_same_after_its_file():
    X, y = load_digits(return_X_y=True)
    X = X[:600] / 16.0
    y = np.array(["zero", "one", "two"])[y[:600] % 3]
    model = SnacksClassifier(n_components=80, random_state=0).fit(X, y)
    assert model.multiclass_ == "ovo" and model.coef_.shape[0] == 3
    loaded = load_model(model_to_npz(model)).pipeline
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X))
    # Three classes and three pairs: the file says which the three columns are.
    assert loaded[-1].multiclass_ == "ovo"
    ovr = SnacksClassifier(n_components=80, random_state=0, multiclass="ovr").fit(X, y)
    assert load_model(model_to_npz(ovr)).pipeline[-1].multiclass_ == "ovr"


def test_where_one_vs_one_does_not_run():
    X, y = make_blobs(300, centers=3, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="multiclass='ovo' needs a solver on the embedding"):
        SnacksClassifier(solver="libsvm", multiclass="ovo").fit(X, y)
    assert SnacksClassifier(solver="libsvm").fit(X, y).multiclass_ == "ovr"
    # On a store every pair would read all the rows: 'auto' is one-vs-rest there.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stored = SnacksClassifier(n_components=30, storage="compact", random_state=0).fit(X, y)
    assert stored.multiclass_ == "ovr" and stored.coef_.shape[0] == 3
    # Two classes: one problem either way.
    two = SnacksClassifier(n_components=30, random_state=0).fit(X[y < 2], y[y < 2])
    assert two.multiclass_ == "ovr" and two.coef_.shape[0] == 1


def test_one_vs_one_asked_for_on_a_store_is_the_one_in_memory():
    """On a store a pair is its rows at weight s_i and the others at weight 0: the problem
    in memory on a copy of its rows, so the same model to the tolerance."""
    X, y = make_blobs(600, centers=4, n_features=3, cluster_std=2.0, random_state=2)
    params = {"n_components": 30, "multiclass": "ovo", "tol": 1e-4, "random_state": 0}
    in_memory = SnacksClassifier(**params).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        stored = SnacksClassifier(storage="compact", **params).fit(X, y)
    assert stored.multiclass_ == "ovo" and stored.coef_.shape == in_memory.coef_.shape
    assert np.mean(stored.predict(X) == in_memory.predict(X)) >= 0.98
    assert np.mean(stored.predict(X) == y) >= np.mean(in_memory.predict(X) == y) - 0.02


def test_auto_is_one_vs_rest_where_the_pairs_targets_would_not_fit(monkeypatch):
    """'auto' keeps one-vs-one's K(K − 1)/2 targets a row within ONE_VS_ONE_MAX_TARGETS;
    'ovo' asked for is one-vs-one all the same."""
    from snacks_core.model import engine

    assert engine.one_vs_one_chosen("auto", 26, 400_000)
    assert not engine.one_vs_one_chosen("auto", 100, 100_000)
    assert engine.one_vs_one_chosen("ovo", 100, 100_000)
    assert not engine.one_vs_one_chosen("auto", 2, 10)
    X, y = make_blobs(300, centers=4, n_features=3, random_state=0)
    monkeypatch.setattr(engine, "ONE_VS_ONE_MAX_TARGETS", 6 * 300 - 1)
    assert SnacksClassifier(n_components=20, random_state=0).fit(X, y).multiclass_ == "ovr"
    asked = SnacksClassifier(n_components=20, multiclass="ovo", random_state=0).fit(X, y)
    assert asked.multiclass_ == "ovo" and asked.coef_.shape[0] == 6


@settings(max_examples=30, deadline=None)
@given(n_classes=st.integers(3, 6), seed=st.integers(0, 2**31 - 1))
def test_the_predicted_class_margin_is_its_closest_pairwise_contest(n_classes, seed):
    """One-vs-one: the winner's smallest decision value against each other class, signed
    its way; one-vs-rest: the winner's own value."""
    rng = np.random.default_rng(seed)
    pairs = list(itertools.combinations(range(n_classes), 2))
    decisions = rng.normal(size=(30, len(pairs)))
    margins = predicted_class_margins(decisions, n_classes, one_vs_one=True)
    winners = np.argmax(class_scores(decisions, n_classes, one_vs_one=True), axis=1)
    for row, winner, margin in zip(decisions, winners, margins, strict=True):
        expected = min(value if a == winner else -value
                       for value, (a, b) in zip(row, pairs, strict=True) if winner in (a, b))
        assert margin == pytest.approx(expected)
    scores = rng.normal(size=(30, n_classes))
    np.testing.assert_array_equal(predicted_class_margins(scores, n_classes, False),
                                  scores.max(axis=1))


def test_a_models_margins_are_its_decisions_seen_by_its_prediction():
    X, y = make_blobs(400, centers=3, n_features=3, cluster_std=2.5, random_state=3)
    model = SnacksClassifier(n_components=30, random_state=0).fit(X, y)
    margins = model.margin_values(X)
    assert margins.shape == (400,)
    np.testing.assert_allclose(margins, predicted_class_margins(
        model.subproblem_decisions(X), 3, one_vs_one=True))
    # A positive margin is a class that wins both its pairs: two votes (the scores are
    # votes within ±1/3), and a margin ≤ 0 one that does not.
    votes = np.round(model.decision_function(X).max(axis=1))
    np.testing.assert_array_equal(margins > 0, votes == 2)
    binary = SnacksClassifier(n_components=30, random_state=0).fit(X[y < 2], y[y < 2])
    np.testing.assert_allclose(binary.margin_values(X), binary.decision_function(X))
