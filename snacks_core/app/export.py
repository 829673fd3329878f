"""The Playground's export: code that reproduces the run, and the fitted pipeline as a
.npz download."""

from __future__ import annotations

import streamlit as st

from snacks_core import persistence
from snacks_core.app import cached, snippets
from snacks_core.app.state import Keys
from snacks_core.app.user_errors import USER_ERRORS, show_error


def export_section(request, split, params, run):
    """Code that reproduces the run and the whole fitted pipeline (scaling included) as a
    .npz download, or why this model cannot be saved; built only while the expander is
    open: the code's highlighter is the largest script a first visit would load after
    the figures' (BENCHMARKS.md, 'First picture')."""
    with st.expander("Export: code and model", icon=":material/download:", key=Keys.EXPORT,
                     on_change="rerun") as box:
        if not box.open:
            return
        reason = persistence.unsaved_reason(run.model)
        try:
            dataset = cached.load_dataset(request)
            code = snippets.run_code(request, dataset, params, save_model=reason is None,
                                     test_file=cached.upload_test_file(request))
        except USER_ERRORS as exc:
            show_error(exc)
            return
        if reason is None:
            st.caption("Python that reproduces this run with the snacks_core API and saves the "
                       "model with the split's scaling, so that `pipeline` predicts on rows as "
                       "they are in the file:")
        else:
            st.caption("Python that reproduces this run with the snacks_core API:")
        st.code(code, language="python")
        st.download_button("Download the code (.py)", code, file_name="snacks_run.py",
                           mime="text/x-python", icon=":material/code:", key="download_code",
                           help="The code above as a file, to run with `python snacks_run.py` "
                                "beside the data.")
        if reason is not None:
            st.info(f"**No .npz file for this model.** {reason}", icon=":material/info:")
            return
        try:
            payload = persistence.model_to_npz(run.model, split.preprocessing)
        except ValueError as exc:
            show_error(exc)
            return
        st.download_button("Download the model (.npz)", payload, file_name="snacks_model.npz",
                           mime="application/octet-stream", icon=":material/save:",
                           key="download_model",
                           help="Plain arrays (weights, landmarks, the split's scaling, "
                                "parameters as JSON), no pickle: "
                                "snacks_core.persistence.pipeline_from_npz loads it as a "
                                "pipeline that predicts on raw rows.")
