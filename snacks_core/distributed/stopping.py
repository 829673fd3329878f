"""Early stopping of the cluster's solvers on the rows held out in every partition, by the
in-memory rule (:class:`snacks_core.solvers.snacks.EarlyStopping`).

A checkpoint's held-out error renews the patience only when it is lower than the best so far
by :data:`~snacks_core.solvers.snacks.MIN_VALIDATION_GAIN` of the held-out rows (one row at
least); the solve stops after ``n_iter_no_change`` checkpoints without such a gain that
together span :func:`~snacks_core.solvers.snacks.patience_rows` rows visited.  The patience
is thus counted in data, not in rounds: a round of CoCoA+ visits its local passes × n rows, a
round of the averaged Snacks steps a quarter of an epoch (as many rows as a check in memory).
"""

from __future__ import annotations

import numpy as np

from ..solvers.snacks import MIN_VALIDATION_GAIN, patience_rows


class HeldOutPatience:
    """The patience of one solve: ``held_rows`` rows held out, ``n_train`` trained on."""

    def __init__(self, held_rows, n_iter_no_change, n_train):
        self.min_gain = max(1, int(np.ceil(MIN_VALIDATION_GAIN * held_rows)))
        self.checks = n_iter_no_change
        self.rows = patience_rows(n_train, n_iter_no_change)
        self.reference, self.no_change, self.improved_at = np.inf, 0, 0
        self.best_errors, self.best = np.inf, None

    def stop(self, errors, point, rows_visited) -> bool:
        """Record a checkpoint (``point`` reached after ``rows_visited`` rows, ``errors``
        held-out rows misclassified there); whether the patience is spent.

        :attr:`best` is the checkpoint after the start with the fewest errors (the first to
        reach them): the start is the patience's reference, never the answer."""
        if rows_visited > 0 and errors < self.best_errors:
            self.best_errors, self.best = errors, point
        if errors <= self.reference - self.min_gain:
            self.reference, self.no_change, self.improved_at = errors, 0, rows_visited
            return False
        self.no_change += 1
        self.reference = min(self.reference, errors)
        return self.no_change >= self.checks and rows_visited - self.improved_at >= self.rows
