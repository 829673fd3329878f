"""``snacks search``: choose γ, λ (or C), m and the scaling by cross-validation, then test
the chosen model once."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from snacks_core.cli.data import training_data, training_split
from snacks_core.cli.model import f1_name, model_settings
from snacks_core.cli.output import check_writable
from snacks_core.cli.parser import flatten
from snacks_core.model.defaults import C_values_around_default, default_m, resolve_scaling
from snacks_core.model.estimator import estimator_from_settings
from snacks_core.model.metrics import classification_scores
from snacks_core.model.search import SnacksSearchCV
from snacks_core.persistence import model_to_npz


def run(args) -> int:
    """Search each scaling's grid, keep the best by CV score, test it once."""
    for path in (args.out, args.model):
        if path:
            check_writable(path)
    started = time.perf_counter()
    dataset = training_data(args)
    # 'auto' is searched as the scaling it stands for, once.
    scalings = dict.fromkeys(resolve_scaling(scaling, dataset.X) for scaling in args.scaling)
    searches = [_search(args, dataset, scaling) for scaling in scalings]
    scaling, split, search = max(searches, key=lambda found: found[2].best_score_)[:3]
    table = pd.concat([found[3] for found in searches], ignore_index=True)
    refits = sum(found[2].refit_time_ for found in searches)
    print(f"{split.name}: {split.X_train.shape[0]} training rows searched by {search.cv}-fold "
          f"CV, {len(table)} cells in {time.perf_counter() - started:.1f} s "
          f"(refit {refits:.2f} s)")
    scoring = args.scoring or "accuracy"
    best = table[table["n_resources"] == table["n_resources"].max()].nlargest(
        5, "mean_test_score")
    several = len(searches) > 1
    for row in best.itertuples():
        print(f"  {scoring} {row.mean_test_score:.4f} ± {row.std_test_score:.4f}  "
              + ", ".join(f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}"
                          for k, v in row.params.items())
              + (f", scaling = {row.scaling}" if several else ""))
    scores = classification_scores(split.y_train, split.y_test, search.predict(split.X_test),
                                   search.classes_)
    print(f"chosen by CV: {search.best_params_}"
          + (f" with scaling {scaling}" if several else "")
          + f"; test error of the chosen model {scores['test_error']:.4f}, "
            f"{f1_name(scores['f1_label'])} {scores['f1']:.4f} on {split.X_test.shape[0]} "
            "test rows (looked at once)")
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"cv_results_: {args.out}")
    if args.model:
        Path(args.model).write_bytes(model_to_npz(
            search.best_estimator_, split.preprocessing, index_base=dataset.index_base,
            f1_label=scores["f1_label"]))
        print(f"model: {args.model}")
    return 0


def _search(args, dataset, scaling):
    """(scaling, split, fitted search, cv_results_ with a scaling column) for one scaling."""
    split = training_split(args, dataset, scaling)
    n_train = split.X_train.shape[0]
    param_grid = {"gamma": flatten(args.gamma),
                  "n_components": (flatten(args.m) if args.m else
                                   [default_m(n_train, split.n_features)])}
    if args.lam:
        param_grid["lam"] = flatten(args.lam)
    else:
        param_grid["C"] = flatten(args.C) if args.C else list(C_values_around_default())
    estimator = estimator_from_settings({
        **model_settings(args), "solver": args.solver, "random_state": args.seed,
        "dtype": np.float64 if args.dtype == "float64" else np.float32})
    # Without --cv, the search's own default number of folds.
    folds = {} if args.cv is None else {"cv": args.cv}
    search = SnacksSearchCV(estimator, param_grid, scoring=args.scoring, n_jobs=args.n_jobs,
                            halving=args.halving, refine=args.refine, random_state=args.seed,
                            **folds)
    search.fit(split.X_train, split.y_train)
    results = pd.DataFrame(search.cv_results_)
    results["scaling"] = scaling
    return scaling, split, search, results
