"""Many classes in one pass: the one-vs-rest columns of a problem solved together
(``snacks.solve_columns``, the engine's ``train_columns``) against K separate solves and
the LIBLINEAR oracle of ``tests/reference.py``.

F_k(w) = (1/n) Σ s_i max(0, 1 − y_ik⟨w, z_i⟩) + λ‖w‖² is λ-strongly convex (2λ, in
fact), so F_k(w) − F_k* ≥ λ‖w − w_k*‖²: two points each certified to a gap g₁, g₂ lie within
√(g₁/λ) + √(g₂/λ) of each other.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs

import reference
from conftest import random_fourier_features
from snacks_core import SnacksClassifier
from snacks_core.model import engine
from snacks_core.model.engine import binary_targets
from snacks_core.model.specs import SolverSpec
from snacks_core.solvers import REGISTRY, snacks
from snacks_core.solvers import snacks_kernels as loops
from snacks_core.solvers.snacks import EarlyStopping
from snacks_core.solvers.storage import EmbeddingStore


@pytest.fixture(scope="module")
def four_classes():
    """Four blobs (n = 800) in 40 RBF random features, one ±1 target per class, λ = 1e-3,
    and each column's F* by the oracle."""
    X, labels = make_blobs(800, centers=4, n_features=2, cluster_std=1.8, random_state=3)
    Z = np.ascontiguousarray(random_fourier_features(X, 40, 0.5, seed=1))
    ys = binary_targets(labels, np.unique(labels))
    lam = 1e-3
    weights = np.random.default_rng(4).uniform(0.5, 2.0, size=Z.shape[0])
    stars = [reference.optimal_objective(Z, y, lam, weights)[0] for y in ys]
    return Z, ys, lam, weights, stars


