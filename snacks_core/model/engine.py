"""The fit engine: the stages of a Nyström SVM fit, the one-vs-rest training of its K
columns and the measures of a fitted model, shared by SnacksClassifier, the grids, the
search, the command line, the app and the cluster.

A fit on the embedding runs these stages, each one function here, so that the estimator,
:func:`~snacks_core.model.sweeps.robustness_grid` and
:class:`~snacks_core.model.search.SnacksSearchCV` make the same choices from the same seeds
(a grid cell with cold starts *is* the estimator's fit):

1. :func:`draw_seeds`: the landmark and solver seeds a ``random_state`` gives;
2. :func:`binary_targets`: the labels of the two-class subproblems (one for two classes;
   one-vs-rest's, or one-vs-one's pairs), and :func:`class_labels`, each row's class for
   stratifying;
3. :func:`validation_split`: the rows early stopping holds out of training, when
   :meth:`SolverSpec.early_stopping_on <snacks_core.model.specs.SolverSpec.early_stopping_on>`;
4. :func:`fit_embedding`: the landmarks and the Nyström factor;
5. :func:`hinge_weights` and :func:`cut_training_rows`: the weights s_i, and the targets
   and weights of the rows trained on;
6. :func:`train_columns`: the one-vs-rest solves on one shared embedding, with the
   options of :meth:`SolverSpec.solve_options <snacks_core.model.specs.SolverSpec.solve_options>`;
7. :func:`class_scores` and :func:`labels_from_scores`: the classes' scores from the
   subproblems' values (one-vs-one's votes), and labels from them;
8. :func:`score_sums` and :func:`training_measures`: the error and the objective F of a
   fitted model on its training rows (the estimator's ``train_error_`` and
   ``train_objective_``, a grid cell's, a cluster fit's from its partitions' sums).

:func:`row_blocks` and :func:`embedded_row_blocks` cut rows into blocks, so that the
embedding of a large X is never held whole when it is scored.
"""

from __future__ import annotations

import itertools
import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight

from snacks_core.core.cancellation import carry
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.solvers.base import HISTORY_COLUMNS
from snacks_core.solvers.objective import decision_values
from snacks_core.solvers.snacks import JointEarlyStopping

# One-vs-one's targets hold K(K − 1)/2 values a training row: multiclass='auto' keeps them
# within 1 GiB of float64 (letter's 26 classes: 325 a row, up to 400,000 rows; 100 classes:
# 4,950 a row, up to 27,000 rows), and is one-vs-rest beyond.
ONE_VS_ONE_MAX_TARGETS = 2**27
# Training rows from which early_stopping='auto' holds out a validation set.
EARLY_STOPPING_MIN_SAMPLES = 10_000
# Bytes of embedded rows scored at once, and of their decision values.
_SCORE_BLOCK_BYTES = 2**26
_VALUES_BLOCK_BYTES = 2**23
# A column being solved holds about this many bytes per training row (its labels, dual
# variables, margins, indicator counts and the sweeps' copies: 1,023 bytes a row for 10
# columns together, 121 for one, measured with tracemalloc).  Columns solved together are
# grouped so that a group holds no more than the embedding's own bytes per row.
COLUMN_STATE_BYTES = 100


class Seeds(NamedTuple):
    """The seeds of one fit: landmark selection and solver sampling."""

    embedding: int
    solver: int


def draw_seeds(random_state) -> Seeds:
    """The landmark and solver seeds a fit with ``random_state`` draws."""
    rng = check_random_state(random_state)
    embedding_seed, solver_seed = rng.randint(0, 2**31 - 1, size=2)
    return Seeds(int(embedding_seed), int(solver_seed))


def binary_targets(y, classes, one_vs_one=False):
    """One label vector per subproblem: one ±1 vector for two classes (``classes[1]`` is
    +1); otherwise one per class (one-vs-rest: the class +1, the rest −1) or, with
    ``one_vs_one``, one per pair of classes a < b in :func:`class_pairs`' order (class a
    +1, class b −1, the rows of other classes 0: no part of that subproblem)."""
    if classes.shape[0] == 2:
        return [np.where(y == classes[1], 1.0, -1.0)]
    if one_vs_one:
        first, second = np.array(class_pairs(classes.shape[0])).T
        index = np.minimum(np.searchsorted(classes, y), classes.shape[0] - 1)
        index[classes[index] != y] = -1  # a label of no class: in no pair
        return list((index == first[:, None]).astype(np.float64)
                    - (index == second[:, None]))
    return [np.where(y == c, 1.0, -1.0) for c in classes]


