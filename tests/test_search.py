"""SnacksSearchCV and cross-validated grids: GridSearchCV's contract and results, shared
work, halving, refinement, and a test set that is never looked at."""

from __future__ import annotations

import re
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification, make_moons
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.utils.estimator_checks import parametrize_with_checks

from snacks_core import SnacksClassifier
from snacks_core.model import sweeps
from snacks_core.model.defaults import round_125
from snacks_core.model.search import SnacksSearchCV
from snacks_core.model.sweeps import GridSchedule, robustness_grid
from snacks_core.solvers.objective import C_to_lam

GRID = {"gamma": [0.5, 2.0], "lam": [1e-2, 1e-4], "n_components": [15, 30]}


@pytest.fixture(scope="module")
def moons():
    return make_moons(240, noise=0.25, random_state=0)


@parametrize_with_checks(
    [SnacksSearchCV(SnacksClassifier(n_components=10, max_epochs=20, random_state=0),
                    {"lam": [1e-2, 1e-3]}, cv=2)],
    xfail_strict=True,
)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "n_components=.* is larger", UserWarning)
        check(estimator)


@pytest.mark.parametrize("scoring", [None, "f1", "roc_auc", "balanced_accuracy"])
def test_cold_search_equals_grid_search_cv(moons, scoring):
    """Oracle: GridSearchCV(SnacksClassifier) with the same folds and seed, which fits every
    candidate on every fold from scratch."""
    X, y = moons
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    ours = SnacksSearchCV(SnacksClassifier(random_state=0), GRID, cv=cv, scoring=scoring,
                          warm_start=False).fit(X, y)
    oracle = GridSearchCV(SnacksClassifier(random_state=0), GRID, cv=cv,
                          scoring=scoring).fit(X, y)
    assert ours.cv_results_["params"] == oracle.cv_results_["params"]
    for key in ("mean_test_score", "std_test_score", "split0_test_score", "split2_test_score"):
        np.testing.assert_allclose(ours.cv_results_[key], oracle.cv_results_[key], atol=1e-12)
    np.testing.assert_array_equal(ours.cv_results_["rank_test_score"],
                                  oracle.cv_results_["rank_test_score"])
    assert ours.best_params_ == oracle.best_params_
    assert ours.best_score_ == pytest.approx(oracle.best_score_)
    np.testing.assert_array_equal(ours.predict(X), oracle.predict(X))
    assert ours.score(X, y) == pytest.approx(oracle.score(X, y))


# GridSearchCV's folds for cv=3 (unshuffled): SnacksSearchCV's integer cv shuffles.
UNSHUFFLED = StratifiedKFold(3)

def test_warm_starts_stay_within_the_solver_tolerance_of_cold_scores(moons):
    X, y = moons
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    model = SnacksClassifier(random_state=0, tol=1e-3)
    warm = SnacksSearchCV(model, GRID, cv=cv).fit(X, y).cv_results_["mean_test_score"]
    cold = SnacksSearchCV(model, GRID, cv=cv, warm_start=False).fit(X, y).cv_results_[
        "mean_test_score"]
    # Each fold's 80 validation rows: a warm start may flip a row or two near the boundary.
    np.testing.assert_allclose(warm, cold, atol=2.5 / 80)


def test_cv_results_load_into_pandas_as_grid_search_cv(moons):
    X, y = moons
    ours = pd.DataFrame(SnacksSearchCV(SnacksClassifier(random_state=0), GRID, cv=3).fit(
        X, y).cv_results_)
    oracle = pd.DataFrame(GridSearchCV(SnacksClassifier(random_state=0), GRID, cv=3).fit(
        X, y).cv_results_)
    assert set(oracle.columns) <= set(ours.columns)
    assert set(ours.columns) - set(oracle.columns) == {"iter", "n_resources"}
    pd.testing.assert_series_equal(ours[oracle.columns].dtypes, oracle.dtypes)


def test_exact_solver_and_class_weights_equal_grid_search_cv(moons):
    """Candidates a grid cannot run (libsvm) are fitted one by one; class weights reach
    the grid's solves: both equal GridSearchCV's."""
    X, y = moons
    grid = [{"solver": ["libsvm"], "lam": [1e-2, 1e-3]},
            {"class_weight": ["balanced"], "n_components": [10, 20]},
            {"gamma": [1.0], "lam": [1e-3]}]
    # A candidate that sets neither C nor λ runs at the estimator's: 'auto' would be the
    # default λ here and a cross-validation of C (a small set's) in GridSearchCV's fits.
    ours = SnacksSearchCV(SnacksClassifier(lam=1e-3, random_state=0), grid, cv=UNSHUFFLED,
                          warm_start=False)
    oracle = GridSearchCV(SnacksClassifier(lam=1e-3, random_state=0), grid, cv=3)
    np.testing.assert_allclose(ours.fit(X, y).cv_results_["mean_test_score"],
                               oracle.fit(X, y).cv_results_["mean_test_score"], atol=1e-12)
    assert ours.cv_results_["param_solver"].mask.tolist() == [False] * 2 + [True] * 3


