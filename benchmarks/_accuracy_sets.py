"""The data sets of the accuracy benchmarks (``bench_accuracy.py``, ``bench_app_fits.py
--workload defaults``): every real set at hand (``../shared/data``: w8a, pendigits;
scikit-learn's digits; the project's ``sample_data``) and one generated many-class set (26
classes shaped like the UCI letters set, 16 features: a look-alike, named as one).

Only NumPy, pandas and scikit-learn are imported here, so that a child process timing
another version of ``snacks_core`` loads the same data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits, load_svmlight_file, make_classification

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SAMPLES = ROOT / "sample_data"


def _csv(path, label):
    frame = pd.read_csv(path)
    return frame.drop(columns=label).to_numpy(np.float64), frame[label].to_numpy()


def datasets():
    """``name → (X, y, test share)`` loaders of every set at hand (real first)."""
    sets = {}
    if (SHARED / "w8a").exists():
        sets["w8a (real)"] = lambda: (*load_svmlight_file(str(SHARED / "w8a"),
                                                          n_features=300), 0.2)
    if (SHARED / "pendigits.csv").exists():
        sets["pendigits (real, 10 classes)"] = lambda: (
            *_csv(SHARED / "pendigits.csv", "class"), 0.3)
    sets["digits (real, 10 classes)"] = lambda: (*load_digits(return_X_y=True), 0.3)
    sets["a9a_small (sample)"] = lambda: (*load_svmlight_file(str(SAMPLES / "a9a_small.svm")),
                                          0.3)
    for name in ("imbalanced_blobs", "two_spirals"):
        path = SAMPLES / f"{name}.csv"
        sets[f"{name} (sample)"] = lambda path=path: (*_csv(path, pd.read_csv(
            path, nrows=0).columns[-1]), 0.3)
    sets["letters-like (generated, 26 classes)"] = lambda: (*make_classification(
        20_000, 16, n_informative=12, n_redundant=2, n_classes=26, n_clusters_per_class=1,
        class_sep=1.5, random_state=0), 0.2)
    return sets


def selected(sets, prefixes):
    """The sets whose names start with one of ``prefixes`` (all without any)."""
    return {name: load for name, load in sets.items()
            if not prefixes or any(name.startswith(p) for p in prefixes)}
