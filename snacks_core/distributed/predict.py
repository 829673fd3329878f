"""decision_function and predict on Dask collections: Dask arrays, block by block.

The fitted model (its landmarks, factor and weights) is sent once: scattered to the
workers of the current ``distributed`` client, where each block depends on it by its key
(a model of wide rows is large: 1,408 landmarks of 8,315 words are 94 MB, which Dask would
otherwise send inside every graph that scores with it), else one key of the graph.  Each
block of rows is scored on the worker that holds it, and nothing is gathered: the caller
computes, stores or reduces the returned array.
"""

from __future__ import annotations

import numpy as np

from snacks_core.distributed import current_client


def _row_array(X):
    """X as a Dask array of rows with its columns in one chunk and its row blocks of known
    size (counted in one pass on the workers when unknown, as a dataframe's are), so that
    the answers can be compared with other Dask arrays of known sizes."""
    import dask.dataframe as dd

    if isinstance(X, (dd.DataFrame, dd.Series)):
        X = X.to_dask_array()
    if any(np.isnan(size) for size in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (rows × features), got {X.ndim} dimension(s).")
    return X.rechunk({1: -1}) if len(X.chunks[1]) > 1 else X


def _shared(model):
    """The model as every block's tasks take it: a future of it scattered by the current
    ``distributed`` client, or a delayed object (one key) where there is none."""
    import dask

    try:
        client, _ = current_client()
    except ValueError:
        # No dask.distributed, or no current client.
        return dask.delayed(model, pure=True)
    return client.scatter(model, hash=False)


def _block_scores(block, model):
    return np.asarray(model.decision_function(block), dtype=np.float64)


def _block_labels(block, model):
    return model.predict(block)


def decision_function_blocks(model, X):
    """f(x) = ⟨w, z(x)⟩ + b of each row of the Dask collection X, as a Dask array of shape
    (n,) for two classes, (n, n_classes) otherwise."""
    X = _row_array(X)
    shared = _shared(model)
    if len(model.classes_) == 2:
        return X.map_blocks(_block_scores, shared, drop_axis=1, dtype=np.float64,
                            meta=np.empty((0,), np.float64))
    return X.map_blocks(_block_scores, shared, chunks=(X.chunks[0], (len(model.classes_),)),
                        dtype=np.float64, meta=np.empty((0, 0), np.float64))


def predict_blocks(model, X):
    """The predicted labels of each row of the Dask collection X, as a Dask array."""
    X = _row_array(X)
    return X.map_blocks(_block_labels, _shared(model), drop_axis=1,
                        dtype=model.classes_.dtype,
                        meta=np.empty((0,), model.classes_.dtype))
