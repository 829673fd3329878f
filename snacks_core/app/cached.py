"""Cached calls of the explorer: data, splits, models and surfaces keyed by their settings.

Keys are strings built from the settings (and the content hash of uploaded files), so a
redraw with unchanged settings costs a dictionary lookup.  Arrays passed with a leading
underscore are not hashed: the key already says what they are.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import streamlit as st

from snacks_core import datasets
from snacks_core.app import cpu_sharing, server
from snacks_core.app.figures.boundary import decision_surface
from snacks_core.app.state import Keys, current
from snacks_core.datasets.drawn import drawn_dataset
from snacks_core.kernels import spectra
from snacks_core.kernels.hss import compression_table
from snacks_core.model import evaluation
from snacks_core.solvers.objective import C_to_lam

# Widths of the decision surface grid (points per axis).
SURFACE_RESOLUTION = 140


@dataclass(frozen=True)
class DataRequest:
    """Everything that determines the split: a cache key and the code snippet's source."""

    dataset: str
    n_samples: int | None
    noise: float | None
    n_features: int | None
    positive_fraction: float | None
    seed: int
    test_size: float
    scaling: str
    pca2d: bool
    # The drawn dataset's points (their text form), None for every other dataset.
    points: str | None = None

    @property
    def kind(self) -> str:
        return self.dataset.split(":", 1)[0]

    @property
    def name(self) -> str:
        return self.dataset.split(":", 1)[1]

    def key(self) -> str:
        return repr(sorted(asdict(self).items()))


def dataset_options() -> list[str]:
    """Every dataset the sidebar offers, as ``kind:name`` strings."""
    options = [f"synthetic:{name}" for name in datasets.SYNTHETIC]
    options.append(DRAWN_OPTION)
    options += [f"bundled:{name}" for name in datasets.BUNDLED]
    options += [f"sample:{name}" for name in datasets.sample_files()]
    options += [f"libsvm:{name}" for name in datasets.cached_libsvm_datasets()]
    options += [upload_option(key, dataset.name)
                for key, dataset in st.session_state.get(Keys.UPLOADS, {}).items()]
    return options


# The points a user draws on the Playground's plane (snacks_core.datasets.drawn).
DRAWN_OPTION = "drawn:points"

BUNDLED_LABELS = {"breast_cancer": "breast cancer", "digits7": "digits 7 vs rest (mnist-bin)",
                  "wine": "wine (3 classes)", "iris": "iris (3 classes)"}


def dataset_label(option) -> str:
    kind, name = option.split(":", 1)
    if kind == "synthetic":
        return {"xor": "XOR", "blobs": "Gaussian blobs (3 classes)",
                "classification": "make_classification"}.get(name, name)
    if kind == "bundled":
        return f"sklearn · {BUNDLED_LABELS[name]}"
    if kind == "upload":
        return f"uploaded · {name.split(':', 1)[-1]}"
    if option == DRAWN_OPTION:
        return "draw your own points"
    return f"{kind} · {name}"


def data_request() -> DataRequest:
    option = current("dataset")
    synthetic = option.startswith("synthetic:")
    classification = option == "synthetic:classification"
    return DataRequest(
        dataset=option,
        n_samples=int(current("n_samples")) if synthetic else None,
        noise=float(current("noise")) if synthetic else None,
        n_features=int(current("n_features")) if classification else None,
        positive_fraction=float(current("positive_fraction")) if classification else None,
        seed=int(current("seed")),
        test_size=float(current("test_size")),
        scaling=current("scaling"),
        pca2d=bool(current("pca2d")),
        points=current("points") if option == DRAWN_OPTION else None,
    )


@st.cache_data(max_entries=12, show_spinner="Loading data…")
def _load(kind, name, n_samples, noise, n_features, positive_fraction, seed):
    if kind == "synthetic":
        return datasets.make_synthetic(name, n_samples, noise=noise, random_state=seed,
                                       n_features=n_features or 10,
                                       positive_fraction=positive_fraction or 0.5)
    if kind == "bundled":
        return datasets.load_bundled(name)
    if kind == "sample":
        return datasets.load_file(datasets.sample_data_dir() / name)
    if kind == "libsvm":
        return datasets.fetch_libsvm(name)
    raise ValueError(f"unknown dataset {kind}:{name}.")


def load_dataset(request: DataRequest) -> datasets.Dataset:
    """The dataset of a request (uploads come from the session, the rest from the cache)."""
    if request.kind == "upload":
        uploads = st.session_state.get(Keys.UPLOADS, {})
        key = request.name.split(":", 1)[0]
        if key not in uploads:
            raise ValueError("The uploaded file is no longer in this session; upload it again "
                             "on the Data page.")
        return uploads[key]
    if request.dataset == DRAWN_OPTION:
        # A few hundred points at most: built afresh, no cache needed.
        return drawn_dataset(request.points, request.test_size)
    return _load(request.kind, request.name, request.n_samples, request.noise,
                 request.n_features, request.positive_fraction, request.seed)


