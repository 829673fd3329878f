"""The explorer's session state: settings asked for in one run and applied in the next."""

from __future__ import annotations

import numpy as np
import pytest
import streamlit

from snacks_core.app import state, teaching


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
    session["dataset"] = "bundled:iris"  # the user picks a dataset in the sidebar
    state.forget_pending("dataset")
    state.apply_pending()
    assert session["dataset"] == "bundled:iris"


def test_the_browsers_stale_value_is_not_a_choice(session):
    """The sidebar's callback also fires when the browser sends back the dataset it showed
    before the upload was applied (seen under load at 1024 × 768): the upload stays."""
    state.select_dataset_next_run("upload:0123:ijcnn1.trn")
    state.apply_pending()
    session["dataset"] = "synthetic:moons"  # the browser's old value, with its callback
    state.forget_pending("dataset")
    state.apply_pending()
    assert session["dataset"] == "upload:0123:ijcnn1.trn"


@pytest.mark.parametrize("train, test, expected, absent", [
    # Underfits (train as high as test): richer model, less regularisation.
    (0.071, 0.082, ["Raise **m** to 300", "Lower **λ** (larger C): with the training error"],
     ["Slide **m** down", "Raise **λ**"]),
    # Overfits: more regularisation.
    (0.0, 0.12, ["Raise **λ** (smaller C): the test error is far above"], ["Lower **λ**"]),
    # Neither: the experiments.
    (0.011, 0.033, ["Slide **m** down to 5", "Raise **λ** (smaller C): wider margins"], []),
])
def test_try_this_reads_the_fit(train, test, expected, absent):
    settings = {name: setting.default for name, setting in state.SETTINGS.items()}
    hints = teaching.try_this({**settings, "m": 75, "lam": 2e-5, "n_train": 1400,
                           "train_error": train, "test_error": test})
    for hint in expected:
        assert hint in hints, hints
    for hint in absent:
        assert hint not in hints, hints
    by_C = teaching.try_this({**settings, "reg_by": "C", "m": 75, "lam": 2e-5, "n_train": 1400,
                          "train_error": train, "test_error": test})
    assert "**λ** (" not in by_C and "**C** (" in by_C


@pytest.mark.parametrize("n, d, sparse, expected", [
    (400, 2, False, {"m": 50, "lam": 1e-4, "scaling": "standard"}),
    # ijcnn1's shape: 2√n = 447 landmarks would pause live training (n·m > 2e7).
    (49_990, 22, False, {"m": 300, "lam": 5e-7, "scaling": "standard"}),
    # Two features: at most 100 landmarks.
    (50_000, 2, False, {"m": 100, "lam": 5e-7}),
    # One-hot rows: no scaling.
    (3_000, 123, True, {"m": 75, "lam": 1e-5, "scaling": "none"}),
])
def test_sidebar_defaults_follow_the_data(n, d, sparse, expected):
    import scipy.sparse as sp

    from snacks_core.app.sidebar import defaults_for
    from snacks_core.app.training import LIVE_MAX_ENTRIES
    from snacks_core.datasets import make_dataset

    rng = np.random.default_rng(0)
    X = (sp.random(n, d, density=0.1, random_state=0, format="csr", data_rvs=np.ones)
         if sparse else rng.normal(size=(n, d)))
    values = defaults_for(make_dataset(X, np.arange(n) % 2, "data"), test_size=0.3)
    assert {k: values[k] for k in expected} == expected
    assert values["C"] == 20.0 and values["gamma_scale"] is True
    assert round(0.7 * n) * values["m"] <= LIVE_MAX_ENTRIES


def _ten_class_dataset(n, n_features):
    from sklearn.datasets import make_classification

    from snacks_core.datasets import make_dataset

    X, y = make_classification(n, n_features, n_informative=min(n_features, 20),
                               n_redundant=0, n_classes=10, n_clusters_per_class=1,
                               random_state=3)
    return make_dataset(X, y, "ten")


def test_the_sidebars_default_m_grows_as_a_default_fits_where_it_trains_live():
    """Ten classes beyond a small set: the sidebar's m doubles as a default fit's does
    while its landmarks leave more than 20 % of the kernel unexplained (1,200, off the
    slider's steps, with the line that says why); a kernel they capture keeps the rule's
    300; where 1,200 would not train live, the rule's m on the slider's steps, no line."""
    from snacks_core.app.sidebar import defaults_for
    from snacks_core.app.training import LIVE_MAX_ENTRIES

    grown = defaults_for(_ten_class_dataset(3429, 30), test_size=0.3)
    assert grown["m"] == 1200
    assert grown["m_note"].startswith("m = 1,200: the rule's 300 doubled while its "
                                      "landmarks left more than 20 % of the kernel "
                                      "unexplained (")
    kept = defaults_for(_ten_class_dataset(3429, 4), test_size=0.3)
    assert (kept["m"], kept["m_note"]) == (300, None)
    large = defaults_for(_ten_class_dataset(24_000, 30), test_size=0.3)
    assert large["m_note"] is None and large["m"] == 300
    assert 16_800 * 1200 > LIVE_MAX_ENTRIES
