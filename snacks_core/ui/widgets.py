"""Shared widgets: the sidebar, lessons, the Train gate, error boxes, metrics and export."""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from ..datasets import DownloadError
from ..kernels import resolve_gamma
from ..nystrom import NystromEmbedding
from ..objective import lam_to_C
from . import cached, pipeline
from .export import model_to_npz
from .state import (EPOCH_OPTIONS, GAMMA_OPTIONS, LAM_OPTIONS, M_OPTIONS, N_OPTIONS, SETTINGS,
                    Keys, apply, current)
from .text import HELP, LESSONS, solver_label

# Errors a user can cause (bad data, bad parameters, no network) and that we show in place.
USER_ERRORS = (ValueError, DownloadError, MemoryError)
# Live training pauses above this many embedding entries (n × m, 160 MB in float64) or this
# many training rows for the exact solver (its kernel matrix grows as n²).
LIVE_MAX_ENTRIES = 2 * 10**7
LIVE_MAX_EXACT_ROWS = 5000


def _choice_index(name):
    return list(SETTINGS[name].choices).index(current(name))


def require_entry_point(page_name):
    """Send a run that skipped ``app.py`` through it, then back to ``page_name``.

    With a ``pages/`` folder beside the entry point, a fresh Streamlit server runs its very
    first script in the legacy folder-based multipage mode: when the first URL names a page
    (a shared link to /spectrum), that page file runs alone, without the sidebar, the
    session settings or ``st.navigation``.  ``app.py`` calls ``st.navigation``, which ends
    the legacy mode for the whole server, and then opens the page asked for here.
    """
    if not st.session_state.get(Keys.INITIALIZED):
        st.session_state[Keys.GOTO] = page_name
        st.switch_page("app.py", query_params=st.query_params.to_dict())


def _start_lesson(name):
    lesson = LESSONS[name]
    apply(lesson.settings)
    st.session_state[Keys.LESSON] = name
    st.session_state[Keys.GOTO] = lesson.page


def _dismiss_lesson():
    st.session_state.pop(Keys.LESSON, None)


def lesson_banner():
    """The explanation of the lesson the user started, until dismissed."""
    name = st.session_state.get(Keys.LESSON)
    if name in LESSONS:
        lesson = LESSONS[name]
        with st.container(border=True):
            st.markdown(f"**Lesson · {lesson.title}** — {lesson.text}")
            st.button("Got it", key="dismiss_lesson", on_click=_dismiss_lesson)


def url_problems():
    problems = st.session_state.get(Keys.URL_PROBLEMS)
    if problems:
        st.warning("Some settings in the link were invalid and were replaced by defaults: "
                   + "; ".join(problems))
        st.session_state[Keys.URL_PROBLEMS] = []


def _format_float(value):
    return f"{value:g}"


def sidebar():
    """The shared sidebar: lessons, data, kernel and landmarks, solver."""
    options = cached.dataset_options()
    if current("dataset") not in options:
        st.session_state["dataset"] = SETTINGS["dataset"].default
        st.session_state[Keys.URL_PROBLEMS] = [
            *st.session_state.get(Keys.URL_PROBLEMS, []),
            "the dataset of the link is not available here (uploads are not shared by links)"]
    with st.sidebar:
        with st.expander("Lessons", icon=":material/school:"):
            st.caption("One click sets up a small experiment and says what to look at.")
            for name, lesson in LESSONS.items():
                st.button(lesson.title, key=f"lesson_{name}", on_click=_start_lesson,
                          args=(name,), width="stretch")
        _data_controls(options)
        _kernel_controls()
        _solver_controls()


def _data_controls(options):
    with st.expander("Data", expanded=True, icon=":material/database:"):
        st.selectbox("Dataset", options, key="dataset", format_func=cached.dataset_label,
                     help=HELP["dataset"])
        option = current("dataset")
        if option.startswith("synthetic:"):
            st.select_slider("Samples n", N_OPTIONS, key="n_samples", help=HELP["n_samples"])
            st.slider("Noise", 0.0, 1.0, step=0.05, key="noise", help=HELP["noise"])
        if option == "synthetic:classification":
            st.slider("Features", 2, 100, key="n_features", help=HELP["n_features"])
            st.slider("Positive fraction", 0.05, 0.95, step=0.05, key="positive_fraction",
                      help=HELP["positive_fraction"])
        st.slider("Test fraction", 0.1, 0.5, step=0.05, key="test_size", help=HELP["test_size"])
        st.selectbox("Feature scaling", SETTINGS["scaling"].choices, key="scaling",
                     help=HELP["scaling"])
        two_d = option.startswith("synthetic:") and option != "synthetic:classification"
        if not two_d:
            st.checkbox("Train on a 2-D PCA projection", key="pca2d", help=HELP["pca2d"])


