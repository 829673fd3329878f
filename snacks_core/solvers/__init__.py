"""Solvers of F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖², one module each.

:data:`REGISTRY` maps each solver's name to its ``solve`` function and declares what it
takes, so that :class:`~snacks_core.SnacksClassifier` and the sweeps dispatch on it without
knowing solvers by name.  Every ``solve`` returns a :class:`~.base.SolverResult`.

* ``input='embedding'``: ``solve(Z, y, lam, ...)`` on a Nyström embedding Z (the
  signature of :mod:`snacks_core.solvers.base`), no intercept;
* ``input='data'``: ``solve(X, y, lam, *, kernel, gamma, degree, coef0, ...)`` on the raw
  rows, the exact kernel problem with an intercept (``libsvm``);
* ``input='operator'``: ``solve(operator, y, lam, ...)`` on a factorised kernel operator of
  :mod:`snacks_core.kernels.operators` (``admm``), with an intercept.

Each entry also declares the solver's parameter constraints (scikit-learn's
``_parameter_constraints`` style), checked once at the public boundary by
:func:`check_solver_params`: the ``solve`` functions trust their options.

Adding a solver: a module with its ``solve`` here, and one line in :data:`REGISTRY`.
"""

# The registry is loaded on first use (PEP 562): importing one solver module, or
# snacks_core.solvers.objective (NumPy alone), does not load every solver's compiled code.
_REGISTRY_NAMES = frozenset({
    "INPUTS", "Integers", "BUDGET_CONSTRAINTS", "Solver", "WARM_STAGE_EPOCHS", "REGISTRY",
    "SOLVERS", "EMBEDDED_SOLVERS", "EXACT_SOLVERS", "check_solver_params"})


def __getattr__(name):
    if name not in _REGISTRY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from snacks_core.solvers import registry

    return getattr(registry, name)
