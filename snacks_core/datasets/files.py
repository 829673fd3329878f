"""A data file by its name (CSV or LIBSVM, possibly compressed), and the cache key of
uploaded bytes."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .csv_reader import load_csv
from .dataset import Dataset
from .libsvm_reader import load_libsvm
from .text import SUFFIX_COMPRESSION


def load_file(path, *, label_column=None) -> Dataset:
    """A CSV (``.csv``, ``.tsv``) or LIBSVM (anything else) file by its extension;
    ``.bz2``, ``.gz`` and ``.xz`` files are decompressed as they are read."""
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
    """A short content hash: the cache key of uploaded data."""
    return hashlib.sha256(raw).hexdigest()[:16]
