"""n_components='auto': m grown from the default rule while the held-out error improves
(snacks_core.model.landmark_growth), and the nested embedding it grows by."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.linalg
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs, make_classification
from sklearn.metrics.pairwise import rbf_kernel

from snacks_core import SnacksClassifier, cli
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.model import defaults, landmark_growth
from snacks_core.model.defaults import default_fit_m, default_m


def _clusters(n=2000, seed=0):
    """Two classes of 8 clusters each in 10 dimensions: a boundary that m = 2√n landmarks
    draw coarsely (test error about twice that of m = 4 × 2√n)."""
    X, y = make_classification(n, 10, n_informative=10, n_redundant=0, n_clusters_per_class=8,
                               class_sep=2.0, random_state=seed)
    return X[: n // 2], y[: n // 2], X[n // 2:], y[n // 2:]


def _csv_file(path, X, y):
    """X and y written as a CSV file with columns x0, x1, … and label; its path."""
    pd.DataFrame(np.column_stack([X, y]),
                 columns=[*(f"x{j}" for j in range(X.shape[1])), "label"]).to_csv(
        path, index=False)
    return path


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), first=st.integers(1, 29), extra=st.integers(1, 30),
       dtype=st.sampled_from([np.float64, np.float32]))
def test_extended_embedding_equals_one_built_at_once(seed, first, extra, dtype):
    """The columns landmarks appended to an embedding add (``first_column``) beside the
    smaller embedding's are K_nm L⁻ᵀ on all the landmarks, L the Cholesky factor of their
    K_mm (the oracle, in NumPy), and what a NystromEmbedding on them all gives."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 3))
    landmarks = rng.permutation(80)[: first + extra]
    small = NystromEmbedding(gamma=0.4, dtype=dtype).fit(X, landmark_indices=landmarks[:first])
    whole = NystromEmbedding(gamma=0.4, dtype=dtype).fit(X, landmark_indices=landmarks)
    assert small.triangular_ and whole.triangular_
    extended = np.hstack([small.transform(X), whole.transform(X, first_column=first)])
    lower = scipy.linalg.cholesky(rbf_kernel(X[landmarks], gamma=0.4), lower=True)
    oracle = scipy.linalg.solve_triangular(lower, rbf_kernel(X[landmarks], X, gamma=0.4),
                                           lower=True).T
    tol = 1e-8 if dtype is np.float64 else 2e-4
    np.testing.assert_allclose(extended, oracle, atol=tol * np.abs(oracle).max())
    np.testing.assert_allclose(extended, whole.transform(X), atol=tol * np.abs(oracle).max())


@pytest.mark.parametrize("first_column", [-1, 5, 1.5])
def test_first_column_out_of_range_is_refused(first_column):
    X = np.random.default_rng(0).normal(size=(20, 2))
    embedding = NystromEmbedding(n_components=5, random_state=0).fit(X)
    with pytest.raises((ValueError, TypeError)):
        embedding.transform(X, first_column=first_column)


def test_auto_grows_where_the_default_m_is_coarse():
    """m doubles at least twice from 2√n and the test error falls well below the default
    m's; the path increases and ends at the model's m."""
    X, y, X_test, y_test = _clusters()
    # 2√n landmarks at the default C (the default fit of a set of more than 2,000 rows; on
    # these 1,000 it would make every row a landmark and choose C).
    default = SnacksClassifier(n_components=default_m(*X.shape), C=25.0,
                               random_state=0).fit(X, y)
    auto = SnacksClassifier(n_components="auto", random_state=0).fit(X, y)
    path = auto.m_path_
    assert path["m"][0] == default_m(*X.shape) == default.coef_.shape[1]
    assert len(path["m"]) >= 3 and np.all(np.diff(path["m"]) > 0)
    assert path["m"][-1] == auto.coef_.shape[1] == auto.embedding_.landmarks_.shape[0]
    assert np.all(path["seconds"] > 0) and np.all((path["held_out_error"] >= 0)
                                                   & (path["held_out_error"] <= 1))
    assert auto.m_stop_reason_ == landmark_growth.NO_GAIN
    assert auto.score(X_test, y_test) > default.score(X_test, y_test) + 0.02
    assert default.m_path_ is None and default.m_stop_reason_ is None


