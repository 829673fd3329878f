"""SnacksClassifier.fit on Dask collections: the engine behind the estimator on a cluster.

The stages are those of an in-memory fit (:mod:`snacks_core.model.engine`), each run where
the rows are: summaries and landmark draws on the workers, the m × m factor on the client
(broadcast once), the embedding of each partition on the worker that holds it (kept there,
in memory or compact as that worker's memory allows), then the rounds: the averaged
Snacks steps (:mod:`snacks_core.distributed.assg`) or CoCoA+
(:mod:`snacks_core.distributed.cocoa`).  What reaches the client: per partition its class
counts and a few sums, its share of the m landmark rows, and a few m-vectors per worker per
round.  Everything kept on the workers is a Dask future whose graph goes back to the input
collections, so a partition lost with its worker is recomputed by Dask (its rows and its
embedding); the rounds' state lost with it restarts from zero (CoCoA+'s dual variables,
the Snacks steps' counts).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from sklearn.utils.class_weight import compute_class_weight

from snacks_core.core.validation import clip_n_components
from snacks_core.distributed import current_client, is_dask_collection
from snacks_core.distributed.assg import solve_assg
from snacks_core.distributed.cocoa import CocoaOptions, EmbeddedPartitions, solve_cocoa
from snacks_core.distributed.data import dask_rows, load_partitions, scale_gamma
from snacks_core.distributed.holdout import held_out_positions, held_out_ranks
from snacks_core.distributed.landmarks import draw_partition_rows, landmark_draw
from snacks_core.distributed.waiting import (
    DEFAULT_TIMEOUT_S,
    gather_results,
    wait_for,
    watch_workers,
)
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.model.defaults import (
    AUTO_M_GROWTH,
    AUTO_M_MAX,
    grows_by_held_out,
    grows_by_rank,
)
from snacks_core.model.engine import (
    COLUMN_STATE_BYTES,
    binary_targets,
    draw_seeds,
    score_embedded_rows,
    stack_histories,
    training_measures,
    warn_columns_stop_alone,
)
from snacks_core.model.landmark_growth import (
    MEMORY,
    SINGULAR,
    held_out_stop,
    path_table,
    rank_grown_m,
    rank_top,
)
from snacks_core.solvers.snacks_kernels import squared_norms
from snacks_core.solvers.storage import check_float16_range, plan_storage

# Rows of a compact (float16) embedding whose squared norms are computed from one float32
# block.
_NORM_BLOCK_ROWS = 8192
# Bytes a worker may hold for the state of the one-vs-rest columns making their rounds
# together, where the embedding it holds is smaller.
_COLUMNS_STATE_FLOOR = 2**28


class Partition:
    """One partition's embedded rows, kept on the worker that embedded them: Z (float32,
    float64 or compact float16) of the rows trained on, their one-vs-rest ±1 ``targets``
    (problems × rows), weights s_i and ‖z_i‖², and the rows held out for early stopping
    (``Z_held``, ``targets_held``, ``weight_held``; None without)."""

    def __init__(self, Z, targets, weight, Z_held=None, targets_held=None, weight_held=None):
        self.Z, self.targets, self.weight = Z, targets, weight
        self.Z_held, self.targets_held, self.weight_held = Z_held, targets_held, weight_held
        self.sqnorm = np.empty(Z.shape[0])
        if Z.dtype != np.float16:
            squared_norms(Z, self.sqnorm)
            return
        for start in range(0, Z.shape[0], _NORM_BLOCK_ROWS):
            block = Z[start:start + _NORM_BLOCK_ROWS].astype(np.float32)
            squared_norms(block, self.sqnorm[start:start + block.shape[0]])


class PartitionSetup(NamedTuple):
    """How a worker embeds its partitions: the classes and their weights (one per class),
    the storage dtype, and the rows it holds out for early stopping: whether the split is
    stratified and each partition's held-out ranks
    (:func:`~snacks_core.distributed.holdout.held_out_ranks`; None without early
    stopping)."""

    classes: np.ndarray
    class_weights: np.ndarray
    storage_dtype: object
    stratified: bool
    held_ranks: list | None


def embed_partition(X, y, sample_weight, embedding, setup) -> Partition:
    """Run on a worker: the :class:`Partition` of the rows of the partitions X (a list, all
    held by this worker) with labels y (and weights ``sample_weight``, a list or None)."""
    X = X[0] if len(X) == 1 else np.concatenate(X)
    kinds = [np.searchsorted(setup.classes, part) for part in y]
    held = np.zeros(0, np.int64)
    if setup.held_ranks is not None:
        offsets = np.cumsum([0] + [part.shape[0] for part in kinds[:-1]])
        held = np.concatenate([offset + held_out_positions(part, setup.stratified, ranks)
                               for offset, part, ranks in zip(offsets, kinds,
                                                              setup.held_ranks, strict=True)])
    y, kinds = np.concatenate(y), np.concatenate(kinds)
    weight = setup.class_weights[kinds]
    if sample_weight is not None:
        weight = weight * np.concatenate(sample_weight).astype(np.float64)
    train = np.setdiff1d(np.arange(y.shape[0]), held)

    def embed(rows):
        out = np.empty((rows.shape[0], embedding.n_components_), setup.storage_dtype)
        embedding.transform(X[rows], out=out)
        if out.dtype == np.float16:
            check_float16_range(out)
        return out

    targets = np.vstack(binary_targets(y, setup.classes))
    if held.shape[0] == 0:
        return Partition(embed(train), targets[:, train], weight[train])
    return Partition(embed(train), targets[:, train], weight[train], embed(held),
                     targets[:, held], weight[held])


def score_partition(partition, coef):
    """Run on a worker: :func:`~snacks_core.model.engine.score_embedded_rows` over the
    partition's rows, those held out included: ``(misclassified, hinge sums)``."""
    wrong, hinge = score_embedded_rows(partition.Z, coef, partition.targets, partition.weight)
    if partition.Z_held is not None:
        held = score_embedded_rows(partition.Z_held, coef, partition.targets_held,
                                   partition.weight_held)
        wrong, hinge = wrong + held[0], hinge + held[1]
    return wrong, hinge