def test_multiclass_search():
    X, y = make_blobs(300, centers=3, cluster_std=2.0, random_state=2)
    grid = {"lam": [1e-2, 1e-3], "n_components": [10, 20]}
    ours = SnacksSearchCV(SnacksClassifier(random_state=0), grid, cv=UNSHUFFLED,
                          warm_start=False).fit(X, y)
    oracle = GridSearchCV(SnacksClassifier(random_state=0), grid, cv=3).fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               oracle.cv_results_["mean_test_score"], atol=1e-12)
    assert ours.decision_function(X).shape == (300, 3)


def test_a_grid_over_C_converts_with_each_fits_rows(moons):
    X, y = moons
    search = SnacksSearchCV(SnacksClassifier(random_state=0), {"C": [0.1, 10.0]}, cv=3,
                            warm_start=False).fit(X, y)
    assert search.cv_results_["param_C"].tolist() == [0.1, 10.0]
    best_C = search.best_params_["C"]
    assert search.best_estimator_.lam == pytest.approx(C_to_lam(best_C, X.shape[0]))
    # Each fold trains on 160 rows: λ = 1/(2 · 160 · C) there.
    lam_grid = SnacksSearchCV(SnacksClassifier(random_state=0),
                              {"lam": [C_to_lam(c, 160) for c in (0.1, 10.0)]}, cv=3,
                              warm_start=False).fit(X, y)
    np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                               lam_grid.cv_results_["mean_test_score"])


def test_successive_halving_keeps_the_best_share_on_growing_rows():
    X, y = make_classification(2700, 6, n_informative=4, random_state=0)
    grid = {"gamma": [0.02, 0.2, 2.0], "lam": [1e-2, 1e-4, 1e-6]}
    search = SnacksSearchCV(SnacksClassifier(n_components=10, random_state=0), grid, cv=3,
                            halving=True, factor=3, random_state=0).fit(X, y)
    results = search.cv_results_
    # As HalvingGridSearchCV: 9 → 3 → 1 candidates on 300, 900 and all 2700 rows; the 3
    # kept after the first round are each γ's best (in the order of their scores), the 1
    # after the second the best.
    assert results["iter"].tolist() == [0] * 9 + [1] * 3 + [2]
    assert results["n_resources"].tolist() == [300] * 9 + [900] * 3 + [2700]
    first = pd.DataFrame({"gamma": results["param_gamma"][:9].astype(float),
                          "score": results["mean_test_score"][:9]})
    each_best = first.sort_values("score", ascending=False, kind="stable").groupby(
        "gamma", sort=False).head(1).index
    assert [results["params"][i] for i in each_best] == list(results["params"][9:12])
    second = 9 + int(np.argmax(results["mean_test_score"][9:12]))
    assert results["params"][12] == results["params"][second]
    assert search.best_index_ == 12
    assert search.best_estimator_.get_params()["gamma"] == results["params"][12]["gamma"]


def test_halving_survivors_are_the_best_of_each_gamma_first():
    from snacks_core.model.search import _survivors

    ranked = [{"gamma": 1, "C": 1}, {"gamma": 1, "C": 10}, {"gamma": 2, "C": 1},
              {"gamma": 1, "C": 100}, {"gamma": 3, "C": 10}]
    assert _survivors(ranked, 2) == [ranked[0], ranked[2]]
    assert _survivors(ranked, 4) == [ranked[0], ranked[2], ranked[4], ranked[1]]
    assert _survivors(ranked, 5) == [ranked[0], ranked[2], ranked[4], ranked[1], ranked[3]]
    # Without γ (the linear kernel) the plain top share.
    plain = [{"C": 1}, {"C": 10}, {"C": 100}]
    assert _survivors(plain, 2) == plain[:2]


