"""Datasets: synthetic generators, bundled and file datasets, all validated on the way in.

Every source returns a :class:`Dataset`: a numeric ``X`` (dense array or CSR matrix), labels
``y`` (any two or more values), names, and optionally a predefined test split.  Files are
parsed by our own readers so that an error names the line and says what to do; nothing is
unpickled or evaluated.
"""

from __future__ import annotations

import bz2
import csv
import decimal
import gzip
import hashlib
import http.client
import io
import itertools
import lzma
import math
import operator
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..validation import check_data, check_fits_in_memory

SYNTHETIC = ("moons", "circles", "xor", "checkerboard", "spirals", "blobs", "classification")
BUNDLED = ("breast_cancer", "digits7", "wine", "iris")
SCALINGS = ("standard", "minmax", "none")

# Refuse generated datasets larger than this: the app and the tests stay responsive.
MAX_SYNTHETIC_SAMPLES = 200_000

LIBSVM_BASE_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"


@dataclass(frozen=True)
class LibsvmSource:
    """A public LIBSVM binary dataset: its train file, optional test file and width."""

    train: str
    test: str | None
    n_features: int
    about: str


LIBSVM_DATASETS = {
    "a9a": LibsvmSource("a9a", "a9a.t", 123, "Adult census income, 32,561 + 16,281 rows"),
    "w8a": LibsvmSource("w8a", "w8a.t", 300, "web page keywords, 49,749 + 14,951 rows"),
    "ijcnn1": LibsvmSource("ijcnn1.bz2", "ijcnn1.t.bz2", 22,
                           "IJCNN 2001 challenge, 49,990 + 91,701 rows"),
    "cod-rna": LibsvmSource("cod-rna", "cod-rna.t", 8, "non-coding RNA, 59,535 + 271,617 rows"),
    "skin_nonskin": LibsvmSource("skin_nonskin", None, 3, "skin pixels (RGB), 245,057 rows"),
    "mushrooms": LibsvmSource("mushrooms", None, 112, "edible or poisonous, 8,124 rows"),
    "phishing": LibsvmSource("phishing", None, 68, "phishing web sites, 11,055 rows"),
    "madelon": LibsvmSource("madelon", "madelon.t", 500, "NIPS 2003 challenge, 2,000 + 600 rows"),
}


@dataclass(frozen=True, eq=False)
class Dataset:
    """Features, labels and names; ``X_test``/``y_test`` when the source fixes a test split.

    ``file_format`` ('csv' or 'libsvm') and ``label_column`` (a CSV's label column: its name,
    or its index when the file has no header) say how to read a file dataset again.
    """

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    name: str
    feature_names: Sequence = ()
    description: str = ""
    X_test: np.ndarray | sp.csr_matrix | None = None
    y_test: np.ndarray | None = None
    file_format: str | None = None
    label_column: str | int | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def classes(self) -> np.ndarray:
        return np.unique(self.y)

    def class_counts(self) -> dict:
        """Number of rows of each class in ``y`` (the training part)."""
        values, counts = np.unique(self.y, return_counts=True)
        return {value.item(): int(count) for value, count in zip(values, counts)}


@dataclass(frozen=True, eq=False)
class Split:
    """A train/test split ready for a model: scaled, optionally projected to 2-D."""

    X_train: np.ndarray | sp.csr_matrix
    y_train: np.ndarray
    X_test: np.ndarray | sp.csr_matrix
    y_test: np.ndarray
    name: str
    feature_names: Sequence
    projection: str | None = None
    # The fitted scaler and 2-D projection, in the order applied: a model trained on this
    # split predicts on raw rows through make_pipeline(*preprocessing, model).
    preprocessing: tuple = ()

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]


def make_dataset(X, y, name, *, feature_names=None, description="", X_test=None,
                 y_test=None, file_format=None, label_column=None) -> Dataset:
    """A validated :class:`Dataset`: numeric finite X, one label per row, two classes or more."""
    X = check_data(X)
    y = _check_labels(y, X.shape[0], name)
    if X_test is not None:
        X_test = check_data(X_test, name="X_test")
        if X_test.shape[1] != X.shape[1]:
            raise ValueError(f"{name}: the test part has {X_test.shape[1]} features, the training "
                             f"part {X.shape[1]}; both need the same columns.")
        y_test = _check_labels(y_test, X_test.shape[0], f"{name} (test part)", min_classes=1)
    if feature_names is None or len(feature_names) != X.shape[1]:
        feature_names = FeatureNames(X.shape[1])
    elif not isinstance(feature_names, FeatureNames):
        feature_names = tuple(str(f) for f in feature_names)
    return Dataset(X, y, name, feature_names, description, X_test, y_test, file_format,
                   label_column)


def _check_labels(y, n_rows, name, min_classes=2):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise ValueError(f"{name}: {n_rows} rows of features but labels of shape {y.shape}; "
                         "give one label per row.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name}: some labels are NaN or infinite; remove those rows.")
    if y.dtype.kind == "O":
        y = y.astype(str)
    if np.unique(y).shape[0] < min_classes:
        raise ValueError(f"{name}: all rows have the same label ({y[0].item()!r}); a "
                         "classifier needs at least two classes. Check the label column.")
    return y


# ---------------------------------------------------------------------------- synthetic data


def make_synthetic(name, n_samples=400, *, noise=0.2, random_state=0, n_features=10,
                   positive_fraction=0.5) -> Dataset:
    """A synthetic dataset by name; two classes are labelled −1/+1, ``blobs`` has three.

    Parameters
    ----------
    name : {'moons', 'circles', 'xor', 'checkerboard', 'spirals', 'blobs', 'classification'}
    n_samples : int
        Number of rows, 10 to 200,000.
    noise : float
        Standard deviation of the jitter added to 2-D points (label-flip rate of
        ``classification``, spread of ``blobs``), 0 to 2.
    n_features, positive_fraction
        Width and class balance of ``classification`` (a make_classification-style problem).
    """
    if name not in SYNTHETIC:
        raise ValueError(f"unknown synthetic dataset {name!r}; choose one of {SYNTHETIC}.")
    if (isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer))
            or not 10 <= n_samples <= MAX_SYNTHETIC_SAMPLES):
        raise ValueError(f"n_samples must be an integer from 10 to {MAX_SYNTHETIC_SAMPLES:,}, "
                         f"got {n_samples!r}.")
    if not np.isfinite(noise) or not 0 <= noise <= 2:
        raise ValueError(f"noise must be between 0 and 2, got {noise!r}.")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    if name == "classification":
        return _make_classification(n, noise, rng, n_features, positive_fraction)
    if name == "blobs":
        centers = np.array([[-1.5, -1.0], [1.5, -1.0], [0.0, 1.6]])
        y = rng.integers(0, 3, size=n)
        X = centers[y] + rng.normal(scale=0.35 + noise, size=(n, 2))
        return make_dataset(X, y, "blobs", feature_names=("x1", "x2"),
                            description="Three Gaussian blobs: a multiclass (one-vs-rest) problem.")
    X, positive = _TWO_D[name](n, rng)
    X = X + rng.normal(scale=noise * _NOISE_SCALE[name], size=X.shape)
    return make_dataset(X, np.where(positive, 1, -1), name, feature_names=("x1", "x2"),
                        description=_DESCRIPTIONS[name])


