"""LIBSVM/svmlight files: ``label index:value …`` per line, read into CSR matrices.

The text streams in chunks of whole lines (:class:`~.streams.TextStream`); each chunk is cut
into pieces parsed at once by jitted code in threads (:mod:`._libsvm_kernels`), which
hands every line it is not certain of (an exotic number, a malformed field) to the Python
line parser below: that one gives the line-numbered errors.  Sizes are bounded by the
policy's limits and the memory plan as the arrays grow.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from snacks_core.core.compiled import njit
from snacks_core.core.memory import check_fits_in_memory
from snacks_core.core.threads import effective_n_threads
from snacks_core.core.validation import check_count
from snacks_core.datasets._libsvm_kernels import count_newlines_and_colons, parse_lines
from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.datasets.labels import parse_labels
from snacks_core.datasets.streams import (
    LOCAL_FILE_LIMITS,
    ReadLimits,
    Source,
    TextStream,
    check_growth,
    check_rows,
)

# The index of a file's first feature: decided from the file(s), or given.
INDEX_BASES = ("auto", 0, 1)
_BASE_NAMES = {0: "zero-based", 1: "one-based"}
# Lines longer than this are split into tokens lazily, not into one list of strings.
_LONG_LINE = 1 << 20
# Pieces smaller than this are not worth a thread.
_MIN_PIECE_BYTES = 1 << 20
# Label tokens up to this long have at most 15 significant digits: distinct ones are
# distinct doubles, so a class is known by its double.
_SHORT_LABEL = 15


@njit(cache=True, nogil=True)
def _token_lengths(buf, starts):
    """Length of the token starting at each offset (up to a space, tab, CR, LF or '#')."""
    lengths = np.empty(starts.shape[0], np.int64)
    for r in range(starts.shape[0]):
        end = starts[r]
        while end < buf.shape[0] and buf[end] not in (9, 10, 13, 32, 35):
            end += 1
        lengths[r] = end - starts[r]
    return lengths


def load_libsvm(source: Source, *, n_features: int | None = None,
                index_base: str | int = "auto", purpose: str = "train", name: str | None = None,
                description: str = "", limits: ReadLimits = LOCAL_FILE_LIMITS,
                progress=None, n_jobs: int | None = None) -> Dataset:
    r"""A dataset from a LIBSVM/svmlight file: ``label index:value …`` per line.

    Comments after ``#`` and ``qid:`` fields are ignored; bz2, gzip and xz files are
    decompressed as they are read.

    Parameters
    ----------
    source : path, bytes or binary file object
    n_features : int, optional
        The width: a file whose largest feature is below it gets empty columns up to it; an
        index beyond it is an error naming the line.  Give the training file's width to read
        a file to predict on.
    index_base : {'auto', 0, 1}, default='auto'
        The index of the first feature.  'auto': zero-based when the file holds an index 0,
        else one-based (LIBSVM's convention); to read several files with one base, use
        :func:`~snacks_core.datasets.load_files`.  With 1, an index 0 is an error naming
        its line.  The base used is ``Dataset.index_base``.
    purpose : {'train', 'predict'}, default='train'
        'train' needs two classes or more; 'predict' takes any labels, even one label on
        every line (svm-predict's placeholder labels, or a batch of one class).
    name, description : str, optional
        Shown in messages and kept with the dataset.
    limits : ReadLimits, default=LOCAL_FILE_LIMITS
        :data:`~snacks_core.datasets.UPLOAD_LIMITS` for untrusted uploads; a local file is
        bounded only by memory.
    progress : callable(rows, text_bytes, file_bytes_total_or_None), optional
        Called after each chunk of text.
    n_jobs : int or None
        Threads that parse (None: every core).

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
    >>> data.y, data.index_base
    (array([ 1, -1,  1]), 1)
    >>> load_libsvm(b"+1 1:0.5\n-1 2:1 1:3\n", name="tiny.svm")
    Traceback (most recent call last):
    ...
    ValueError: tiny.svm, line 2: indices must increase along a line ('1:3' comes after index 2).
    >>> load_libsvm(b"0 2:1\n0 1:1\n", n_features=4, purpose="predict").X.shape
    (2, 4)
    """
    [(X, y, name)], base = read_libsvm_files([source], n_features=n_features,
                                             index_base=index_base, names=[name],
                                             limits=limits, progress=progress, n_jobs=n_jobs)
    return make_dataset(X, y, name, description=description or "LIBSVM file.",
                        file_format="libsvm", index_base=base, purpose=purpose)


def read_libsvm_files(sources, *, n_features=None, index_base="auto", names=None,
                      limits=LOCAL_FILE_LIMITS, progress=None, n_jobs=None):
    """``([(X, y, name), …], index_base)`` of LIBSVM files, each read as :func:`load_libsvm`
    reads one, unvalidated, with one index base and one width for all (as scikit-learn's
    ``load_svmlight_files``).

    The base, when 'auto', is decided once (:func:`decide_index_base`).  The width is
    ``n_features``, or the widest file's.
    """
    if index_base not in INDEX_BASES:
        raise ValueError(f"index_base must be 'auto', 0 or 1, not {index_base!r}.")
    n_features = None if n_features is None else check_count(n_features, "n_features")
    names = names or [None] * len(sources)
    readers = [_read(source, name, n_features, index_base, limits, progress, n_jobs)
               for source, name in zip(sources, names, strict=True)]
    if index_base == "auto":
        index_base = decide_index_base(reader.min_index == 0 for reader in readers)
    widths = [reader.width(index_base, n_features) for reader in readers]
    widest = readers[int(np.argmax(widths))].name
    width = max(widths) if n_features is None else n_features
    # A model of this width holds a few float64 vectors of it (scaling, landmarks).
    check_fits_in_memory(32 * width, f"The {width:,} columns of {widest}",
                         "Check the file's largest feature index.")
    return [reader.result(index_base, width) for reader in readers], index_base


def decide_index_base(holds_zero) -> int:
    """The index base of LIBSVM files read as one run, from whether each holds an index 0
    (read where the files are: here, or on a cluster's workers): zero-based when any does,
    else one-based."""
    return 0 if any(holds_zero) else 1


def _read(source, name, n_features, index_base, limits, progress, n_jobs):
    """The parsed lines of one file (a :class:`_Reader`), before the base and width."""
    with TextStream(source, limits, name) as text:
        reader = _Reader(text, limits, n_jobs, n_features, index_base)
        try:
            for chunk, first_line in text.chunks():
                reader.add(chunk, first_line)
                if progress is not None:
                    progress(reader.rows, text.bytes_read, text.size)
        finally:
            reader.close()
    if not reader.rows:
        raise ValueError(f"{reader.name} has no data lines.")
    return reader


class _Reader:
    """Collects the parsed chunks of one file: CSR parts, labels, the label texts, and the
    smallest and largest feature index with the first line of each."""

    def __init__(self, text, limits, n_jobs, n_features, index_base):
        self.name, self.limits, self.index_base = text.name, limits, index_base
        # Raw indices the parser accepts: a zero-based file of n_features ends at n - 1.
        if n_features is None:
            self.limit = limits.max_features
            self.beyond = f"the limit of {limits.max_features:,} features ({limits.policy})"
        else:
            self.limit = n_features - 1 if index_base == 0 else n_features
            self.beyond = f"the {n_features:,} features expected"
            if index_base != "auto":
                self.beyond += (f" (read {_BASE_NAMES[index_base]}: indices {index_base} to "
                                f"{self.limit})")
        self.n_threads = effective_n_threads(n_jobs)
        self.pool = ThreadPoolExecutor(self.n_threads) if self.n_threads > 1 else None
        self.values, self.indices, self.row_sizes, self.labels = [], [], [], []
        self.label_texts = {}
        self.rows = self.nnz = 0
        self.min_index, self.max_index = np.inf, -1
        self.min_line = self.max_line = None

    def add(self, chunk, first_line):
        buf = np.frombuffer(chunk, dtype=np.uint8)
        bounds = _piece_bounds(chunk, self.n_threads)
        pieces = [(start, stop, chunk, buf, first_line) for start, stop in bounds]
        if self.pool is None or len(pieces) == 1:
            parsed = [self._parse_piece(*piece) for piece in pieces]
        else:
            parsed = list(self.pool.map(lambda piece: self._parse_piece(*piece), pieces))
        for labels, starts, indptr, indices, values in parsed:
            rows = labels.shape[0]
            if not rows:
                continue
            self._check_labels(chunk, buf, first_line, labels, starts)
            if self.limits.max_rows is not None and self.rows + rows > self.limits.max_rows:
                first_beyond = starts[self.limits.max_rows - self.rows]
                check_rows(self.name, _line_of(chunk, first_line, first_beyond),
                           self.limits.max_rows + 1, self.limits)
            if indices.size:
                self._track_extremes(chunk, first_line, starts, indptr, indices)
            self.values.append(values)
            self.indices.append(indices.astype(np.int32))
            self.row_sizes.append(np.diff(indptr))
            self.labels.append(labels)
            self.rows += rows
            self.nnz += values.shape[0]
        check_growth(self.name, first_line + chunk.count(b"\n"), 12 * self.nnz + 16 * self.rows)

    def _track_extremes(self, chunk, first_line, starts, indptr, indices):
        """The smallest and largest index so far, and the first line holding each (what an
        error about the base or the width names); an index 0 read one-based is refused."""
        def line_of(position):
            row = np.searchsorted(indptr, position, side="right") - 1
            return _line_of(chunk, first_line, starts[row])

        low, high = int(indices.min()), int(indices.max())
        if low < self.min_index:
            self.min_index, self.min_line = low, line_of(int(np.argmin(indices)))
        if high > self.max_index:
            self.max_index, self.max_line = high, line_of(int(np.argmax(indices)))
        if self.index_base == 1 and self.min_index == 0:
            raise ValueError(f"{self.name}, line {self.min_line}: index 0 in a file read as "
                             "one-based; if its indices start at 0, pass index_base=0 "
                             "(snacks: --zero-based).")

    def width(self, index_base, n_features):
        """The columns this file needs read with ``index_base``; refuses more than
        ``n_features``, naming the line of the largest index."""
        width = max(self.max_index - index_base + 1, 1)
        if n_features is not None and width > n_features:
            raise ValueError(f"{self.name}, line {self.max_line}: feature index "
                             f"{self.max_index} is beyond the {n_features:,} features expected "
                             f"(read {_BASE_NAMES[index_base]}: indices {index_base} to "
                             f"{n_features - 1 + index_base}).")
        return width

    def _parse_piece(self, start, stop, chunk, buf, first_line):
        """Rows of ``buf[start:stop]``: (labels, label offsets, indptr, indices, values)."""
        n_lines, n_colons = count_newlines_and_colons(buf[start:stop])
        rows_cap = n_lines + 1
        labels = np.empty(rows_cap)
        starts = np.empty(rows_cap, np.int64)
        indptr = np.zeros(rows_cap + 1, np.int64)
        indices = np.empty(n_colons, np.int64)
        values = np.empty(n_colons)
        pos, row, nnz = start, 0, 0
        while True:
            pos, row, nnz, status = parse_lines(buf, pos, stop, row, nnz, labels, starts,
                                                 indptr, indices, values, self.limit)
            if status == 0:
                break
            pos, row, nnz = self._python_line(chunk, first_line, pos, stop, row, nnz, labels,
                                              starts, indptr, indices, values)
        return labels[:row], starts[:row], indptr[:row + 1], indices[:nnz], values[:nnz]

    def _python_line(self, chunk, first_line, pos, stop, row, nnz, labels, starts, indptr,
                     indices, values):
        """Parse the line at ``pos`` in Python (an error names it); returns the counters."""
        end = chunk.find(b"\n", pos, stop)
        end = stop if end < 0 else end + 1
        raw = chunk[pos:end]
        line_number = _line_of(chunk, first_line, pos)
        try:
            line = raw.decode("utf-8-sig" if pos == 0 and first_line == 1 else "utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{self.name}, line {line_number}: not UTF-8 text; save the file "
                             "as plain text (CSV or LIBSVM format).") from None
        parsed = _parse_line(line, line_number, self.name, self.limit, self.beyond)
        if parsed is not None:
            label, pairs = parsed
            labels[row] = float(label)
            starts[row] = pos + raw.index(label.encode())
            for index, value in pairs:
                indices[nnz], values[nnz] = index, value
                nnz += 1
            row += 1
            indptr[row] = nnz
        return end, row, nnz

    def _check_labels(self, chunk, buf, first_line, labels, starts):
        """Keep one text per class (and every long label's text, for the exactness check);
        refuse more classes than the policy allows."""
        values, first = np.unique(labels, return_index=True)
        known = self.label_texts
        new = [(index, value) for value, index in zip(values, first, strict=True)
               if value not in known]
        long_rows = np.flatnonzero(_token_lengths(buf, starts) > _SHORT_LABEL)
        texts = {int(i): _token(chunk, starts[i]) for i in long_rows}
        for index, value in sorted(new):
            if len(known) >= self.limits.max_classes:
                line = _line_of(chunk, first_line, starts[index])
                raise ValueError(f"{self.name}, line {line}: more than "
                                 f"{self.limits.max_classes:,} different labels; a classifier "
                                 "needs a column of class labels. Check the label column.")
            known[value] = {_token(chunk, starts[index])}
        for i, text in texts.items():
            known[labels[i]].add(text)

    def result(self, index_base, width):
        """``(X, y, name)``: X a CSR matrix of ``width`` columns read with ``index_base``."""
        cells = sorted({text for texts in self.label_texts.values() for text in texts})
        classes = parse_labels(cells, self.name)
        by_value = {float(value): classes[cells.index(min(texts))]
                    for value, texts in self.label_texts.items()}
        labels = _concatenate(self.labels, np.float64)
        keys = np.array(sorted(by_value))
        y = np.array([by_value[k] for k in keys])[np.searchsorted(keys, labels)]
        columns = _concatenate(self.indices, np.int32)
        if index_base:
            columns -= index_base
        indptr = np.zeros(self.rows + 1, np.int64)
        np.cumsum(_concatenate(self.row_sizes, np.int64), out=indptr[1:])
        index_dtype = np.int32 if self.nnz < 2**31 else np.int64
        data = _concatenate(self.values, np.float64)
        X = sp.csr_matrix((data, columns, indptr.astype(index_dtype)), shape=(self.rows, width))
        return X, y, self.name

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()


def _concatenate(parts, dtype):
    """The parts end to end, each released once copied: the peak is the result and one
    part, not twice the data."""
    out = np.empty(sum(part.shape[0] for part in parts), dtype)
    position = 0
    parts.reverse()
    while parts:
        part = parts.pop()
        out[position:position + part.shape[0]] = part
        position += part.shape[0]
    return out


def _piece_bounds(chunk, n_pieces):
    """``(start, stop)`` of up to ``n_pieces`` pieces of whole lines covering the chunk."""
    size = len(chunk)
    n_pieces = max(1, min(n_pieces, size // _MIN_PIECE_BYTES))
    cuts = [0]
    for k in range(1, n_pieces):
        cut = chunk.find(b"\n", max(cuts[-1], k * size // n_pieces)) + 1
        if 0 < cut < size:
            cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def _line_of(chunk, first_line, pos):
    """The line number of byte ``pos`` of a chunk whose first line is ``first_line``."""
    return first_line + chunk.count(b"\n", 0, int(pos))


def _token(chunk, start):
    """The label token starting at ``start``, as text."""
    match = _TOKEN.match(chunk, int(start))
    return match.group().decode("utf-8", errors="replace")


def _parse_line(line, line_number, name, limit, beyond):
    """``(label text, [(index, value), …])`` of one line, None for a blank or comment line;
    a ValueError that names the line for anything malformed."""
    line = line.split("#", 1)[0]
    tokens = iter(line.split()) if len(line) < _LONG_LINE else (
        match.group() for match in _STR_TOKEN.finditer(line))
    first = next(tokens, None)
    if first is None:
        return None
    try:
        label = float(first)
    except ValueError:
        # svm-predict too needs a label on every line, meaningful or not.
        missing = (" A file to predict on needs one too: any number, such as 0."
                   if _PAIR.fullmatch(first) else "")
        raise ValueError(f"{name}, line {line_number}: the label {first[:50]!r} is not a "
                         "number. Each line must read 'label index:value index:value …'."
                         f"{missing}") from None
    if not math.isfinite(label):
        raise ValueError(f"{name}, line {line_number}: the label {first[:50]!r} is not finite.")
    pairs, previous = [], -1
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
        pairs.append((index, number))
    return first, pairs


def _pair_error(name, line, token, key, sep):
    """The error for a LIBSVM field that is not a valid ``index:value`` pair."""
    if not sep:
        return ValueError(f"{name}, line {line}: {token[:50]!r} is not an 'index:value' pair.")
    if key.startswith("-") and key[1:].isascii() and key[1:].isdigit():
        return ValueError(f"{name}, line {line}: {token[:50]!r} has a negative index or a "
                          "non-finite value.")
    return ValueError(f"{name}, line {line}: {token[:50]!r} needs an integer index and a "
                      "numeric value.")


_STR_TOKEN = re.compile(r"\S+")
_PAIR = re.compile(r"[0-9]+:\S+")
_TOKEN = re.compile(rb"[^\s#]+")
