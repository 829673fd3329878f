"""A data file by its name (CSV, Parquet, NumPy or LIBSVM, possibly compressed), text by
its content (:func:`sniff_format`), and the cache key of uploaded bytes."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path

from snacks_core.datasets.columnar import load_parquet
from snacks_core.datasets.csv_reader import load_csv
from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.datasets.libsvm_reader import read_libsvm_files
from snacks_core.datasets.npy_reader import load_npy
from snacks_core.datasets.remote import local_paths
from snacks_core.datasets.streams import (
    LOCAL_FILE_LIMITS,
    SUFFIX_COMPRESSION,
    ReadLimits,
    TextStream,
    check_regular_file,
)

# What sniff_format reads: the first bytes of text, and of them the first lines.
SNIFF_BYTES = 1 << 16
SNIFF_LINES = 50
# A LIBSVM feature: index:value (or a ranking file's qid:value).
_PAIR = re.compile(rb"^(qid|\d+):\S+$")


def load_file(path: str | os.PathLike, *, label_column: str | int | None = None,
              n_features: int | None = None, index_base: str | int = "auto",
              purpose: str = "train", limits: ReadLimits = LOCAL_FILE_LIMITS,
              progress=None) -> Dataset:
    """A data file by its name: CSV (``.csv``, ``.tsv``), Parquet (``.parquet``, ``.pq``),
    NumPy (``.npy``) or LIBSVM (anything else); ``.bz2``, ``.gz`` and ``.xz`` text is
    decompressed as it is read.  A local file is bounded only by memory (``limits``).

    Parameters
    ----------
    path : path
    label_column : str or int, optional
        A CSV, Parquet or .npy file's label column (the last by default).
    n_features : int, optional
        The width expected (a model's): a LIBSVM file narrower than it gets empty columns, a
        wider one is an error naming the line; a CSV, Parquet or .npy file needs exactly
        that many feature columns.
    index_base : {'auto', 0, 1}, default='auto'
        A LIBSVM file's first feature index (:func:`~snacks_core.datasets.load_libsvm`).
    purpose : {'train', 'predict'}, default='train'
        'train' needs two classes or more; 'predict' accepts one label, or none (a CSV of
        exactly ``n_features`` columns).
    limits, progress
        As :func:`~snacks_core.datasets.load_libsvm` takes them.

    Examples
    --------
    >>> from snacks_core.datasets import load_file, sample_data_dir
    >>> spirals = load_file(sample_data_dir() / "two_spirals.csv")
    >>> spirals.X.shape, spirals.feature_names, spirals.class_counts()
    ((600, 2), ('x1', 'x2'), {-1: 312, 1: 288})
    >>> a9a = load_file(sample_data_dir() / "a9a_small.svm")
    >>> a9a.X.format, a9a.X.shape, a9a.index_base
    ('csr', (3000, 123), 1)
    """
    return load_files([path], label_column=label_column, n_features=n_features,
                      index_base=index_base, purpose=purpose, limits=limits,
                      progress=progress)[0]


def load_files(paths, *, label_column: str | int | None = None, n_features: int | None = None,
               index_base: str | int = "auto", purpose: str | Sequence[str] = "train",
               limits: ReadLimits = LOCAL_FILE_LIMITS, progress=None) -> list[Dataset]:
    """Several data files read as one run (training, test and prediction files), each as
    :func:`load_file` reads it, with one feature index base and one width for all (as
    scikit-learn's ``load_svmlight_files``).

    The LIBSVM files' base, when ``index_base`` is 'auto', is decided once over all of them:
    zero-based when any holds an index 0, else one-based; it is every dataset's
    ``index_base``.  Their width is ``n_features``, or the widest file's; CSV, Parquet and
    .npy files must all have that many feature columns.

    Parameters
    ----------
    paths : sequence of paths
        Local paths, or URLs fsspec reads (``https://``, ``s3://``, ``gs://``...: each
        copied to a temporary file and read as a local one; fsspec is an optional
        dependency, the ``distributed`` extra).
    purpose : {'train', 'predict'} or a sequence of them, default='train'
        One for all files, or one per file: e.g. ``('train', 'predict')`` for a training
        file and a test file that may hold a single class.
    label_column, n_features, index_base, limits, progress
        As :func:`load_file` takes them.

    Returns
    -------
    list of Dataset
        One per path, in order.

    Examples
    --------
    >>> from snacks_core.datasets import load_files, sample_data_dir
    >>> train, test = load_files([sample_data_dir() / "a9a_small.svm"] * 2,
    ...                          purpose=("train", "predict"))
    >>> train.X.shape == test.X.shape, test.index_base
    (True, 1)
    """
    purposes = [purpose] * len(paths) if isinstance(purpose, str) else list(purpose)
    if len(purposes) != len(paths):
        raise ValueError(f"{len(paths)} files but {len(purposes)} purposes; give one purpose, "
                         "or one per file.")
    # A URL is read from a local copy, as a file on disk (snacks_core.datasets.remote).
    with local_paths(paths) as local:
        return _read_local_files(local, purposes, label_column=label_column,
                                 n_features=n_features, index_base=index_base, limits=limits,
                                 progress=progress)


def _read_local_files(paths, purposes, *, label_column, n_features, index_base, limits,
                      progress):
    """:func:`load_files` of local paths, with one purpose per path."""
    for path in paths:
        check_regular_file(path)  # before any is opened: a FIFO would block, /dev/zero not end
    kinds = [file_kind(path) for path in paths]
    libsvm = [i for i, kind in enumerate(kinds) if kind == "libsvm"]
    if label_column is not None and libsvm:
        raise ValueError(f"{Path(paths[libsvm[0]]).name} is read as a LIBSVM file (the label "
                         "is the first field of each line): a label column only applies to "
                         "CSV, Parquet and .npy files.")
    datasets = [None] * len(paths)
    dense = [i for i in range(len(paths)) if i not in libsvm]
    for i in dense:
        reader = {"csv": load_csv, "parquet": load_parquet, "npy": load_npy}[kinds[i]]
        options = {"n_features": n_features} if kinds[i] == "csv" else {}
        datasets[i] = reader(paths[i], label_column=label_column, limits=limits,
                             progress=progress, purpose=purposes[i], **options)
        n_features = _check_width(datasets[i], n_features)
    if libsvm:
        read, base = read_libsvm_files([paths[i] for i in libsvm], n_features=n_features,
                                       index_base=index_base, limits=limits, progress=progress)
        for i, (X, y, name) in zip(libsvm, read, strict=True):
            datasets[i] = make_dataset(X, y, name, description="LIBSVM file.",
                                       file_format="libsvm", index_base=base,
                                       purpose=purposes[i])
    return datasets


def _check_width(dataset, n_features):
    """The width every file of a run has: the first dense file's, unless given."""
    if n_features is not None and dataset.n_features != n_features:
        raise ValueError(f"{dataset.name} has {dataset.n_features:,} feature columns where "
                         f"{n_features:,} are expected (the model's, or the other files').")
    return dataset.n_features


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
    with TextStream(source, limits=limits, name=name, peek=True) as text:
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
