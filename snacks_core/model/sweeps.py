"""Robustness grids over (m, λ) or (γ, λ): test error per cell and seed, reusing work.

Fig. 2 of the Snacks paper (Tanji et al.) shows the test error of Snacks on a9a over a
12 × 12 grid of landmark counts m and regularisations λ.  :func:`robustness_grid` computes
such grids for any data, kernel and embedded solver, and shares work between cells:

* **Groups** — one per (seed, γ).  One set of m_max = max(m) landmarks is drawn (rows
  repeating an earlier landmark dropped, as :class:`~snacks_core.kernels.nystrom.NystromEmbedding`
  does).  Landmark selections return orders whose prefixes are samples of the same kind
  (:mod:`snacks_core.kernels.landmarks`), so the embedding for m uses the first m landmarks, and
  it is the same as a fresh embedding on them.  Usually K_mm is well-conditioned and one
  embedding serves every m: with K_mm = L Lᵀ, the first k columns of Z = K_nm L⁻ᵀ *are*
  the embedding on the first k landmarks (Cholesky factors nest), for the training and
  the test rows alike — one n × m_max triangular product per group instead of one
  factorisation and one n × m × m product per m.  Otherwise the kernel blocks K_nm and
  K_tm are computed once, each m's leading block of K_mm is eigen-decomposed and
  Z_m = K_nm[:, :m] U_k Λ_k^{−1/2} for the training and the test rows.  Either way a cell's
  model is a :class:`~snacks_core.SnacksClassifier` over the group's
  :class:`~snacks_core.kernels.nystrom.EmbeddingPrefix`, which scores new rows as the grid
  scored its test rows.
* **Columns** — one per (group, m).  λ runs from large to small and each solve starts from
  the previous λ's solution (for solvers that accept ``w0``).  Snacks then sizes its first
  ball and step from the certified duality gap at that start, and its first stage lasts
  3 epochs instead of 1, so that the noise-floor rule does not stop it at the start.  Each
  cell stops on the solver's own rules: the relative duality gap ``tol`` (scale-free, so
  one tolerance means the same accuracy at every λ), the stochastic noise floor, or the
  ``max_epochs`` budget.
* **Waves** — columns run in parallel: on threads (the default; the solvers' loops and
  BLAS release the GIL, so the columns share the kernel blocks with no copy and no worker
  to start), in joblib worker processes, or on a Dask cluster through
  ``dask.distributed``.  Groups are processed a few at a time (a wave), so that the kernel
  blocks in memory are bounded; :func:`plan_grid` sizes the waves, the precision and the
  number of parallel jobs from the memory before anything is allocated.

Every cell draws its seeds as ``SnacksClassifier(random_state=seed)`` does, so that with
``warm_start=False`` a cell is that estimator's fit on the same data.  Kernel blocks and
columns run with one BLAS thread: multithreaded BLAS results depend on the thread count,
and this makes the table identical for any ``n_jobs`` and backend on the same machine.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

import numpy as np
import pandas as pd
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from numpy.typing import ArrayLike
from sklearn.base import clone
from sklearn.model_selection import check_cv, train_test_split
from threadpoolctl import threadpool_limits

from snacks_core.core.cancellation import carry
from snacks_core.core.memory import check_fits_in_memory
from snacks_core.core.threads import effective_n_threads
from snacks_core.core.validation import check_data, check_lam
from snacks_core.distributed import current_client
from snacks_core.kernels.nystrom import EmbeddingPrefix, NystromEmbedding
from snacks_core.model.defaults import DEFAULT_TEST_SIZE
from snacks_core.model.engine import (
    Seeds,
    binary_targets,
    class_labels,
    cut_training_rows,
    draw_seeds,
    fit_embedding,
    hinge_weights,
    labels_from_scores,
    one_vs_one_chosen,
    score_embedded_rows,
    train_columns,
    training_measures,
)
from snacks_core.model.estimator import CellFacts, SnacksClassifier, cell_model
from snacks_core.model.metrics import TrainingLabels, classification_scores, error_rate
from snacks_core.model.specs import Kernel, Resources, SolverSpec, tol_value
from snacks_core.solvers import EMBEDDED_SOLVERS, check_solver_params
from snacks_core.solvers.objective import decision_values

# The grid of the paper's Fig. 2 (a9a): 12 landmark counts, λ from 1e-9 to 1e-3.
PAPER_M = (10, 20, 50, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000)
PAPER_LAMBDAS = (1e-9, 5e-9, 1e-8, 5e-8, 1e-7, 5e-7, 1e-6, 5e-6, 1e-5, 5e-5, 1e-4, 5e-4, 1e-3)

# One row per cell and seed, in this order.
GRID_COLUMNS = (
    "seed", "gamma", "m", "lam", "C", "n_components", "train_error", "test_error", "f1",
    "objective", "embedding_time", "training_time", "iterations", "epochs", "stop_reason",
    "warm_start",
)

BACKENDS = ("threads", "loky", "dask")

# The symbol of each grid axis, as figures and progress lines write it.
GRID_AXIS_SYMBOLS = {"m": "m", "lam": "λ", "gamma": "γ"}

# A wave holds enough columns to keep every job busy while its longest column runs.
_COLUMNS_PER_JOB = 2


@dataclass(frozen=True)
class GridPlan:
    """What a grid will run and the memory it needs, decided before allocating anything.

    Attributes
    ----------
    n_train, n_test : int
        Rows the kernel blocks are computed for.
    m_max : int
        Landmarks per group (the largest m).
    n_groups, n_columns, n_cells : int
        (seed, γ) groups, (group, m) columns and (group, m, λ) cells.
    groups_per_wave : int
        Groups whose kernel blocks are in memory at once.
    n_jobs : int
        Columns solved at once.
    dtype : str
        'float64' or 'float32', the precision of kernel blocks and embeddings.
    bytes_needed : int
        Estimated peak: itemsize × (groups_per_wave × (n_train + n_test) × m_max × copies
        + n_jobs × n_train × m_max), with two copies of the kernel blocks when local worker
        processes read them from a memory-mapped file, one otherwise.
    notes : tuple of str
        Changes made to fit in memory (precision, jobs), in words for the user.
    """

    n_train: int
    n_test: int
    m_max: int
    n_groups: int
    n_columns: int
    n_cells: int
    groups_per_wave: int
    n_jobs: int
    dtype: str
    bytes_needed: int
    notes: tuple = ()


def plan_grid(n_train, n_test, m, *, n_lams=1, n_groups=1, n_jobs=1, dtype="auto",
              backend="threads", memory_limit=None, threads_per_worker=1) -> GridPlan:
    """Choose precision, parallel jobs and wave size so the grid fits in memory.

    The kernel blocks of a group take (n_train + n_test) × m_max values and each running
    column an n_train × m embedding.  Locally, options are tried in this order: the
    requested precision with all jobs, then (for ``dtype='auto'``) float32 with all jobs,
    then fewer jobs; the first that fits is returned, with ``notes`` saying what changed.
    Locally, "fits" means at most half the tighter of the process's limit (physical memory,
    cgroup limit, ``RLIMIT_AS`` headroom: :func:`snacks_core.core.memory.memory_limit`) and
    the memory free on the machine now (``MemAvailable``).  On a Dask cluster the need of
    one worker (a wave's kernel blocks and one embedding per worker thread) is compared
    with the smallest worker's memory, and only the precision can change.

    Parameters
    ----------
    n_train, n_test : int
        Training and test rows.
    m : sequence of int
        The landmark counts of the grid.
    n_lams : int, default=1
        λ values per column (only counted in ``n_cells``).
    n_groups : int, default=1
        (seed, γ) groups.
    n_jobs : int, default=1
        Columns to solve at once (already resolved: no -1); on Dask, the cluster's threads.
    dtype : {'auto', 'float64', 'float32'}, default='auto'
        'auto' is float64, or float32 when float64 does not fit.
    backend : {'threads', 'loky', 'dask'}, default='threads'
        Threads share the kernel blocks; local processes ('loky') share them through a
        memory-mapped copy.
    memory_limit : int or None, default=None
        With ``backend='dask'``: bytes of the smallest worker (None: not checked).
    threads_per_worker : int, default=1
        With ``backend='dask'``: the most threads of a worker.

    Returns
    -------
    GridPlan

    Raises
    ------
    ValueError
        When even float32 with one job does not fit: the message says how much is needed
        and what to change; when ``n_jobs`` is not a positive integer, or (locally) more
        than four jobs per core and more than 32.
    """
    m_values = list(m)
    m_max = max(m_values)
    n_columns = n_groups * len(m_values)
    on_dask = backend == "dask"
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive number of jobs, got {n_jobs!r}.")
    # Beyond a few processes per core, local jobs only add memory and start-up time.
    most_jobs = max(32, 4 * effective_n_jobs(-1))
    if not on_dask and n_jobs > most_jobs:
        raise ValueError(f"n_jobs={n_jobs} is more parallel jobs than this machine can run "
                         f"({effective_n_jobs(-1)} cores): use n_jobs=-1 (one job per core) "
                         f"or at most {most_jobs}.")
    if dtype == "auto":
        dtypes = (np.dtype(np.float64), np.dtype(np.float32))
    elif dtype in (np.float64, np.float32, "float64", "float32"):
        dtypes = (np.dtype(dtype),)
    else:
        raise ValueError(f"dtype must be 'auto', 'float64' or 'float32', got {dtype!r}.")
    if on_dask:
        options = [(candidate, n_jobs) for candidate in dtypes]
    else:
        # Half the precision keeps every job busy, so it comes before fewer jobs.
        options = [(dtypes[0], n_jobs)] + [(dtypes[-1], jobs) for jobs in range(n_jobs, 0, -1)]
    for candidate, jobs in dict.fromkeys(options):
        groups_per_wave = min(n_groups, max(1, math.ceil(
            _COLUMNS_PER_JOB * jobs / len(m_values))))
        copies = 2 if backend == "loky" and jobs > 1 else 1
        embeddings = threads_per_worker if on_dask else jobs
        needed = candidate.itemsize * (groups_per_wave * (n_train + n_test) * m_max * copies
                                       + embeddings * n_train * m_max)
        if (memory_limit is None or needed <= memory_limit) if on_dask else _fits(needed):
            notes = []
            if candidate != dtypes[0]:
                notes.append(f"float64 would not fit in memory: the grid runs in float32 "
                             f"({_gib(needed)} GiB instead of {_gib(2 * needed)} GiB).")
            if jobs < n_jobs:
                notes.append(f"{n_jobs} parallel jobs would not fit in memory: the grid "
                             f"runs {jobs} at a time.")
            return GridPlan(n_train, n_test, m_max, n_groups, n_columns, n_columns * n_lams,
                            groups_per_wave, jobs, candidate.name, int(needed), tuple(notes))
    advice = ("Use a smaller largest m, fewer rows (a subsample), or a Dask cluster with "
              "more memory per worker.")
    what = (f"The grid's kernel blocks and embeddings ({n_train} training and {n_test} test "
            f"rows × m_max = {m_max} landmarks, in {dtypes[-1].name}"
            + (")" if on_dask else " with one job)"))
    if not on_dask:
        check_fits_in_memory(needed, what, advice, now=True)
    raise ValueError(f"{what} would need {_gib(needed)} GiB per Dask worker, more than the "
                     f"{_gib(memory_limit)} GiB of the smallest one. {advice}")


def _fits(n_bytes) -> bool:
    """Whether this process can spare ``n_bytes`` now (the rule of check_fits_in_memory: half
    the tighter of the process's limit and the memory free on the machine)."""
    try:
        check_fits_in_memory(n_bytes, "", "", now=True)
    except ValueError:
        return False
    return True


def _gib(n_bytes) -> str:
    return f"{n_bytes / 2**30:.2f}"


@dataclass(frozen=True)
class GridSchedule:
    """What a grid keeps and shares besides its cells' specification.

    Attributes
    ----------
    warm_start : bool
        Start each λ from the previous (larger) λ's solution when the solver accepts ``w0``
        (Snacks: with a first stage of 3 epochs unless ``solver_options`` sets
        ``stage_epochs``); False makes every cell the estimator's own fit.
    test_size : float
        Share of the rows held out for testing when no test set is given (stratified, split
        with the first seed).
    keep_test_scores : bool
        Add a ``test_scores`` column: each cell's decision values on its test rows.
    keep_models : bool or callable(row) -> bool
        Add a ``model`` column: each row's fitted :class:`~snacks_core.SnacksClassifier`
        (:func:`~snacks_core.model.estimator.cell_model`; a callable keeps those of the rows
        it returns True for, the others are None), which predicts the row's test rows as the
        grid scored them.  Kept models keep their groups' embeddings (about groups × m_max
        × (m_max + d) values) in memory.
    measure_training : bool
        Measure each cell's error and objective on its training rows (the columns
        ``train_error`` and ``objective``, a model's ``train_error_`` and
        ``train_objective_``); False leaves them NaN, for a caller that reads only the test
        rows' scores (a cross-validated search: on the UCI letter set's folds the training
        rows' 325 one-vs-one decision values a row were a ninth of a cell's time).
    """

    warm_start: bool = True
    test_size: float = DEFAULT_TEST_SIZE
    keep_test_scores: bool = False
    keep_models: bool | Callable = False
    measure_training: bool = True


class _Problem(NamedTuple):
    """What every column of a grid shares (small; sent once with each task)."""

    kernel: Kernel  # γ is each group's own
    spec: SolverSpec  # λ is each cell's own
    sampling: str
    dtype: str
    classes: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    lams: tuple
    schedule: GridSchedule
    reference: TrainingLabels | None = None  # the F1 and majority classes of y_train
    fold: int | None = None  # the cross-validation fold these rows are scored on
    estimator: SnacksClassifier | None = None  # the cells' parameters, for kept models


class GridGroup(NamedTuple):
    """One (seed, γ), with the landmark and solver seeds SnacksClassifier would draw, and
    the λ values of its cells when they are only some of the problem's (a search's
    surviving cells; empty: all of them)."""

    seed: int
    gamma: float
    seeds: Seeds
    lams: tuple = ()


def _group_lams(problem, group) -> tuple:
    """The λ values of ``group``'s cells, from large to small."""
    return group.lams or problem.lams


def _n_cells(m_values, problem, groups) -> int:
    """The cells of ``groups`` on ``m_values``: one per (group, m, λ of the group)."""
    return len(m_values) * sum(len(_group_lams(problem, group)) for group in groups)


class _GroupBlocks(NamedTuple):
    """A group's embedding on m_max landmarks and what the columns slice theirs from.

    When the leading block of K_mm is well-conditioned for every m (``nested``),
    ``train`` and ``test`` are the embeddings Z = K_nm L⁻ᵀ on all the landmarks, whose
    first k columns are the embedding on the first k landmarks; otherwise they are the
    kernel blocks K_nm and K_tm.  ``held`` is the early-stopping split of the training
    rows (rows trained on, rows held out), or None; with it, ``train``'s rows are in the
    order of the two parts, one after the other.
    """

    embedding: NystromEmbedding
    nested: bool
    train: np.ndarray
    test: np.ndarray
    seconds: float
    held: tuple | None


def robustness_grid(
    X: ArrayLike | sp.spmatrix, y: ArrayLike, X_test: ArrayLike | sp.spmatrix | None = None,
    y_test: ArrayLike | None = None, *, m: int | Sequence[int] = 100,
    lam: float | Sequence[float] = PAPER_LAMBDAS,
    gamma: float | str | Sequence[float | str] = "scale", seeds: int | Sequence[int] = (0,),
    estimator: SnacksClassifier | None = None, cv: int | object | None = None,
    schedule: GridSchedule | None = None, resources: Resources | None = None,
) -> pd.DataFrame:
    """Train and test a Nyström kernel SVM on every cell of an (m, λ) or (γ, λ) grid.

    Each cell minimises the Snacks paper's F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖²
    on the embedding z of its m landmarks with kernel parameter γ, once per seed; the grid
    is the product of ``m``, ``gamma``, ``lam`` and ``seeds``, and everything else is
    ``estimator``'s (see the module docstring for how cells share work).  With
    ``GridSchedule(warm_start=False)`` a cell is ``estimator``'s own fit with that m, γ, λ
    and ``random_state=seed``.

    Parameters
    ----------
    X, y : data (dense or CSR) and labels (two or more classes: one-vs-rest)
        The training part when ``X_test, y_test`` are given; otherwise a stratified
        ``schedule.test_size`` share is held out for testing.
    m, lam, gamma, seeds : value or sequence
        The axes: m in [1, n_train], λ > 0 (C = 1/(2nλ) reported), γ > 0 or 'scale'/'auto'.
    estimator : SnacksClassifier or None
        The kernel, solver (an embedded one: :data:`snacks_core.solvers.EMBEDDED_SOLVERS`),
        budget, tolerance, early stopping, class weights, landmark sampling and solver
        options of every cell (default: ``SnacksClassifier()``'s); its ``n_components``,
        ``lam``, ``gamma`` and ``random_state`` are replaced by the grid's.
    cv : int, cross-validation generator, iterable or None
        Score each cell by cross-validation on the training part instead of on the test
        part (an integer is stratified k-fold; :func:`cv_splits`): each row is one fold
        (column ``fold``) whose ``test_*`` columns are measured on the fold's held-out rows;
        ``attrs['chosen']`` is the cell with the lowest mean error, refitted on the whole
        training part with the first seed and scored once on the test part.
    schedule : GridSchedule or None
        Warm starts, the test share and what rows keep (default ``GridSchedule()``).
    resources : Resources or None
        Precision ('float32', 'float64' or 'auto': :func:`plan_grid`), parallel columns
        (``n_jobs``), ``backend`` ('threads', 'loky' or 'dask', with ``client``),
        ``progress(done, total, row)`` once per finished cell and ``should_stop()`` polled
        between columns (True returns the finished cells with ``attrs['stopped']``).
        Default: the estimator's ``dtype`` and ``n_jobs``, on threads.

    Returns
    -------
    pandas.DataFrame
        One row per cell and seed (and fold), columns :data:`GRID_COLUMNS` (and ``fold``,
        ``test_scores``, ``model`` when asked for), sorted by seed, γ, m and λ.
        ``embedding_time`` is the cell's share of its group's and column's embedding work;
        ``training_time`` its solve.  ``attrs``: ``plan`` (:class:`GridPlan` as a dict),
        ``stopped``, ``wall_time`` and, with ``cv``, ``chosen``.

    Raises
    ------
    ValueError
        For an empty grid, a value out of range, bad data or labels, an unknown kernel,
        solver or backend, or a grid too large for memory.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from snacks_core.model.sweeps import robustness_grid
    >>> X, y = make_moons(400, noise=0.2, random_state=0)
    >>> table = robustness_grid(X, y, m=[10, 40], lam=[1e-2, 1e-3], gamma=2.0, seeds=[0])
    >>> table[["m", "lam"]].values.tolist(), bool((table["test_error"] < 0.5).all())
    ([[10.0, 0.001], [10.0, 0.01], [40.0, 0.001], [40.0, 0.01]], True)
    """
    started = time.perf_counter()
    estimator = SnacksClassifier() if estimator is None else estimator
    schedule = GridSchedule() if schedule is None else schedule
    resources = estimator.fit_specs().resources if resources is None else resources
    seed_values = _check_seeds(seeds)
    X_train, y_train, X_test, y_test = _check_data(X, y, X_test, y_test, schedule.test_size,
                                                   seed_values[0])
    splits = None if cv is None else cv_splits(cv, X_train, y_train)
    n_fit = X_train.shape[0] if splits is None else min(len(t) for t, _ in splits)
    problem = grid_problem(estimator, schedule)
    m_values, lams, gammas = _check_grid(m, lam, gamma, problem.kernel, X_train, n_fit)
    if resources.backend not in BACKENDS:
        raise ValueError(f"unknown backend {resources.backend!r}; choose one of {BACKENDS}.")
    groups = [GridGroup(seed, g, draw_seeds(seed)) for seed in seed_values for g in gammas]
    problem = problem._replace(lams=lams)
    if splits is None:
        rows, plan, stopped = run_grid(X_train, X_test, m_values,
                                       with_labels(problem, y_train, y_test), groups,
                                       resources)
        columns = GRID_COLUMNS
    else:
        rows, plan, stopped = _run_folds(X_train, y_train, splits, m_values, problem, groups,
                                         resources)
        columns = GRID_COLUMNS + ("fold",)
    columns += ("test_scores",) if schedule.keep_test_scores else ()
    columns += ("model",) if schedule.keep_models else ()
    table = pd.DataFrame(rows, columns=list(columns))
    table = table.sort_values(["seed", "gamma", "m", "lam"], ignore_index=True)
    table.attrs.update(plan=asdict(plan), stopped=stopped,
                       wall_time=time.perf_counter() - started)
    if splits is not None and not table.empty:
        table.attrs["chosen"] = _chosen_cell(table, estimator, resources.dtype,
                                             (X_train, y_train), (X_test, y_test))
    return table


def grid_problem(estimator, schedule):
    """The settings every cell shares, checked (the data and the λ values are added by
    the caller)."""
    if estimator.solver not in EMBEDDED_SOLVERS:
        raise ValueError(f"unknown solver {estimator.solver!r} for a grid; choose one of "
                         f"{tuple(EMBEDDED_SOLVERS)} (grids need a Nyström embedding).")
    check_solver_params(estimator.solver, max_epochs=estimator.max_epochs,
                        tol=tol_value(estimator.tol),
                        solver_options=estimator.solver_options)
    specs = estimator.fit_specs()
    return _Problem(
        kernel=specs.kernel, spec=replace(specs.solver, warm_start=schedule.warm_start),
        sampling=estimator.sampling, dtype="float64", classes=None, y_train=None, y_test=None,
        lams=(), schedule=schedule, estimator=clone(estimator))


def cv_splits(cv, X_train, y_train):
    """The (training rows, validation rows) of each fold: stratified k-fold for an integer,
    any scikit-learn splitter or iterable of splits otherwise.

    For an integer or a splitter without shuffling, these are the folds
    :func:`robustness_grid` scores on (its ``fold`` column indexes them), given its
    training part: with them a row's kept model can be checked on its validation rows.
    """
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool) and cv < 2:
        raise ValueError(f"cv must be at least 2 folds, got {cv!r}.")
    splitter = check_cv(cv, y_train, classifier=True)
    return [(np.asarray(train), np.asarray(test))
            for train, test in splitter.split(X_train, y_train)]


def fold_training_rows(n_rows, folds=None) -> int:
    """The rows a cell or candidate trains on: all ``n_rows``, or with ``folds``-fold
    cross-validation the smallest fold's training part."""
    return n_rows - (-(-n_rows // folds) if folds else 0)


def with_labels(problem, y_train, y_test):
    """The problem for training labels ``y_train`` and test labels ``y_test`` (refused
    when the training rows hold one class: a fold of a small class)."""
    classes = np.unique(y_train)
    if classes.shape[0] < 2:
        raise ValueError("A fold's training rows hold only one class: use fewer folds, or "
                         "a stratified splitter.")
    return problem._replace(classes=classes, y_train=y_train, y_test=y_test,
                            reference=TrainingLabels(y_train))


def _run_folds(X, y, splits, m_values, problem, groups, resources):
    """The grid on every fold: trained on the fold's training rows, scored on its
    validation rows (the rows' ``test_*`` columns), each row with its ``fold``."""
    rows, plans, stopped = [], [], False
    total = len(splits) * _n_cells(m_values, problem, groups)
    if resources.progress is not None:
        progress = resources.progress
        resources = replace(resources,
                            progress=lambda done, _, row: progress(len(rows) + done, total, row))
    for fold, (train, test) in enumerate(splits):
        fold_problem = with_labels(problem, y[train], y[test])._replace(fold=fold)
        fold_rows, plan, stopped = run_grid(X[train], X[test], m_values, fold_problem, groups,
                                            resources)
        rows.extend(fold_rows)
        plans.append(plan)
        if stopped:
            break
    return rows, plans[0], stopped


def _chosen_cell(table, estimator, dtype, train, test):
    """The cell with the lowest mean cross-validated error (ties: the larger λ, then the
    smaller m: the simpler model), refitted on all the ``train`` rows with the first seed
    and scored once on the ``test`` rows."""
    means = table.groupby(["gamma", "m", "lam"])["test_error"].mean().reset_index()
    means = means.sort_values(["test_error", "lam", "m"], ascending=[True, False, True])
    best = means.iloc[0]
    model = clone(estimator).set_params(
        gamma=float(best["gamma"]), n_components=int(best["m"]), lam=float(best["lam"]), C=None,
        random_state=int(table["seed"].min()),
        dtype=np.float64 if _dtype_name(dtype) == "float64" else np.float32)
    model.fit(*train)
    return {"gamma": float(best["gamma"]), "m": int(best["m"]), "lam": float(best["lam"]),
            "cv_error": float(best["test_error"]),
            "test_error": error_rate(test[1], model.predict(test[0]))}


def run_grid(X_train, X_test, m_values, problem, groups, resources):
    """Plan the grid for this machine or cluster and solve its columns wave by wave:
    ``(rows of the finished cells, the GridPlan, whether a stop request ended it)``.

    The engine under :func:`robustness_grid` and :class:`~snacks_core.model.search.SnacksSearchCV`
    (one call per fold), on data already checked: ``problem`` from :func:`grid_problem`
    with its labels (:func:`with_labels`), ``groups`` the (seed, γ) :class:`GridGroup`
    values.
    """
    dask_client = owned_client = None
    limits = {"n_jobs": (effective_n_threads() if resources.n_jobs is None
                         else effective_n_jobs(resources.n_jobs))}
    if resources.backend == "dask":
        dask_client, owned = current_client(resources.client, "backend='dask'")
        owned_client = dask_client if owned else None
        threads = list(dask_client.nthreads().values()) or [1]
        memory = [w.get("memory_limit") or 0
                  for w in dask_client.scheduler_info()["workers"].values()]
        limits = {"n_jobs": sum(threads), "threads_per_worker": max(threads),
                  "memory_limit": min(memory) if memory and min(memory) > 0 else None}
    try:
        plan = plan_grid(X_train.shape[0], X_test.shape[0], m_values,
                         n_lams=max(len(_group_lams(problem, g)) for g in groups),
                         n_groups=len(groups),
                         dtype=_dtype_name(resources.dtype), backend=resources.backend,
                         **limits)
        for note in plan.notes:
            warnings.warn(note, UserWarning, stacklevel=3)
        problem = problem._replace(dtype=plan.dtype)
        waves = [groups[i:i + plan.groups_per_wave]
                 for i in range(0, len(groups), plan.groups_per_wave)]
        if resources.backend == "dask":
            columns = _iter_dask(dask_client, waves, m_values, X_train, X_test, problem)
        else:
            columns = _iter_local(waves, m_values, X_train, X_test, problem, plan.n_jobs,
                                  resources.backend)
        rows, stopped = _collect(columns, _n_cells(m_values, problem, groups),
                                 resources.progress,
                                 resources.should_stop)
    finally:
        if owned_client is not None:
            owned_client.close()
    return rows, plan, stopped


def _dtype_name(dtype):
    """'auto', or the name of a float dtype given as a string or a numpy dtype."""
    return dtype if isinstance(dtype, str) else np.dtype(dtype).name


def _collect(columns, total, progress, should_stop):
    """Rows of the finished columns, reporting each cell; stops when asked to."""
    rows = []
    stopped = bool(should_stop is not None and should_stop())
    if stopped:
        columns.close()
        return rows, stopped
    try:
        for column_rows in columns:
            for row in column_rows:
                rows.append(row)
                if progress is not None:
                    progress(len(rows), total, row)
            if should_stop is not None and should_stop():
                stopped = True
                break
    finally:
        columns.close()
    return rows, stopped


def _check_seeds(seeds):
    """Distinct seeds, sorted."""
    values = _as_list(seeds, "seeds")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"seeds must be integers >= 0, got {value!r}.")
    return sorted({int(v) for v in values})


def _check_data(X, y, X_test, y_test, test_size, split_seed):
    """Training and test parts, validated; split off a test part when none is given."""
    X = check_data(X)
    y = _check_labels(y, X.shape[0], "y")
    classes = np.unique(y)
    if classes.shape[0] < 2:
        raise ValueError(f"y has only one class ({y[0]}); a classifier needs at least 2 "
                         "classes.")
    if X_test is None and y_test is None:
        X, X_test, y, y_test = train_test_split(X, y, test_size=test_size, stratify=y,
                                                random_state=split_seed)
        return X, y, X_test, y_test
    if X_test is None or y_test is None:
        raise ValueError("Give both X_test and y_test, or neither (a test part is then "
                         "split off).")
    X_test = check_data(X_test, name="X_test")
    if X_test.shape[1] != X.shape[1]:
        raise ValueError(f"X_test has {X_test.shape[1]} features but X has {X.shape[1]}.")
    y_test = _check_labels(y_test, X_test.shape[0], "y_test")
    unseen = np.setdiff1d(np.unique(y_test), classes)
    if unseen.size:
        raise ValueError(f"y_test has labels that y has not: {unseen[:5].tolist()}.")
    return X, y, X_test, y_test


def _check_labels(y, n_rows, name):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"{name} must be 1-D with one label per row ({n_rows}), got shape "
                         f"{y.shape}.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or infinite labels.")
    return y


def _as_list(values, name):
    if isinstance(values, (str, numbers.Number)):
        return [values]
    values = list(values)
    if not values:
        raise ValueError(f"The grid is empty: give at least one value of {name}.")
    return values


def _check_grid(m, lam, gamma, kernel, X_train, n_fit):
    """Sorted, distinct grid values: m ascending, λ descending (the warm-start order);
    ``n_fit`` is the fewest rows a cell trains on (the smallest fold)."""
    m_values = _as_list(m, "m")
    for value in m_values:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"m (landmarks) must be integers >= 1, got {value!r}.")
    if max(m_values) > n_fit:
        raise ValueError(f"m = {max(m_values)} is more landmarks than the {n_fit} training "
                         f"rows; use m <= {n_fit}.")
    lams = tuple(sorted({check_lam(value) for value in _as_list(lam, "lam (λ)")},
                        reverse=True))
    gammas = []
    for value in _as_list(gamma, "gamma (γ)"):
        kernel = replace(kernel, gamma=value).check()
        gammas.append(kernel.resolved(X_train).gamma)
    return sorted({int(v) for v in m_values}), lams, sorted(set(gammas))


