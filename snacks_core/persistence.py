"""A fitted SnacksClassifier and its preprocessing to and from a ``.npz`` file (plain arrays,
never pickle).

The file holds the estimator's parameters (as JSON text), the classes, ``coef_``,
``intercept_``, the feature map (landmarks and ``components_`` of the Nyström embedding,
or the support vectors of the exact model), the convergence history and, when given, the
split's fitted scaling and 2-D projection, the index base of the LIBSVM files the model was
trained on and the class whose F1 was reported (what ``snacks predict`` reads new files and
scores with: :func:`load_model`).  Loading reads each entry's declared shape and
type before reading its data, refuses anything larger than :data:`MAX_MODEL_BYTES` or the
memory this process can spare, and checks every entry (names, kernel, map, γ, shapes,
finite values) so that a damaged or crafted file fails on load with a ``ValueError``, never
at ``predict``; ``allow_pickle=False`` throughout, so a file cannot run code.
"""

from __future__ import annotations

import io
import json
import math
import sys
import zipfile
import zlib
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import Pipeline

from snacks_core.core.memory import check_fits_in_memory
from snacks_core.datasets.scaling import FeatureScaling, scaling_fields, scaling_from_fields
from snacks_core.kernels.functions import KERNELS, check_kernel_params
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.model.estimator import SnacksClassifier, SupportVectorMap
from snacks_core.model.specs import Kernel
from snacks_core.solvers import SOLVERS

FORMAT_VERSION = 2
# Largest model file accepted, counted as the arrays it declares (after decompression).
MAX_MODEL_BYTES = 256 * 2**20
_MAX_ENTRIES = 100
_FIXED_ENTRIES = {
    "format_version", "params", "classes", "coef", "intercept", "n_features_in", "map",
    "gamma", "landmark_indices", "components", "triangular", "eigenvalues", "landmarks",
    "landmarks_data", "landmarks_indices", "landmarks_indptr", "landmarks_shape",
    "scaling", "scaling_offset", "scaling_factor", "projection_mean", "projection_components",
    "index_base", "f1_class", "multiclass",
}
_REQUIRED = ("params", "map", "classes", "coef", "intercept", "n_features_in", "gamma",
             "landmark_indices")


class LinearProjection(TransformerMixin, BaseEstimator):
    """The 2-D projection of a split (PCA or truncated SVD): (X − mean) Cᵀ, from arrays."""

    def __init__(self, mean=None, components=None):
        self.mean, self.components = mean, components

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        Z = np.asarray(X @ self.components.T)
        return Z - self.mean @ self.components.T


def _params_json(model) -> str:
    params = model.get_params()
    params["dtype"] = np.dtype(params["dtype"]).name
    params["solver_options"] = None
    if hasattr(model, "lam_"):
        # The λ the fit solved for, whether it was given as C or 'auto'.
        params.update(lam=float(model.lam_), C=None)
    if isinstance(params["random_state"], (np.random.RandomState, np.random.Generator)):
        params["random_state"] = None
    try:
        return json.dumps(params)
    except TypeError as exc:
        raise ValueError(f"the model's parameters cannot be written as JSON ({exc}); use "
                         "plain numbers and strings.") from None


def _put_matrix(arrays, name, A):
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        arrays.update({f"{name}_data": A.data, f"{name}_indices": A.indices,
                       f"{name}_indptr": A.indptr, f"{name}_shape": np.array(A.shape)})
    else:
        arrays[name] = np.asarray(A)


def _put_preprocessing(arrays, preprocessing):
    """The fitted scaler and projection of a split as arrays (see FeatureScaling)."""
    for step in preprocessing:
        fields = scaling_fields(step)
        if fields is not None:
            arrays.update(fields)
        elif isinstance(step, LinearProjection):
            arrays.update(projection_components=step.components, projection_mean=step.mean)
        elif _is_instance(step, "sklearn.decomposition", "PCA", "TruncatedSVD"):
            mean = getattr(step, "mean_", None)
            arrays.update(projection_components=step.components_,
                          projection_mean=np.zeros(step.components_.shape[1])
                          if mean is None else mean)
        else:
            raise ValueError(f"a {type(step).__name__} step cannot be exported; scalings "
                             "(standard, minmax, maxabs) and PCA/SVD projections can.")


