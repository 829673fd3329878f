"""``snacks search``: choose γ, λ (or C), m and the scaling by cross-validation, then test
the chosen model once.

Without --gamma, --m, --lam or --C it runs the library's default search
(:func:`snacks_core.model.search.search_around_defaults`, the app's Auto-tune): γ × C around
the defaults, then m and 4m while they lower the CV error.  With any of them, the grid
they give (:class:`~snacks_core.model.search.SnacksSearchCV`).  With --scheduler, DATA is
read here and the cells of each fold run on the cluster's workers (the search's 'dask'
backend): the same scores, so the same choice.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
from sklearn.base import clone

from snacks_core.cli.data import training_data, training_split
from snacks_core.cli.model import f1_name, model_settings
from snacks_core.cli.output import (
    check_writable,
    replaced_when_complete,
    write_bytes_when_complete,
)
from snacks_core.cli.parser import flatten
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model.defaults import (
    SEARCH_FOLDS,
    C_values_around_default,
    default_fit_m,
    resolve_scaling,
    scaling_reason,
)
from snacks_core.model.estimator import estimator_from_settings
from snacks_core.model.metrics import classification_scores
from snacks_core.model.search import (
    SnacksSearchCV,
    default_fit_taken,
    defaults_check_note,
    refit_m_note,
    search_around_defaults,
)
from snacks_core.persistence import model_to_npz

# The settings printed for each scaling: the best few by CV score.
SHOWN = 5


class Found(NamedTuple):
    """One scaling's search: its split, the chosen model refitted on the training part (and
    its setting as printed), its CV score, every setting scored on all the searched rows
    (``table``: one row each, with ``score``, ``spread`` and the setting), what --out
    writes (``scored``: every setting and round), and what it cost."""

    scaling: str
    split: object
    model: object
    chosen: str
    score: float
    table: pd.DataFrame
    scored: pd.DataFrame
    n_rows: int
    fits: int
    refit_seconds: float
    m_ladder: str = ""  # the default search's m, as printed: each CV error, why it stopped
    chosen_by: str = "CV"  # what chose the setting printed


def run(args) -> int:
    """Search each scaling, keep the best by CV score, test it once."""
    inputs = [("DATA", args.data), ("--test", args.test)]
    if args.out and args.model and Path(args.out).resolve() == Path(args.model).resolve():
        raise ValueError(f"--out and --model are one file ({args.out}): choose two.")
    for path in (args.out, args.model):
        if path:
            check_writable(path, inputs)
    started = time.perf_counter()
    dataset = training_data(args)
    # 'auto' is searched as the scaling it stands for, once.
    scalings = dict.fromkeys(resolve_scaling(scaling, dataset.X) for scaling in args.scaling)
    search = _search if _grid_given(args) else _search_around_defaults
    with _cells_on(args.scheduler) as where:
        searches = [search(args, dataset, scaling) for scaling in scalings]
    best = max(searches, key=lambda found: found.score)
    table = pd.concat([found.table for found in searches], ignore_index=True)
    split, folds = best.split, args.cv or SEARCH_FOLDS
    rows = (f"{split.X_train.shape[0]:,} training rows" if best.n_rows >= split.X_train.shape[0]
            else f"a stratified {best.n_rows:,} of the {split.X_train.shape[0]:,} training rows")
    several = len(searches) > 1
    if not several:
        # The one scaling searched, and why when 'auto' chose it (as snacks fit says).
        rows += f", scaling {best.scaling}" + (
            f" (chosen by auto: {scaling_reason(best.scaling, dataset.X)})"
            if args.scaling == ["auto"] else "") + ","
    print(f"{split.name}: {rows} searched by {folds}-fold shuffled stratified CV: "
          f"{len(table)} settings, {sum(found.fits for found in searches)} fits, in "
          f"{time.perf_counter() - started:.1f} s (refit "
          f"{sum(found.refit_seconds for found in searches):.2f} s){where}")
    shown = table.nlargest(SHOWN, "score")
    print(f"the best {len(shown)} of {len(table)} by CV {args.scoring or 'accuracy'}:")
    for row in shown.itertuples():
        print(f"  {row.score:.4f} ± {row.spread:.4f}  {row.setting}"
              + (f", scaling = {row.scaling}" if several else ""))
    for found in searches:
        if found.m_ladder:
            print(f"m{f' (scaling {found.scaling})' if several else ''}: {found.m_ladder}")
    scores = classification_scores(split.y_train, split.y_test, best.model.predict(split.X_test),
                                   best.model.classes_)
    print(f"chosen by {best.chosen_by}: {best.chosen}"
          + (f" with scaling {best.scaling}" if several else "")
          + f"; test error of the chosen model {scores['test_error']:.4f}, "
            f"{f1_name(scores['f1_label'])} {scores['f1']:.4f} on {split.X_test.shape[0]} "
            "test rows (looked at once)")
    if args.out:
        with replaced_when_complete(args.out) as out:
            pd.concat([found.scored for found in searches], ignore_index=True).to_csv(
                out, index=False)
        print(f"settings scored: {args.out}")
    if args.model:
        write_bytes_when_complete(args.model, model_to_npz(
            best.model, split.preprocessing, index_base=dataset.index_base,
            f1_label=scores["f1_label"]))
        print(f"model: {args.model}")
    return 0


@contextlib.contextmanager
def _cells_on(scheduler):
    """The current ``distributed.Client`` of ``scheduler`` (an address; None: no cluster,
    the cells run here) during the block, which gets where they run as a phrase."""
    if scheduler is None:
        yield ""
        return
    from snacks_core.distributed import current_client  # Dask, only for a cluster

    client, _ = current_client(scheduler, "snacks search --scheduler")
    with client, client.as_current():
        workers = len(client.nthreads())
        yield f", cells on {workers} worker{'s' * (workers != 1)} of {scheduler}"


def _backend(args) -> str:
    """Where the search's cells run: the cluster's workers with --scheduler."""
    return "dask" if args.scheduler else "threads"


def _grid_given(args) -> bool:
    """Whether the options name a grid (else the default search runs)."""
    return any(value is not None for value in (args.gamma, args.m, args.lam, args.C))


def _estimator(args):
    return estimator_from_settings({
        **model_settings(args), "solver": args.solver, "random_state": args.seed,
        "dtype": np.float64 if args.dtype == "float64" else np.float32})


def _setting(gamma, C=None, lam=None, m=None) -> str:
    """A setting as printed: γ as a number, C or λ, m (where given)."""
    parts = [] if gamma is None else [f"γ = {gamma:.4g}"]
    parts.append(f"C = {C:g}" if C is not None else f"λ = {lam:g}")
    return ", ".join(parts + ([] if m is None else [f"m = {int(m)}"]))


def _search_around_defaults(args, dataset, scaling) -> Found:
    """The library's default search on the training part, its choice refitted on it."""
    split = training_split(args, dataset, scaling)
    estimator = _estimator(args)
    found = search_around_defaults(estimator, split.X_train, split.y_train,
                                   folds=args.cv or SEARCH_FOLDS, scoring=args.scoring,
                                   n_jobs=args.n_jobs, backend=_backend(args),
                                   random_state=args.seed)
    start = time.perf_counter()
    model = clone(estimator).set_params(**found.params).fit(split.X_train, split.y_train)
    refit = time.perf_counter() - start
    results = found.results[found.results["rows"] == found.n_rows]
    gammas = results["gamma"] if "gamma" in results else [None] * len(results)
    table = pd.DataFrame({
        "setting": [_setting(g, C=C, m=m) for g, C, m in
                    zip(gammas, results["C"], results["m"], strict=True)],
        "score": 1.0 - results["cv_error"].to_numpy(), "spread": results["cv_spread"].to_numpy(),
        "gamma": list(gammas), "C": results["C"].to_numpy(), "m": results["m"].to_numpy(),
        "scaling": scaling})
    chosen = _setting(found.params.get("gamma"), C=found.params["C"],
                      m=found.params["n_components"])
    steps = " → ".join(f"{m:,} (CV error {100 * error:.2f} %)" for m, error in found.m_path)
    ladder = f"{_setting(found.ladder.get('gamma'), C=found.ladder['C'])}: {steps}"
    if found.gamma_step:
        gamma, m, error = found.gamma_step
        ladder += f"; at m = {m:,} also γ = {gamma:.4g} (CV error {100 * error:.2f} %)"
    default_taken = default_fit_taken(found.defaults_check)
    grown = "" if default_taken else refit_m_note(
        found.scored_m, found.params["n_components"], found.top_unexplained)
    if grown:
        chosen += f" (scored at m = {found.scored_m:,})"
    notes = [note for note in (grown, defaults_check_note(found.defaults_check)) if note]
    return Found(scaling, split, model, chosen, 1.0 - found.cv_error, table,
                 found.results.assign(scaling=scaling), found.n_rows, found.fits, refit,
                 f"{ladder}; stopped: {found.m_stop}" + "".join(f"; {n}" for n in notes),
                 "rows held out (the default fit's settings)" if default_taken else "CV")


