"""What the new Snacks defaults change for a user's default fit, side by side in one run.

``PYTHONPATH=. python benchmarks/bench_defaults.py`` fits ``SnacksClassifier`` with its
defaults ("now") and with ``early_stopping=False, solver_options={'polish': False}`` ("pure
ASSG": the paper's method with the previous stopping rules: certified gap from averaged
indicators, noise floor, 50 epochs) on the app's kind of data: moons (2,000 rows, the
Playground's example), a 50,000-row synthetic set (the app's large-data case) and w8a
(real, when ``../shared/data/w8a`` is there).  Prints, per problem: fit time (embedding +
training), epochs, stop reason, the share of training spent in checkpoints (certificates,
records, early-stopping checks) and the test error.  "Pure ASSG" here already has this
round's cheaper checkpoints, so the ratio understates the gain over the previous code.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file, make_classification, make_moons
from sklearn.model_selection import train_test_split

from snacks_core import SnacksClassifier

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
SETTINGS = {"now": {}, "pure ASSG": {"early_stopping": False,
                                      "solver_options": {"polish": False}}}


def problems():
    X, y = make_moons(2000, noise=0.25, random_state=0)
    yield "moons 2,000 (m = 50, λ = 1e-3, γ = 2)", X, y, {"n_components": 50, "lam": 1e-3,
                                                           "gamma": 2.0}
    X, y = make_classification(50_000, 20, n_informative=8, flip_y=0.05, random_state=0)
    yield "synthetic 50,000 × 20 (m = 200, λ = 1e-5)", X, y, {"n_components": 200,
                                                               "lam": 1e-5}
    if W8A.exists():
        X, y = load_svmlight_file(str(W8A), n_features=300)
        yield "w8a 49,749 × 300 sparse (m = 1000, λ = 3e-6)", X.tocsr(), y, {
            "n_components": 1000, "lam": 3e-6}
    else:
        print(f"w8a skipped: {W8A} not found.")


def fit(X, y, X_test, y_test, options):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SnacksClassifier(random_state=0, **options).fit(X, y)
    seconds = time.perf_counter() - start
    history = model.history_
    excluded = model.training_time_ - history["time"][-1]
    return {"fit": seconds, "embedding": model.embedding_time_, "training": model.training_time_,
            "epochs": history["epoch"][-1], "stop": model.stop_reasons_[0],
            "checkpoints": excluded / model.training_time_,
            "error": 100 * np.mean(model.predict(X_test) != y_test)}


def main():
    SnacksClassifier(n_components=20, max_epochs=3).fit(*make_moons(300, random_state=0))
    print("| problem | defaults | fit s (embedding + training) | epochs | stop | "
          "checkpoints / training | test error % |")
    print("|---|---|---|---|---|---|---|")
    for name, X, y, options in problems():
        X, X_test, y, y_test = train_test_split(X, y, test_size=0.2, stratify=y,
                                                random_state=0)
        results = {label: fit(X, y, X_test, y_test, {**options, **extra})
                   for label, extra in SETTINGS.items()}
        for label, r in results.items():
            print(f"| {name} | {label} | {r['fit']:.2f} ({r['embedding']:.2f} + "
                  f"{r['training']:.2f}) | {r['epochs']:.1f} | {r['stop']} | "
                  f"{100 * r['checkpoints']:.0f} % | {r['error']:.2f} |")
        ratio = results["pure ASSG"]["training"] / results["now"]["training"]
        print(f"| {name} | training time pure ASSG / now | **{ratio:.1f}×** | | | | |")


if __name__ == "__main__":
    main()