def _is_instance(value, module, *names) -> bool:
    """isinstance(value, module.name…) without importing ``module``: an instance of its
    classes exists only once it was imported (scikit-learn's decompositions, the HSS model
    are not imported to save the others)."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, tuple(getattr(loaded, n) for n in names))


def model_to_npz(model, preprocessing=(), *, index_base=None, f1_label=None) -> bytes:
    """The bytes of a ``.npz`` file holding a fitted :class:`SnacksClassifier`.

    Parameters
    ----------
    model : SnacksClassifier or sklearn.pipeline.Pipeline
        Fitted; a pipeline's last step is the classifier and its other steps the
        preprocessing (scalers, PCA/SVD projections; 'passthrough' steps are skipped).
    preprocessing : sequence of fitted transformers, optional
        The split's fitted scaler and projection
        (:attr:`snacks_core.datasets.Split.preprocessing`), for a bare classifier:
        :func:`pipeline_from_npz` then gives a pipeline that predicts on raw rows.
    index_base : {0, 1}, optional
        The first feature index of the LIBSVM files the model was trained on.
    f1_label : label, optional
        The class whose F1 was reported at training (one of the model's classes).

    Raises
    ------
    ValueError
        For an unfitted model, a pipeline that does not end in a SnacksClassifier, both a
        pipeline and ``preprocessing``, or a step or feature map that cannot be exported.
    """
    if isinstance(model, Pipeline):
        if len(preprocessing):
            raise ValueError("give the preprocessing either as the pipeline's steps or as "
                             "preprocessing=, not both.")
        preprocessing = [step for _, step in model.steps[:-1]
                         if step is not None and step != "passthrough"]
        model = model.steps[-1][1]
    if not isinstance(model, SnacksClassifier) or not hasattr(model, "coef_"):
        what = "an unfitted" if isinstance(model, SnacksClassifier) else "a"
        raise ValueError(f"model_to_npz saves a fitted SnacksClassifier (or a Pipeline ending "
                         f"in one); got {what} {type(model).__name__}.")
    classes = np.asarray(model.classes_)
    if classes.dtype.kind == "O":
        classes = classes.astype(str)
    arrays = {"format_version": np.array(FORMAT_VERSION), "params": np.array(_params_json(model)),
              "classes": classes, "coef": model.coef_, "intercept": model.intercept_,
              "n_features_in": np.array(model.n_features_in_)}
    if model._one_vs_one:
        # Only one-vs-one is written: a one-vs-rest file is as before it existed.
        arrays["multiclass"] = np.array("ovo")
    if index_base is not None:
        if index_base not in (0, 1):
            raise ValueError(f"index_base is 0 or 1, got {index_base!r}.")
        arrays["index_base"] = np.array(int(index_base))
    if f1_label is not None:
        matches = np.flatnonzero(np.asarray(model.classes_) == f1_label)
        if matches.size != 1:
            raise ValueError(f"f1_label {f1_label!r} is not one of the model's classes.")
        arrays["f1_class"] = np.array(int(matches[0]))
    embedding = model.embedding_
    if isinstance(embedding, NystromEmbedding):
        arrays.update({"map": np.array("nystrom"), "components": embedding.components_,
                       "triangular": np.array(bool(embedding.triangular_)),
                       "gamma": np.array(embedding.gamma_),
                       "landmark_indices": embedding.landmark_indices_,
                       "eigenvalues": embedding.eigenvalues_})
    elif isinstance(embedding, SupportVectorMap):
        arrays.update({"map": np.array("exact"), "gamma": np.array(embedding.kernel.gamma),
                       "landmark_indices": embedding.landmark_indices_})
    else:
        raise ValueError(f"models whose feature map is a {type(embedding).__name__} cannot be "
                         "exported to .npz yet; the Nyström and exact LIBSVM models can.")
    _put_matrix(arrays, "landmarks", embedding.landmarks_)
    for name, values in model.history_.items():
        arrays[f"history_{name}"] = values
    _put_preprocessing(arrays, preprocessing)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


class SavedModel(NamedTuple):
    """What a model file holds for predicting on new files (:func:`load_model`).

    ``pipeline`` predicts on raw rows (:func:`pipeline_from_npz`); ``n_features`` is the
    width of those rows; ``index_base`` the first feature index of the LIBSVM files it was
    trained on and ``f1_label`` the class whose F1 was reported then (None when the file
    does not say).
    """

    pipeline: Pipeline
    n_features: int
    index_base: int | None
    f1_label: object


def load_model(source) -> SavedModel:
    """The pipeline of a :func:`model_to_npz` file with how to read and score new rows.

    Raises
    ------
    ValueError
        As :func:`model_from_npz`.
    """
    steps, model, extras = _load(source)
    raw = steps[0][1] if steps else model
    n_features = (raw.components.shape[1] if isinstance(raw, LinearProjection) else
                  raw.offset.shape[0] if isinstance(raw, FeatureScaling) else
                  model.n_features_in_)
    return SavedModel(Pipeline(steps + [("model", model)]), int(n_features), **extras)


def model_from_npz(source) -> SnacksClassifier:
    """The :class:`SnacksClassifier` of a :func:`model_to_npz` file, ready to predict on rows
    preprocessed as at training time (:func:`pipeline_from_npz` includes that step).

    Raises
    ------
    ValueError
        For anything but a valid model file: not a .npz archive, damaged, too large,
        missing or unknown entries, or entries of the wrong type, shape or value.
    """
    return _load(source)[1]


def pipeline_from_npz(source) -> Pipeline:
    """A scikit-learn pipeline that predicts on raw rows: the stored scaling and projection
    (when the file has them), then the classifier."""
    return load_model(source).pipeline


def _load(source):
    arrays = _read_arrays(source)
    missing = [key for key in _REQUIRED if key not in arrays]
    if "landmarks" not in arrays and "landmarks_data" not in arrays:
        missing.append("landmarks")
    if missing:
        raise ValueError(f"not a Snacks model file: the entries {missing} are missing.")
    try:
        return _build(arrays)
    except (TypeError, KeyError, IndexError, OverflowError) as exc:
        raise ValueError(f"not a valid Snacks model file ({type(exc).__name__}: {exc}).") from None


def _read_arrays(source) -> dict:
    """Every entry of a .npz archive, each declared shape and type checked before reading."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise ValueError(f"not a Snacks model file: not a .npz archive ({exc}).") from None
    arrays, total = {}, 0
    with archive:
        entries = archive.infolist()
        if len(entries) > _MAX_ENTRIES:
            raise ValueError(f"not a Snacks model file: {len(entries)} entries.")
        for entry in entries:
            key = entry.filename.removesuffix(".npy")
            if (key == entry.filename or key in arrays
                    or not (key in _FIXED_ENTRIES or key.startswith("history_"))):
                raise ValueError(f"not a Snacks model file: unexpected entry {entry.filename!r}.")
            try:
                with archive.open(entry) as member:
                    shape, dtype = _declared(member, entry.filename)
                    n_bytes = math.prod(shape) * dtype.itemsize
                    total += n_bytes
                    if total > MAX_MODEL_BYTES or entry.file_size > MAX_MODEL_BYTES:
                        raise ValueError(f"the model file declares more than "
                                         f"{MAX_MODEL_BYTES / 2**20:.0f} MiB of arrays "
                                         f"(snacks_core.persistence.MAX_MODEL_BYTES).")
                    check_fits_in_memory(total, "The model's arrays", "Use a smaller model.")
                with archive.open(entry) as member:
                    arrays[key] = np.lib.format.read_array(member, allow_pickle=False)
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error,
                    NotImplementedError) as exc:
                raise ValueError(f"the model file is damaged: entry {entry.filename!r} cannot "
                                 f"be read ({exc}).") from None
    return arrays