def fit_cluster(model, X, y, sample_weight=None, eval_set=None, progress=None):
    """Fit the SnacksClassifier ``model`` on Dask collections X, y (and ``sample_weight``)
    on the current cluster; sets its fitted attributes as an in-memory fit does and
    returns it.

    The problem and the landmark rule are the in-memory fit's.  The solver: for 'snacks'
    (the default) the Snacks steps on every worker's rows averaged across workers each
    round, then CoCoA+ to polish where the in-memory Snacks polishes
    (:mod:`snacks_core.distributed.assg`); for every other embedded solver (they all
    minimise the same F) CoCoA+ with LIBLINEAR's coordinate step
    (:mod:`snacks_core.distributed.cocoa`); ``max_epochs`` epochs (CoCoA+: rounds) at
    most and the certified relative gap ``tol``.  Early stopping is on as in memory (the
    solver's support and ``early_stopping``), its rows held out in every partition in
    proportion to each class, with the in-memory patience (``n_iter_no_change``
    checkpoints spanning 1.4 times as many epochs of rows, at most 250,000:
    :class:`snacks_core.solvers.snacks.HeldOutPatience`).  ``eval_set`` is NumPy rows,
    embedded on the client.

    The partitions held by one worker make one subproblem (CoCoA+) or one stream of steps
    (Snacks), so the result depends on where the scheduler placed them (as the order of a
    serial solver's passes does on its seed): equal seeds and placements give equal
    models, and any placement the same optimum within ``tol``.
    """
    specs = model.fit_specs(None, progress)
    if specs.solver.entry.input != "embedding":
        raise ValueError(f"solver={model.solver!r} needs the rows in one place; a fit on Dask "
                         "collections solves the embedded problem (CoCoA+): choose an "
                         "embedded solver such as 'snacks' or 'liblinear'.")
    if model.solver_options:
        raise ValueError("solver_options are options of the in-memory solvers; a fit on Dask "
                         "collections runs CoCoA+ rounds and takes none: leave them out.")
    # The current client (an estimator names none, so there is none to close here).
    client, _ = current_client()
    # Whatever Dask computes on the way (a dataframe's partition lengths) runs there too.
    with client.as_current():
        return _fit(model, client, dask_rows(X, y, sample_weight), eval_set, progress)


