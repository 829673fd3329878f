"""Robustness grids: exact reuse, warm starts, parallel backends, progress, bad grids, memory."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
from sklearn.datasets import make_blobs, make_classification, make_moons
from threadpoolctl import threadpool_info, threadpool_limits

from reference import optimal_objective
from snacks_core.core import memory
from snacks_core.core.threads import effective_n_threads
from snacks_core.kernels.functions import kernel_matrix
from snacks_core.kernels.landmarks import select_landmarks
from snacks_core.kernels.nystrom import EmbeddingPrefix, NystromEmbedding
from snacks_core.model import sweeps
from snacks_core.model.engine import Seeds, draw_seeds
from snacks_core.model.estimator import SnacksClassifier
from snacks_core.model.metrics import error_rate
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import (
    GRID_COLUMNS,
    GridGroup,
    GridSchedule,
    plan_grid,
    robustness_grid,
    summarize_grid,
)
from snacks_core.solvers.objective import primal_objective

# Columns that do not depend on timing.
RESULT_COLUMNS = [c for c in GRID_COLUMNS if not c.endswith("_time")]


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(400, noise=0.2, random_state=0)
    return X[:300], y[:300], X[300:], y[300:]


def _problem(kernel="rbf", dtype="float64", y_train=None, sampling="uniform"):
    estimator = SnacksClassifier(kernel, degree=3, coef0=1.0, sampling=sampling, max_epochs=10,
                                 tol=1e-3, early_stopping=False)
    problem = sweeps.grid_problem(estimator, GridSchedule(warm_start=False))
    return problem._replace(dtype=dtype, classes=np.array([0, 1]), y_train=y_train,
                            lams=(1e-2,))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("gamma, nested", [(2.0, True), (1e-3, False)])
def test_prefix_embedding_equals_fresh_embedding_on_same_landmarks(moons, dtype, gamma, nested):
    """Every m's slice (nested Cholesky) or eigen-decomposed prefix (an ill-conditioned
    K_mm at tiny γ) equals NystromEmbedding fitted on the same selected landmarks, with
    repeated rows among them dropped by both."""
    X, _, X_test, _ = moons
    X = np.vstack([X, X[::2]])
    problem = _problem(dtype=dtype, y_train=np.arange(X.shape[0]) % 2)
    group = GridGroup(seed=0, gamma=gamma, seeds=Seeds(embedding=7, solver=0))
    blocks = sweeps._group_blocks(X, X_test, 60, group, problem, n_jobs=2)
    assert blocks.nested is nested
    selected = select_landmarks(X, 60, random_state=7)
    assert len(blocks.embedding.selected_positions_) < 60  # the sample holds repeated rows
    w = np.random.default_rng(0).standard_normal(60)
    for m in (1, 5, 30, 60):
        prefix = EmbeddingPrefix.of(blocks.embedding, m, problem.dtype)
        Z = prefix.from_block(blocks.train)
        fresh = NystromEmbedding(gamma=gamma, dtype=dtype).fit(
            X, landmark_indices=selected[:m])
        exact = NystromEmbedding(gamma=gamma).fit(X, landmark_indices=selected[:m])
        k = exact.n_components_
        assert Z.shape == (X.shape[0], k) and fresh.n_components_ == k
        for computed, expected, reference in (
                (Z, exact.transform(X), fresh.transform(X)),
                (prefix.from_block(blocks.test) @ w[:k], exact.transform(X_test) @ w[:k],
                 fresh.transform(X_test) @ w[:k])):
            error = np.linalg.norm(computed - expected)
            if dtype == "float64":
                assert error <= 1e-9 * np.linalg.norm(expected)
            else:
                # Equal to rounding: no further from the float64 embedding than the fresh
                # float32 one is.
                fresh_error = np.linalg.norm(reference - expected)
                assert error <= 2 * fresh_error + 1e-5 * np.linalg.norm(expected)


def test_prefix_embedding_reproduces_nystrom_gram_matrix(moons):
    """Oracle: Z Zᵀ = K_nm K_mm⁺ K_mn with scipy's pseudo-inverse, for every prefix."""
    X, y, X_test, _ = moons
    problem = _problem(y_train=y, sampling="kmeans++")
    group = GridGroup(seed=0, gamma=5.0, seeds=Seeds(embedding=3, solver=0))
    blocks = sweeps._group_blocks(X, X_test, 40, group, problem)
    for m in (3, 17, 40):
        prefix = EmbeddingPrefix.of(blocks.embedding, m, problem.dtype)
        Z = prefix.from_block(blocks.train)
        landmarks = blocks.embedding.landmarks_[:m]
        K_mm = kernel_matrix(landmarks, landmarks, gamma=5.0)
        K_nm = kernel_matrix(X, landmarks, gamma=5.0)
        expected = K_nm @ scipy.linalg.pinvh(K_mm, rtol=1e-10) @ K_nm.T
        np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-8)


