"""SnacksClassifier: Nyström embedding + a primal SVM solver, with the scikit-learn API."""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from numbers import Integral, Real
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import DTypeLike
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from snacks_core.core.threads import effective_n_threads
from snacks_core.core.validation import (
    check_classifier_data,
    check_sample_weight,
    explain_non_numeric,
)
from snacks_core.distributed import is_dask_collection
from snacks_core.kernels.functions import KERNEL_PARAM_CONSTRAINTS
from snacks_core.kernels.landmarks import SAMPLINGS
from snacks_core.kernels.operators import build_operator
from snacks_core.model.defaults import (
    DEFAULT_N_COMPONENTS,
    default_fit_m,
    default_lam,
    default_m,
    grows_by_held_out,
    grows_by_rank,
)
from snacks_core.model.engine import (
    binary_targets,
    class_labels,
    class_scores,
    cut_training_rows,
    draw_seeds,
    embedded_row_blocks,
    fit_embedding,
    hinge_weights,
    is_one_vs_one,
    labels_from_scores,
    n_classes_of_pairs,
    one_vs_one_chosen,
    predicted_class_margins,
    row_blocks,
    score_embedded_rows,
    stack_histories,
    train_columns,
    training_measures,
)
from snacks_core.model.landmark_growth import LandmarkGrowth, path_table, rank_grown_m_of_rows
from snacks_core.model.small_sets import choose_C, chooses_C
from snacks_core.model.specs import FitSpecs, Kernel, Resources, SolverSpec, tol_value
from snacks_core.solvers import REGISTRY, admm, check_solver_params
from snacks_core.solvers.objective import C_to_lam, decision_values, lam_to_C
from snacks_core.solvers.storage import (
    STORAGES,
    columns_state_bytes,
    embed_to_store,
    plan_storage,
)

# Rows of X embedded at once into an in-memory embedding, when they are a subset of X or a
# progress line follows them.
_EMBED_BLOCK_ROWS = 2**17