def one_vs_one_chosen(multiclass, n_classes, n_rows) -> bool:
    """Whether a fit on the embedding in this process, of ``n_rows`` training rows of
    ``n_classes`` classes, is one-vs-one: ``multiclass='ovo'``, or 'auto' while its
    targets (K(K − 1)/2 values a row) stay within :data:`ONE_VS_ONE_MAX_TARGETS`."""
    if n_classes <= 2 or multiclass == "ovr":
        return False
    return (multiclass == "ovo"
            or n_classes * (n_classes - 1) // 2 * n_rows <= ONE_VS_ONE_MAX_TARGETS)


def class_pairs(n_classes):
    """The pairs (a, b), a < b, of one-vs-one's subproblems, in the order of their
    columns (as LIBSVM's: (0, 1), (0, 2), …, (1, 2), …)."""
    return list(itertools.combinations(range(n_classes), 2))


def is_one_vs_one(targets) -> bool:
    """Whether :func:`binary_targets` made ``targets`` one-vs-one: only then do some rows
    take no part in a subproblem (target 0)."""
    return len(targets) > 1 and not all(np.all(t != 0) for t in targets)


def class_labels(targets):
    """Each row's class as an index (±1 for two classes) from :func:`binary_targets`."""
    if len(targets) == 1:
        return targets[0]
    if is_one_vs_one(targets):
        # The pairs (0, b) come first: a row is class 0 where (0, 1) says +1, else the b
        # of the pair (0, b) that says −1 (−1 for a row in no pair: a label of no class).
        first = np.vstack(targets[:n_classes_of_pairs(len(targets)) - 1])
        return np.where(first[0] > 0, 0,
                        np.where(first.min(axis=0) < 0, 1 + np.argmin(first, axis=0), -1))
    return np.argmax(np.vstack(targets), axis=0)


def n_classes_of_pairs(n_pairs) -> int:
    """K from the K(K − 1)/2 subproblems of one-vs-one."""
    return int(round((1 + math.sqrt(1 + 8 * n_pairs)) / 2))


def class_scores(decisions, n_classes, one_vs_one):
    """Each class's score from the subproblems' decision values (rows × subproblems): the
    values themselves for two classes and for one-vs-rest; for one-vs-one, as LIBSVM and
    scikit-learn's ``SVC`` (``decision_function_shape='ovr'``), a class's votes plus its
    summed confidence squashed into (−1/3, 1/3), so that the most votes win and the
    confidence only breaks their ties."""
    decisions = np.asarray(decisions)
    if not one_vs_one or n_classes == 2 or decisions.ndim == 1:
        return decisions
    # Pair p's row: +1 at its first class a, −1 at its second class b.  A pair's vote
    # goes to b unless a wins: b's votes are counted first, a win moves one to a.
    first, second = np.array(class_pairs(n_classes)).T
    signs = np.zeros((first.shape[0], n_classes))
    signs[np.arange(first.shape[0]), first] = 1.0
    signs[np.arange(first.shape[0]), second] = -1.0
    votes = (decisions > 0).astype(np.float64) @ signs + np.bincount(second,
                                                                     minlength=n_classes)
    confidence = decisions @ signs
    return votes + confidence / (3 * (np.abs(confidence) + 1))


def predicted_class_margins(decisions, n_classes, one_vs_one):
    """Each row's decision value as a margin: f(x) for two classes; for more, the predicted
    class's (:func:`class_scores`' largest): one-vs-rest its own f(x), one-vs-one its
    smallest decision value against each other class, signed its way (> 0 where it wins
    every pair it is in, ≥ 1 where it wins each beyond the margin)."""
    decisions = np.asarray(decisions)
    if decisions.ndim == 1 or decisions.shape[1] == 1:
        return decisions.reshape(-1)
    scores = class_scores(decisions, n_classes, one_vs_one)
    predicted = np.argmax(scores, axis=1)
    if not one_vs_one:
        return scores[np.arange(scores.shape[0]), predicted]
    first, second = np.array(class_pairs(n_classes)).T
    side = ((first[None, :] == predicted[:, None]).astype(np.float64)
            - (second[None, :] == predicted[:, None]))
    return np.where(side != 0, decisions * side, np.inf).min(axis=1)


def labels_from_scores(scores, classes):
    """Labels from the classes' scores (:func:`class_scores`), shape (n,) or (n, classes):
    the sign for two classes, the largest score otherwise."""
    scores = np.asarray(scores)
    if scores.ndim == 1 or scores.shape[1] == 1:
        return classes[(scores.reshape(-1) > 0).astype(int)]
    return classes[np.argmax(scores, axis=1)]


def early_stopping_enabled(early_stopping, n_samples, n_classes) -> bool:
    """Whether early stopping is on for ``n_samples`` training rows of ``n_classes``
    classes ('auto': from :data:`EARLY_STOPPING_MIN_SAMPLES` rows of two classes).

    'auto' leaves it off for more than two classes: the columns' scores are compared, so
    they are solved to ``tol``.  A column stopped where its own held-out 0-1 error stalls
    (a rare class's column stalls almost at once) cost 3-5 points of test error on a real
    26-class set; stopped together on the multiclass prediction
    (:func:`multiclass_stopping`) they cost 0.1-0.5 points on most of six real and
    look-alike sets and saved time only where they cost 4-6 (covtype): dual ascent to
    ``tol`` shrinks to its few active rows, and its early points' held-out error jumps
    by points from one sweep to the next (issue 36, BENCHMARKS.md, "Early stopping on
    many classes")."""
    if early_stopping == "auto":
        return n_samples >= EARLY_STOPPING_MIN_SAMPLES and n_classes <= 2
    if not isinstance(early_stopping, (bool, np.bool_)):
        raise ValueError(f"early_stopping must be True, False or 'auto', got "
                         f"{early_stopping!r}.")
    return bool(early_stopping)


def validation_split(labels, fraction, seed):
    """Training and held-out row indices, stratified by ``labels`` when every class can be."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation_fraction must be in (0, 1), got {fraction!r}.")
    rows = np.arange(labels.shape[0])
    try:
        return train_test_split(rows, test_size=fraction, stratify=labels, random_state=seed)
    except ValueError:
        # A class too small to appear on both sides: a plain random split.
        return train_test_split(rows, test_size=fraction, random_state=seed)


def fit_embedding(X, labels, kernel, *, n_components, sampling, dtype, n_jobs,
                  seed, landmark_indices=None) -> NystromEmbedding:
    """The Nyström embedding of a fit: ``n_components`` landmarks drawn from X with
    ``seed`` (``labels``, each row's class, for class-balanced sampling), or the rows
    ``landmark_indices`` when given, and the factor, for a
    :class:`~snacks_core.model.specs.Kernel`."""
    return NystromEmbedding(
        **kernel.params(), n_components=n_components, sampling=sampling, dtype=dtype,
        n_jobs=n_jobs, random_state=int(seed)).fit(X, labels, landmark_indices)


def hinge_weights(class_weight, y, sample_weight=None):
    """The weights s_i of the hinge terms: class weights (for the labels ``y``) times
    ``sample_weight``; None when every weight is 1."""
    by_class = compute_sample_weight(class_weight, y) if class_weight else None
    if by_class is None:
        return sample_weight
    return by_class if sample_weight is None else by_class * sample_weight


def cut_training_rows(targets, sample_weight, split):
    """The one-vs-rest ``targets`` and ``sample_weight`` of the rows trained on, and the
    held-out rows' targets (None without a ``split`` from :func:`validation_split`)."""
    if split is None:
        return targets, None, sample_weight
    train, held = split
    return ([t[train] for t in targets], [t[held] for t in targets],
            None if sample_weight is None else sample_weight[train])


def train_columns(spec, Z, targets, *, seed, sample_weight=None, held=None, validation=None,
                  w0=None, workers=1, n_jobs=None, progress=None, state_bytes=None):
    """The two-class training of every fit on an embedding: the columns of a problem (one
    target vector each, from :func:`binary_targets`: one-vs-rest's ±1 on every row, or
    one-vs-one's pairs, 0 on the rows of other classes) solved on a shared Z, each pair
    on its own rows at the whole problem's C (:func:`pair_subproblem`; in memory by the
    registry's ``pairs`` loop where it takes the options), with the options of a
    :class:`~snacks_core.model.specs.SolverSpec` (its λ, budget, tolerance, early stopping
    and the solver's own options).  The estimator and the grids' cells call it; nothing
    else solves one-vs-rest subproblems.

    Parameters
    ----------
    spec : SolverSpec
        The problem and its solver (``spec.lam`` is λ).
    Z : ndarray or store
        The embedded rows trained on; ``targets`` their ±1 labels, one vector per column.
    seed : int
        The solver's seed (:func:`draw_seeds`).
    sample_weight : ndarray or None
        The weights s_i of the rows trained on.
    held : (Z_held, held_targets) or None
        Rows held out for early stopping: each column's ``stopping_set`` for two classes;
        for more, on an embedding in memory, the rows whose multiclass prediction stops
        the columns together (:func:`multiclass_stopping`, through the registry's
        ``pairs``; elsewhere each column's, with :func:`warn_columns_stop_alone`).
    validation : (Z_val, validation_targets) or None
        Rows whose error is recorded (``eval_set``), each column's ``validation``.
    w0 : list of ndarray or None
        Each column's starting point: a warm start with the registry's warm-start options
        (:meth:`SolverSpec.warm_options <snacks_core.model.specs.SolverSpec.warm_options>`);
        ignored where those are None (a spec without warm starts, or a solver that takes
        no starting point: LIBLINEAR, Pegasos), whose solves start cold.
    workers : int
        Threads solving columns at once (the solvers' loops release the GIL).  With a
        solver whose registry entry has ``columns`` and an embedding in memory, the
        columns go in groups (at least one a worker, each within the embedding's bytes a
        row of state: :data:`COLUMN_STATE_BYTES`), each group's solved together.
    n_jobs : int or None
        Threads of a streaming solver's own passes (None: the solver's default).
    progress : callable or None
        ``progress('training', epoch, max_epochs)`` at each checkpoint.
    state_bytes : int or None
        For Z in a store: the bytes the state of columns solved together may take
        (:func:`~snacks_core.solvers.storage.columns_state_bytes`); None: one column at a
        time.

    Returns
    -------
    list of SolverResult, in the order of ``targets``.
    """
    options = spec.solve_options(held is not None, seed, sample_weight, len(targets))
    warm = spec.warm_options()
    if warm is None:
        w0 = None
    elif w0 is not None:
        options.update(warm)
    if progress is not None and "callback" not in options:
        max_epochs = float(spec.max_epochs)
        options["callback"] = lambda record, w: progress("training", record["epoch"],
                                                          max_epochs)
    if spec.entry.streaming and n_jobs is not None:
        options["n_jobs"] = n_jobs
    solve, together = spec.entry.solve, spec.entry.columns

    def own(k):
        mine = {}
        if held is not None:
            mine["stopping_set"] = (held[0], held[1][k])
        if validation is not None:
            mine["validation"] = (validation[0], validation[1][k])
        if w0 is not None:
            mine["w0"] = w0[k]
        return mine

    # A group's state takes at most the embedding's own bytes in memory; on a store (which
    # exists because the embedding did not fit) what its memory budget leaves.
    if isinstance(Z, np.ndarray):
        size = max(1, Z.shape[1] * Z.itemsize // COLUMN_STATE_BYTES)
    else:
        size = (state_bytes or 0) // (Z.n_rows * COLUMN_STATE_BYTES)
    pairs = is_one_vs_one(targets)
    joint = (together is not None and len(targets) > 1 and not pairs
             and (isinstance(Z, np.ndarray) or size > 1))
    if held is not None and len(targets) > 1 and isinstance(Z, np.ndarray):
        # More than two classes under early stopping: the columns stop together, on the
        # held-out error of the multiclass prediction (None where the solver cannot).
        results = (None if spec.entry.pairs is None else spec.entry.pairs(
            Z, targets, spec.lam, workers=workers,
            joint=multiclass_stopping(held, validation, options["n_iter_no_change"]),
            **options))
        if results is not None:
            return results
    if held is not None and len(targets) > 1:
        warn_columns_stop_alone()
    if pairs and isinstance(Z, np.ndarray) and held is None and validation is None:
        # The solver's own loop over the pairs (None where its options need a solve of
        # each).  Dual ascent starts from α = 0: a w0 (a grid's previous λ) has no α.
        results = (None if spec.entry.pairs is None else
                   spec.entry.pairs(Z, targets, spec.lam, workers=workers, **options))
        if results is not None:
            return results

    def solve_pair(k):
        # The pair's own held-out and validation rows.
        mine = {name: (value[0][value[1] != 0], value[1][value[1] != 0])
                if name in ("stopping_set", "validation") else value
                for name, value in own(k).items()}
        if not isinstance(Z, np.ndarray):
            # A store is read whole at every pass: the pair's rows at weight s_i, the
            # others at weight 0 (one minimiser with the pair's own problem, see
            # pair_subproblem), rather than a copy of them.
            weight = np.abs(targets[k]) * (1.0 if sample_weight is None else sample_weight)
            return solve(Z, np.where(targets[k] == 0, 1.0, targets[k]), spec.lam,
                         **dict(options, sample_weight=weight), **mine)
        rows, lam = pair_subproblem(Z, targets[k], spec.lam)
        return solve(Z[rows], targets[k][rows], lam,
                     **dict(options, sample_weight=None if sample_weight is None
                            else sample_weight[rows]), **mine)

    def solve_group(ks):
        if pairs:
            return [solve_pair(k) for k in ks]
        if not joint:
            return [solve(Z, targets[k], spec.lam, **options, **own(k)) for k in ks]
        # The group's columns share every full sweep of the rows (registry ``columns``).
        return together(Z, [targets[k] for k in ks], spec.lam, own=[own(k) for k in ks],
                        **options)

    groups = [[k] for k in range(len(targets))]
    if joint:
        # At least as many groups as workers, each group's columns solved together on a
        # thread.
        count = max(min(max(workers, 1), len(targets)), -(-len(targets) // size))
        groups = [list(ks) for ks in np.array_split(np.arange(len(targets)), count)]
    if workers <= 1:
        return [result for ks in groups for result in solve_group(ks)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        # Each group polls the caller's stop check (snacks_core.core.cancellation).
        return [result for part in pool.map(carry(solve_group), groups) for result in part]


def multiclass_stopping(held, validation, n_iter_no_change) -> JointEarlyStopping:
    """Early stopping of a fit's columns together (:class:`~snacks_core.solvers.snacks.
    JointEarlyStopping`): on the held-out rows ``held`` (their embedding and targets) the
    rows the multiclass prediction misclassifies (:func:`score_embedded_rows`); the
    histories record the ``validation`` rows' error where there are some, else those."""
    def errors_on(Z_rows, targets):
        targets = np.asarray(targets)
        return lambda W: score_embedded_rows(Z_rows, W, targets)[0]

    errors = errors_on(*held)
    recorded = None
    if validation is not None:
        validation_errors, n_validation = errors_on(*validation), len(validation[1][0])
        recorded = lambda W: validation_errors(W) / n_validation  # noqa: E731
    return JointEarlyStopping(n_iter_no_change, errors, len(held[1][0]), recorded)


def warn_columns_stop_alone():
    """The warning of a fit of more than two classes whose columns each stop on their own
    held-out rows (a solver or an embedding the joint rule does not take: an embedding in
    a store, on a cluster, the ℓ1 penalty, no polish)."""
    warnings.warn(
        "early stopping on more than two classes stops each one-vs-one pair or one-vs-rest "
        "column on its own held-out rows here (the joint rule, on the multiclass "
        "prediction, needs the default solver on an embedding in memory), long before the "
        "classes are learned (UCI letter: 8.2 % test error against 2.9 % without; "
        "BENCHMARKS.md, 'Early stopping on many classes'); early_stopping=False trains "
        "them to tol.", UserWarning, stacklevel=3)


def stack_histories(histories):
    """One tidy table from the subproblems' histories, with a ``problem`` column."""
    stacked = {"problem": np.concatenate(
        [np.full(len(h["iteration"]), k, dtype=np.float64) for k, h in enumerate(histories)])}
    for name in HISTORY_COLUMNS:
        stacked[name] = np.concatenate([h[name] for h in histories])
    return stacked


def row_blocks(n_rows, rows):
    """``(start, stop)`` of consecutive blocks of ``rows`` rows covering ``n_rows``."""
    return [(start, min(n_rows, start + rows)) for start in range(0, n_rows, rows)]


def embedded_row_blocks(n_rows, n_components, n_values=0):
    """Row blocks whose embedding (``n_components`` float64 columns) takes about
    :data:`_SCORE_BLOCK_BYTES`: what is embedded at once to score rows; with ``n_values``
    decision values a row, blocks whose values take at most :data:`_VALUES_BLOCK_BYTES`
    too (large temporaries cost more in page faults than in arithmetic: a third of a
    26-class fit's time on the UCI letter set, one-vs-one's K(K − 1)/2 values a row)."""
    rows = _SCORE_BLOCK_BYTES // (8 * n_components)
    if n_values:
        rows = min(rows, _VALUES_BLOCK_BYTES // (8 * n_values))
    return row_blocks(n_rows, max(1, rows))


def misclassified(scores, targets):
    """Whether each row is misclassified, from decision values ``scores`` (rows × columns)
    and the rows' ``targets`` (columns × rows, as :func:`binary_targets` gives them)."""
    targets = list(np.asarray(targets))
    pairs = is_one_vs_one(targets)
    n_classes = n_classes_of_pairs(len(targets)) if pairs else len(targets)
    # What class_labels gives: ±1 for two classes, the class's index otherwise.
    label_values = np.array([-1.0, 1.0]) if len(targets) == 1 else np.arange(n_classes)
    scores = np.asarray(scores).reshape(targets[0].shape[0], len(targets))
    predicted = labels_from_scores(class_scores(scores, n_classes, pairs), label_values)
    return predicted != class_labels(targets)


def score_sums(scores, targets, weight=None):
    """What every measurement of a fitted model on its training rows is made of:
    ``(misclassified rows, each column's hinge sum Σ s_i max(0, 1 − t_ik f_k(x_i)))`` from
    decision values ``scores`` (rows × columns) and the rows' ``targets`` (columns × rows,
    as :func:`binary_targets` gives them; a row with target 0 takes no part in a
    one-vs-one column's sum) and weights s_i (``weight``, None for ones).  Sums, so that
    blocks of rows, or a cluster's partitions, add up."""
    targets = np.asarray(targets)
    scores = np.asarray(scores).reshape(targets.shape[1], targets.shape[0])
    pairs = is_one_vs_one(list(targets))
    wrong = int(np.count_nonzero(misclassified(scores, targets)))
    losses = np.maximum(0.0, 1.0 - targets.T * scores)
    if pairs:
        losses *= targets.T != 0
    if weight is not None:
        losses *= weight[:, None]
    return wrong, losses.sum(axis=0)


def score_embedded_rows(Z, coef, targets, weight=None):
    """:func:`score_sums` of embedded rows ``Z`` scored as :meth:`decision_function
    <snacks_core.SnacksClassifier.decision_function>` scores them (Z·coefᵀ), in blocks:
    the embedding of a large X is never scored whole."""
    wrong, hinge = 0, np.zeros(len(targets))
    for start, stop in embedded_row_blocks(Z.shape[0], Z.shape[1], len(targets)):
        block_wrong, block_hinge = score_sums(
            decision_values(Z[start:stop], coef), targets[:, start:stop],
            None if weight is None else weight[start:stop])
        wrong += block_wrong
        hinge += block_hinge
    return wrong, hinge


def training_measures(wrong, hinge, n, coef, lam):
    """``(train_error_, train_objective_)`` from :func:`score_sums`' sums over all
    ``n`` training rows: the error rate, and F(w) averaged over the two-class problems
    (a one-vs-one pair's F over all n rows, the other classes' at weight 0: n_ab/n of its
    own, :func:`pair_subproblem`)."""
    return wrong / n, float(np.mean(hinge / n + lam * np.sum(coef ** 2, axis=1)))


def pair_subproblem(Z, target, lam):
    """A one-vs-one column's own problem: ``(rows, its λ)``, the rows of its two classes
    (target ≠ 0) and the λ that keeps LIBSVM's C = 1/(2nλ) of the whole problem on them:
    F over n rows with the other rows at weight 0 is n_ab/n times F over the n_ab rows
    at λ·n/n_ab, so both have one minimiser."""
    rows = np.flatnonzero(target)
    return rows, lam * Z.shape[0] / max(rows.shape[0], 1)