def _declared(member, name):
    """(shape, dtype) from a .npy header, refusing object arrays and odd types."""
    try:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except ValueError as exc:
        raise ValueError(f"the model file is damaged: entry {name!r} is not a NumPy array "
                         f"({exc}).") from None
    if dtype.hasobject or dtype.kind not in "biufU" or dtype.fields is not None:
        raise ValueError(f"not a Snacks model file: entry {name!r} holds {dtype} values.")
    return shape, dtype


def _scalar(arrays, key, kinds):
    value = arrays[key]
    if value.shape != () or value.dtype.kind not in kinds:
        raise ValueError(f"not a valid Snacks model file: {key!r} must be a single value of "
                         f"kind {kinds!r}, got shape {value.shape} and type {value.dtype}.")
    return value.item()


def _array(arrays, key, ndim, kinds, shape=None, finite=True):
    value = arrays[key]
    if value.ndim != ndim or value.dtype.kind not in kinds:
        raise ValueError(f"not a valid Snacks model file: {key!r} must be a {ndim}-D array of "
                         f"kind {kinds!r}, got shape {value.shape} and type {value.dtype}.")
    if shape is not None and any(s is not None and s != t
                                 for s, t in zip(shape, value.shape, strict=True)):
        expected = tuple("any" if s is None else s for s in shape)
        raise ValueError(f"not a valid Snacks model file: {key!r} has shape {value.shape}, "
                         f"expected {expected}.")
    if finite and value.dtype.kind == "f" and not np.all(np.isfinite(value)):
        raise ValueError(f"not a valid Snacks model file: {key!r} has NaN or infinite values.")
    return value