def _kernel_controls():
    with st.expander("Kernel and landmarks", expanded=True, icon=":material/hub:"):
        st.selectbox("Kernel", SETTINGS["kernel"].choices, key="kernel", help=HELP["kernel"])
        kernel = current("kernel")
        if kernel != "linear":
            st.toggle("γ from the data ('scale')", key="gamma_scale", help=HELP["gamma_scale"])
            if current("gamma_scale"):
                gamma = _scale_gamma()
            else:
                st.select_slider("γ (kernel width)", GAMMA_OPTIONS, key="gamma",
                                 format_func=_format_float, help=HELP["gamma"])
                gamma = current("gamma")
            if gamma is not None:
                sigma = f", σ = 1/√(2γ) = {1 / math.sqrt(2 * gamma):.3g}" if kernel == "rbf" else ""
                st.caption(f"γ = {gamma:.3g}{sigma}")
        if kernel == "polynomial":
            left, right = st.columns(2)
            left.number_input("Degree p", 1, 10, step=1, key="degree", help=HELP["degree"])
            right.number_input("c₀", -10.0, 10.0, step=0.5, key="coef0", help=HELP["coef0"])
        st.select_slider("Landmarks m", M_OPTIONS, key="m", help=HELP["m"])
        st.selectbox("Landmark sampling", SETTINGS["sampling"].choices, key="sampling",
                     help=HELP["sampling"])


def _scale_gamma():
    """γ = 1/(d · Var X) on the current training rows (None when the data cannot load)."""
    try:
        return resolve_gamma("scale", cached.load_split(cached.data_request()).X_train)
    except USER_ERRORS:
        return None


def _n_train():
    try:
        return cached.load_split(cached.data_request()).X_train.shape[0]
    except USER_ERRORS:
        return None


def _solver_controls():
    with st.expander("Solver", expanded=True, icon=":material/tune:"):
        st.select_slider("λ (regularization)", LAM_OPTIONS, key="lam",
                         format_func=_format_float, help=HELP["lam"])
        n = _n_train()
        if n:
            st.caption(f"C = 1/(2nλ) = **{lam_to_C(current('lam'), n):.4g}** with n = {n:,} "
                       "training rows")
        st.selectbox("Solver", SETTINGS["solver"].choices, key="solver",
                     format_func=solver_label, help=HELP["solver"])
        st.select_slider("Max epochs", EPOCH_OPTIONS, key="max_epochs", help=HELP["max_epochs"])
        st.selectbox("Class weight", SETTINGS["class_weight"].choices, key="class_weight",
                     help=HELP["class_weight"])
        st.number_input("Seed", 0, 2**31 - 1, step=1, key="seed", help=HELP["seed"])
        st.toggle("Train live on every change", key="live", help=HELP["live"])


def show_error(exc):
    """A readable message in place of a traceback; the app keeps running."""
    st.error(f"**{type(exc).__name__ if not isinstance(exc, ValueError) else 'Problem'}:** "
             f"{exc}", icon=":material/error:")


def load_split_or_stop():
    """The current split, or an error box and the end of this page."""
    request = cached.data_request()
    try:
        return request, cached.load_split(request)
    except USER_ERRORS as exc:
        show_error(exc)
        st.stop()


def _too_large_for_live(split, params, solvers):
    """Why live training should wait for a click on this problem, or None."""
    n = split.X_train.shape[0]
    if "libsvm" in solvers and n > LIVE_MAX_EXACT_ROWS:
        return (f"exact LIBSVM on {n:,} rows builds an n × n kernel and can take minutes")
    if any(s != "libsvm" for s in solvers) and n * params["n_components"] > LIVE_MAX_ENTRIES:
        return (f"the embedding has {n:,} × {params['n_components']:,} entries")
    return None


def training_gate(key, split, params, solvers=None) -> bool:
    """True when results should be shown: live mode on a small enough problem, a click on
    Train, or unchanged settings since the last click (the cached result shows at once)."""
    snapshot = (cached.data_request().key(), repr(sorted(params.items())), key,
                tuple(solvers or ()))
    clicked = st.button("Train", type="primary", key=f"train_{key}", icon=":material/play_arrow:")
    if clicked:
        st.session_state[Keys.TRAINED] = snapshot
    if clicked or st.session_state.get(Keys.TRAINED) == snapshot:
        return True
    if current("live"):
        reason = _too_large_for_live(
            split, params, (params["solver"],) if solvers is None else solvers)
        if reason is None:
            return True
        st.info(f"Live training paused: {reason}. Click **Train** to run it.",
                icon=":material/hourglass_top:")
        return False
    st.info("Settings changed since the last training: click **Train** (or turn on live "
            "training in the sidebar).")
    return False