def _moons(n, rng):
    upper = rng.random(n) < 0.5
    t = rng.uniform(0.0, np.pi, size=n)
    X = np.column_stack([np.cos(t), np.sin(t)])
    X[~upper] = np.column_stack([1.0 - np.cos(t[~upper]), 0.5 - np.sin(t[~upper])])
    return X, ~upper


def _circles(n, rng):
    inner = rng.random(n) < 0.5
    t = rng.uniform(0.0, 2.0 * np.pi, size=n)
    radius = np.where(inner, 0.5, 1.0)
    return np.column_stack([radius * np.cos(t), radius * np.sin(t)]), inner


def _xor(n, rng):
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    # Keep a thin gap along the axes so that the clean problem is separable.
    X += 0.1 * np.sign(X)
    return X, X[:, 0] * X[:, 1] > 0


def _checkerboard(n, rng):
    X = rng.uniform(-2.0, 2.0, size=(n, 2))
    return X, (np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0


def _spirals(n, rng):
    first = rng.random(n) < 0.5
    t = np.sqrt(rng.random(n)) * 3.0 * np.pi
    angle = t + np.where(first, 0.0, np.pi)
    X = np.column_stack([t * np.cos(angle), t * np.sin(angle)]) / np.pi
    return X, first


_TWO_D = {"moons": _moons, "circles": _circles, "xor": _xor, "checkerboard": _checkerboard,
          "spirals": _spirals}
# Jitter per unit of ``noise``, relative to each shape's size.
_NOISE_SCALE = {"moons": 1.0, "circles": 0.5, "xor": 0.5, "checkerboard": 0.5, "spirals": 0.6}
_DESCRIPTIONS = {
    "moons": "Two interleaving half circles: the classic non-linear toy problem.",
    "circles": "A small circle inside a large one: no line separates them, an RBF kernel does.",
    "xor": "Four quadrants, opposite ones share a class: the XOR problem no linear model solves.",
    "checkerboard": "A 4 × 4 checkerboard: many small regions, needs a narrow kernel and many landmarks.",
    "spirals": "Two interleaved spirals: hard for wide kernels, needs landmarks along both arms.",
}


def _make_classification(n, noise, rng, n_features, positive_fraction):
    from sklearn.datasets import make_classification

    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) \
            or not 2 <= n_features <= 1000:
        raise ValueError(f"n_features must be an integer from 2 to 1000, got {n_features!r}.")
    if not 0.01 <= positive_fraction <= 0.99:
        raise ValueError(f"positive_fraction must be between 0.01 and 0.99, got {positive_fraction!r}.")
    informative = max(2, n_features // 2)
    X, y = make_classification(
        n_samples=n, n_features=n_features, n_informative=informative,
        n_redundant=min(n_features - informative, 2), n_clusters_per_class=2,
        weights=[1.0 - positive_fraction], flip_y=min(noise, 1.0) / 4.0,
        random_state=int(rng.integers(0, 2**31 - 1)))
    return make_dataset(X, np.where(y == 1, 1, -1), "classification",
                        description=f"make_classification-style: {informative} informative of "
                        f"{n_features} features, {positive_fraction:.0%} positives.")


# ---------------------------------------------------------------------------- bundled data


def load_bundled(name) -> Dataset:
    """scikit-learn's bundled datasets; ``digits7`` is the paper's mnist-bin protocol (7 vs rest)."""
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
             "wine": "Wine cultivars: 13 chemical features, three classes (one-vs-rest).",
             "iris": "Iris flowers: 4 features, three classes (one-vs-rest)."}[name]
    return make_dataset(bunch.data, labels, name, feature_names=bunch.feature_names,
                        description=about)


# ---------------------------------------------------------------------------- files