def _params(arrays):
    try:
        params = json.loads(_scalar(arrays, "params", "U"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a valid Snacks model file: 'params' is not JSON ({exc}).") from None
    if not isinstance(params, dict):
        raise ValueError("not a valid Snacks model file: 'params' is not a JSON object.")
    known = SnacksClassifier().get_params()
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(f"not a valid Snacks model file: unknown parameters {unknown}.")
    for key, value in params.items():
        if key != "class_weight" and not (value is None or isinstance(value, (str, int, float))):
            raise ValueError(f"not a valid Snacks model file: parameter {key!r} is {value!r}.")
    if params.get("dtype", "float64") not in ("float32", "float64"):
        raise ValueError(f"not a valid Snacks model file: dtype {params['dtype']!r}.")
    params["dtype"] = np.dtype(params.get("dtype", "float64"))
    model = SnacksClassifier(**params)
    if model.solver not in SOLVERS:
        raise ValueError(f"not a valid Snacks model file: unknown solver {model.solver!r}.")
    if model.kernel not in KERNELS:
        raise ValueError(f"not a valid Snacks model file: unknown kernel {model.kernel!r}.")
    check_kernel_params(model.kernel, None, model.degree, model.coef0)
    return model


def _build(arrays):
    version = _scalar(arrays, "format_version", "iu") if "format_version" in arrays else 1
    if version not in (1, FORMAT_VERSION):
        raise ValueError(f"not a Snacks model file this version reads (format {version}).")
    model = _params(arrays)
    feature_map = _scalar(arrays, "map", "U")
    if feature_map not in ("nystrom", "exact"):
        raise ValueError(f"not a valid Snacks model file: unknown feature map {feature_map!r}.")
    gamma = float(_scalar(arrays, "gamma", "iuf"))
    if not math.isfinite(gamma) or (gamma <= 0 and model.kernel != "linear"):
        raise ValueError(f"not a valid Snacks model file: γ = {gamma!r} is not a positive "
                         "finite number.")
    classes = _array(arrays, "classes", 1, "biufU")
    if classes.shape[0] < 2 or np.unique(classes).shape[0] != classes.shape[0]:
        raise ValueError("not a valid Snacks model file: 'classes' must hold two or more "
                         "different labels.")
    n_features = _scalar(arrays, "n_features_in", "iu")
    if n_features < 1:
        raise ValueError(f"not a valid Snacks model file: n_features_in = {n_features}.")
    landmarks = _landmarks(arrays, n_features)
    m = landmarks.shape[0]
    indices = _array(arrays, "landmark_indices", 1, "iu", (m,))
    # Files written before one-vs-one existed hold one-vs-rest models.
    multiclass = str(arrays["multiclass"]) if "multiclass" in arrays else "ovr"
    if multiclass not in ("ovr", "ovo"):
        raise ValueError(f"not a valid Snacks model file: multiclass {multiclass!r}.")
    n_classes = classes.shape[0]
    n_problems = (1 if n_classes == 2 else n_classes * (n_classes - 1) // 2
                  if multiclass == "ovo" else n_classes)
    if feature_map == "nystrom":
        embedding = _nystrom_map(arrays, model, gamma, landmarks, indices, int(n_features))
        width = embedding.n_components_
    else:
        embedding = SupportVectorMap(landmarks, indices, Kernel(model.kernel, gamma,
                                                                model.degree, model.coef0))
        width = m
    coef = _array(arrays, "coef", 2, "f", (n_problems, width))
    intercept = _array(arrays, "intercept", 1, "f", (n_problems,))
    history = {key[len("history_"):]: _array(arrays, key, 1, "biuf", finite=False)
               for key in arrays if key.startswith("history_")}
    if len({values.shape[0] for values in history.values()}) > 1:
        raise ValueError("not a valid Snacks model file: history columns of different lengths.")
    steps = _preprocessing(arrays, n_features)

    model.classes_, model.coef_, model.intercept_ = classes, coef, intercept
    model.multiclass_ = multiclass
    model.n_features_in_ = int(n_features)
    model.embedding_ = embedding
    model.history_ = history
    return steps, model, _reading(arrays, classes)


def _reading(arrays, classes):
    """The optional index base and F1 class of a model file."""
    index_base = _scalar(arrays, "index_base", "iu") if "index_base" in arrays else None
    if index_base not in (None, 0, 1):
        raise ValueError(f"not a valid Snacks model file: index base {index_base!r}.")
    f1_label = None
    if "f1_class" in arrays:
        position = _scalar(arrays, "f1_class", "iu")
        if not 0 <= position < classes.shape[0]:
            raise ValueError(f"not a valid Snacks model file: F1 class {position!r}.")
        f1_label = classes[position].item()
    return {"index_base": index_base, "f1_label": f1_label}


def _nystrom_map(arrays, model, gamma, landmarks, indices, n_features):
    """The fitted NystromEmbedding of a model file, its factor checked against the m
    landmarks."""
    m = landmarks.shape[0]
    components = _array(arrays, "components", 2, "f", (m, None))
    triangular = _scalar(arrays, "triangular", "b")
    if components.shape[1] < 1 or (triangular and components.shape[1] != m):
        raise ValueError(f"not a valid Snacks model file: components of shape "
                         f"{components.shape} for {m} landmarks.")
    embedding = NystromEmbedding(kernel=model.kernel, gamma=gamma, degree=model.degree,
                                 coef0=model.coef0, dtype=model.dtype)
    embedding.gamma_ = gamma
    embedding.landmarks_ = landmarks
    embedding.landmark_indices_ = indices
    embedding.components_ = components
    # Whether components_ is the Cholesky factor (applied as a triangular product).
    embedding.triangular_ = bool(triangular)
    embedding.eigenvalues_ = _array(arrays, "eigenvalues", 1, "f")
    embedding.n_components_ = components.shape[1]
    embedding.n_features_in_ = n_features
    return embedding


def _landmarks(arrays, n_features):
    if "landmarks" in arrays:
        landmarks = _array(arrays, "landmarks", 2, "f", (None, n_features))
    else:
        shape = tuple(int(s) for s in _array(arrays, "landmarks_shape", 1, "iu", (2,)))
        data = _array(arrays, "landmarks_data", 1, "f")
        indices = _array(arrays, "landmarks_indices", 1, "iu", (data.shape[0],))
        indptr = _array(arrays, "landmarks_indptr", 1, "iu", (shape[0] + 1,))
        if shape[1] != n_features or indptr[0] != 0 or indptr[-1] != data.shape[0] \
                or np.any(np.diff(indptr.astype(np.int64)) < 0) \
                or (indices.size and int(indices.max()) >= shape[1]):
            raise ValueError("not a valid Snacks model file: the sparse landmarks are "
                             "inconsistent (shape, indices or row pointers).")
        landmarks = sp.csr_matrix((data, indices, indptr), shape=shape)
    if landmarks.shape[0] < 1:
        raise ValueError("not a valid Snacks model file: no landmarks.")
    return landmarks


def _preprocessing(arrays, n_features):
    steps = []
    if "scaling" in arrays:
        offset = _array(arrays, "scaling_offset", 1, "f")
        steps.append(("scaling", scaling_from_fields(
            _scalar(arrays, "scaling", "U"), offset,
            _array(arrays, "scaling_factor", 1, "f", offset.shape))))
    if "projection_components" in arrays:
        components = _array(arrays, "projection_components", 2, "f", (n_features, None))
        mean = _array(arrays, "projection_mean", 1, "f", (components.shape[1],))
        steps.append(("projection", LinearProjection(mean, components)))
    raw_width = steps[0][1].offset.shape[0] if steps and steps[0][0] == "scaling" else None
    if raw_width is not None and "projection_components" in arrays \
            and arrays["projection_components"].shape[1] != raw_width:
        raise ValueError("not a valid Snacks model file: the scaling and the projection have "
                         "different widths.")
    if raw_width is not None and "projection_components" not in arrays \
            and raw_width != n_features:
        raise ValueError("not a valid Snacks model file: the scaling's width is not the "
                         "model's.")
    return steps


def unsaved_reason(model) -> str | None:
    """Why :func:`model_to_npz` cannot write ``model`` (None when it can), in a sentence a
    user can act on."""
    embedding = getattr(model, "embedding_", None)
    if isinstance(embedding, (NystromEmbedding, SupportVectorMap)):
        return None
    if _is_instance(embedding, "snacks_core.kernels.hss", "HSSModel"):
        return ("ADMM's HSS model predicts by routing each new point down the cluster tree "
                "built on the training rows and comparing it with that leaf's rows and "
                "skeletons; that tree is a Python object, not plain arrays, so it is not "
                "saved as .npz (a file never holds pickled objects). The code below "
                "retrains the model; to save one, choose LIBSVM (exact) or a Nyström solver.")
    return (f"models whose feature map is a {type(embedding).__name__} cannot be saved as "
            ".npz; the Nyström and exact LIBSVM models can.")