def test_the_ladder_starts_from_the_largest_gamma_tied_with_the_best():
    """One standard error of the best's error on 400 rows: √(0.1 · 0.9 / 400) = 0.015."""
    from snacks_core.model.search import _least_smoothing_tie

    params = [{"gamma": g, "C": c} for g, c in ((0.1, 1), (1.0, 1), (1.0, 10), (10.0, 1),
                                                 (0.1, 10))]
    results = {"params": params, "n_resources": np.array([400, 400, 400, 400, 100]),
               "mean_test_score": 1 - np.array([0.100, 0.110, 0.112, 0.116, 0.01])}
    # γ = 10 is 0.016 worse: not tied; the last candidate was not scored on every row.
    assert _least_smoothing_tie(results, 400) == (params[1], pytest.approx(0.110))
    results["mean_test_score"][3] = 1 - 0.114
    assert _least_smoothing_tie(results, 400) == (params[3], pytest.approx(0.114))
    # A score that is no rate (here above 1): exact ties only, the largest γ among them.
    results["mean_test_score"] = np.array([3.0, 2.9, 3.0, 2.0, 5.0])
    assert _least_smoothing_tie(results, 400) == (params[2], pytest.approx(-2.0))


def test_refinement_tries_midpoints_around_the_best(moons):
    X, y = moons
    search = SnacksSearchCV(SnacksClassifier(n_components=20, random_state=0),
                            {"gamma": [0.25, 4.0], "lam": [1e-1, 1e-3]}, cv=3,
                            refine=1).fit(X, y)
    results = search.cv_results_
    coarse = {(p["gamma"], p["lam"]) for p in results["params"][:4]}
    best = results["params"][int(np.argmax(results["mean_test_score"][:4]))]
    g, lam = best["gamma"], best["lam"]
    # Half the log-step of the grid on each side: ×4 in γ (0.25 → 4), ×10 in λ.
    expected = {(round(gv, 9), round(lv, 12)) for gv in (g / 4, g, g * 4)
                for lv in (lam / 10, lam, lam * 10)} - coarse
    fine = [p for p, it in zip(results["params"], results["iter"], strict=True) if it == 1]
    assert {(round(p["gamma"], 9), round(p["lam"], 12)) for p in fine} == expected
    assert search.best_score_ == results["mean_test_score"].max()


def test_grid_cv_chooses_without_looking_at_the_test_labels(moons):
    X, y = moons
    X_test, y_test = make_moons(200, noise=0.25, random_state=5)
    grid = dict(m=[10, 30], lam=[1e-2, 1e-4], gamma=[0.5, 2.0], seeds=[0], cv=3)
    table = robustness_grid(X, y, X_test, y_test, **grid)
    shuffled = robustness_grid(X, y, X_test, np.random.default_rng(0).permutation(y_test),
                               **grid)
    assert sorted(table["fold"].unique()) == [0, 1, 2] and len(table) == 3 * 8
    pd.testing.assert_series_equal(table["test_error"], shuffled["test_error"])
    chosen, again = table.attrs["chosen"], shuffled.attrs["chosen"]
    assert {k: chosen[k] for k in ("gamma", "m", "lam", "cv_error")} == {
        k: again[k] for k in ("gamma", "m", "lam", "cv_error")}
    means = table.groupby(["gamma", "m", "lam"])["test_error"].mean()
    assert chosen["cv_error"] == means.min()
    model = SnacksClassifier(gamma=chosen["gamma"], n_components=chosen["m"],
                             lam=chosen["lam"], random_state=0).fit(X, y)
    assert chosen["test_error"] == pytest.approx(1 - model.score(X_test, y_test))


def test_grid_cv_folds_equal_the_estimators_fits(moons):
    X, y = moons
    table = robustness_grid(X, y, X[:50], y[:50], m=[12], lam=[1e-3], gamma=1.0, seeds=[2],
                            cv=StratifiedKFold(2, shuffle=True, random_state=0),
                            schedule=GridSchedule(warm_start=False))
    for (train, test), row in zip(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y),
                                  table.sort_values("fold").itertuples(), strict=True):
        model = SnacksClassifier(n_components=12, lam=1e-3, gamma=1.0, random_state=2,
                                 dtype=np.float32).fit(X[train], y[train])
        assert row.test_error == pytest.approx(1 - model.score(X[test], y[test]))


@pytest.mark.parametrize("grid, message", [
    ({"lam": [1e-3], "C": [1.0]}, "both 'C' and 'lam'"),
    ({"not_a_parameter": [1]}, "not parameters of SnacksClassifier"),
    ({"lam": []}, "empty"),
])
def test_bad_grids_are_refused(moons, grid, message):
    with pytest.raises(ValueError, match=message):
        SnacksSearchCV(SnacksClassifier(), grid, cv=2).fit(*moons)