# Limits on what a file can make us read, allocate or compute (README, "Limits").  They hold
# for every reader and for uploads to the app, where a few crafted bytes must not exhaust
# the server: text after decompression, rows, feature columns (LIBSVM indices) and classes.
MAX_TEXT_BYTES = 256 * 2**20
MAX_ROWS = 5_000_000
MAX_FEATURES = 2**21
MAX_CLASSES = 1000
# A label names a class; longer text is a wrong column or a crafted file.
_MAX_LABEL_CHARS = 200
# Lines longer than this are split into tokens lazily, not into one list of strings.
_LONG_LINE = 1 << 20
_READ_CHUNK = 1 << 20
# Rows between two checks of the arrays read so far against the memory plan.
_PLAN_EVERY = 1 << 16
_MAGIC = ((b"BZh", "bz2"), (b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"))
_SUFFIX_COMPRESSION = {".bz2": "bz2", ".gz": "gzip", ".xz": "xz"}
# Bytes counted in a text before parsing: lines, LIBSVM pairs, CSV separators.
_COUNTED = (b"\n", b":", b",", b";", b"\t")


class FeatureNames(Sequence):
    """``x1, x2, …`` made on demand: a LIBSVM file may have millions of columns."""

    def __init__(self, n_features):
        self._n = int(n_features)

    def __len__(self):
        return self._n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        i = operator.index(index)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"feature {index} of {self._n}")
        return f"x{i + 1}"

    def __eq__(self, other):
        if isinstance(other, FeatureNames):
            return self._n == other._n
        if isinstance(other, (tuple, list)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self):
        return hash((FeatureNames, self._n))

    def __repr__(self):
        return f"FeatureNames({self._n})"


class _ReadError(ValueError):
    """A stream could not deliver its text: corrupt, cut short, or over the size limit."""


class _CappedReader:
    """Reads a (possibly decompressing) stream, refusing to deliver more than ``max_bytes``."""

    def __init__(self, inner, compression, max_bytes):
        self._inner, self._compression, self._max_bytes = inner, compression, max_bytes
        self.count = 0

    def read(self, size):
        try:
            data = self._inner.read(size)
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as exc:
            what = (f"the {self._compression} data is corrupt or cut short"
                    if self._compression else "the file could not be read")
            raise _ReadError(f"{what} ({exc}) after {self.count:,} bytes of text") from None
        self.count += len(data)
        if self.count > self._max_bytes:
            after = " after decompression" if self._compression else ""
            raise _ReadError(f"the text is larger than {self._max_bytes / 2**20:.0f} MiB{after} "
                             "(snacks_core.datasets.MAX_TEXT_BYTES); use a smaller file or a "
                             "subsample, or pass max_bytes= to the reader")
        return data


class _TextFile:
    """The text of a path, bytes or file object, decompressed (bz2, gzip, xz) in a stream that
    stops at ``max_bytes``, then read line by line as UTF-8; errors name the file and line.

    ``count(b":")`` and ``n_lines`` bound what a reader will allocate before it starts.
    """

    def __init__(self, source, max_bytes=MAX_TEXT_BYTES, name=None):
        binary, self.name, owned = _binary_stream(source, max_bytes)
        self.name = name or self.name
        self._counts = dict.fromkeys(_COUNTED, 0)
        try:
            text, ends_line = self._decompress(binary, max_bytes, owned)
        finally:
            for stream in owned:
                stream.close()
        self.n_lines = self._counts[b"\n"] + (not ends_line)
        self._text = io.TextIOWrapper(text, encoding="utf-8-sig", newline="")
        self.line = 0

    def _decompress(self, binary, max_bytes, owned):
        head = binary.read(6)
        if isinstance(head, str):
            raise ValueError(f"{self.name}: open the file in binary mode ('rb').")
        if head.startswith(b"PK\x03\x04"):
            raise ValueError(f"{self.name} is a ZIP archive; unzip it and load the CSV or "
                             "LIBSVM file inside.")
        compression = next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
        expected = _SUFFIX_COMPRESSION.get(Path(self.name).suffix.lower())
        if expected and compression != expected:
            raise ValueError(f"{self.name} is not {expected}-compressed data (it does not start "
                             f"as {expected} files do); the file is damaged or misnamed.")
        binary = _Prefixed(head, binary)
        inner = {"bz2": lambda: bz2.BZ2File(binary), "gzip": lambda: gzip.GzipFile(fileobj=binary),
                 "xz": lambda: lzma.LZMAFile(binary)}.get(compression, lambda: binary)()
        if inner is not binary:
            owned.insert(0, inner)
        reader = _CappedReader(inner, compression, max_bytes)
        # The text is kept (at most max_bytes) and counted as it comes: the counts bound
        # what the readers will allocate before they parse anything.
        text, last = io.BytesIO(), b"\n"
        while True:
            try:
                chunk = reader.read(_READ_CHUNK)
            except _ReadError as exc:
                line = self._counts[b"\n"] + 1
                raise ValueError(f"{self.name}, line {line:,}: {exc}.") from None
            if not chunk:
                text.seek(0)
                return text, last == b"\n"
            for pattern in self._counts:
                self._counts[pattern] += chunk.count(pattern)
            text.write(chunk)
            last = chunk[-1:]

    def count(self, pattern: bytes) -> int:
        """Occurrences of ``pattern`` (one of ``_COUNTED``) in the text."""
        return self._counts[pattern]

    def check_rows(self, max_rows):
        """Refuse, before parsing, text with more lines than ``max_rows`` (+ a header)."""
        if self.n_lines > max_rows + 1:
            raise ValueError(f"{self.name} has {self.n_lines:,} lines, more than the limit of "
                             f"{max_rows:,} rows (snacks_core.datasets.MAX_ROWS); use a "
                             "subsample, or pass max_rows= to the reader.")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._text.close()
        return False

    def lines(self):
        """Every line (with its end), counted in ``self.line``."""
        while True:
            try:
                line = self._text.readline()
            except UnicodeDecodeError:
                raise ValueError(f"{self.name}, line {self.line + 1}: not UTF-8 text; save the "
                                 "file as plain text (CSV or LIBSVM format).") from None
            if not line:
                return
            self.line += 1
            yield line


class _Prefixed(io.RawIOBase):
    """A binary stream with its first bytes, already read to detect the format, put back."""

    def __init__(self, head, stream):
        self._head, self._stream = head, stream

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n], self._head = self._head[:n], self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def read(self, size=-1):
        if size is None or size < 0:
            return self.readall()
        head, self._head = self._head[:size], self._head[size:]
        return head + self._stream.read(size - len(head)) if size > len(head) else head