def _group_blocks(X_train, X_test, m_max, group, problem, n_jobs=1):
    """The engine's embedding stage for a group (m_max landmarks) and its embeddings (or
    kernel blocks), on ``n_jobs`` threads with one BLAS thread each (the result does not
    depend on ``n_jobs``).

    Cholesky nesting: with K_mm = L Lᵀ on the m_max landmarks, the leading k × k block of
    L is the Cholesky factor of the first k landmarks' K_kk, and so the first k columns of
    Z = K_nm L⁻ᵀ are the embedding :class:`NystromEmbedding` gives on those k landmarks
    (it uses the same factor whenever it keeps every eigenvalue).  It does for every k as
    soon as it does for m_max: by Cauchy's interlacing theorem a leading block's extreme
    eigenvalues lie between K_mm's, so its condition number is no larger.  One embedding
    then serves the whole column of landmark counts.
    """
    start = time.perf_counter()
    kernel = replace(problem.kernel, gamma=group.gamma)
    labels = class_labels(_targets(problem))
    with threadpool_limits(limits=1, user_api="blas"):
        embedding = fit_embedding(X_train, labels, kernel, n_components=m_max,
                                  sampling=problem.sampling, dtype=problem.dtype,
                                  n_jobs=n_jobs, seed=group.seeds.embedding)
        held = problem.spec.held_out_rows(labels, group.seeds.solver,
                                          problem.classes.shape[0])
        if held is not None:
            # The rows trained on first, then the held-out rows: each column's two parts
            # are then views of one embedding.
            X_train = X_train[np.concatenate(held)]
        whole = EmbeddingPrefix(embedding, embedding.landmarks_.shape[0])
        train, test = (whole.whole_block(rows, n_jobs) for rows in (X_train, X_test))
    return _GroupBlocks(embedding, embedding.triangular_, train, test,
                         time.perf_counter() - start, held)


