"""NumPy ``.npy`` files: one 2-D numeric array whose label column is one of its columns,
memory-mapped and copied in row blocks (never unpickled)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from snacks_core.datasets.columnar import label_index
from snacks_core.datasets.dataset import Dataset, make_dataset
from snacks_core.datasets.labels import parse_labels
from snacks_core.datasets.streams import LOCAL_FILE_LIMITS, ReadLimits, check_growth, check_rows

# Rows copied from the mapped file at once.
_BLOCK_ROWS = 1 << 16


def load_npy(path: str | os.PathLike, *, label_column: int | None = None,
             name: str | None = None, limits: ReadLimits = LOCAL_FILE_LIMITS,
             progress=None, purpose: str = "train") -> Dataset:
    """A dataset from a ``.npy`` file holding an n × (d + 1) numeric array: the label column
    (the last by default, or the 0-based ``label_column``) and d feature columns.

    The file is memory-mapped (``allow_pickle=False``: object arrays are refused) and its
    feature columns are copied to float64 in blocks of rows, each checked for NaN and inf.
    ``purpose`` is :func:`~snacks_core.datasets.make_dataset`'s ('predict' accepts one label).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from snacks_core.datasets import load_npy
    >>> path = os.path.join(tempfile.mkdtemp(), "points.npy")
    >>> np.save(path, np.array([[0.5, 1.0, 1], [1.5, 2.0, -1], [2.5, 0.0, 1]]))
    >>> data = load_npy(path)
    >>> data.X.tolist(), data.y.tolist()
    ([[0.5, 1.0], [1.5, 2.0], [2.5, 0.0]], [1, -1, 1])
    """
    name = name or Path(path).name
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc}.") from None
    except ValueError as exc:
        raise ValueError(f"{name} is not a numeric .npy array ({exc}).") from None
    if not isinstance(array, np.ndarray) or array.ndim != 2 or array.shape[1] < 2:
        raise ValueError(f"{name} must hold a 2-D array with feature columns and a label "
                         f"column; it holds shape {getattr(array, 'shape', None)}.")
    if array.dtype.kind not in "fiub":
        raise ValueError(f"{name} holds {array.dtype} values; save the features and labels as "
                         "numbers.")
    n_rows, width = array.shape
    if width - 1 > limits.max_features:
        raise ValueError(f"{name} has {width:,} columns, more than the limit of "
                         f"{limits.max_features:,} features ({limits.policy}).")
    check_rows(name, n_rows, n_rows, limits)
    label = label_index(label_column, list(range(width)), name)
    features = np.array([j for j in range(width) if j != label])
    check_growth(name, n_rows, 8 * n_rows * width)
    X = np.empty((n_rows, width - 1))
    labels = np.empty(n_rows, dtype=array.dtype)
    for start in range(0, n_rows, _BLOCK_ROWS):
        stop = min(n_rows, start + _BLOCK_ROWS)
        block = np.asarray(array[start:stop])
        X[start:stop] = block[:, features]
        labels[start:stop] = block[:, label]
        bad = np.argwhere(~np.isfinite(X[start:stop]))
        if bad.size:
            row, j = bad[0]
            raise ValueError(f"{name}, row {start + row + 1:,}, column {features[j]}: "
                             f"{X[start + row, j]!r} is not a finite number; remove or "
                             "impute it.")
        if progress is not None:
            progress(stop, None, None)
    values, codes = np.unique(labels, return_inverse=True)
    if values.shape[0] > limits.max_classes:
        raise ValueError(f"{name}: more than {limits.max_classes:,} different labels in column "
                         f"{label}; a classifier needs a column of class labels.")
    classes = parse_labels([repr(value.item()) for value in values], name)
    return make_dataset(X, classes[codes], name, description=f"NumPy array, label column "
                        f"{label}.", file_format="npy", label_column=label, purpose=purpose)