def test_cold_grid_cells_equal_snacks_classifier_fits(moons):
    """With warm_start=False each cell is SnacksClassifier(random_state=seed) on the same data
    (in the grid's default precision, float32)."""
    X, y, X_test, y_test = moons
    table = robustness_grid(X, y, X_test, y_test, m=[8, 25], lam=[1e-2, 1e-3], gamma=1.5,
                            seeds=[0, 4], estimator=SnacksClassifier(max_epochs=20, tol=1e-3),
                            schedule=GridSchedule(warm_start=False))
    assert len(table) == 8
    for row in table.itertuples():
        model = SnacksClassifier(n_components=row.m, lam=row.lam, gamma=1.5, max_epochs=20,
                                 tol=1e-3, random_state=row.seed, dtype=np.float32).fit(X, y)
        Z = model.embedding_.transform(X)
        F = primal_objective(model.coef_.ravel(), Z, np.where(y == 1, 1.0, -1.0), row.lam)
        assert row.objective == pytest.approx(F, rel=1e-9)
        assert row.test_error == pytest.approx(1 - model.score(X_test, y_test))
        assert row.train_error == pytest.approx(1 - model.score(X, y))
        assert row.iterations == model.n_iter_
        assert row.stop_reason == model.stop_reasons_[0]
        assert not row.warm_start


def test_a_grid_that_does_not_measure_its_training_rows_scores_its_test_rows_as_one_that_does():
    """measure_training=False (a search's folds) leaves the training rows' error and
    objective NaN and every other column, the test scores included, as they were."""
    X, y = make_blobs(300, centers=4, cluster_std=2.0, random_state=2)
    grid = dict(m=[10, 30], lam=[1e-2, 1e-4], gamma=0.3, seeds=[0],
                estimator=SnacksClassifier(max_epochs=15))
    measured = robustness_grid(X, y, **grid, schedule=GridSchedule(keep_test_scores=True))
    unmeasured = robustness_grid(X, y, **grid, schedule=GridSchedule(keep_test_scores=True,
                                                                    measure_training=False))
    assert measured["train_error"].notna().all() and measured["objective"].notna().all()
    assert unmeasured["train_error"].isna().all() and unmeasured["objective"].isna().all()
    same = ["m", "lam", "test_error", "f1", "iterations", "epochs", "stop_reason"]
    pd.testing.assert_frame_equal(measured[same], unmeasured[same])
    for a, b in zip(measured["test_scores"], unmeasured["test_scores"], strict=True):
        np.testing.assert_array_equal(a, b)


def test_cold_cells_with_early_stopping_equal_snacks_classifier_fits():
    """From 10,000 training rows both hold out the same validation rows and stop early."""
    X, y = make_classification(12500, 8, n_informative=5, flip_y=0.05, random_state=0)
    X_train, y_train, X_test, y_test = X[:11000], y[:11000], X[11000:], y[11000:]
    table = robustness_grid(X_train, y_train, X_test, y_test, m=[20], lam=[1e-6], gamma=0.2,
                            seeds=[3], schedule=GridSchedule(warm_start=False))
    row = next(table.itertuples())
    model = SnacksClassifier(n_components=20, lam=1e-6, gamma=0.2, random_state=3,
                             dtype=np.float32).fit(X_train, y_train)
    assert row.stop_reason == model.stop_reasons_[0] == "early_stopping"
    assert row.iterations == model.n_iter_
    assert row.test_error == pytest.approx(1 - model.score(X_test, y_test))


