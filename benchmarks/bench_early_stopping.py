"""Early stopping's held-out checks: four per epoch (now) against one per epoch (before).

``PYTHONPATH=. python benchmarks/bench_early_stopping.py [n_susy]`` fits
``SnacksClassifier`` with its default options (``early_stopping='auto'`` holds out 10 % of
the training rows, patience ``n_iter_no_change=5`` checks) twice on each problem, in this
one run: with the rule of :func:`snacks_core.solvers.snacks.rows_between_checks` ("now")
and with one check per epoch ("before", ``EARLY_STOPPING_CHECKS_PER_EPOCH = 1``, which
makes the rule the previous one exactly).  Problems: w8a (real, 80/20 stratified split,
when ``../shared/data/w8a`` is there) and a SUSY-shaped synthetic set
(:func:`snacks_core.datasets.make_susy_like`, ``n_susy`` training rows, 300,000 by
default, and 100,000 test rows).  Prints, per problem and rule: the test error (and F1 of
w8a's positive class), the epochs run, the epoch of the returned checkpoint (the first
with the lowest held-out error, read from ``history_['validation_error']``), the number of
checkpoints (held-out checks and polishing sweeps), the stop reason and the training
time (of which certificates, records and held-out checks); then the differences and
ratios now / before.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.datasets import load_svmlight_file, make_moons
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split

from snacks_core import SnacksClassifier
from snacks_core.datasets import make_susy_like
from snacks_core.solvers import snacks

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
RULES = {"before": 1, "now": snacks.EARLY_STOPPING_CHECKS_PER_EPOCH}


def problems(n_susy):
    if W8A.exists():
        X, y = load_svmlight_file(str(W8A), n_features=300)
        X_train, X_test, y_train, y_test = train_test_split(
            X.tocsr(), y, test_size=0.2, stratify=y, random_state=0)
        yield ("w8a 39,799 train (m = 1000, λ = 3e-6)", X_train, y_train, X_test, y_test,
               {"n_components": 1000, "lam": 3e-6})
    else:
        print(f"w8a skipped: {W8A} not found.")
    X, y = make_susy_like(n_susy + 100_000, random_state=0)
    for m in (200, 1000):
        yield (f"SUSY-like {n_susy:,} train (m = {m})", X[:n_susy], y[:n_susy],
               X[n_susy:], y[n_susy:], {"n_components": m})


def fit(X, y, X_test, y_test, options, checks_per_epoch):
    with mock.patch.object(snacks, "EARLY_STOPPING_CHECKS_PER_EPOCH", checks_per_epoch), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SnacksClassifier(random_state=0, **options).fit(X, y)
    h = model.history_
    # The history ends with the returned point, repeated there when it was not the last
    # checkpoint: after early stopping the first trained checkpoint with the lowest held-out
    # error, otherwise the first with the lowest F.
    if model.stop_reasons_[0] == "early_stopping":
        trained = np.flatnonzero(h["iteration"] > 0)
        returned = trained[np.argmin(h["validation_error"][trained])]
    else:
        returned = np.flatnonzero(h["objective"] == h["objective"][-1])[0]
    predicted = model.predict(X_test)
    return {"error": 100 * np.mean(predicted != y_test),
            "f1": f1_score(y_test, predicted, pos_label=model.classes_[-1]),
            "epochs": h["epoch"][-1], "returned": h["epoch"][returned],
            "checkpoints": len(h["epoch"]) - 1, "stop": model.stop_reasons_[0],
            "training": model.training_time_,
            "checkpoint_s": model.solver_info_[0]["checkpoint_time"]}


def main():
    n_susy = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
    # Compiles (or loads) every jitted path of an early-stopped fit before the timings.
    SnacksClassifier(n_components=20, max_epochs=3, early_stopping=True).fit(
        *make_moons(300, random_state=0))
    print("| problem | checks | test error % | F1 | epochs run | returned epoch | "
          "checkpoints | stop | training s (checkpoints) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, X, y, X_test, y_test, options in problems(n_susy):
        results = {}
        for label, checks in RULES.items():
            results[label] = r = fit(X, y, X_test, y_test, options, checks)
            print(f"| {name} | {label} | {r['error']:.2f} | {r['f1']:.3f} | "
                  f"{r['epochs']:.2f} | {r['returned']:.2f} | {r['checkpoints']} | {r['stop']} | "
                  f"{r['training']:.1f} ({r['checkpoint_s']:.1f}) |", flush=True)
        now, before = results["now"], results["before"]
        print(f"| {name} | now / before | {now['error'] - before['error']:+.2f} points | "
              f"{now['f1'] - before['f1']:+.3f} | **{now['epochs'] / before['epochs']:.2f}×** | "
              f"| | | **{now['training'] / before['training']:.2f}×** |", flush=True)


if __name__ == "__main__":
    main()
