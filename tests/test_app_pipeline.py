"""The app's plain-Python layer: training runs, sweeps, spectra and the
.npz model export (no Streamlit involved)."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from snacks_core.app import explorer
from snacks_core.datasets import load_bundled, make_synthetic, split_dataset
from snacks_core.kernels import spectra
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.model import evaluation, metrics, warm_up
from snacks_core.model.estimator import SnacksClassifier, estimator_from_settings
from snacks_core.persistence import model_from_npz, model_to_npz
from snacks_core.solvers.objective import primal_objective

PARAMS = {"kernel": "rbf", "gamma": 1.0, "n_components": 20, "lam": 1e-3, "solver": "snacks",
          "sampling": "uniform", "max_epochs": 20, "class_weight": None, "random_state": 0}


@pytest.fixture(scope="module")
def moons():
    return split_dataset(make_synthetic("moons", 200, random_state=0), random_state=0)


def test_train_measures_the_model(moons):
    run = evaluation.train(moons, PARAMS, keep_checkpoints=True)
    m = run.metrics
    assert m["test_error"] == pytest.approx(1 - run.model.score(moons.X_test, moons.y_test))
    assert m["C"] == pytest.approx(1 / (2 * moons.X_train.shape[0] * 1e-3))
    assert m["n_components"] == 20 and 0 < m["f1"] <= 1
    assert run.checkpoints
    assert m["f1_label"] == metrics.minority_class(moons.y_train)
    frames = explorer.animation_frames(run, np.linspace(-2, 2, 6), np.linspace(-1, 1, 5),
                                       max_frames=4)
    assert 1 < len(frames) <= 4 and frames[-1][1].shape == (5, 6)
    grid = np.array([[0.3, -0.2]])
    _, last_w = run.checkpoints[-1]
    assert (run.model.embedding_.transform(grid) @ last_w)[0] == pytest.approx(
        run.model.decision_function(grid)[0])


def test_train_reports_clipped_m_as_a_note(moons):
    run = evaluation.train(moons, {**PARAMS, "n_components": 1000})
    assert any("larger than the number of samples" in note for note in run.notes)
    with pytest.raises(ValueError, match="unknown model parameters"):
        evaluation.train(moons, {**PARAMS, "bogus": 1})


def test_robustness_grid_axes_and_sweep(moons):
    axis, ms, lams = explorer.grid_axes("m", PARAMS, moons.X_train, 2)
    # Around the data-aware defaults for the 140 training rows (tests/test_grid_axes.py).
    assert axis == "m" and ms == [25, 140] and lams == [2e-05, 0.0002]
    seen = []
    table = explorer.robustness(
        moons, PARAMS, axis, ms, lams, [0, 1],
        progress=lambda done, total, row: seen.append(
            explorer.progress_text(done, total, axis, row)))
    assert len(table) == 8 and len(seen) == 8
    # Progress reads as a share of the whole sweep, not as the last cell's error.
    assert seen[0].startswith("1 of 8 fits done (12% of the sweep)")
    assert seen[-1].startswith("8 of 8 fits done (100% of the sweep)") and "λ = " in seen[-1]
    assert set(table["m"]) == set(ms) and set(table["lam"]) == set(lams)
    assert explorer.grid_axes("gamma", PARAMS, moons.X_train, 3)[1] == [0.01, 1.0, 100.0]
    gammas = explorer.robustness(moons, {**PARAMS, "solver": "libsvm"}, "gamma", [0.1, 10.0],
                                 [1e-3], [0])
    assert list(gammas["gamma"]) == [0.1, 10.0] and set(gammas["m"]) == {20}
    assert explorer.grid_solver({"solver": "libsvm"}) == "snacks"
    with pytest.raises(ValueError, match="linear kernel has no γ"):
        explorer.grid_axes("gamma", {**PARAMS, "kernel": "linear"}, moons.X_train, 3)


def test_spectrum_and_effective_dimension(moons):
    curves = spectra.spectrum_curves(moons.X_train, PARAMS, (0.1, 1.0), 30, 0)
    wide, narrow = curves.values()
    # A wider kernel concentrates its spectrum: faster normalized decay.
    assert wide[10] / wide[0] < narrow[10] / narrow[0]
    eigenvalues = np.array([4.0, 1.0, 0.0])
    lam = 0.5
    assert spectra.effective_dimension(eigenvalues, lam) == pytest.approx(
        4 / (4 + 1.5) + 1 / (1 + 1.5))


def test_approximation_errors_fall_with_m(moons):
    m_values, errors = spectra.approximation_errors(moons.X_train, PARAMS, [5, 40], [0, 1])
    assert m_values == [5, 40]
    for name, (mean, _) in errors.items():
        assert mean[1] < mean[0], name
    assert any("random Fourier" in name for name in errors)
    _, polynomial = spectra.approximation_errors(
        moons.X_train, {**PARAMS, "kernel": "polynomial"}, [5], [0])
    assert not any("random Fourier" in name for name in polynomial)


@pytest.mark.parametrize("params, data", [
    (PARAMS, "moons"),
    # Rank 2 kernel on 20 landmarks: eigenvalues are dropped, no triangular factor.
    ({**PARAMS, "kernel": "linear"}, "moons"),
    ({**PARAMS, "solver": "libsvm"}, "moons"),
    ({**PARAMS, "solver": "liblinear", "gamma": "scale"}, "iris"),
])
def test_npz_export_round_trip(moons, params, data):
    split = moons if data == "moons" else split_dataset(load_bundled("iris"), random_state=0)
    model = estimator_from_settings(params).fit(split.X_train, split.y_train)
    payload = model_to_npz(model)
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        assert all(name.endswith(".npy") for name in archive.namelist())
    loaded = model_from_npz(payload)
    if params["solver"] != "libsvm":
        assert loaded.embedding_.triangular_ == model.embedding_.triangular_
        assert model.embedding_.triangular_ == (params["kernel"] != "linear")
    np.testing.assert_allclose(loaded.decision_function(split.X_test),
                               model.decision_function(split.X_test), rtol=1e-12)
    np.testing.assert_array_equal(loaded.predict(split.X_test), model.predict(split.X_test))
    assert loaded.get_params()["lam"] == params["lam"]
    assert set(loaded.history_) == set(model.history_)


def test_npz_export_of_sparse_landmarks():
    X = sp.random(60, 12, density=0.3, random_state=0, format="csr")
    y = np.where(np.asarray(X.sum(axis=1)).ravel() > 0.6, 1, -1)
    model = estimator_from_settings({**PARAMS, "gamma": 0.5}).fit(X, y)
    assert sp.issparse(model.embedding_.landmarks_)
    loaded = model_from_npz(model_to_npz(model))
    assert isinstance(loaded.embedding_, NystromEmbedding)
    np.testing.assert_allclose(loaded.decision_function(X), model.decision_function(X))


def test_npz_export_refuses_unknown_feature_maps(moons):
    model = estimator_from_settings(PARAMS).fit(moons.X_train, moons.y_train)
    model.embedding_ = object()
    with pytest.raises(ValueError, match="cannot be exported"):
        model_to_npz(model)


def test_npz_import_rejects_other_files():
    with pytest.raises(ValueError, match="not a Snacks model file"):
        model_from_npz(b"definitely not an npz")
    buffer = io.BytesIO()
    np.savez(buffer, weights=np.ones(3))
    with pytest.raises(ValueError, match="not a Snacks model file"):
        model_from_npz(buffer.getvalue())


def test_a_trained_model_is_never_changed_after_fit(moons, monkeypatch):
    """The app caches runs and shares them between sessions: no set_params after fit."""
    fitted = []
    original_fit = SnacksClassifier.fit

    def fit(self, *args, **kwargs):
        result = original_fit(self, *args, **kwargs)
        fitted.append(self)
        return result

    def set_params(self, **params):
        assert self not in fitted, f"set_params({params}) on a fitted model"
        return SnacksClassifier.__bases__[0].set_params(self, **params)

    monkeypatch.setattr(SnacksClassifier, "fit", fit)
    monkeypatch.setattr(SnacksClassifier, "set_params", set_params)
    run = evaluation.train(moons, PARAMS, keep_checkpoints=True)
    assert fitted == [run.model] and run.checkpoints
    assert run.model.get_params()["n_components"] == 20


def test_evaluate_is_one_shared_measure(moons):
    run = evaluation.train(moons, PARAMS)
    model, m = run.model, run.metrics
    Z = model.embedding_.transform(moons.X_train)
    targets = np.where(moons.y_train == model.classes_[1], 1.0, -1.0)
    # F of the weights the model returns, not the last row of the solver's history.
    assert m["objective"] == pytest.approx(primal_objective(model.coef_[0], Z, targets, 1e-3))
    labels, counts = np.unique(moons.y_train, return_counts=True)
    majority = labels[np.argmax(counts)]
    assert m["majority_error"] == pytest.approx(np.mean(moons.y_test != majority))
    assert m["n_landmarks"] == 20 and m["epochs"] > 0
    exact = evaluation.train(moons, {**PARAMS, "solver": "libsvm"}).metrics
    assert exact["epochs"] is None and exact["iterations"] > 0 and exact["n_landmarks"] is None


def test_f1_is_the_minority_class_by_default():
    # 90 % of the rows in class 1: F1 of the majority says little.
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 1, (270, 2)), rng.normal(2.5, 1, (30, 2))])
    y = np.array([1] * 270 + [0] * 30)
    split = split_dataset(_dataset(X, y), random_state=0)
    run = evaluation.train(split, {**PARAMS, "gamma": 0.5})
    assert metrics.minority_class(split.y_train) == 0
    assert run.metrics["f1_label"] == 0
    from sklearn.metrics import f1_score
    assert run.metrics["f1"] == pytest.approx(
        f1_score(split.y_test, run.model.predict(split.X_test), pos_label=0))
    chosen = evaluation.evaluate(run.model, split, pos_label=1)
    assert chosen["f1_label"] == 1 and chosen["f1"] > run.metrics["f1"]


def _dataset(X, y):
    from snacks_core.datasets import Dataset
    return Dataset(X=X, y=y, name="imbalanced", feature_names=("x1", "x2"))


@pytest.mark.slow  # a fresh interpreter
def test_snacks_core_and_the_cli_never_import_streamlit():
    import subprocess
    import sys
    code = ("import sys, snacks_core, snacks_core.model.evaluation, snacks_core.kernels.spectra, "
            "snacks_core.model.defaults, snacks_core.model.estimator, snacks_core.app.explorer, "
            "snacks_core.app.figures.boundary, snacks_core.app.figures.robustness, "
            "snacks_core.model.sweeps, snacks_core.persistence, snacks_core.cli as cli\n"
            "try:\n    cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'streamlit' not in sys.modules, 'streamlit imported'\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]


def test_warm_up_trains_every_solver(monkeypatch):
    seen = []
    original = warm_up.train
    monkeypatch.setattr(warm_up, "train",
                        lambda split, params, **kw: seen.append(params["solver"])
                        or original(split, params, **kw))
    warm_up.warm_up()
    from snacks_core.solvers import SOLVERS
    assert set(SOLVERS) <= set(seen)


def test_train_warms_a_new_configuration_up_before_measuring_it(moons, monkeypatch):
    """The first fit of a configuration in the process is preceded by a fit on a few rows
    (numba loads its code then), so that the time measured and shown is a warm one; later
    fits of the same configuration go straight to the measured fit."""
    calls = []
    original = evaluation._fit_and_measure
    monkeypatch.setattr(evaluation, "_fit_and_measure",
                        lambda split, params, keep: calls.append(split.X_train.shape[0])
                        or original(split, params, keep))
    monkeypatch.setattr(evaluation, "_WARM_CONFIGURATIONS", set())
    params = {**PARAMS, "sampling": "balanced", "kernel": "laplacian"}
    first = evaluation.train(moons, params)
    n_train = moons.X_train.shape[0]
    assert calls == [2 * evaluation._WARM_ROWS_PER_CLASS, n_train]
    again = evaluation.train(moons, params)
    assert calls[2:] == [n_train]
    # The warm-up does not change the model measured.
    np.testing.assert_array_equal(first.model.coef_, again.model.coef_)
    evaluation.train(moons, {**params, "solver": "pegasos"})
    assert calls[3:] == [2 * evaluation._WARM_ROWS_PER_CLASS, n_train]