def _gap(result):
    return float(result.history["gap"][-1])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), K=st.integers(1, 5),
       n_rows=st.integers(1, 3 * loops.PREFETCH_AHEAD), offset=st.integers(0, 5),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_joint_sweep_takes_each_problems_steps(seed, K, n_rows, offset, dtype):
    """One sweep of K problems is K sweeps of LIBLINEAR's steps in the same order, each
    with its own hinge sum at its starting point (rows of a block at an offset, a row with
    ‖z_i‖ = 0, bounds of 0, repeated rows)."""
    rng = np.random.default_rng(seed)
    n, m = offset + 12, 7
    Z = rng.normal(size=(12, m)).astype(dtype)
    Z[rng.integers(12)] = 0.0
    Y = rng.choice([-1.0, 1.0], size=(K, n))
    upper = rng.uniform(0.0, 2.0, size=(K, n)) * (rng.random((K, n)) > 0.1)
    alpha = upper * rng.uniform(0.0, 1.0, size=(K, n))
    W = rng.normal(size=(K, m))
    W_start = W.copy()
    order = rng.integers(offset, n, size=n_rows)
    sqnorm = np.zeros(n)
    sqnorm[offset:] = np.einsum("ij,ij->i", Z, Z, dtype=np.float64)
    padded = np.zeros((n, m))
    padded[offset:] = Z
    expected_alpha, expected_W = alpha.copy(), W.copy()
    for k in range(K):
        reference.dual_ascent_steps(padded, Y[k], upper[k], order, expected_alpha[k],
                                    expected_W[k])
    hinge = np.zeros(K)
    loops.dual_ascent_sweep_columns(Z, offset, Y, upper, sqnorm, order, alpha, W, W_start,
                                    hinge)
    np.testing.assert_allclose(alpha, expected_alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(W, expected_W, rtol=1e-9, atol=1e-12)
    for k in range(K):
        margins = Y[k, order] * (padded[order] @ W_start[k])
        assert hinge[k] == pytest.approx(
            float(np.sum(upper[k, order] * np.maximum(0.0, 1.0 - margins))), rel=1e-9,
            abs=1e-12)


@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_columns_together_equal_separate_solves_to_tol(four_classes, tol):
    Z, ys, lam, weights, stars = four_classes
    together = snacks.solve_columns(Z, ys, lam, sample_weight=weights, tol=tol,
                                    max_epochs=500, random_state=0)
    assert len(together) == len(ys)
    for y, star, joint in zip(ys, stars, together, strict=True):
        alone = snacks.solve(Z, y, lam, sample_weight=weights, tol=tol, max_epochs=500,
                             random_state=0)
        assert joint.stop_reason == alone.stop_reason == "tol_gap"
        assert joint.info["polish_epochs"] > 0  # the shared sweeps did the work
        F = reference.objective(joint.coef, Z, y, lam, weights)
        assert F == pytest.approx(joint.history["objective"][-1], rel=1e-9)
        # The certificate holds against the oracle's F*, and the two solutions are as
        # close as their certified gaps allow.
        assert F - star <= _gap(joint) + 1e-12
        assert _gap(joint) <= tol * F
        bound = np.sqrt(_gap(joint) / lam) + np.sqrt(_gap(alone) / lam)
        assert np.linalg.norm(joint.coef - alone.coef) <= bound + 1e-9


def test_columns_in_shuffled_blocks_of_a_store(four_classes, tmp_path):
    """A store read in shuffled blocks: one read of each block serves every column."""
    Z, ys, lam, weights, stars = four_classes
    Z32 = Z.astype(np.float32)
    stored = Z32.astype(np.float64)
    with EmbeddingStore(*Z32.shape, "disk", np.float32, block_rows=96) as store:
        store.write(0, Z32)
        assert len(store.block_bounds()) > 5
        results = snacks.solve_columns(store, ys, lam, sample_weight=weights, tol=1e-4,
                                       max_epochs=500, random_state=1)
    for y, result in zip(ys, results, strict=True):
        star, _ = reference.optimal_objective(stored, y, lam, weights)
        F = reference.objective(result.coef, stored, y, lam, weights)
        assert result.stop_reason == "tol_gap"
        assert (F - star) / F <= 1e-4 + 1e-9


def test_each_column_keeps_its_own_start_and_stopping(four_classes):
    """Warm starts, validation sets and early stopping are each column's own: column 0
    starts at the optimum, column 1 early-stops on its held-out
    rows (its patience counts the shared sweeps), column 2 runs to its tolerance."""
    Z, ys, lam, _, _ = four_classes
    _, w_star = reference.optimal_objective(Z, ys[0], lam)
    held = slice(0, 200)
    own = [{"w0": w_star},
           {"early_stopping": EarlyStopping(2, (Z[held], ys[1][held]))},
           {"validation": (Z[held], ys[2][held])}]
    results = snacks.solve_columns(Z, ys[:3], lam, own=own, tol=1e-4, max_epochs=60,
                                   random_state=0)
    assert results[0].stop_reason == "tol_gap"
    assert results[0].history["objective"][0] == pytest.approx(
        reference.objective(w_star, Z, ys[0], lam), rel=1e-12)
    assert results[1].stop_reason == "early_stopping"
    assert not np.isnan(results[1].history["validation_error"]).all()
    assert results[2].stop_reason == "tol_gap"
    assert np.isfinite(results[2].history["validation_error"]).all()
    alone = snacks.solve(Z, ys[1], lam, tol=1e-4, max_epochs=60, random_state=0,
                         early_stopping=EarlyStopping(2, (Z[held], ys[1][held])))
    assert alone.stop_reason == "early_stopping"


@pytest.mark.parametrize("state_bytes, workers, sizes", [
    (1, 1, [4]), (1, 2, [2, 2]),  # the rule allows all four columns in one group
    (100, 1, [2, 2]), (100, 2, [2, 2]),  # 320 bytes a row: groups of at most 3
    (1000, 2, [1, 1, 1, 1])])  # a column's state outweighs a row: one at a time
def test_train_columns_solves_the_columns_together(four_classes, monkeypatch, state_bytes,
                                                   workers, sizes):
    """The engine solves the one-vs-rest columns together, in at least as many groups as
    workers and in groups whose state stays within the embedding's bytes per row, each
    column to its tolerance; with the registry's ``columns`` removed, one by one, to the
    same optima."""
    Z, ys, lam, weights, stars = four_classes
    monkeypatch.setattr(engine, "COLUMN_STATE_BYTES", state_bytes)
    spec = SolverSpec("snacks", lam, max_epochs=500, tol=1e-4)
    entry = REGISTRY["snacks"]
    groups = []

    def counting(Z, ys, lam, **keywords):
        groups.append(len(ys))
        return entry.columns(Z, ys, lam, **keywords)

    monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(entry, columns=counting))
    together = engine.train_columns(spec, Z, ys, seed=0, sample_weight=weights,
                                    workers=workers)
    assert sorted(groups) == sizes
    monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(entry, columns=None))
    alone = engine.train_columns(spec, Z, ys, seed=0, sample_weight=weights, workers=workers)
    for y, star, joint, single in zip(ys, stars, together, alone, strict=True):
        F = reference.objective(joint.coef, Z, y, lam, weights)
        assert (F - star) / F <= 1e-4 + 1e-9
        bound = np.sqrt(_gap(joint) / lam) + np.sqrt(_gap(single) / lam)
        assert np.linalg.norm(joint.coef - single.coef) <= bound + 1e-9


@pytest.mark.parametrize("rows_of_state, sizes", [
    (None, []),  # no budget named: one column at a time, as alone
    (1, []),  # room for one column's state only
    (2, [2, 2]), (3, [2, 2]),  # groups of at most two or three columns
    (100, [4])])
