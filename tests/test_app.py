"""The Streamlit app through ``streamlit.testing.v1.AppTest``: every page on small data.

Streamlit's AppTest resets ``PagesManager.uses_pages_directory`` before every run; with a
``pages/`` folder beside ``app.py`` it then emulates the old folder-based multipage apps
and reruns the last page script *without* the entry point (no sidebar, no navigation).
The real server sets that flag once and ``st.navigation`` clears it, so the fixture below
clears it too, after each construction.
"""

from __future__ import annotations

import json

from pathlib import Path

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 120


@pytest.fixture(autouse=True)
def entry_point_on_every_run(monkeypatch):
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)


def run_app(query_params=None, **settings) -> AppTest:
    """The app after its first run, with URL parameters and session settings applied."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if query_params:
        at.query_params = dict(query_params)
    for name, value in settings.items():
        at.session_state[name] = value
    return at.run()


def assert_clean(at):
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def figure_data(chart):
    """The traces of a plotly chart element."""
    return json.loads(chart.proto.spec)["data"]


SMALL = {"n_samples": 200, "m": 20}


def test_playground_trains_and_draws_the_boundary():
    at = run_app(**SMALL)
    assert_clean(at)
    assert at.title[0].value == "Playground"
    assert float(metric(at, "Test error").rstrip(" %")) < 20
    charts = at.get("plotly_chart")
    assert len(charts) == 1
    names = [trace.get("name", "") for trace in figure_data(charts[0])]
    assert any(name.startswith("landmarks (m = 20)") for name in names)
    assert "margins f = ±1" in names


@pytest.mark.parametrize("setting, value", [("solver", "pegasos"), ("solver", "libsvm"),
                                            ("m", 5), ("lam", 0.1)])
def test_playground_results_follow_the_settings(setting, value):
    at = run_app(**SMALL)
    before = metric(at, "Objective F(w)")
    widget = at.select_slider(key=setting) if setting in ("m", "lam") else at.selectbox(key=setting)
    widget.set_value(value).run()
    assert_clean(at)
    assert metric(at, "Objective F(w)") != before


def test_playground_changes_dataset():
    at = run_app(**SMALL)
    at.selectbox(key="dataset").set_value("synthetic:xor").run()
    assert_clean(at)
    assert at.query_params["dataset"] == "synthetic:xor"
    assert len(at.get("plotly_chart")) == 1


def test_query_parameters_round_trip():
    at = run_app({"m": "20", "lam": "0.01", "solver": "pegasos", "dataset": "synthetic:circles",
                  "n_samples": "200"})
    assert_clean(at)
    assert at.session_state["m"] == 20
    assert at.session_state["lam"] == 0.01
    assert at.session_state["solver"] == "pegasos"
    at.select_slider(key="m").set_value(30).run()
    assert at.query_params["m"] == "30"
    assert at.query_params["dataset"] == "synthetic:circles"
    shared = dict(at.query_params)
    again = run_app(shared)
    assert again.session_state["m"] == 30
    assert again.session_state["solver"] == "pegasos"


def test_bad_query_parameters_are_reported_and_replaced():
    at = run_app({"gamma": "-3", "solver": "magic", "n_samples": "200"})
    assert not at.exception
    assert any("invalid" in w.value for w in at.warning)
    assert at.session_state["gamma"] == 1.0
    assert at.session_state["solver"] == "snacks"


def test_manual_training_waits_for_the_button():
    at = run_app(live=False, **SMALL)
    assert not at.metric
    at.button(key="train_playground").click().run()
    assert_clean(at)
    assert at.metric