def test_auto_stops_when_the_held_out_error_stops_improving():
    """Well-separated blobs: no error to remove at the default m, so one doubling shows no
    gain and growth stops there, the larger m kept."""
    X, y = make_blobs(1000, 5, centers=3, random_state=0)
    model = SnacksClassifier(n_components="auto", random_state=0).fit(X, y)
    assert model.m_stop_reason_ == landmark_growth.NO_GAIN
    m = default_m(*X.shape, n_classes=3)
    np.testing.assert_array_equal(model.m_path_["m"], [m, 2 * m])
    assert model.score(X, y) > 0.99


def test_auto_is_deterministic_and_stops_at_n():
    """On 70 rows m grows from 50 to all of them; equal seeds give equal models."""
    X, y, _, _ = _clusters(140)
    first = SnacksClassifier(n_components="auto", random_state=0).fit(X, y)
    second = SnacksClassifier(n_components="auto", random_state=0).fit(X, y)
    assert first.m_stop_reason_ == landmark_growth.REACHED_N
    np.testing.assert_array_equal(first.m_path_["m"], [50, X.shape[0]])
    np.testing.assert_array_equal(first.coef_, second.coef_)
    np.testing.assert_array_equal(first.m_path_["m"], second.m_path_["m"])


def test_auto_stops_at_the_memory_budget():
    """A budget that holds the default m's embedding but not the next one beside it."""
    X, y, _, _ = _clusters()
    m = default_m(*X.shape)
    budget = X.shape[0] * (m * 4 + 64) + 100_000
    model = SnacksClassifier(n_components="auto", memory_budget=budget,
                             random_state=0).fit(X, y)
    assert model.m_stop_reason_ == landmark_growth.MEMORY
    np.testing.assert_array_equal(model.m_path_["m"], [m])


def test_auto_with_early_stopping_and_an_eval_set():
    """Early stopping on: the steps train on the rows the engine trains on and stop on its
    held-out rows (no continuation); an eval_set's error is recorded on the grown m."""
    X, y, X_test, y_test = _clusters()
    model = SnacksClassifier(n_components="auto", early_stopping=True, random_state=0).fit(
        X, y, eval_set=(X_test, y_test))
    assert model.m_path_["m"][-1] == model.coef_.shape[1]
    assert np.isfinite(model.history_["validation_error"]).any()
    assert model.train_error_ is not None and model.storage_ == "memory"


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.text(max_size=6).filter(lambda s: s not in ("auto", "sqrt")),
                 st.integers(max_value=0), st.floats(allow_nan=True)))
def test_bad_n_components_is_refused(value):
    """'auto ', 'AUTO', zero, negative and fractional values are refused by the
    estimator's parameter validation, naming the parameter."""
    X, y, _, _ = _clusters(100)
    with warnings.catch_warnings(), pytest.raises(ValueError, match="n_components"):
        warnings.simplefilter("ignore")
        SnacksClassifier(n_components=value).fit(X, y)


def test_sqrt_is_the_default_rule():
    X, y, _, _ = _clusters(400)
    assert SnacksClassifier().n_components == "sqrt"
    model = SnacksClassifier(n_components="sqrt", random_state=0).fit(X, y)
    assert model.coef_.shape[1] == default_fit_m(*X.shape) == X.shape[0]