class SnacksClassifier(ClassifierMixin, BaseEstimator):
    """Kernel SVM trained on a Nyström embedding (Snacks, Tanji et al., ECC 2023).

    The embedding z(x) = Λ_k^{−1/2} U_kᵀ k_m(x) on m landmarks turns the kernel SVM into
    the primal problem

        F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²,

    LIBLINEAR/LIBSVM's problem with C = 1/(2nλ); more than two classes are solved
    one-vs-rest.  The embedded solvers ('snacks', 'pegasos', 'liblinear',
    'smoothed_newton') minimise F; 'libsvm' solves the exact kernel SVM (no Nyström, with
    an intercept); 'admm' solves the dual kernel SVM with an intercept on one factorised
    operator K̃ + βI (:mod:`snacks_core.solvers.admm`).  Each solver's own options and
    their constraints are declared in :data:`snacks_core.solvers.REGISTRY`.

    Parameters
    ----------
    kernel : {'rbf', 'laplacian', 'polynomial', 'linear'}, default='rbf'
    gamma : float, 'scale' or 'auto', default='scale'
        Kernel parameter γ; 'scale' is 1 / (d · Var(X)) as in sklearn's SVC.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant c₀ of the polynomial kernel.
    n_components : int, 'sqrt' or 'auto', default='sqrt'
        Number m of Nyström landmarks (clipped to n with a warning); 'sqrt' is
        :func:`snacks_core.model.defaults.default_fit_m` of the training rows (m = 2√n in
        [50, 500], at least 30 a class for more than two classes; on a small set of more
        than two features every row, up to 500: at most 2,000 rows, or at most 15,000 over
        its one-vs-one problems, :func:`~snacks_core.model.defaults.is_small_set`); beyond
        a small set of more than two classes the embedded solvers double that m, up to
        twice, while its landmarks leave more than 20 % of the kernel's diagonal
        unexplained (``m_unexplained_``), and in memory on many rows in large pairs of
        classes (:func:`~snacks_core.model.defaults.grows_by_held_out`) then grow it as
        'auto' does (``m_path_``); so do two classes beyond 2,000 rows of at least 1,000
        features (words), from 'auto''s start; 'auto'
        starts from :func:`~snacks_core.model.defaults.default_m` (2√n on small sets too)
        and doubles m while the error on held-out rows improves by more than its standard
        error, reusing the landmarks, the embedding's columns and the solution it has, up to
        :data:`~snacks_core.model.defaults.AUTO_M_MAX` landmarks, n and the memory budget
        (:mod:`snacks_core.model.landmark_growth`; ``m_path_`` and ``m_stop_reason_``
        tell the path and why it stopped).  'auto' grows m for the embedded solvers in
        one process; elsewhere (a cluster, 'libsvm', 'admm') it stays where it starts.
    lam : float or 'auto', default='auto'
        Regularisation λ > 0; 'auto' is :func:`snacks_core.model.defaults.default_lam`
        (λ = 0.02/n, i.e. C = 25 on any n), except on a small set
        (:func:`~snacks_core.model.defaults.is_small_set`; each class on at least 3 rows): a
        fit on the Nyström embedding in one process, ``n_components`` not 'auto', chooses C
        from 1, 5 and 25 by a 3-fold cross-validation on its own embedding
        (:mod:`snacks_core.model.small_sets`; ``C_cv_errors_`` holds the errors).
    C : float or None, default=None
        LIBSVM's C = 1/(2nλ) > 0 instead of λ (n the training rows passed to ``fit``); give
        C or a number as ``lam``, not both.
    solver : {'snacks', 'pegasos', 'liblinear', 'smoothed_newton', 'libsvm', 'admm'}, \
            default='snacks'
    sampling : {'balanced', 'uniform', 'leverage', 'kmeans++'}, default='balanced'
        Landmark selection (:mod:`snacks_core.kernels.landmarks`); 'balanced' draws uniformly
        within each class, the same number per class as far as a class's rows allow; the
        Snacks paper samples uniformly ('uniform').
    multiclass : {'auto', 'ovo', 'ovr'}, default='auto'
        How more than two classes are split into two-class problems: one-vs-one ('ovo',
        as LIBSVM and scikit-learn's ``SVC``: a problem per pair of classes on that
        pair's rows, the class with the most votes wins) or one-vs-rest ('ovr': a
        problem per class on every row, the largest score wins).  'auto' is 'ovo' for the
        solvers on the embedding in this process while the pairs' targets, K(K − 1)/2 a
        row, fit :data:`~snacks_core.model.engine.ONE_VS_ONE_MAX_TARGETS` (1 GiB), and
        the embedding is in memory; 'ovr' for the others and on a cluster.
        On the real UCI letter set at m = 1,500 one-vs-one gave 2.4 % test error where
        one-vs-rest gave 3.0 % in about the same time (BENCHMARKS.md, "One-vs-one"): a
        pair's boundary is simpler than a class's against all others, so fewer landmarks
        draw it.
    max_epochs : float, default=50
        Budget of passes over the data (an integer for 'pegasos' and 'liblinear');
        unused by 'libsvm' and 'admm' (whose budget is ``solver_options['max_iter']``).
    tol : float or 'auto', default='auto'
        Stopping tolerance of the solver's own rule; for 'snacks' and 'smoothed_newton'
        the certified relative duality gap (F(w) − F*)/F(w) ≤ tol.  'auto': 1e-3, and
        1e-2 for each one-vs-rest column of 'snacks' on more than two classes (the labels
        are the argmax of the columns' scores; :func:`snacks_core.model.specs.tol_value`).
        Unused by 'libsvm' and 'admm' (``solver_options['tol']``).
    early_stopping : bool or 'auto', default='auto'
        Solvers that support it ('snacks'): hold out ``validation_fraction`` of the
        training rows (stratified) and stop when their error has not improved for
        ``n_iter_no_change`` checks and 1.4 times as many epochs of rows, at most
        :data:`~snacks_core.solvers.snacks.EARLY_STOPPING_PATIENCE_ROWS` (stop reason
        'early_stopping'); the checks come up to four times per epoch
        (:func:`snacks_core.solvers.snacks.rows_between_checks`).
        'auto' turns it on from :data:`snacks_core.model.engine.EARLY_STOPPING_MIN_SAMPLES`
        training rows of two classes (never for more: the one-vs-rest columns are then
        solved to ``tol``, so that their scores compare), except where the fit chooses C
        (``lam``), which trains to ``tol``.  True on more than two classes stops the
        one-vs-one pairs or one-vs-rest columns together, judged on the held-out rows
        misclassified by the multiclass prediction, after rounds of dual coordinate
        ascent of every column (:class:`snacks_core.solvers.snacks.JointEarlyStopping`;
        an embedding on a store, a cluster, the ℓ1 penalty or ``polish=False`` stop each
        column on its own, with a warning): on six real and look-alike sets it cost
        0.1-0.5 points of test error against training to ``tol``, and saved time only
        where it cost most (covtype: +6 points in 0.3x the time; BENCHMARKS.md, "Early
        stopping on many classes").  An ``eval_set`` is only recorded, never used to stop.
    validation_fraction : float in (0, 1), default=0.1
        Share of the training rows held out for early stopping.
    n_iter_no_change : int, default=5
        Held-out checks without improvement, and 1.4 times as many epochs of rows (see
        ``early_stopping``), before early stopping.
    class_weight : dict, 'balanced' or None, default=None
        Weights s_i of the hinge terms by class.
    dtype : {np.float32, np.float64}, default=np.float32
        Precision in which the embedding is computed and stored; the solvers accumulate in
        float64 either way.  float32 changes test errors only by rounding.
    random_state : int, RandomState or None, default=None
        Seeds the landmark selection and the solver (:func:`snacks_core.model.engine.draw_seeds`);
        equal seeds give equal models.
    n_jobs : int or None, default=None
        Threads for the embedding, the checkpoint passes and the one-vs-rest subproblems;
        None uses every core the current limits allow, -1 all cores.
    memory_budget : int, str or None, default=None
        Bytes the embedding may take ("8GB" and "512MiB" are accepted); None is half of the
        memory available to the process.  A larger embedding is stored compactly (float16)
        or on disk and streamed in blocks (:mod:`snacks_core.solvers.storage`), with a warning.
    storage : {'auto', 'memory', 'compact', 'disk'}, default='auto'
        Where the embedding lives during training; 'auto' chooses from ``memory_budget``.
    solver_options : dict or None, default=None
        Extra keyword arguments of the solver (e.g. ``{'omega': 2.0}`` for 'snacks'; for
        'admm' ``representation``, ``beta``, ``hss_options`` and the options of
        :func:`snacks_core.solvers.admm.solve`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    lam_, C_ : float
        The λ the fit solved for and its C = 1/(2nλ).
    embedding_ : NystromEmbedding
        The fitted embedding (for 'libsvm', and 'admm' with the 'dense' or 'hss'
        representation: the exact kernel against the support vectors).
    multiclass_ : {'ovo', 'ovr'}
        The split into two-class problems the fit used ('ovr' for two classes: one problem).
    coef_ : ndarray of shape (1, k) for two classes, (n_classes, k) for one-vs-rest, \
            (n_classes·(n_classes − 1)/2, k) for one-vs-one (the pairs of
            :func:`~snacks_core.model.engine.class_pairs`)
    intercept_ : ndarray of shape (n_problems,)
        Zero for the embedded solvers (the problem has no bias), b for 'libsvm' and 'admm'.
    history_ : dict of ndarrays
        Convergence history, one row per checkpoint; columns ``problem`` (index of the
        one-vs-rest subproblem), iteration, epoch, time, objective, gap, validation_error
        (the error on ``eval_set``; without one, on the rows held out for early stopping;
        NaN when neither is there).
    n_iter_ : int
        Largest number of solver iterations over the subproblems.
    stop_reasons_ : list of str
        Why each subproblem's solver stopped.
    solver_info_ : list of dict
        Each subproblem's solver facts (:attr:`SolverResult.info
        <snacks_core.solvers.base.SolverResult>`): for 'admm' on HSS, the ``compression``
        report of K̃ (memory, ranks, measured relative error, whether the target accuracy
        was reached) and the ``evaluation`` of new rows chosen by the fit.
    embedding_time_, training_time_ : float
        Seconds spent embedding the training data (for 'admm': building and factorising
        K̃ + βI) and solving.
    storage_ : str
        Where the embedding was kept during training ('memory', 'compact' or 'disk').
    m_path_ : dict of ndarrays or None
        For ``n_components='auto'``: each m tried (``m``, the landmarks held), its error
        on the held-out rows (``held_out_error``) and the seconds its step took
        (``seconds``); the last m is the model's.  None otherwise.
    m_unexplained_ : dict or None
        For the default ``n_components='sqrt'`` on more than two classes beyond a small
        set: each m measured → the share of the kernel's diagonal the Nyström embedding on
        its landmarks left unexplained on the landmarks drawn after them; m was doubled
        while it exceeded :data:`~snacks_core.model.defaults.RANK_UNEXPLAINED`
        (:func:`~snacks_core.model.landmark_growth.rank_grown_m`).  None otherwise.
    C_cv_errors_ : dict or None
        For ``lam='auto'`` on a small set: each C tried and its cross-validated error rate
        (``C_`` is the one chosen).  None otherwise.
    m_stop_reason_ : str or None
        For ``n_components='auto'``, and where ``m_unexplained_`` is set: why m stopped
        growing (e.g. 'held-out error stopped improving', 'm reached n', 'memory budget');
        None otherwise.
    train_error_, train_objective_ : float or None
        The returned model's error rate, and its F(w) (averaged over the one-vs-rest
        problems), on every training row (those held out for early stopping included),
        measured at the end of the fit from the embedding it holds in memory (on a
        cluster, the workers'); None where it holds none (the solvers on the data or on a
        kernel operator, an embedding kept compact or on disk).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from snacks_core import SnacksClassifier
    >>> X, y = make_moons(300, noise=0.2, random_state=0)
    >>> model = SnacksClassifier(gamma=2.0, n_components=50, lam=1e-3, random_state=0)
    >>> model.fit(X, y).score(X, y) > 0.9
    True
    >>> model.coef_.shape, model.stop_reasons_
    ((1, 50), ['tol_gap'])
    """

    # Every parameter is checked once, at the start of fit: here (scikit-learn's parameter
    # validation), then against the chosen solver's own constraints (its registry entry:
    # check_solver_params); what neither can express (n_jobs ≠ 0, the memory budget's
    # units) is checked where it is used.
    _parameter_constraints: dict = {
        **KERNEL_PARAM_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         StrOptions({"sqrt", "auto"})],
        "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        # A live view: a solver added to the registry is accepted without touching this.
        "solver": [StrOptions(REGISTRY.keys())],
        "sampling": [StrOptions(set(SAMPLINGS))],
        "multiclass": [StrOptions({"auto", "ovo", "ovr"})],
        "max_epochs": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "dtype": "no_validation",
        "random_state": ["random_state"],
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
        "memory_budget": [Interval(Real, 0, None, closed="neither"), str, None],
        "storage": [StrOptions(set(STORAGES))],
        "solver_options": [dict, None],
    }

    def __init__(self, kernel: str = "rbf", *, gamma: float | str = "scale", degree: int = 3,
                 coef0: float = 1.0, n_components: int | str = DEFAULT_N_COMPONENTS,
                 lam: float | str = "auto", C: float | None = None, solver: str = "snacks",
                 sampling: str = "balanced", multiclass: str = "auto", max_epochs: float = 50,
                 tol: float | str = "auto", class_weight: dict | str | None = None,
                 dtype: DTypeLike = np.float32,
                 random_state: int | np.random.RandomState | None = None,
                 early_stopping: bool | str = "auto", validation_fraction: float = 0.1,
                 n_iter_no_change: int = 5, n_jobs: int | None = None,
                 memory_budget: int | str | None = None, storage: str = "auto",
                 solver_options: dict | None = None):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.n_components = n_components
        self.lam = lam
        self.C = C
        self.solver = solver
        self.sampling = sampling
        self.multiclass = multiclass
        self.max_epochs = max_epochs
        self.tol = tol
        self.class_weight = class_weight
        self.dtype = dtype
        self.random_state = random_state
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.n_jobs = n_jobs
        self.memory_budget = memory_budget
        self.storage = storage
        self.solver_options = solver_options

    def fit(self, X, y, sample_weight=None, eval_set=None, progress=None) -> SnacksClassifier:
        """Fit the model; ``eval_set=(X_val, y_val)`` records a validation error curve.

        ``progress(phase, done, total)``, when given, is called as the embedded solvers'
        long phases advance: ``('embedding', rows, n)`` and ``('training', epochs,
        max_epochs)`` (the command line draws it on stderr).

        X and y may be Dask collections: the fit then runs on the current
        ``distributed.Client``, the rows staying on their workers
        (:func:`snacks_core.distributed.fit.fit_cluster`), and ``predict`` and
        ``decision_function`` on Dask rows return Dask arrays.
        """
        self._validate_params()
        check_solver_params(self.solver, max_epochs=self.max_epochs, tol=tol_value(self.tol),
                            solver_options=self.solver_options)
        self.train_error_ = self.train_objective_ = None
        self.m_path_ = self.m_stop_reason_ = self.C_cv_errors_ = self.m_unexplained_ = None
        if is_dask_collection(X):
            # Dask is optional: its engine is imported only for rows on a cluster.
            from snacks_core.distributed.fit import fit_cluster
            return fit_cluster(self, X, y, sample_weight, eval_set, progress)
        X, y, sample_weight = self._check_training_data(X, y, sample_weight)
        specs = self.specs_for_rows(X.shape[0], progress)
        seeds = draw_seeds(self.random_state)
        self.multiclass_ = self._multiclass(specs.solver.entry.input, X.shape[0])
        targets = binary_targets(y, self.classes_, self._one_vs_one)
        evaluation = self._check_eval_set(eval_set)
        fit_by_input = {"embedding": self._fit_embedded, "data": self._fit_data,
                        "operator": self._fit_operator}
        if self.n_components == "auto" or (specs.solver.entry.input == "embedding"
                                           and self._grows_by_held_out(X, y)):
            fit_by_input["embedding"] = self._fit_growing
        results = fit_by_input[specs.solver.entry.input](X, targets, sample_weight, seeds,
                                                         evaluation, specs)
        self._set_solver_facts(results)
        return self

    def _grows_by_held_out(self, X, y) -> bool:
        """Whether this default fit on X's rows of classes y grows m by the held-out error
        (:func:`~snacks_core.model.defaults.grows_by_held_out`: after the rank rule on more
        than two classes, from 'auto''s start on wide rows of two)."""
        counts = np.unique(y, return_counts=True)[1]
        row_cost = X.nnz / X.shape[0] if sp.issparse(X) else X.shape[1]
        return grows_by_held_out(self.n_components, self.sampling, counts, row_cost,
                                 X.shape[1])

    def _multiclass(self, solver_input, n_rows, cluster=False):
        """The resolved ``multiclass`` of a fit on ``n_rows`` rows with a solver taking
        ``solver_input`` (:func:`~snacks_core.model.engine.one_vs_one_chosen`)."""
        one_vs_one_runs = solver_input == "embedding" and not cluster
        if self.multiclass == "ovo" and not one_vs_one_runs:
            raise ValueError(f"multiclass='ovo' needs a solver on the embedding fitted in "
                             f"this process; solver={self.solver!r}"
                             f"{' on a cluster' if cluster else ''} is one-vs-rest: use "
                             f"multiclass='ovr' or 'auto'.")
        pairs = one_vs_one_runs and one_vs_one_chosen(self.multiclass, len(self.classes_),
                                                      n_rows)
        return "ovo" if pairs else "ovr"

    def _set_solver_facts(self, results):
        """``history_``, ``n_iter_``, ``stop_reasons_`` and ``solver_info_`` from the
        one-vs-rest columns' solver results."""
        self.history_ = stack_histories([r.history for r in results])
        self.n_iter_ = int(max(r.n_iter for r in results))
        self.stop_reasons_ = [r.stop_reason for r in results]
        self.solver_info_ = [r.info for r in results]

    def specs_for_rows(self, n_samples, progress=None) -> FitSpecs:
        """The specs of a fit on ``n_samples`` rows (:meth:`fit_specs` at the λ of
        :meth:`regularization`), setting ``lam_`` and ``C_``."""
        self.lam_ = self.regularization(n_samples)
        self.C_ = lam_to_C(self.lam_, n_samples)
        return self.fit_specs(self.lam_, progress)

    def landmark_count(self, n_samples, n_features, n_classes=2) -> int:
        """The m a fit on ``n_samples`` rows of ``n_features`` and ``n_classes`` classes
        draws: ``n_components``, :func:`snacks_core.model.defaults.default_fit_m` for 'sqrt'
        and, for 'auto', :func:`~snacks_core.model.defaults.default_m`, the m it grows
        from."""
        if self.n_components == "sqrt":
            return default_fit_m(n_samples, n_features, n_classes)
        if self.n_components == "auto":
            return default_m(n_samples, n_features, n_classes)
        return self.n_components

    def growth_start(self, n_samples, n_features, n_classes=2) -> int:
        """The m a growth of m by the held-out error starts from
        (:func:`~snacks_core.model.defaults.grows_by_held_out`): on two classes (wide rows
        at the default 'sqrt', or 'auto') :func:`~snacks_core.model.defaults.default_m`,
        on more :meth:`landmark_count` (which the rank rule grows first at 'sqrt')."""
        if n_classes == 2:
            return default_m(n_samples, n_features)
        return self.landmark_count(n_samples, n_features, n_classes)

    def regularization(self, n_samples) -> float:
        """The λ a fit on ``n_samples`` rows solves for: ``lam``, λ = 1/(2nC) from ``C``, or
        the data-aware default for ``lam='auto'``."""
        if self.C is not None:
            if self.lam != "auto":
                raise ValueError(f"Give C or lam, not both (C={self.C!r}, lam={self.lam!r}): "
                                 "they are the same regularisation, C = 1/(2nλ).")
            return C_to_lam(self.C, n_samples)
        return default_lam(n_samples) if self.lam == "auto" else float(self.lam)

    def fit_specs(self, lam=None, progress=None) -> FitSpecs:
        """The estimator's parameters as the fit engine takes them: its
        :class:`~snacks_core.model.specs.Kernel`, :class:`~snacks_core.model.specs.SolverSpec` (for
        the regularisation ``lam``; None where each grid cell brings its own) and
        :class:`~snacks_core.model.specs.Resources` (with ``progress``)."""
        return FitSpecs(
            Kernel(self.kernel, self.gamma, self.degree, self.coef0),
            SolverSpec(self.solver, lam, max_epochs=self.max_epochs, tol=self.tol,
                       early_stopping=self.early_stopping,
                       validation_fraction=self.validation_fraction,
                       n_iter_no_change=self.n_iter_no_change, class_weight=self.class_weight,
                       options=MappingProxyType(dict(self.solver_options or {}))),
            Resources(dtype=self.dtype, n_jobs=self.n_jobs, memory_budget=self.memory_budget,
                      storage=self.storage, progress=progress))

    def _check_training_data(self, X, y, sample_weight):
        """X and y validated (``classes_`` and ``n_features_in_`` set) and the weights s_i of
        the hinge terms (class weights times sample weights; None when all are 1)."""
        X, y, self.classes_ = check_classifier_data(self, X, y)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X.shape[0])
        sample_weight = hinge_weights(self.class_weight, y, sample_weight)
        if sample_weight is not None and not np.any(sample_weight > 0):
            raise ValueError("All sample weights are zero (after class weights): at least "
                             "one sample needs a positive weight.")
        return X, y, sample_weight

    def _check_eval_set(self, eval_set):
        """``(X_val, its one-vs-rest targets)`` of an ``eval_set``, or None."""
        if eval_set is None:
            return None
        X_val, y_val = eval_set
        with explain_non_numeric("eval_set's X"):
            X_val = validate_data(self, X_val, reset=False, accept_sparse="csr",
                                  dtype=[np.float64, np.float32])
        return X_val, binary_targets(np.asarray(y_val), self.classes_,
                                     self._one_vs_one)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _fit_embedded(self, X, targets, sample_weight, seeds, evaluation, specs):
        """An embedded solver on the Nyström embedding of X, one-vs-rest in threads."""
        spec, resources = specs.solver, specs.resources
        n_jobs = effective_n_threads(resources.n_jobs)
        start = time.perf_counter()
        labels = class_labels(targets)
        self._fit_embedding(X, labels, seeds.embedding, specs)
        # Held out of the training rows: a test set passed as eval_set is recorded, never
        # used to decide when to stop.  The rows trained on are embedded from X block by
        # block, never copied out of it whole.  A fit that chooses C (on an embedding in
        # memory) holds none out for 'auto': its fits train to tol (at its 500 landmarks
        # early stopping cost a 2 % class 0.04 of its F1: BENCHMARKS.md, "Small sets up to
        # 15,000 rows").  The storage is planned for every row, held out or not.
        n_val = 0 if evaluation is None else evaluation[0].shape[0]
        plan = plan_storage(X.shape[0] + n_val, self.embedding_.n_components_,
                            dtype=resources.dtype, memory_budget=resources.memory_budget,
                            storage=resources.storage)
        in_memory = plan.kind == "memory"
        split = (None if in_memory and self.early_stopping == "auto"
                 and self._chooses_C(targets, X.shape[0])
                 else spec.held_out_rows(labels, seeds.solver, self.classes_.shape[0]))
        every_row = (targets, sample_weight)
        targets, held, sample_weight = cut_training_rows(targets, sample_weight, split)
        X_stop = None if split is None else X[split[1]]
        X_val = None if evaluation is None else evaluation[0]
        Z, Z_val, Z_stop = self._embed_for_training(
            X, None if split is None else split[0], (X_val, X_stop), plan, specs)
        self.embedding_time_ = time.perf_counter() - start
        start = time.perf_counter()
        if in_memory and self._chooses_C(targets, X.shape[0]):
            # Training time includes choosing C.
            spec = self._choose_C(spec, Z, targets, sample_weight, seeds.solver, X.shape[0])
        if not isinstance(Z, np.ndarray) and self.multiclass == "auto" and is_one_vs_one(targets):
            # On a store each pair would read every row at each pass: one-vs-rest reads
            # them K times, not K(K − 1)/2.
            self.multiclass_ = "ovr"
            every_row = (_one_vs_rest(every_row[0]), every_row[1])
            targets, held, sample_weight = cut_training_rows(*every_row, split)
            if evaluation is not None:
                evaluation = (evaluation[0], _one_vs_rest(evaluation[1]))
        # One-vs-rest subproblems share Z and run in threads; each gets its share of the
        # threads for its checkpoint passes.  A store read in blocks holds one buffer, so
        # its subproblems run one after the other.
        workers = min(len(targets), n_jobs) if isinstance(Z, np.ndarray) else 1
        try:
            results = train_columns(
                spec, Z, targets, seed=seeds.solver, sample_weight=sample_weight,
                held=None if split is None else (Z_stop, held),
                validation=None if evaluation is None else (Z_val, evaluation[1]),
                workers=workers, n_jobs=max(1, n_jobs // workers),
                progress=resources.progress,
                state_bytes=None if isinstance(Z, np.ndarray)
                else columns_state_bytes(Z, resources.memory_budget))
        finally:
            if not isinstance(Z, np.ndarray):
                Z.close()
        self.training_time_ = time.perf_counter() - start
        self.coef_ = np.vstack([r.coef for r in results])
        self.intercept_ = np.zeros(len(results))
        if isinstance(Z, np.ndarray):
            self._measure_training_rows([Z] if split is None else [Z, Z_stop],
                                        [slice(None)] if split is None else split,
                                        *every_row, spec.lam)
        return results

    def _chooses_C(self, targets, n_samples) -> bool:
        """Whether this fit on ``n_samples`` rows chooses C by cross-validation on the rows
        of ``targets`` (``lam='auto'`` on a small set:
        :func:`~snacks_core.model.small_sets.chooses_C`; not while ``n_components='auto'``
        chooses m)."""
        if self.C is not None or self.lam != "auto" or self.n_components == "auto":
            return False
        counts = np.unique(class_labels(targets), return_counts=True)[1]
        return chooses_C(n_samples, counts.tolist())

    def _choose_C(self, spec, Z, targets, sample_weight, seed, n_samples):
        """``spec`` at the C a cross-validation on Z chooses (``C_``, ``lam_`` and
        ``C_cv_errors_`` set; λ = 1/(2nC) on the ``n_samples`` rows of the fit)."""
        choice = choose_C(spec, Z, targets, seed=seed, sample_weight=sample_weight)
        self.C_, self.lam_ = choice.C, C_to_lam(choice.C, n_samples)
        self.C_cv_errors_ = choice.cv_errors
        return replace(spec, lam=self.lam_)

    def _fit_growing(self, X, targets, sample_weight, seeds, evaluation, specs):
        """``n_components='auto'`` on an embedded solver: m grown from the default rule's
        while the held-out error improves (:mod:`snacks_core.model.landmark_growth`); the
        default 'sqrt' on many rows grows so from the m the rank rule reaches, on wide rows
        of two classes from 'auto''s start (C = 25, not chosen); where growth
        cannot start (that m's embedding does not fit in memory, or is already singular),
        the default fit at that m."""
        start = time.perf_counter()
        growth = LandmarkGrowth(X, targets, sample_weight, seeds, evaluation, specs,
                                sampling=self.sampling, n_classes=self.classes_.shape[0])
        m = min(self.growth_start(*X.shape, self.classes_.shape[0]), growth.cap)
        if self.n_components == "sqrt" and self.classes_.shape[0] > 2:
            # The rank rule's m first; the rule's reason is the held-out path's start.
            m, self.m_unexplained_, _ = growth.rank_grown(m)
        reason = growth.cannot_start(m)
        if reason is not None:
            results = self._fit_embedded(X, targets, sample_weight, seeds, evaluation, specs)
            self.m_path_ = path_table([(self.embedding_.landmarks_.shape[0], np.nan,
                                        time.perf_counter() - start)])
            self.m_stop_reason_ = reason
            return results
        results, steps, self.m_stop_reason_ = growth.grow(m)
        self.m_path_ = path_table(steps)
        self.embedding_, self.storage_ = growth.embedding, "memory"
        self.embedding_time_ = growth.seconds["embedding"]
        self.training_time_ = growth.seconds["training"]
        self.coef_ = np.vstack([r.coef for r in results])
        self.intercept_ = np.zeros(len(results))
        self._measure_training_rows([growth.Z[:growth.n_fit], growth.Z[growth.n_fit:]],
                                    growth.split, targets, sample_weight, specs.solver.lam)
        return results

    def _measure_training_rows(self, parts, rows, targets, sample_weight, lam):
        """``train_error_`` and ``train_objective_`` from the embedded training rows, in
        ``parts`` (the embeddings of X[rows[j]]); ``targets`` and ``sample_weight`` (s_i,
        or None) of all of X."""
        sums = [score_embedded_rows(Z, self.coef_, np.vstack([t[part] for t in targets]),
                                    None if sample_weight is None else sample_weight[part])
                for Z, part in zip(parts, rows, strict=True)]
        self.train_error_, self.train_objective_ = training_measures(
            sum(wrong for wrong, _ in sums), sum(hinge for _, hinge in sums),
            targets[0].shape[0], self.coef_, lam)

    def _embed_for_training(self, X, train, extra, plan, specs):
        """Z = z(X[train]) (all of X when ``train`` is None) in the storage ``plan`` chose
        under the memory budget for these and the ``extra`` rows (an ndarray or a store; a
        store only for a streaming solver), and the embeddings of the ``extra`` rows (each
        an X or None) in memory, float16 unless Z is in memory."""
        resources = specs.resources
        k = self.embedding_.n_components_
        n = X.shape[0] if train is None else train.shape[0]
        self.storage_ = plan.kind
        if plan.kind != "memory" and not specs.solver.entry.streaming:
            streamers = [name for name, entry in REGISTRY.items() if entry.streaming]
            raise ValueError(f"{plan.message} Only solver={' or '.join(map(repr, streamers))} "
                             "streams an embedding from compact or disk storage; use it, fewer "
                             "landmarks or a larger memory_budget.")
        if plan.kind != "memory" or plan.storage_dtype != np.dtype(resources.dtype):
            warnings.warn(plan.message, UserWarning, stacklevel=3)
        # Rows are embedded in the compute precision of the storage.
        self.embedding_.set_params(dtype=np.float32 if plan.kind != "memory"
                                   else plan.storage_dtype)
        self.embedding_.components_ = self.embedding_.components_.astype(
            self.embedding_.dtype, copy=False)

        def embed_in_memory(rows):
            if rows is None:
                return None
            out = None if plan.kind == "memory" else np.empty((rows.shape[0], k), np.float16)
            return self.embedding_.transform(rows, out=out)

        report = None
        if resources.progress is not None:
            report = lambda rows: resources.progress("embedding", rows, n)  # noqa: E731
        if plan.kind == "memory" and report is None and train is None:
            Z = self.embedding_.transform(X)
        elif plan.kind == "memory":
            Z = np.empty((n, k), dtype=plan.storage_dtype)
            for start, stop in row_blocks(n, _EMBED_BLOCK_ROWS):
                rows = X[start:stop] if train is None else X[train[start:stop]]
                self.embedding_.transform(rows, out=Z[start:stop])
                if report is not None:
                    report(stop)
        else:
            Z = embed_to_store(self.embedding_.transform, X, k, kind=plan.kind,
                               storage_dtype=plan.storage_dtype, block_rows=plan.block_rows,
                               progress=report, rows=train)
        return (Z, *(embed_in_memory(rows) for rows in extra))

    def _fit_data(self, X, targets, sample_weight, seeds, evaluation, specs):
        """A solver of the exact kernel problem on the raw rows (LIBSVM), one-vs-rest."""
        spec = specs.solver
        self.embedding_time_ = 0.0
        start = time.perf_counter()
        results = [
            spec.entry.solve(X, target, spec.lam, **specs.kernel.params(),
                             sample_weight=sample_weight,
                             validation=_subproblem_rows(evaluation, k), **spec.options)
            for k, target in enumerate(targets)
        ]
        self.training_time_ = time.perf_counter() - start
        self._set_support_vector_model(X, results, specs.kernel)
        return results

    def _fit_embedding(self, X, labels, seed, specs):
        """Fit ``embedding_`` (the Nyström embedding: landmarks and factor) on X, whose
        rows' classes are ``labels`` (for class-balanced landmarks)."""
        m = self.landmark_count(*X.shape, self.classes_.shape[0])
        kernel = specs.kernel
        if specs.solver.entry.input == "embedding" and grows_by_rank(
                self.n_components, self.sampling, X.shape[0], self.classes_.shape[0], m):
            # γ 'scale' resolved once (a pass over X's values) for the measure and the fit.
            kernel = kernel.resolved(X)
            m, self.m_unexplained_, self.m_stop_reason_ = rank_grown_m_of_rows(
                X, labels, m, seed, self.sampling, specs._replace(kernel=kernel))
        self.embedding_ = fit_embedding(
            X, labels, kernel, n_components=m, sampling=self.sampling,
            dtype=specs.resources.dtype, n_jobs=specs.resources.n_jobs, seed=seed)
        # The embedding's parameters as asked ('scale' stays 'scale'; gamma_ is its value).
        self.embedding_.set_params(gamma=specs.kernel.gamma)

    def _fit_operator(self, X, targets, sample_weight, seeds, evaluation, specs):
        """A solver on one factorised kernel operator K̃ + βI (ADMM), shared by every
        one-vs-rest subproblem.

        The solver options may hold ``representation`` ('hss' by default), ``beta`` and
        ``hss_options`` (for :func:`snacks_core.kernels.operators.build_operator`) and the options
        of the solver.
        """
        spec = specs.solver
        options = dict(spec.options)
        representation = options.pop("representation", "hss")
        operator_options = {name: options.pop(name) for name in ("beta", "hss_options")
                            if name in options}
        start = time.perf_counter()
        if representation == "nystrom":
            self._fit_embedding(X, class_labels(targets), seeds.embedding, specs)
            operator_options.update(embedding=self.embedding_, Z=self.embedding_.transform(X))
        operator = build_operator(
            X, representation=representation, **specs.kernel.params(),
            random_state=seeds.embedding, **operator_options)
        precomputed = admm.precompute(operator)
        self.embedding_time_ = time.perf_counter() - start
        start = time.perf_counter()
        results = [
            spec.entry.solve(operator, target, spec.lam, sample_weight=sample_weight,
                             precomputed=precomputed,
                             validation=_subproblem_rows(evaluation, k), **options)
            for k, target in enumerate(targets)
        ]
        self.training_time_ = time.perf_counter() - start
        self.intercept_ = np.array([r.intercept for r in results], dtype=np.float64)
        if representation == "dense":
            self._set_support_vector_model(X, results, specs.kernel)
            return results
        dual_coefs = np.zeros((len(results), X.shape[0]))
        for k, result in enumerate(results):
            dual_coefs[k, result.support] = result.coef
        if representation == "hss":
            # The exact kernel only where every subproblem chose it (admm.choose_evaluation).
            evaluation = ("exact" if all(r.info["evaluation"] == "exact" for r in results)
                          else "extension")
            self.embedding_ = operator.model(dual_coefs.T, evaluation)
            self.coef_ = np.ascontiguousarray(self.embedding_.weights.T)
            return results
        self.coef_ = np.vstack([operator.primal_weights(c) for c in dual_coefs])
        return results

    def _set_support_vector_model(self, X, results, kernel):
        """coef_ over the union of the subproblems' support vectors, with their kernel map."""
        support = np.unique(np.concatenate([r.support for r in results]))
        self.coef_ = np.zeros((len(results), support.shape[0]))
        for k, result in enumerate(results):
            self.coef_[k, np.searchsorted(support, result.support)] = result.coef
        self.intercept_ = np.array([r.intercept for r in results], dtype=np.float64)
        self.embedding_ = SupportVectorMap(X[support], support, kernel.resolved(X))

    def decision_function(self, X) -> np.ndarray:
        """f(x) = ⟨w, z(x)⟩ + b: shape (n,) for two classes, (n, n_classes) otherwise."""
        check_is_fitted(self, "coef_")
        if is_dask_collection(X):
            from snacks_core.distributed.predict import decision_function_blocks
            return decision_function_blocks(self, X)
        scores = self._by_blocks(X, self.class_scores, len(self.classes_))
        return scores.ravel() if scores.shape[1] == 1 else scores

    @property
    def _one_vs_one(self) -> bool:
        """Whether the fitted model is one-vs-one (models saved or pickled before
        one-vs-one existed are one-vs-rest)."""
        return getattr(self, "multiclass_", "ovr") == "ovo"

    def class_scores(self, decisions) -> np.ndarray:
        """The classes' scores from :meth:`subproblem_decisions`' values
        (:func:`~snacks_core.model.engine.class_scores`: one-vs-one's votes)."""
        return class_scores(decisions, len(self.classes_), self._one_vs_one)

    def margin_values(self, X) -> np.ndarray:
        """Each row's decision value as a margin, shape (n,)
        (:func:`~snacks_core.model.engine.predicted_class_margins`): f(x) for two classes;
        for more, the predicted class's (one-vs-one: its closest pairwise contest)."""
        return self._by_blocks(X, lambda values: predicted_class_margins(
            values, len(self.classes_), self._one_vs_one), 1).ravel()

    def subproblem_decisions(self, X) -> np.ndarray:
        """Each two-class problem's f(x) = ⟨w, z(x)⟩ + b, shape (n, problems): what
        :meth:`decision_function` makes the classes' scores of (for one-vs-rest and two
        classes, the same values)."""
        return self._by_blocks(X, lambda values: values, self.coef_.shape[0])

    def _by_blocks(self, X, finish, width):
        """``finish`` of the problems' decision values of X, block by block of rows (one
        embedded block at a time: one-vs-one's K(K − 1)/2 values of every row are never
        held at once), ``width`` columns."""
        check_is_fitted(self, "coef_")
        with explain_non_numeric("X"):
            X = validate_data(self, X, reset=False, accept_sparse="csr",
                              dtype=[np.float64, np.float32])
        out = np.empty((X.shape[0], 1 if len(self.classes_) == 2 else width))
        for start, stop in embedded_row_blocks(X.shape[0], self.coef_.shape[1]):
            values = decision_values(self.embedding_.transform(X[start:stop]), self.coef_)
            out[start:stop] = finish(values + self.intercept_).reshape(stop - start, -1)
        return out

    def predict(self, X) -> np.ndarray:
        if is_dask_collection(X):
            from snacks_core.distributed.predict import predict_blocks
            check_is_fitted(self, "coef_")
            return predict_blocks(self, X)
        return labels_from_scores(self.decision_function(X), self.classes_)

    @property
    def landmark_indices_(self):
        """Training rows used as landmarks (support vectors for 'libsvm')."""
        check_is_fitted(self, "embedding_")
        return self.embedding_.landmark_indices_



class CellFacts(NamedTuple):
    """What a robustness grid's cell knows of its fit besides its solver results."""

    classes: np.ndarray
    m: int
    gamma: float
    seed: int
    lam: float
    n_train: int
    measures: tuple  # (train_error_, train_objective_) on every training row
    times: tuple  # (embedding_time_, training_time_)


def cell_model(estimator, embedding, results, facts) -> SnacksClassifier:
    """The :class:`SnacksClassifier` a grid cell trained: ``estimator``'s parameters with
    the cell's m, γ, λ and seed, fitted (its ``embedding_`` an
    :class:`~snacks_core.kernels.nystrom.EmbeddingPrefix` of its group's landmarks, the
    columns' solver ``results``).  With cold starts it is that estimator's own fit."""
    model = clone(estimator).set_params(
        n_components=facts.m, gamma=facts.gamma, lam=facts.lam, C=None,
        random_state=facts.seed, dtype=np.dtype(embedding.embedding.dtype).type)
    model.classes_ = facts.classes
    # A grid's cells are fits on the embedding, in this process.
    model.multiclass_ = model._multiclass("embedding", facts.n_train)
    model.n_features_in_ = embedding.landmarks_.shape[1]
    model.embedding_ = embedding
    model.lam_, model.C_ = facts.lam, lam_to_C(facts.lam, facts.n_train)
    model.embedding_time_, model.training_time_ = facts.times
    model.storage_ = "memory"
    model.train_error_, model.train_objective_ = facts.measures
    model.coef_ = np.vstack([r.coef for r in results])
    model.intercept_ = np.zeros(len(results))
    model._set_solver_facts(results)
    return model

def _one_vs_rest(targets):
    """One-vs-rest's targets of the rows whose one-vs-one ``targets`` are given."""
    n_classes = n_classes_of_pairs(len(targets))
    return binary_targets(class_labels(targets), np.arange(n_classes))


def _subproblem_rows(evaluation, k):
    """Subproblem ``k``'s ``(rows, targets)`` of an evaluation set, or None."""
    return None if evaluation is None else (evaluation[0], evaluation[1][k])


class SupportVectorMap:
    """z(x) = (k(sv_j, x))_j: the exact kernel model's feature map on its support vectors
    (``kernel``: a :class:`~snacks_core.model.specs.Kernel` with γ resolved)."""

    def __init__(self, support_vectors, indices, kernel):
        self.landmarks_ = support_vectors
        self.landmark_indices_ = indices
        self.kernel = kernel

    def transform(self, X):
        return self.kernel.matrix(X, self.landmarks_)


def estimator_from_settings(settings: dict, *, solver_options: dict | None = None
                            ) -> SnacksClassifier:
    """A :class:`~snacks_core.SnacksClassifier` from a dict of its parameters.

    Parameters
    ----------
    settings : dict
        Estimator parameters by name (``kernel``, ``gamma``, ``n_components``, ``lam``,
        ``solver``, ``tol``, ``memory_budget``, …); those not given keep the estimator's
        defaults.  Values are checked by ``fit``, as scikit-learn does.
    solver_options : dict, optional
        The estimator's ``solver_options`` (a solver callback, for instance).

    Raises
    ------
    ValueError
        For a name that is no parameter of the estimator, listing those that are.

    Examples
    --------
    >>> estimator_from_settings({"kernel": "linear", "lam": 1e-3}).lam
    0.001
    """
    known = SnacksClassifier().get_params()
    unknown = sorted(set(settings) - set(known) | ({"solver_options"} & set(settings)))
    if unknown:
        raise ValueError(f"unknown model parameters {unknown}; known: "
                         f"{sorted(set(known) - {'solver_options'})}.")
    return SnacksClassifier(**settings, solver_options=solver_options)
