"""The explorer's session state: settings asked for in one run and applied in the next."""

from __future__ import annotations

import pytest
import streamlit

from snacks_core.ui import state


@pytest.fixture
def session(monkeypatch):
    values = {"dataset": "synthetic:moons", "lam": 1e-3}
    monkeypatch.setattr(streamlit, "session_state", values)
    return values


def test_a_pending_dataset_survives_a_page_change_that_interrupts_its_run(session):
    """'Use this file', then a page change at once: the run that was to apply the upload is
    interrupted, and the next one arrives with the sidebar's old value from the browser."""
    state.select_dataset_next_run("upload:0123:ijcnn1.trn")
    state.set_settings_next_run({"lam": 1e-5})
    state.apply_pending()  # the run after the click...
    assert session["dataset"] == "upload:0123:ijcnn1.trn" and session["lam"] == 1e-5
    session.update({"dataset": "synthetic:moons", "lam": 1e-3})  # ...the browser's old values
    state.apply_pending()
    assert session["dataset"] == "upload:0123:ijcnn1.trn" and session["lam"] == 1e-5
    state.apply_pending()  # a run that starts with them: the browser has taken them
    assert state.Keys.PENDING not in session
    session.update({"dataset": "bundled:iris", "lam": 1e-2})  # the user's next choices
    state.apply_pending()
    assert session["dataset"] == "bundled:iris" and session["lam"] == 1e-2


def test_a_pending_setting_gives_up_after_a_few_runs_and_yields_to_the_user(session):
    state.set_settings_next_run({"lam": 1e-5})
    for _ in range(state.PENDING_RUNS):
        session["lam"] = 1e-3
        state.apply_pending()
        assert session["lam"] == 1e-5
    session["lam"] = 1e-3
    state.apply_pending()
    assert session["lam"] == 1e-3 and state.Keys.PENDING not in session
    state.select_dataset_next_run("bundled:wine")
    state.forget_pending("dataset")  # the user picks a dataset in the sidebar
    state.apply_pending()
    assert session["dataset"] == "synthetic:moons"