def _solve_column(blocks, group, m, n_m, problem, limit_blas=True, workers=1):
    """Every λ of one (group, m), from large to small λ; returns the column's rows (``n_m``:
    the m values of the group, which share its kernel blocks' time; ``workers``: threads
    solving a cell's one-vs-rest columns at once).

    ``limit_blas=False`` when the caller already holds one BLAS thread for the process
    (threadpoolctl's limits are process-wide: columns on threads must not set and reset
    them one after the other)."""
    with threadpool_limits(limits=1, user_api="blas") if limit_blas else nullcontext():
        start = time.perf_counter()
        prefix = EmbeddingPrefix.of(blocks.embedding, m, problem.dtype)
        Z_all = prefix.from_block(blocks.train)
        test = TestRows(prefix.from_block(blocks.test), problem.y_test)
        lams = _group_lams(problem, group)
        embedding_time = ((time.perf_counter() - start) / len(lams)
                          + blocks.seconds / (n_m * len(lams)))
        column = _ColumnRows(problem, blocks.held, Z_all)
        coefs, table_rows = None, []
        for lam in lams:
            warm = problem.spec.warm_options() is not None and coefs is not None
            start = time.perf_counter()
            results = train_columns(
                replace(problem.spec, lam=lam), column.Z, column.targets,
                seed=group.seeds.solver, sample_weight=column.weight, held=column.held,
                w0=coefs if warm else None, workers=workers)
            training_time = time.perf_counter() - start
            coefs = [result.coef for result in results]
            model = cell_model(problem.estimator, prefix, results, CellFacts(
                classes=problem.classes, gamma=group.gamma, seed=group.seed, lam=lam,
                m=m, n_train=Z_all.shape[0],
                measures=(column.measures(np.vstack(coefs), lam)
                          if problem.schedule.measure_training else (np.nan, np.nan)),
                times=(embedding_time, training_time)))
            row = _cell_row(model, m, results, warm, test, problem)
            keep_models = problem.schedule.keep_models
            if keep_models:
                row["model"] = model if keep_models is True or keep_models(row) else None
            table_rows.append(row)
    return table_rows


