"""The Playground's Auto-tune: a quick cross-validated search
(:func:`snacks_core.ui.explorer.auto_tune`) whose best setting becomes the sidebar's."""

from __future__ import annotations

import streamlit as st

from ..objective import lam_to_C
from . import explorer, server
from .run_view import percent
from .state import (
    C_OPTIONS,
    Keys,
    current,
    nearest_option,
    set_settings_next_run,
)
from .teaching import HELP
from .user_errors import stop_on_user_error


def auto_tune_section(request, split, params):
    """The Playground's Auto-tune: a quick cross-validated search on the training rows
    whose best setting becomes the sidebar's (applied before the next run's widgets), and
    what it tried."""
    if st.button("Auto-tune", icon=":material/tune:", key="auto_tune",
                 help=HELP["auto_tune"]):
        with (server.heavy_run("Auto-tune"),
              st.status("Auto-tune: cross-validating on the training rows…") as status):
            with stop_on_user_error():
                result = explorer.auto_tune(split, params, by_C=current("reg_by") == "C")
            status.update(label=f"Auto-tune done in {result['seconds']:.1f} s",
                          state="complete")
        chosen = result["params"]
        values = {"lam": chosen["lam"], "m": int(chosen["n_components"])}
        if current("reg_by") == "C":
            # λ = 1/(2nC) for a C the slider offers: that C, exactly.
            C = lam_to_C(chosen["lam"], split.X_train.shape[0])
            values = {"C": nearest_option(C_OPTIONS, C),
                      "m": values["m"]}
        if "gamma" in chosen:
            values.update(gamma_scale=False, gamma=chosen["gamma"])
        if explorer.grid_solver(params) != params["solver"]:
            values["solver"] = explorer.grid_solver(params)
        st.session_state[Keys.AUTO_TUNE] = {"data": request.key(), "values": values,
                                            "cv_error": result["cv_error"],
                                            "results": result["results"]}
        set_settings_next_run(values)
        st.rerun()
    tuned = st.session_state.get(Keys.AUTO_TUNE)
    if not tuned or tuned["data"] != request.key():
        return
    values, results = tuned["values"], tuned["results"]
    now = all(current(name) == value for name, value in values.items())
    symbols = {"gamma": "γ", "lam": "λ", "C": "C", "m": "m"}
    chosen = ", ".join(f"{symbols[name]} = {values[name]:g}" for name in symbols
                       if name in values)
    st.caption(f"Auto-tune tried {len(results)} settings by {explorer.AUTO_TUNE_FOLDS}-fold "
               f"cross-validation on the training rows and chose {chosen} (CV error "
               f"{percent(tuned['cv_error'])})"
               + ("; the sidebar holds them, and the test error above is theirs, measured "
                  "once." if now else "; the sidebar has changed since."))
    with st.expander("What Auto-tune tried"):
        n_train = split.X_train.shape[0]
        shown = results.assign(
            cv_error=(100 * (1 - results["mean_test_score"])).round(2),
            C=[float(f"{lam_to_C(lam, n_train):.3g}") for lam in results["param_lam"]])
        shown = shown.sort_values(["n_resources", "cv_error"], ascending=[False, True])
        columns = {"param_gamma": "γ", "param_lam": "λ", "C": "C", "param_n_components": "m",
                   "cv_error": "CV error %", "n_resources": "rows"}
        if shown["n_resources"].nunique() == 1:
            del columns["n_resources"]
        st.dataframe(shown[[c for c in columns if c in shown]].rename(columns=columns),
                     hide_index=True, height=240)
        if "n_resources" in columns:
            st.caption("Successive halving: every setting was scored on a subsample of the "
                       "training rows, the best third on three times as many, until all.")
