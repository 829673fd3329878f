"""What every solver shares: its result type, the convergence-history recorder and checks.

Every solver returns a :class:`SolverResult`.  An *embedded* solver is a function
``solve(Z, y, lam, *, sample_weight=None, max_epochs=..., tol=..., random_state=None,
validation=None, callback=None, **options) -> SolverResult`` that minimises

    F(w) = (1/n) Σ_i s_i max(0, 1 − y_i ⟨w, z_i⟩) + λ ‖w‖²

over the rows z_i of a dense embedding ``Z`` (n × m, float32 or float64) with labels
``y`` in {−1, +1}, λ = ``lam`` > 0 (LIBLINEAR's C = 1/(2nλ)) and non-negative weights
s_i = ``sample_weight`` (all ones by default).  ``validation`` = (Z_val, y_val) are held-out
rows whose error rate every checkpoint records, and ``callback(row, w)`` is called at each
checkpoint with its history row (:class:`HistoryRecorder`).  The kernel solvers
(``libsvm`` on the raw data, ``admm`` on a kernel operator of :mod:`snacks_core.kernels.operators`)
solve the same problem on the kernel with an intercept and return the dual coefficients of
their support rows.  What the estimator passes to each, and the constraints on its
options, are declared in the registry of :mod:`snacks_core.solvers`, whose
``check_solver_params`` checks them once: a ``solve`` trusts its options and checks only
the data (:func:`check_problem`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from snacks_core.core.cancellation import raise_if_stopped
from snacks_core.solvers.objective import matvec, primal_objective

# ``validation_error`` is the error on rows the solver does not train on: the
# ``validation`` set when one is given, otherwise the early-stopping rows (Snacks's
# ``stopping_set``) where they are measured, NaN elsewhere.  One column rather than a
# second ``held_out_error``: the figures plot one held-out curve, and with both sets the
# recorded (eval) set is the one a user compares across fits.
HISTORY_COLUMNS = (
    "iteration",
    "epoch",
    "time",
    "objective",
    "gap",
    "validation_error",
)

# Why a solver stopped: the ``stop_reason`` of every :class:`SolverResult` is one of these.
TOL_GAP = "tol_gap"
"""The certified relative duality gap (F(w) − D) / F(w) reached ``tol``."""
MAX_EPOCHS = "max_epochs"
"""The budget of passes over the data (``max_epochs``) ran out."""
MAX_ITER = "max_iter"
"""The budget of iterations (``max_iter`` of LIBSVM or ADMM) ran out."""
EARLY_STOPPING = "early_stopping"
"""The held-out error did not improve for ``n_iter_no_change`` checkpoints (Snacks)."""
TOL_OBJECTIVE = "tol_objective"
"""F did not decrease by a fraction ``tol`` over two stages: ASSG's noise floor (Snacks)."""
CONVERGED = "converged"
"""The method's own convergence test held (LIBSVM's KKT tolerance; SmSVM at ``alpha_min``)."""
STOP_REASONS = frozenset(
    {TOL_GAP, MAX_EPOCHS, MAX_ITER, EARLY_STOPPING, TOL_OBJECTIVE, CONVERGED})


@dataclass
class SolverResult:
    """Weights, intercept, convergence history, timings and why the solver stopped.

    ``coef`` is w for an embedded solver; for a kernel solver it holds the dual
    coefficients y_j α_j of the rows ``support`` (indices into the training rows; None for
    embedded solvers), the model being f(x) = Σ_j coef_j k(x_support_j, x) + intercept.
    ``intercept`` is 0 for the embedded solvers (their problem has no bias).
    ``history`` maps each name of :data:`HISTORY_COLUMNS` to a float array with one entry
    per checkpoint; ``time`` is cumulative wall time spent optimising, excluding the
    evaluations made for the history itself; ``gap`` is a certified duality gap where the
    solver computes one (NaN otherwise); ``validation_error`` is the error on the
    ``validation`` rows, or without them on the rows held out for early stopping (Snacks),
    and NaN where neither is measured.
    ``n_iter`` counts the solver's own iterations, ``n_epochs`` passes over the data (NaN
    for solvers whose iterations are not passes); ``stop_reason`` is one of
    :data:`STOP_REASONS`.  ``info`` holds solver-specific facts
    about the run (e.g. the epochs of each phase); :attr:`timings` the seconds spent.
    """

    coef: np.ndarray
    history: dict = field(default_factory=dict)
    n_iter: int = 0
    n_epochs: float = 0.0
    stop_reason: str = MAX_EPOCHS
    info: dict = field(default_factory=dict)
    intercept: float = 0.0
    support: np.ndarray | None = None

    @property
    def timings(self) -> dict:
        """Seconds: ``solve`` (optimising, the history's last time) and ``checkpoints``
        (evaluations for the history, NaN where the solver does not count them)."""
        times = self.history.get("time", ())
        return {"solve": float(times[-1]) if len(times) else 0.0,
                "checkpoints": float(self.info.get("checkpoint_time", np.nan))}