def _targets(problem):
    """The training rows' targets of a grid's cells: each cell is a fit on the embedding in
    one process (one-vs-one as :func:`~snacks_core.model.engine.one_vs_one_chosen` says,
    as :func:`~snacks_core.model.estimator.cell_model` resolves it)."""
    return binary_targets(problem.y_train, problem.classes, one_vs_one_chosen(
        problem.estimator.multiclass, problem.classes.shape[0], problem.y_train.shape[0]))


class TestRows(NamedTuple):
    """The rows a grid scores its cells on: their embedding on a column's landmarks and
    their labels."""

    Z: np.ndarray
    y: np.ndarray


class _ColumnRows:
    """A column's training rows: the embedding ``Z_all`` of every training row (those
    trained on first, then those held out for early stopping), cut into the rows trained
    on and the held-out ones, with their targets and weights."""

    def __init__(self, problem, held_rows, Z_all):
        spec = problem.spec
        targets = _targets(problem)
        weight = hinge_weights(spec.class_weight, problem.y_train)
        order = slice(None) if held_rows is None else np.concatenate(held_rows)
        self.all_targets = np.vstack([t[order] for t in targets])
        self.all_weight = None if weight is None else weight[order]
        self.Z_all = Z_all
        self.targets, held_targets, self.weight = cut_training_rows(targets, weight, held_rows)
        self.Z, self.held = Z_all, None
        if held_rows is not None:
            n_fit = held_rows[0].shape[0]
            self.Z, self.held = Z_all[:n_fit], (Z_all[n_fit:], held_targets)

    def measures(self, coef, lam):
        """``(train_error, objective)`` of weights ``coef`` on every training row (those
        held out included), as a fit measures its own."""
        wrong, hinge = score_embedded_rows(self.Z_all, coef, self.all_targets,
                                           self.all_weight)
        return training_measures(wrong, hinge, self.Z_all.shape[0], coef, lam)


