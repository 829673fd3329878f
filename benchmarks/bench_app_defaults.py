"""Defaults that learn: the Playground's default model on every kind of data, against the
majority class and an exact kernel SVM, side by side in one run.

``PYTHONPATH=. python benchmarks/bench_app_defaults.py [--quick]`` splits each dataset as
the app does (30 % test, stratified, seed 0; standard scaling, none for sparse binary
data), then trains Snacks with

- the previous fixed defaults (m = 50, λ = 1e-3, γ 'scale'), and
- the data-aware defaults the sidebar now starts from (``sidebar.defaults_for``: λ ≈ 0.02/n,
  m ≈ 2√n within [50, 500] (100 at most on two features, at least 30 a class for more
  than two classes), γ 'scale', rounded to the sliders' steps),

and scikit-learn's exact ``SVC`` (γ 'scale') at C in {0.1, 1, 10, 100}, best C chosen on
the test rows (an optimistic reference: the most a kernel SVM can gain).  "captured" is
(majority − data-aware) / (majority − best SVC): the share of the kernel SVM's gain over
always predicting the majority class that the default model gets; the issue asks for at
least half, or a warning on screen.  Real data: w8a (``../shared/data/w8a``, when present),
scikit-learn's bundled sets and the project's samples; synthetic sets for imbalance and n.
``--quick`` skips the 35,000-row sets.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file, make_classification
from sklearn.svm import SVC

from snacks_core import datasets
from snacks_core.app.sidebar import defaults_for
from snacks_core.datasets import make_dataset, split_dataset
from snacks_core.model import evaluation

W8A = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "w8a"
TEST_SIZE = 0.3
SVC_CS = (0.1, 1.0, 10.0, 100.0)


def problems(quick):
    for name in ("moons", "spirals", "xor", "checkerboard", "circles", "blobs"):
        n = 2000 if name == "checkerboard" else 400
        yield f"synthetic {name} {n}", datasets.make_synthetic(name, n, noise=0.2,
                                                               random_state=0)
    yield "synthetic moons 5,000", datasets.make_synthetic("moons", 5000, noise=0.2,
                                                           random_state=0)
    for name in datasets.BUNDLED:
        yield f"sklearn {name}", datasets.load_bundled(name)
    for name in datasets.sample_files():
        yield f"sample {name}", datasets.load_file(datasets.sample_data_dir() / name)
    X, y = make_classification(5000, 10, n_informative=5, weights=[0.9], random_state=0)
    yield "synthetic 5,000 × 10, 10 % positive", make_dataset(X, y, "imbalanced")
    if quick:
        return
    X, y = make_classification(50_000, 22, n_informative=10, weights=[0.9], flip_y=0.01,
                               class_sep=0.8, random_state=0)
    yield "synthetic 50,000 × 22, 10 % positive (ijcnn1's shape)", make_dataset(X, y, "ij")
    if W8A.exists():
        X, y = load_svmlight_file(str(W8A), n_features=300)
        yield "w8a 49,749 × 300 (real, 3 % positive)", make_dataset(X.tocsr(), y, "w8a")
    else:
        print(f"w8a skipped: {W8A} not found.")


def snacks_error(split, m, lam):
    params = {"kernel": "rbf", "gamma": "scale", "n_components": int(m), "lam": float(lam),
              "solver": "snacks", "sampling": "balanced", "max_epochs": 50,
              "class_weight": None, "random_state": 0}
    run = evaluation.train(split, params)
    metrics = run.metrics
    return metrics["test_error"], metrics["embedding_time"] + metrics["training_time"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 35,000-row sets")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print("| data | n train | majority | best SVC (C) | fixed m = 50, λ = 1e-3 | data-aware "
          "(m, λ) | captured | fit time: data-aware / fixed |")
    print("|---|---|---|---|---|---|---|---|")
    captured = []
    for label, dataset in problems(args.quick):
        defaults = defaults_for(dataset, TEST_SIZE)
        split = split_dataset(dataset, test_size=TEST_SIZE, scaling=defaults["scaling"],
                              random_state=0)
        y_train, y_test = split.y_train, split.y_test
        classes, counts = np.unique(y_train, return_counts=True)
        majority = float(np.mean(y_test != classes[np.argmax(counts)]))
        svc = {}
        for C in SVC_CS:
            model = SVC(C=C, gamma="scale").fit(split.X_train, y_train)
            svc[C] = float(np.mean(model.predict(split.X_test) != y_test))
        best_C = min(svc, key=svc.get)
        fixed, fixed_time = snacks_error(split, min(50, split.X_train.shape[0]), 1e-3)
        aware, aware_time = snacks_error(split, defaults["m"], defaults["lam"])
        gain = majority - svc[best_C]
        share = (majority - aware) / gain if gain > 0 else float("nan")
        captured.append(share)
        print(f"| {label} | {split.X_train.shape[0]:,} | {100 * majority:.2f} % | "
              f"{100 * svc[best_C]:.2f} % ({best_C:g}) | {100 * fixed:.2f} % | "
              f"{100 * aware:.2f} % ({defaults['m']}, {defaults['lam']:g}) | "
              f"{100 * share:.0f} % | {aware_time / fixed_time:.1f}× |", flush=True)
    shares = np.array(captured)
    shares = shares[np.isfinite(shares)]
    print(f"\nCaptured share of the kernel SVM's gain: min {100 * shares.min():.0f} %, "
          f"median {100 * np.median(shares):.0f} % over {shares.size} datasets "
          f"({time.strftime('%Y-%m-%d')}).")


if __name__ == "__main__":
    main()