def test_snacks_fit_m_auto_reports_the_path_and_why_it_stopped(capsys, tmp_path):
    """``snacks fit --m auto`` prints each m with its held-out error and time, and why it
    stopped; the m on the model line is the last one; bad --m values get one line."""
    X, y, _, _ = _clusters()
    path = _csv_file(tmp_path / "clusters.csv", X, y)
    assert cli.main(["fit", str(path), "--label-column", "label", "--m", "auto",
                     "--seed", "0"]) == 0
    out = capsys.readouterr().out
    grown = next(line for line in out.splitlines() if "m grown by --m auto" in line)
    steps = re.findall(r"(\d+) \((\d+\.\d+) %, (\d+\.\d+) s\)", grown)
    ms = [int(m) for m, _, _ in steps]
    assert len(ms) >= 2 and ms == sorted(ms) and ms[0] == default_m(700, X.shape[1])
    assert grown.endswith(f"stopped: {landmark_growth.NO_GAIN}")
    assert f"m = {ms[-1]}," in out
    for bad in ("auto ", "-3", "0", "AUTO"):
        with pytest.raises(SystemExit):
            cli.main(["fit", str(path), "--label-column", "label", "--m", bad])
        assert "--m takes a positive whole number or 'auto'" in capsys.readouterr().err


def test_auto_on_two_features_is_the_default_fit():
    """On two features K_mm is singular at the default m already: no columns to extend,
    so the fit is the default one, and says why."""
    X, y = make_blobs(600, 2, centers=2, cluster_std=3.0, random_state=0)
    auto = SnacksClassifier(n_components="auto", random_state=0).fit(X, y)
    # Growth keeps λ = 0.02/n (C = 25): it chooses m, not C.
    default = SnacksClassifier(C=25.0, random_state=0).fit(X, y)
    assert auto.m_stop_reason_ == landmark_growth.SINGULAR
    assert auto.m_path_["m"].tolist() == [default.embedding_.landmarks_.shape[0]]
    np.testing.assert_array_equal(auto.coef_, default.coef_)


def _ten_classes(n_features, n=2400, seed=0):
    """Ten classes on ``n`` rows: beyond a small set ((10 − 1)·n over the pairs), so the
    default m is 300 (30 a class)."""
    X, y = make_classification(n, n_features, n_informative=min(n_features, 20),
                               n_redundant=0, n_classes=10, n_clusters_per_class=1,
                               random_state=seed)
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def test_the_default_m_doubles_while_its_landmarks_leave_the_kernel_unexplained():
    """On 30 informative features the default 300 landmarks leave most of the kernel's
    diagonal unexplained: m doubles twice, to 1,200, each share measured as the oracle
    measures it (an embedding on the first m landmarks drawn, on the m drawn after them),
    and the model is the fit at n_components=1,200 (the draws nest)."""
    X, y = _ten_classes(30)
    model = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    assert list(model.m_unexplained_) == [300, 600]
    assert model.m_stop_reason_ == landmark_growth.RANK_TOP
    assert model.embedding_.landmarks_.shape[0] == 1200
    drawn = SnacksClassifier(random_state=0, max_epochs=5, n_components=1200).fit(X, y)
    np.testing.assert_array_equal(model.embedding_.landmark_indices_,
                                  drawn.embedding_.landmark_indices_)
    np.testing.assert_array_equal(model.coef_, drawn.coef_)
    # γ 'scale' resolved once for the measure and the embedding, kept as asked.
    assert model.embedding_.gamma == "scale" and model.embedding_.gamma_ == drawn.embedding_.gamma_
    rows = X[drawn.embedding_.landmark_indices_]
    gamma = drawn.embedding_.gamma_
    for m, share in model.m_unexplained_.items():
        Z = NystromEmbedding(gamma=gamma).fit(rows[:m], landmark_indices=np.arange(m)).transform(
            rows[m:2 * m])
        assert share == pytest.approx(1.0 - np.mean(np.sum(Z * Z, axis=1)), abs=1e-8)
        assert share > landmark_growth.RANK_UNEXPLAINED


