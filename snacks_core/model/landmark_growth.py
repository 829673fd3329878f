"""m from the data: ``n_components='auto'`` grows the number of landmarks while the held-out
error improves by more than its noise.

The fit starts at the m of the default rule (:func:`~snacks_core.model.defaults.default_m`)
and multiplies it by :data:`~snacks_core.model.defaults.AUTO_M_GROWTH` at each step, up to
:data:`~snacks_core.model.defaults.AUTO_M_MAX` and n.  A step reuses what the previous
one computed:

* the landmarks: one selection of as many rows as the cap, whose first m are each step's
  (every sampling's prefixes are samples of the same kind,
  :mod:`snacks_core.kernels.landmarks`), so the first step's are the default fit's;
* the embedding: Cholesky factors nest (:class:`~snacks_core.kernels.nystrom.EmbeddingPrefix`),
  so the first k columns of z on more landmarks are z on the first k, and only the new
  columns K(X, landmarks) F[:, k:] are computed
  (:meth:`NystromEmbedding.transform <snacks_core.kernels.nystrom.NystromEmbedding.transform>`'s
  ``first_column``); the m × m factor itself is computed anew on the landmarks, m³/3
  operations against the n·m² of the columns;
* the solution: the previous coefficients padded with zeros give the same decision values
  on the larger embedding, and start its solves (the registry's warm start).

The held-out rows are those early stopping holds out when it is on
(:meth:`SolverSpec.held_out_rows <snacks_core.model.specs.SolverSpec.held_out_rows>`):
each step then trains as the default fit does, and the last step is the model.  Otherwise
a stratified split of ``validation_fraction`` of the rows with the solver's seed
(:func:`~snacks_core.model.engine.validation_split`) measures the steps, and the last
step's solution is continued on every training row, those the default fit trains on.

Growth stops at the first of: the held-out error improved by no more than its binomial
standard error √(e(1 − e)/n_held); m reached n or the cap; the larger embedding, held
beside the smaller one while its columns are joined, would not fit the memory budget in
memory; the larger landmarks add no direction (their kernel matrix's numerical rank is no
more than the smaller one's: :data:`SINGULAR`).  Where only a few of their directions are
round-off (eigenvalues below 10⁻¹⁰ of the largest, dropped: the factor is then an
eigen-decomposition, whose columns do not nest; on the UCI covtype set 1,998 of 2,000) the
step embeds the rows anew and its solves start cold.  The last
m tried is the model's: it approximates the exact kernel more closely, and the held-out rows
showed no gain beyond their noise to tell the two apart.  Where growth cannot start (the
default m's embedding does not fit in memory, or is already singular, as on two features),
the fit is the default one.

The default ``n_components='sqrt'`` grows too, on more than two classes wherever its
landmarks are fewer than the rows (beyond a small set, and on a small set of more than 500
rows), by the kernel rather than by held-out rows (:func:`rank_grown_m`): m doubles, at most twice,
while the embedding on its landmarks leaves more than
:data:`~snacks_core.model.defaults.RANK_UNEXPLAINED` of the kernel's diagonal unexplained
on the landmarks drawn after them.  It is measured before any row is embedded, and the fit
is then the default one at the m reached.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from snacks_core.core.threads import effective_n_threads
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.kernels.landmarks import distinct_rows, select_landmarks
from snacks_core.kernels.nystrom import prefix_unexplained
from snacks_core.model.defaults import (
    AUTO_M_GROWTH,
    AUTO_M_MAX,
    RANK_M_DOUBLINGS,
    RANK_UNEXPLAINED,
)
from snacks_core.model.engine import (
    class_labels,
    fit_embedding,
    score_embedded_rows,
    train_columns,
    validation_split,
)
from snacks_core.solvers.storage import plan_storage

# Why growth stopped (``m_stop_reason_``), the library's, the command line's and the app's.
NO_GAIN = "held-out error stopped improving"
REACHED_N = "m reached n"
REACHED_CAP = f"m reached {AUTO_M_MAX}, the most landmarks 'auto' takes"
MEMORY = "memory budget"
SINGULAR = ("the landmarks' kernel matrix is numerically singular: more landmarks add no "
            "new direction")
# Why the default's growth on more than two classes stopped (rank_grown_m).
CAPTURED = (f"its landmarks leave at most {100 * RANK_UNEXPLAINED:.0f} % of the kernel's "
            "diagonal unexplained")
RANK_TOP = (f"m reached {2**RANK_M_DOUBLINGS}× the default (at most {AUTO_M_MAX:,} and n)")


def gain_beyond_noise(previous, current, n_held) -> bool:
    """Whether the held-out error fell from ``previous`` to ``current`` by more than the
    binomial standard error √(e(1 − e)/n_held) of ``previous`` on ``n_held`` rows."""
    return previous - current > np.sqrt(previous * (1.0 - previous) / n_held)


def held_out_stop(m, cap, n, previous, error, n_held):
    """Why growth stops after a step of ``m`` landmarks (of at most ``cap``, on ``n`` rows)
    by its held-out ``error`` on ``n_held`` rows, ``previous`` the step before's (None for
    the first): :data:`NO_GAIN` or the cap; None where it goes on as far as these tell."""
    if previous is not None and not gain_beyond_noise(previous, error, n_held):
        return NO_GAIN
    if m >= cap:
        return REACHED_N if cap == n else REACHED_CAP
    return None


def path_table(steps) -> dict:
    """``m_path_`` from the steps' ``(m, held-out error, seconds)``: one array each."""
    m, errors, seconds = zip(*steps, strict=True) if steps else ((), (), ())
    return {"m": np.array(m, dtype=np.int64), "held_out_error": np.array(errors, dtype=float),
            "seconds": np.array(seconds, dtype=float)}