def _cell_row(model, m, results, warm, test, problem):
    """A cell's table row, from its model (:func:`cell_model`) and its ``test`` rows."""
    test_scores = model.class_scores(decision_values(test.Z, model.coef_))
    scores = classification_scores(problem.reference, test.y,
                                   labels_from_scores(test_scores, model.classes_),
                                   model.classes_)
    row = {
        "seed": model.random_state, "gamma": model.gamma, "m": m, "lam": model.lam_,
        "C": model.C_, "n_components": model.coef_.shape[1],
        "train_error": model.train_error_,
        "test_error": scores["test_error"], "f1": scores["f1"],
        "objective": model.train_objective_,
        "embedding_time": model.embedding_time_, "training_time": model.training_time_,
        "iterations": model.n_iter_,
        "epochs": float(max(r.n_epochs for r in results)),
        "stop_reason": ",".join(dict.fromkeys(model.stop_reasons_)),
        "warm_start": warm,
    }
    if problem.fold is not None:
        row["fold"] = problem.fold
    if problem.schedule.keep_test_scores:
        row["test_scores"] = test_scores[:, 0] if test_scores.shape[1] == 1 else test_scores
    return row


def _wave_columns(wave, m_values):
    """(group index, m) of a wave, largest m first: long columns start early."""
    return sorted(((g, m) for g in range(len(wave)) for m in m_values),
                  key=lambda column: (-column[1], column[0]))


