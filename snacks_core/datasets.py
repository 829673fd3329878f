"""Datasets: synthetic generators, bundled and file datasets, all validated on the way in.

Every source returns a :class:`Dataset`: a numeric ``X`` (dense array or CSR matrix), labels
``y`` (any two or more values), names, and optionally a predefined test split.  Files are
parsed by our own readers so that an error names the line and says what to do; nothing is
unpickled or evaluated.
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import io
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .validation import check_data

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
    """Features, labels and names; ``X_test``/``y_test`` when the source fixes a test split."""

    X: np.ndarray | sp.csr_matrix
    y: np.ndarray
    name: str
    feature_names: tuple = ()
    description: str = ""
    X_test: np.ndarray | sp.csr_matrix | None = None
    y_test: np.ndarray | None = None

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
    feature_names: tuple
    projection: str | None = None

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]


def make_dataset(X, y, name, *, feature_names=None, description="", X_test=None,
                 y_test=None) -> Dataset:
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
        feature_names = tuple(f"x{j + 1}" for j in range(X.shape[1]))
    return Dataset(X, y, name, tuple(str(f) for f in feature_names), description, X_test, y_test)


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
        raise ValueError(f"{name}: all rows have the same label ({y[0]!r}); a classifier needs "
                         "at least two classes. Check the label column.")
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


def _read_text(source) -> tuple[str, str]:
    """(text, display name) from a path, bytes, or a binary/text file object."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        raw = path.read_bytes()
        name = path.name
    elif isinstance(source, (bytes, bytearray)):
        raw, name = bytes(source), "data"
    else:
        raw = source.read()
        name = Path(getattr(source, "name", "data")).name
    if path_is_bz2(name, raw):
        raw = bz2.decompress(raw)
    if isinstance(raw, str):
        return raw, name
    try:
        return raw.decode("utf-8-sig"), name
    except UnicodeDecodeError:
        raise ValueError(f"{name} is not a UTF-8 text file; save it as plain text (CSV or "
                         "LIBSVM format).") from None


def path_is_bz2(name, raw) -> bool:
    return str(name).endswith(".bz2") or (isinstance(raw, bytes) and raw[:3] == b"BZh")


def csv_columns(source) -> list[str]:
    """Column names of a CSV file (its header, or ``column 1 …`` when it has none)."""
    text, _ = _read_text(source)
    rows = _csv_rows(text)
    if not rows:
        return []
    first = rows[0][1]
    if _is_header(first):
        return [cell.strip() for cell in first]
    return [f"column {j + 1}" for j in range(len(first))]


def _csv_rows(text):
    """(line number, fields) for each non-empty line."""
    try:
        dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    rows = []
    for fields in reader:
        if fields and any(cell.strip() for cell in fields):
            rows.append((reader.line_num, fields))
    return rows


def _is_number(cell) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_header(fields) -> bool:
    return not all(_is_number(cell) for cell in fields if cell.strip())


def load_csv(source, *, label_column=None, name=None) -> Dataset:
    """A dataset from a CSV file: numeric feature columns and one label column.

    Parameters
    ----------
    source : path, bytes or file object
        Comma, semicolon or tab separated; a header row is detected and optional.
    label_column : str or int, optional
        Name (with a header) or 0-based index of the label column; the last column by default.
        Labels may be numbers or words.

    Raises
    ------
    ValueError
        Naming the line and column of ragged rows, empty cells and non-numeric values.
    """
    text, file_name = _read_text(source)
    name = name or file_name
    rows = _csv_rows(text)
    if not rows:
        raise ValueError(f"{name} is empty: no rows to read.")
    header = None
    if _is_header(rows[0][1]):
        header = [cell.strip() for cell in rows[0][1]]
        rows = rows[1:]
    if not rows:
        raise ValueError(f"{name} has a header but no data rows.")
    width = len(header) if header else len(rows[0][1])
    if width < 2:
        raise ValueError(f"{name} has a single column; a CSV needs feature columns and a label "
                         "column (check the separator: comma, semicolon or tab).")
    columns = header or [f"column {j + 1}" for j in range(width)]
    label = _label_index(label_column, columns, name)
    features = [j for j in range(width) if j != label]
    X = np.empty((len(rows), len(features)))
    y = []
    for r, (line, fields) in enumerate(rows):
        if len(fields) != width:
            raise ValueError(f"{name}, line {line}: expected {width} fields, found "
                             f"{len(fields)}. Every row needs the same number of columns.")
        for k, j in enumerate(features):
            cell = fields[j].strip()
            if not cell:
                raise ValueError(f"{name}, line {line}, column {columns[j]!r}: empty value. "
                                 "Remove or impute rows with missing data.")
            try:
                value = float(cell)
            except ValueError:
                raise ValueError(f"{name}, line {line}, column {columns[j]!r}: {cell!r} is not "
                                 "a number. Encode categorical columns as numbers, or choose "
                                 "this column as the label.") from None
            if not np.isfinite(value):
                raise ValueError(f"{name}, line {line}, column {columns[j]!r}: {cell!r} is not "
                                 "a finite number; remove or impute it.")
            X[r, k] = value
        cell = fields[label].strip()
        if not cell:
            raise ValueError(f"{name}, line {line}: the label ({columns[label]!r}) is empty.")
        y.append(cell)
    return make_dataset(X, _parse_labels(y), name,
                        feature_names=[columns[j] for j in features],
                        description=f"CSV file, label column {columns[label]!r}.")