def describe_path(path, reason) -> str:
    """``m_path_`` and ``m_stop_reason_`` in words, as the command line and the app say
    them: each m with its held-out error and its step's seconds, then why it stopped."""
    steps = " → ".join(
        f"{m} ({'–' if np.isnan(error) else f'{100 * error:.2f} %'}, {seconds:.2f} s)"
        for m, error, seconds in zip(path["m"], path["held_out_error"], path["seconds"],
                                     strict=True))
    return f"{steps}; stopped: {reason}"


def rank_top(m, n_train) -> int:
    """The most landmarks :func:`rank_grown_m` may reach from ``m`` on ``n_train`` rows:
    m doubled :data:`~snacks_core.model.defaults.RANK_M_DOUBLINGS` times, at most
    :data:`~snacks_core.model.defaults.AUTO_M_MAX` and n (and at least m)."""
    return max(int(m), min(int(m) * 2**RANK_M_DOUBLINGS, AUTO_M_MAX, int(n_train)))


def rank_grown_m(landmark_rows, m, kernel_params, fits=None) -> tuple[int, dict, str]:
    """``(m, shares, why it stopped)`` of a default fit of more than two classes: m doubled
    while the Nyström embedding on its first m landmarks leaves more than
    :data:`~snacks_core.model.defaults.RANK_UNEXPLAINED` of the kernel's diagonal
    unexplained on the landmarks drawn after them
    (:func:`~snacks_core.kernels.nystrom.prefix_unexplained`), up to the number of
    ``landmark_rows``; ``shares`` is ``{m: share}`` of each m measured.

    ``landmark_rows`` are the first :func:`rank_top` landmarks the fit's selection draws
    (every sampling's prefixes are samples of the same kind, and the first m the default
    fit's own), ``kernel_params`` the kernel's with γ a number, ``fits(m)`` (None: always)
    whether an embedding of m columns is stored as the default m's is.  Each step
    measures m on the next m drawn rows, from one Cholesky factor of the first 2m's kernel
    matrix: (2m)³/3 operations, against the n·m² of embedding the rows.  Growth stops,
    keeping m, where the share is at most the threshold (:data:`CAPTURED`), where the
    drawn rows' kernel matrix is numerically singular (:data:`SINGULAR`: more landmarks add
    no new direction; the share is then NaN), where twice m would not be stored as m is
    (:data:`MEMORY`), or at the top (:data:`RANK_TOP`).
    """
    # Positions of the rows kept as landmarks (a row repeating an earlier one is dropped).
    kept = distinct_rows(landmark_rows)
    rows = landmark_rows[kept]
    top = landmark_rows.shape[0]
    shares = {}
    while m < top:
        following = min(2 * m, top)
        k, k_next = np.searchsorted(kept, [m, following])
        measured = (prefix_unexplained(rows[:k_next], [int(k)], **kernel_params)
                    if 0 < k < k_next else None)
        if measured is None:
            shares[int(m)] = np.nan
            return int(m), shares, SINGULAR
        shares[int(m)] = measured[0]
        if measured[0] <= RANK_UNEXPLAINED:
            return int(m), shares, CAPTURED
        if fits is not None and not fits(following):
            return int(m), shares, MEMORY
        m = following
    return int(m), shares, RANK_TOP