def test_multiclass_cold_cells_equal_one_vs_rest_classifier():
    X, y = make_blobs(240, centers=3, cluster_std=2.5, random_state=1)
    table = robustness_grid(X, y, m=[12], lam=[1e-2, 1e-3], gamma=0.3,
                            estimator=SnacksClassifier(max_epochs=15),
                            schedule=GridSchedule(warm_start=False, test_size=0.25))
    from sklearn.model_selection import train_test_split
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, stratify=y,
                                                        random_state=0)
    for row in table.itertuples():
        model = SnacksClassifier(n_components=12, lam=row.lam, gamma=0.3, max_epochs=15,
                                 random_state=0, dtype=np.float32).fit(X_train, y_train)
        assert row.test_error == pytest.approx(1 - model.score(X_test, y_test))
        assert 0.0 <= row.f1 <= 1.0


def test_warm_starts_match_cold_starts_to_solver_tolerance(moons):
    X, y, X_test, y_test = moons
    grid = dict(m=[10, 40], lam=[1e-1, 3e-2, 1e-2, 3e-3], gamma=1.0, seeds=[0, 1],
                estimator=SnacksClassifier(tol=1e-2, max_epochs=300))
    warm = robustness_grid(X, y, X_test, y_test, **grid, schedule=GridSchedule(warm_start=True))
    cold = robustness_grid(X, y, X_test, y_test, **grid,
                           schedule=GridSchedule(warm_start=False))
    assert warm["warm_start"].sum() == 2 * 2 * 3  # all but the largest λ of each column
    np.testing.assert_allclose(warm["objective"], cold["objective"], rtol=1e-2)
    # Against the LIBLINEAR oracle on the same embedding: both within tolerance of F*.
    blocks = sweeps._group_blocks(X, X_test, 40, GridGroup(0, 1.0, draw_seeds(0)),
                                  _problem("rbf", "float32", y_train=y, sampling="balanced"))
    Z = EmbeddingPrefix.of(blocks.embedding, 40, "float32").from_block(blocks.train)
    for lam in grid["lam"]:
        f_star, _ = optimal_objective(Z, np.where(y == 1, 1.0, -1.0), lam)
        for table in (warm, cold):
            row = table[(table.seed == 0) & (table.m == 40) & (table.lam == lam)].iloc[0]
            assert f_star <= row.objective * (1 + 1e-9)
            assert row.objective - f_star <= 1e-2 * row.objective


def test_progress_called_once_per_cell_in_order(moons):
    X, y, X_test, y_test = moons
    calls = []
    table = robustness_grid(
        X, y, X_test, y_test, m=[5, 20, 30], lam=[1e-2, 1e-3], gamma=[0.5, 2.0], seeds=[0, 1],
        estimator=SnacksClassifier(max_epochs=5),
        resources=Resources(progress=lambda done, total, row: calls.append((done, total, row))))
    assert len(table) == 3 * 2 * 2 * 2 == len(calls)
    assert [c[0] for c in calls] == list(range(1, 25))
    assert {c[1] for c in calls} == {24}
    reported = {(r["seed"], r["gamma"], r["m"], r["lam"]) for _, _, r in calls}
    assert reported == set(zip(table.seed, table.gamma, table.m, table.lam, strict=False))
    assert set(calls[0][2]) == set(GRID_COLUMNS)
    assert not table.attrs["stopped"]


@pytest.mark.parametrize("n_jobs, backend", [
    (1, "threads"), (2, "threads"), pytest.param(2, "loky", marks=pytest.mark.slow)])
def test_should_stop_returns_finished_cells_only(moons, n_jobs, backend):
    X, y, X_test, y_test = moons
    done = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no joblib chatter about the cancelled columns
        table = robustness_grid(
            X, y, X_test, y_test, m=[5, 10, 20], lam=[1e-2, 1e-3], gamma=1.0, seeds=[0, 1],
            estimator=SnacksClassifier(max_epochs=5),
            resources=Resources(n_jobs=n_jobs, backend=backend,
                                progress=lambda d, t, row: done.append(row),
                                should_stop=lambda: len(done) >= 2))
    assert table.attrs["stopped"]
    assert len(table) == 2  # one column of two λ, then the stop
    assert robustness_grid(X, y, X_test, y_test, m=5, lam=1e-2,
                           resources=Resources(should_stop=lambda: True)).empty