def _binary_stream(source, max_bytes):
    """(binary stream, display name, streams to close) of a path, bytes or file object."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            stream = path.open("rb")
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror or exc}.") from None
        return stream, path.name, [stream]
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(source), "data", []
    name = Path(str(getattr(source, "name", None) or "data")).name
    if isinstance(source, io.TextIOBase):
        return io.BytesIO(source.read(max_bytes + 1).encode("utf-8")), name, []
    return source, name, []


def csv_columns(source, *, max_bytes=MAX_TEXT_BYTES) -> list[str]:
    """Column names of a CSV file (its header, or ``column 1 …`` when it has none)."""
    with _TextFile(source, max_bytes) as text:
        first = next(_csv_rows(text, text.name), None)
    if first is None:
        return []
    if _is_header(first[1]):
        return [cell.strip() for cell in first[1]]
    return [f"column {j + 1}" for j in range(len(first[1]))]


def _csv_rows(text, name):
    """(line number, fields) for each non-empty line of a :class:`_TextFile`."""
    lines = text.lines()
    head, size = [], 0
    for line in lines:
        head.append(line)
        size += len(line)
        if size >= 4096:
            break
    try:
        dialect = csv.Sniffer().sniff("".join(head)[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(itertools.chain(head, lines), dialect)
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ValueError(f"{name}, line {reader.line_num}: {exc}. Check the separator and "
                             "the quotes (an unclosed quote swallows the lines after it)."
                             ) from None
        if fields and any(cell.strip() for cell in fields):
            yield reader.line_num, fields


def _is_number(cell) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_header(fields) -> bool:
    return not all(_is_number(cell) for cell in fields if cell.strip())


def _check_growth(name, line, n_bytes):
    """The memory plan of a reader: what it holds so far, and the matrix built from it."""
    check_fits_in_memory(2 * n_bytes, f"Reading {name} (up to line {line:,})",
                         "Use a smaller file or a subsample of its rows.")


class _Labels:
    """One code per row and the distinct label texts (at most MAX_CLASSES of them)."""

    def __init__(self, name):
        self.name, self.codes, self.texts = name, array("q"), {}

    def __len__(self):
        return len(self.codes)

    def add(self, text, line):
        code = self.texts.get(text)
        if code is None:
            if len(text) > _MAX_LABEL_CHARS:
                raise ValueError(f"{self.name}, line {line}: the label is {len(text):,} "
                                 "characters long; a label names a class. Check the label "
                                 "column.")
            if len(self.texts) >= MAX_CLASSES:
                raise ValueError(f"{self.name}, line {line}: more than {MAX_CLASSES:,} "
                                 "different labels; a classifier needs a column of class "
                                 "labels. Check the label column.")
            code = self.texts[text] = len(self.texts)
        self.codes.append(code)

    def values(self):
        classes = _parse_labels(list(self.texts), self.name)
        return classes[np.frombuffer(self.codes, dtype=np.int64)]


def load_csv(source, *, label_column=None, name=None, max_bytes=MAX_TEXT_BYTES,
             max_rows=MAX_ROWS) -> Dataset:
    """A dataset from a CSV file: numeric feature columns and one label column.

    Parameters
    ----------
    source : path, bytes or binary file object
        Comma, semicolon or tab separated; a header row is detected and optional; bz2,
        gzip and xz files are decompressed as they are read.
    label_column : str or int, optional
        Name (with a header) or 0-based index of the label column; the last column by default.
        Labels may be numbers or words.
    max_bytes, max_rows : int
        Refuse files with more text (after decompression) or more rows than this.

    Raises
    ------
    ValueError
        Naming the line and column of ragged rows, empty cells and non-numeric values, and
        the limit a file goes beyond (text, rows, memory).
    """
    with _TextFile(source, max_bytes, name) as text:
        name = text.name
        text.check_rows(max_rows)
        # Every value is followed by a separator or a line end: a bound on X before reading.
        _check_growth(name, text.n_lines, 8 * (text.count(b",") + text.count(b";")
                                               + text.count(b"\t") + 2 * text.n_lines))
        rows = _csv_rows(text, name)
        first = next(rows, None)
        if first is None:
            raise ValueError(f"{name} is empty: no rows to read.")
        header = None
        if _is_header(first[1]):
            header = [cell.strip() for cell in first[1]]
            first = next(rows, None)
            if first is None:
                raise ValueError(f"{name} has a header but no data rows.")
        width = len(header) if header else len(first[1])
        if width < 2:
            raise ValueError(f"{name} has a single column; a CSV needs feature columns and a "
                             "label column (check the separator: comma, semicolon or tab).")
        if width > MAX_FEATURES:
            raise ValueError(f"{name} has {width:,} columns, more than the limit of "
                             f"{MAX_FEATURES:,} features.")
        columns = header or [f"column {j + 1}" for j in range(width)]
        label = _label_index(label_column, columns, name)
        features = [j for j in range(width) if j != label]
        values, lines, labels = array("d"), array("q"), _Labels(name)
        for line, fields in itertools.chain([first], rows):
            if len(fields) != width:
                raise ValueError(f"{name}, line {line}: expected {width} fields, found "
                                 f"{len(fields)}. Every row needs the same number of columns.")
            try:
                values.extend([float(fields[j]) for j in features])
            except ValueError:
                _explain_cell(name, line, fields, features, columns)
            cell = fields[label].strip()
            if not cell:
                raise ValueError(f"{name}, line {line}: the label ({columns[label]!r}) is empty.")
            labels.add(cell, line)
            lines.append(line)
            if len(labels) % _PLAN_EVERY == 0:
                if len(labels) > max_rows:
                    raise ValueError(f"{name} has more than {max_rows:,} rows "
                                     "(snacks_core.datasets.MAX_ROWS); use a subsample.")
                _check_growth(name, line, 8 * len(values) + 16 * len(labels))
    if len(labels) > max_rows:
        raise ValueError(f"{name} has more than {max_rows:,} rows "
                         "(snacks_core.datasets.MAX_ROWS); use a subsample.")
    X = np.frombuffer(values, dtype=np.float64).reshape(len(labels), len(features))
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, k = bad[0]
        column = columns[features[k]]
        raise ValueError(f"{name}, line {lines[row]}, column {column!r}: {str(X[row, k])!r} is "
                         "not a finite number; remove or impute it.")
    return make_dataset(X, labels.values(), name, feature_names=[columns[j] for j in features],
                        description=f"CSV file, label column {columns[label]!r}.",
                        file_format="csv", label_column=columns[label] if header else label)


def _explain_cell(name, line, fields, features, columns):
    """Raise the error for the first feature cell of a row that is not a number."""
    for j in features:
        cell = fields[j].strip()
        if not cell:
            raise ValueError(f"{name}, line {line}, column {columns[j]!r}: empty value. "
                             "Remove or impute rows with missing data.")
        if not _is_number(cell):
            raise ValueError(f"{name}, line {line}, column {columns[j]!r}: {cell[:50]!r} is not "
                             "a number. Encode categorical columns as numbers, or choose "
                             "this column as the label.")


def _label_index(label_column, columns, name):
    if label_column is None:
        return len(columns) - 1
    if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
        if -len(columns) <= label_column < len(columns):
            return int(label_column) % len(columns)
    elif label_column in columns:
        return columns.index(label_column)
    shown = columns if len(columns) <= 50 else columns[:50] + ["…"]
    raise ValueError(f"{name}: no label column {label_column!r}; the columns are {shown}.")


def _parse_labels(cells, name="data"):
    """Labels as integers (int64) when every one is an integer that fits, as float64 when
    every one is a number, as text otherwise; distinct numbers stay distinct or we refuse."""
    exact = []
    for cell in cells:
        try:
            exact.append(decimal.Decimal(cell.strip()))
        except (decimal.InvalidOperation, ValueError):
            return np.array(cells, dtype=str)
    if not all(value.is_finite() for value in exact):
        try:
            return np.array([float(cell) for cell in cells])
        except ValueError:
            return np.array(cells, dtype=str)
    if all(value.adjusted() < 19 and value == value.to_integral_value() for value in exact):
        integers = [int(value) for value in exact]
        if all(-2**63 <= value < 2**63 for value in integers):
            return np.array(integers, dtype=np.int64)
    values = np.array([float(value) for value in exact])
    seen = {}
    for text, value, number in zip(cells, exact, values):
        if not np.isfinite(number) or (_INTEGER.fullmatch(text.strip())
                                       and decimal.Decimal(number) != value):
            raise ValueError(f"{name}: the label {text!r} is too large to keep exactly as a "
                             "64-bit number; use words or smaller numbers as labels.")
        other = seen.setdefault(number, (text, value))
        if other[1] != value:
            raise ValueError(f"{name}: the labels {other[0]!r} and {text!r} differ but are the "
                             "same 64-bit number, so their classes would merge; use words or "
                             "smaller numbers as labels.")
    return values


def load_libsvm(source, *, n_features=None, name=None, description="",
                max_features=MAX_FEATURES, max_bytes=MAX_TEXT_BYTES,
                max_rows=MAX_ROWS) -> Dataset:
    """A dataset from a LIBSVM/svmlight file: ``label index:value …`` per line, 1-based indices.

    Comments after ``#`` and ``qid:`` fields are ignored; bz2, gzip and xz files are
    decompressed as they are read.  ``n_features`` fixes the width (so that a train and a
    test file agree).  ``max_features``, ``max_bytes`` and ``max_rows`` bound the width, the
    text (after decompression) and the rows before anything larger is allocated.

    Raises
    ------
    ValueError
        Naming the line of a malformed label, pair, index or value, or of the limit the
        file goes beyond.
    """
    with _TextFile(source, max_bytes, name) as text:
        X, y = _parse_text_libsvm(text, n_features, max_features, max_rows)
        name = text.name
    return make_dataset(X, y, name, description=description or "LIBSVM file.",
                        file_format="libsvm")


def _parse_text_libsvm(text, n_features=None, max_features=MAX_FEATURES, max_rows=MAX_ROWS):
    """LIBSVM rows of a :class:`_TextFile`, after checking its size against the limits."""
    text.check_rows(max_rows)
    # Every pair has a colon: a bound on the non-zeros before reading.
    _check_growth(text.name, text.n_lines, 16 * (text.count(b":") + text.n_lines))
    return _parse_libsvm(text.lines(), text.name, n_features, max_features, max_rows)


def _parse_libsvm(lines, name, n_features=None, max_features=MAX_FEATURES, max_rows=MAX_ROWS):
    limit = max_features if n_features is None else n_features
    beyond = (f"the {n_features} features expected" if n_features is not None else
              f"the limit of {max_features:,} features (snacks_core.datasets.MAX_FEATURES)")
    labels = _Labels(name)
    data, indices, indptr = array("d"), array("q"), array("q", [0])
    next_check = _PLAN_EVERY
    for line_number, line in enumerate(lines, start=1):
        line = line.split("#", 1)[0]
        tokens = iter(line.split()) if len(line) < _LONG_LINE else (
            match.group() for match in _TOKEN.finditer(line))
        first = next(tokens, None)
        if first is None:
            continue
        try:
            label = float(first)
        except ValueError:
            raise ValueError(f"{name}, line {line_number}: the label {first[:50]!r} is not a "
                             "number. Each line must read 'label index:value index:value …'."
                             ) from None
        if not math.isfinite(label):
            raise ValueError(f"{name}, line {line_number}: the label {first[:50]!r} is not "
                             "finite.")
        labels.add(first, line_number)
        if len(labels) > max_rows:
            raise ValueError(f"{name}, line {line_number}: more than {max_rows:,} rows "
                             "(snacks_core.datasets.MAX_ROWS); use a subsample.")
        previous = -1
        for token in tokens:
            key, sep, value = token.partition(":")
            try:
                number = float(value)
            except ValueError:
                number = None
            if number is None or not (key.isascii() and key.isdigit()):
                if key == "qid" and sep:
                    continue
                raise _pair_error(name, line_number, token, key, sep)
            if len(key) > 12 or int(key) > limit:
                raise ValueError(f"{name}, line {line_number}: feature index {key[:30]} is "
                                 f"beyond {beyond}.")
            index = int(key)
            if not math.isfinite(number):
                raise ValueError(f"{name}, line {line_number}: {token[:50]!r} has a negative "
                                 "index or a non-finite value.")
            if index <= previous:
                raise ValueError(f"{name}, line {line_number}: indices must increase along a "
                                 f"line ({token[:50]!r} comes after index {previous}).")
            previous = index
            indices.append(index)
            data.append(number)
        indptr.append(len(indices))
        if len(labels) % _PLAN_EVERY == 0 or len(indices) >= next_check:
            next_check = 2 * max(next_check, len(indices))
            _check_growth(name, line_number, 16 * len(indices) + 16 * len(labels))
    if not len(labels):
        raise ValueError(f"{name} has no data lines.")
    columns = np.frombuffer(indices, dtype=np.int64)
    # Indices are 1-based (LIBSVM's convention) unless a 0 shows they are 0-based.
    if not (columns.size and columns.min() == 0):
        columns = columns - 1
    width = int(columns.max()) + 1 if columns.size else 1
    if n_features is not None:
        if width > n_features:
            raise ValueError(f"{name}: feature index {width} is beyond the {n_features} "
                             "features expected.")
        width = n_features
    index_dtype = np.int32 if columns.size < 2**31 else np.int64
    X = sp.csr_matrix((np.frombuffer(data, dtype=np.float64), columns.astype(index_dtype),
                       np.frombuffer(indptr, dtype=np.int64).astype(index_dtype)),
                      shape=(len(labels), width))
    return X, labels.values()


def _pair_error(name, line, token, key, sep):
    """The error for a LIBSVM field that is not a valid ``index:value`` pair."""
    if not sep:
        return ValueError(f"{name}, line {line}: {token[:50]!r} is not an 'index:value' pair.")
    if key.startswith("-") and key[1:].isascii() and key[1:].isdigit():
        return ValueError(f"{name}, line {line}: {token[:50]!r} has a negative index or a "
                          "non-finite value.")
    return ValueError(f"{name}, line {line}: {token[:50]!r} needs an integer index and a "
                      "numeric value.")


_TOKEN = re.compile(r"\S+")
_INTEGER = re.compile(r"[+-]?[0-9]+")


def load_file(path, *, label_column=None) -> Dataset:
    """A CSV (``.csv``, ``.tsv``) or LIBSVM (anything else) file by its extension;
    ``.bz2``, ``.gz`` and ``.xz`` files are decompressed as they are read."""
    suffixes = Path(path).suffixes
    if suffixes and suffixes[-1] in _SUFFIX_COMPRESSION:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in (".csv", ".tsv"):
        return load_csv(path, label_column=label_column)
    if label_column is not None:
        raise ValueError(f"{Path(path).name} is read as a LIBSVM file (the label is the first "
                         "field of each line): a label column only applies to CSV files.")
    return load_libsvm(path)


def sample_data_dir() -> Path:
    """``sample_data/`` beside the package: small datasets the project generates itself."""
    return Path(__file__).resolve().parents[2] / "sample_data"


def sample_files(directory=None) -> list[str]:
    """Names of the dataset files in ``sample_data/``."""
    directory = Path(directory) if directory else sample_data_dir()
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir()
                  if p.suffix in (".csv", ".svm", ".libsvm", ".bz2"))


def write_sample_data(directory=None) -> list[Path]:
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
        for row, label in zip(X, y):
            writer.writerow([f"{value:.6f}" for value in row] + [label])


# ---------------------------------------------------------------------------- LIBSVM public data


class DownloadError(ConnectionError):
    """A public dataset could not be downloaded; the message says what to do instead."""


# A download larger or slower than this is refused (the largest public set here is ~25 MB).
MAX_DOWNLOAD_BYTES = 256 * 2**20
DOWNLOAD_DEADLINE = 600.0


def libsvm_cache_dir(cache_dir=None) -> Path:
    """Where downloaded LIBSVM files are kept: ``cache_dir``, $SNACKS_DATA_HOME or ~/.cache."""
    if cache_dir is not None:
        return Path(cache_dir)
    home = os.environ.get("SNACKS_DATA_HOME")
    if home:
        return Path(home) / "libsvm"
    return Path.home() / ".cache" / "snacks_explorer" / "libsvm"


def cached_libsvm_datasets(cache_dir=None) -> list[str]:
    """Names of the public LIBSVM datasets whose files are all in the cache."""
    root = libsvm_cache_dir(cache_dir)
    return [name for name, source in LIBSVM_DATASETS.items()
            if all((root / name / f).is_file() for f in (source.train, source.test) if f)]


def fetch_libsvm(name, *, cache_dir=None, base_url=None, timeout=30.0,
                 deadline=DOWNLOAD_DEADLINE, max_bytes=MAX_DOWNLOAD_BYTES) -> Dataset:
    """A public LIBSVM binary dataset, downloaded once into a local cache.

    A download is verified before it is cached: its size against the announced length and
    ``max_bytes``, its start (not a web page; bz2 data where a ``.bz2`` file is expected)
    and its whole content (every file must parse as the LIBSVM data expected).  It is
    written to a temporary file in the cache folder and renamed only then, so a broken
    download never stays in the cache.

    Parameters
    ----------
    name : str
        One of :data:`LIBSVM_DATASETS` (a9a, w8a, ijcnn1, cod-rna, skin_nonskin, …).
    cache_dir : path, optional
        Defaults to :func:`libsvm_cache_dir`.
    base_url : str, optional
        Where the files live: $SNACKS_LIBSVM_URL, else the LIBSVM site (tests point it at a
        local server).
    timeout : float, default=30
        Seconds to wait for the server at each read.
    deadline : float, default=DOWNLOAD_DEADLINE
        Seconds for a whole file.
    max_bytes : int, default=MAX_DOWNLOAD_BYTES
        Largest file accepted.

    Raises
    ------
    DownloadError
        When a file cannot be downloaded (no network, server error, too slow, too large,
        not the data expected), saying where to put the file by hand.
    """
    if name not in LIBSVM_DATASETS:
        raise ValueError(f"unknown LIBSVM dataset {name!r}; choose one of "
                         f"{', '.join(LIBSVM_DATASETS)}.")
    source = LIBSVM_DATASETS[name]
    base_url = base_url or os.environ.get("SNACKS_LIBSVM_URL") or LIBSVM_BASE_URL
    folder = libsvm_cache_dir(cache_dir) / name
    downloads = {}
    try:
        parts = []
        for file_name in (f for f in (source.train, source.test) if f):
            target = folder / file_name
            if not target.is_file():
                downloads[target] = _download(base_url, file_name, folder, timeout, deadline,
                                              max_bytes)
            parts.append((downloads.get(target, target), file_name))
        try:
            X, y = _read_libsvm_part(*parts[0], source.n_features)
            X_test = y_test = None
            if len(parts) > 1:
                X_test, y_test = _read_libsvm_part(*parts[1], source.n_features)
            dataset = make_dataset(X, y, name, description=f"LIBSVM public dataset: "
                                   f"{source.about}.", X_test=X_test, y_test=y_test)
        except ValueError as exc:
            if downloads:
                raise DownloadError(f"The download of {name} from {base_url} is not the LIBSVM "
                                    f"data expected ({exc}); nothing was cached. Download the "
                                    f"files by hand into {folder}/.") from None
            raise ValueError(f"{exc} (the cached file in {folder}/ is damaged: delete it to "
                             "download it again)") from None
        for target, part in downloads.items():
            part.replace(target)
        downloads.clear()
    finally:
        for part in downloads.values():
            part.unlink(missing_ok=True)
    return dataset


def _read_libsvm_part(path, file_name, n_features):
    with _TextFile(path, name=file_name) as text:
        return _parse_text_libsvm(text, n_features)


class _BadDownload(Exception):
    """A response that must not be cached, with the reason."""


def _download(base_url, file_name, folder, timeout, deadline, max_bytes) -> Path:
    """A verified download of ``file_name`` in a temporary file of ``folder``."""
    url = base_url.rstrip("/") + "/" + file_name
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{file_name}.", suffix=".part", dir=folder)
    part = Path(temporary)
    started = time.monotonic()
    try:
        with os.fdopen(handle, "wb") as out, \
                urllib.request.urlopen(url, timeout=min(timeout, deadline)) as response:
            _receive(response, out, file_name, started, deadline, max_bytes)
    except _BadDownload as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{url}: {exc}. Nothing was cached; try again later, or download "
                            f"{file_name} by hand into {folder}/.") from None
    except urllib.error.HTTPError as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"The server answered {exc.code} ({exc.reason}) for {url}. Download "
                            f"the file by hand into {folder}/ and load it again.") from None
    except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException,
            ValueError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
            raise DownloadError(f"{url}: the server did not answer within {timeout:g} s. "
                                f"Try again later, or download {file_name} by hand into "
                                f"{folder}/.") from None
        raise DownloadError(f"Could not download {url}: {reason}. There seems to be no network "
                            f"access; download {file_name} by hand into {folder}/, or upload it "
                            "on the Data page.") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return part


def _receive(response, out, file_name, started, deadline, max_bytes):
    """Copy a response into ``out``, checking its type, size, start and the deadline."""
    content_type = response.headers.get("Content-Type", "") or ""
    if "html" in content_type.lower():
        raise _BadDownload(f"the server sent a web page ({content_type}), not the data file")
    announced = response.headers.get("Content-Length")
    try:
        announced = int(announced) if announced is not None else None
    except ValueError:
        announced = None
    if announced is not None and announced > max_bytes:
        raise _BadDownload(f"the file has {announced:,} bytes, more than the limit of "
                           f"{max_bytes:,}")
    read = getattr(response, "read1", response.read)
    size, head = 0, b""
    while chunk := read(1 << 16):
        size += len(chunk)
        if size > max_bytes:
            raise _BadDownload(f"the file is larger than the limit of {max_bytes:,} bytes")
        if time.monotonic() - started > deadline:
            raise _BadDownload(f"the download took longer than {deadline:g} s "
                               f"({size:,} bytes received)")
        if len(head) < 512:
            head += chunk[:512 - len(head)]
        out.write(chunk)
    if announced is not None and size != announced:
        raise _BadDownload(f"the server sent {size:,} of the {announced:,} bytes it announced "
                           "(the connection broke)")
    if size == 0:
        raise _BadDownload("the server sent an empty file")
    start = head.lstrip().lower()
    if start.startswith((b"<!doctype", b"<html", b"<head", b"<?xml", b"<body")):
        raise _BadDownload("the server sent a web page, not the data file")
    if file_name.endswith(".bz2") and not head.startswith(b"BZh"):
        raise _BadDownload("the file is not bz2-compressed data")


# ---------------------------------------------------------------------------- split and scale


def split_dataset(dataset, *, test_size=0.3, scaling="standard", random_state=0,
                  project_2d=False) -> Split:
    """Train/test split (stratified; the dataset's own test part when it has one), scaling fit
    on the training rows, and optionally a 2-D PCA projection (for pictures)."""
    from sklearn.model_selection import train_test_split

    if scaling not in SCALINGS:
        raise ValueError(f"unknown scaling {scaling!r}; choose one of {SCALINGS}.")
    if dataset.X_test is not None:
        X_train, y_train, X_test, y_test = dataset.X, dataset.y, dataset.X_test, dataset.y_test
    else:
        if not 0.05 <= test_size <= 0.9:
            raise ValueError(f"test_size must be between 0.05 and 0.9, got {test_size!r}.")
        _, counts = np.unique(dataset.y, return_counts=True)
        stratify = dataset.y if counts.min() >= 2 else None
        X_train, X_test, y_train, y_test = train_test_split(
            dataset.X, dataset.y, test_size=test_size, random_state=random_state,
            stratify=stratify)
        if np.unique(y_train).shape[0] < 2:
            raise ValueError(f"{dataset.name}: the training part has a single class; use a "
                             "smaller test fraction or more data.")
    X_train, X_test, scaler = _scale(X_train, X_test, scaling)
    preprocessing = () if scaler is None else (scaler,)
    names, projection = dataset.feature_names, None
    if project_2d and X_train.shape[1] > 2:
        X_train, X_test, model = _project_2d(X_train, X_test, random_state)
        preprocessing += (model,)
        names = ("PC 1", "PC 2")
        projection = (f"2-D PCA projection of {dataset.n_features} features "
                      f"({model.explained_variance_ratio_.sum():.0%} of the variance)")
    return Split(X_train, y_train, X_test, y_test, dataset.name, names, projection,
                 preprocessing)


def _scale(X_train, X_test, scaling):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if scaling == "none":
        return X_train, X_test, None
    sparse = sp.issparse(X_train)
    if scaling == "standard":
        scaler = StandardScaler(with_mean=not sparse)
    else:
        scaler = MaxAbsScaler() if sparse else MinMaxScaler(feature_range=(-1, 1))
    return scaler.fit_transform(X_train), scaler.transform(X_test), scaler


def _project_2d(X_train, X_test, random_state):
    from sklearn.decomposition import PCA, TruncatedSVD

    if sp.issparse(X_train):
        model = TruncatedSVD(2, random_state=random_state)
    else:
        model = PCA(2, random_state=random_state)
    train = model.fit_transform(X_train)
    return (np.ascontiguousarray(train), np.ascontiguousarray(model.transform(X_test)), model)


def fingerprint(raw: bytes) -> str:
    """A short content hash: the cache key of uploaded data."""
    return hashlib.sha256(raw).hexdigest()[:16]


# Cardinalities of the 14 one-hot attribute groups of a9a (Adult): 123 binary columns.
A9A_GROUP_SIZES = (5, 8, 5, 16, 5, 7, 14, 6, 5, 2, 2, 2, 5, 41)


def make_a9a_like(n_train=32561, n_test=16281, *, positive_rate=0.24, noise=0.08,
                  random_state=0):
    """An a9a-shaped problem: sparse binary one-hot rows, 123 columns, 14 non-zeros a row.

    Each row picks one category in each of 14 attribute groups (sizes as in a9a), with
    categories correlated through three latent factors and skewed popularity.  The label
    is +1 for the top ``positive_rate`` of a non-linear score (main effects plus pairwise
    interactions between groups), then a fraction ``noise`` of labels is flipped, so that
    no classifier reaches zero error and a kernel helps over a linear model.

    Returns
    -------
    X_train, y_train, X_test, y_test : CSR float64 matrices and labels in {−1, +1}.
    """
    rng = np.random.default_rng(random_state)
    n = n_train + n_test
    latent = rng.standard_normal((n, 3))
    columns = []
    effects = np.zeros(n)
    chosen = []
    for size in A9A_GROUP_SIZES:
        loadings = rng.normal(scale=1.2, size=(3, size))
        popularity = -1.5 * np.log1p(np.arange(size)) + rng.normal(scale=0.3, size=size)
        logits = latent @ loadings + popularity
        prob = np.exp(logits - logits.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        category = (prob.cumsum(axis=1) < rng.random((n, 1))).sum(axis=1)
        category = np.minimum(category, size - 1)
        chosen.append(category)
        effects += rng.normal(scale=0.6, size=size)[category]
    offsets = np.concatenate(([0], np.cumsum(A9A_GROUP_SIZES)[:-1]))
    for g in range(0, len(A9A_GROUP_SIZES) - 1, 2):
        table = rng.normal(scale=0.8, size=(A9A_GROUP_SIZES[g], A9A_GROUP_SIZES[g + 1]))
        effects += table[chosen[g], chosen[g + 1]]
    effects += 0.8 * np.tanh(latent[:, 0] * latent[:, 1])
    # Flipping moves a fraction `noise` of each class, so aim the threshold accordingly.
    clean_rate = (positive_rate - noise) / (1.0 - 2.0 * noise)
    labels = np.where(effects > np.quantile(effects, 1.0 - clean_rate), 1.0, -1.0)
    flip = rng.random(n) < noise
    labels[flip] = -labels[flip]
    columns = np.stack(chosen, axis=1) + offsets
    X = sp.csr_matrix(
        (np.ones(n * len(A9A_GROUP_SIZES)), columns.ravel(),
         np.arange(0, n * len(A9A_GROUP_SIZES) + 1, len(A9A_GROUP_SIZES))),
        shape=(n, sum(A9A_GROUP_SIZES)),
    )
    X.sort_indices()
    return X[:n_train], labels[:n_train], X[n_train:], labels[n_train:]


def _wrap_angle(angle):
    """Angles mapped to [−π, π): azimuths and their differences live on a circle."""
    return (angle + np.pi) % (2.0 * np.pi) - np.pi


def make_susy_like(n_samples, *, random_state=0):
    """A SUSY-shaped problem: 18 dense columns, 8 "low-level" and 10 "high-level" features.

    Synthetic, not the UCI SUSY data set (5M Monte Carlo events, which this project cannot
    download): it only mimics its shape and difficulty for benchmarks at 10⁵–10⁶ rows.
    Each row is an "event" with two leptons and missing energy.  The 8 low-level columns
    are drawn independently from class-dependent distributions: lepton transverse momenta
    (the larger and the smaller of two Gamma(2, s) draws), pseudorapidities (normal),
    azimuths (the first uniform, the second opposite to it up to a von Mises deviation),
    missing energy (Gamma(2, s)) and its azimuth (uniform, uninformative).  Signal events
    (+1, 46 % as in SUSY) have harder leptons, more central pseudorapidities, less
    back-to-back leptons and more missing energy.  The 10 high-level columns are
    deterministic non-linear functions of the low-level ones, simplified versions of
    SUSY's: relative and axial missing energy, dilepton mass and transverse momentum,
    the leading lepton's transverse mass, the smaller transverse mass of the two leptons,
    the scalar sum of momenta, missing energy over lepton momenta, the azimuthal
    separation of the leptons and tanh(Δη/2).  They add no information, only easier
    coordinates, as in SUSY.  The Bayes error, computed by Monte Carlo from the known
    class densities, is about 20 % (SUSY's best published test errors are about 20 %).

    Parameters
    ----------
    n_samples : int
        Number of rows.
    random_state : int, default=0
        Seed; equal seeds give equal data.

    Returns
    -------
    X : ndarray of shape (n_samples, 18), float64
    y : ndarray of shape (n_samples,), labels in {−1, +1}
    """
    if int(n_samples) < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")
    n = int(n_samples)
    rng = np.random.default_rng(random_state)
    signal = rng.random(n) < 0.46

    def by_class(signal_value, background_value):
        return np.where(signal, signal_value, background_value)

    first, second = (rng.gamma(2.0, by_class(0.55, 0.4)) for _ in range(2))
    pt1, pt2 = np.maximum(first, second), np.minimum(first, second)
    eta1, eta2 = (rng.normal(0.0, by_class(0.9, 1.2)) for _ in range(2))
    phi1 = rng.uniform(-np.pi, np.pi, n)
    phi2 = _wrap_angle(phi1 + np.pi + rng.vonmises(0.0, by_class(1.0, 3.0)))
    met = rng.gamma(2.0, by_class(0.7, 0.3))
    met_phi = rng.uniform(-np.pi, np.pi, n)

    px, py = pt1 * np.cos(phi1) + pt2 * np.cos(phi2), pt1 * np.sin(phi1) + pt2 * np.sin(phi2)
    pt_ll, phi_ll = np.hypot(px, py), np.arctan2(py, px)
    dphi_met = np.minimum(np.abs(_wrap_angle(met_phi - phi1)), np.abs(_wrap_angle(met_phi - phi2)))
    met_rel = np.where(dphi_met < np.pi / 2, met * np.sin(dphi_met), met)
    axial_met = -met * np.cos(met_phi - phi_ll)
    dphi_ll = _wrap_angle(phi1 - phi2)
    m_ll = np.sqrt(2.0 * pt1 * pt2 * (np.cosh(eta1 - eta2) - np.cos(dphi_ll)))
    mt1 = np.sqrt(2.0 * pt1 * met * (1.0 - np.cos(met_phi - phi1)))
    mt2 = np.sqrt(2.0 * pt2 * met * (1.0 - np.cos(met_phi - phi2)))
    X = np.column_stack([
        pt1, eta1, phi1, pt2, eta2, phi2, met, met_phi,
        met_rel, axial_met, m_ll, pt_ll, mt1, np.minimum(mt1, mt2), pt1 + pt2 + met,
        met / (pt1 + pt2), np.abs(dphi_ll), np.tanh((eta1 - eta2) / 2.0),
    ])
    return X, np.where(signal, 1.0, -1.0)
