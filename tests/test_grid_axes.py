"""Robustness grids centre on the data-aware defaults: one rule (snacks_core.model.defaults) for the
app's Robustness page and ``snacks heatmap``; extending a grid adds values beyond its ends."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from snacks_core import SnacksClassifier, cli
from snacks_core.app import explorer
from snacks_core.model import defaults
from snacks_core.solvers.objective import lam_to_C


@pytest.mark.parametrize("n", [150, 7_000, 35_000, 10**6])
@pytest.mark.parametrize("size", [2, 5, 8])
def test_lam_axis_is_decades_around_the_default(n, size):
    lams = defaults.grid_lam_values(n, size)
    assert len(lams) == size and lams == sorted(lams)
    assert np.allclose(np.diff(np.log10(lams)), 1.0)
    # The default C = 25 (λ = 0.02/n) lies inside the grid, within a factor 2 of a value.
    Cs = [lam_to_C(lam, n) for lam in lams]
    assert min(Cs) <= 25 <= max(Cs)
    assert min(abs(np.log10(C / 25)) for C in Cs) < np.log10(2.01)
    # More decades on one side keep every value already there.
    below = defaults.grid_lam_values(n, size, extra=(2, 0))
    above = defaults.grid_lam_values(n, size, extra=(0, 1))
    assert below[2:] == lams and below[0] == pytest.approx(lams[0] / 100)
    assert above[:-1] == lams and above[-1] == pytest.approx(lams[-1] * 10)


def tfidf_rows(n, vocab=3_000, seed=0):
    """Generated text-like rows (not a real corpus): Zipf word counts of 20 to 120 words per
    row, each class favouring its own words (even or odd word numbers), weighted by tf-idf
    and scaled to unit norm, as a text set's rows are."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    zipf = 1.0 / np.arange(1, vocab + 1) ** 1.1
    rows, cols, counts = [], [], []
    for i in range(n):
        p = zipf.copy()
        p[rng.choice(vocab // 2, 20, replace=False) * 2 + y[i]] *= 300
        words, times = np.unique(rng.choice(vocab, rng.integers(20, 120), p=p / p.sum()),
                                 return_counts=True)
        rows += [i] * len(words)
        cols += list(words)
        counts += list(times)
    tf = sp.csr_matrix((np.asarray(counts, float), (rows, cols)), shape=(n, vocab))
    idf = np.log((1 + n) / (1 + np.bincount(tf.indices, minlength=vocab))) + 1
    X = tf @ sp.diags(idf)
    X = sp.diags(1 / np.sqrt(X.multiply(X).sum(axis=1)).A1) @ X
    return sp.csr_matrix(X), np.where(y == 1, 1, -1)


def test_lam_axis_on_sparse_text_rows_is_where_models_learn():
    """On tf-idf rows (unit norm, nearly orthogonal) kernel values are small and models need
    a larger C: the axis moves a decade toward small λ, where every column learns (on the
    dense rule the largest λ, C ≈ 0.2, was at 35 % against the majority's 47 %)."""
    X, y = tfidf_rows(2_000)
    X_train, y_train, X_test, y_test = X[:1_400], y[:1_400], X[1_400:], y[1_400:]
    n = X_train.shape[0]
    lams = defaults.grid_lam_values(n, 5, X=X_train)
    assert np.allclose(lams, [lam / 10 for lam in defaults.grid_lam_values(n, 5)])
    Cs = [lam_to_C(lam, n) for lam in lams]
    assert min(Cs) <= 25 <= max(Cs)
    majority = min(np.mean(y_test == 1), np.mean(y_test == -1))
    for lam in lams:
        model = SnacksClassifier(lam=lam, n_components=200, random_state=0)
        error = np.mean(model.fit(X_train, y_train).predict(X_test) != y_test)
        assert error < majority / 2, (lam, error, majority)
    # Dense rows and sparse binary (one-hot) rows keep the rule around the default.
    binary = X_train.copy()
    binary.data[:] = 1.0
    assert defaults.grid_lam_values(n, 5, X=binary) == defaults.grid_lam_values(n, 5)
    assert defaults.grid_lam_values(n, 5, X=X_train.toarray()) == \
        defaults.grid_lam_values(n, 5)
    # The app's grid is the same rule.
    assert explorer.grid_axes("m", {"kernel": "rbf", "gamma": "scale"}, X_train, 5)[2] == lams


@pytest.mark.parametrize("n_fit, d", [(20, 5), (187, 2), (5_000, 30), (26_500, 300),
                                      (10**6, 22)])
def test_m_axis_spans_the_default_within_the_rows_and_the_limit(n_fit, d):
    ms = defaults.grid_m_values(n_fit, d, 5)
    centre = defaults.default_m(n_fit, d)
    assert ms == sorted(set(ms)) and 2 <= ms[0] and ms[-1] <= min(n_fit, defaults.GRID_M_MAX)
    assert ms[0] <= centre <= ms[-1]
    assert ms[0] >= 0.9 * centre / defaults.GRID_M_SPAN[0]
    more = defaults.grid_m_values(n_fit, d, 5, extra=(1, 1))
    assert set(ms) <= set(more)
    assert more[-1] == min(n_fit, defaults.GRID_M_MAX) or more[-1] > ms[-1]


def test_an_extension_past_the_limit_adds_nothing():
    ms = defaults.grid_m_values(10**6, 22, 5)
    assert ms[-1] == defaults.GRID_M_MAX
    assert defaults.grid_m_values(10**6, 22, 5, extra=(0, 3)) == ms
    with pytest.raises(ValueError, match="size ≥ 1"):
        defaults.grid_lam_values(100, 0)


def test_gamma_axis_is_around_the_given_gamma():
    gammas = defaults.grid_gamma_values(0.02, 5)
    assert gammas == [0.0002, 0.002, 0.02, 0.2, 2.0]
    assert defaults.grid_gamma_values(0.02, 5, extra=(1, 0))[0] == 2e-5
    assert defaults.grid_gamma_values(500.0, 5)[-1] == defaults.GAMMA_RANGE[1]


def test_the_page_grid_is_the_rule_on_the_rows_a_cell_trains_on():
    X = np.random.default_rng(0).normal(size=(3_000, 10))
    params = {"kernel": "rbf", "gamma": "scale"}
    axis, ms, lams = explorer.grid_axes("m", params, X, 5, folds=3)
    assert axis == "m" and ms == defaults.grid_m_values(2_000, 10, 5)
    assert lams == defaults.grid_lam_values(3_000, 5)
    _, wider, more_lams = explorer.grid_axes("m", params, X, 5, folds=3, axis_extra=(0, 1),
                                             lam_extra=(1, 0))
    assert wider[:-1] == ms and more_lams[1:] == lams
    axis, gammas, _ = explorer.grid_axes("gamma", {"kernel": "rbf", "gamma": 0.5}, X, 3)
    assert axis == "gamma" and gammas == [0.005, 0.5, 50.0]


def test_snacks_heatmap_defaults_to_the_same_axes(capsys, tmp_path):
    out_csv = tmp_path / "grid.csv"
    status = cli.main(["heatmap", "moons", "--n-samples", "300", "--max-epochs", "5",
                       "--n-jobs", "1", "--out", str(out_csv)])
    assert status == 0, capsys.readouterr().err
    table = pd.read_csv(out_csv)
    n_train = 210
    assert sorted(set(table.m)) == defaults.grid_m_values(n_train, 2, 5)
    assert np.allclose(sorted(set(table.lam)), defaults.grid_lam_values(n_train, 5))


def test_missing_blocks_are_the_new_cells_only():
    blocks = explorer.missing_blocks([10, 20], [1e-3, 1e-2], [10, 20, 40], [1e-4, 1e-3, 1e-2])
    assert blocks == [([40], [1e-4, 1e-3, 1e-2]), ([10, 20], [1e-4])]
    assert explorer.missing_blocks([10], [1e-3], [10], [1e-3]) == []


@pytest.mark.parametrize("cv", [None, 3])
def test_an_extended_grid_merges_to_the_whole_grids_cells(cv):
    """The old cells plus the blocks of new cells give the cells of the whole grid run at
    once: the same rows and, to the solver's tolerance, the same errors (a new λ column
    starts from its own block's solutions instead of the old grid's); with
    cross-validation the chosen cell is the whole grid's."""
    from snacks_core.datasets import make_synthetic, split_dataset

    split = split_dataset(make_synthetic("moons", 300, noise=0.25, random_state=1),
                          random_state=0)
    params = {"kernel": "rbf", "gamma": 1.0, "n_components": 20, "solver": "snacks",
              "sampling": "uniform", "max_epochs": 30, "class_weight": None}
    ms, lams = [10, 20, 40], [1e-4, 1e-3, 1e-2]

    def grid(rows, columns):
        return explorer.robustness(split, params, "m", rows, columns, [0, 1], cv=cv)

    whole = grid(ms, lams)
    old = grid(ms[:2], lams[1:])
    merged = explorer.merge_grid_tables(
        [old] + [grid(r, c) for r, c in explorer.missing_blocks(ms[:2], lams[1:], ms, lams)])
    keys = ["seed", "gamma", "m", "lam"] + (["fold"] if cv else [])
    assert merged[keys].equals(whole[keys])
    assert np.abs(merged["test_error"] - whole["test_error"]).max() <= 0.02
    if cv:
        chosen, expected = merged.attrs["chosen"], whole.attrs["chosen"]
        assert (chosen["m"], chosen["lam"]) == (expected["m"], expected["lam"])


def test_an_edge_counts_only_where_the_error_still_falls_towards_it():
    from snacks_core.app import heatmap

    mean = np.array([[0.10, 0.20, 0.30],
                     [0.10, 0.25, 0.30],
                     [0.40, 0.40, 0.40]])
    # Row 0 ties with row 1 (more rows change nothing): only the λ edge counts.
    assert heatmap.grid_edges((0, 0), mean) == [("lam", 0)]
    assert heatmap.grid_edges((1, 1), mean) == []
    falling = mean.copy()
    falling[0, 0] = 0.05
    assert heatmap.grid_edges((0, 0), falling) == [("lam", 0), ("axis", 0)]
    assert heatmap.grid_edges(None, mean) == []
    # A neighbour a stopped sweep never computed does not hide the edge.
    unknown = np.array([[0.1, np.nan]])
    assert heatmap.grid_edges((0, 0), unknown) == [("lam", 0)]
