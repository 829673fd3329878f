"""Paper: the Snacks paper's Tables III–VII beside the same protocol on the chosen data."""

import pandas as pd
import streamlit as st

from snacks_core.app import cached, lessons, state, training, user_errors
from snacks_core.app.paper_tables import PAPER_SOLVERS, PAPER_TABLES
from snacks_core.app.teaching import CAPTIONS, HELP
from snacks_core.solvers.objective import lam_to_C

st.title("The paper's tables, here")
st.caption("The Snacks paper (Tanji et al.) compares solvers on five datasets in its Tables "
           "III–VII: each solver's training time and test error (F1 for mnist-bin), the "
           "Nyström problem on m landmarks for LibLinear, Pegasos and Snacks, the exact "
           "kernel SVM for ThunderSVM and for the \"optimal\" LibSVM reference. Left: its "
           "published numbers; right: the same solvers on the data in the sidebar, on this "
           "machine.")
lessons.lesson_banner()

st.segmented_control("Paper table", list(PAPER_TABLES), key="paper_table",
                     format_func=lambda name: f"{PAPER_TABLES[name].number} · {name}",
                     help=HELP["paper_table"])
paper = PAPER_TABLES[state.current("paper_table") or state.SETTINGS["paper_table"].default]
request, split = user_errors.load_split_or_stop()
n_train = split.X_train.shape[0]
m = min(paper.m, n_train)
params = {**cached.model_params(), "n_components": m}
if paper.ours is None:
    st.info(f"{paper.dataset} is not among this app's datasets (too large to download here): "
            "the right-hand side runs the protocol on the sidebar's data.",
            icon=":material/info:")
elif request.dataset != paper.ours:
    st.info(f"Table {paper.number} is about {paper.dataset}; the sidebar's data is "
            f"{cached.dataset_label(request.dataset)}. Choose "
            f"**{cached.dataset_label(paper.ours)}** in the sidebar to compare like with like"
            + (" (download it on the Data page first)." if paper.ours.startswith("libsvm:")
               else "."), icon=":material/info:")

runs = training.train_solvers("paper", request, split, params,
                             list(dict.fromkeys(PAPER_SOLVERS.values())))

f1 = paper.metric == "F1-score"
# The paper's column names ("C-err" is its classification error) in the page's words.
paper_metric = {"C-err": "test error", "F1-score": "F1"}[paper.metric]


def ours(solver):
    metrics = runs[solver].metrics
    value = f"{metrics['f1']:.3f}" if f1 else f"{100 * metrics['test_error']:.1f} %"
    return metrics, value


label = runs["snacks"].metrics["f1_label"]
here_metric = ("test error" if not f1 else "F1" if label is None
               else f"F1 of class {label} (the smaller)")
# Six short columns, so that the table fits a 1024 px screen: one solver column (the
# paper's names; the caption says which solver runs ThunderSVM's row here).
rows = []
for name, (time, value) in paper.rows.items():
    metrics, mine = ours(PAPER_SOLVERS[name])
    rows.append({"solver": name, "paper: time": time, f"paper: {paper_metric}": value,
                 "here: training": f"{metrics['training_time']:.3g} s",
                 "here: embedding": ("—" if metrics["n_landmarks"] is None
                                     else f"{metrics['embedding_time']:.3g} s"),
                 f"here: {paper_metric}": mine})
_, optimal = ours("libsvm")
left, right = st.columns(2)
caption = paper.caption if paper.caption.endswith(".") else paper.caption + "."
left.markdown(f"**Paper, Table {paper.number}**: {caption} Optimal (LibSVM on the full "
              f"problem): {paper.optimal}.")
m_note = (f"m = {m} (the paper's)" if m == paper.m
          else f"m = {m} (the paper's {paper.m}, clamped to the {n_train:,} training rows)")
right.markdown(f"**Here**: {cached.dataset_label(request.dataset)}, {n_train:,} training rows, "
               f"{m_note}, λ = {params['lam']:g} (C = {lam_to_C(params['lam'], n_train):.3g}). "
               f"Measured: {here_metric}. The \"optimal\" reference (LIBSVM, exact kernel): "
               f"{optimal}.")
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
st.caption(CAPTIONS["paper"])