def rank_grown_m_drawn(X, labels, m, count, kernel_params, *, sampling, seed,
                       fits=None) -> tuple[int, dict, str]:
    """:func:`rank_grown_m` from ``m`` on the first ``count`` landmarks of X that
    ``sampling`` draws with ``seed`` (``labels``, X's classes, for 'balanced'): the first m
    of a larger draw are those of m (the draws nest)."""
    drawn = select_landmarks(X, count, sampling=sampling, random_state=int(seed), y=labels,
                             **kernel_params)
    return rank_grown_m(X[drawn], m, kernel_params, fits=fits)


def rank_grown_m_of_rows(X, labels, m, seed, sampling, specs) -> tuple[int, dict, str]:
    """:func:`rank_grown_m` for a fit in this process on the rows X (``labels`` their
    classes, for 'balanced' sampling) from its default ``m``, its landmarks drawn with
    ``seed`` and ``sampling``, ``specs`` its :class:`~snacks_core.model.specs.FitSpecs`:
    growth also stops where the larger embedding of X's rows would not be stored as the
    default m's is (the memory budget: :func:`~snacks_core.solvers.storage.plan_storage`)."""
    resources = specs.resources

    def stored_as(k):
        try:
            plan = plan_storage(X.shape[0], k, dtype=resources.dtype,
                                memory_budget=resources.memory_budget,
                                storage=resources.storage)
        except ValueError:
            return None
        return plan.kind, plan.storage_dtype

    default = stored_as(m)
    return rank_grown_m_drawn(X, labels, m, rank_top(m, X.shape[0]),
                              specs.kernel.resolved(X).params(), sampling=sampling, seed=seed,
                              fits=lambda k: stored_as(k) == default)


def rank_grown_default_m(X, y, m, seed=0) -> tuple[int, dict, str]:
    """:func:`rank_grown_m` for the default kernel, the RBF at γ 'scale' on X, and
    'balanced' landmarks of X (``y`` their classes) drawn with ``seed``: where a setting
    that names no estimator starts (the app's sidebar)."""
    return rank_grown_m_drawn(X, y, m, rank_top(m, X.shape[0]),
                              {"kernel": "rbf", "gamma": float(resolve_gamma("scale", X))},
                              sampling="balanced", seed=seed)


def describe_rank_growth(shares, m, reason) -> str | None:
    """Why a default fit of more than two classes took ``m`` landmarks, in words for the
    command line (None where it kept the default m): each m measured, the share of the
    kernel it left unexplained, and why growth stopped (:func:`rank_grown_m`; ``reason``
    None: the held-out growth went on from there, and says why it stopped)."""
    if not shares or m == min(shares):
        return None
    measured = ", ".join(f"{k:,} left {100 * share:.0f} %" for k, share in shares.items()
                         if not np.isnan(share))
    return (f"m doubled from the default {min(shares):,} to {m:,} (more than two classes): "
            f"the landmarks left more than {100 * RANK_UNEXPLAINED:.0f} % of the kernel's "
            f"diagonal unexplained on the rows drawn next ({measured})"
            + ("" if reason is None else f"; stopped: {reason}"))