def test_grid_cells_with_class_weights_equal_the_estimators_fits():
    from sklearn.utils.class_weight import compute_sample_weight

    from snacks_core.solvers.objective import primal_objective

    X, y = make_classification(400, 5, weights=[0.85], random_state=3)
    table = robustness_grid(X[:300], y[:300], X[300:], y[300:], m=[15], lam=[1e-2, 1e-3],
                            gamma=0.3, estimator=SnacksClassifier(class_weight="balanced"),
                            schedule=GridSchedule(warm_start=False))
    weights = compute_sample_weight("balanced", y[:300])
    for row in table.itertuples():
        model = SnacksClassifier(n_components=15, lam=row.lam, gamma=0.3, random_state=0,
                                 class_weight="balanced", dtype=np.float32).fit(X[:300], y[:300])
        F = primal_objective(model.coef_[0], model.embedding_.transform(X[:300]),
                             np.where(y[:300] == 1, 1.0, -1.0), row.lam, weights)
        assert row.objective == pytest.approx(F, rel=1e-9)
        assert row.test_error == pytest.approx(1 - model.score(X[300:], y[300:]))


def test_selection_optimism_against_a_brute_force_oracle():
    """30 cells of coin-flip quality (every cell 30 % wrong in truth): choosing on half the
    test rows reads low there and regresses on the other half."""
    from snacks_core.app.explorer import selection_optimism

    rng = np.random.default_rng(0)
    y_test = rng.choice([-1.0, 1.0], 200)
    cells = [{"gamma": 1.0, "m": m, "lam": 1e-3, "seed": 0,
              "test_scores": np.where(rng.random(200) < 0.3, -y_test, y_test)}
             for m in range(30)]
    table = pd.DataFrame(cells)
    result = selection_optimism(table, np.array([-1.0, 1.0]), y_test, n_halvings=50, seed=3)
    wrong = np.array([c["test_scores"] != y_test for c in cells], dtype=float)
    order_rng = np.random.default_rng(3)
    gaps = []
    for _ in range(50):
        order = order_rng.permutation(200)
        half, other = order[:100], order[100:]
        best = int(np.argmin(wrong[:, half].mean(axis=1)))
        gaps.append(wrong[best, other].mean() - wrong[best, half].mean())
    assert result["gap"] == pytest.approx(np.mean(gaps))
    assert result["gap"] > 0.03 and result["n_cells"] == 30


def test_an_integer_cv_is_shuffled_stratified_folds_seeded_as_the_candidates():
    """Oracle: StratifiedKFold(shuffle=True) with the search's seed; a file sorted by label
    gives folds of every class."""
    X, y = make_classification(300, 5, random_state=3)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    grid = {"lam": [1e-2, 1e-3]}
    ours = SnacksSearchCV(SnacksClassifier(random_state=5, n_components=20), grid, cv=3,
                          warm_start=False).fit(X, y)
    folds = StratifiedKFold(3, shuffle=True, random_state=5)
    oracle = GridSearchCV(SnacksClassifier(random_state=5, n_components=20), grid,
                          cv=folds).fit(X, y)
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               oracle.cv_results_["mean_test_score"], atol=1e-12)


def test_the_default_search_spans_gamma_C_and_m_and_reports_what_it_scored():
    """Stage 1: 5 γ × 5 C with halving at m (at most SEARCH_M); stage 2: 4m at the chosen γ
    and C and the next γ up (m itself was stage 1's).  The results hold each setting once
    per round, the fits are the settings × folds scored, and the choice is the best CV
    setting on all the rows: no row of the table printed from them beats it."""
    from snacks_core.model.defaults import SEARCH_FOLDS
    from snacks_core.model.search import search_around_defaults

    X, y = make_classification(600, 6, n_informative=4, random_state=0)
    found = search_around_defaults(SnacksClassifier(n_components=20, random_state=0), X, y)
    results = found.results
    assert found.n_rows == 600
    stage_1 = results[results["m"] == 20]
    assert stage_1["gamma"].nunique() == 5 and stage_1["C"].nunique() == 5
    assert sorted(results["m"].unique().tolist()) == [20, 80]
    # The top rung (80) also scored the γ one step above the ladder's, at its C.
    assert results[results["m"] == 80]["gamma"].tolist() == [
        found.ladder["gamma"], round_125(2 * found.ladder["gamma"])]
    last = results[results["rows"] == 600]
    assert found.fits == SEARCH_FOLDS * len(results)
    assert not results.duplicated(["gamma", "C", "m", "rows"]).any()
    best = last.loc[last["cv_error"].idxmin()]
    assert found.cv_error == pytest.approx(best["cv_error"])
    assert (found.params["gamma"], found.params["C"], found.params["n_components"]) == (
        best["gamma"], best["C"], best["m"])
    assert found.params["n_components"] in (20, 80)
    assert isinstance(found.params["gamma"], float)