@st.cache_data(max_entries=12, show_spinner=False)
def _split(key, _dataset, test_size, scaling, seed, pca2d):
    return datasets.split_dataset(_dataset, test_size=test_size, scaling=scaling,
                                  random_state=seed, project_2d=pca2d)


def load_split(request: DataRequest) -> datasets.Split:
    dataset = load_dataset(request)
    return _split(request.key(), dataset, request.test_size, request.scaling, request.seed,
                  request.pca2d)


def sidebar_lam() -> float:
    """The sidebar's λ: the λ slider's, or λ = 1/(2nC) from the C slider's, with n the
    training rows."""
    if current("reg_by") != "C":
        return float(current("lam"))
    return C_to_lam(float(current("C")), load_split(data_request()).X_train.shape[0])


def model_params() -> dict:
    """Estimator parameters from the sidebar, only those that apply to the chosen kernel."""
    kernel = current("kernel")
    params = {"kernel": kernel}
    if kernel != "linear":
        params["gamma"] = "scale" if current("gamma_scale") else float(current("gamma"))
    if kernel == "polynomial":
        params["degree"] = int(current("degree"))
        params["coef0"] = float(current("coef0"))
    params.update({
        "n_components": int(current("m")),
        "lam": sidebar_lam(),
        "solver": current("solver"),
        "sampling": current("sampling"),
        "max_epochs": int(current("max_epochs")),
        "class_weight": None if current("class_weight") == "none" else current("class_weight"),
        "random_state": int(current("seed")),
    })
    return params


def params_key(params) -> str:
    """The estimator parameters as a string: the part of a cache key (or of a snapshot of the
    settings) that says which model."""
    return repr(sorted(params.items()))


@st.cache_resource(max_entries=64, show_spinner=False)
def _train(data_key, model_key, _split, _params):
    # Checkpoint weights are cheap for 2-D data and let the Convergence page replay the
    # boundary from the same cached run the Playground shows.  A heavy fit takes a slot of
    # the server's queue here, on a cache miss only.
    work = cpu_sharing.fit_work(_split.X_train.shape[0], _params["n_components"], _params["solver"])
    with server.train_slot(work):
        return evaluation.train(_split, _params, keep_checkpoints=_split.n_features == 2)


def train(request: DataRequest, split, params) -> evaluation.Run:
    """The trained run for these settings (cached: one fit per distinct setting)."""
    return _train(request.key(), params_key(params), split, params)


@st.cache_data(max_entries=64, show_spinner=False)
def _surface(data_key, model_key, _model, _X):
    # Kept in float32, as the figures draw it: half the cached copy.
    surface = decision_surface(_model, _X, resolution=SURFACE_RESOLUTION)
    return replace(surface, scores=surface.scores.astype(np.float32))


def _plane_points(split):
    """The training and test points, dense: what a decision surface covers."""
    return np.vstack([np.asarray(A.todense() if hasattr(A, "todense") else A)
                      for A in (split.X_train, split.X_test)])


def surface(request: DataRequest, split, params, run):
    """The decision function on a grid over the training and test points (cached)."""
    return _surface(request.key(), params_key(params), run.model, _plane_points(split))


# Points per axis of a small-multiple thumbnail: 64 of them stay quick to compute and draw.
THUMBNAIL_RESOLUTION = 40


@st.cache_data(max_entries=16, show_spinner=False)
def _cell_surfaces(sweep_key, cells, resolution, _models, _X):
    return [decision_surface(_models[cell], _X, resolution=resolution) for cell in cells]


def cell_surfaces(result, cells, split, resolution=SURFACE_RESOLUTION):
    """Decision surfaces of a sweep's kept models (``result['models']``, by cell), over the
    training and test points (cached by the sweep and the cells)."""
    return _cell_surfaces(repr(result["key"]), tuple(cells), resolution, result["models"],
                          _plane_points(split))


@st.cache_resource(max_entries=4, show_spinner="Drawing every cell's boundary…")
def _figure(key, _build):
    return _build()


def figure_once(key, build):
    """``build()``, a figure slow to lay out (such as 64 small multiples), built once per
    ``key`` on this server: ``key`` must say everything the figure shows.  Shared by
    sessions, so it is never changed after it is built."""
    return _figure(key, build)


@st.cache_data(max_entries=16, show_spinner=False)
def _cell_predictions(sweep_key, cell, _model, _X_fit, _X_scored):
    return _model.predict(_X_fit), _model.predict(_X_scored)


def cell_predictions(result, cell, X_fit, X_scored):
    """A kept model's predictions on the rows it trained on and on those it was scored on
    (cached by the sweep and the cell: the rows follow from them)."""
    return _cell_predictions(repr(result["key"]), cell, result["models"][cell], X_fit,
                             X_scored)


def _kernel_key(params) -> str:
    return repr(sorted((k, params[k]) for k in ("kernel", "gamma", "degree", "coef0")
                       if k in params))


@st.cache_data(max_entries=16, show_spinner=False)
def _spectrum(data_key, kernel_key, _X, _params, factors, m, seed):
    return spectra.spectrum_curves(_X, _params, factors, m, seed)