def _fit(model, client, data, eval_set, progress):
    """:func:`fit_cluster` on ``client`` with the checked Dask arrays ``data``."""
    start = time.perf_counter()
    watch_workers(client)
    partitions, summaries = load_partitions(client, *data)
    n, d = int(partitions.rows.sum()), partitions.n_features
    model.classes_, model.n_features_in_ = partitions.classes, d
    kernel, spec, resources = model.specs_for_rows(n, progress)
    model.multiclass_ = model._multiclass(spec.entry.input, n, cluster=True)
    seeds = draw_seeds(model.random_state)
    kernel = kernel.check()
    gamma = (scale_gamma(summaries, n, d) if kernel.gamma == "scale"
             else resolve_gamma(kernel.gamma, np.zeros((1, d))))
    # As in memory, a default fit of many rows in large pairs of classes grows m by the
    # held-out error after the rank rule, and one of wide rows of two classes from 'auto''s
    # start (grows_by_held_out): the workers' rows are dense (a sparse file is densified
    # there), so a kernel entry costs d.
    grows = grows_by_held_out(model.n_components, model.sampling,
                              partitions.class_counts.sum(axis=0), d, n_features=d)
    kernel = replace(kernel, gamma=gamma)
    model.embedding_, drawn = _fit_embedding(client, partitions, kernel, model,
                                             seeds.embedding, grows)
    weights = _class_weights(spec.class_weight, partitions)
    if grows:
        embedded, results = _grow(client, partitions, model, kernel, drawn, weights, spec,
                                  resources, seeds, eval_set, progress, start)
    else:
        evaluation = _embed_eval_set(model, eval_set)
        # The rows the in-memory fit would hold out with this seed, whatever the
        # partitioning.
        held = (held_out_ranks(partitions.class_counts, spec.validation_fraction,
                               seeds.solver)
                if spec.early_stopping_on(n, len(partitions.classes)) else (False, None))
        embedded = _embed_partitions(client, partitions, model, resources, (weights, held))
        model.embedding_time_ = time.perf_counter() - start
        if progress is not None:
            progress("embedding", n, n)
        start = time.perf_counter()
        results = _train(client, embedded, model, spec, resources, seeds, evaluation,
                         progress, early=bool(embedded.held_rows))
        model.training_time_ = time.perf_counter() - start
    model.coef_ = np.vstack([r.coef for r in results])
    model.intercept_ = np.zeros(len(results))
    if model.storage_ == "memory":
        # As in memory: measured from the embedding the workers hold (none when compact).
        sums = gather_results(client, [client.submit(score_partition, future, model.coef_)
                                       for future in embedded.futures],
                              "measuring the training rows", DEFAULT_TIMEOUT_S)
        model.train_error_, model.train_objective_ = training_measures(
            sum(wrong for wrong, _ in sums), sum(hinge for _, hinge in sums), n,
            model.coef_, spec.lam)
    model.history_ = stack_histories([r.history for r in results])
    model.n_iter_ = int(max(r.n_iter for r in results))
    model.stop_reasons_ = [r.stop_reason for r in results]
    model.solver_info_ = [r.info for r in results]
    return model