@pytest.mark.parametrize("informative, class_sep, flip_y, climbs",
                         [(4, 1.0, 0.01, True), (2, 3.0, 0.1, False)])
def test_the_default_search_grows_m_while_a_rung_lowers_the_cv_error(
        monkeypatch, informative, class_sep, flip_y, climbs):
    """Stage 2's ladder (stage 1 at m = 10 here, then the estimator's m = 20, then 80)
    starts from the largest γ within one standard error of stage 1's best; a rung is
    scored only after one that lowered the ladder's CV error, and the choice is the best
    setting on all the rows.  Two cases: a curved boundary where more landmarks help all
    the way (the ladder starts from a larger γ than the best's, tied with it at m = 10),
    and well-separated noisy blobs where 10 landmarks already do (20 does no better)."""
    from snacks_core.model import search

    monkeypatch.setattr(search, "SEARCH_M", 10)
    X, y = make_classification(600, informative + 2, n_informative=informative, n_redundant=0,
                               flip_y=flip_y, class_sep=class_sep, random_state=0)
    found = search.search_around_defaults(SnacksClassifier(n_components=20, random_state=0),
                                          X, y)
    table = found.results
    first, rungs = table[table["m"] == 10], table[table["m"] > 10]
    # The ladder's γ and C: the largest γ within √(e(1 − e)/n) of stage 1's lowest error.
    lowest = first["cv_error"].min()
    tied = first[first["cv_error"] <= lowest + np.sqrt(lowest * (1 - lowest) / 600)]
    gamma, C = found.ladder["gamma"], found.ladder["C"]
    assert gamma == tied["gamma"].max() and set(rungs["C"]) == {C}
    # The top rung scores the next γ of the 1-2-5 steps as well; a ladder that stops
    # before its top scores none.
    step = rungs[rungs["gamma"] != gamma]
    if climbs:
        up, m_up, error_up = found.gamma_step
        assert up == round_125(2 * gamma) > gamma and m_up == 80
        assert step[["gamma", "m"]].to_numpy().tolist() == [[up, 80]]
        assert step["cv_error"].tolist() == pytest.approx([error_up])
    else:
        assert step.empty and found.gamma_step == ()
    ladder = table[(table["gamma"] == gamma) & (table["C"] == C)].sort_values("m")
    assert ladder["m"].tolist() == ([10, 20, 80] if climbs else [10, 20])
    # The path it reports is the ladder's: each m in the order scored, with its CV error;
    # each rung but the last lowered it.
    assert [m for m, _ in found.m_path] == ladder["m"].tolist()
    np.testing.assert_allclose([error for _, error in found.m_path], ladder["cv_error"])
    errors = ladder["cv_error"].to_numpy()
    assert np.all(np.diff(errors)[:-1] < 0) and (np.diff(errors)[-1] < 0) == climbs
    assert found.m_stop == ("the ladder's top (4× the default m, at most 1,500; every row where "
                            "a fold trains on fewer)" if climbs
                            else "m = 20 did not lower the CV error")
    # The choice: the lowest CV error in the table.
    assert found.cv_error == pytest.approx(table["cv_error"].min())
    chosen = table[(table["gamma"] == found.params["gamma"]) & (table["C"] == found.params["C"])
                   & (table["m"] == found.scored_m)]
    assert chosen["cv_error"].tolist() == pytest.approx([table["cv_error"].min()])


@pytest.mark.parametrize("n_classes, features, informative, seed, grows",
                         [(2, 6, 4, 0, True), (3, 6, 4, 0, False), (3, 10, 8, 1, True),
                          (2, 4, 2, 0, False)])
