"""Solvers of F(w) = (1/n) Σ s_i max(0, 1 − y_i⟨w, z_i⟩) + λ‖w‖².

``EMBEDDED_SOLVERS`` work on a Nyström embedding Z and share the signature of
:mod:`snacks_core.solvers.base`; ``EXACT_SOLVERS`` solve the kernel problem with an
intercept instead: ``libsvm`` on the exact kernel, ``admm`` on the exact kernel or on a
hierarchical (HSS) or Nyström approximation of it.
"""

from . import admm, liblinear, pegasos, smoothed_newton, snacks

EMBEDDED_SOLVERS = {
    "snacks": snacks.solve,
    "pegasos": pegasos.solve,
    "liblinear": liblinear.solve,
    "smoothed_newton": smoothed_newton.solve,
}
EXACT_SOLVERS = ("libsvm", "admm")
SOLVERS = (*EMBEDDED_SOLVERS, *EXACT_SOLVERS)
