"""snacks_core: large-scale kernel SVMs by Nyström embedding and fast primal solvers."""

from .estimator import SnacksClassifier
from .nystrom import NystromEmbedding
from .objective import C_to_lam, lam_to_C, primal_objective

__all__ = ["SnacksClassifier", "NystromEmbedding", "primal_objective", "lam_to_C", "C_to_lam"]
__version__ = "0.1.0"
