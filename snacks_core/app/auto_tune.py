"""The Playground's Auto-tune: a quick cross-validated search
(:func:`snacks_core.app.explorer.auto_tune`) whose best setting becomes the sidebar's and is
trained and shown at once, and what it tried."""

from __future__ import annotations

import time

import streamlit as st

from snacks_core.app import explorer, server
from snacks_core.app.run_view import percent, test_error_uncertainty
from snacks_core.app.state import C_OPTIONS, Keys, current, nearest_option, set_settings_next_run
from snacks_core.app.teaching import HELP
from snacks_core.app.training import tuned_for, tuned_settings_hold
from snacks_core.app.user_errors import stop_on_user_error
from snacks_core.model.search import refit_m_note

SYMBOLS = {"gamma": "γ", "lam": "λ", "C": "C", "m": "m"}


def auto_tune_section(request, split, params):
    """The Playground's Auto-tune button, its progress while it runs, and what it chose.

    Its choice goes into the sidebar (applied before the next run's widgets) and the next
    run trains it without a click on Train (:func:`tuned_settings_hold`)."""
    if st.button("Auto-tune", icon=":material/tune:", key="auto_tune",
                 help=HELP["auto_tune"]):
        _run(request, split, params)
    tuned = tuned_for(request)
    if tuned is None:
        return
    values = tuned["values"]
    chosen = ", ".join(f"{SYMBOLS[name]} = {values[name]:g}" for name in SYMBOLS
                       if name in values)
    n_train = split.X_train.shape[0]
    rows = (f"all {n_train:,} training rows" if tuned["n_rows"] >= n_train else
            f"a stratified {tuned['n_rows']:,} of the {n_train:,} training rows")
    st.caption(f"Auto-tune scored {tuned['fits']} fits by {explorer.AUTO_TUNE_FOLDS}-fold "
               f"cross-validation on {rows} in {tuned['seconds']:.1f} s and chose {chosen} "
               f"(CV error {percent(tuned['cv_error'])}"
               + (f" at m = {tuned['scored_m']:,})" if grown(tuned) else ")")
               + ("; the sidebar holds them and the model above is theirs, trained on every "
                  "training row." if tuned_settings_hold(request) else
                  "; the sidebar has changed since."))


def grown(tuned) -> str:
    """Why Auto-tune's choice takes more landmarks than it was scored at, or ''."""
    return refit_m_note(tuned["scored_m"], tuned["values"]["m"], tuned.get("top_unexplained"))


def _run(request, split, params):
    """Run the search with its progress shown, keep what it found, and ask for its choice
    in the sidebar of the next run."""
    with (server.heavy_run("Auto-tune"),
          st.status("Auto-tune: cross-validating on the training rows…",
                    expanded=True) as status):
        line, start = st.empty(), time.perf_counter()

        def progress(fits, rows):
            line.caption(f"{fits} fits scored · {explorer.AUTO_TUNE_FOLDS}-fold CV on "
                         f"{rows:,} rows · {time.perf_counter() - start:.0f} s")

        with stop_on_user_error():
            result = explorer.auto_tune(split, params, by_C=current("reg_by") == "C",
                                        progress=progress)
        status.update(label=f"Auto-tune done in {result['seconds']:.1f} s: training its choice "
                            "on every training row…", state="complete")
    chosen = result["params"]
    values = {"lam": chosen["lam"], "m": int(chosen["n_components"])}
    if current("reg_by") == "C":
        # λ = 1/(2nC) for a C the slider offers: that C, exactly.
        values = {"C": nearest_option(C_OPTIONS, result["C"]), "m": values["m"]}
    if "gamma" in chosen:
        values.update(gamma_scale=False, gamma=chosen["gamma"])
    if explorer.grid_solver(params) != params["solver"]:
        values["solver"] = explorer.grid_solver(params)
    st.session_state[Keys.AUTO_TUNE] = {
        "data": request.key(), "values": values, "cv_error": result["cv_error"],
        "results": result["results"], "ladder": result["ladder"],
        "gamma_step": result["gamma_step"], "scored_m": result["scored_m"],
        "top_unexplained": result["top_unexplained"], "n_rows": result["n_rows"],
        "fits": result["fits"], "seconds": result["seconds"]}
    set_settings_next_run(values)
    st.rerun()


def tried_table(request, split, run):
    """What Auto-tune tried, across the page (every column readable), with the chosen
    setting's CV error beside its test error and that error's uncertainty."""
    tuned = tuned_for(request)
    if tuned is None:
        return
    with st.expander("What Auto-tune tried", icon=":material/tune:"):
        results = tuned["results"]
        n_test = split.X_test.shape[0]
        if tuned_settings_hold(request):
            st.markdown(
                f"Chosen: CV error **{percent(tuned['cv_error'])}** on the training rows"
                + (f" at m = {tuned['scored_m']:,}" if grown(tuned) else "") + "; "
                f"test error **{test_error_uncertainty(run.metrics['test_error'], n_test)}**, "
                "measured once. A gap within about two standard errors is the test set's own "
                "noise; a larger one, the optimism of choosing the best of many settings.")
        shown = results.assign(cv_error=(100 * results["cv_error"]).round(2),
                               C=results["C"].map(lambda C: float(f"{C:.3g}")),
                               lam=results["lam"].map(lambda lam: float(f"{lam:.3g}")))
        shown = shown.assign(chosen=shown["chosen"].map({True: "★", False: ""}))
        shown = shown.sort_values(["chosen", "rows", "cv_error"], ascending=[False, False, True])
        columns = {"chosen": "chosen", "gamma": "γ", "C": "C", "lam": "λ", "m": "m",
                   "rows": "rows", "cv_error": "CV error %"}
        if shown["gamma"].isna().all():
            del columns["gamma"]
        st.dataframe(shown[list(columns)].rename(columns=columns), hide_index=True,
                     height=280, width="stretch")
        halving = ("Successive halving: every (γ, C) was scored on a subsample of the "
                   "searched rows, a third of them (each γ's best first) on three times as "
                   "many, until all"
                   if results["rows"].nunique() > 1 else
                   "Every (γ, C) was scored on all the searched rows")
        scored_m = ", ".join(f"{m:,}" for m in sorted(results["m"].unique()))
        ladder = tuned["ladder"]
        at = (f"γ = {ladder['gamma']:.4g}, C = {ladder['C']:g} (the largest γ within a "
              "standard error of the best)" if "gamma" in ladder else f"C = {ladder['C']:g}")
        step = ""
        if tuned.get("gamma_step"):
            gamma, m, _ = tuned["gamma_step"]
            step = (f", and at m = {m:,} also γ = {gamma:.4g} (a larger m draws a larger "
                    "γ's kernel better)")
        st.caption(
            f"{halving}; then, at {at}, m as set and 4× (every row where a fold trains on fewer), "
            f"each only while the m before it lowered the CV error (m scored: {scored_m})"
            f"{step}; the lowest CV error is chosen. "
            + (f"{grown(tuned)[0].upper()}{grown(tuned)[1:]}. " if grown(tuned) else "")
            + "C = 1/(2nλ) carries a choice from the rows "
            "searched to every training row (λ is shown for all of them, as the sidebar "
            "gets it). m counts the landmarks asked for: the model's facts count the "
            "distinct rows drawn.")
