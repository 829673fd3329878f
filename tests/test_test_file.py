"""A test file beside the training file (issue 28): read as one run, scaled with the training
rows, used instead of the random split on every page and in the exported code; and what the
Playground says about a test error's uncertainty, Auto-tune's choice, landmarks and lessons."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.stats
from sklearn.preprocessing import StandardScaler

from snacks_core import datasets
from snacks_core.datasets import make_dataset, split_dataset, with_test_part
from test_app import APP, TIMEOUT, assert_clean, metric


def _blobs(n, shift, seed):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0.0, 1.0, (n, 2)), rng.normal(shift, 1.0, (n, 2))]) * 5 + 20
    return X, np.repeat(["no", "yes"], n)


def _csv(X, y):
    return ("a,b,label\n" + "".join(f"{a:.4f},{b:.4f},{label}\n"
                                    for (a, b), label in zip(X, y, strict=True))).encode()


def test_a_test_part_replaces_the_random_split_and_is_scaled_with_the_training_rows():
    X, y = _blobs(100, 3.0, 0)
    X_test, y_test = _blobs(30, 3.0, 1)
    dataset = with_test_part(make_dataset(X, y, "train"), make_dataset(X_test, y_test, "test"))
    split = split_dataset(dataset, test_size=0.3, scaling="standard")
    scaler = StandardScaler().fit(X)
    np.testing.assert_allclose(split.X_train, scaler.transform(X))
    np.testing.assert_allclose(split.X_test, scaler.transform(X_test))
    assert list(split.y_test) == list(y_test)


def test_a_test_part_needs_labels_and_the_training_width():
    train = make_dataset(*_blobs(20, 3.0, 0), "train")
    with pytest.raises(ValueError, match="has no labels"):
        with_test_part(train, make_dataset(np.ones((3, 2)), None, "t", purpose="predict"))
    with pytest.raises(ValueError, match="load_files"):
        with_test_part(train, make_dataset(np.ones((4, 3)), [0, 1, 0, 1], "t"))


def test_exported_code_of_an_uploaded_pair_reads_both_files(tmp_path, monkeypatch):
    from snacks_core.app.cached import DataRequest
    from snacks_core.app.snippets import run_code

    train_raw, test_raw = _csv(*_blobs(60, 3.0, 0)), _csv(*_blobs(25, 3.0, 1))
    (tmp_path / "mine.csv").write_bytes(train_raw)
    (tmp_path / "mine_test.csv").write_bytes(test_raw)
    train, test = datasets.load_files([tmp_path / "mine.csv", tmp_path / "mine_test.csv"],
                                      label_column="label", purpose=("train", "predict"))
    request = DataRequest("upload:0123:mine.csv", None, None, None, None, 0, 0.3, "standard",
                          False)
    code = run_code(request, with_test_part(train, test),
                    {"kernel": "rbf", "n_components": 20, "lam": 1e-3, "max_epochs": 3,
                     "random_state": 0}, test_file="mine_test.csv")
    assert "load_files(['mine.csv', 'mine_test.csv'], label_column='label'" in code
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, "exported", "exec"), namespace)
    assert namespace["split"].X_test.shape == (50, 2)
    assert namespace["split"].X_train.shape == (120, 2)


@pytest.mark.parametrize("error, n", [(0.142, 120), (0.5, 7), (0.0, 50), (0.03, 15000)])
def test_the_standard_error_is_the_binomial_one(error, n):
    from snacks_core.app.run_view import standard_error, test_error_uncertainty

    assert standard_error(error, n) == pytest.approx(scipy.stats.binom(n, error).std() / n)
    if (error, n) == (0.142, 120):
        assert test_error_uncertainty(error, n) == "14.2 % ± 3.2 (120 test rows)"


def _app(**settings):
    from streamlit.testing.v1 import AppTest

    from snacks_core.app.state import Keys

    settings.setdefault(Keys.EXPORT, True)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in settings.items():
        at.session_state[name] = value
    return at.run()


@pytest.mark.slow
def test_an_uploaded_pair_is_used_on_every_page():
    at = _app()
    at.switch_page("app_pages/data.py").run()
    train_raw, test_raw = _csv(*_blobs(80, 2.5, 0)), _csv(*_blobs(35, 2.5, 1))
    at.file_uploader[0].upload("mine.csv", train_raw, "text/csv").run()
    at.file_uploader[1].upload("mine_test.csv", test_raw, "text/csv").run()
    assert_clean(at)
    assert at.button(key="use_upload").label == "Use these files"
    at.button(key="use_upload").click().run()
    assert_clean(at)
    assert at.session_state["dataset"].startswith("upload:")
    assert metric(at, "Training rows") == "160" and metric(at, "Test rows") == "70"
    assert any("Test rows from **mine_test.csv**" in c.value for c in at.caption)
    assert at.slider(key="test_size").disabled
    at.switch_page("app_pages/playground.py").run()
    assert_clean(at)
    facts = next(md.value for md in at.markdown if "- m = " in md.value)
    assert re.search(r"- test error [0-9.]+ % ± [0-9.]+ \(70 test rows\)", facts), facts
    code = next(c.value for c in at.code)
    assert "load_files(['mine.csv', 'mine_test.csv']" in code
    at.switch_page("app_pages/solvers.py").run()
    assert_clean(at)


@pytest.mark.slow
def test_auto_tune_shows_its_choice_without_a_click_on_train():
    """Live training off: the settings wait for Train, but Auto-tune's choice is trained
    and shown at once, with what it tried across the page."""
    at = _app(n_samples=200, m=20, live=False)
    at.button(key="train_playground").click().run()
    assert_clean(at)
    at.button(key="auto_tune").click().run()
    assert_clean(at)
    tuned = at.session_state["_auto_tune"]
    assert all(at.session_state[name] == value for name, value in tuned["values"].items())
    assert metric(at, "Test error")
    assert not any("click **Train**" in i.value for i in at.info)
    caption = next(c.value for c in at.caption if c.value.startswith("Auto-tune scored"))
    assert "the model above is theirs" in caption and "all 140 training rows" in caption
    table = at.dataframe[0].value
    assert {"γ", "C", "m", "CV error %"} <= set(table.columns) and len(table) >= 10
    assert any("measured once" in md.value for md in at.markdown)


@pytest.mark.slow
def test_the_facts_say_why_m_is_below_the_m_asked_for():
    """Every row twice: some landmarks drawn repeat a row and are dropped, and the facts
    say so with numbers that add up."""
    X, y = _blobs(60, 3.0, 0)
    raw = _csv(np.vstack([X, X]), np.concatenate([y, y]))
    at = _app()
    at.switch_page("app_pages/data.py").run()
    at.file_uploader[0].upload("twice.csv", raw, "text/csv").run()
    at.button(key="use_upload").click().run()
    at.session_state["m"] = 50
    at.switch_page("app_pages/playground.py").run()
    assert_clean(at)
    facts = next(md.value for md in at.markdown if "- m = " in md.value)
    kept, drawn, dropped = map(int, re.search(
        r"- m = (\d+) .*: (\d+) drawn, (\d+) of them repeating", facts).groups())
    assert drawn == 50 and kept + dropped == drawn and dropped > 0


@pytest.mark.slow
def test_a_lesson_banner_ends_when_its_experiment_is_left():
    at = _app()
    at.button(key="lesson_large_lambda").click().run()
    assert_clean(at)
    assert at.button(key="dismiss_lesson")
    at.switch_page("app_pages/data.py").run()
    assert not any(b.key == "dismiss_lesson" for b in at.button)
    at.switch_page("app_pages/playground.py").run()
    assert not any(b.key == "dismiss_lesson" for b in at.button)
    at.button(key="lesson_large_lambda").click().run()
    assert at.button(key="dismiss_lesson")
    at.selectbox(key="dataset").set_value("synthetic:circles").run()
    assert_clean(at)
    assert not any(b.key == "dismiss_lesson" for b in at.button)