def test_default_n_jobs_is_every_allowed_core(moons):
    X, y, X_test, y_test = moons
    grid = dict(m=[5, 15], lam=[1e-2], gamma=1.0, estimator=SnacksClassifier(max_epochs=2))
    table = robustness_grid(X, y, X_test, y_test, **grid)
    assert table.attrs["plan"]["n_jobs"] == effective_n_threads()
    # A caller's thread limit is respected, as SnacksClassifier's n_jobs=None does.
    with threadpool_limits(limits=1, user_api="blas"):
        limited = robustness_grid(X, y, X_test, y_test, **grid)
    assert limited.attrs["plan"]["n_jobs"] == 1
    assert limited[RESULT_COLUMNS].equals(table[RESULT_COLUMNS])


@pytest.mark.slow
def test_results_identical_for_any_n_jobs_and_local_backend(moons):
    X, y, X_test, y_test = moons
    grid = dict(m=[5, 15, 40], lam=[1e-2, 1e-4], gamma=[1.0, 3.0], seeds=[0, 2],
                estimator=SnacksClassifier(max_epochs=10))
    with threadpool_limits(limits=2, user_api="blas"):
        before = [info["num_threads"] for info in threadpool_info()
                  if info["user_api"] == "blas"]
        one = robustness_grid(X, y, X_test, y_test, **grid, resources=Resources(n_jobs=1))
        two = robustness_grid(X, y, X_test, y_test, **grid, resources=Resources(n_jobs=2))
        # Threads hold one BLAS thread for the process while they run, and give it back.
        after = [info["num_threads"] for info in threadpool_info()
                 if info["user_api"] == "blas"]
        processes = robustness_grid(X, y, X_test, y_test, **grid,
                                    resources=Resources(n_jobs=2, backend="loky"))
    assert after == before
    assert one[RESULT_COLUMNS].equals(two[RESULT_COLUMNS])
    assert one[RESULT_COLUMNS].equals(processes[RESULT_COLUMNS])


@pytest.mark.slow
def test_dask_backend_equals_local_table(moons):
    distributed = pytest.importorskip("distributed")
    X, y, X_test, y_test = moons
    grid = dict(m=[5, 15, 40], lam=[1e-2, 1e-4], gamma=[1.0, 3.0], seeds=[0, 2],
                estimator=SnacksClassifier(max_epochs=10))
    local = robustness_grid(X, y, X_test, y_test, **grid)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        calls = []
        remote = robustness_grid(X, y, X_test, y_test, **grid,
                                 resources=Resources(backend="dask", client=client,
                                                     progress=lambda d, t, r: calls.append(d)))
        by_address = robustness_grid(
            X, y, X_test, y_test, m=5, lam=1e-2,
            resources=Resources(backend="dask", client=cluster.scheduler_address))
    assert remote[RESULT_COLUMNS].equals(local[RESULT_COLUMNS])
    assert calls == list(range(1, len(local) + 1))
    assert len(by_address) == 1


def test_dask_without_client_says_how_to_start_one(moons):
    pytest.importorskip("distributed")
    X, y, X_test, y_test = moons
    with pytest.raises(ValueError, match="backend=.dask. runs on a dask.*no current Client"):
        robustness_grid(X, y, X_test, y_test, m=5, lam=1e-2,
                        resources=Resources(backend="dask"))


