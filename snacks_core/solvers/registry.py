"""The solvers' registry: each solver's name, its ``solve`` function, what it takes and
its parameter constraints (see :mod:`snacks_core.solvers`)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Callable

from sklearn.utils._param_validation import Interval, StrOptions, validate_parameter_constraints

from snacks_core.kernels.operators import REPRESENTATIONS
from snacks_core.solvers import admm, liblinear, libsvm, pegasos, smoothed_newton, snacks

INPUTS = ("embedding", "data", "operator")


class Integers(Interval):
    """Integers in an interval, never a bool; with ``whole_floats``, floats with an integral
    value too (the command line passes budgets as floats, e.g. 20.0)."""

    def __init__(self, left, right=None, *, closed="left", whole_floats=False):
        super().__init__(Integral, left, right, closed=closed)
        self.whole_floats = whole_floats

    def is_satisfied_by(self, val):
        if isinstance(val, bool):
            return False
        if (self.whole_floats and isinstance(val, Real) and not isinstance(val, Integral)
                and float(val).is_integer()):
            val = int(val)
        return super().is_satisfied_by(val)

    def __str__(self):
        text = super().__str__()
        return f"{text} (a float with an integral value too)" if self.whole_floats else text


# Real intervals hold finite numbers only: an open end at None is +inf, excluded.
_POSITIVE = Interval(Real, 0, None, closed="neither")
_NON_NEGATIVE = Interval(Real, 0, None, closed="left")
# The estimator's own constraints on the budget and the tolerance: those of a solver that
# declares nothing else.
BUDGET_CONSTRAINTS = {"max_epochs": [_POSITIVE], "tol": [_NON_NEGATIVE]}
# Keyword arguments of ``solve`` that the caller (the estimator, the sweeps) passes itself,
# by input kind: they are never ``solver_options``.  An embedded solver gets the estimator's
# ``max_epochs`` and ``tol``; a kernel solver takes its own ``tol`` among its options.
_SUPPLIED = {
    "embedding": frozenset({"sample_weight", "max_epochs", "tol", "random_state", "validation",
                            "stopping_set"}),
    "data": frozenset({"kernel", "gamma", "degree", "coef0", "sample_weight", "validation"}),
    "operator": frozenset({"sample_weight", "validation", "precomputed"}),
}


@dataclass(frozen=True)
class Solver:
    """A registry entry: the function and what it accepts.

    Attributes
    ----------
    solve : callable
        Returns a :class:`~.base.SolverResult`.
    input : {'embedding', 'data', 'operator'}
        What its first argument is (module docstring).
    warm_start : bool
        Accepts ``w0``, a starting point (e.g. the previous λ's solution in a grid).
    warm_start_options : dict
        Options a warm start passes along with ``w0`` (unless the caller sets them).
    early_stopping : bool
        Accepts ``stopping_set`` and ``n_iter_no_change`` (held-out early stopping).
    streaming : bool
        Accepts an embedding kept in compact or disk storage (:mod:`snacks_core.solvers.storage`)
        in place of an array, and ``n_jobs`` for its checkpoint passes.
    constraints : dict
        Parameter name → list of scikit-learn constraints, for ``max_epochs`` and ``tol``
        (an embedded solver's) and the solver's own options; a name left out is not
        checked.  Defaults to :data:`BUDGET_CONSTRAINTS`.
    option_keywords : frozenset
        The names a ``solve`` taking ``**options`` accepts there: an adapter that groups
        flat ``solver_options`` into the solver's frozen options (e.g.
        :func:`snacks_core.solvers.snacks.registry_solve`).
    columns : callable or None
        ``columns(Z, ys, lam, own=[...], **keywords)``: several problems on the same
        embedding solved together (one-vs-rest columns sharing reads of the rows), each
        result ``solve``'s to its tolerance; ``own`` holds each problem's ``w0``,
        ``validation`` and ``stopping_set``.  None: the columns are solved one by one.
    pairs : callable or None
        ``pairs(Z, targets, lam, **keywords)``: one-vs-one's problems on one embedding in
        memory (a target 0 on the rows of other classes), without held-out, validation
        rows or starting points, solved to ``solve``'s tolerance
        (:func:`snacks_core.solvers.snacks.registry_solve_pairs`); it returns None where
        its options need a ``solve`` of each pair.  None: each pair is ``solve`` on a copy
        of its rows.  With ``joint`` (a :class:`~snacks_core.solvers.snacks.
        JointEarlyStopping`) the problems of more than two classes, pairs or one-vs-rest
        columns, stop together on the multiclass prediction's held-out error.
    """

    solve: Callable
    input: str = "embedding"
    warm_start: bool = False
    warm_start_options: dict = field(default_factory=dict)
    early_stopping: bool = False
    streaming: bool = False
    constraints: dict = field(default_factory=lambda: dict(BUDGET_CONSTRAINTS))
    option_keywords: frozenset = frozenset()
    columns: Callable | None = None
    pairs: Callable | None = None

    def __post_init__(self):
        if self.input not in INPUTS:
            raise ValueError(f"input must be one of {INPUTS}, got {self.input!r}.")

    def option_names(self) -> frozenset:
        """Names a caller may pass in ``solver_options``: the keyword-only parameters of
        ``solve``, its ``option_keywords`` and the constrained names, less what the caller
        passes itself."""
        parameters = inspect.signature(self.solve).parameters.values()
        keywords = {p.name for p in parameters if p.kind is p.KEYWORD_ONLY}
        return frozenset((keywords | self.option_keywords | set(self.constraints))
                         - _SUPPLIED[self.input])


# First stage of a warm-started Snacks solve, in epochs.  The start is already close to the
# optimum, so a 1-epoch stage average rarely beats it through the sampling noise and the
# noise-floor rule (no decrease over two stages) would end the solve after 3 epochs at the
# start; stages of 3 and 6 epochs average enough to make progress (on the a9a-shaped grid
# of bench_sweeps this lowered F at every λ ≤ 1e-6, at a longer solve).
WARM_STAGE_EPOCHS = 3.0

REGISTRY = {
    "snacks": Solver(snacks.registry_solve, option_keywords=snacks.OPTION_KEYWORDS,
                     columns=snacks.registry_solve_columns,
                     pairs=snacks.registry_solve_pairs, warm_start=True,
                     warm_start_options={"stage_epochs": WARM_STAGE_EPOCHS},
                     early_stopping=True, streaming=True, constraints={
                         "max_epochs": [_POSITIVE],
                         "tol": [_NON_NEGATIVE],
                         "eta0": [_POSITIVE, None],
                         "radius0": [_POSITIVE, None],
                         "omega": [Interval(Real, 1, None, closed="neither")],
                         "stage_epochs": [_POSITIVE],
                         "stage_growth": [Interval(Real, 1, None, closed="left"), None],
                         "w0": ["array-like", None],
                         "penalty": [StrOptions(set(snacks.PENALTIES))],
                         "polish": ["boolean"],
                         "n_iter_no_change": [Integers(1), None],
                         "n_jobs": [Integral, None]}),
    "pegasos": Solver(pegasos.solve, constraints={
        "max_epochs": [Integers(1, whole_floats=True)],
        "tol": [_NON_NEGATIVE],
        "projection": ["boolean"],
        "checkpoints_per_epoch": [Integers(1, whole_floats=True)]}),
    "liblinear": Solver(liblinear.solve, constraints={
        "max_epochs": [Integers(1, whole_floats=True)],
        "tol": [_NON_NEGATIVE]}),
    "smoothed_newton": Solver(smoothed_newton.registry_solve,
                              option_keywords=smoothed_newton.OPTION_KEYWORDS,
                              warm_start=True, constraints={
        "max_epochs": [_POSITIVE],
        "tol": [_NON_NEGATIVE],
        "penalty": [StrOptions(set(smoothed_newton.PENALTIES))],
        "lam_l1": [_NON_NEGATIVE, None],
        "alpha0": [_POSITIVE],
        "alpha_min": [_POSITIVE, None],
        "w0": ["array-like", None]}),
    # LIBSVM's own options, as sklearn.svm.SVC constrains them.
    "libsvm": Solver(libsvm.solve, input="data", constraints={
        "tol": [_POSITIVE],
        "max_iter": [Integers(-1)],
        "cache_size": [_POSITIVE]}),
    # ADMM's options and those of the operator it is given (operators.build_operator).
    "admm": Solver(admm.solve, input="operator", constraints={
        "max_iter": [Integers(1)],
        "tol": [_NON_NEGATIVE],
        "relaxation": [Interval(Real, 0, 2, closed="neither")],
        "checkpoint_every": [Integers(1)],
        "representation": [StrOptions(set(REPRESENTATIONS))],
        "beta": [_POSITIVE, None],
        "hss_options": [dict, None]}),
}

SOLVERS = tuple(REGISTRY)
EMBEDDED_SOLVERS = {name: s.solve for name, s in REGISTRY.items() if s.input == "embedding"}
EXACT_SOLVERS = tuple(name for name, s in REGISTRY.items() if s.input != "embedding")


def check_solver_params(solver: str, *, max_epochs, tol, solver_options: dict | None) -> None:
    """Check a solver's parameters against its registry entry's declared constraints.

    ``max_epochs`` and ``tol`` are those the estimator (or the sweeps) passes to an
    embedded solver; a kernel solver ('libsvm', 'admm') does not use them and takes its
    ``tol`` from ``solver_options``.  The ``solve`` functions do not check them again.

    Raises
    ------
    ValueError
        For an unknown solver, an option ``solve`` does not accept (or that the caller
        passes itself), or a value outside its constraints; the message names the solver
        and the parameter (scikit-learn's ``InvalidParameterError``, a ValueError).
    """
    if solver not in REGISTRY:
        raise ValueError(f"unknown solver {solver!r}; choose one of {SOLVERS}.")
    entry = REGISTRY[solver]
    options = dict(solver_options or {})
    accepted = entry.option_names()
    unknown = sorted(str(k) for k in options if k not in accepted)
    if unknown:
        raise ValueError(f"solver_options {unknown} are not options of solver={solver!r}; it "
                         f"accepts {sorted(accepted)}.")
    budget = {"max_epochs": max_epochs, "tol": tol} if entry.input == "embedding" else {}
    validate_parameter_constraints(entry.constraints, {**budget, **options},
                                   caller_name=f"solver={solver!r}")
