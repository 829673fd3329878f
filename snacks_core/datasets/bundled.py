"""Datasets bundled with scikit-learn, labelled as the papers use them."""

from __future__ import annotations

import numpy as np

from snacks_core.datasets.dataset import Dataset, make_dataset

BUNDLED = ("breast_cancer", "digits7", "wine", "iris")


def load_bundled(name: str) -> Dataset:
    """scikit-learn's bundled datasets; ``digits7`` is the paper's mnist-bin protocol (7 vs
    rest).

    Examples
    --------
    >>> from snacks_core.datasets import BUNDLED, load_bundled
    >>> BUNDLED
    ('breast_cancer', 'digits7', 'wine', 'iris')
    >>> load_bundled("digits7").class_counts()
    {-1: 1618, 1: 179}
    """
    from sklearn import datasets

    if name not in BUNDLED:
        raise ValueError(f"unknown bundled dataset {name!r}; choose one of {BUNDLED}.")
    if name == "digits7":
        bunch = datasets.load_digits()
        return make_dataset(bunch.data, np.where(bunch.target == 7, 1, -1), "digits7",
                            feature_names=[f"pixel{j}" for j in range(64)],
                            description="8 × 8 digits, 7 against the rest (the paper's mnist-bin "
                            "protocol): imbalanced, report F1.")
    loader = {"breast_cancer": datasets.load_breast_cancer, "wine": datasets.load_wine,
              "iris": datasets.load_iris}[name]
    bunch = loader()
    labels = np.asarray(bunch.target_names)[bunch.target]
    about = {"breast_cancer": "Wisconsin breast cancer: 30 features, malignant or benign.",
             "wine": "Wine cultivars: 13 chemical features, three classes.",
             "iris": "Iris flowers: 4 features, three classes (one-vs-rest)."}[name]
    return make_dataset(bunch.data, labels, name, feature_names=bunch.feature_names,
                        description=about)
