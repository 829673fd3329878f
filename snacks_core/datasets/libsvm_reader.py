"""LIBSVM/svmlight files: ``label index:value …`` per line, read into CSR matrices with
line-numbered errors and every size bounded before it is allocated."""

from __future__ import annotations

import math
import re
from array import array

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset, make_dataset
from .labels import LabelCodes
from .text import (
    MAX_FEATURES,
    MAX_ROWS,
    MAX_TEXT_BYTES,
    PLAN_EVERY,
    Source,
    TextFile,
    check_growth,
)

# Lines longer than this are split into tokens lazily, not into one list of strings.
_LONG_LINE = 1 << 20


def load_libsvm(source: Source, *, n_features: int | None = None, name: str | None = None,
                description: str = "", max_features: int = MAX_FEATURES,
                max_bytes: int = MAX_TEXT_BYTES, max_rows: int = MAX_ROWS) -> Dataset:
    r"""A dataset from a LIBSVM/svmlight file: ``label index:value …`` per line, 1-based indices.

    Comments after ``#`` and ``qid:`` fields are ignored; bz2, gzip and xz files are
    decompressed as they are read.  ``n_features`` fixes the width (so that a train and a
    test file agree).  ``max_features``, ``max_bytes`` and ``max_rows`` bound the width, the
    text (after decompression) and the rows before anything larger is allocated.

    Returns
    -------
    Dataset
        Features as a CSR matrix (float64), labels as integers or numbers.

    Raises
    ------
    ValueError
        Naming the line of a malformed label, pair, index or value, or of the limit the
        file goes beyond.

    Examples
    --------
    >>> from snacks_core.datasets import load_libsvm
    >>> data = load_libsvm(b"+1 1:0.5 3:2\n-1 2:1 # a comment\n+1 3:-1\n", name="tiny.svm")
    >>> data.X.toarray()
    array([[ 0.5,  0. ,  2. ],
           [ 0. ,  1. ,  0. ],
           [ 0. ,  0. , -1. ]])
    >>> data.y
    array([ 1, -1,  1])
    >>> load_libsvm(b"+1 1:0.5\n-1 2:1 1:3\n", name="tiny.svm")
    Traceback (most recent call last):
    ...
    ValueError: tiny.svm, line 2: indices must increase along a line ('1:3' comes after index 2).
    """
    with TextFile(source, max_bytes, name) as text:
        X, y = parse_libsvm_text(text, n_features, max_features, max_rows)
        name = text.name
    return make_dataset(X, y, name, description=description or "LIBSVM file.",
                        file_format="libsvm")


def parse_libsvm_text(text, n_features=None, max_features=MAX_FEATURES, max_rows=MAX_ROWS):
    """LIBSVM rows of a :class:`TextFile`, after checking its size against the limits."""
    text.check_rows(max_rows)
    # Every pair has a colon: a bound on the non-zeros before reading.
    check_growth(text.name, text.n_lines, 16 * (text.count(b":") + text.n_lines))
    return _parse_libsvm(text.lines(), text.name, n_features, max_features, max_rows)


def _parse_libsvm(lines, name, n_features=None, max_features=MAX_FEATURES, max_rows=MAX_ROWS):
    limit = max_features if n_features is None else n_features
    beyond = (f"the {n_features} features expected" if n_features is not None else
              f"the limit of {max_features:,} features (snacks_core.datasets.MAX_FEATURES)")
    labels = LabelCodes(name)
    data, indices, indptr = array("d"), array("q"), array("q", [0])
    next_check = PLAN_EVERY
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
        if len(labels) % PLAN_EVERY == 0 or len(indices) >= next_check:
            next_check = 2 * max(next_check, len(indices))
            check_growth(name, line_number, 16 * len(indices) + 16 * len(labels))
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