def test_a_kernel_the_default_landmarks_capture_keeps_the_default_m():
    X, y = _ten_classes(4)
    model = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    ((m, share),) = model.m_unexplained_.items()
    assert m == default_fit_m(*X.shape, 10) == model.embedding_.landmarks_.shape[0]
    assert share <= landmark_growth.RANK_UNEXPLAINED
    assert model.m_stop_reason_ == landmark_growth.CAPTURED
    default = SnacksClassifier(random_state=0, max_epochs=5, n_components=m).fit(X, y)
    np.testing.assert_array_equal(model.coef_, default.coef_)


def test_a_small_set_of_more_rows_than_its_500_landmarks_grows_to_every_row():
    """A small set (1,600 rows of ten classes) has 500 landmarks, every row up to 500; where
    they leave the kernel unexplained m doubles as beyond a small set, here to every row
    (the exact kernel), and C is still chosen by cross-validation, on the grown embedding:
    the model is the fit at n_components=1,600."""
    X, y = _ten_classes(30)
    X, y = X[:1600], y[:1600]
    model = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    assert list(model.m_unexplained_) == [500, 1000]
    assert min(model.m_unexplained_.values()) > landmark_growth.RANK_UNEXPLAINED
    assert model.m_stop_reason_ == landmark_growth.RANK_TOP
    assert model.embedding_.landmarks_.shape[0] == 1600 and model.C_cv_errors_ is not None
    every_row = SnacksClassifier(random_state=0, max_epochs=5, n_components=1600).fit(X, y)
    np.testing.assert_array_equal(model.embedding_.landmark_indices_,
                                  every_row.embedding_.landmark_indices_)
    assert model.C_ == every_row.C_
    np.testing.assert_array_equal(model.coef_, every_row.coef_)


def test_the_default_m_does_not_grow_out_of_the_memory_budget():
    """A budget that holds 300 columns of the rows in memory and not 600: m stays at 300,
    the share it left measured, and the fit says why."""
    X, y = _ten_classes(30)
    model = SnacksClassifier(random_state=0, max_epochs=2, memory_budget="4MiB").fit(X, y)
    ((m, share),) = model.m_unexplained_.items()
    assert m == 300 == model.embedding_.landmarks_.shape[0] and model.storage_ == "memory"
    assert share > landmark_growth.RANK_UNEXPLAINED
    assert model.m_stop_reason_ == landmark_growth.MEMORY