def _iter_local(waves, m_values, X_train, X_test, problem, n_jobs, backend):
    """Rows of each finished column, columns solved by joblib on threads (one BLAS thread
    for the process meanwhile) or in worker processes."""
    threads = backend == "threads"
    with (threadpool_limits(limits=1, user_api="blas") if threads else nullcontext(),
          warnings.catch_warnings(),
          Parallel(n_jobs=n_jobs, backend="threading" if threads else "loky",
                   return_as="generator_unordered") as pool):
        # joblib warns about the columns a stop request cancels or discards.
        warnings.filterwarnings("ignore", message=r".*tasks? (which|that|have)",
                                category=UserWarning, module="joblib")
        for wave in waves:
            blocks = [_group_blocks(X_train, X_test, m_values[-1], group, problem, n_jobs)
                      for group in wave]
            # On threads, each column polls the caller's stop check (snacks_core.core.cancellation).
            solve = carry(_solve_column) if threads else _solve_column
            columns = _wave_columns(wave, m_values)
            # Fewer columns than threads (a search's last rounds, one γ and one m): the
            # threads left over solve the cells' one-vs-rest columns side by side.
            workers = max(1, n_jobs // len(columns)) if threads else 1
            results = pool(delayed(solve)(blocks[g], wave[g], m, len(m_values),
                                          problem, not threads, workers)
                           for g, m in columns)
            try:
                yield from results
            finally:
                results.close()


def _iter_dask(client, waves, m_values, X_train, X_test, problem):
    """Rows of each finished column, kernel blocks and columns computed on a Dask cluster."""
    from distributed import as_completed

    # Unique keys: a content-hashed key shared with an earlier grid's data can be
    # released by that grid while this one still needs it.
    data = client.scatter([X_train, X_test, problem], hash=False)
    for wave in waves:
        blocks = [client.submit(_group_blocks, data[0], data[1], m_values[-1], group, data[2],
                                pure=False)
                  for group in wave]
        columns = [client.submit(_solve_column, blocks[g], wave[g], m, len(m_values),
                                 data[2], pure=False)
                   for g, m in _wave_columns(wave, m_values)]
        try:
            for future in as_completed(columns):
                yield future.result()
        finally:
            client.cancel(columns + blocks)


def summarize_grid(table, rows="m", columns="lam", value="test_error"):
    """Mean and spread over seeds of ``value`` on a rows × columns grid (for heatmaps).

    Parameters
    ----------
    table : pandas.DataFrame
        A :func:`robustness_grid` table.
    rows, columns : str, default 'm' and 'lam'
        Grid axes ('m', 'gamma' or 'lam').
    value : str, default='test_error'
        The column to summarise.

    Returns
    -------
    row_values, column_values : ndarray
        Sorted axis values.
    mean, std, seconds : ndarray of shape (len(row_values), len(column_values))
        Mean and standard deviation of ``value`` over seeds (and any other axis), and
        mean embedding + training seconds per cell; NaN where no cell finished.
    """
    row_values = np.sort(table[rows].unique())
    column_values = np.sort(table[columns].unique())
    grouped = table.assign(seconds=table["embedding_time"] + table["training_time"]).groupby(
        [rows, columns])
    stats = grouped.agg(mean=(value, "mean"), std=(value, lambda v: float(np.std(v))),
                        seconds=("seconds", "mean"))
    index = pd.MultiIndex.from_product([row_values, column_values])
    stats = stats.reindex(index)
    shape = (row_values.shape[0], column_values.shape[0])
    return (row_values, column_values, stats["mean"].to_numpy().reshape(shape),
            stats["std"].to_numpy().reshape(shape), stats["seconds"].to_numpy().reshape(shape))