def test_a_choice_still_gaining_at_the_ladders_top_takes_twice_its_m(
        monkeypatch, n_classes, features, informative, seed, grows):
    """A choice scored at the ladder's top (80 of 600 rows here) that lowered the CV error
    there by more than a standard error, √(e(1 − e)/n), below the best scored before the
    top rung, comes back with twice the top's m on two classes, and on more classes where
    the top's landmarks leave more than 20 % of the kernel's diagonal unexplained on the
    next 80 drawn (the oracle: a NystromEmbedding on the first 80 of the refit's draw);
    ``scored_m`` keeps the m it was scored at.  Four cases: two classes whose top gains,
    three classes whose top gains as much on a kernel its landmarks capture (not grown)
    and on one they do not (grown), and two classes whose ladder stopped before its top."""
    from snacks_core.kernels.landmarks import select_landmarks
    from snacks_core.kernels.nystrom import NystromEmbedding
    from snacks_core.model import search
    from snacks_core.model.defaults import RANK_UNEXPLAINED

    monkeypatch.setattr(search, "SEARCH_M", 10)
    X, y = make_classification(600, features, n_informative=informative, n_redundant=0,
                               flip_y=0.01, n_classes=n_classes, random_state=seed)
    found = search.search_around_defaults(SnacksClassifier(n_components=20, random_state=0),
                                          X, y)
    table = found.results[found.results["rows"] == 600]
    before = table[table["m"] < 80]["cv_error"].min()
    gain = before - found.cv_error
    at_top = found.scored_m == 80
    assert (at_top and gain > np.sqrt(found.cv_error * (1 - found.cv_error) / 600)) == (
        grows or n_classes == 3)
    assert found.params["n_components"] == (160 if grows else found.scored_m)
    if n_classes == 3:
        drawn = X[select_landmarks(X, 160, sampling="balanced", random_state=0, y=y)]
        Z = NystromEmbedding(gamma=found.params["gamma"]).fit(
            drawn[:80], landmark_indices=np.arange(80)).transform(drawn[80:])
        share = 1.0 - np.mean(np.sum(Z * Z, axis=1))
        assert found.top_unexplained == pytest.approx(share, abs=1e-8)
        assert (share > RANK_UNEXPLAINED) == grows
    else:
        assert found.top_unexplained is None
    note = search.refit_m_note(found.scored_m, found.params["n_components"],
                               found.top_unexplained)
    assert ("the ladder's top, m = 80," in note and "m = 160" in note) if grows else note == ""
    assert ("of the kernel's diagonal unexplained" in note) == (grows and n_classes == 3)


@pytest.mark.parametrize("n_rows, grows", [(600, True), (610, False)])
def test_a_choice_past_the_top_grows_only_where_its_refit_costs_no_more_than_the_top(
        monkeypatch, n_rows, grows):
    """A search of a stratified 400 of the training rows: its refit's embedding,
    n·(2m)², costs no more than the top rung's two γ on three folds (6·400·m²) on up to
    600 training rows, where the choice grows; on 610 it does not, though it gained there
    by more than a standard error as well."""
    from snacks_core.model import search

    monkeypatch.setattr(search, "SEARCH_M", 10)
    monkeypatch.setattr(search, "SEARCH_MAX_ROWS", 400)
    X, y = make_classification(n_rows, 6, n_informative=4, n_redundant=0, flip_y=0.01,
                               random_state=0)
    found = search.search_around_defaults(SnacksClassifier(n_components=20, random_state=0),
                                          X, y)
    table = found.results[found.results["rows"] == 400]
    gain = table[table["m"] < 80]["cv_error"].min() - found.cv_error
    assert found.n_rows == 400 and found.scored_m == 80
    assert gain > np.sqrt(found.cv_error * (1 - found.cv_error) / 400)
    assert found.params["n_components"] == (160 if grows else 80)


@pytest.mark.parametrize("n_rows, path", [(150, [150]), (900, [300, 900])])
def test_on_a_small_set_the_ladder_is_every_row_and_its_choice_keeps_them_all(n_rows, path):
    """A small set, whose default fit makes every row a landmark (up to 500), in 3 folds.
    The ladder's top asks for every searched row, which each fold's fit clips to its own
    two thirds (the exact kernel on the fold: the CV error of m = 2n/3 on the same folds),
    so a choice of it refits with every training row a landmark, not two thirds.  The
    ladder goes there straight from stage 1's m: on 900 rows no rung at the fit's 500
    (digits: 300 and 500 tied, which stopped the ladder short of every row's better
    error)."""
    from snacks_core.model.defaults import SEARCH_EPOCHS
    from snacks_core.model.search import search_around_defaults

    X, y = make_moons(n_rows, noise=0.25, random_state=0)
    X = np.hstack([X, np.random.default_rng(0).normal(size=(n_rows, 1))])
    estimator = SnacksClassifier(random_state=0)
    found = search_around_defaults(estimator, X, y)
    assert [m for m, _ in found.m_path] == path
    top = {name: [value] for name, value in found.ladder.items()}
    oracle = SnacksSearchCV(estimator.set_params(n_components=2 * n_rows // 3,
                                                 max_epochs=SEARCH_EPOCHS),
                            top, cv=3, refit=False, random_state=0).fit(X, y)
    assert found.m_path[-1][1] == pytest.approx(1.0 - oracle.best_score_)
    assert found.results["m"].max() == n_rows


