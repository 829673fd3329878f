"""snacks_core: large-scale kernel SVMs by Nyström embedding and fast primal solvers."""

import os

# numba's parallel loops run on GNU OpenMP, whose idle threads spin for a while after each
# loop.  A fit calls parallel loops from several threads (the embedding's row chunks, the
# solver's checkpoint passes), each with its own OpenMP team, so on a small machine the
# spinning teams took the cores from the working one (BENCHMARKS.md, "Snacks engine").
# Set before numba loads OpenMP (its first parallel loop), and only where the user has not
# chosen a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .estimator import SnacksClassifier
from .nystrom import NystromEmbedding
from .objective import C_to_lam, lam_to_C, primal_objective
from .search import SnacksSearchCV

__all__ = ["SnacksClassifier", "SnacksSearchCV", "NystromEmbedding", "primal_objective",
           "lam_to_C", "C_to_lam"]
__version__ = "0.1.0"
