"""C from the data on small sets: ``lam='auto'`` on at most
:data:`~snacks_core.model.defaults.SMALL_SET_ROWS` training rows, or at most
:data:`~snacks_core.model.defaults.SMALL_SET_PAIR_ROWS` over the classes' one-vs-one
problems (:func:`~snacks_core.model.defaults.is_small_set`: two classes up to 15,000 rows).

No single C is right on small real sets: C = 25 (the default beyond them) overfits noisy
two-class sets such as heart or pima, where ``SVC()``'s C = 1 wins by up to 4.5 points,
while C = 1 underfits the small many-class sets (vowel, movement_libras: 7 and 9 points
worse).  On these sizes a fit costs milliseconds, so the fit chooses: C from
:data:`~snacks_core.model.defaults.SMALL_SET_C_VALUES` by a stratified k-fold
cross-validation on the fit's own embedding (BENCHMARKS.md, "Small sets: C from the data
and every row a landmark").

The folds share the embedding of every training row: its landmarks are drawn without the
labels, and where every row is a landmark (the default m on small sets) its kernel between
any two rows is the exact one, so each fold's fit is the kernel SVM on that fold's rows.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
from sklearn.model_selection import StratifiedKFold

from snacks_core.model.defaults import (
    SEARCH_EPOCHS,
    SEARCH_FOLDS,
    SMALL_SET_C_VALUES,
    is_small_set,
)
from snacks_core.model.engine import class_labels, misclassified, train_columns
from snacks_core.solvers.objective import C_to_lam, decision_values


class CChoice(NamedTuple):
    """The C a small set's fit chose and each candidate's cross-validated error."""

    C: float
    cv_errors: dict


def chooses_C(n_rows, class_rows, folds=SEARCH_FOLDS) -> bool:
    """Whether a fit with ``lam='auto'`` on ``n_rows`` rows, of classes of ``class_rows``
    rows each that its cross-validation would split, chooses C by cross-validation: a
    small set (:func:`~snacks_core.model.defaults.is_small_set`), and every class on at
    least ``folds`` rows (each fold then trains on every class)."""
    return is_small_set(n_rows, len(class_rows)) and min(class_rows) >= folds


def choose_C(spec, Z, targets, *, seed, sample_weight=None, c_values=SMALL_SET_C_VALUES,
             folds=SEARCH_FOLDS) -> CChoice:
    """The C of ``c_values`` with the least ``folds``-fold cross-validated error of
    ``spec``'s solver on the embedded rows Z (the smallest C among ties: the smoothest
    model), folds stratified by class and shuffled with ``seed``.

    ``targets`` are the fit's subproblem targets (:func:`~snacks_core.model.engine.binary_targets`)
    and ``sample_weight`` the hinge terms' weights s_i, which weigh the errors too.  Each
    fold solves at λ = 1/(2 n_fold C), as a fit on its rows would, on one thread (on these
    sizes a pool of threads cost more than it saved: 5 → 34 ms on wine), in at most
    :data:`~snacks_core.model.defaults.SEARCH_EPOCHS` epochs as the search's fits (a CV
    error settles before the objective does: on the 22 small KEEL sets the same mean test
    error, vowel's fit 211 → 133 ms).
    """
    labels = class_labels(targets)
    weight = np.ones(Z.shape[0]) if sample_weight is None else np.asarray(sample_weight)
    wrong = dict.fromkeys(c_values, 0.0)
    max_epochs = min(spec.max_epochs, SEARCH_EPOCHS)
    splitter = StratifiedKFold(folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(np.zeros((Z.shape[0], 1)), labels):
        Z_train, Z_test = Z[train], Z[test]
        for C in c_values:
            results = train_columns(
                replace(spec, lam=C_to_lam(C, train.shape[0]), max_epochs=max_epochs), Z_train,
                [t[train] for t in targets], seed=seed,
                sample_weight=None if sample_weight is None else sample_weight[train])
            decisions = decision_values(Z_test, np.vstack([r.coef for r in results]))
            wrong[C] += float(np.sum(weight[test] * misclassified(
                decisions, [t[test] for t in targets])))
    total = float(np.sum(weight))
    errors = {C: wrong[C] / total for C in c_values}
    best = min(c_values, key=lambda C: (errors[C], C))
    return CChoice(float(best), errors)
