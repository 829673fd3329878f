"""A data file by its name (CSV, Parquet, NumPy or LIBSVM, possibly compressed), and the
cache key of uploaded bytes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .columnar import load_parquet
from .csv_reader import load_csv
from .dataset import Dataset
from .libsvm_reader import load_libsvm
from .npy_reader import load_npy
from .text import LOCAL_FILE_LIMITS, SUFFIX_COMPRESSION, ReadLimits


def load_file(path: str | os.PathLike, *, label_column: str | int | None = None,
              limits: ReadLimits = LOCAL_FILE_LIMITS, progress=None) -> Dataset:
    """A data file by its name: CSV (``.csv``, ``.tsv``), Parquet (``.parquet``, ``.pq``),
    NumPy (``.npy``) or LIBSVM (anything else); ``.bz2``, ``.gz`` and ``.xz`` text is
    decompressed as it is read.  A local file is bounded only by memory (``limits``).

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
    kind = file_kind(path)
    options = {"limits": limits, "progress": progress}
    if kind == "csv":
        return load_csv(path, label_column=label_column, **options)
    if kind == "parquet":
        return load_parquet(path, label_column=label_column, **options)
    if kind == "npy":
        return load_npy(path, label_column=label_column, **options)
    if label_column is not None:
        raise ValueError(f"{Path(path).name} is read as a LIBSVM file (the label is the first "
                         "field of each line): a label column only applies to CSV, Parquet "
                         "and .npy files.")
    return load_libsvm(path, **options)


def file_kind(path: str | os.PathLike) -> str:
    """'csv', 'parquet', 'npy' or 'libsvm', from the file's name."""
    suffixes = [suffix.lower() for suffix in Path(path).suffixes]
    if suffixes and suffixes[-1] in SUFFIX_COMPRESSION:
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    return {".csv": "csv", ".tsv": "csv", ".parquet": "parquet", ".pq": "parquet",
            ".npy": "npy"}.get(last, "libsvm")


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
