"""A data file by its name (CSV, Parquet, NumPy or LIBSVM, possibly compressed), text by
its content (:func:`sniff_format`), and the cache key of uploaded bytes."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from .columnar import load_parquet
from .csv_reader import load_csv
from .dataset import Dataset
from .libsvm_reader import load_libsvm
from .npy_reader import load_npy
from .streams import LOCAL_FILE_LIMITS, SUFFIX_COMPRESSION, ReadLimits, TextStream

# What sniff_format reads: the first bytes of text, and of them the first lines.
SNIFF_BYTES = 1 << 16
SNIFF_LINES = 50
# A LIBSVM feature: index:value (or a ranking file's qid:value).
_PAIR = re.compile(rb"^(qid|\d+):\S+$")


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


def sniff_format(source, *, name: str | None = None,
                 limits: ReadLimits = LOCAL_FILE_LIMITS) -> str:
    r"""'libsvm' or 'csv', from the content of a text file (bytes, path or file object;
    decompressed first when it is bz2, gzip or xz), whatever its name.

    LIBSVM rows are a label followed by blank-separated ``index:value`` pairs; text whose
    first lines have such pairs, and nothing else after their label, is LIBSVM, any other
    text CSV.

    Raises
    ------
    ValueError
        When the content is not text (a NUL byte in its first bytes).

    Examples
    --------
    >>> from snacks_core.datasets import sniff_format
    >>> sniff_format(b"+1 3:0.5 10:1\n-1 2:1\n"), sniff_format(b"x,y,label\n0.1,2,yes\n")
    ('libsvm', 'csv')
    """
    with TextStream(source, limits=limits, name=name) as text:
        head = text.read(SNIFF_BYTES)
        shown = text.name
    if b"\x00" in head:
        raise ValueError(f"{shown} is not a text file (it holds NUL bytes): upload a CSV or "
                         "LIBSVM text file, possibly compressed with gzip, bz2 or xz.")
    lines = head.splitlines()[:SNIFF_LINES]
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut short
    rows = [line.split(b"#", 1)[0].split() for line in lines]
    pairs = [token for row in rows for token in row[1:]]
    return "libsvm" if pairs and all(_PAIR.match(token) for token in pairs) else "csv"


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
