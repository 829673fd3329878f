"""When a page trains: live on every change for problems small enough, else on a click on
Train; the cached runs, one per solver."""

from __future__ import annotations

import time

import streamlit as st

from snacks_core.app import cached, server
from snacks_core.app.state import SETTINGS, Keys, current
from snacks_core.app.teaching import HELP, solver_label
from snacks_core.app.user_errors import stop_on_user_error

# Live training pauses above this many embedding entries (n × m, 160 MB in float64) or this
# many training rows for the exact solver (its kernel matrix grows as n²).
LIVE_MAX_ENTRIES = 2 * 10**7


LIVE_MAX_EXACT_ROWS = 5000


def _too_large_for_live(split, params, solvers):
    """Why live training should wait for a click on this problem, or None."""
    n = split.X_train.shape[0]
    if "libsvm" in solvers and n > LIVE_MAX_EXACT_ROWS:
        return (f"exact LIBSVM on {n:,} rows builds an n × n kernel and can take minutes")
    if any(s != "libsvm" for s in solvers) and n * params["n_components"] > LIVE_MAX_ENTRIES:
        return (f"the embedding has {n:,} × {params['n_components']:,} entries")
    return None


def tuned_for(request):
    """The last Auto-tune's record (its choice, what it tried) when it was made on this
    data, else None."""
    tuned = st.session_state.get(Keys.AUTO_TUNE)
    return tuned if tuned and tuned["data"] == request.key() else None


def tuned_settings_hold(request) -> bool:
    """Whether the sidebar holds the last Auto-tune's choice for this data (its click then
    stands for a click on Train: the chosen model is shown without another)."""
    tuned = tuned_for(request)
    return tuned is not None and all(current(name) == value
                                     for name, value in tuned["values"].items())


def training_gate(key, split, params, solvers=None) -> bool:
    """True when results should be shown: live mode on a small enough problem, a click on
    Train, or unchanged settings since the last click (the cached result shows at once)."""
    snapshot = (cached.data_request().key(), cached.params_key(params), key,
                tuple(solvers or ()))
    reason = None
    if current("live"):
        reason = _too_large_for_live(
            split, params, (params["solver"],) if solvers is None else solvers)
        if reason is None:
            return True
    # The Train button exists only when a click is needed: live training off or paused.
    clicked = st.button("Train", type="primary", key=f"train_{key}", icon=":material/play_arrow:")
    if clicked:
        st.session_state[Keys.TRAINED] = snapshot
    if clicked or st.session_state.get(Keys.TRAINED) == snapshot:
        return True
    if reason is not None:
        st.info(f"Live training paused: {reason}. Click **Train** to run it.",
                icon=":material/hourglass_top:")
    else:
        st.info("Settings changed since the last training: click **Train** (or turn on live "
                "training in the sidebar).")
    return False


def train_or_stop(request, split, params):
    """The cached run, with a spinner while it trains; an error box on bad input.  A heavy
    fit that finds the server's slots taken waits in line first, its place shown."""
    with stop_on_user_error():
        try:
            with st.spinner("Training…"):
                return cached.train(request, split, params)
        except server.SlotBusy:
            with server.heavy_run("This training"), st.spinner("Training…"):
                return cached.train(request, split, params)


def solver_multiselect(setting, container=st):
    """The multiselect of the solvers of a page's ``setting``; the solvers chosen."""
    container.multiselect("Solvers", SETTINGS[setting].choices, key=setting,
                          format_func=solver_label, help=HELP[setting])
    return current(setting)


def train_solvers(page, request, split, params, solvers):
    """One run per solver on the same settings, once the Train gate lets them through; the
    page stops here when no solver is chosen or training waits for a click."""
    if not solvers:
        st.info("Choose at least one solver.", icon=":material/info:")
        st.stop()
    if not training_gate(page, split, params, solvers):
        st.stop()
    return {solver: train_or_stop(request, split, {**params, "solver": solver})
            for solver in solvers}


def from_cache(run) -> bool:
    """Whether a run was trained before this script run (its times are not from now)."""
    return run.created < st.session_state.get(Keys.RUN_STARTED, time.time())
