"""Class-balanced against uniform landmarks on real data, with exact SVC as the reference.

``PYTHONPATH=. python benchmarks/bench_landmarks.py [--seeds 5]`` fits ``SnacksClassifier``
at its defaults with ``sampling='balanced'`` (the default) and ``sampling='uniform'`` (the
Snacks paper's) for several seeds on real data: w8a (``../shared/data/w8a``, the 80/20
split of ``bench_paper.py``; skipped when absent) and scikit-learn's bundled sets (digits
as ten classes and as "8 against the rest", breast cancer), and one ``sklearn.svm.SVC``
with the same γ and C on each.  Prints the mean ± standard deviation of the test error
over the seeds, the difference to SVC, and the mean fit time of each sampling.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from snacks_core import SnacksClassifier
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.solvers.objective import lam_to_C

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_paper import W8A_LAM, M, load_w8a  # noqa: E402

SAMPLINGS = ("balanced", "uniform")


def problems():
    """(name, split, m, λ) for each real dataset."""
    split = load_w8a(quick=False)
    if split is not None:
        yield "w8a (3.0 % positive)", split, M, W8A_LAM
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    yield "digits, 10 classes", train_test_split(X, y, test_size=0.3, stratify=y,
                                                 random_state=0), 200, 1e-4
    eight = np.where(y == 8, 1, -1)
    yield "digits, 8 against the rest (9.7 % positive)", train_test_split(
        X, eight, test_size=0.3, stratify=eight, random_state=0), 100, 1e-4
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    yield "breast cancer (37 % malignant)", train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0), 50, 1e-3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    print("| data | m | exact SVC test error % | sampling | test error % (mean ± sd over "
          f"{args.seeds} seeds) | − SVC, points | fit s (mean) |")
    print("|---|---|---|---|---|---|---|")
    for name, (X, X_test, y, y_test), m, lam in problems():
        gamma = resolve_gamma("scale", X)
        svc = SVC(C=lam_to_C(lam, X.shape[0]), gamma=gamma).fit(X, y)
        svc_error = 100 * np.mean(svc.predict(X_test) != y_test)
        # numba's compiled code loaded before any clock.
        SnacksClassifier(gamma=gamma, n_components=20, lam=lam).fit(X[:500], y[:500])
        for sampling in SAMPLINGS:
            errors, seconds = [], []
            for seed in range(args.seeds):
                start = time.perf_counter()
                model = SnacksClassifier(gamma=gamma, n_components=m, lam=lam,
                                         sampling=sampling, random_state=seed).fit(X, y)
                seconds.append(time.perf_counter() - start)
                errors.append(100 * np.mean(model.predict(X_test) != y_test))
            print(f"| {name} | {m} | {svc_error:.2f} | {sampling} | {np.mean(errors):.2f} ± "
                  f"{np.std(errors):.2f} | {np.mean(errors) - svc_error:+.2f} | "
                  f"{np.mean(seconds):.2f} |", flush=True)


if __name__ == "__main__":
    main()
