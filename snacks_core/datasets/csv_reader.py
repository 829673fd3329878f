"""CSV files: numeric feature columns and one label column, with line-numbered errors."""

from __future__ import annotations

import csv
import itertools
from array import array

import numpy as np

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


def csv_columns(source: Source, *, max_bytes: int = MAX_TEXT_BYTES) -> list[str]:
    r"""Column names of a CSV file (its header, or ``column 1 …`` when it has none).

    Examples
    --------
    >>> from snacks_core.datasets import csv_columns
    >>> csv_columns(b"age,income,label\n31,2.5,yes\n")
    ['age', 'income', 'label']
    >>> csv_columns(b"31;2.5;1\n45;3.1;0\n")
    ['column 1', 'column 2', 'column 3']
    """
    with TextFile(source, max_bytes) as text:
        first = next(_csv_rows(text, text.name), None)
    if first is None:
        return []
    if _is_header(first[1]):
        return [cell.strip() for cell in first[1]]
    return [f"column {j + 1}" for j in range(len(first[1]))]


def _csv_rows(text, name):
    """(line number, fields) for each non-empty line of a :class:`TextFile`."""
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


def load_csv(source: Source, *, label_column: str | int | None = None, name: str | None = None,
             max_bytes: int = MAX_TEXT_BYTES, max_rows: int = MAX_ROWS) -> Dataset:
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
    max_bytes, max_rows : int
        Refuse files with more text (after decompression) or more rows than this.

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
    """
    with TextFile(source, max_bytes, name) as text:
        name = text.name
        text.check_rows(max_rows)
        # Every value is followed by a separator or a line end: a bound on X before reading.
        check_growth(name, text.n_lines, 8 * (text.count(b",") + text.count(b";")
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
        values, lines, labels = array("d"), array("q"), LabelCodes(name)
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
            if len(labels) % PLAN_EVERY == 0:
                if len(labels) > max_rows:
                    raise ValueError(f"{name} has more than {max_rows:,} rows "
                                     "(snacks_core.datasets.MAX_ROWS); use a subsample.")
                check_growth(name, line, 8 * len(values) + 16 * len(labels))
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
