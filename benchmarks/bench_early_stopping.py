"""Early stopping's patience at moderate n: the rule now against the two before it, no early
stopping and exact SVC, in one run.

``PYTHONPATH=. python benchmarks/bench_early_stopping.py [--seeds 3] [--susy N]`` fits
``SnacksClassifier`` with its default options (``early_stopping='auto'`` holds out 10 % of
the training rows, ``n_iter_no_change=5``) under four rules, for each seed:

- "now": held-out checks up to four times an epoch
  (:func:`snacks_core.solvers.snacks.rows_between_checks`), and a patience of 5 checks
  *and* :func:`~snacks_core.solvers.snacks.patience_rows` rows (7 epochs, at most
  ``EARLY_STOPPING_PATIENCE_ROWS``);
- "quarter-epoch checks": the rule before, 5 checks (``EARLY_STOPPING_PATIENCE_ROWS = 0``);
- "epoch checks": the rule before that, one check an epoch
  (``EARLY_STOPPING_CHECKS_PER_EPOCH = 1`` too);
- "no early stopping": ``early_stopping=False`` (certified gap ``tol`` or ``max_epochs``);

and scikit-learn's ``SVC`` (exact kernel, the same γ and C = 1/(2nλ), n the training
rows) once.  Problems: w8a (real, 80/20 stratified split, when ``../shared/data/w8a`` is
there; m = 1000, λ = 3e-6, γ = 'scale' resolved once for both) and an ijcnn1-shaped
*synthetic* set (``make_classification``: 49,990 training and 40,000 test rows, 22
features, 10 % positives, 1 % labels flipped, standardised; γ = 1/22, C = 10, m = 1000).
``--susy N`` adds a SUSY-shaped synthetic set of N training rows (no SVC), where the rows
patience is below 5 checks and the rule now is the quarter-epoch one.  Prints, per problem
and rule, the mean (min–max over seeds) test error, F1 of the positive class, epochs run,
fit time (embedding + training), the difference to SVC's error and SVC's time over the fit's.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np
from sklearn.datasets import load_svmlight_file, make_classification
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from snacks_core import SnacksClassifier
from snacks_core.datasets import make_susy_like
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.solvers import snacks

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
# Rule name: (checks per epoch, patience rows, early_stopping).
RULES = {
    "now": (snacks.EARLY_STOPPING_CHECKS_PER_EPOCH, snacks.EARLY_STOPPING_PATIENCE_ROWS, True),
    "quarter-epoch checks": (snacks.EARLY_STOPPING_CHECKS_PER_EPOCH, 0, True),
    "epoch checks": (1, 0, True),
    "no early stopping": (snacks.EARLY_STOPPING_CHECKS_PER_EPOCH,
                          snacks.EARLY_STOPPING_PATIENCE_ROWS, False),
}


def problems(susy):
    if W8A.exists():
        X, y = load_svmlight_file(str(W8A), n_features=300)
        X_train, X_test, y_train, y_test = train_test_split(
            X.tocsr(), y, test_size=0.2, stratify=y, random_state=0)
        yield ("w8a (real) 39,799 train", X_train, y_train, X_test, y_test,
               {"gamma": resolve_gamma("scale", X_train), "lam": 3e-6}, True)
    else:
        print(f"w8a skipped: {W8A} not found.")
    n_train = 49_990
    X, y = make_classification(n_train + 40_000, 22, n_informative=10, weights=[0.9],
                               flip_y=0.01, class_sep=0.8, random_state=0)
    scaler = StandardScaler().fit(X[:n_train])
    X = scaler.transform(X)
    yield ("ijcnn1-shaped synthetic 49,990 train", X[:n_train], np.where(y[:n_train], 1, -1),
           X[n_train:], np.where(y[n_train:], 1, -1),
           {"gamma": 1.0 / 22, "lam": 1.0 / (2 * n_train * 10.0)}, True)
    if susy:
        X, y = make_susy_like(susy + 100_000, random_state=0)
        yield (f"SUSY-shaped synthetic {susy:,} train", X[:susy], y[:susy], X[susy:],
               y[susy:], {"gamma": resolve_gamma("scale", X[:susy]), "lam": 1e-5}, False)


def fit_snacks(X, y, X_test, y_test, options, rule, seed):
    checks, rows, early = RULES[rule]
    with mock.patch.object(snacks, "EARLY_STOPPING_CHECKS_PER_EPOCH", checks), \
            mock.patch.object(snacks, "EARLY_STOPPING_PATIENCE_ROWS", rows), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        model = SnacksClassifier(n_components=1000, early_stopping=early, random_state=seed,
                                 **options).fit(X, y)
        seconds = time.perf_counter() - started
    predicted = model.predict(X_test)
    return {"error": 100 * np.mean(predicted != y_test),
            "f1": f1_score(y_test, predicted, pos_label=1),
            "epochs": model.history_["epoch"][-1], "seconds": seconds,
            "stop": model.stop_reasons_[0]}


def fit_svc(X, y, X_test, y_test, options):
    C = 1.0 / (2 * X.shape[0] * options["lam"])
    started = time.perf_counter()
    model = SVC(C=C, gamma=options["gamma"], cache_size=1000).fit(X, y)
    seconds = time.perf_counter() - started
    predicted = model.predict(X_test)
    return {"error": 100 * np.mean(predicted != y_test),
            "f1": f1_score(y_test, predicted, pos_label=1), "seconds": seconds}


def spread(values, fmt):
    return f"{np.mean(values):{fmt}} ({np.min(values):{fmt}}–{np.max(values):{fmt}})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--susy", type=int, default=0, help="training rows of a SUSY-shaped set")
    args = parser.parse_args()
    print("| problem | rule | test error % | F1 | epochs | stop | fit s | − SVC error | "
          "SVC s / fit s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, X, y, X_test, y_test, options, with_svc in problems(args.susy):
        # Compiles (or loads) every jitted path of this kind and size of data (the passes
        # over large blocks run in parallel) before the timings.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            SnacksClassifier(n_components=1000, max_epochs=1, early_stopping=True).fit(X, y)
        svc = fit_svc(X, y, X_test, y_test, options) if with_svc else None
        if svc:
            print(f"| {name} (γ = {options['gamma']:.4g}, C = "
                  f"{1 / (2 * X.shape[0] * options['lam']):.3g}) | SVC | {svc['error']:.2f} | "
                  f"{svc['f1']:.3f} | | | {svc['seconds']:.1f} | | |", flush=True)
        for rule in RULES:
            runs = [fit_snacks(X, y, X_test, y_test, options, rule, seed)
                    for seed in range(args.seeds)]
            errors = [r["error"] for r in runs]
            seconds = [r["seconds"] for r in runs]
            stops = sorted({r["stop"] for r in runs})
            versus = (f"{np.mean(errors) - svc['error']:+.2f} | "
                      f"{svc['seconds'] / np.mean(seconds):.1f}×") if svc else " | "
            print(f"| {name} | {rule} | {spread(errors, '.2f')} | "
                  f"{spread([r['f1'] for r in runs], '.3f')} | "
                  f"{spread([r['epochs'] for r in runs], '.2f')} | {', '.join(stops)} | "
                  f"{spread(seconds, '.1f')} | {versus} |", flush=True)


if __name__ == "__main__":
    main()
