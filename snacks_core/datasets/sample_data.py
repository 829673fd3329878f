"""``sample_data/``: the small datasets the project generates itself and ships."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from snacks_core.datasets.synthetic import make_a9a_like, make_synthetic


def sample_data_dir() -> Path:
    """``sample_data/`` beside the package: small datasets the project generates itself."""
    return Path(__file__).resolve().parents[2] / "sample_data"


def sample_files(directory: str | os.PathLike | None = None) -> list[str]:
    """Names of the dataset files in ``sample_data/``.

    Examples
    --------
    >>> from snacks_core.datasets import sample_files
    >>> sample_files()
    ['a9a_small.svm', 'imbalanced_blobs.csv', 'two_spirals.csv']
    """
    directory = Path(directory) if directory else sample_data_dir()
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir()
                  if p.suffix in (".csv", ".svm", ".libsvm", ".bz2"))


def write_sample_data(directory: str | os.PathLike | None = None) -> list[Path]:
    """Regenerate the files of ``sample_data/`` (fixed seeds: byte-identical every time)."""
    directory = Path(directory) if directory else sample_data_dir()
    directory.mkdir(parents=True, exist_ok=True)
    written = []

    spirals = make_synthetic("spirals", 600, noise=0.15, random_state=7)
    path = directory / "two_spirals.csv"
    _write_csv(path, spirals.X, spirals.y, ("x1", "x2"))
    written.append(path)

    rng = np.random.default_rng(11)
    n_pos, n_neg = 60, 540
    positive = rng.normal(loc=(1.2, 1.0), scale=0.45, size=(n_pos, 2))
    negative = np.vstack([rng.normal(loc=(-0.8, 0.2), scale=0.8, size=(n_neg // 2, 2)),
                          rng.normal(loc=(1.6, -1.2), scale=0.6, size=(n_neg - n_neg // 2, 2))])
    X = np.vstack([positive, negative])
    y = np.array(["fraud"] * n_pos + ["ok"] * n_neg)
    order = rng.permutation(len(y))
    path = directory / "imbalanced_blobs.csv"
    _write_csv(path, X[order], y[order], ("amount", "frequency"))
    written.append(path)

    X_train, y_train, _, _ = make_a9a_like(3000, 1, random_state=3)
    path = directory / "a9a_small.svm"
    with path.open("w") as handle:
        for i in range(X_train.shape[0]):
            row = X_train[i]
            pairs = " ".join(f"{j + 1}:1" for j in row.indices)
            handle.write(f"{int(y_train[i]):+d} {pairs}\n")
    written.append(path)
    return written


def _write_csv(path, X, y, names):
    with Path(path).open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*names, "label"])
        for row, label in zip(X, y, strict=True):
            writer.writerow([f"{value:.6f}" for value in row] + [label])
