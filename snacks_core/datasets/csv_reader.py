"""CSV files: numeric feature columns and one label column, with line-numbered errors.

A local file is read by pyarrow's multi-threaded CSV reader in batches; an upload, or a
file pyarrow refuses, goes through our own parser, whose errors name the line and the
column and say what to do.
"""

from __future__ import annotations

import csv
import itertools
from array import array
from typing import NamedTuple

import numpy as np

from snacks_core.datasets.columnar import (
    ArrowTable,
    NeedsLineNumbers,
    arrow_available,
    label_index,
)
from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.datasets.labels import LabelCodes
from snacks_core.datasets.streams import (
    LOCAL_FILE_LIMITS,
    PLAN_EVERY,
    ReadLimits,
    Source,
    TextStream,
    check_growth,
    check_rows,
)


def csv_columns(source: Source, *, limits: ReadLimits = LOCAL_FILE_LIMITS) -> list[str]:
    r"""Column names of a CSV file (its header, or ``column 1 …`` when it has none).

    Examples
    --------
    >>> from snacks_core.datasets import csv_columns
    >>> csv_columns(b"age,income,label\n31,2.5,yes\n")
    ['age', 'income', 'label']
    >>> csv_columns(b"31;2.5;1\n45;3.1;0\n")
    ['column 1', 'column 2', 'column 3']
    """
    with TextStream(source, limits, peek=True) as text:
        first = next(_csv_rows(text, text.name)[1], None)
    if first is None:
        return []
    if _is_header(first[1]):
        return [cell.strip() for cell in first[1]]
    return [f"column {j + 1}" for j in range(len(first[1]))]


def _csv_rows(text, name):
    """The dialect sniffed from the first 4 KiB of a :class:`TextStream`, and
    (line number, fields) for each of its non-empty lines."""
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
    return dialect, _fields(csv.reader(itertools.chain(head, lines), dialect), name)


def _fields(reader, name):
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


def load_csv(source: Source, *, label_column: str | int | None = None, name: str | None = None,
             limits: ReadLimits = LOCAL_FILE_LIMITS, progress=None,
             n_features: int | None = None, purpose: str = "train") -> Dataset:
    r"""A dataset from a CSV file: numeric feature columns and one label column.

    Parameters
    ----------
    source : path, bytes or binary file object
        Comma, semicolon or tab separated; a header row is detected and optional; bz2,
        gzip and xz files are decompressed as they are read.
    label_column : str or int, optional
        Name (with a header) or 0-based index of the label column; the last column by default.
        Labels may be numbers or words.
    name : str, optional
        Shown in messages and as the dataset's name; the file's name by default.
    limits : ReadLimits, default=LOCAL_FILE_LIMITS
        :data:`~snacks_core.datasets.UPLOAD_LIMITS` for untrusted uploads (read by our own
        parser); a local file is bounded only by memory and read by pyarrow in batches.
    progress : callable(rows, text_bytes_or_None, file_bytes_or_None), optional
        Called after each batch.
    n_features : int, optional
        The feature columns expected (a model's width): a file with other than
        ``n_features`` feature columns is an error that names both counts.
    purpose : {'train', 'predict'}, default='train'
        'train' needs two classes or more.  'predict' accepts one label, and, when
        ``n_features`` is given and no ``label_column`` named, a file of exactly
        ``n_features`` columns: it has no label column (``Dataset.y`` is None).

    Returns
    -------
    Dataset
        Features as a float64 array, labels as integers, numbers or text (as written).

    Raises
    ------
    ValueError
        Naming the line and column of ragged rows, empty cells and non-numeric values, and
        the limit a file goes beyond (text, rows, memory).

    Examples
    --------
    >>> from snacks_core.datasets import load_csv
    >>> data = load_csv(b"age,income,label\n31,2.5,yes\n45,3.1,no\n52,4.0,yes\n",
    ...                 name="people.csv")
    >>> data.X
    array([[31. ,  2.5],
           [45. ,  3.1],
           [52. ,  4. ]])
    >>> data.y
    array(['yes', 'no', 'yes'], dtype='<U3')
    >>> data.feature_names, data.class_counts()
    (('age', 'income'), {'no': 1, 'yes': 2})

    Errors name the line and the column, and say what to do:

    >>> load_csv(b"age,income,label\n31,2.5,yes\n45,,no\n", name="people.csv")
    Traceback (most recent call last):
    ...
    ValueError: people.csv, line 3, column 'income': empty value. Remove or impute ...
    >>> load_csv(b"31,2.5\n45,3.1\n", n_features=2, purpose="predict").y is None  # no labels
    True
    """
    options = _Options(label_column, name, limits, n_features, purpose)
    if limits.max_bytes is None and limits.max_rows is None and arrow_available() and (
            not hasattr(source, "read")):
        dataset = _load_csv_arrow(source, options, progress)
        if dataset is not None:
            return dataset
    return _load_csv_python(source, options)


class _Options(NamedTuple):
    """How :func:`load_csv` was asked to read a file."""

    label_column: str | int | None
    name: str | None
    limits: ReadLimits
    n_features: int | None
    purpose: str


