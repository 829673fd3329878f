"""DATA and --test: built-in names and files read into the split a command trains on."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from snacks_core import datasets
from snacks_core.datasets.remote import url_scheme
from snacks_core.datasets.streams import check_regular_file

A9A_LIKE = "a9a_like"


def load_data(spec, *, label_column=None, n_samples=None, seed=0, progress=None,
              index_base="auto") -> datasets.Dataset:
    """The dataset DATA names: a built-in name, a file of sample_data/, or a file path."""
    generated = spec in datasets.SYNTHETIC or spec == A9A_LIKE
    if n_samples is not None and not generated:
        raise ValueError(f"--n-samples sets the size of a generated dataset "
                         f"({', '.join(datasets.SYNTHETIC)}, {A9A_LIKE}); {spec!r} is not one.")
    if label_column is not None and is_built_in(spec):
        raise ValueError(f"--label-column chooses the label of a CSV file; {spec!r} is a "
                         "built-in dataset with its own labels.")
    if spec in datasets.SYNTHETIC:
        return datasets.make_synthetic(spec, 1000 if n_samples is None else n_samples,
                                       random_state=seed)
    if spec in datasets.BUNDLED:
        return datasets.load_bundled(spec)
    if spec == A9A_LIKE:
        n_train = 32561 if n_samples is None else n_samples
        X, y, X_test, y_test = datasets.make_a9a_like(n_train, max(1, n_train // 2),
                                                      random_state=seed)
        return datasets.make_dataset(X, y, A9A_LIKE, X_test=X_test, y_test=y_test,
                                     description="a9a-shaped synthetic problem")
    if spec in datasets.LIBSVM_DATASETS:
        return datasets.fetch_libsvm(spec)
    return read_files([data_path(spec)], label_column, progress, index_base=index_base)[0]


def data_path(spec) -> Path | str:
    """The file DATA names: a path, a file of sample_data/ by its name, or a URL (read by
    :mod:`snacks_core.datasets.remote`)."""
    if url_scheme(spec) is not None:
        return spec  # a Path would fold its '//'
    path = Path(spec)
    if not path.exists() and spec in datasets.sample_files():
        path = datasets.sample_data_dir() / spec
    if path.exists():
        # A FIFO, a device or a folder: refused as predict refuses it, saying what it is.
        check_regular_file(path, "DATA file")
    else:
        raise ValueError(f"DATA {spec!r} is neither a built-in dataset nor a file; see "
                         "'snacks datasets' for the names.")
    return path


def read_files(paths, label_column, progress=None, **options):
    """Data files read as one run (:func:`snacks_core.datasets.load_files`: one index base,
    one width); for a CSV, errors about its columns say how to choose the label."""
    label_column = label_column_value(label_column)
    # Files read as one run report as one: name them all (the rows of a test file are not
    # the training file's).
    reading = None if progress is None else progress.reader(
        " and ".join(Path(path).name for path in paths))
    try:
        return datasets.load_files(paths, label_column=label_column, progress=reading,
                                   **options)
    except ValueError as exc:
        message = str(exc)
        csv = any(datasets.file_kind(path) == "csv" for path in paths)
        if csv and ("label" in message or "not a number" in message):
            message += (" Choose the label column with --label-column NAME_OR_INDEX "
                        "(default: the last column).")
        raise ValueError(message) from None


def label_column_value(text):
    """--label-column as the readers take it: a 0-based index when it is a whole number,
    else a column name (None: the last column)."""
    return int(text) if text is not None and text.lstrip("-").isdigit() else text


def training_data(args, progress=None) -> datasets.Dataset:
    """DATA with --test as its test part, both files read with one index base.

    Raises
    ------
    ValueError
        When the test part has labels the training part lacks (no model predicts them).
    """
    base = "auto" if args.index_base is None else args.index_base
    if args.test and not is_built_in(args.data):
        # Both files read as one run: one index base, one width.
        dataset, test = read_files([data_path(args.data), args.test], args.label_column,
                                   progress, index_base=base, purpose=("train", "predict"))
    else:
        dataset = load_data(args.data, label_column=args.label_column,
                            n_samples=args.n_samples, seed=getattr(args, "seed", 0),
                            progress=progress, index_base=base)
        test = None if not args.test else read_files(
            [args.test], args.label_column, progress, index_base=base, purpose="predict",
            n_features=dataset.n_features)[0]
    if test is not None:
        dataset = datasets.with_test_part(dataset, test)
    if dataset.y_test is not None:
        check_known_labels(dataset.y_test, np.unique(dataset.y),
                           args.test or f"{dataset.name}'s test part")
    return dataset


def training_split(args, dataset, scaling=None) -> datasets.Split:
    """The split a command trains and tests on, scaled by ``scaling`` (default
    ``args.scaling``)."""
    # Without --test-size, the library's own test share.
    share = {} if args.test_size is None else {"test_size": args.test_size}
    return datasets.split_dataset(dataset, **share,
                                  scaling=args.scaling if scaling is None else scaling,
                                  random_state=getattr(args, "seed", 0))


def check_known_labels(y, classes, name):
    """Refuse labels ``y`` outside ``classes``: error and F1 would compare labels the model
    never predicts."""
    unseen = np.setdiff1d(np.unique(y), classes)
    if unseen.size:
        raise ValueError(f"{name} has the label(s) {', '.join(map(str, unseen[:5]))} that "
                         f"the training data does not have (its labels: "
                         f"{', '.join(map(str, classes))}); a model predicts only the labels "
                         "it was trained on: write the same labels in both files.")


def is_built_in(spec) -> bool:
    """Whether DATA names a built-in dataset (a generator, a bundled or a public LIBSVM set)
    rather than a file."""
    return (spec in datasets.SYNTHETIC or spec == A9A_LIKE or spec in datasets.BUNDLED
            or spec in datasets.LIBSVM_DATASETS)
