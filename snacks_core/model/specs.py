"""What a fit is made of: a kernel, a solver specification and the resources it may use.

As Falkon composes a model from a kernel object and frozen options, a fit here is composed of
three frozen values, built once at the public boundary (``SnacksClassifier.fit``,
:func:`~snacks_core.model.sweeps.robustness_grid`) and passed down unchanged:

* :class:`Kernel`: the kernel's name and parameters (γ, degree, c₀);
* :class:`SolverSpec`: the problem and how to solve it (solver, λ, budget, tolerance, early
  stopping, class weights, the solver's own options, warm starts);
* :class:`Resources`: how and where the work runs (precision, threads, memory budget,
  storage, backend and client, progress and cancellation), which never changes the result
  beyond rounding.

Variants are made with :func:`dataclasses.replace` (a grid's cells are one specification at
several λ).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import NamedTuple

from snacks_core.kernels.functions import check_kernel_params, kernel_matrix, resolve_gamma
from snacks_core.model.engine import early_stopping_enabled, validation_split
from snacks_core.solvers import REGISTRY


@dataclass(frozen=True)
class Kernel:
    """A kernel and its parameters (the notation of :mod:`snacks_core.kernels.functions`).

    ``gamma`` may be 'scale' or 'auto' until :meth:`resolved` fixes it from the data.
    """

    name: str = "rbf"
    gamma: float | str = "scale"
    degree: int = 3
    coef0: float = 1.0

    def check(self) -> Kernel:
        """The kernel itself, once its parameters are checked (ValueError otherwise)."""
        check_kernel_params(self.name, self.gamma, self.degree, self.coef0)
        return self

    def params(self) -> dict:
        """The keyword arguments of :func:`~snacks_core.kernels.functions.kernel_matrix` and of the
        embeddings (``kernel``, ``gamma``, ``degree``, ``coef0``)."""
        return {"kernel": self.name, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0}

    def resolved(self, X) -> Kernel:
        """The kernel with 'scale' or 'auto' γ resolved on the rows X."""
        if isinstance(self.gamma, str):
            return replace(self, gamma=resolve_gamma(self.gamma, X))
        return self

    def matrix(self, X, Y, *, dtype=None, n_jobs=None):
        """The kernel matrix k(X, Y) (γ must be resolved or resolvable from X)."""
        return kernel_matrix(X, Y, dtype=dtype, n_jobs=n_jobs, **self.params())


# tol='auto': the certified relative duality gap each one-vs-rest column is solved to.
# Two classes (one column): TOL.  More classes with 'snacks': MULTICLASS_TOL per column;
# the labels are the argmax of the columns' scores, which a gap of 1 % of each column's
# F(w) leaves as they are: on pendigits, digits and a generated 26-class set the test error
# was that of 1e-3 (within one test row per split, 3 splits) at 1.4-2.0x less fit time
# (BENCHMARKS.md, "Many classes").  The other solvers keep TOL.
TOL = 1e-3
MULTICLASS_TOL = 1e-2


def tol_value(tol, n_columns=1, solver="snacks") -> float:
    """The tolerance a solve of one of ``n_columns`` one-vs-rest columns with ``solver``
    uses for the estimator's ``tol`` (a number, or 'auto': :data:`TOL`, or
    :data:`MULTICLASS_TOL` for Snacks' columns of more than two classes)."""
    if tol != "auto":
        return float(tol)
    return MULTICLASS_TOL if n_columns > 1 and solver == "snacks" else TOL


