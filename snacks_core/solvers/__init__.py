"""Solvers of F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖².

``EMBEDDED_SOLVERS`` work on a Nyström embedding Z and share the signature of
:mod:`snacks_core.solvers.base`; ``libsvm`` solves the exact kernel problem instead.
"""

from . import liblinear, pegasos, smoothed_newton, snacks

EMBEDDED_SOLVERS = {
    "snacks": snacks.solve,
    "pegasos": pegasos.solve,
    "liblinear": liblinear.solve,
    "smoothed_newton": smoothed_newton.solve,
}
EXACT_SOLVERS = ("libsvm",)
SOLVERS = (*EMBEDDED_SOLVERS, *EXACT_SOLVERS)
