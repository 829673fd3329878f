"""snacks_core: large-scale kernel SVMs by Nyström embedding and fast primal solvers.

The names below are imported on first use (PEP 562), so that importing one submodule (the
command line's parser, the dataset readers) does not load the whole library.
"""

import importlib
import os

# numba's parallel loops run on GNU OpenMP, whose idle threads spin for a while after each
# loop.  A fit calls parallel loops from several threads (the embedding's row chunks, the
# solver's checkpoint passes), each with its own OpenMP team, so on a small machine the
# spinning teams took the cores from the working one (BENCHMARKS.md, "Snacks engine").
# Set before numba loads OpenMP (its first parallel loop), and only where the user has not
# chosen a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# Public name → the submodule that defines it.
_PUBLIC = {"SnacksClassifier": "model.estimator", "SnacksSearchCV": "model.search",
           "NystromEmbedding": "kernels.nystrom", "primal_objective": "solvers.objective",
           "lam_to_C": "solvers.objective", "C_to_lam": "solvers.objective"}

__all__ = ["SnacksClassifier", "SnacksSearchCV", "NystromEmbedding", "primal_objective",
           "lam_to_C", "C_to_lam"]
__version__ = "0.1.0"


def __getattr__(name):
    if name not in _PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
