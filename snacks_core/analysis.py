"""What a fitted model achieved on a train/test split, and the explorer's computations.

:func:`evaluate` gives the app (and the command line and the sweeps) the same numbers under
the same names: errors beside the majority-class baseline, F1 of a named positive class
(the minority class of the training labels by default), the objective F of the weights the
model returns, the times, and how the solver stopped.

:func:`train` fits a model on a :class:`~snacks_core.datasets.Split` from a dict of
estimator parameters and measures it (a :class:`Run`); the other functions are the
computations behind the explorer's pages (robustness grids, spectra, kernel approximation
errors, replay frames).  They are plain Python: the app calls them through the cached
wrappers of :mod:`snacks_core.ui.cached`, and scripts and tests call them directly.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.utils.class_weight import compute_sample_weight

from .datasets import make_synthetic, split_dataset

# DEFAULT_M and data_aware_defaults are imported for the command line only, until it
# imports them from snacks_core.defaults itself.
from .defaults import (  # noqa: F401
    DEFAULT_M,
    C_values_around_default,
    data_aware_defaults,
    gamma_values_around,
    round_125,
)
from .estimator import SnacksClassifier
from .kernels import kernel_matrix, resolve_gamma
from .landmarks import select_landmarks
from .metrics import classification_scores, error_rate
from .nystrom import NystromEmbedding
from .objective import C_to_lam, hinge_loss, lam_to_C
from .pipeline import binary_targets, embedded_row_blocks, labels_from_scores
from .random_features import RFF_KERNELS, RandomFourierFeatures
from .search import SnacksSearchCV
from .settings import estimator_from_settings
from .solvers import EMBEDDED_SOLVERS, SOLVERS
from .sweeps import GRID_AXIS_SYMBOLS, robustness_grid


def solver_objective(model):
    """F of the returned point as the solver measured it (its history's last row, which is
    the point returned), averaged over the one-vs-rest problems."""
    history = model.history_
    last = [np.flatnonzero(history["problem"] == k)[-1]
            for k in np.unique(history["problem"]).astype(int)]
    return float(np.mean(history["objective"][last]))


def returned_objective(model, X, y):
    """F(w) of the returned weights, averaged over the one-vs-rest problems.

    For a Nyström model it is computed from ``coef_`` on the embedded training rows (a
    solver's last history row can be a later point than the best one it returns).  Models
    without a Nyström embedding (LIBSVM, ADMM) report their own objective: the last row of
    their history.
    """
    if not isinstance(model.embedding_, NystromEmbedding):
        return solver_objective(model)
    weights = compute_sample_weight(model.class_weight, y) if model.class_weight else None
    targets = binary_targets(np.asarray(y), model.classes_)
    n = X.shape[0]
    # The hinge terms summed over blocks of rows.
    hinge = np.zeros(len(targets))
    for start, stop in embedded_row_blocks(n, model.coef_.shape[1]):
        Z = model.embedding_.transform(X[start:stop])
        part = None if weights is None else weights[start:stop]
        hinge += [(stop - start) * hinge_loss(w, Z, t[start:stop], part)
                  for w, t in zip(model.coef_, targets, strict=True)]
    return float(np.mean([h / n + model.lam * float(w @ w)
                          for h, w in zip(hinge, model.coef_, strict=True)]))


def evaluate(model, split, *, pos_label=None, test_pred=None, max_train_rows=None) -> dict:
    """Metrics of a fitted :class:`~snacks_core.SnacksClassifier` on a split.

    Parameters
    ----------
    model : SnacksClassifier
        Fitted on ``split.X_train``.
    split : snacks_core.datasets.Split
    pos_label : label, optional
        The class whose F1 is reported for two-class data; default: the minority class of
        the training labels (F1 of a 90 % majority class says little).  With more classes
        F1 is the macro average and ``pos_label`` is ignored.
    test_pred : ndarray, optional
        The model's predictions of ``split.X_test``, when the caller has made them.
    max_train_rows : int, optional
        Above this many training rows, the training error is measured on a random sample of
        this many rows (``train_error_rows`` says how many) and the objective is the one
        the solver measured at the returned point (its history's last row), instead of
        embedding every training row once more.

    Returns
    -------
    dict
        ``train_error``, ``test_error``, ``majority_error`` (test error of always predicting
        the most frequent training class), ``f1``, ``f1_label`` (the class of the F1, None
        for the macro average), ``predicted_classes`` (number of distinct test
        predictions), ``embedding_time``, ``training_time``, ``objective`` (F of the returned
        weights), ``epochs`` (None for solvers that do not count passes), ``iterations``,
        ``n_components``, ``n_landmarks`` (None without a Nyström embedding), ``C``,
        ``stop``, ``train_pred`` (of the rows measured), ``test_pred``, ``train_error_rows``.
    """
    n_train = split.X_train.shape[0]
    sampled = max_train_rows is not None and n_train > max_train_rows
    train_rows = (np.sort(np.random.default_rng(0).choice(n_train, max_train_rows, replace=False))
                  if sampled else slice(None))
    train_pred = model.predict(split.X_train[train_rows])
    if test_pred is None:
        test_pred = model.predict(split.X_test)
    history = model.history_
    epochs = history["epoch"][np.isfinite(history["epoch"])]
    embedding = model.embedding_
    return {
        "train_error": error_rate(split.y_train[train_rows], train_pred),
        "train_error_rows": train_pred.shape[0],
        **classification_scores(split.y_train, split.y_test, test_pred, model.classes_,
                                pos_label=pos_label),
        "embedding_time": float(model.embedding_time_),
        "training_time": float(model.training_time_),
        "objective": (solver_objective(model) if sampled else
                      returned_objective(model, split.X_train, split.y_train)),
        "epochs": float(np.max(epochs)) if epochs.size else None,
        "iterations": int(model.n_iter_),
        "n_components": int(model.coef_.shape[1]),
        "n_landmarks": (int(embedding.landmarks_.shape[0])
                        if isinstance(embedding, NystromEmbedding) else None),
        "C": lam_to_C(model.lam, split.X_train.shape[0]),
        "stop": ", ".join(sorted(set(model.stop_reasons_))),
        "train_pred": train_pred,
        "test_pred": test_pred,
    }


@dataclass(frozen=True)
class Run:
    """A trained model with its metrics, the warnings it raised and optional checkpoints.

    ``checkpoints`` holds (history record, weights) pairs of a two-class embedded solver,
    for replaying the decision boundary as it converged.  ``created`` is the
    ``time.time()`` at the end of training: a page tells a run from the cache by it.
    Nothing changes a run (or its model) after it is made: the app caches and shares it.
    """

    model: SnacksClassifier
    metrics: dict
    notes: list = field(default_factory=list)
    checkpoints: list = field(default_factory=list)
    created: float = 0.0


class CheckpointRecorder:
    """A solver callback that keeps a copy of the weights at every checkpoint."""

    def __init__(self):
        self.checkpoints = []

    def __call__(self, record, w):
        self.checkpoints.append((dict(record), np.array(w)))


def train(split, params, *, keep_checkpoints=False) -> Run:
    """Fit on the training part with the test part as ``eval_set`` and measure the result.

    Warnings of the estimator (m clipped to n, …) come back in ``Run.notes``.  The model is
    built with its final parameters (the checkpoint recorder included) and never modified
    after ``fit``.
    """
    _warm_up_for(split, params, keep_checkpoints)
    return _fit_and_measure(split, params, keep_checkpoints)


# The configurations trained in this process (see _warm_up_for).
_WARM_CONFIGURATIONS = set()
_WARM_ROWS_PER_CLASS = 20


def _warm_up_for(split, params, keep_checkpoints):
    """Train the configuration once on a few rows when this process has not trained it yet.

    numba loads (or compiles) a function's code for each new combination of argument types
    at its first call: without this, the first fit of a kernel, a sampling or a sparse
    format would show that start-up cost as its training time, and the app would keep that
    time in its cache.  Every time shown is then a warm one, measured the same way.
    """
    X, y = split.X_train, split.y_train
    classes = np.unique(y)
    key = (params.get("solver"), params.get("kernel"), params.get("sampling"),
           params.get("class_weight") is not None, sp.issparse(X), np.dtype(X.dtype).str,
           classes.shape[0] > 2, bool(keep_checkpoints), params.get("dtype"))
    if key in _WARM_CONFIGURATIONS:
        return
    rows = np.concatenate([np.flatnonzero(y == c)[:_WARM_ROWS_PER_CLASS] for c in classes])
    few = replace(split, X_train=X[rows], y_train=y[rows], X_test=X[rows], y_test=y[rows])
    m = int(params.get("n_components", 10))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit_and_measure(few, {**params, "n_components": max(1, min(m, rows.shape[0] // 2))},
                         keep_checkpoints)
    _WARM_CONFIGURATIONS.add(key)


def _fit_and_measure(split, params, keep_checkpoints):
    binary = np.unique(split.y_train).shape[0] == 2
    recorder = None
    if keep_checkpoints and binary and params.get("solver") in EMBEDDED_SOLVERS:
        recorder = CheckpointRecorder()
    model = estimator_from_settings(
        params, solver_options=None if recorder is None else {"callback": recorder})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(split.X_train, split.y_train, eval_set=(split.X_test, split.y_test))
    notes = list(dict.fromkeys(str(w.message) for w in caught
                               if issubclass(w.category, UserWarning)))
    return Run(model, evaluate(model, split), notes,
               [] if recorder is None else recorder.checkpoints, time.time())


def warm_up() -> None:
    """Train every solver once on a few rows, dense and sparse, so that numba's compiled
    code is loaded before a user's first click (:func:`train` warms any other
    configuration up itself before it measures a fit)."""
    split = split_dataset(make_synthetic("moons", 60, noise=0.2, random_state=0),
                          random_state=0)
    sparse = replace(split, X_train=sp.csr_matrix(np.abs(split.X_train)),
                     X_test=sp.csr_matrix(np.abs(split.X_test)))
    params = {"kernel": "rbf", "gamma": "scale", "n_components": 10, "lam": 1e-3,
              "sampling": "balanced", "max_epochs": 3, "class_weight": None, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for solver in SOLVERS:
            train(split, {**params, "solver": solver}, keep_checkpoints=True)
        for solver in EMBEDDED_SOLVERS:
            train(sparse, {**params, "solver": solver})


def animation_frames(run, xs, ys, max_frames=30) -> list:
    """(label, f on the grid, history record) for up to ``max_frames`` checkpoints of a
    two-class run, evenly spread and always including the last."""
    if not run.checkpoints:
        return []
    gx, gy = np.meshgrid(xs, ys)
    Z = run.model.embedding_.transform(np.column_stack([gx.ravel(), gy.ravel()]))
    picks = np.unique(np.linspace(0, len(run.checkpoints) - 1,
                                  min(max_frames, len(run.checkpoints))).round().astype(int))
    frames = []
    for k in picks:
        record, w = run.checkpoints[k]
        label = f"epoch {record['epoch']:.3g}"
        frames.append((label, (Z @ w).reshape(gy.shape), record))
    return frames


def shared_embedding_time(runs):
    """One time for the Nyström embedding the embedded solvers of ``runs`` (solver → Run)
    share: the same landmarks and Z computed once per run, so the median of their times
    (None when no embedded solver is there)."""
    times = [run.metrics["embedding_time"] for solver, run in runs.items()
             if solver in EMBEDDED_SOLVERS]
    return float(np.median(times)) if times else None


def solver_row(label, metrics, shared_embedding=None) -> dict:
    """One row of the solver comparison (the paper's Tables III–VII) from a run's metrics;
    ``shared_embedding`` replaces the embedding time of a Nyström-embedded run."""
    embedding = metrics["embedding_time"]
    if shared_embedding is not None and metrics["n_landmarks"] is not None:
        embedding = shared_embedding
    return {"solver": label, "embedding time (s)": embedding,
            "training time (s)": metrics["training_time"],
            "train error": metrics["train_error"], "test error": metrics["test_error"],
            "F1": metrics["f1"], "objective": metrics["objective"],
            "epochs": metrics["epochs"], "iterations": metrics["iterations"],
            "stopped by": metrics["stop"]}


def grid_solver(params) -> str:
    """The solver of a robustness grid: the chosen one, or Snacks for the exact solver
    (a grid varies the landmarks, which the exact kernel SVM has none of)."""
    return params["solver"] if params["solver"] in EMBEDDED_SOLVERS else "snacks"


def robustness(split, params, axis, axis_values, lams, seeds, progress=None,
               should_stop=None, cv=None, keep_test_scores=False, keep_models=False):
    """Error over an (m, λ) or (γ, λ) grid with :func:`snacks_core.sweeps.robustness_grid`.

    ``axis`` is 'm' or 'gamma'; the other estimator parameters come from ``params``
    (the solver through :func:`grid_solver`).  With ``cv=k`` each cell is scored by k-fold
    cross-validation on the training part (one row per fold) and only the chosen cell's
    model sees the test part (``attrs['chosen']``); without, each cell by its test error
    (``keep_test_scores``: with each cell's test decision values, for
    :func:`selection_optimism`).  ``keep_models`` (True, or a predicate of a row) adds
    each cell's fitted model, the one its error was measured on (column ``model``).
    ``progress(done, total, row)`` is called after each fit (one cell, seed and fold) and
    ``should_stop()`` is polled between columns.
    """
    grid = {"m": params["n_components"], "gamma": params.get("gamma", "scale")}
    grid[axis] = list(axis_values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return robustness_grid(
            split.X_train, split.y_train, split.X_test, split.y_test, m=grid["m"], lam=lams,
            gamma=grid["gamma"], seeds=list(seeds), kernel=params["kernel"],
            degree=params.get("degree", 3), coef0=params.get("coef0", 1.0),
            sampling=params["sampling"], class_weight=params.get("class_weight"),
            solver=grid_solver(params), max_epochs=params["max_epochs"], cv=cv,
            keep_test_scores=keep_test_scores, keep_models=keep_models, progress=progress,
            should_stop=should_stop)


def selection_optimism(table, y_train, y_test, *, n_halvings=200, seed=0) -> dict:
    """How much choosing a grid's cell on the test rows flatters the choice.

    ``table`` is a grid with ``test_scores`` (one test-set pass per cell and seed).  The
    test rows are halved at random ``n_halvings`` times; each time the cell with the
    lowest error (mean over seeds) on one half is chosen, and its error on that half and
    on the other is recorded.  Returns the means: ``picked`` (the error on the rows that
    chose it: what picking on the test set reports), ``fresh`` (on rows that took no part
    in the choice) and ``gap`` = fresh − picked, with ``n_cells``, ``n_test`` and
    ``n_halvings``.
    """
    classes = np.unique(y_train)
    y_test = np.asarray(y_test)
    wrong = np.array([
        np.mean([labels_from_scores(scores, classes) != y_test for scores in cell], axis=0)
        for _, cell in table.groupby(["gamma", "m", "lam"])["test_scores"]])
    rng = np.random.default_rng(seed)
    picked, fresh = [], []
    for _ in range(n_halvings):
        order = rng.permutation(y_test.shape[0])
        half, other = order[: y_test.shape[0] // 2], order[y_test.shape[0] // 2:]
        errors = wrong[:, half].mean(axis=1)
        best = int(np.argmin(errors))
        picked.append(errors[best])
        fresh.append(wrong[best, other].mean())
    return {"picked": float(np.mean(picked)), "fresh": float(np.mean(fresh)),
            "gap": float(np.mean(fresh) - np.mean(picked)), "n_cells": wrong.shape[0],
            "n_test": y_test.shape[0], "n_halvings": n_halvings}


# What Auto-tune tries: γ around the 'scale' rule, C in decades around the default C ≈ 25
# (λ ≈ 0.02/n, so that the grid moves with n as the default does), m as set and 4×.
AUTO_TUNE_GAMMA_FACTORS = (0.1, 0.3, 1.0, 3.0, 10.0)
AUTO_TUNE_CS = C_values_around_default(3)
AUTO_TUNE_FOLDS = 3


def auto_tune(split, params, *, by_C=False, n_jobs=None) -> dict:
    """A quick cross-validated search on the training part for the explorer's sidebar.

    Tries γ at :data:`AUTO_TUNE_GAMMA_FACTORS` × the 'scale' value (rounded to 1, 2 or 5
    times a power of ten, within :data:`snacks_core.defaults.GAMMA_RANGE`), λ = 1/(2nC) for C in
    :data:`AUTO_TUNE_CS` (n the training rows; rounded to 1, 2 or 5 times a power of ten
    unless ``by_C``, for a sidebar that sets λ) and m as set and four times that (at most
    half the training rows), by
    :data:`AUTO_TUNE_FOLDS`-fold CV with successive halving; the test part is not used.
    Returns ``params`` (the chosen ``gamma``, ``lam`` and ``n_components``), ``cv_error``
    (its mean CV error), ``results`` (the search's ``cv_results_`` as a DataFrame) and
    ``seconds``.
    """
    n_train = split.X_train.shape[0]
    m = int(params["n_components"])
    lams = [C_to_lam(C, n_train) for C in AUTO_TUNE_CS]
    grid = {"lam": lams if by_C else sorted({round_125(lam) for lam in lams}),
            "n_components": sorted({min(m, n_train // 2), min(4 * m, n_train // 2, 2000)})}
    if params["kernel"] != "linear":
        scale = resolve_gamma("scale", split.X_train)
        grid["gamma"] = gamma_values_around(scale, AUTO_TUNE_GAMMA_FACTORS)
    base = estimator_from_settings({**params, "solver": grid_solver(params)})
    search = SnacksSearchCV(base, grid, cv=AUTO_TUNE_FOLDS, halving=True, n_jobs=n_jobs,
                            random_state=params.get("random_state"))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(split.X_train, split.y_train)
    return {"params": dict(search.best_params_), "cv_error": 1.0 - search.best_score_,
            "results": pd.DataFrame(search.cv_results_),
            "seconds": time.perf_counter() - start}


def progress_text(done, total, axis, row) -> str:
    """A sweep's progress as a fraction of the whole sweep, and the last fit's result."""
    name = GRID_AXIS_SYMBOLS[axis]
    return (f"{done} of {total} fits done ({done / total:.0%} of the sweep) · last: "
            f"{name} = {row[axis]:g}, λ = {row['lam']:g}, seed {row['seed']} → test error "
            f"{100 * row['test_error']:.1f} %")


def grid_axes(kind, params, X_train, size, folds=None):
    """Values of the robustness grid: ('m', m values) or ('gamma', γ values) and the λ
    values, ``size`` values each, log-spaced; m at most the rows a cell trains on (with
    ``folds``-fold cross-validation, the smallest fold's)."""
    lams = _round_log(np.logspace(-6, -1, size))
    if kind == "m":
        n_train = X_train.shape[0]
        if folds:
            n_train -= -(-n_train // folds)
        ms = np.unique(np.geomspace(5, max(6, min(n_train, 500)), size).round().astype(int))
        return "m", [int(m) for m in ms], lams
    if params.get("kernel") == "linear":
        raise ValueError("The linear kernel has no γ: choose another kernel or the m × λ grid.")
    gamma = resolve_gamma(params.get("gamma", "scale"), X_train)
    return "gamma", _round_log(gamma * np.logspace(-2, 2, size)), lams


def _round_log(values):
    """Log-spaced values to one significant digit (readable axis labels)."""
    return list(dict.fromkeys(float(f"{v:.0e}") for v in values))


def spectrum_curves(X, params, factors, m, seed) -> dict:
    """Eigenvalues of K_mm on the same m landmarks for γ times each factor."""
    X = _subsample(X, 20_000, seed)
    m = min(int(m), X.shape[0])
    landmarks = select_landmarks(X, m, sampling="uniform", random_state=seed)
    base = resolve_gamma(params.get("gamma", "scale"), X)
    curves = {}
    for factor in factors:
        embedding = NystromEmbedding(kernel=params["kernel"], gamma=base * factor,
                                     degree=params.get("degree", 3),
                                     coef0=params.get("coef0", 1.0))
        embedding.fit(X, landmark_indices=landmarks)
        curves[f"γ = {base * factor:.3g} (×{factor:g})"] = embedding.eigenvalues_
    return curves


def effective_dimension(eigenvalues, lam) -> float:
    """d_eff(λ) = Σ μᵢ/(μᵢ + mλ) from the m eigenvalues of K_mm.

    K_mm/m approximates the kernel operator, whose regularised spectrum is μ/(μ + λ) in
    the convention F = (1/n) Σ loss + λ‖w‖²; eigen-directions far below mλ are not learned.
    """
    eigenvalues = np.asarray(eigenvalues, dtype=np.float64)
    return float(np.sum(eigenvalues / (eigenvalues + len(eigenvalues) * lam)))


def approximation_errors(X, params, m_values, seeds, max_rows=600) -> dict:
    """Relative error ‖K − ZZᵀ‖_F/‖K‖_F on a subsample, per method and m: mean and std.

    Methods: Nyström with uniform and with leverage-score landmarks, Nyström on 2m landmarks
    truncated to rank m (the tutorial's variant), and random Fourier features with D = m
    (rbf and laplacian kernels only).
    """
    X = _subsample(X, max_rows, 0)
    kernel_params = {"kernel": params["kernel"],
                     "gamma": resolve_gamma(params.get("gamma", "scale"), X),
                     "degree": params.get("degree", 3), "coef0": params.get("coef0", 1.0)}
    K = kernel_matrix(X, X, **kernel_params)
    norm = np.linalg.norm(K)

    def error(Z):
        Z = np.asarray(Z, dtype=np.float64)
        return float(np.linalg.norm(K - Z @ Z.T) / norm)

    methods = {
        "Nyström, uniform landmarks": lambda m, s: NystromEmbedding(
            n_components=m, sampling="uniform", random_state=s, **kernel_params),
        "Nyström, leverage-score landmarks": lambda m, s: NystromEmbedding(
            n_components=m, sampling="leverage", random_state=s, **kernel_params),
        "Nyström, 2m landmarks at rank m": lambda m, s: NystromEmbedding(
            n_components=min(2 * m, X.shape[0]), rank=m, sampling="uniform", random_state=s,
            **kernel_params),
    }
    if params["kernel"] in RFF_KERNELS:
        methods["random Fourier features, D = m"] = lambda m, s: RandomFourierFeatures(
            kernel=params["kernel"], gamma=kernel_params["gamma"], n_components=m,
            random_state=s)
    m_values = [m for m in m_values if m <= X.shape[0]]
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, make in methods.items():
            values = np.array([[error(make(m, s).fit_transform(X)) for s in seeds]
                               for m in m_values])
            results[name] = (values.mean(axis=1), values.std(axis=1))
    return m_values, results


def _subsample(X, max_rows, seed):
    if X.shape[0] <= max_rows:
        return X
    rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
    return X[rows]