class LandmarkGrowth:
    """The rows, embeddings and solutions of a growing fit (the module's docstring).

    ``X`` and ``targets`` (one ±1 vector per one-vs-rest column), ``sample_weight`` (s_i
    or None) and ``evaluation`` (``(X_val, its targets)`` or None, recorded only) are the
    estimator's; ``specs`` its :class:`~snacks_core.model.specs.FitSpecs` and ``seeds``
    its :class:`~snacks_core.model.engine.Seeds`.
    """

    def __init__(self, X, targets, sample_weight, seeds, evaluation, specs, *, sampling,
                 n_classes):
        self.specs, self.seeds, self.sampling = specs, seeds, sampling
        self.spec = replace(specs.solver, warm_start=True)
        self.X, self.labels = X, class_labels(targets)
        split = self.spec.held_out_rows(self.labels, seeds.solver, n_classes)
        # Without early stopping the rows held out only measure the steps.
        self.continue_on_all = split is None
        if split is None:
            split = validation_split(self.labels, self.spec.validation_fraction, seeds.solver)
        self.split = split
        order = np.concatenate(split)
        # The rows trained on, then the held-out ones: each part is a view of one embedding.
        self.rows = X[order]
        self.n_fit = split[0].shape[0]
        self.targets = np.vstack([t[order] for t in targets])
        self.weight = None if sample_weight is None else sample_weight[order]
        self.evaluation = evaluation
        self.cap = min(X.shape[0], AUTO_M_MAX)
        self.kernel_params = specs.kernel.resolved(X).params()
        self.landmarks = select_landmarks(
            X, self.cap, sampling=sampling, random_state=int(seeds.embedding), y=self.labels,
            **self.kernel_params)
        self.embedding = self.Z = self.Z_val = self.first = None
        # Seconds spent embedding (landmarks, factors, columns) and solving.
        self.seconds = {"embedding": 0.0, "training": 0.0}
        n_jobs = effective_n_threads(specs.resources.n_jobs)
        self.workers = min(len(targets), n_jobs)
        self.threads = max(1, n_jobs // self.workers)

    def fits_in_memory(self, n_cols) -> bool:
        """Whether ``n_cols`` embedded columns of the training and evaluation rows fit the
        memory budget in memory, in the fit's dtype."""
        resources = self.specs.resources
        n_rows = self.rows.shape[0] + (0 if self.evaluation is None
                                       else self.evaluation[0].shape[0])
        try:
            plan = plan_storage(n_rows, n_cols, dtype=resources.dtype,
                                memory_budget=resources.memory_budget,
                                storage=resources.storage)
        except ValueError:
            return False
        return plan.kind == "memory" and plan.storage_dtype == np.dtype(resources.dtype)

    def rank_grown(self, m):
        """:func:`rank_grown_m` from ``m`` on the first landmarks of the growth's draw (the
        draws nest: they are those the default fit's rule measures), up to what fits in
        memory."""
        top = self.landmarks[:rank_top(m, self.X.shape[0])]
        return rank_grown_m(self.X[top], m, self.kernel_params, fits=self.fits_in_memory)

    def select(self, m):
        """The embedding on the first ``m`` of the cap's landmarks."""
        resources = self.specs.resources
        return fit_embedding(self.X, self.labels, self.specs.kernel, n_components=m,
                             sampling=self.sampling, dtype=resources.dtype,
                             n_jobs=resources.n_jobs, seed=self.seeds.embedding,
                             landmark_indices=self.landmarks[:m])

    def nests(self, embedding) -> bool:
        """Whether ``embedding``'s first columns are the current one's (both Cholesky
        factors on nested landmarks), so that only its new columns need computing."""
        return (self.embedding is not None and self.embedding.triangular_
                and embedding.triangular_)

    def embed(self, embedding):
        """Make ``embedding`` the current one, computing only the columns it adds to the
        current one's where they nest (:meth:`nests`), else all of them."""
        first = self.embedding.n_components_ if self.nests(embedding) else 0
        if first == 0:
            self.Z = self.Z_val = None

        def columns(Z, rows):
            if rows is None:
                return None
            new = embedding.transform(rows, first_column=first)
            return new if Z is None else np.hstack([Z, new])

        self.Z = columns(self.Z, self.rows)
        self.Z_val = columns(self.Z_val, None if self.evaluation is None
                             else self.evaluation[0])
        self.embedding = embedding

    def train(self, w0, every_row=False):
        """The columns' solver results on the current embedding, from ``w0`` (each column's
        start, zero-padded to the embedding's width; None: cold) on the rows trained on,
        those held out stopping early when the engine holds them out; on every training
        row with ``every_row``."""
        k = self.embedding.n_components_
        if w0 is not None:
            w0 = [np.pad(w, (0, k - w.shape[0])) for w in w0]
        n_fit = self.Z.shape[0] if every_row else self.n_fit
        held = None
        if not (self.continue_on_all or every_row):
            held = (self.Z[n_fit:], list(self.targets[:, n_fit:]))
        validation = None if self.evaluation is None else (self.Z_val, self.evaluation[1])
        return train_columns(
            self.spec, self.Z[:n_fit], list(self.targets[:, :n_fit]), seed=self.seeds.solver,
            sample_weight=None if self.weight is None else self.weight[:n_fit], held=held,
            validation=validation, w0=w0, workers=self.workers, n_jobs=self.threads,
            progress=self.specs.resources.progress)

    def held_out_error(self, results) -> float:
        """The error of the columns' solution on the held-out rows (one-vs-rest's labels)."""
        coef = np.vstack([r.coef for r in results])
        wrong, _ = score_embedded_rows(self.Z[self.n_fit:], coef, self.targets[:, self.n_fit:])
        return wrong / (self.Z.shape[0] - self.n_fit)

    def cannot_start(self, m):
        """Why growth cannot start from ``m`` landmarks (None: it can): their embedding
        would not fit the memory budget in memory, or their kernel matrix is already
        singular (no columns to extend).  The fit is then the default one at that m."""
        if not self.fits_in_memory(m):
            return MEMORY
        self.first = self.select(m)
        return None if self.first.triangular_ else SINGULAR

    def grow(self, m):
        """Grow from ``m`` landmarks (after :meth:`cannot_start` found no reason not to);
        returns the last step's results, the path's steps ``(m, held-out error, seconds)``
        and why it stopped."""
        steps, results, error, reason = [], None, None, None
        while reason is None:
            start = time.perf_counter()
            embedding = self.first if results is None else self.select(m)
            if (results is not None and not embedding.triangular_
                    and embedding.n_components_ <= self.embedding.n_components_):
                reason = SINGULAR
                break
            # Where a few of the larger landmarks' directions are round-off (dropped from
            # an eigen-decomposition) the columns do not nest: all are computed anew and
            # the solves start cold.
            warm = results is not None and self.nests(embedding)
            self.embed(embedding)
            embedded = time.perf_counter()
            results = self.train([r.coef for r in results] if warm else None)
            previous, error = error, self.held_out_error(results)
            now = time.perf_counter()
            self.seconds["embedding"] += embedded - start
            self.seconds["training"] += now - embedded
            steps.append((embedding.landmarks_.shape[0], error, now - start))
            reason = self.stop_reason(m, previous, error)
            m = min(self.cap, AUTO_M_GROWTH * m)
        if self.continue_on_all:
            start = time.perf_counter()
            results = self.train([r.coef for r in results], every_row=True)
            self.seconds["training"] += time.perf_counter() - start
        return results, steps, reason

    def stop_reason(self, m, previous, error):
        """Why growth stops after a step of ``m`` landmarks (None: it goes on)."""
        reason = held_out_stop(m, self.cap, self.X.shape[0], previous, error,
                               self.Z.shape[0] - self.n_fit)
        if reason is not None:
            return reason
        if not self.fits_in_memory(self.embedding.n_components_
                                   + min(self.cap, AUTO_M_GROWTH * m)):
            return MEMORY
        return None
