"""A fitted SnacksClassifier to and from a ``.npz`` file: plain arrays, never pickle.

The file holds the estimator's parameters (as JSON text), the classes, ``coef_``,
``intercept_``, the feature map (landmarks and ``components_`` of the Nyström embedding,
or the support vectors of the exact model) and the convergence history.  Loading uses
``np.load(..., allow_pickle=False)``, so a file cannot run code.
"""

from __future__ import annotations

import io
import json

import numpy as np
import scipy.sparse as sp

from ..estimator import SnacksClassifier, SupportVectorMap
from ..nystrom import NystromEmbedding

FORMAT_VERSION = 1


def _params_json(model) -> str:
    params = model.get_params()
    params["dtype"] = np.dtype(params["dtype"]).name
    params["solver_options"] = None
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


def _get_matrix(data, name):
    if f"{name}_data" in data:
        return sp.csr_matrix((data[f"{name}_data"], data[f"{name}_indices"],
                              data[f"{name}_indptr"]), shape=tuple(data[f"{name}_shape"]))
    return data[name]


def model_to_npz(model) -> bytes:
    """The bytes of a ``.npz`` file holding a fitted :class:`SnacksClassifier`."""
    classes = np.asarray(model.classes_)
    if classes.dtype.kind == "O":
        classes = classes.astype(str)
    arrays = {"format_version": np.array(FORMAT_VERSION), "params": np.array(_params_json(model)),
              "classes": classes, "coef": model.coef_, "intercept": model.intercept_,
              "n_features_in": np.array(model.n_features_in_)}
    embedding = model.embedding_
    if isinstance(embedding, NystromEmbedding):
        arrays.update({"map": np.array("nystrom"), "components": embedding.components_,
                       "triangular": np.array(bool(embedding.triangular_)),
                       "gamma": np.array(embedding.gamma_),
                       "landmark_indices": embedding.landmark_indices_,
                       "eigenvalues": embedding.eigenvalues_})
    elif isinstance(embedding, SupportVectorMap):
        arrays.update({"map": np.array("exact"), "gamma": np.array(embedding.params["gamma"]),
                       "landmark_indices": embedding.landmark_indices_})
    else:
        raise ValueError(f"models whose feature map is a {type(embedding).__name__} cannot be "
                         "exported to .npz yet; the Nyström and exact LIBSVM models can.")
    _put_matrix(arrays, "landmarks", embedding.landmarks_)
    for name, values in model.history_.items():
        arrays[f"history_{name}"] = values
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def model_from_npz(source) -> SnacksClassifier:
    """A :class:`SnacksClassifier` ready to predict, from :func:`model_to_npz` output."""
    if isinstance(source, (bytes, bytearray)):
        source = io.BytesIO(source)
    try:
        data = np.load(source, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise ValueError(f"not a Snacks model file ({exc}).") from None
    if "params" not in data or "map" not in data:
        raise ValueError("not a Snacks model file: the 'params' and 'map' entries are missing.")
    params = json.loads(str(data["params"]))
    params["dtype"] = np.dtype(params["dtype"])
    model = SnacksClassifier(**params)
    model.classes_ = data["classes"]
    model.coef_ = data["coef"]
    model.intercept_ = data["intercept"]
    model.n_features_in_ = int(data["n_features_in"])
    landmarks = _get_matrix(data, "landmarks")
    gamma = float(data["gamma"])
    if str(data["map"]) == "nystrom":
        embedding = NystromEmbedding(kernel=model.kernel, gamma=gamma, degree=model.degree,
                                     coef0=model.coef0, dtype=model.dtype)
        embedding.gamma_ = gamma
        embedding.landmarks_ = landmarks
        embedding.landmark_indices_ = data["landmark_indices"]
        embedding.components_ = data["components"]
        # Whether components_ is the Cholesky factor (applied as a triangular product).
        embedding.triangular_ = bool(data["triangular"])
        embedding.eigenvalues_ = data["eigenvalues"]
        embedding.n_components_ = embedding.components_.shape[1]
        embedding.n_features_in_ = model.n_features_in_
    else:
        embedding = SupportVectorMap(landmarks, data["landmark_indices"], kernel=model.kernel,
                                     gamma=gamma, degree=model.degree, coef0=model.coef0)
    model.embedding_ = embedding
    model.history_ = {key[len("history_"):]: data[key] for key in data.files
                      if key.startswith("history_")}
    return model