@pytest.mark.parametrize("max_epochs", [50, 10])
def test_the_default_search_fits_within_its_epoch_budget(monkeypatch, max_epochs):
    """Stage 1 and the ladder's rungs run at most SEARCH_EPOCHS (20) epochs; the choice
    carries no budget, so the refit has the estimator's."""
    from snacks_core.model import search
    from snacks_core.model.defaults import SEARCH_EPOCHS

    monkeypatch.setattr(search, "SEARCH_M", 10)
    runs = []

    class Recorded(search.SnacksSearchCV):
        def fit(self, X, y, **params):
            runs.append((self.estimator.n_components, self.halving, self.estimator.max_epochs))
            return super().fit(X, y, **params)

    monkeypatch.setattr(search, "SnacksSearchCV", Recorded)
    X, y = make_classification(600, 6, n_informative=4, n_redundant=0, flip_y=0.01,
                               random_state=0)
    found = search.search_around_defaults(
        SnacksClassifier(n_components=20, max_epochs=max_epochs, random_state=0), X, y)
    budget = min(max_epochs, SEARCH_EPOCHS)
    assert runs[0] == (10, True, budget)
    assert [m for m, _, _ in runs[1:]] == [m for m, _ in found.m_path[1:]]
    assert {(halving, epochs) for _, halving, epochs in runs[1:]} == {(False, budget)}
    assert "max_epochs" not in found.params


def test_halving_rounds_solve_the_surviving_candidates_only(monkeypatch):
    """After a round the survivors are not a full grid of γ × λ: each round solves one cell
    per candidate and fold, no more."""
    X, y = make_classification(2700, 6, n_informative=4, random_state=0)
    grid = {"gamma": [0.02, 0.2, 2.0], "lam": [1e-2, 1e-4, 1e-6]}
    solved = []
    train_columns = sweeps.train_columns

    def counted(spec, Z, *args, **kwargs):
        solved.append(Z.shape[0])
        return train_columns(spec, Z, *args, **kwargs)

    monkeypatch.setattr(sweeps, "train_columns", counted)
    search = SnacksSearchCV(SnacksClassifier(n_components=10, random_state=0), grid, cv=3,
                            halving=True, factor=3, random_state=0).fit(X, y)
    rounds = search.cv_results_["iter"]
    # 9, 3 and 1 candidates, each on 3 folds of 300, 900 and 2700 rows.
    assert sorted(Counter(solved).items()) == [(200, 27), (600, 9), (1800, 3)]
    assert len(solved) == 3 * len(rounds)


def test_the_default_search_chooses_the_same_kernel_on_features_a_thousand_times_larger():
    """γ on 1000·X is γ/10⁶ on X: the search's candidates follow the data's 'scale' γ, also
    where it is small (raw 8-bit pixels: 2e-7 on MNIST; here 1.7e-7, its candidates from
    2e-8 to 2e-6), not a fixed floor, and it chooses the same setting (γ / 10⁶, the same
    C and m, the same CV error)."""
    from snacks_core.model.search import search_around_defaults

    X, y = make_classification(400, 6, n_informative=4, n_redundant=0, n_classes=3,
                               random_state=2)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    found = search_around_defaults(SnacksClassifier(n_components=20, random_state=0), X, y)
    wide = search_around_defaults(SnacksClassifier(n_components=20, random_state=0),
                                  1000 * X, y)
    assert sorted(set(wide.results["gamma"])) == pytest.approx(
        [g / 1e6 for g in sorted(set(found.results["gamma"]))])
    assert wide.params["gamma"] == pytest.approx(found.params["gamma"] / 1e6)
    assert (wide.params["C"], wide.params["n_components"]) == (
        found.params["C"], found.params["n_components"])
    assert wide.cv_error == pytest.approx(found.cv_error, abs=1e-9)


def _ten_classes(n=2400, seed=0):
    """Ten classes on 2,400 rows of 6 features: beyond a small set, so a default fit's m
    follows the rank rule (and, past the held-out growth's bar, the held-out error)."""
    return make_classification(n, 6, n_informative=6, n_redundant=0, n_classes=10,
                               n_clusters_per_class=1, random_state=seed)


