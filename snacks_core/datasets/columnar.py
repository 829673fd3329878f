"""Columnar data through pyarrow: the batches of a CSV or Parquet file assembled into X and
labels, and Parquet files themselves.

pyarrow parses and decodes in several threads; what it cannot read as numbers (an empty
or non-numeric cell, NaN) is refused here with the row, or handed back to the CSV reader,
whose own parser names the line.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.datasets.labels import MAX_LABEL_CHARS, parse_labels
from snacks_core.datasets.streams import LOCAL_FILE_LIMITS, ReadLimits, check_growth, check_rows


def arrow_available() -> bool:
    """Whether pyarrow can be imported (a dependency; a stripped install may lack it)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


class NeedsLineNumbers(ValueError):
    """A batch holds a value that is not a finite number; the message names its row."""


class ArrowTable:
    """Feature columns (as float64) and a label column (None: the file has none), collected
    batch by batch."""

    def __init__(self, name, feature_columns, label_column, limits):
        self.name, self.features, self.label = name, feature_columns, label_column
        self.limits = limits
        self.blocks, self.label_blocks, self.texts = [], [], set()
        self.rows = 0

    def add(self, batch):
        """Add a record batch; refuse a value that is not a finite number (naming its row)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        check_rows(self.name, self.rows + batch.num_rows, self.rows + batch.num_rows,
                   self.limits)
        check_growth(self.name, self.rows + batch.num_rows,
                     8 * (self.rows + batch.num_rows) * (len(self.features) + 1))
        block = np.empty((batch.num_rows, len(self.features)))
        for j, column in enumerate(self.features):
            values = batch.column(column)
            if values.null_count:
                row = self.rows + int(np.flatnonzero(values.is_null().to_numpy(
                    zero_copy_only=False))[0]) + 1
                raise NeedsLineNumbers(f"{self.name}, row {row:,}, column {column!r}: empty "
                                       "value. Remove or impute rows with missing data.")
            try:
                values = pc.cast(values, pa.float64())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                raise NeedsLineNumbers(f"{self.name}, column {column!r} is not numeric; encode "
                                       "categorical columns as numbers, or choose it as the "
                                       "label.") from None
            block[:, j] = values.to_numpy(zero_copy_only=False)
        bad = np.argwhere(~np.isfinite(block))
        if bad.size:
            row, j = bad[0]
            raise NeedsLineNumbers(f"{self.name}, row {self.rows + row + 1:,}, column "
                                   f"{self.features[j]!r}: {block[row, j]!r} is not a finite "
                                   "number; remove or impute it.")
        self.blocks.append(block)
        self.rows += batch.num_rows
        if self.label is not None:
            self._add_labels(batch.column(self.label))

    def _add_labels(self, labels):
        import pyarrow as pa
        import pyarrow.compute as pc

        if labels.null_count:
            raise NeedsLineNumbers(f"{self.name}: the label column {self.label!r} has empty "
                                   "cells.")
        labels = pc.utf8_trim_whitespace(pc.cast(labels, pa.string()))
        texts = pc.unique(labels).to_pylist()
        if any(len(text) > MAX_LABEL_CHARS for text in texts):
            raise NeedsLineNumbers(f"{self.name}: a label is longer than {MAX_LABEL_CHARS} "
                                   "characters; a label names a class. Check the label "
                                   "column.")
        self.texts.update(texts)
        if "" in self.texts:
            raise NeedsLineNumbers(f"{self.name}: the label column {self.label!r} has empty "
                                   "cells.")
        if len(self.texts) > self.limits.max_classes:
            raise NeedsLineNumbers(f"{self.name}: more than {self.limits.max_classes:,} "
                                   "different labels; a classifier needs a column of class "
                                   "labels. Check the label column.")
        self.label_blocks.append(labels)

    def result(self):
        """X (n × d float64) and the labels, typed as :func:`~.labels.parse_labels` does
        (None without a label column)."""
        import pyarrow as pa

        if not self.rows:
            raise ValueError(f"{self.name} has no data rows.")
        X = np.concatenate(self.blocks) if len(self.blocks) > 1 else self.blocks[0]
        self.blocks = []
        if self.label is None:
            return X, None
        encoded = pa.chunked_array(self.label_blocks).dictionary_encode().combine_chunks()
        texts = encoded.dictionary.to_pylist()
        classes = parse_labels(texts, self.name)
        return X, classes[encoded.indices.to_numpy(zero_copy_only=False)]


def load_parquet(path: str | os.PathLike, *, label_column: str | int | None = None,
                 name: str | None = None, limits: ReadLimits = LOCAL_FILE_LIMITS,
                 progress=None, purpose: str = "train") -> Dataset:
    """A dataset from a Parquet file: numeric feature columns and one label column (the
    last by default), read in row batches; ``purpose`` is
    :func:`~snacks_core.datasets.make_dataset`'s ('predict' accepts one label).

    Examples
    --------
    >>> import pandas as pd, tempfile, os
    >>> from snacks_core.datasets import load_parquet
    >>> path = os.path.join(tempfile.mkdtemp(), "people.parquet")
    >>> pd.DataFrame({"age": [31, 45, 52], "label": ["yes", "no", "yes"]}).to_parquet(path)
    >>> data = load_parquet(path)
    >>> data.X.ravel().tolist(), data.y.tolist()
    ([31.0, 45.0, 52.0], ['yes', 'no', 'yes'])
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = name or Path(path).name
    try:
        source = pq.ParquetFile(path)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc}.") from None
    except pa.ArrowInvalid as exc:
        raise ValueError(f"{name} is not a Parquet file ({exc}).") from None
    columns = [field.name for field in source.schema_arrow]
    if len(columns) < 2:
        raise ValueError(f"{name} has a single column; feature columns and a label column "
                         "are needed.")
    if len(columns) - 1 > limits.max_features:
        raise ValueError(f"{name} has {len(columns):,} columns, more than the limit of "
                         f"{limits.max_features:,} features ({limits.policy}).")
    label = label_index(label_column, columns, name)
    features = [c for j, c in enumerate(columns) if j != label]
    check_growth(name, source.metadata.num_rows, 8 * source.metadata.num_rows * len(columns))
    table = ArrowTable(name, features, columns[label], limits)
    try:
        for batch in source.iter_batches(batch_size=1 << 16):
            table.add(batch)
            if progress is not None:
                progress(table.rows, None, None)
    except NeedsLineNumbers as exc:
        raise ValueError(str(exc)) from None
    X, y = table.result()
    return make_dataset(X, y, name, feature_names=features,
                        description=f"Parquet file, label column {columns[label]!r}.",
                        file_format="parquet", label_column=columns[label], purpose=purpose)


def label_index(label_column, columns, name):
    """The index of the label column (a name or a 0-based index; the last by default)."""
    if label_column is None:
        return len(columns) - 1
    if isinstance(label_column, (int, np.integer)) and not isinstance(label_column, bool):
        if -len(columns) <= label_column < len(columns):
            return int(label_column) % len(columns)
    elif label_column in columns:
        return columns.index(label_column)
    shown = list(columns) if len(columns) <= 50 else list(columns[:50]) + ["…"]
    raise ValueError(f"{name}: no label column {label_column!r}; the columns are {shown}.")
