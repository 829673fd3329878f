"""Solver comparison: the paper's Tables III–VII for the chosen data, with a bar chart."""

import pandas as pd
import streamlit as st

from snacks_core.app import cached, explorer, lessons, training, user_errors
from snacks_core.app.figures.solvers import solver_bar_figure
from snacks_core.app.teaching import CAPTIONS, HELP, solver_label

st.title("Solver comparison")
st.caption("Every solver on the same data, kernel, landmarks and λ: times, errors, F1 and the "
           "objective reached. LIBSVM solves the exact kernel SVM, without Nyström: the "
           "\"optimal\" row the others are measured against.")
lessons.lesson_banner()

request, split = user_errors.load_split_or_stop()
params = cached.model_params()
solvers = training.solver_multiselect("cmp_solvers")
runs = training.train_solvers("solvers", request, split, params, solvers)
shared = explorer.shared_embedding_time(runs)
rows = [explorer.solver_row(solver_label(solver), run.metrics, shared)
        for solver, run in runs.items()]
table = pd.DataFrame(rows)
# Solvers without epochs (LIBSVM, ADMM) show a dash rather than "None".
table["epochs"] = [f"{e:.3g}" if pd.notna(e) else "—" for e in table["epochs"]]
notes = []
if shared is not None:
    notes.append(f"The embedded solvers share one Nyström embedding (same landmarks, same Z): "
                 f"it takes {shared:.4f} s and is shown once for all of them.")
if any(training.from_cache(run) for run in runs.values()):
    notes.append("Some rows come from the cache: their times were measured when those "
                 "settings were first trained.")
majority = next(iter(runs.values())).metrics["majority_error"]
notes.append(f"Always predicting the majority class gives a test error of {majority:.1%}.")
one_class = [solver_label(s) for s, run in runs.items()
             if run.metrics["predicted_classes"] == 1]
if one_class:
    st.warning(f"{', '.join(one_class)} predict{'s' if len(one_class) == 1 else ''} one class "
               "for every test point: an error equal to the majority rate, nothing learned. "
               "Lower λ or change γ.", icon=":material/warning:")
st.caption(" ".join(notes))
# Two narrower tables rather than one of ten columns: on a 1024 px screen a single one
# scrolls sideways and hides F1 and the objective.
times = {"embedding time (s)": st.column_config.NumberColumn("embedding (s)", format="%.4f"),
         "training time (s)": st.column_config.NumberColumn("training (s)", format="%.4f")}
st.dataframe(table[explorer.RESULT_COLUMNS], hide_index=True, width="stretch", column_config={
    **times,
    "train error": st.column_config.NumberColumn(format="percent"),
    "test error": st.column_config.NumberColumn(format="percent"),
    "F1": st.column_config.NumberColumn(format="%.3f", help=HELP["f1"]),
    "objective": st.column_config.NumberColumn(format="%.5f", help=HELP["objective"]),
})
st.dataframe(table[explorer.STOP_COLUMNS], hide_index=True, width="stretch",
             column_config=times)
chart, notes = st.columns([3, 1], gap="large")
chart.plotly_chart(solver_bar_figure(rows, majority_error=majority), width="stretch",
                   key="solver_bars")
with notes:
    st.caption(CAPTIONS["solvers"])
    st.download_button("Download CSV", table.to_csv(index=False), file_name="solvers.csv",
                       mime="text/csv", icon=":material/table:")