def test_the_search_takes_the_default_fit_where_it_beats_the_choice(monkeypatch):
    """Past the held-out growth's bar (lowered here) the default search checks its choice
    against the estimator's default fit on the same rows held out: the oracle's two fits
    and errors, the default fit's γ, C and m taken where its error is lower, the choice
    kept on a tie (here: a choice that is the default fit itself)."""
    from snacks_core.model import defaults, search
    from snacks_core.model.engine import validation_split

    monkeypatch.setattr(defaults, "HELD_OUT_GROWTH_COST", 1e-6)
    X, y = _ten_classes()
    estimator = SnacksClassifier(random_state=3, max_epochs=5)
    poor = {"gamma": 1e-4, "C": 0.01, "n_components": 20}
    params, check = search._against_the_default_fit(estimator, poor, X, y, seed=0)
    fit, held = validation_split(np.unique(y, return_inverse=True)[1], 0.1, 0)
    default = clone(estimator).set_params(random_state=0).fit(X[fit], y[fit])
    choice = clone(estimator).set_params(random_state=0, **poor).fit(X[fit], y[fit])
    assert default.m_path_ is not None
    errors = [float(np.mean(model.predict(X[held]) != y[held])) for model in (choice, default)]
    m = default.embedding_.landmarks_.shape[0]
    assert check == (*errors, m, held.shape[0]) and errors[1] < errors[0]
    assert params == {"C": default.C_, "n_components": m, "gamma": default.embedding_.gamma_}
    assert "the default fit's settings taken" in search.defaults_check_note(check)
    tied, check = search._against_the_default_fit(estimator, {}, X, y, seed=0)
    assert tied == {} and check[0] == check[1] == errors[1]
    assert "the choice kept" in search.defaults_check_note(check)


def test_the_default_search_checks_the_default_fit_only_past_the_bar(monkeypatch):
    """The check runs where the estimator's default fit grows m by the held-out error, and
    its verdict is the params returned; below the bar there is none."""
    from snacks_core.model import defaults, search

    monkeypatch.setattr(search, "SEARCH_M", 10)
    monkeypatch.setattr(search, "SEARCH_MAX_M", 40)
    X, y = _ten_classes()
    estimator = SnacksClassifier(random_state=0, max_epochs=5)
    assert search.search_around_defaults(estimator, X, y).defaults_check == ()
    monkeypatch.setattr(defaults, "HELD_OUT_GROWTH_COST", 1e-6)
    found = search.search_around_defaults(estimator, X, y)
    choice, default, m, n_held = found.defaults_check
    assert n_held == 240
    if default < choice:
        assert found.params["n_components"] == m and found.params["C"] == pytest.approx(25.0)
    else:
        assert found.params["n_components"] in set(found.results["m"])


def test_snacks_search_prints_its_check_against_the_default_fit(monkeypatch, capsys, tmp_path):
    """``snacks search`` past the bar ends its m line with the check, and names what chose
    the setting it prints: the check's verdict, whose setting the model has."""
    from snacks_core import cli
    from snacks_core.model import defaults, search

    monkeypatch.setattr(search, "SEARCH_M", 10)
    monkeypatch.setattr(search, "SEARCH_MAX_M", 40)
    monkeypatch.setattr(defaults, "HELD_OUT_GROWTH_COST", 1e-6)
    X, y = _ten_classes(3429)
    path = tmp_path / "ten.csv"
    pd.DataFrame(np.column_stack([X, y]),
                 columns=[*(f"x{j}" for j in range(6)), "label"]).to_csv(path, index=False)
    assert cli.main(["search", str(path), "--label-column", "label", "--seed", "0",
                     "--max-epochs", "5"]) == 0
    out = capsys.readouterr().out
    (ladder,) = [line for line in out.splitlines() if line.startswith("m: ")]
    check = re.search(r"against the default fit \(m = ([\d,]+), grown by the held-out error\) "
                      r"on 240 training rows held out: the choice ([\d.]+) %, the "
                      r"default fit ([\d.]+) %: (the default fit's settings taken|the choice "
                      r"kept)$", ladder)
    assert check is not None
    taken = check.group(4) == "the default fit's settings taken"
    assert (float(check.group(3)) < float(check.group(2))) == taken
    (chosen,) = [line for line in out.splitlines() if line.startswith("chosen by ")]
    assert chosen.startswith("chosen by rows held out (the default fit's settings): " if taken
                             else "chosen by CV: ")
    if taken:
        assert f", m = {check.group(1).replace(',', '')};" in chosen