def train_or_stop(request, split, params):
    """The cached run, with a spinner while it trains; an error box on bad input."""
    try:
        with st.spinner("Training…"):
            return cached.train(request, split, params)
    except USER_ERRORS as exc:
        show_error(exc)
        st.stop()


def _percent(x):
    return f"{100 * x:.1f} %"


def _seconds(x):
    return f"{1000 * x:.0f} ms" if x < 1 else f"{x:.2f} s"


def metrics_row(run, split):
    m = run.metrics
    cols = st.columns(7)
    cols[0].metric("Test error", _percent(m["test_error"]),
                   help="Share of held-out points misclassified.")
    cols[1].metric("Train error", _percent(m["train_error"]),
                   help="Training error far below test error means overfitting.")
    cols[2].metric("F1 (test)", f"{m['f1']:.3f}",
                   help="Harmonic mean of precision and recall of the positive class (macro "
                        "average for multiclass): the score to read on imbalanced data.")
    cols[3].metric("Embedding", _seconds(m["embedding_time"]),
                   help="Landmark selection, K_mm eigendecomposition and Z = K_nm K_mm^{-1/2}.")
    cols[4].metric("Training", _seconds(m["training_time"]), help="Time in the solver.")
    cols[5].metric("Objective F(w)", f"{m['objective']:.4g}",
                   help="(1/n) Σ hinge + λ‖w‖² at the end (mean over one-vs-rest problems).")
    cols[6].metric("Epochs", f"{m['epochs']:.3g}", help=f"Stopped by: {m['stop']}.")
    for note in run.notes:
        st.warning(note, icon=":material/warning:")


def run_facts(run, split):
    """The numbers behind the run in one short list: n, m, λ and C, γ, stopping rule."""
    model = run.model
    m = run.metrics
    n = split.X_train.shape[0]
    gamma = getattr(model.embedding_, "gamma_", None)
    lines = [f"- n = {n:,} training rows, d = {split.n_features} features",
             f"- λ = {model.lam:g}, so C = 1/(2nλ) = {m['C']:.4g}"]
    if isinstance(model.embedding_, NystromEmbedding):
        lines.append(f"- m = {m['n_components']} embedding dimensions "
                     f"({model.sampling} landmarks)")
    else:
        lines.append(f"- kernel expansion on {m['n_components']} training points "
                     "(no Nyström embedding)")
    if gamma is not None and model.kernel != "linear":
        lines.append(f"- γ = {gamma:.3g}")
    lines.append(f"- stopped by: {m['stop']} after {m['epochs']:.3g} epochs")
    st.markdown("\n".join(lines))


def dataset_code(request) -> str:
    """The line of Python that builds the current dataset."""
    kind, name = request.kind, request.name
    if kind == "synthetic":
        extra = ""
        if name == "classification":
            extra = (f", n_features={request.n_features}, "
                     f"positive_fraction={request.positive_fraction}")
        return (f"from snacks_core.datasets import make_synthetic\n"
                f"dataset = make_synthetic({name!r}, {request.n_samples}, noise={request.noise}, "
                f"random_state={request.seed}{extra})")
    if kind == "bundled":
        return f"from snacks_core.datasets import load_bundled\ndataset = load_bundled({name!r})"
    if kind == "sample":
        return ("from snacks_core.datasets import load_file, sample_data_dir\n"
                f"dataset = load_file(sample_data_dir() / {name!r})")
    if kind == "libsvm":
        return f"from snacks_core.datasets import fetch_libsvm\ndataset = fetch_libsvm({name!r})"
    file_name = name.split(":", 1)[-1]
    return f"from snacks_core.datasets import load_file\ndataset = load_file({file_name!r})"


def export_section(request, params, run):
    """Code that reproduces the run and the model as a .npz download."""
    with st.expander("Export: code and model", icon=":material/download:"):
        split_code = (f"test_size={request.test_size}, scaling={request.scaling!r}, "
                      f"random_state={request.seed}, project_2d={request.pca2d}")
        st.caption("Python that reproduces this run with the snacks_core API:")
        st.code(pipeline.code_snippet(dataset_code(request), split_code, params),
                language="python")
        try:
            payload = model_to_npz(run.model)
        except ValueError as exc:
            show_error(exc)
            return
        st.download_button("Download the model (.npz)", payload, file_name="snacks_model.npz",
                           mime="application/octet-stream", icon=":material/save:",
                           help="Plain arrays (weights, landmarks, parameters as JSON): load "
                                "with snacks_core.ui.export.model_from_npz. No pickle.")


def first_problem(history):
    """The rows of a history that belong to the first one-vs-rest problem."""
    rows = history["problem"] == 0
    return {name: values[rows] for name, values in history.items()}


def class_names(split):
    return np.unique(np.concatenate([np.asarray(split.y_train), np.asarray(split.y_test)]))
