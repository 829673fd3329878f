"""A data file by its name (CSV or LIBSVM, possibly compressed), and the cache key of
uploaded bytes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .csv_reader import load_csv
from .dataset import Dataset
from .libsvm_reader import load_libsvm
from .text import SUFFIX_COMPRESSION


def load_file(path: str | os.PathLike, *, label_column: str | int | None = None) -> Dataset:
    """A CSV (``.csv``, ``.tsv``) or LIBSVM (anything else) file by its extension;
    ``.bz2``, ``.gz`` and ``.xz`` files are decompressed as they are read.

    Examples
    --------
    >>> from snacks_core.datasets import load_file, sample_data_dir
    >>> spirals = load_file(sample_data_dir() / "two_spirals.csv")
    >>> spirals.X.shape, spirals.feature_names, spirals.class_counts()
    ((600, 2), ('x1', 'x2'), {-1: 312, 1: 288})
    >>> a9a = load_file(sample_data_dir() / "a9a_small.svm")
    >>> a9a.X.format, a9a.X.shape
    ('csr', (3000, 123))
    """
    suffixes = Path(path).suffixes
    if suffixes and suffixes[-1] in SUFFIX_COMPRESSION:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in (".csv", ".tsv"):
        return load_csv(path, label_column=label_column)
    if label_column is not None:
        raise ValueError(f"{Path(path).name} is read as a LIBSVM file (the label is the first "
                         "field of each line): a label column only applies to CSV files.")
    return load_libsvm(path)


def fingerprint(raw: bytes) -> str:
    """A short content hash: the cache key of uploaded data.

    Examples
    --------
    >>> from snacks_core.datasets import fingerprint
    >>> fingerprint(b"1 1:1")
    '...'
    >>> len(fingerprint(b"1 1:1")), fingerprint(b"1 1:1") == fingerprint(b"1 1:1")
    (16, True)
    """
    return hashlib.sha256(raw).hexdigest()[:16]
