"""Data: see the current dataset, upload CSV or LIBSVM files, fetch public LIBSVM datasets."""

from dataclasses import replace

import numpy as np
import pandas as pd
import scipy.sparse as sp
import streamlit as st

from snacks_core import datasets
from snacks_core.app import cached, explorer, layout, lessons, run_view, state, user_errors
from snacks_core.app.figures.data import class_balance_figure, data_scatter_figure
from snacks_core.app.state import Keys
from snacks_core.app.teaching import HELP

st.title("Data")
st.caption("Choose data in the sidebar, or bring your own below. Every file is parsed as text "
           "by our own readers (never unpickled), and a bad line is reported with its number.")
lessons.lesson_banner()


def use_upload(name, raw, label, test=None):
    """Parse the upload (with its test file, when one is given) and make it the dataset of
    the next run (a button's callback: an error is kept to be shown by the page)."""
    try:
        state.select_dataset_next_run(cached.parse_upload(name, raw, label, test))
    except user_errors.USER_ERRORS as exc:
        st.session_state[Keys.UPLOAD_ERROR] = exc


upload_tab, public_tab, samples_tab = st.tabs(["Upload a file", "LIBSVM public datasets",
                                               "Sample data"])
with upload_tab:
    st.html(f"<style>{layout.upload_cap_css(explorer.MAX_UPLOAD_MB)}</style>")
    # Any name: LIBSVM files end in .t, .trn, .scale or nothing; the content decides.
    uploaded = st.file_uploader("CSV (a label column and numeric features) or LIBSVM/svmlight",
                                key=Keys.UPLOAD_FILE, help=HELP["upload"])
    test_file = st.file_uploader(
        "Test file (optional): the same format, e.g. `a9a.t` beside `a9a`",
        key=Keys.UPLOAD_TEST,
        help="LIBSVM sets come as pairs (`x` and `x.t`, `.trn` and `.tst`) and publish their "
             "errors on the test file. Its rows replace the random split on every page; it "
             "has the same caps as the training file.")
    too_large = [problem for file in (uploaded, test_file) if file is not None
                 if (problem := explorer.upload_size_problem(file.name, file.size))]
    for problem in too_large:
        st.error(problem, icon=":material/error:")
    if too_large:
        pass
    elif uploaded is not None:
        raw = uploaded.getvalue()
        test = None if test_file is None else (test_file.name, test_file.getvalue())
        label = None
        try:
            kind = cached.upload_format(uploaded.name, raw)
            st.caption(f"Read as **{'CSV' if kind == 'csv' else 'LIBSVM'}** (detected from "
                       "the content)." + (
                           f" Its test rows: **{test_file.name}**, read with the training "
                           "file's features, index base and scaling, instead of a random "
                           "split." if test else ""))
            if kind == "csv":
                columns = cached.csv_columns(raw)
                label = st.selectbox("Label column", columns, index=len(columns) - 1,
                                     key=f"{Keys.UPLOAD_LABEL}_{datasets.fingerprint(raw)}",
                                     help=HELP["upload_label"])
            # A callback, not `if st.button(...)`: it runs before whichever page the next
            # run shows, so a page change right after the click keeps the file.
            st.button("Use these files" if test else "Use this file", type="primary",
                      key="use_upload", icon=":material/upload:", on_click=use_upload,
                      args=(uploaded.name, raw, label, test))
        except user_errors.USER_ERRORS as exc:
            user_errors.show_error(exc)
    elif test_file is not None:
        st.caption("Add the training file too: the test file is read with its features.")
    failed = st.session_state.pop(Keys.UPLOAD_ERROR, None)
    if failed is not None:
        user_errors.show_error(failed)

with public_tab:
    st.caption("Binary datasets of the LIBSVM collection, downloaded once into a local cache "
               f"({datasets.libsvm_cache_dir()}); downloaded ones appear in the sidebar's "
               "dataset list.")
    names = list(datasets.LIBSVM_DATASETS)
    name = st.selectbox("Dataset", names, key=Keys.LIBSVM_NAME,
                        format_func=lambda n: f"{n} — {datasets.LIBSVM_DATASETS[n].about}")
    if st.button("Download and use", key="download_libsvm", icon=":material/cloud_download:"):
        try:
            with st.spinner(f"Downloading {name}…"):
                option = cached.download_libsvm(name)
            state.select_dataset_next_run(option)
            st.rerun()
        except user_errors.USER_ERRORS as exc:
            user_errors.show_error(exc)

with samples_tab:
    files = datasets.sample_files()
    st.markdown("Small files the project generates itself (`sample_data/`, rebuilt by "
                "`python sample_data/make_sample_data.py`): "
                + ", ".join(f"`{f}`" for f in files) + ". They are in the sidebar's list.")

st.divider()
request, split = user_errors.load_split_or_stop()
dataset = cached.load_dataset(request)
st.subheader(f"{cached.dataset_label(request.dataset)}")
if dataset.description:
    st.caption(dataset.description)
if test_name := cached.upload_test_file(request):
    st.caption(f"Test rows from **{test_name}** (the sidebar's test fraction does not apply): "
               "every page measures its test error on them.")
a, b, c, d = st.columns(4)
a.metric("Training rows", f"{split.X_train.shape[0]:,}")
b.metric("Test rows", f"{split.X_test.shape[0]:,}",
         help=f"The test file {test_name}." if test_name else
         "The dataset's own test file." if dataset.X_test is not None else
         f"{request.test_size:.0%} held out, stratified by class.")
c.metric("Features", f"{dataset.n_features:,}")
if sp.issparse(dataset.X):
    density = dataset.X.nnz / (dataset.X.shape[0] * dataset.X.shape[1])
    d.metric("Sparse: non-zeros", f"{density:.1%}", help="Share of non-zero entries (CSR).")
else:
    d.metric("Classes", f"{len(dataset.classes)}")

left, right = st.columns([2, 3])
with left:
    st.markdown("**Class balance**")
    counts = [dict(zip(*np.unique(y, return_counts=True), strict=True))
              for y in (split.y_train, split.y_test)]
    st.plotly_chart(class_balance_figure(*counts), width="stretch", key="balance")
    smallest = min(counts[0].values()) / sum(counts[0].values())
    if smallest < 0.2:
        st.caption(f"The smallest class is {smallest:.0%} of the training rows: read F1 rather "
                   "than the error, and try class weight 'balanced'.")
with right:
    if split.n_features == 2:
        shown, title = split, split.projection or "Training points"
    else:
        shown = cached.load_split(replace(request, pca2d=True))
        title = f"Preview: {shown.projection}"
    st.markdown(f"**{title}**")
    st.plotly_chart(data_scatter_figure(
        shown.X_train, shown.y_train, classes=run_view.class_names(shown),
        axis_titles=shown.feature_names[:2]), width="stretch", key="scatter")

# Only the cells shown are built: a sparse file may have millions of columns.
SHOWN_ROWS, SHOWN_COLUMNS = 50, 30
n_columns = min(split.n_features, SHOWN_COLUMNS)
title = "First rows (after scaling)" if n_columns == split.n_features else (
    f"First rows and the first {n_columns} of {split.n_features:,} columns (after scaling)")
with st.expander(title):
    head = split.X_train[:SHOWN_ROWS, :n_columns]
    head = head.toarray() if sp.issparse(head) else np.asarray(head)
    frame = pd.DataFrame(head, columns=list(split.feature_names[:n_columns]))
    frame.insert(0, "label", split.y_train[:SHOWN_ROWS])
    st.dataframe(frame, hide_index=True, width="stretch")