class HistoryRecorder:
    """Collects checkpoints while keeping their evaluation out of the measured time.

    Usage: create it right before optimising (the clock starts), call :meth:`record` at
    each checkpoint; the time spent inside ``record`` is subtracted from the clock.
    """

    def __init__(self, Z, y, lam, sample_weight=None, validation=None, callback=None):
        self.Z, self.y, self.lam, self.sample_weight = Z, y, lam, sample_weight
        self.validation = validation
        self.callback = callback
        self.rows = {name: [] for name in HISTORY_COLUMNS}
        self._excluded = 0.0
        self._start = time.perf_counter()

    def elapsed(self) -> float:
        """Optimisation time so far, evaluation excluded."""
        return time.perf_counter() - self._start - self._excluded

    @property
    def excluded(self) -> float:
        """Seconds of evaluation removed from the clock so far."""
        return self._excluded

    def record(self, w, iteration, epoch, objective=None, gap=np.nan,
               held_out_error=None) -> float:
        """Add a checkpoint for weights ``w``; returns the primal objective F(w).

        Pass ``objective`` when the solver has already computed F(w) in this checkpoint,
        and ``held_out_error`` when it measured the error of rows held out for early
        stopping: it is the ``validation_error`` when there is no validation set.
        Raises :class:`~snacks_core.core.cancellation.Cancelled` when the caller's stop check
        (:func:`~snacks_core.core.cancellation.stop_when`) says so: every solver pauses here.
        """
        raise_if_stopped()
        now = time.perf_counter()
        elapsed = now - self._start - self._excluded
        if objective is None:
            objective = primal_objective(w, self.Z, self.y, self.lam, self.sample_weight)
        val_error = np.nan if held_out_error is None else held_out_error
        if self.validation is not None:
            Z_val, y_val = self.validation
            val_error = float(np.mean(np.sign(matvec(Z_val, w)) != y_val))
        for name, value in zip(
            HISTORY_COLUMNS, (iteration, epoch, elapsed, objective, gap, val_error), strict=False
        ):
            self.rows[name].append(float(value))
        if self.callback is not None:
            self.callback({name: self.rows[name][-1] for name in HISTORY_COLUMNS}, w)
        self._excluded += time.perf_counter() - now
        return float(objective)

    def complete_last(self, objective, gap) -> None:
        """Fill in F and the gap of the last checkpoint (recorded without them)."""
        self.rows["objective"][-1] = float(objective)
        self.rows["gap"][-1] = float(gap)

    def exclude_since(self, t0: float) -> None:
        """Remove the time since ``t0`` (a ``time.perf_counter()`` value) from the clock."""
        self._excluded += time.perf_counter() - t0

    def as_arrays(self) -> dict:
        return {name: np.asarray(values, dtype=np.float64) for name, values in self.rows.items()}


def check_problem(Z, y, lam, sample_weight=None):
    """Validate a solver's inputs; returns (Z, y, sample_weight) ready for jitted code."""
    if not np.isscalar(lam) or not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be a positive finite number, got {lam!r}.")
    if hasattr(Z, "block_bounds"):
        # An EmbeddingStore: its rows were checked when they were embedded.
        return (Z, *check_labels_and_weights(y, sample_weight, Z.n_rows))
    Z = np.asarray(Z)
    if Z.dtype not in (np.float32, np.float64):
        Z = Z.astype(np.float64)
    Z = np.ascontiguousarray(Z)
    if Z.ndim != 2 or Z.shape[0] == 0:
        raise ValueError(f"Z must be a non-empty 2-D array, got shape {Z.shape}.")
    if not _all_finite(Z):
        raise ValueError("Z contains NaN or infinite values.")
    return (Z, *check_labels_and_weights(y, sample_weight, Z.shape[0]))


def _all_finite(Z):
    """Whether every entry of Z is finite, without an n × m temporary: a float64 sum is
    finite unless an entry is not (or float64 entries near 1e308 overflow it, which the
    blockwise check then settles)."""
    if np.isfinite(np.sum(Z, dtype=np.float64)):
        return True
    rows = max(1, 2**20 // max(Z.shape[1], 1))
    return all(np.isfinite(Z[start:start + rows]).all() for start in range(0, Z.shape[0], rows))


def check_labels_and_weights(y, sample_weight, n_rows):
    """Validate ±1 labels and weights s_i for n_rows rows (a part of :func:`check_problem`);
    returns them as contiguous float64 arrays (the weights None when not given)."""
    y = np.ascontiguousarray(y, dtype=np.float64).ravel()
    if y.shape[0] != n_rows:
        raise ValueError(f"Z has {n_rows} rows but y has {y.shape[0]} labels.")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("Solvers take labels in {-1, +1}; use SnacksClassifier for other labels.")
    if sample_weight is not None:
        sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64).ravel()
        if (sample_weight.shape[0] != n_rows or not np.all(np.isfinite(sample_weight))
                or np.any(sample_weight < 0)):
            raise ValueError(
                "sample_weight must be finite and non-negative, with one entry per row."
            )
    return y, sample_weight


def resolve_seed(random_state) -> int:
    """An integer seed from an int, None or a numpy Generator/RandomState."""
    if random_state is None:
        return int(np.random.SeedSequence().entropy % (2**31))
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    raise ValueError(
        f"random_state must be None, an int or a numpy generator, got {random_state!r}."
    )