def _label_index(label_column, columns, name):
    if label_column is None:
        return len(columns) - 1
    if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
        if -len(columns) <= label_column < len(columns):
            return int(label_column) % len(columns)
    elif label_column in columns:
        return columns.index(label_column)
    raise ValueError(f"{name}: no label column {label_column!r}; the columns are {columns}.")


def _parse_labels(cells):
    """Numbers when every label is a number (integers when integral), strings otherwise."""
    if all(_is_number(cell) for cell in cells):
        values = np.array([float(cell) for cell in cells])
        if np.all(np.isfinite(values)) and np.all(values == np.round(values)):
            return values.astype(np.int64)
        return values
    return np.array(cells, dtype=str)


def load_libsvm(source, *, n_features=None, name=None, description="") -> Dataset:
    """A dataset from a LIBSVM/svmlight file: ``label index:value …`` per line, 1-based indices.

    Comments after ``#`` and ``qid:`` fields are ignored; a ``.bz2`` file is decompressed.
    ``n_features`` fixes the width (so that a train and a test file agree).

    Raises
    ------
    ValueError
        Naming the line of a malformed label, pair, index or value.
    """
    text, file_name = _read_text(source)
    X, y = _parse_libsvm(text, name or file_name, n_features)
    return make_dataset(X, y, name or file_name, description=description or "LIBSVM file.")


def _parse_libsvm(text, name, n_features=None):
    labels, data, indices, indptr = [], [], [], [0]
    zero_based = False
    for line_number, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        try:
            label = float(tokens[0])
        except ValueError:
            raise ValueError(f"{name}, line {line_number}: the label {tokens[0]!r} is not a "
                             "number. Each line must read 'label index:value index:value …'.") from None
        if not np.isfinite(label):
            raise ValueError(f"{name}, line {line_number}: the label {tokens[0]!r} is not finite.")
        previous = -1
        for token in tokens[1:]:
            key, sep, value = token.partition(":")
            if not sep:
                raise ValueError(f"{name}, line {line_number}: {token!r} is not an "
                                 "'index:value' pair.")
            if key == "qid":
                continue
            try:
                index = int(key)
                number = float(value)
            except ValueError:
                raise ValueError(f"{name}, line {line_number}: {token!r} needs an integer "
                                 "index and a numeric value.") from None
            if index < 0 or not np.isfinite(number):
                raise ValueError(f"{name}, line {line_number}: {token!r} has a negative index "
                                 "or a non-finite value.")
            if index <= previous:
                raise ValueError(f"{name}, line {line_number}: indices must increase along a "
                                 f"line ({token!r} comes after index {previous}).")
            previous = index
            zero_based |= index == 0
            indices.append(index)
            data.append(number)
        labels.append(label)
        indptr.append(len(indices))
    if not labels:
        raise ValueError(f"{name} has no data lines.")
    indices = np.asarray(indices, dtype=np.int64)
    if not zero_based:
        indices -= 1
    width = int(indices.max()) + 1 if indices.size else 1
    if n_features is not None:
        if width > n_features:
            raise ValueError(f"{name}: feature index {width} is beyond the {n_features} "
                             "features expected.")
        width = n_features
    X = sp.csr_matrix((np.asarray(data, dtype=np.float64), indices, np.asarray(indptr)),
                      shape=(len(labels), width))
    return X, _parse_labels([repr(value) for value in labels])