def _search(args, dataset, scaling) -> Found:
    """The grid the options give, by :class:`SnacksSearchCV`, for one scaling."""
    split = training_split(args, dataset, scaling)
    n_train = split.X_train.shape[0]
    param_grid = {"gamma": flatten(args.gamma or [["scale"]]),
                  "n_components": (flatten(args.m) if args.m else
                                   [default_fit_m(n_train, split.n_features,
                                                  split.n_classes)])}
    if args.lam:
        param_grid["lam"] = flatten(args.lam)
    else:
        param_grid["C"] = flatten(args.C) if args.C else list(C_values_around_default())
    search = SnacksSearchCV(_estimator(args), param_grid, scoring=args.scoring,
                            n_jobs=args.n_jobs, backend=_backend(args), halving=args.halving,
                            refine=args.refine,
                            cv=args.cv or SEARCH_FOLDS, random_state=args.seed)
    search.fit(split.X_train, split.y_train)
    scored = pd.DataFrame(search.cv_results_).assign(scaling=scaling)
    results = scored[scored["n_resources"] == scored["n_resources"].max()]
    # γ as a number: 'scale' and 'auto' resolved on the training part, as a fit resolves it.
    gamma = {value: resolve_gamma(value, split.X_train) for value in param_grid["gamma"]}
    table = pd.DataFrame({
        "setting": [_setting(gamma.get(p["gamma"], p["gamma"]), C=p.get("C"), lam=p.get("lam"),
                             m=p["n_components"]) for p in results["params"]],
        "score": results["mean_test_score"].to_numpy(),
        "spread": results["std_test_score"].to_numpy(), "scaling": scaling})
    best = search.best_params_
    chosen = _setting(gamma.get(best["gamma"], best["gamma"]), C=best.get("C"),
                      lam=best.get("lam"), m=best["n_components"])
    return Found(scaling, split, search.best_estimator_, chosen, search.best_score_, table,
                 scored, n_train, int(len(search.cv_results_["params"]) * search.n_splits_),
                 search.refit_time_)
