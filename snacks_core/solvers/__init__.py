"""Solvers of F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², one module each.

:data:`REGISTRY` maps each solver's name to its ``solve`` function and declares what it
takes, so that :class:`~snacks_core.SnacksClassifier` and the sweeps dispatch on it without
knowing solvers by name.  Every ``solve`` returns a :class:`~.base.SolverResult`.

* ``input='embedding'``: ``solve(Z, y, lam, ...)`` on a Nyström embedding Z (the
  signature of :mod:`snacks_core.solvers.base`), no intercept;
* ``input='data'``: ``solve(X, y, lam, *, kernel, gamma, degree, coef0, ...)`` on the raw
  rows, the exact kernel problem with an intercept (``libsvm``);
* ``input='operator'``: ``solve(operator, y, lam, ...)`` on a factorised kernel operator of
  :mod:`snacks_core.operators` (``admm``), with an intercept.

Adding a solver: a module with its ``solve`` here, and one line in :data:`REGISTRY`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import admm, liblinear, libsvm, pegasos, smoothed_newton, snacks

INPUTS = ("embedding", "data", "operator")


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
        Accepts an embedding kept in compact or disk storage (:mod:`snacks_core.storage`)
        in place of an array, and ``n_jobs`` for its checkpoint passes.
    """

    solve: Callable
    input: str = "embedding"
    warm_start: bool = False
    warm_start_options: dict = field(default_factory=dict)
    early_stopping: bool = False
    streaming: bool = False

    def __post_init__(self):
        if self.input not in INPUTS:
            raise ValueError(f"input must be one of {INPUTS}, got {self.input!r}.")


# First stage of a warm-started Snacks solve, in epochs.  The start is already close to the
# optimum, so a 1-epoch stage average rarely beats it through the sampling noise and the
# noise-floor rule (no decrease over two stages) would end the solve after 3 epochs at the
# start; stages of 3 and 6 epochs average enough to make progress (on the a9a-shaped grid
# this lowered F at every λ ≤ 1e-6, for about 1.5× the solving time).
WARM_STAGE_EPOCHS = 3.0

REGISTRY = {
    "snacks": Solver(snacks.solve, warm_start=True,
                     warm_start_options={"stage_epochs": WARM_STAGE_EPOCHS},
                     early_stopping=True, streaming=True),
    "pegasos": Solver(pegasos.solve),
    "liblinear": Solver(liblinear.solve),
    "smoothed_newton": Solver(smoothed_newton.solve, warm_start=True),
    "libsvm": Solver(libsvm.solve, input="data"),
    "admm": Solver(admm.solve, input="operator"),
}

SOLVERS = tuple(REGISTRY)
EMBEDDED_SOLVERS = {name: s.solve for name, s in REGISTRY.items() if s.input == "embedding"}
EXACT_SOLVERS = tuple(name for name, s in REGISTRY.items() if s.input != "embedding")
