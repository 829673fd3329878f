"""The one feature scaling (snacks_core.datasets.scaling): the scaling fitted from sums
combined over parts (a cluster's partitions) is the one fitted in memory on all rows."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from snacks_core.datasets.scaling import (
    column_sums,
    fit_scaler,
    resolve_scaling,
    scaling_fields,
    scaling_from_fields,
    scaling_from_sums,
)


def _rows(sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, (300, 6)) * (rng.random((300, 6)) < (0.3 if sparse else 1.0))
    X[:, 5] = 0.0  # a constant column: its scale is 1
    return sp.csr_matrix(X) if sparse else X


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("scaling", ["standard", "minmax", "auto"])
def test_sums_over_parts_give_the_in_memory_scaling(sparse, scaling):
    X = _rows(sparse)
    kind = resolve_scaling(scaling, X)
    assert kind == (("none" if sparse else "standard") if scaling == "auto" else scaling)
    parts = [column_sums(X[rows]) for rows in (slice(0, 50), slice(50, 50), slice(50, 300))]
    combined = parts[0].combine(parts[1]).combine(parts[2])
    from_sums = scaling_from_sums(kind, combined, sparse)
    _, _, scaler = fit_scaler(X, X, kind)
    if kind == "none":
        assert from_sums is None and scaler is None
        return
    dense = X.toarray() if sparse else X
    expected = scaler.transform(X)
    got = from_sums.transform(X)
    assert sp.issparse(got) == sparse
    np.testing.assert_allclose(got.toarray() if sparse else got,
                               expected.toarray() if sparse else expected, atol=1e-12)
    # A model file keeps either as the same entries; its scaling reads back.
    saved = scaling_fields(scaler)
    assert str(saved["scaling"]) == from_sums.kind
    read = scaling_from_fields(str(saved["scaling"]), saved["scaling_offset"],
                               saved["scaling_factor"])
    np.testing.assert_allclose(read.transform(dense), from_sums.transform(dense), atol=1e-12)


def test_unknown_names_and_saved_kinds_are_refused():
    with pytest.raises(ValueError, match="unknown scaling 'zscore'"):
        resolve_scaling("zscore", np.zeros((2, 2)))
    with pytest.raises(ValueError, match="unknown scaling 'robust'"):
        scaling_from_fields("robust", np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="a scaling factor is zero"):
        scaling_from_fields("standard", np.zeros(2), np.zeros(2))