@pytest.mark.parametrize("grid, message", [
    (dict(m=[]), "grid is empty.*m"),
    (dict(lam=[]), r"grid is empty.*lam"),
    (dict(gamma=[]), r"grid is empty.*gamma"),
    (dict(seeds=[]), "grid is empty.*seeds"),
    (dict(lam=[1e-3, 0.0]), r"lam \(λ\) must be a positive"),
    (dict(lam=-1e-3), r"lam \(λ\) must be a positive"),
    (dict(lam=[np.nan]), r"lam \(λ\) must be a positive"),
    (dict(gamma=[1.0, -2.0]), "gamma must be a positive"),
    (dict(gamma=0), "gamma must be a positive"),
    (dict(m=[0, 5]), r"m \(landmarks\) must be integers >= 1"),
    (dict(m=2.5), r"m \(landmarks\) must be integers >= 1"),
    (dict(m=[10, 301]), "m = 301 is more landmarks than the 300 training rows"),
    (dict(seeds=[-1]), "seeds must be integers >= 0"),
    (dict(estimator=SnacksClassifier(solver="libsvm")), "grids need a Nyström embedding"),
    (dict(resources=Resources(backend="spark")), "unknown backend"),
    (dict(estimator=SnacksClassifier(kernel="sigmoid")), "unknown kernel"),
    (dict(resources=Resources(dtype="float16")), "dtype must be"),
])
def test_bad_grids_are_rejected_clearly(moons, grid, message):
    X, y, X_test, y_test = moons
    arguments = dict(m=[5], lam=[1e-2], gamma=1.0) | grid
    with pytest.raises(ValueError, match=message):
        robustness_grid(X, y, X_test, y_test, **arguments)


def test_bad_data_is_rejected_clearly(moons):
    X, y, X_test, y_test = moons
    with pytest.raises(ValueError, match="only one class"):
        robustness_grid(X, np.zeros(300), m=5, lam=1e-2)
    with pytest.raises(ValueError, match="NaN or infinite"):
        robustness_grid(np.where(X > 1.5, np.nan, X), y, m=5, lam=1e-2)
    with pytest.raises(ValueError, match="both X_test and y_test"):
        robustness_grid(X, y, X_test, m=5, lam=1e-2)
    with pytest.raises(ValueError, match="labels that y has not"):
        robustness_grid(X, y, X_test, y_test + 5, m=5, lam=1e-2)
    with pytest.raises(ValueError, match="one label per row"):
        robustness_grid(X, y[:-1], m=5, lam=1e-2)


def test_memory_plan_switches_to_float32_then_fewer_jobs_then_refuses(monkeypatch):
    n_train, n_test, m = 10_000, 5_000, [100, 1000]
    # Two threads share the wave's kernel blocks; each solves on its own embedding.
    threads = plan_grid(n_train, n_test, m, n_groups=4, n_jobs=2)
    assert threads.bytes_needed == 8 * (2 * 15_000 * 1000 + 2 * 10_000 * 1000)
    full = plan_grid(n_train, n_test, m, n_groups=4, n_jobs=2, backend="loky")
    assert (full.dtype, full.n_jobs, full.notes) == ("float64", 2, ())
    # Two loky jobs: the wave's kernel blocks twice (memory-mapped copy) plus two embeddings.
    assert full.bytes_needed == 8 * (2 * 15_000 * 1000 * 2 + 2 * 10_000 * 1000)
    assert full.groups_per_wave == 2 and full.n_columns == 8

    def machine_with(n_bytes):
        monkeypatch.setattr(memory, "available_memory", lambda: 2 * n_bytes)

    machine_with(full.bytes_needed - 1)
    half = plan_grid(n_train, n_test, m, n_groups=4, n_jobs=2, backend="loky")
    assert (half.dtype, half.n_jobs) == ("float32", 2)
    assert "float32" in half.notes[0]
    machine_with(half.bytes_needed - 1)
    fewer = plan_grid(n_train, n_test, m, n_groups=4, n_jobs=2, backend="loky")
    assert (fewer.dtype, fewer.n_jobs) == ("float32", 1)
    assert "1 at a time" in fewer.notes[-1]
    machine_with(fewer.bytes_needed - 1)
    with pytest.raises(ValueError, match="would need .* GiB.*smaller largest m"):
        plan_grid(n_train, n_test, m, n_groups=4, n_jobs=2, backend="loky")
    with pytest.raises(ValueError, match="would need"):
        plan_grid(n_train, n_test, m, n_jobs=1, dtype="float64")