def _two_class_words(n_words, n=2400, seed=0):
    """Unit-norm tf-idf-like rows of two classes: Zipf word counts, each class drawing a
    fifth of its words from a topic of its own."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    base = 1.0 / (np.arange(n_words) + 2.7)
    topics = np.zeros((2, n_words))
    for label in (0, 1):
        topics[label, rng.choice(n_words, 100, replace=False)] = 1.0
    X = np.zeros((n, n_words))
    for i in range(n):
        p = 0.8 * base / base.sum() + 0.2 * topics[y[i]] / 100
        np.add.at(X[i], rng.choice(n_words, 40, p=p), 1.0)
    X *= np.log(n / (1.0 + np.count_nonzero(X, axis=0)))
    return sp.csr_matrix(X / np.linalg.norm(X, axis=1, keepdims=True)), y


def test_two_classes_of_wide_rows_grow_as_auto_does_and_narrow_ones_keep_their_m():
    """Beyond the small sets' 2,000 rows, two classes of rows of at least
    HELD_OUT_WIDE_FEATURES features (words) grow m by the held-out error from where 'auto'
    starts (no rank rule, C = 25): the fit is n_components='auto''s, path and model; the
    same rows cut to fewer columns are the plain default fit (C chosen by
    cross-validation, a small set's 500 landmarks)."""
    from snacks_core.model.defaults import HELD_OUT_WIDE_FEATURES

    X, y = _two_class_words(HELD_OUT_WIDE_FEATURES)
    model = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    auto = SnacksClassifier(random_state=0, max_epochs=5, n_components="auto").fit(X, y)
    assert model.m_unexplained_ is None and len(model.m_path_["m"]) >= 2
    np.testing.assert_array_equal(model.m_path_["m"], auto.m_path_["m"])
    np.testing.assert_array_equal(model.m_path_["held_out_error"],
                                  auto.m_path_["held_out_error"])
    assert model.m_stop_reason_ == auto.m_stop_reason_ and model.C_ == auto.C_ == 25
    np.testing.assert_array_equal(model.coef_, auto.coef_)
    narrow = SnacksClassifier(random_state=0, max_epochs=5).fit(
        X[:, :HELD_OUT_WIDE_FEATURES - 1], y)
    assert narrow.m_path_ is None and narrow.embedding_.landmarks_.shape[0] == 500
    assert narrow.C_cv_errors_ is not None


@pytest.mark.parametrize("change", ["a given m", "a small set", "leverage", "admm"])
def test_the_default_m_grows_by_rank_only_where_the_rule_says(change):
    X, y = _ten_classes(30)
    params = {"random_state": 0, "max_epochs": 2}
    if change == "a given m":
        params["n_components"] = 300
    elif change == "a small set":
        # Every row a landmark (at most 500): the exact kernel, nothing to grow.
        X, y = X[:480], y[:480]
    elif change == "leverage":
        params["sampling"] = "leverage"
    else:
        # ADMM on the Nyström operator: the default m's embedding, as asked.
        params.update(solver="admm", max_epochs=5, solver_options={"representation": "nystrom"})
    model = SnacksClassifier(**params).fit(X, y)
    assert model.m_unexplained_ is None
    asked = model.landmark_count(*X.shape, np.unique(y).shape[0])
    assert model.embedding_.landmarks_.shape[0] <= asked <= 500


def test_snacks_fit_says_why_its_default_m_grew(capsys, tmp_path):
    """Without --m, ``snacks fit`` of ten classes beyond a small set prints the grown m on
    its model line and, on the next, each m measured with the share it left; with --m the
    m asked for and no such line."""
    # 2,400 training rows at the default test share.
    path = _csv_file(tmp_path / "ten.csv", *_ten_classes(30, n=3429))
    assert cli.main(["fit", str(path), "--label-column", "label", "--seed", "0",
                     "--max-epochs", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ", m = 1200, " in lines[1]
    assert lines[2].startswith("  m doubled from the default 300 to 1,200 (more than two "
                               "classes)")
    assert lines[2].endswith(f"stopped: {landmark_growth.RANK_TOP}")
    shares = [int(share) for share in re.findall(r"left (\d+) %", lines[2])]
    assert len(shares) == 2 and shares[0] > shares[1] > 100 * landmark_growth.RANK_UNEXPLAINED
    assert cli.main(["fit", str(path), "--label-column", "label", "--seed", "0",
                     "--max-epochs", "5", "--m", "300"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert ", m = 300, " in lines[1] and "m doubled" not in "\n".join(lines)



def _bar(monkeypatch, factor):
    """The held-out growth's cost bar set to ``factor`` (1e-6: ten classes on 2,400 rows
    pass it; the real bar, Σ over the pairs of (n_a + n_b)²·d ≥ 2·n·2,000², needs tens of
    thousands of rows)."""
    monkeypatch.setattr(defaults, "HELD_OUT_GROWTH_COST", factor)


def test_the_default_m_grows_by_held_out_error_only_past_its_cost_bar(monkeypatch):
    """Past the bar a default fit of more than two classes is the 'auto' fit: the same path,
    landmarks and coefficients where the rank rule keeps its m (the draws nest); below the
    real bar it keeps the rank rule's m and no path."""
    X, y = _ten_classes(6)
    _bar(monkeypatch, 1e-6)
    grown = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    auto = SnacksClassifier(random_state=0, max_epochs=5, n_components="auto").fit(X, y)
    assert grown.m_unexplained_ is not None and len(grown.m_unexplained_) == 1
    np.testing.assert_array_equal(grown.m_path_["m"], auto.m_path_["m"])
    assert len(grown.m_path_["m"]) >= 2 and grown.m_stop_reason_ == auto.m_stop_reason_
    np.testing.assert_array_equal(grown.embedding_.landmark_indices_,
                                  auto.embedding_.landmark_indices_)
    np.testing.assert_array_equal(grown.coef_, auto.coef_)
    _bar(monkeypatch, 2.0)
    kept = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    assert kept.m_path_ is None and kept.m_stop_reason_ == landmark_growth.CAPTURED
    assert kept.embedding_.landmarks_.shape[0] == grown.m_path_["m"][0]


def test_held_out_growth_starts_where_the_rank_rule_stops(monkeypatch, capsys, tmp_path):
    """Where the rank rule doubles m (300 → 1,200 on 30 informative features), the held-out
    growth starts there, on the same landmarks (those of the fit at n_components=1,200
    come first), the shares measured as without it; ``snacks fit`` says both."""
    X, y = _ten_classes(30)
    rank_only = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    _bar(monkeypatch, 1e-6)
    grown = SnacksClassifier(random_state=0, max_epochs=5).fit(X, y)
    assert list(grown.m_unexplained_) == [300, 600] and grown.m_path_["m"][0] == 1200
    assert grown.m_unexplained_ == pytest.approx(rank_only.m_unexplained_, abs=1e-12)
    assert grown.m_path_["m"][-1] == grown.embedding_.landmarks_.shape[0] > 1200
    np.testing.assert_array_equal(grown.embedding_.landmark_indices_[:1200],
                                  rank_only.embedding_.landmark_indices_)
    path = _csv_file(tmp_path / "ten.csv", *_ten_classes(30, n=3429))
    assert cli.main(["fit", str(path), "--label-column", "label", "--seed", "0",
                     "--max-epochs", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("  m doubled from the default 300 to 1,200")
    assert "stopped" not in lines[2]
    assert lines[3].startswith("  m grown by the held-out error (more than two classes on "
                               "many rows in large pairs) (held-out error, time): 1200 (")
    assert f", m = {lines[3].split(' → ')[-1].split(' ')[0]}, " in lines[1]


@pytest.mark.parametrize("solver", ["liblinear", "pegasos"])
def test_auto_grows_with_solvers_that_start_cold(solver):
    """A solver that takes no starting point grows m too: each step starts cold (these
    raised on the zero-padded start before)."""
    X, y, X_test, y_test = _clusters()
    model = SnacksClassifier(n_components="auto", solver=solver, random_state=0,
                             max_epochs=20).fit(X, y)
    assert len(model.m_path_["m"]) >= 2
    assert model.coef_.shape[1] == model.embedding_.n_components_
    assert model.score(X_test, y_test) > 0.8


def test_auto_grows_past_landmarks_whose_last_directions_are_round_off():
    """On four features at γ = 0.1 the 178 landmarks' kernel matrix keeps all but a few of
    its eigenvalues (the rest below 10⁻¹⁰ of the largest): growth goes on to them, embedding
    every row anew (the eigen-decomposition's columns do not nest), rather than stopping as
    if they added nothing.  The model is the embedding on those landmarks: its training
    error, measured on the columns the growth computed, is a fresh embedding's."""
    X, y = make_classification(2000, 4, n_informative=4, n_redundant=0,
                               n_clusters_per_class=2, random_state=0)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    model = SnacksClassifier(n_components="auto", gamma=0.1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(model.m_path_["m"], [89, 178])
    assert model.m_stop_reason_ != landmark_growth.SINGULAR
    embedding = model.embedding_
    assert not embedding.triangular_ and 89 < embedding.n_components_ < 178
    drawn = SnacksClassifier(n_components=178, gamma=0.1, random_state=0).fit(X, y)
    np.testing.assert_array_equal(embedding.landmark_indices_,
                                  drawn.embedding_.landmark_indices_)
    assert model.coef_.shape == (1, embedding.n_components_)
    assert model.train_error_ == pytest.approx(np.mean(model.predict(X) != y), abs=1e-12)