def _fit_embedding(client, partitions, kernel, model, seed, held_out_growth=False):
    """``(embedding, (rows, positions))``: the Nyström embedding on landmarks drawn across
    the partitions (only the drawn rows come to the client), its ``landmark_indices_``
    rows of the whole X; the rows drawn and their positions in X, as many as
    ``held_out_growth`` may take (at most :data:`AUTO_M_MAX`)."""
    n = int(partitions.rows.sum())
    start = model.growth_start if held_out_growth else model.landmark_count
    m = clip_n_components(start(n, partitions.n_features, len(partitions.classes)), n)
    # As in memory, m may grow on more than two classes: the first of a larger draw are
    # the default's m (the draws nest).
    grows = grows_by_rank(model.n_components, model.sampling, n, len(partitions.classes), m)
    count = (min(n, AUTO_M_MAX) if held_out_growth else rank_top(m, n) if grows else m)
    # The rows the in-memory fit draws with this seed, whatever the partitioning.
    holder, kinds, ranks = landmark_draw(partitions.class_counts, count, model.sampling,
                                         seed)
    balanced = model.sampling == "balanced"
    draws = gather_results(client, [
        client.submit(draw_partition_rows, partitions.X[p], partitions.y[p],
                      partitions.classes if balanced else None, kinds[holder == p],
                      ranks[holder == p])
        for p in range(len(partitions.X))], "drawing the landmarks", DEFAULT_TIMEOUT_S)
    offsets = np.concatenate([[0], np.cumsum(partitions.rows)[:-1]])
    rows = np.empty((holder.shape[0], partitions.n_features), draws[0][0].dtype)
    positions = np.empty(holder.shape[0], np.int64)
    for p, (drawn, at) in enumerate(draws):
        rows[holder == p], positions[holder == p] = drawn, offsets[p] + at
    if grows:
        # The workers plan their own parts' storage: no memory stop here.
        m, model.m_unexplained_, model.m_stop_reason_ = rank_grown_m(
            rows[:rank_top(m, n)], m, kernel.params())
    return _embedding_on(rows[:m], positions[:m], kernel, model, seed), (rows, positions)


def _embedding_on(rows, positions, kernel, model, seed):
    """The Nyström embedding on the landmark ``rows`` at ``positions`` of the whole X."""
    embedding = NystromEmbedding(**kernel.params(), n_components=rows.shape[0],
                                 dtype=model.dtype, n_jobs=model.n_jobs).fit(
        rows, landmark_indices=np.arange(rows.shape[0]))
    embedding.landmark_indices_ = positions[embedding.landmark_indices_]
    embedding.set_params(gamma=model.gamma, sampling=model.sampling, random_state=seed)
    return embedding