def test_memory_plan_on_dask_checks_one_worker():
    plan = dict(n_groups=4, n_jobs=8, backend="dask", threads_per_worker=1)
    need = 8 * (4 * 15_000 * 1000 + 10_000 * 1000)  # a wave's 4 groups + one embedding
    full = plan_grid(10_000, 5_000, [100, 1000], memory_limit=need, **plan)
    assert (full.dtype, full.n_jobs, full.bytes_needed, full.groups_per_wave) == (
        "float64", 8, need, 4)
    half = plan_grid(10_000, 5_000, [100, 1000], memory_limit=need - 1, **plan)
    assert (half.dtype, half.n_jobs) == ("float32", 8) and "float32" in half.notes[0]
    with pytest.raises(ValueError, match="per Dask worker, more than the .* smallest one"):
        plan_grid(10_000, 5_000, [100, 1000], memory_limit=need // 2 - 1, **plan)


def test_grid_warns_and_runs_in_float32_when_float64_does_not_fit(moons, monkeypatch):
    X, y, X_test, y_test = moons
    need64 = plan_grid(300, 100, [40], n_jobs=1).bytes_needed
    monkeypatch.setattr(memory, "available_memory", lambda: 2 * need64 - 2)
    with pytest.warns(UserWarning, match="float32"):
        table = robustness_grid(X, y, X_test, y_test, m=40, lam=1e-2,
                                estimator=SnacksClassifier(max_epochs=5),
                                resources=Resources(dtype="auto", n_jobs=1))
    assert table.attrs["plan"]["dtype"] == "float32"
    assert table.test_error.iloc[0] < 0.3


def test_float32_grid_gives_float64_grid_errors(moons):
    """The default precision: the same test errors as float64, F to float32 rounding."""
    X, y, X_test, y_test = moons
    grid = dict(m=[10, 40], lam=[1e-2, 1e-4], gamma=1.0, seeds=[0, 1],
                estimator=SnacksClassifier(max_epochs=20))
    single = robustness_grid(X, y, X_test, y_test, **grid)
    double = robustness_grid(X, y, X_test, y_test, **grid,
                             resources=Resources(dtype="float64"))
    assert single.attrs["plan"]["dtype"] == "float32"
    assert double.attrs["plan"]["dtype"] == "float64"
    # At most one test row of the 100 changes side.
    assert np.abs(single.test_error - double.test_error).max() <= 1 / len(y_test) + 1e-12
    np.testing.assert_allclose(single.objective, double.objective, rtol=1e-3)


def test_summarize_grid_means_over_seeds():
    import pandas as pd
    table = pd.DataFrame({"seed": [0, 1, 0, 1, 0], "m": [10, 10, 10, 10, 20],
                          "lam": [1e-3, 1e-3, 1e-2, 1e-2, 1e-3],
                          "test_error": [0.1, 0.3, 0.2, 0.2, 0.5],
                          "embedding_time": [1.0] * 5, "training_time": [1.0] * 5})
    rows, cols, mean, std, seconds = summarize_grid(table)
    np.testing.assert_array_equal(rows, [10, 20])
    np.testing.assert_array_equal(cols, [1e-3, 1e-2])
    np.testing.assert_allclose(mean, [[0.2, 0.2], [0.5, np.nan]])
    np.testing.assert_allclose(std, [[0.1, 0.0], [0.0, np.nan]])
    np.testing.assert_allclose(seconds, [[2.0, 2.0], [2.0, np.nan]])


def _duplicated_moons(moons):
    """Moons with every other training row twice: the landmark sample repeats rows."""
    X, y, X_test, y_test = moons
    return np.vstack([X, X[::2]]), np.concatenate([y, y[::2]]), X_test, y_test


@pytest.mark.parametrize("data, kernel, gamma, dtype, nested", [
    ("moons", dict(kernel="rbf"), 2.0, "float64", True),
    ("moons", dict(kernel="rbf"), 2.0, "float32", True),
    # A cubic kernel on 2-D data has rank 10: K_mm is singular beyond 10 landmarks.
    ("moons", dict(kernel="polynomial", degree=3), 1.0, "float64", False),
    ("duplicated", dict(kernel="rbf"), 1e-3, "float32", False),
    ("blobs", dict(kernel="rbf"), 0.3, "float32", True),
    ("blobs", dict(kernel="polynomial", degree=2), 0.1, "float64", False),
])
@pytest.mark.parametrize("cv", [None, 3])
def test_kept_models_predict_exactly_what_each_row_scored(moons, data, kernel, gamma, dtype,
                                                          nested, cv):
    """Oracle: the table itself.  Every kept model's predictions on the row's test rows
    (with cv, its fold's validation rows) give the row's error exactly, and without cv its
    decision values are the row's test scores bit for bit."""
    if data == "blobs":
        X, y = make_blobs(300, centers=3, cluster_std=2.5, random_state=1)
        X, y, X_test, y_test = X[:220], y[:220], X[220:], y[220:]
    else:
        X, y, X_test, y_test = moons if data == "moons" else _duplicated_moons(moons)
    table = robustness_grid(X, y, X_test, y_test, m=[5, 30], lam=[1e-1, 1e-3], gamma=gamma,
                            seeds=[0, 2], cv=cv,
                            estimator=SnacksClassifier(**kernel, max_epochs=10),
                            schedule=GridSchedule(keep_test_scores=cv is None,
                                                  keep_models=True),
                            resources=Resources(dtype=dtype))
    assert len(table) == 8 * (cv or 1)
    for row in table.itertuples():
        model = row.model
        assert model.embedding_.nested is nested
        assert model.coef_.shape[1] == model.embedding_.n_components_ == row.n_components
        np.testing.assert_array_equal(model.classes_, np.unique(y))
        if cv is None:
            rows_X, rows_y = X_test, y_test
            np.testing.assert_array_equal(model.decision_function(X_test), row.test_scores)
        else:
            validation = sweeps.cv_splits(cv, X, y)[row.fold][1]
            rows_X, rows_y = X[validation], y[validation]
        assert error_rate(rows_y, model.predict(rows_X)) == row.test_error


def test_kept_models_share_their_group_embedding_and_keep_their_own_solve(moons):
    """Models of one (seed, γ) refer to one embedding; each has its cell's history: a warm
    start begins below F(0) = 1 (the hinge at w = 0), a cold one at it, and the last
    checkpoint is the row's objective."""
    X, y, X_test, y_test = moons
    table = robustness_grid(X, y, X_test, y_test, m=[10, 40], lam=[1e-1, 1e-2, 1e-3],
                            gamma=1.0, seeds=[0, 1], estimator=SnacksClassifier(max_epochs=20),
                            schedule=GridSchedule(keep_models=True))
    by_seed = {seed: rows.model.tolist() for seed, rows in table.groupby("seed")}
    assert all(model.embedding_.embedding is by_seed[0][0].embedding_.embedding
               for model in by_seed[0])
    assert by_seed[1][0].embedding_.embedding is not by_seed[0][0].embedding_.embedding
    for row in table.itertuples():
        history = row.model.history_
        assert set(history["problem"]) == {0}
        assert (history["objective"][0] < 1.0) == row.warm_start
        assert history["objective"][0] == pytest.approx(1.0) or row.warm_start
        assert history["objective"][-1] == pytest.approx(row.objective, rel=1e-6)


def test_kept_model_of_a_cold_cell_is_snacks_classifier(moons):
    """Oracle: with cold starts a cell is SnacksClassifier's fit; its kept model's decision
    values are the estimator's (to float32 rounding of two embeddings of the same
    landmarks), and so are its iterations."""
    X, y, X_test, y_test = moons
    table = robustness_grid(X, y, X_test, y_test, m=[8, 25], lam=[1e-2, 1e-3], gamma=1.5,
                            seeds=[3], estimator=SnacksClassifier(max_epochs=20),
                            schedule=GridSchedule(warm_start=False, keep_models=True))
    for row in table.itertuples():
        estimator = SnacksClassifier(n_components=row.m, lam=row.lam, gamma=1.5,
                                     max_epochs=20, random_state=3, dtype=np.float32).fit(X, y)
        expected = estimator.decision_function(X_test)
        np.testing.assert_allclose(row.model.decision_function(X_test), expected,
                                   atol=1e-4 * np.abs(expected).max())
        np.testing.assert_array_equal(row.model.history_["iteration"],
                                      estimator.history_["iteration"])


def test_keep_models_callable_keeps_the_rows_it_picks(moons):
    X, y, X_test, y_test = moons
    table = robustness_grid(
        X, y, X_test, y_test, m=[10, 20], lam=[1e-2, 1e-3], gamma=1.0, seeds=[0, 1], cv=3,
        estimator=SnacksClassifier(max_epochs=5),
        schedule=GridSchedule(keep_models=lambda row: row["seed"] == 0 and row["fold"] == 0))
    kept = table["model"].notna()
    assert kept.sum() == 4
    assert ((table["seed"] == 0) & (table["fold"] == 0)).eq(kept).all()
    assert "model" not in robustness_grid(X, y, X_test, y_test, m=[10], lam=[1e-2],
                                          estimator=SnacksClassifier(max_epochs=5))


def test_the_chosen_cell_is_refitted_in_the_grids_precision(monkeypatch):
    """An estimator's numpy dtype (float64, the class) is the grid's and the refit's."""
    X, y = make_moons(300, noise=0.2, random_state=0)
    refits = []
    fit = SnacksClassifier.fit

    def recording_fit(self, *args, **kwargs):
        refits.append(self.dtype)
        return fit(self, *args, **kwargs)

    monkeypatch.setattr(SnacksClassifier, "fit", recording_fit)
    table = robustness_grid(X, y, None, None, m=[10, 20], lam=[1e-3, 1e-2], cv=2,
                            estimator=SnacksClassifier(dtype=np.float64, random_state=0))
    assert table.attrs["plan"]["dtype"] == "float64"
    assert refits == [np.float64]


def test_threads_left_over_solve_a_cells_columns_side_by_side(monkeypatch):
    """One γ and one m on two threads: the cell's one-vs-rest columns go to two workers,
    with the table of one thread."""
    X, y = make_blobs(300, centers=4, cluster_std=2.0, random_state=3)
    grid = dict(m=[20], lam=[1e-3, 1e-4], gamma=0.3, estimator=SnacksClassifier(max_epochs=20))
    workers = []
    train_columns = sweeps.train_columns

    def recorded(*args, **kwargs):
        workers.append(kwargs["workers"])
        return train_columns(*args, **kwargs)

    monkeypatch.setattr(sweeps, "train_columns", recorded)
    one = robustness_grid(X, y, **grid, resources=Resources(n_jobs=1))
    two = robustness_grid(X, y, **grid, resources=Resources(n_jobs=2))
    assert workers == [1, 1, 2, 2]
    assert one[RESULT_COLUMNS].equals(two[RESULT_COLUMNS])


def test_a_group_with_its_own_lams_solves_those_cells_only(moons):
    """Oracle: the cells of a grid of every λ (cold cells are each the estimator's fit)."""
    X, y, X_test, y_test = moons
    problem = sweeps.with_labels(sweeps.grid_problem(
        SnacksClassifier(max_epochs=10), GridSchedule(warm_start=False)), y, y_test)._replace(
            lams=(1e-2, 1e-3, 1e-4))
    groups = [GridGroup(0, g, draw_seeds(0)) for g in (0.5, 2.0)]
    full, _, _ = sweeps.run_grid(X, X_test, [15], problem, groups, Resources(n_jobs=1))
    own = [groups[0]._replace(lams=(1e-2, 1e-4)), groups[1]._replace(lams=(1e-3,))]
    seen = []
    some, _, _ = sweeps.run_grid(X, X_test, [15], problem, own, Resources(
        n_jobs=1, progress=lambda done, total, row: seen.append((done, total))))
    assert sorted((r["gamma"], r["lam"]) for r in some) == [(0.5, 1e-4), (0.5, 1e-2),
                                                            (2.0, 1e-3)]
    assert seen == [(1, 3), (2, 3), (3, 3)]
    by_cell = {(r["gamma"], r["lam"]): r for r in full}
    for row in some:
        for name in ("test_error", "train_error", "objective"):
            assert row[name] == by_cell[row["gamma"], row["lam"]][name]