def spectrum(request, split, params, factors, m):
    """Eigenvalues of K_mm for γ times each factor (cached)."""
    return _spectrum(request.key(), _kernel_key(params), split.X_train, params, tuple(factors),
                     int(m), request.seed)


@st.cache_data(max_entries=16, show_spinner=False)
def _approximation(data_key, kernel_key, _X, _params, m_values, seeds):
    return spectra.approximation_errors(_X, _params, list(m_values), list(seeds))


def approximation(request, split, params, m_values, seeds):
    """Kernel approximation error against m per method (cached)."""
    return _approximation(request.key(), _kernel_key(params), split.X_train, params,
                          tuple(m_values), tuple(seeds))


@st.cache_data(max_entries=8, show_spinner=False)
def _compression(data_key, kernel_key, _X, _params):
    return compression_table(_X, kernel=_params["kernel"], gamma=_params["gamma"],
                             degree=_params.get("degree", 3), coef0=_params.get("coef0", 1.0))


def compression(request, split, params):
    """The HSS compression of the training rows' kernel at several target accuracies
    (:func:`snacks_core.kernels.hss.compression_table`, cached)."""
    return _compression(request.key(), _kernel_key(params), split.X_train, params)


@st.cache_data(max_entries=8, show_spinner=False)
def csv_columns(raw: bytes):
    """Column names of uploaded CSV bytes (cached by content)."""
    return datasets.csv_columns(raw, limits=datasets.UPLOAD_LIMITS)


@st.cache_data(max_entries=20, show_spinner=False)
def upload_format(name, raw: bytes) -> str:
    """'csv' or 'libsvm': an upload's format, detected from its content (cached by it)."""
    return datasets.sniff_format(raw, name=name, limits=datasets.UPLOAD_LIMITS)


def parse_upload(name, raw, label_column=None, test=None) -> str:
    """Parse an uploaded file once, keep it for the session, return its dataset option.

    ``test``, a ``(name, raw)`` pair, is the optional test file: the two are read as one run
    by :func:`snacks_core.datasets.load_files` (one LIBSVM index base, one width, the same
    label column), and its rows replace the random split
    (:func:`snacks_core.datasets.with_test_part`); its name is kept for the exported code
    (:func:`upload_test_file`).  Nothing is unpickled or evaluated: CSV and LIBSVM text
    (recognised by its content, not its name) go through our own parsers, under the caps
    of an upload (:data:`snacks_core.datasets.UPLOAD_LIMITS`), each file.
    """
    content = raw + repr(label_column).encode()
    if test is not None:
        content += b"\0test\0" + test[1]
    key = datasets.fingerprint(content)
    uploads = st.session_state.setdefault(Keys.UPLOADS, {})
    if key not in uploads:
        if test is None:
            uploads[key] = _read_upload(name, raw, label_column)
        else:
            train, test_part = _read_pair([(name, raw), test], label_column)
            uploads[key] = datasets.with_test_part(train, test_part)
            st.session_state.setdefault(Keys.UPLOAD_TEST_FILES, {})[key] = test[0]
    return upload_option(key, uploads[key].name)


def _read_upload(name, raw, label_column):
    if upload_format(name, raw) == "csv":
        return datasets.load_csv(raw, label_column=label_column, name=name,
                                 limits=datasets.UPLOAD_LIMITS)
    return datasets.load_libsvm(raw, name=name, limits=datasets.UPLOAD_LIMITS)


def _read_pair(files, label_column):
    """A training and a test upload (``(name, raw)`` each) read by ``load_files``.

    ``load_files`` picks a reader by a file's name, an upload's format is its content's: each
    is written to a private temporary folder under a name that says its format, and read
    back under the caps of an upload (messages name the file as uploaded, or with the
    suffix added)."""
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i, (name, raw) in enumerate(files):
            name = Path(name).name or "upload"
            kind = upload_format(name, raw)
            if datasets.file_kind(name) != kind:
                name += ".csv" if kind == "csv" else ".svm"
            path = Path(folder) / str(i) / name
            path.parent.mkdir()
            path.write_bytes(raw)
            paths.append(path)
        read = datasets.load_files(paths, label_column=label_column,
                                   purpose=("train", "predict"), limits=datasets.UPLOAD_LIMITS)
    return [replace(dataset, name=name) for dataset, (name, _) in zip(read, files, strict=True)]


def upload_test_file(request: DataRequest) -> str | None:
    """The name of an uploaded dataset's test file, None without one."""
    if request.kind != "upload":
        return None
    key = request.name.split(":", 1)[0]
    return st.session_state.get(Keys.UPLOAD_TEST_FILES, {}).get(key)


def upload_option(key, file_name) -> str:
    """``upload:<content hash>:<file name>``: the name travels with the option for labels."""
    return f"upload:{key}:{file_name}"


def download_libsvm(name) -> str:
    """Download (once) a public LIBSVM dataset; return its dataset option."""
    _load("libsvm", name, None, None, None, None, 0)
    return f"libsvm:{name}"