def test_train_columns_on_a_store_groups_the_columns_within_the_budget(
        four_classes, monkeypatch, rows_of_state, sizes):
    """A store's columns are solved together only in groups whose state (a row of each:
    COLUMN_STATE_BYTES) fits the bytes its memory budget leaves (``state_bytes``), else one
    by one; each column reaches its tolerance against the oracle on the stored rows."""
    Z, ys, lam, _, _ = four_classes
    entry = REGISTRY["snacks"]
    groups = []

    def counting(Z, ys, lam, **keywords):
        groups.append(len(ys))
        return entry.columns(Z, ys, lam, **keywords)

    monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(entry, columns=counting))
    stored = Z.astype(np.float32)
    state_bytes = (None if rows_of_state is None
                   else rows_of_state * Z.shape[0] * engine.COLUMN_STATE_BYTES)
    with EmbeddingStore(*Z.shape, "disk", np.float32, block_rows=200) as store:
        store.write(0, stored)
        results = engine.train_columns(SolverSpec("snacks", lam, max_epochs=500, tol=1e-4),
                                       store, ys, seed=0, state_bytes=state_bytes)
    assert sorted(groups) == sizes
    stored = stored.astype(np.float64)
    for y, result in zip(ys, results, strict=True):
        star, _ = reference.optimal_objective(stored, y, lam)
        F = reference.objective(result.coef, stored, y, lam)
        assert (F - star) / F <= 1e-4 + 1e-9


def test_the_columns_state_on_a_store_is_what_its_budget_leaves():
    """The budget less the compact array (a file on disk takes none) and the working
    blocks; never below zero."""
    from snacks_core.solvers.storage import columns_state_bytes

    blocks = 6 * 100 * 10 * 4
    with EmbeddingStore(1000, 10, "compact", np.float16, block_rows=100) as compact, \
            EmbeddingStore(1000, 10, "disk", np.float32, block_rows=100) as disk:
        assert columns_state_bytes(compact, 10**6) == 10**6 - 20_000 - blocks
        assert columns_state_bytes(disk, 10**6) == 10**6 - blocks
        assert columns_state_bytes(compact, 1000) == 0


def test_classifier_with_many_classes_predicts_as_separate_solves(monkeypatch):
    """End to end: SnacksClassifier on 5 classes gives, with its columns solved together,
    the decision values of separate solves to the columns' tolerance."""
    X, y = make_blobs(1000, centers=5, n_features=4, cluster_std=2.5, random_state=0)
    joint = SnacksClassifier(n_components=60, tol=1e-4, random_state=0).fit(X, y)
    monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(REGISTRY["snacks"],
                                                                 columns=None))
    alone = SnacksClassifier(n_components=60, tol=1e-4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(joint.embedding_.landmarks_, alone.embedding_.landmarks_)
    scale = np.abs(alone.decision_function(X)).max()
    np.testing.assert_allclose(joint.decision_function(X), alone.decision_function(X),
                               atol=0.05 * scale)
    assert np.mean(joint.predict(X) == alone.predict(X)) >= 0.99


@pytest.mark.parametrize("storage", ["compact", "disk"])
def test_classifier_on_a_store_solves_its_columns_together(monkeypatch, storage):
    """End to end on a store: with room in the memory budget the five columns are solved in
    one group, and predict as the separate solves on the same stored rows."""
    X, y = make_blobs(1000, centers=5, n_features=4, cluster_std=2.5, random_state=0)
    entry = REGISTRY["snacks"]
    groups = []

    def counting(Z, ys, lam, **keywords):
        groups.append(len(ys))
        return entry.columns(Z, ys, lam, **keywords)

    params = {"n_components": 60, "tol": 1e-4, "random_state": 0, "storage": storage}
    monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(entry, columns=counting))
    with pytest.warns(UserWarning, match="float16|temporary file"):
        joint = SnacksClassifier(**params).fit(X, y)
    assert joint.storage_ == storage and groups == [5]
    monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(entry, columns=None))
    with pytest.warns(UserWarning, match="float16|temporary file"):
        alone = SnacksClassifier(**params).fit(X, y)
    scale = np.abs(alone.decision_function(X)).max()
    np.testing.assert_allclose(joint.decision_function(X), alone.decision_function(X),
                               atol=0.05 * scale)
    assert np.mean(joint.predict(X) == alone.predict(X)) >= 0.99


def test_a_w0_among_the_solver_options_starts_every_column(monkeypatch):
    """``solver_options={'w0': ...}`` starts each one-vs-rest column, together as alone:
    every column's first checkpoint is F(w0), not F(0) = 1."""
    X, y = make_blobs(600, centers=3, n_features=3, cluster_std=2.0, random_state=1)
    options = {"w0": np.full(40, 0.05)}
    models = []
    for columns in (REGISTRY["snacks"].columns, None):
        monkeypatch.setitem(REGISTRY, "snacks", dataclasses.replace(REGISTRY["snacks"],
                                                                     columns=columns))
        models.append(SnacksClassifier(n_components=40, random_state=0,
                                       solver_options=options).fit(X, y))
    joint, alone = models
    def first_objectives(model):
        history = model.history_
        problems = np.asarray(history["problem"])
        return np.array([np.asarray(history["objective"])[problems == k][0] for k in range(3)])

    for model in models:
        assert np.abs(first_objectives(model) - 1.0).min() > 1e-3
    np.testing.assert_allclose(first_objectives(joint), first_objectives(alone), rtol=1e-12)
    assert np.mean(joint.predict(X) == alone.predict(X)) >= 0.99
