"""Names the command line imports from here, which have moved: ``evaluate`` to
:mod:`snacks_core.evaluation`, ``DEFAULT_M`` and ``data_aware_defaults`` to
:mod:`snacks_core.defaults`.  This module goes once the command line imports them from
their modules."""

from .defaults import DEFAULT_M, data_aware_defaults
from .evaluation import evaluate

__all__ = ["DEFAULT_M", "data_aware_defaults", "evaluate"]
