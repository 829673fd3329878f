"""SnacksSearchCV: a cross-validated search over γ, λ (or C), m and the other parameters of
:class:`~snacks_core.SnacksClassifier`, with scikit-learn's GridSearchCV contract.

Each fold's candidates that differ only in γ, λ (or C) and m are scored by one
:mod:`~snacks_core.model.sweeps` grid on the fold, so they share its work as a robustness grid
does: one landmark set and embedding per γ (the embedding for a smaller m is a slice of it,
as Cholesky factors nest), warm starts from the previous λ, and columns solved in parallel.
With ``warm_start=False`` every cell is the estimator's own fit on the fold, so the scores
are those of ``GridSearchCV(SnacksClassifier(...))`` with the same folds and seeds.
Candidates that change anything else (the kernel, the solver, class weights, ...) form
groups of their own; those a grid cannot run (the exact solvers) are fitted one by one.

Two options spend less than a whole grid:

* ``halving=True``: successive halving, as scikit-learn's ``HalvingGridSearchCV``: every
  candidate is scored on a stratified subsample of the rows, ``1/factor`` of them go on to
  ``factor`` times as many rows (each γ's best first, then the next best:
  :func:`_survivors`), until the last round uses them all.
* ``refine=r``: ``r`` rounds of coarse-to-fine refinement around the best candidate, as
  LIBSVM's ``grid.py``: γ and λ (or C) at the geometric midpoints between the best value and
  its neighbours in the grid, the step halving each round.

Both are recorded in ``cv_results_`` (columns ``iter`` and ``n_resources``); the best
candidate is chosen among those scored on every row.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from numbers import Integral
from typing import NamedTuple

import numpy as np
import pandas as pd
from numpy.ma import MaskedArray
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.metrics import check_scoring
from sklearn.model_selection import ParameterGrid, StratifiedKFold, check_cv, train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from snacks_core.core.validation import check_classifier_data
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model.defaults import (
    SEARCH_C_DECADES,
    SEARCH_EPOCHS,
    SEARCH_FOLDS,
    SEARCH_GAMMA_FACTORS,
    SEARCH_M,
    SEARCH_MAX_M,
    SEARCH_MAX_ROWS,
    SEARCH_REFIT_M_FACTOR,
    C_values_around_default,
    gamma_values_around,
)
from snacks_core.model.engine import draw_seeds, labels_from_scores, validation_split
from snacks_core.model.estimator import SnacksClassifier
from snacks_core.model.landmark_growth import rank_grown_m_drawn
from snacks_core.model.specs import Resources
from snacks_core.model.sweeps import (
    BACKENDS,
    GridGroup,
    GridSchedule,
    fold_training_rows,
    grid_problem,
    run_grid,
    with_labels,
)
from snacks_core.solvers import EMBEDDED_SOLVERS

# The fewest rows a halving round scores on: below ~100 validation rows a fold, its errors
# are steps of a point or more, too coarse to rank candidates by.
HALVING_MIN_ROWS = 300

# The parameters one grid shares work across; the others split candidates into groups.
GRID_PARAMS = ("gamma", "lam", "C", "n_components")


class SnacksSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Cross-validated search over a SnacksClassifier's parameters, sharing kernel work.

    Parameters
    ----------
    estimator : SnacksClassifier
        The estimator whose parameters are searched (its others are kept).
    param_grid : dict or list of dicts
        Parameter name → values, as GridSearchCV's; ``'C'`` (LIBSVM's C = 1/(2nλ), n the
        rows a fit trains on) may replace ``'lam'``.
    scoring : str, callable or None, default=None
        A scikit-learn scorer; None is the estimator's ``score`` (accuracy).
    cv : int, cross-validation generator or iterable, default=5
        As GridSearchCV's, but an integer is *shuffled* stratified k-fold (seeded as the
        candidates are): a file in its original order (sorted by label, or by time) gives
        unshuffled folds of different kinds of rows.  Pass ``StratifiedKFold(k)`` for
        GridSearchCV's unshuffled folds.
    refit : bool, default=True
        Refit the best candidate on all the rows as ``best_estimator_``.
    n_jobs : int or None, default=None
        Columns of a grid solved at once (None: every core the limits allow).
    backend : {'threads', 'loky', 'dask'}, default='threads'
        Where each fold's grid columns run (:func:`~snacks_core.model.sweeps.run_grid`):
        threads or processes of this machine, or the workers of the current
        ``distributed.Client`` (each fold's rows are sent to them).  The scores, and so the
        choice, are the same on any backend; candidates no grid can run (the exact
        solvers) and the refit run here.
    warm_start : bool, default=True
        Start each λ from the previous λ's solution (False: every cell a cold fit).
    halving : bool, default=False
        Successive halving over the rows (module docstring).
    factor : int, default=3
        With ``halving``: the share of candidates kept, and the growth of the rows, per
        round.
    refine : int, default=0
        Rounds of coarse-to-fine refinement of γ and λ (or C) around the best candidate.
    random_state : int, RandomState or None, default=None
        Seeds the halving subsamples, and the estimator when its ``random_state`` is None
        (one seed for every candidate, given to ``best_estimator_``).

    Attributes
    ----------
    cv_results_ : dict of ndarrays
        GridSearchCV's keys: ``params``, ``param_<name>`` (masked arrays),
        ``split<k>_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score``, ``mean_fit_time``, ``std_fit_time``, ``mean_score_time``,
        ``std_score_time``; and ``iter``, ``n_resources`` (rows the candidate was scored
        on).  Fit times are each cell's share of its grid's work.
    best_index_, best_params_, best_score_
        The chosen candidate (among those scored on every row), its parameters and mean
        score.
    best_estimator_ : SnacksClassifier
        The chosen candidate refitted on all the rows (with ``refit=True``).
    refit_time_ : float
    n_splits_ : int
    classes_, n_features_in_
        Of the data the search was fitted on.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from snacks_core import SnacksClassifier
    >>> from snacks_core.model.search import SnacksSearchCV
    >>> X, y = make_moons(300, noise=0.25, random_state=0)
    >>> search = SnacksSearchCV(SnacksClassifier(random_state=0),
    ...                         {"gamma": [0.5, 2.0], "lam": [1e-2, 1e-4],
    ...                          "n_components": [20, 40]}, cv=3).fit(X, y)
    >>> len(search.cv_results_["params"]), sorted(search.best_params_)
    (8, ['gamma', 'lam', 'n_components'])
    >>> bool(search.score(X, y) > 0.85)
    True
    """

    _parameter_constraints: dict = {
        "estimator": [SnacksClassifier],
        "param_grid": [dict, list],
        "scoring": [str, callable, None],
        "cv": ["cv_object"],
        "refit": ["boolean"],
        "n_jobs": [Integral, None],
        "backend": [StrOptions(set(BACKENDS))],
        "warm_start": ["boolean"],
        "halving": ["boolean"],
        "factor": [Interval(Integral, 2, None, closed="left")],
        "refine": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, param_grid, *, scoring=None, cv=5, refit=True, n_jobs=None,
                 backend="threads", warm_start=True, halving=False, factor=3, refine=0,
                 random_state=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.cv = cv
        self.refit = refit
        self.n_jobs = n_jobs
        self.backend = backend
        self.warm_start = warm_start
        self.halving = halving
        self.factor = factor
        self.refine = refine
        self.random_state = random_state

    def fit(self, X, y) -> SnacksSearchCV:
        """Score every candidate by cross-validation on X, y and refit the best."""
        self._validate_params()
        X, y, self.classes_ = check_classifier_data(self, X, y)
        candidates = _check_grid(self.param_grid)
        self._seed = _search_seed(self.estimator.random_state, self.random_state)
        self._scorer = None if self.scoring is None else check_scoring(self.estimator,
                                                                         self.scoring)
        splitter = _folds(self.cv, y, self._seed)
        self.n_splits_ = splitter.get_n_splits(X, y)
        records = (self._halving(candidates, X, y, splitter) if self.halving
                   else self._round(candidates, X, y, splitter, 0))
        for round_ in range(self.refine):
            best = _best(records)
            finer = _refined(candidates, best["params"], round_ + 1,
                             {str(r["params"]) for r in records})
            records += self._round(finer, X, y, splitter, records[-1]["iter"] + 1)
        self.cv_results_ = _format_results(records, self.n_splits_)
        self.best_index_ = _best_index(self.cv_results_)
        self.best_params_ = self.cv_results_["params"][self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        if self.refit:
            start = time.perf_counter()
            self.best_estimator_ = self._candidate(self.best_params_, X.shape[0]).fit(X, y)
            self.refit_time_ = time.perf_counter() - start
        del self._scorer
        return self

    def _candidate(self, params, n_rows):
        """The estimator with a candidate's parameters for a fit on ``n_rows`` rows, its λ
        and m resolved (from C, or the data-aware defaults for 'auto')."""
        params = dict(params)
        if "C" in params:
            params["lam"] = "auto"
        elif "lam" in params:
            params["C"] = None
        model = clone(self.estimator).set_params(random_state=self._seed, **params)
        m = model.landmark_count(n_rows, self.n_features_in_, len(self.classes_))
        return model.set_params(n_components=m, lam=model.regularization(n_rows), C=None)

    def _round(self, candidates, X, y, splitter, iteration):
        """One record per candidate: its scores and times on each fold of X, y."""
        splits = list(splitter.split(X, y))
        records = [{"params": p, "iter": iteration, "n_resources": X.shape[0],
                    "scores": [], "fit_times": [], "score_times": []} for p in candidates]
        groups = _groups(candidates, self.estimator)
        for train, test in splits:
            for record, (score, fit_time, score_time) in zip(
                    records, self._score_fold(groups, len(candidates), X, y, train, test),
                    strict=True):
                record["scores"].append(score)
                record["fit_times"].append(fit_time)
                record["score_times"].append(score_time)
        return records

    def _halving(self, candidates, X, y, splitter):
        """Successive halving: rounds on growing stratified subsamples of the rows, the
        first of at least m·folds rows (each fold then trains on (folds − 1)·m rows or more),
        two rows of each class per fold and :data:`HALVING_MIN_ROWS` rows."""
        n_rounds = 1 + int(math.floor(math.log(len(candidates), self.factor) + 1e-9))
        m_max = max(self._candidate(p, X.shape[0]).n_components for p in candidates)
        smallest = max(m_max * self.n_splits_, 2 * self.n_splits_ * len(self.classes_),
                       HALVING_MIN_ROWS)
        while n_rounds > 1 and X.shape[0] // self.factor ** (n_rounds - 1) < smallest:
            n_rounds -= 1
        rng = check_random_state(self.random_state)
        records, alive = [], list(candidates)
        for iteration in range(n_rounds):
            n_rows = X.shape[0] // self.factor ** (n_rounds - 1 - iteration)
            rows = (np.arange(X.shape[0]) if n_rows >= X.shape[0] else
                    train_test_split(np.arange(X.shape[0]), train_size=n_rows, stratify=y,
                                     random_state=rng.randint(2**31 - 1))[0])
            scored = self._round(alive, X[rows], y[rows], splitter, iteration)
            records += scored
            keep = max(1, math.ceil(len(alive) / self.factor))
            order = np.argsort([-np.mean(r["scores"]) for r in scored], kind="stable")
            alive = _survivors([scored[i]["params"] for i in order], keep)
        return records

    def _score_fold(self, groups, n_candidates, X, y, train, test):
        """(score, fit time, score time) of each candidate on one fold (``groups``: the
        candidates grouped by :func:`_groups`)."""
        out = [None] * n_candidates
        for members, base in groups:
            if _shareable(base):
                results = self._grid_fold(members, base, X, y, train, test)
            else:
                results = [self._fit_fold(params, X, y, train, test)
                           for _, params in members]
            for (index, _), result in zip(members, results, strict=True):
                out[index] = result
        return out

    def _grid_fold(self, members, base, X, y, train, test):
        """One grid on the fold for candidates that differ only in :data:`GRID_PARAMS`."""
        X_train, n_fit = X[train], len(train)
        models = [self._candidate(params, n_fit) for _, params in members]
        # γ as the fold's fit would resolve it: 'scale' and 'auto' are one pass over X_train.
        gamma_of = {spec: float(resolve_gamma(spec, X_train))
                    for spec in dict.fromkeys(model.gamma for model in models)}
        cells = [(gamma_of[model.gamma], int(model.n_components), float(model.lam))
                 for model in models]
        schedule = GridSchedule(warm_start=self.warm_start,
                                keep_test_scores=self._scorer is not None,
                                measure_training=False)
        problem = with_labels(grid_problem(base, schedule), y[train], y[test])._replace(
            lams=_descending({c[2] for c in cells}))
        # Each γ solves its own candidates' λ values only: after a round of successive
        # halving the survivors are not a full grid of γ × C.
        groups = [GridGroup(self._seed, g, draw_seeds(self._seed),
                            _descending({c[2] for c in cells if c[0] == g}))
                  for g in sorted({c[0] for c in cells})]
        rows, _, _ = run_grid(X_train, X[test], sorted({c[1] for c in cells}), problem, groups,
                              Resources(dtype=base.dtype, n_jobs=self.n_jobs,
                                        backend=self.backend))
        by_cell = {(r["gamma"], r["m"], r["lam"]): r for r in rows}
        return [self._cell_score(by_cell[cell], problem.classes, X[test], y[test])
                for cell in cells]

    def _cell_score(self, row, classes, X_test, y_test):
        """(score, fit time, score time) of a grid cell on the fold's validation rows."""
        start = time.perf_counter()
        if self._scorer is None:
            score = 1.0 - row["test_error"]
        else:
            score = self._scorer(_CellScores(classes, X_test, row["test_scores"]), X_test,
                                 y_test)
        return (float(score), row["embedding_time"] + row["training_time"],
                time.perf_counter() - start)

    def _fit_fold(self, params, X, y, train, test):
        """(score, fit time, score time) of a candidate fitted alone on the fold."""
        start = time.perf_counter()
        model = self._candidate(params, len(train)).fit(X[train], y[train])
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        score = (model.score(X[test], y[test]) if self._scorer is None
                 else self._scorer(model, X[test], y[test]))
        return float(score), fit_time, time.perf_counter() - start

    def _refitted(self):
        return getattr(self, "best_estimator_", None) is not None

    @available_if(_refitted)
    def predict(self, X):
        """Labels predicted by ``best_estimator_``."""
        return self.best_estimator_.predict(X)

    @available_if(_refitted)
    def decision_function(self, X):
        """Scores of ``best_estimator_``."""
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """The search's scorer (accuracy by default) of ``best_estimator_`` on X, y."""
        check_is_fitted(self, "best_estimator_")
        if self.scoring is None:
            return self.best_estimator_.score(X, y)
        return check_scoring(self.estimator, self.scoring)(self.best_estimator_, X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.input_tags.sparse = True
        return tags



class DefaultSearch(NamedTuple):
    """What :func:`search_around_defaults` found."""

    params: dict  # the chosen gamma (a number; none for the linear kernel), C, n_components
    cv_error: float  # its mean cross-validated error
    results: pd.DataFrame  # per setting and round: gamma, C, m, rows, cv_error, cv_spread
    n_rows: int  # the training rows searched (a stratified subsample above the cap)
    fits: int  # the fits scored (settings × folds, every round)
    m_path: tuple  # (m, its CV error at the ladder's γ and C) in the order scored
    m_stop: str  # why the ladder of m stopped where it did
    ladder: dict  # the γ (none for the linear kernel) and C the ladder of m ran at
    gamma_step: tuple  # (γ one step up, the m it was scored at, its CV error), or ()
    scored_m: int  # the m the choice was scored at (params' is larger past the top)
    # More than two classes: the share of the kernel's diagonal the top's landmarks left
    # unexplained, where the choice gained at the top (else None).
    top_unexplained: float | None = None
    # Where the estimator's default fit grows m by the held-out error (many rows of more
    # than two classes, wide rows of two): (the choice's error, the default fit's, its m,
    # the rows held out) on rows held out of the training rows, the default fit taken
    # where lower; else ().
    defaults_check: tuple = ()


def search_around_defaults(estimator, X, y, *, folds=SEARCH_FOLDS, scoring=None, n_jobs=None,
                           backend="threads", random_state=None,
                           progress=None) -> DefaultSearch:
    """The default search (``snacks search`` without axes, the app's Auto-tune): γ, C and
    m around the data-aware defaults, by shuffled stratified cross-validation.

    On a stratified subsample of at most :data:`~snacks_core.model.defaults.SEARCH_MAX_ROWS`
    rows of X (the rest is never read), every fit of at most
    :data:`~snacks_core.model.defaults.SEARCH_EPOCHS` epochs:

    1. γ at :data:`~snacks_core.model.defaults.SEARCH_GAMMA_FACTORS` × the 'scale' value
       (rounded to 1, 2 or 5 times a power of ten; not for the linear kernel) against C in
       decades around the default C, at m = ``estimator``'s for these rows (at most
       :data:`~snacks_core.model.defaults.SEARCH_M`), with successive halving whose rounds
       pass on the best C of as many γ values as they keep (:func:`_survivors`);
    2. at the γ and C of the last round's largest γ within one standard error of its
       best (:func:`_least_smoothing_tie`), a ladder: the estimator's m for these rows,
       then four times it (at most :data:`~snacks_core.model.defaults.SEARCH_MAX_M` and
       the rows a fold trains on: that m is asked as every searched row, which each fold
       clips to its own, so that its choice refits with the exact kernel; a ladder with
       that top goes there straight), each scored on the same folds as a fit of its own,
       while each rung lowers the CV error.  The ladder's last rung scores the next γ of
       the 1-2-5 steps above too, at the same C: the larger m captures more of a larger
       γ's kernel, and the steps of stage 1's γ leave a gap there (on the UCI letter set
       γ 'scale' is 0.0625, stage 1 has 0.05 and 0.2, and at m = 1,500 γ = 0.1 scored
       3.77 % CV error against 0.05's 3.87 %, 2.60 % test error against 2.97 %).

    The choice is the setting with the lowest CV error among those scored on all the rows
    (the table's last round of stage 1 and the ladder's rungs), so the table printed from
    ``results`` shows no better setting than the one chosen.  On at most 1.5 times as many
    training rows as were searched (the refit's embedding then costs no more than the top
    rung's), a choice scored at the ladder's top, short of every row, that lowered the CV
    error by more than a standard error there is returned with
    :data:`~snacks_core.model.defaults.SEARCH_REFIT_M_FACTOR` times the top's m (at most
    every searched row; ``scored_m`` keeps the top): the ladder was still gaining where
    it stopped, and more landmarks at the same γ and C only draw the same kernel closer
    (:func:`refit_m_note` says so).  On more than two classes, whose refit solves
    K(K − 1)/2 pairs, only where the top's landmarks leave more than
    :data:`~snacks_core.model.defaults.RANK_UNEXPLAINED` of the kernel's diagonal
    unexplained on the next ones drawn (``top_unexplained``), as a default fit's m grows
    (:func:`~snacks_core.model.landmark_growth.rank_grown_m`).

    Where ``estimator``'s own default fit grows m by the held-out error (many rows of more
    than two classes, wide rows of two: :func:`~snacks_core.model.defaults.grows_by_held_out`),
    the choice is checked against that fit on rows held out of all the training rows, each
    fitted on the rest, and the default fit's γ, C and m are returned where it errs less
    (``defaults_check``; :func:`_against_the_default_fit`).

    ``estimator`` gives everything else (kernel, solver, budget, seed); C is LIBSVM's
    C = 1/(2nλ), which carries a choice over to any number of rows.  ``progress(fits,
    rows)`` is called after each fit is scored.  ``n_jobs`` and ``backend`` (the current
    ``distributed.Client``'s workers for 'dask') are :class:`SnacksSearchCV`'s: where the
    cells run, not what they find.
    """
    seed = _search_seed(estimator.random_state, random_state)
    n_training = X.shape[0]
    X_all, y_all = X, y
    X, y = _searched_rows(X, y, seed)
    fold_rows = fold_training_rows(X.shape[0], folds)

    def every_row(k):
        # m of every row a fold trains on, or more, is asked as every searched row: each
        # fold's fit clips it to its own rows, and the refit of a choice with it has every
        # training row a landmark (the exact kernel) rather than two thirds of them.
        return X.shape[0] if k >= fold_rows else k

    m = every_row(estimator.landmark_count(*X.shape, np.unique(y).shape[0]))
    scorer = check_scoring(estimator, scoring)
    fits = []

    def counted(model, X_fold, y_fold):
        # The search calls its scorer once per setting and fold.
        fits.append(X_fold.shape[0])
        if progress is not None:
            progress(len(fits), folds * X_fold.shape[0])
        return scorer(model, X_fold, y_fold)

    def search(grid, n_components, halving, max_epochs):
        found = SnacksSearchCV(clone(estimator).set_params(n_components=n_components,
                                                           max_epochs=max_epochs), grid,
                               scoring=counted, cv=folds, refit=False, halving=halving,
                               n_jobs=n_jobs, backend=backend, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            found.fit(X, y)
        table = pd.DataFrame(found.cv_results_)
        return found, table.assign(m=table.get("param_n_components", n_components))

    grid = {"C": list(C_values_around_default(SEARCH_C_DECADES))}
    if estimator.kernel != "linear":
        grid["gamma"] = gamma_values_around(resolve_gamma("scale", X), SEARCH_GAMMA_FACTORS)
    m_first = every_row(min(m, SEARCH_M))
    epochs = min(estimator.max_epochs, SEARCH_EPOCHS)
    best, results = search(grid, m_first, halving=True, max_epochs=epochs)
    chosen, cv_error = dict(best.best_params_, n_components=m_first), 1.0 - best.best_score_
    # Stage 2, a ladder of larger m, each rung a fit of its own on the same folds, scored
    # only while the last one lowered the CV error, at the γ and C of the largest γ tied
    # with the best (_least_smoothing_tie).
    start, ladder_error = _least_smoothing_tie(best.cv_results_, X.shape[0])
    at_start = {name: [value] for name, value in start.items()}
    m_path = [(m_first, ladder_error)]
    gamma_step = ()
    m_stop = (f"the ladder's top (4× the default m, at most {SEARCH_MAX_M:,}; every row "
              "where a fold trains on fewer)")
    top = every_row(min(4 * m, SEARCH_MAX_M))
    # A top of every row is the exact kernel, which the rungs below it approximate: the
    # ladder goes there straight, so that two of them tied cannot stop it short.
    rungs = sorted(({top} if top == X.shape[0] else {m, top}) - {m_first})
    before_rung = cv_error
    for rung in rungs:
        before_rung = cv_error
        grid = at_start
        up = _gamma_step(start) if rung == rungs[-1] else None
        if up is not None:
            grid = dict(at_start, gamma=[start["gamma"], up])
        found, scored = search(grid, rung, halving=False, max_epochs=epochs)
        results = pd.concat([results, scored], ignore_index=True)
        if 1.0 - found.best_score_ < cv_error:
            chosen = dict(found.best_params_, n_components=rung)
            cv_error = 1.0 - found.best_score_
        if up is not None:
            gamma_step = (up, rung, _cv_error_of(found.cv_results_, dict(start, gamma=up)))
        rung_error = _cv_error_of(found.cv_results_, start)
        m_path.append((rung, rung_error))
        if rung_error >= ladder_error:
            m_stop = f"m = {rung:,} did not lower the CV error"
            break
        ladder_error = rung_error
    scored_m = chosen["n_components"]
    top_unexplained = None
    # The grown refit's embedding, n·(2m)², costs at most the top rung's (two γ on each
    # fold's training and validation rows: 6·n_searched·m²) on up to 1.5× the rows searched.
    if (m_path[-1][0] == top == scored_m < X.shape[0] and n_training <= 1.5 * X.shape[0]
            and before_rung - cv_error > _standard_error(cv_error, X.shape[0])):
        grown = min(SEARCH_REFIT_M_FACTOR * top, X.shape[0])
        if np.unique(y).shape[0] > 2:
            # Many classes refit K(K − 1)/2 pairs: only where the top's landmarks leave the
            # kernel unexplained, as the default fit's m grows (rank_grown_m).
            kernel = clone(estimator).set_params(**chosen).fit_specs().kernel.resolved(X)
            grown, shares, _ = rank_grown_m_drawn(X, y, top, grown, kernel.params(),
                                                  sampling=estimator.sampling, seed=seed)
            top_unexplained = shares.get(top)
        chosen["n_components"] = grown
    defaults_check = ()
    if estimator._grows_by_held_out(X_all, y_all):
        chosen, defaults_check = _against_the_default_fit(estimator, chosen, X_all, y_all,
                                                          seed)
    table = pd.DataFrame({
        "gamma": results.get("param_gamma"), "C": results["param_C"].astype(float),
        "m": results["m"].astype(int), "rows": results["n_resources"],
        "cv_error": 1.0 - results["mean_test_score"].astype(float),
        "cv_spread": results["std_test_score"].astype(float)})
    return DefaultSearch(chosen, cv_error, table, X.shape[0], len(fits), tuple(m_path), m_stop,
                         start, gamma_step, scored_m, top_unexplained, defaults_check)


def _against_the_default_fit(estimator, chosen, X, y, seed):
    """``(params, (the choice's error, the default fit's, its m, rows held out))``: the
    search's ``chosen`` params, or those of ``estimator``'s own default fit where it makes
    fewer errors, both fitted on the training rows X less a stratified share of
    ``validation_fraction`` held out with ``seed`` and scored there.

    Where the default fit grows m by the held-out error
    (:func:`~snacks_core.model.defaults.grows_by_held_out`: many rows of more than two
    classes; wide rows of two), the search's stage 1, at m = 300 on a subsample, ranks
    the smooth kernels first, and its ladder stops at 1,500 landmarks: on the UCI covtype
    set at 80,000 training rows its choice gave 23.13 % test error where the default fit,
    grown to 2,000, gave 20.61 % (BENCHMARKS.md, "m from the held-out error on many
    rows").  The default fit's params are its γ (a number), C and the m it reached."""
    fit, held = validation_split(np.unique(y, return_inverse=True)[1],
                                 estimator.validation_fraction, seed)
    models = [clone(estimator).set_params(random_state=seed, **params).fit(X[fit], y[fit])
              for params in (chosen, {})]
    choice_error, default_error = (float(np.mean(model.predict(X[held]) != y[held]))
                                   for model in models)
    default = models[1]
    m = int(default.embedding_.landmarks_.shape[0])
    check = (choice_error, default_error, m, held.shape[0])
    if not default_fit_taken(check):
        return chosen, check
    params = {"C": float(default.C_), "n_components": m}
    if "gamma" in chosen:
        params["gamma"] = float(default.embedding_.gamma_)
    return params, check


def refit_m_note(scored_m, m, unexplained=None) -> str:
    """Why the default search's choice has ``m`` landmarks where it was scored at
    ``scored_m`` (nothing when they are equal), as the command line and the app say it;
    ``unexplained``: the share of the kernel the top's landmarks left (more than two
    classes)."""
    if m == scored_m:
        return ""
    left = ("" if unexplained is None else
            f" and its landmarks left {100 * unexplained:.0f} % of the kernel's diagonal "
            "unexplained")
    return (f"the choice was scored at the ladder's top, m = {scored_m:,}, where it lowered "
            f"the CV error by more than a standard error{left}: its model takes m = {m:,} "
            "(more landmarks of the same kernel, not scored)")


def default_fit_taken(check) -> bool:
    """Whether the default search returned the estimator's default fit's settings
    (``DefaultSearch.defaults_check``: its error below the choice's)."""
    return bool(check) and check[1] < check[0]


def defaults_check_note(check) -> str:
    """The default search's check against the estimator's default fit
    (``DefaultSearch.defaults_check``) in words, as the command line says it ('' without
    one)."""
    if not check:
        return ""
    choice, default, m, n_held = check
    taken = "the default fit's settings taken" if default_fit_taken(check) else "the choice kept"
    return (f"against the default fit (m = {m:,}, grown by the held-out error) "
            f"on {n_held:,} training rows held out: the choice {100 * choice:.2f} %, the "
            f"default fit {100 * default:.2f} %: {taken}")


def _gamma_step(start):
    """The γ one 1-2-5 step above the ladder's (None for the linear kernel, or at the top
    of :data:`~snacks_core.model.defaults.GAMMA_RANGE`)."""
    if "gamma" not in start:
        return None
    up = gamma_values_around(2.0 * start["gamma"], (1.0,))[0]
    return up if up > start["gamma"] else None


def _least_smoothing_tie(results, n_rows):
    """``(params, CV error)`` of the setting the m ladder starts from: among those
    scored on all ``n_rows`` rows whose CV error is within one standard error of the
    lowest (√(e(1 − e)/n_rows), the binomial error of the best's e), the one of largest γ
    (then of lowest error).

    At a fixed m the landmarks capture less of a larger γ's kernel, whose spectrum decays
    more slowly, so a tie at this m is a win for the larger γ at the ladder's larger m (on
    the UCI magic set γ = 0.02 and 0.1 tied at m = 247, 13.79 and 13.81 % CV error, and at
    m = 988 γ = 0.1 gave 11.4 % test error against 12.6 %: BENCHMARKS.md, 'The search's
    survivors')."""
    full = np.flatnonzero(_on_every_row(results))
    errors = 1.0 - np.asarray(results["mean_test_score"], dtype=float)[full]
    lowest = float(np.nanmin(errors))
    # A score that is no rate (outside [0, 1]) has no binomial error: exact ties only.
    tied = full[errors <= lowest + _standard_error(lowest, n_rows)]
    pick = max(tied, key=lambda i: (results["params"][i].get("gamma", 0.0),
                                    results["mean_test_score"][i]))
    return dict(results["params"][pick]), 1.0 - float(results["mean_test_score"][pick])


def _standard_error(error, n_rows) -> float:
    """√(e(1 − e)/n), the binomial standard error of an error rate e on n rows (0 for a
    score that is no rate, outside [0, 1])."""
    return math.sqrt(max(error * (1.0 - error), 0.0) / n_rows)


def _cv_error_of(results, params) -> float:
    """The CV error of the setting ``params`` in ``cv_results_``."""
    return 1.0 - float(results["mean_test_score"][results["params"].index(params)])


def _survivors(ranked, keep) -> list:
    """The ``keep`` candidates a halving round passes on, from ``ranked`` (best first): the
    best of each γ first, as many γ values as there is room for, then the next best.

    A γ's rank on a subsample is not its rank on all the rows: with fewer rows smoother
    kernels win, so a plain top third of the candidates was often one γ's C values (on
    the UCI magic set the top three of 5,072 rows all had γ ≤ 0.02, where 0.1 wins on all
    15,216: BENCHMARKS.md, 'The search's survivors')."""
    firsts = {}
    for params in ranked:
        firsts.setdefault(params.get("gamma"), params)
    chosen = list(firsts.values())[:keep]
    return chosen + [p for p in ranked if not any(p is c for c in chosen)][:keep - len(chosen)]


def _descending(lams) -> tuple:
    """λ values from large to small: the order a grid's warm starts follow."""
    return tuple(sorted(lams, reverse=True))


def _searched_rows(X, y, seed):
    """All the rows, or a stratified subsample of
    :data:`~snacks_core.model.defaults.SEARCH_MAX_ROWS` of them (in their order)."""
    if X.shape[0] <= SEARCH_MAX_ROWS:
        return X, y
    rows, _ = train_test_split(np.arange(X.shape[0]), train_size=SEARCH_MAX_ROWS, stratify=y,
                               random_state=seed)
    rows.sort()
    return X[rows], y[rows]


def _folds(cv, y, seed):
    """The splitter of ``cv``: an integer is shuffled stratified k-fold, seeded."""
    if isinstance(cv, Integral) and not isinstance(cv, bool):
        return StratifiedKFold(cv, shuffle=True, random_state=seed)
    return check_cv(cv, y, classifier=True)

class _CellScores(ClassifierMixin, BaseEstimator):
    """A grid cell's model as a scorer sees it on the fold's validation rows, whose
    decision values the grid computed: it scores those rows and no others."""

    def __init__(self, classes, X, scores):
        self.classes = classes
        self.X = X
        self.scores = scores

    @property
    def classes_(self):
        return self.classes

    def decision_function(self, X):
        if X is not self.X:
            raise ValueError("A grid cell's model only scores its fold's validation rows.")
        return self.scores

    def predict(self, X):
        return labels_from_scores(self.decision_function(X), self.classes)


def _check_grid(param_grid):
    """The candidates of ``param_grid`` (ParameterGrid's order), their names checked."""
    known = set(SnacksClassifier().get_params())
    grids = [param_grid] if isinstance(param_grid, dict) else list(param_grid)
    for grid in grids:
        unknown = sorted(set(grid) - known)
        if unknown:
            raise ValueError(f"param_grid names {unknown}, not parameters of "
                             f"SnacksClassifier; known: {sorted(known)}.")
        if "C" in grid and "lam" in grid:
            raise ValueError("param_grid sets both 'C' and 'lam': they are the same "
                             "regularisation (C = 1/(2nλ)); search one of them.")
    candidates = list(ParameterGrid(param_grid))
    if not candidates:
        raise ValueError("param_grid is empty: give at least one value per parameter.")
    return candidates


def _search_seed(estimator_seed, search_seed):
    """One integer seed for every candidate: the estimator's, or drawn once."""
    if isinstance(estimator_seed, Integral):
        return int(estimator_seed)
    rng = check_random_state(search_seed if estimator_seed is None else estimator_seed)
    return int(rng.randint(2**31 - 1))


def _groups(candidates, estimator):
    """``[(index, params), ...]`` per group of candidates that differ only in
    :data:`GRID_PARAMS`, with the estimator of the group's other parameters."""
    groups = {}
    for index, params in enumerate(candidates):
        others = {k: v for k, v in params.items() if k not in GRID_PARAMS}
        key = repr(sorted(others.items(), key=lambda item: item[0]))
        groups.setdefault(key, ([], clone(estimator).set_params(**others)))[0].append(
            (index, params))
    return list(groups.values())


def _shareable(estimator):
    """Whether a grid can score this estimator's candidates (an embedded solver: the grid's
    cells are then the estimator's fits)."""
    return estimator.solver in EMBEDDED_SOLVERS


def _refined(candidates, best, round_, seen):
    """Candidates at the geometric midpoints between the best γ and λ (or C) and their
    neighbours in the grid (the step shrinking as 2^−round), m and the rest as the best's."""
    axes = {}
    for name in ("gamma", "lam", "C"):
        values = sorted({p[name] for p in candidates if isinstance(p.get(name), (int, float))
                         and not isinstance(p.get(name), bool)})
        if name in best and len(values) > 1:
            steps = np.diff(np.log(values))
            step = float(np.min(steps)) / 2**round_
            axes[name] = [float(f"{best[name] * math.exp(sign * step):.12g}")
                          for sign in (-1, 0, 1)]
    finer = []
    for values in itertools.product(*axes.values()):
        params = {**best, **dict(zip(axes, values, strict=True))}
        if str(params) not in seen:
            finer.append(params)
    return finer


def _best(records):
    """The record with the best mean score among those scored on every row."""
    full = max(r["n_resources"] for r in records)
    return max((r for r in records if r["n_resources"] == full),
               key=lambda r: np.mean(r["scores"]))


def _format_results(records, n_splits) -> dict:
    """``cv_results_`` as GridSearchCV writes it, with ``iter`` and ``n_resources``."""
    results = {"iter": np.array([r["iter"] for r in records]),
               "n_resources": np.array([r["n_resources"] for r in records])}
    for name, key in (("fit_time", "fit_times"), ("score_time", "score_times")):
        values = np.array([r[key] for r in records], dtype=np.float64)
        results[f"mean_{name}"] = values.mean(axis=1)
        results[f"std_{name}"] = values.std(axis=1)
    params = [r["params"] for r in records]
    for name in dict.fromkeys(k for p in params for k in p):
        results[f"param_{name}"] = _masked_param(params, name)
    results["params"] = params
    scores = np.array([r["scores"] for r in records], dtype=np.float64)
    for k in range(n_splits):
        results[f"split{k}_test_score"] = scores[:, k]
    means = scores.mean(axis=1)
    results["mean_test_score"] = means
    results["std_test_score"] = scores.std(axis=1)
    worst = np.nanmin(means) - 1 if np.isfinite(means).any() else 0.0
    results["rank_test_score"] = rankdata(-np.nan_to_num(means, nan=worst),
                                          method="min").astype(np.int32)
    return results


def _masked_param(params, name):
    """GridSearchCV's ``param_<name>``: a masked array, masked where a candidate lacks it."""
    present = {i: p[name] for i, p in enumerate(params) if name in p}
    try:
        inferred = np.array(list(present.values()))
        dtype = inferred.dtype if inferred.dtype.kind != "U" and inferred.ndim == 1 else object
    except ValueError:
        dtype = np.dtype(object)
    array = MaskedArray(np.empty(len(params), dtype=dtype), mask=True)
    for index, value in present.items():
        array[index] = value
    return array


def _on_every_row(results):
    """Which candidates of ``cv_results_`` were scored on every row (a halving's last round)."""
    return results["n_resources"] == np.max(results["n_resources"])


def _best_index(results):
    """The best-ranked candidate among those scored on every row."""
    return int(np.argmin(np.where(_on_every_row(results), results["rank_test_score"],
                                  np.iinfo(np.int32).max)))