@dataclass(frozen=True)
class SolverSpec:
    """The primal problem F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖² and how to
    solve it.

    Attributes
    ----------
    solver : str
        A name of :data:`snacks_core.solvers.REGISTRY`.
    lam : float or None
        The regularisation λ > 0, resolved from C or 'auto' by the caller (None for a
        grid's template, whose cells bring their own).
    max_epochs : float
        The solver's budget.
    tol : float or 'auto'
        The solver's tolerance ('auto': :func:`tol_value`, by the number of columns).
    early_stopping : bool or 'auto'
        Hold out ``validation_fraction`` of the rows and stop after ``n_iter_no_change``
        checks without improvement (solvers that support it; 'auto': from
        :data:`snacks_core.model.engine.EARLY_STOPPING_MIN_SAMPLES` rows of two classes).
    class_weight : dict, 'balanced' or None
        Weights s_i of the hinge terms by class.
    options : Mapping
        The solver's own keyword arguments (``solver_options``).
    warm_start : bool
        Start from a previous solution when the caller has one (a grid's previous λ), with
        the registry's ``warm_start_options`` unless ``options`` sets them.
    """

    solver: str = "snacks"
    lam: float | None = None
    max_epochs: float = 50
    tol: float | str = "auto"
    early_stopping: bool | str = "auto"
    validation_fraction: float = 0.1
    n_iter_no_change: int = 5
    class_weight: dict | str | None = None
    options: Mapping = field(default_factory=lambda: MappingProxyType({}))
    warm_start: bool = False

    @property
    def entry(self):
        """The solver's registry entry (:class:`snacks_core.solvers.Solver`)."""
        return REGISTRY[self.solver]

    def early_stopping_on(self, n_samples, n_classes) -> bool:
        """Whether early stopping is on for a fit on ``n_samples`` rows of ``n_classes``
        classes: the solver offers it and ``early_stopping`` asks for it ('auto': two
        classes and enough rows, :func:`~snacks_core.model.engine.early_stopping_enabled`)."""
        return self.entry.early_stopping and early_stopping_enabled(
            self.early_stopping, n_samples, n_classes)

    def held_out_rows(self, labels, seed, n_classes):
        """``(rows trained on, rows held out)`` when early stopping is on for rows of these
        classes (``labels``, of ``n_classes`` classes), else None."""
        if not self.early_stopping_on(labels.shape[0], n_classes):
            return None
        return validation_split(labels, self.validation_fraction, seed)

    def column_tol(self, n_columns) -> float:
        """The tolerance of each of ``n_columns`` one-vs-rest columns (:func:`tol_value`)."""
        return tol_value(self.tol, n_columns, self.solver)

    def solve_options(self, held, seed, sample_weight, n_columns=1) -> dict:
        """The keyword arguments of every solve of one of ``n_columns`` columns: budget,
        tolerance, early stopping (on when rows are ``held`` out), the solver's own
        options, its seed and the weights s_i."""
        stopping = ({"n_iter_no_change": self.n_iter_no_change if held else None}
                    if self.entry.early_stopping else {})
        return {**stopping, "max_epochs": self.max_epochs, "tol": self.column_tol(n_columns),
                **self.options,
                "random_state": seed, "sample_weight": sample_weight}

    def warm_options(self) -> dict | None:
        """Extra keyword arguments of a warm-started solve; None when solves start cold."""
        entry = self.entry
        if not (self.warm_start and entry.warm_start):
            return None
        return {name: value for name, value in entry.warm_start_options.items()
                if name not in self.options}


@dataclass(frozen=True)
class Resources:
    """How and where a fit or a grid runs; none of it changes a result beyond rounding.

    Attributes
    ----------
    dtype : str or numpy dtype
        Precision of kernel blocks and embeddings ('float32', 'float64'; grids also take
        'auto': float64 when it fits in memory).
    n_jobs : int or None
        Threads (None: every core the current limits allow; -1: all cores).
    memory_budget : int, str or None
        Bytes an embedding may take (:func:`snacks_core.solvers.storage.plan_storage`).
    storage : {'auto', 'memory', 'compact', 'disk'}
        Where a fit's embedding lives while the solver streams it.
    backend : {'threads', 'loky', 'dask'}
        Where a grid's columns run.
    client : distributed.Client, str or None
        The Dask client or scheduler address (None: the current client).
    progress : callable or None
        Called as work advances: ``(phase, done, total)`` by a fit, ``(done, total, row)``
        by a grid.
    should_stop : callable() -> bool or None
        Polled between a grid's columns; True cancels what has not started.
    """

    dtype: object = "float32"
    n_jobs: int | None = None
    memory_budget: int | str | None = None
    storage: str = "auto"
    backend: str = "threads"
    client: object = None
    progress: Callable | None = None
    should_stop: Callable[[], bool] | None = None


class FitSpecs(NamedTuple):
    """The three values a fit is composed of."""

    kernel: Kernel
    solver: SolverSpec
    resources: Resources