def load_file(path, *, label_column=None) -> Dataset:
    """A CSV (``.csv``, ``.tsv``, ``.txt``) or LIBSVM (anything else) file by its extension."""
    suffixes = Path(path).suffixes
    if suffixes and suffixes[-1] == ".bz2":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in (".csv", ".tsv"):
        return load_csv(path, label_column=label_column)
    return load_libsvm(path)


def sample_data_dir() -> Path:
    """``sample_data/`` beside the package: small datasets the project generates itself."""
    return Path(__file__).resolve().parent.parent / "sample_data"


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


def fetch_libsvm(name, *, cache_dir=None, base_url=None, timeout=30.0) -> Dataset:
    """A public LIBSVM binary dataset, downloaded once into a local cache.

    Parameters
    ----------
    name : str
        One of :data:`LIBSVM_DATASETS` (a9a, w8a, ijcnn1, cod-rna, skin_nonskin, …).
    cache_dir : path, optional
        Defaults to :func:`libsvm_cache_dir`.
    base_url : str, optional
        Where the files live: $SNACKS_LIBSVM_URL, else the LIBSVM site (tests point it at a
        local server).

    Raises
    ------
    DownloadError
        When a file cannot be downloaded (no network, server error), saying where to put
        the file by hand.
    """
    if name not in LIBSVM_DATASETS:
        raise ValueError(f"unknown LIBSVM dataset {name!r}; choose one of "
                         f"{', '.join(LIBSVM_DATASETS)}.")
    source = LIBSVM_DATASETS[name]
    base_url = base_url or os.environ.get("SNACKS_LIBSVM_URL") or LIBSVM_BASE_URL
    folder = libsvm_cache_dir(cache_dir) / name
    paths = [_download(base_url, f, folder, timeout) for f in (source.train, source.test) if f]
    text, _ = _read_text(paths[0])
    X, y = _parse_libsvm(text, source.train, source.n_features)
    X_test = y_test = None
    if len(paths) > 1:
        text, _ = _read_text(paths[1])
        X_test, y_test = _parse_libsvm(text, source.test, source.n_features)
    return make_dataset(X, y, name, description=f"LIBSVM public dataset: {source.about}.",
                        X_test=X_test, y_test=y_test)


def _download(base_url, file_name, folder, timeout) -> Path:
    target = folder / file_name
    if target.is_file():
        return target
    url = base_url.rstrip("/") + "/" + file_name
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, partial.open("wb") as out:
            while chunk := response.read(1 << 20):
                out.write(chunk)
    except urllib.error.HTTPError as exc:
        partial.unlink(missing_ok=True)
        raise DownloadError(f"The server answered {exc.code} ({exc.reason}) for {url}. Download "
                            f"the file by hand into {folder}/ and load it again.") from None
    except (urllib.error.URLError, OSError) as exc:
        partial.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"Could not download {url}: {reason}. There seems to be no network "
                            f"access; download {file_name} by hand into {folder}/, or upload it "
                            "on the Data page.") from None
    partial.replace(target)
    return target


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
    X_train, X_test = _scale(X_train, X_test, scaling)
    names, projection = dataset.feature_names, None
    if project_2d and X_train.shape[1] > 2:
        X_train, X_test, explained = _project_2d(X_train, X_test, random_state)
        names = ("PC 1", "PC 2")
        projection = (f"2-D PCA projection of {dataset.n_features} features "
                      f"({explained:.0%} of the variance)")
    return Split(X_train, y_train, X_test, y_test, dataset.name, names, projection)


def _scale(X_train, X_test, scaling):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if scaling == "none":
        return X_train, X_test
    sparse = sp.issparse(X_train)
    if scaling == "standard":
        scaler = StandardScaler(with_mean=not sparse)
    else:
        scaler = MaxAbsScaler() if sparse else MinMaxScaler(feature_range=(-1, 1))
    return scaler.fit_transform(X_train), scaler.transform(X_test)


def _project_2d(X_train, X_test, random_state):
    from sklearn.decomposition import PCA, TruncatedSVD

    if sp.issparse(X_train):
        model = TruncatedSVD(2, random_state=random_state)
    else:
        model = PCA(2, random_state=random_state)
    train = model.fit_transform(X_train)
    return (np.ascontiguousarray(train), np.ascontiguousarray(model.transform(X_test)),
            float(model.explained_variance_ratio_.sum()))


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