def _train(client, embedded, model, spec, resources, seeds, evaluation, progress, early):
    """The one-vs-rest columns' solver results on the ``embedded`` partitions (their held-out
    rows, where any, stopping the rounds early with ``early``)."""
    n_train = int(embedded.rows.sum())
    columns = 1 if len(model.classes_) == 2 else len(model.classes_)
    if early and columns > 1:
        warn_columns_stop_alone()
    options = CocoaOptions(
        max_rounds=max(1, int(np.ceil(spec.max_epochs))), tol=spec.column_tol(columns),
        n_iter_no_change=spec.n_iter_no_change if early else None)
    solve = solve_assg if model.solver == "snacks" else solve_cocoa
    # The columns make their rounds together (a round's wait is a cluster's main cost on
    # small data), in groups whose state on a worker (COLUMN_STATE_BYTES a row each) takes
    # at most the embedding's own bytes there, or _COLUMNS_STATE_FLOOR.
    rows = int(embedded.rows.max())
    size = max(1, max(rows * embedded.width * np.dtype(resources.dtype).itemsize,
                      _COLUMNS_STATE_FLOOR) // (rows * COLUMN_STATE_BYTES))
    return [result for group in np.array_split(np.arange(columns), -(-columns // size))
            for result in solve(client, embedded, group.tolist(), spec.lam, n_train,
                                options, seed=seeds.solver, progress=progress,
                                validation=evaluation)]


def _grow(client, partitions, model, kernel, drawn, weights, spec, resources, seeds,
          eval_set, progress, start):
    """``(embedded partitions, results)`` of a fit that grows m by the held-out error from
    the rank rule's (:mod:`snacks_core.model.landmark_growth`, as in memory): the rows the
    in-memory fit holds out with the solver's seed measure each m (the embedding of every
    partition at that m, the columns trained on the other rows), m doubles while their
    error falls by more than its standard error, up to the landmarks ``drawn``
    (:data:`AUTO_M_MAX` and n) and while a worker can hold the larger embedding, and the
    last m is trained on every row, ``eval_set`` recorded (``kernel``: γ a number;
    ``start``: when the fit began).  Sets ``m_path_``, ``m_stop_reason_`` and the two times."""
    rows, positions = drawn
    before = time.perf_counter() - start
    held = held_out_ranks(partitions.class_counts, spec.validation_fraction, seeds.solver)
    n, cap = int(partitions.rows.sum()), rows.shape[0]
    steps, error, reason, seconds = [], None, None, {"embedding": 0.0, "training": 0.0}
    m = model.embedding_.landmarks_.shape[0]
    while reason is None:
        step = time.perf_counter()
        if steps:
            smaller = model.embedding_.n_components_
            model.embedding_ = _embedding_on(rows[:m], positions[:m], kernel, model,
                                             seeds.embedding)
            if model.embedding_.n_components_ <= smaller:
                # As in memory: the larger landmarks add no direction.
                reason = SINGULAR
                break
        try:
            embedded = _embed_partitions(client, partitions, model, resources,
                                         (weights, held))
        except ValueError:
            if not steps:
                raise
            # A worker cannot hold this m's embedding even compactly.
            reason = MEMORY
            break
        embedded_at = time.perf_counter()
        results = _train(client, embedded, model, spec, resources, seeds, None, None,
                         early=False)
        coef = np.vstack([r.coef for r in results])
        wrong = sum(gather_results(client, [client.submit(held_out_wrong, future, coef)
                                            for future in embedded.futures],
                                   "measuring the rows held out", DEFAULT_TIMEOUT_S))
        previous, error = error, wrong / max(embedded.held_rows, 1)
        now = time.perf_counter()
        seconds["embedding"] += embedded_at - step
        seconds["training"] += now - embedded_at
        steps.append((m, error, now - step))
        reason = held_out_stop(m, cap, n, previous, error, embedded.held_rows)
        m = min(cap, AUTO_M_GROWTH * m)
    last = steps[-1][0]
    if model.embedding_.landmarks_.shape[0] != last:
        # Growth stopped at a larger m it did not keep.
        model.embedding_ = _embedding_on(rows[:last], positions[:last], kernel, model,
                                         seeds.embedding)
    step = time.perf_counter()
    embedded = _embed_partitions(client, partitions, model, resources, (weights, (False, None)))
    model.embedding_time_ = before + seconds["embedding"] + time.perf_counter() - step
    if progress is not None:
        progress("embedding", n, n)
    step = time.perf_counter()
    results = _train(client, embedded, model, spec, resources, seeds,
                     _embed_eval_set(model, eval_set), progress, early=False)
    model.training_time_ = seconds["training"] + time.perf_counter() - step
    model.m_path_, model.m_stop_reason_ = path_table(steps), reason
    return embedded, results


def held_out_wrong(partition, coef):
    """Run on a worker: how many of the partition's rows held out the one-vs-rest columns
    ``coef`` misclassify."""
    if partition.Z_held is None:
        return 0
    return score_embedded_rows(partition.Z_held, coef, partition.targets_held)[0]


def _class_weights(class_weight, partitions):
    """One weight per class, as scikit-learn's ``compute_class_weight`` gives them in
    memory: 'balanced' n / (classes · n_c) from the counts, a dict's values (1 for a class it
    leaves out; a key that is no class is an error), or ones.

    Raises
    ------
    ValueError
        When no row keeps a positive weight (class times sample weight).
    """
    counts = partitions.class_counts.sum(axis=0)
    if class_weight == "balanced":
        weights = counts.sum() / (counts.shape[0] * counts)
    elif class_weight:
        # y is read for 'balanced' only: the classes stand in for it.
        weights = compute_class_weight(class_weight, classes=partitions.classes,
                                       y=partitions.classes)
    else:
        weights = np.ones(counts.shape[0])
    if not np.any(weights * partitions.positive_counts.sum(axis=0) > 0):
        raise ValueError("All sample weights are zero (after class weights): at least one "
                         "sample needs a positive weight.")
    return weights


def _embed_partitions(client, partitions, model, resources, setup):
    """Embed the partitions each worker holds into one :class:`Partition` on that worker (the
    factor broadcast once), in the storage its memory allows; sets ``model.storage_``.

    The partitions of one worker make one CoCoA+ subproblem: K is then the number of
    workers, which sets the rounds' damping σ' = K and the tasks per round.
    """
    class_weights, (stratified, held_ranks) = setup
    held_counts = np.zeros(len(partitions.X), np.int64)
    if held_ranks is not None:
        held_counts = np.array([sum(r.shape[0] for r in ranks) for ranks in held_ranks])
    k = model.embedding_.n_components_
    holders = client.who_has(partitions.X)
    groups = {}
    for p, future in enumerate(partitions.X):
        groups.setdefault(holders[future.key][0], []).append(p)
    info = client.scheduler_info()["workers"]
    # A task rather than scattered data: a task's result is recomputed from its spec when
    # the workers holding it are lost, scattered data is not.  Sent once, then copied to
    # every worker.
    with warnings.catch_warnings():
        # The factor of 2,000 landmarks is 32 MB: Dask's advice for large graphs (load the
        # data with Dask) is about data, not this one object sent once.
        warnings.filterwarnings("ignore", message="Sending large graph")
        shared = client.submit(_identity, model.embedding_, pure=False)
    client.replicate([shared])
    futures, kinds, trained = [], set(), []
    # Groups in the order of their first partition, not of the workers' addresses (new ones
    # at every start): the same placement gives the same streams of steps.
    for address, members in sorted(groups.items(), key=lambda group: group[1][0]):
        limit = info.get(address, {}).get("memory_limit") or 0
        plan = plan_storage(int(partitions.rows[members].sum()), k, dtype=resources.dtype,
                            memory_budget=resources.memory_budget
                            or (limit // 2 if limit else None), storage=resources.storage)
        if plan.kind == "disk":
            raise ValueError(f"Worker {address}: {plan.message} A fit on a cluster keeps its "
                             "embedding in the workers' memory (float32 or compact float16): "
                             "add workers or memory, or use fewer landmarks.")
        if plan.kind != "memory" or plan.storage_dtype != np.dtype(resources.dtype):
            warnings.warn(f"Worker {address}: {plan.message}", UserWarning, stacklevel=4)
        kinds.add(plan.kind)
        trained.append(int(partitions.rows[members].sum() - held_counts[members].sum()))
        futures.append(client.submit(
            embed_partition, [partitions.X[p] for p in members],
            [partitions.y[p] for p in members],
            None if partitions.weight is None else [partitions.weight[p] for p in members],
            shared, PartitionSetup(partitions.classes, class_weights, plan.storage_dtype,
                                   stratified, None if held_ranks is None
                                   else [held_ranks[p] for p in members]),
            workers=[address], allow_other_workers=True, pure=False))
    model.storage_ = "compact" if "compact" in kinds else "memory"
    wait_for(client, futures, "embedding the partitions", DEFAULT_TIMEOUT_S)
    return EmbeddedPartitions(futures, k, int(held_counts.sum()), np.array(trained))


def _identity(value):
    return value


def _embed_eval_set(model, eval_set):
    """``(Z_val, one-vs-rest targets)`` of an in-memory ``eval_set``, or None."""
    if eval_set is None:
        return None
    X_val, y_val = eval_set
    if is_dask_collection(X_val) or is_dask_collection(y_val):
        raise ValueError("eval_set is embedded on the client: pass NumPy rows (a sample), "
                         "not a Dask collection.")
    X_val = np.asarray(X_val, dtype=np.float64)
    if X_val.ndim != 2 or X_val.shape[1] != model.n_features_in_:
        raise ValueError(f"eval_set's X has shape {X_val.shape}; the training rows have "
                         f"{model.n_features_in_} features.")
    return (model.embedding_.transform(X_val),
            binary_targets(np.asarray(y_val), model.classes_))