def _first_rows(rows, name, options):
    """From a file's first rows: its header (or None), column names, label column (None: the
    file has none) and first data row."""
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
    columns = header or [f"column {j + 1}" for j in range(width)]
    n_features, limits = options.n_features, options.limits
    if (n_features == width and options.purpose == "predict"
            and options.label_column is None):
        return header, columns, None, first
    if width < 2:
        raise ValueError(f"{name} has a single column; a CSV needs feature columns and a "
                         "label column (check the separator: comma, semicolon or tab).")
    if width > limits.max_features:
        raise ValueError(f"{name} has {width:,} columns, more than the limit of "
                         f"{limits.max_features:,} features ({limits.policy}).")
    if n_features is not None and width - 1 != n_features:
        unlabelled = " (or, to predict on, none)" if options.purpose == "predict" else ""
        raise ValueError(f"{name} has {width:,} columns where {n_features:,} feature columns "
                         f"and a label column{unlabelled} are expected.")
    return header, columns, label_index(options.label_column, columns, name), first


def _made(X, y, name, header, columns, label, features, purpose):
    """The dataset of a CSV file read with this header and label column."""
    about = (f"CSV file, label column {columns[label]!r}." if label is not None else
             "CSV file without labels.")
    label_column = None if label is None else columns[label] if header else label
    return make_dataset(X, y, name, feature_names=[columns[j] for j in features],
                        description=about, file_format="csv", label_column=label_column,
                        purpose=purpose)


def _load_csv_arrow(source, options, progress):
    """The dataset read by pyarrow in batches; None when pyarrow refuses the file (our own
    parser then names the line that is wrong)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    limits = options.limits
    with TextStream(source, limits, options.name, peek=True) as text:
        name = text.name
        dialect, rows = _csv_rows(text, name)
        header, columns, label, _ = _first_rows(rows, name, options)
    if dialect.quotechar != '"' or dialect.escapechar:
        return None
    # pyarrow needs distinct names; ours may repeat, so it reads positional ones.
    positional = [f"c{j}" for j in range(len(columns))]
    features = [j for j in range(len(columns)) if j != label]
    types = {positional[j]: pa.float64() for j in features}
    if label is not None:
        types[positional[label]] = pa.string()
    read = pacsv.ReadOptions(column_names=positional, skip_rows=1 if header else 0,
                             block_size=1 << 24)
    parse = pacsv.ParseOptions(delimiter=dialect.delimiter, ignore_empty_lines=True,
                               newlines_in_values=False)
    convert = pacsv.ConvertOptions(column_types=types, null_values=[],
                                   strings_can_be_null=False, quoted_strings_can_be_null=False)
    with TextStream(source, limits, name) as text:
        table = ArrowTable(name, [positional[j] for j in features],
                           None if label is None else positional[label], limits)
        try:
            # pyarrow reads plain and gzip text itself (without the GIL); bz2 and xz come
            # through our stream (bz2 decompressed by several threads).
            in_memory = isinstance(source, (bytes, bytearray, memoryview))
            if text.compression not in (None, "gzip"):
                handle = pa.PythonFile(text, mode="r")
            else:
                handle = pa.BufferReader(source) if in_memory else pa.OSFile(str(source))
                if text.compression == "gzip":
                    handle = pa.CompressedInputStream(handle, "gzip")
            reader = pacsv.open_csv(handle, read_options=read, parse_options=parse,
                                    convert_options=convert)
            for batch in reader:
                table.add(batch)
                if progress is not None:
                    progress(table.rows, None, text.size)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, NeedsLineNumbers):
            # Our own parser names the line (or the point where the text is cut short).
            return None
    X, y = table.result()
    return _made(X, y, name, header, columns, label, features, options.purpose)


def _load_csv_python(source, options):
    """The dataset read line by line by our own parser (uploads, and files pyarrow refuses)."""
    limits = options.limits
    with TextStream(source, limits, options.name) as text:
        name = text.name
        rows = _csv_rows(text, name)[1]
        header, columns, label, first = _first_rows(rows, name, options)
        width = len(columns)
        features = [j for j in range(width) if j != label]
        values, lines = array("d"), array("q")
        labels = LabelCodes(name, limits.max_classes)
        for line, fields in itertools.chain([first], rows):
            if len(fields) != width:
                raise ValueError(f"{name}, line {line}: expected {width} fields, found "
                                 f"{len(fields)}. Every row needs the same number of columns.")
            try:
                values.extend([float(fields[j]) for j in features])
            except ValueError:
                _explain_cell(name, line, fields, features, columns)
            if label is not None:
                cell = fields[label].strip()
                if not cell:
                    raise ValueError(f"{name}, line {line}: the label ({columns[label]!r}) "
                                     "is empty.")
                labels.add(cell, line)
            lines.append(line)
            check_rows(name, line, len(lines), limits)
            if len(lines) % PLAN_EVERY == 0:
                check_growth(name, line, 8 * len(values) + 16 * len(lines))
    X = np.frombuffer(values, dtype=np.float64).reshape(len(lines), len(features))
    bad = np.argwhere(~np.isfinite(X))
    if bad.size:
        row, k = bad[0]
        column = columns[features[k]]
        raise ValueError(f"{name}, line {lines[row]}, column {column!r}: {str(X[row, k])!r} is "
                         "not a finite number; remove or impute it.")
    y = labels.values() if label is not None else None
    return _made(X, y, name, header, columns, label, features, options.purpose)


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
