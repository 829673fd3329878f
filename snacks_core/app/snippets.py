"""Code snippets: the Python a user copies from the app to reproduce a run end to end.

:func:`run_code` writes the lines that build the dataset, split and scale it, fit a
:class:`~snacks_core.SnacksClassifier` with the run's parameters and, when the model can be
saved (:func:`snacks_core.persistence.unsaved_reason`), save the whole pipeline with
:func:`snacks_core.persistence.model_to_npz` and load it back.
"""

from __future__ import annotations


def dataset_code(request, dataset, test_file=None) -> str:
    """The lines of Python that build a request's dataset (a file keeps its label column);
    with ``test_file``, the name of an uploaded test file, the two files are read as one
    run and the test file's rows are the test part."""
    kind, name = request.kind, request.name
    if test_file is not None:
        label = ("" if dataset.label_column is None
                 else f"label_column={dataset.label_column!r}, ")
        return ("from snacks_core.datasets import load_files, with_test_part\n"
                f"train, test = load_files([{name.split(':', 1)[-1]!r}, {test_file!r}], "
                f"{label}purpose=('train', 'predict'))\n"
                "dataset = with_test_part(train, test)")
    if kind == "synthetic":
        extra = ""
        if name == "classification":
            extra = (f", n_features={request.n_features}, "
                     f"positive_fraction={_literal(request.positive_fraction)}")
        return (f"from snacks_core.datasets import make_synthetic\n"
                f"dataset = make_synthetic({name!r}, {request.n_samples}, "
                f"noise={_literal(request.noise)}, "
                f"random_state={request.seed}{extra})")
    if kind == "bundled":
        return f"from snacks_core.datasets import load_bundled\ndataset = load_bundled({name!r})"
    if kind == "libsvm":
        return f"from snacks_core.datasets import fetch_libsvm\ndataset = fetch_libsvm({name!r})"
    if kind == "drawn":
        # The points themselves, in their text form (the app's link carries the same).
        return (f"from snacks_core.datasets.drawn import drawn_dataset\n"
                f"dataset = drawn_dataset({request.points!r}, "
                f"test_size={_literal(request.test_size)})")
    if kind == "sample":
        path, imports = f"sample_data_dir() / {name!r}", "sample_data_dir, "
    else:
        path, imports = repr(name.split(":", 1)[-1]), ""
    if dataset.file_format == "csv":
        label = "" if dataset.label_column is None else f", label_column={dataset.label_column!r}"
        return (f"from snacks_core.datasets import {imports}load_csv\n"
                f"dataset = load_csv({path}{label})")
    return f"from snacks_core.datasets import {imports}load_libsvm\ndataset = load_libsvm({path})"


def run_code(request, dataset, params, *, save_model=True, test_file=None) -> str:
    """Python that reproduces a run end to end: the data, the split with its scaling, the fit,
    and (with ``save_model``) the whole pipeline, scaling included, saved as
    ``snacks_model.npz`` and loaded back as ``pipeline``, which predicts on raw rows.
    ``test_file``: an uploaded test file's name (:func:`dataset_code`)."""
    split_args = (f"test_size={_literal(request.test_size)}, scaling={request.scaling!r}, "
                  f"random_state={request.seed}, project_2d={request.pca2d}")
    args = ",\n    ".join(f"{key}={_literal(value)}" for key, value in params.items())
    note = ("" if request.kind != "upload" else
            "# The files you uploaded, in the current folder.\n" if test_file else
            "# The file you uploaded, in the current folder.\n")
    code = (
        ("from pathlib import Path\n\n" if save_model else "")
        + "from snacks_core import SnacksClassifier\n"
        "from snacks_core.datasets import split_dataset\n"
        + ("from snacks_core.persistence import model_to_npz, pipeline_from_npz\n"
           if save_model else "")
        + f"{note}{dataset_code(request, dataset, test_file)}\n"
        f"split = split_dataset(dataset, {split_args})\n\n"
        f"model = SnacksClassifier(\n    {args},\n)\n"
        "model.fit(split.X_train, split.y_train, eval_set=(split.X_test, split.y_test))\n"
        "print('test error:', 1 - model.score(split.X_test, split.y_test))\n"
    )
    if not save_model:
        return code
    return code + (
        "\n# The model with the split's scaling: predicts on rows as they are in the file.\n"
        "Path('snacks_model.npz').write_bytes(model_to_npz(model, split.preprocessing))\n"
        "pipeline = pipeline_from_npz(Path('snacks_model.npz').read_bytes())\n"
    )


def _literal(value) -> str:
    """Python source for a value; a float as its shortest form at 12 significant digits
    (a slider's 0.05 can arrive as 0.050000000000000044)."""
    if isinstance(value, float):
        return repr(float(f"{value:.12g}"))
    return repr(value)
