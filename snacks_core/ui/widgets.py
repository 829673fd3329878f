"""Shared widgets: the sidebar, lessons, the Train gate, solver choice, error boxes, metrics,
the decision boundary or margins of a run, export and the robustness heatmap's clicked-cell
view."""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import numpy as np
import streamlit as st

from .. import analysis, defaults, figures, persistence, snippets
from ..datasets import DownloadError
from ..datasets.drawn import decode_points
from ..kernels import resolve_gamma
from ..metrics import error_rate
from ..nystrom import NystromEmbedding
from ..objective import C_to_lam, lam_to_C
from ..sweeps import GRID_AXIS_SYMBOLS, cv_splits
from . import cached, server
from .state import (
    C_OPTIONS,
    EPOCH_OPTIONS,
    GAMMA_OPTIONS,
    LAM_OPTIONS,
    M_OPTIONS,
    N_OPTIONS,
    REGULARIZER_LABELS,
    REGULARIZERS,
    SETTINGS,
    Keys,
    apply,
    current,
    data_defaults_state,
    forget_pending,
    lesson_values,
    nearest_option,
    set_settings_next_run,
)
from .text import HELP, LESSONS, STOP_REASON_WORDS, solver_label, try_this

# Errors a user can cause (bad data, bad parameters, no network) and that we show in place.
USER_ERRORS = (ValueError, DownloadError, MemoryError, OSError)
# Live training pauses above this many embedding entries (n × m, 160 MB in float64) or this
# many training rows for the exact solver (its kernel matrix grows as n²).
LIVE_MAX_ENTRIES = 2 * 10**7
LIVE_MAX_EXACT_ROWS = 5000


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
    apply(lesson_values(lesson.settings))
    # The lesson's values stand: none of them is automatic.
    st.session_state[Keys.DATA_DEFAULTS] = {"rows": None, "auto": {}}
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
        asked = current("dataset")
        st.session_state["dataset"] = SETTINGS["dataset"].default
        st.session_state[Keys.URL_PROBLEMS] = [
            *st.session_state.get(Keys.URL_PROBLEMS, []), unavailable_dataset(asked, options)]
    data_aware_defaults()
    with st.sidebar:
        with st.expander("Lessons", icon=":material/school:"):
            st.caption("One click sets up a small experiment and says what to look at.")
            for name, lesson in LESSONS.items():
                st.button(lesson.title, key=f"lesson_{name}", on_click=_start_lesson,
                          args=(name,), width="stretch")
        _data_controls(options)
        _kernel_controls()
        _solver_controls()


def unavailable_dataset(option, options) -> str:
    """Why a dataset named in a link cannot be shown, and what to do instead."""
    kind, _, name = str(option).partition(":")
    if kind == "upload":
        return (f"dataset={option!r}: uploads are not shared by links; upload the file again "
                "on the Data page")
    if kind == "libsvm":
        return (f"dataset={option!r}: this LIBSVM dataset is not downloaded on this server; "
                "fetch it on the Data page")
    same_kind = [o.split(":", 1)[1] for o in options if o.startswith(f"{kind}:")]
    if same_kind:
        return (f"dataset={option!r}: no {kind} dataset is called {name!r}; choose one of "
                + ", ".join(same_kind))
    return (f"dataset={option!r}: unknown dataset; write it as kind:name with kind one of "
            "synthetic, bundled, sample, libsvm, drawn")


def data_aware_defaults():
    """Settings that learn on the data shown (:func:`snacks_core.defaults.data_aware_defaults`): the
    scaling, λ (or C) and m, with γ by the 'scale' rule.

    A new dataset gets them all.  When the same dataset changes size (its n or its test
    fraction), only the settings that still hold their automatic values follow; one the
    user, a link or a lesson set stays as it is.
    """
    option = current("dataset")
    stored = st.session_state.get(Keys.DATA_DEFAULTS) or data_defaults_state()
    size = (current("n_samples") if option.startswith("synthetic:") else
            len(decode_points(current("points"))) if option.startswith("drawn:") else None)
    rows = (option, size, current("test_size"))
    if stored["rows"] == rows:
        return
    try:
        dataset = cached.load_dataset(cached.data_request())
    except USER_ERRORS:
        return
    values = defaults_for(dataset, current("test_size"))
    if stored["rows"] is None or stored["rows"][0] == option:
        values = {name: value for name, value in values.items()
                  if name in stored["auto"] and current(name) == stored["auto"][name]}
    apply(values)
    st.session_state[Keys.DATA_DEFAULTS] = {"rows": rows, "auto": values}


def defaults_for(dataset, test_size) -> dict:
    """The settings of :func:`data_aware_defaults` for a dataset, on the sidebar's values:
    λ rounded to the slider's steps (C = 25 is offered as 20), m down to the slider's
    steps and, from about 40,000 training rows, to what trains live (n·m ≤
    LIVE_MAX_ENTRIES, at least 50): the first picture comes without a click, and m can
    be raised from there."""
    X = dataset.X
    n_train = X.shape[0] if dataset.X_test is not None else round(X.shape[0] * (1 - test_size))
    learned = defaults.data_aware_defaults(X, n_train)
    lam, m = learned["lam"], learned["n_components"]
    if m >= min(M_OPTIONS):
        live = max(defaults.DEFAULT_M_RANGE[0], LIVE_MAX_ENTRIES // max(n_train, 1))
        m = max(v for v in M_OPTIONS if v <= min(m, live))
    return {"scaling": learned["scaling"], "gamma_scale": True,
            "lam": nearest_option(LAM_OPTIONS, lam),
            "C": nearest_option(C_OPTIONS, lam_to_C(lam, n_train)),
            "m": int(m)}


def _data_controls(options):
    with st.expander("Data", expanded=True, icon=":material/database:"):
        st.selectbox("Dataset", options, key="dataset", format_func=cached.dataset_label,
                     help=HELP["dataset"], on_change=forget_pending, args=("dataset",))
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
        two_d = (option.startswith("synthetic:") and option != "synthetic:classification"
                 or option == cached.DRAWN_OPTION)
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
        _landmark_slider()
        st.selectbox("Landmark sampling", SETTINGS["sampling"].choices, key="sampling",
                     help=HELP["sampling"])


def m_choices(n_train, m):
    """The slider's values of m: M_OPTIONS up to the training rows, n itself, and the
    current m (a link may ask for any m)."""
    values = {v for v in M_OPTIONS if n_train is None or v <= n_train}
    if n_train is not None:
        values.add(int(n_train))
    values.add(int(m))
    return sorted(values)


def _landmark_slider():
    """m, clamped to the training rows; disabled for the solvers that use no landmarks."""
    n = _n_train()
    if n is not None and current("m") > n:
        st.session_state["m"] = int(n)
    solver = current("solver")
    unused = {"libsvm": "LIBSVM solves the exact kernel SVM: it uses no landmarks.",
              "admm": "ADMM works on an HSS compression of the whole kernel matrix: it uses "
                      "no landmarks."}.get(solver)
    st.select_slider("Landmarks m", m_choices(n, current("m")), key="m", help=HELP["m"],
                     disabled=unused is not None)
    if unused:
        st.caption(unused)
    elif n is not None and current("m") == n:
        st.caption(f"m = n: every one of the {n:,} training rows is a landmark.")


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


def _switch_regularizer():
    """Carry the regularisation over to the other slider (the nearest of its values)."""
    n = _n_train()
    if n is None:
        return
    if current("reg_by") == "C":
        C = lam_to_C(current("lam"), n)
        st.session_state["C"] = nearest_option(C_OPTIONS, C)
    else:
        lam = C_to_lam(current("C"), n)
        st.session_state["lam"] = nearest_option(LAM_OPTIONS, lam)


def _automatic(name) -> bool:
    """Whether a setting holds the value the data-aware defaults gave it."""
    auto = (st.session_state.get(Keys.DATA_DEFAULTS) or {}).get("auto", {})
    return name in auto and current(name) == auto[name]


def _solver_controls():
    with st.expander("Solver", expanded=True, icon=":material/tune:"):
        st.segmented_control("Regularize with", REGULARIZERS, key="reg_by",
                             format_func=REGULARIZER_LABELS.get, on_change=_switch_regularizer,
                             help=HELP["reg_by"])
        n = _n_train()
        if current("reg_by") == "C":
            st.select_slider("C (weight of the hinge terms)", C_OPTIONS, key="C",
                             format_func=_format_float, help=HELP["C"])
            if n:
                st.caption(f"λ = 1/(2nC) = **{C_to_lam(current('C'), n):.3g}** with n = {n:,} "
                           "training rows" + (": C ≈ 25, the default for any data"
                                              * _automatic("C")))
        else:
            st.select_slider("λ (regularization)", LAM_OPTIONS, key="lam",
                             format_func=_format_float, help=HELP["lam"])
            if n:
                st.caption(f"C = 1/(2nλ) = **{lam_to_C(current('lam'), n):.4g}** with n = "
                           f"{n:,} training rows" + ("; λ ≈ 0.02/n, the default for this data"
                                                     * _automatic("lam")))
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


@contextmanager
def stop_on_user_error():
    """Run the block; on an error the user caused, show it in place and end the page there."""
    try:
        yield
    except USER_ERRORS as exc:
        show_error(exc)
        st.stop()


def load_split_or_stop():
    """The current split, or an error box and the end of this page."""
    request = cached.data_request()
    with stop_on_user_error():
        return request, cached.load_split(request)


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


def _percent(x):
    return f"{100 * x:.1f} %"


def _seconds(x):
    return f"{1000 * x:.0f} ms" if x < 1 else f"{x:.2f} s"


def from_cache(run) -> bool:
    """Whether a run was trained before this script run (its times are not from now)."""
    return run.created < st.session_state.get(Keys.RUN_STARTED, time.time())


CACHE_HELP = (" 'from cache': these settings were trained before and the time is the one "
              "measured then.")


# A test error closer than this to the majority class's is worth a warning.
MAJORITY_MARGIN = 0.01


def _less_regularization() -> str:
    """The advice to regularise less, in the sidebar's terms."""
    return "raise C" if current("reg_by") == "C" else "lower λ"


def metrics_row(run, split):
    """Errors beside the majority-class baseline, F1, times, objective, epochs; warnings."""
    metrics = run.metrics
    baseline = _percent(metrics["majority_error"])
    cols = st.columns(7)
    cols[0].metric("Test error", _percent(metrics["test_error"]), delta=f"majority {baseline}",
                   delta_color="off", delta_arrow="off",
                   help="Share of held-out points misclassified. Below it: the error of always "
                        "predicting the most frequent training class.")
    cols[1].metric("Train error", _percent(metrics["train_error"]),
                   help="Training error far below test error means overfitting.")
    f1_label = ("F1 (test, macro)" if metrics["f1_label"] is None
                else f"F1 (test, class {metrics['f1_label']})")
    cols[2].metric(f1_label, f"{metrics['f1']:.3f}", help=HELP["f1"])
    cached_note = dict(delta="from cache", delta_color="off", delta_arrow="off") \
        if from_cache(run) else {}
    cols[3].metric("Embedding", _seconds(metrics["embedding_time"]), help=HELP["embedding_time"]
                   + CACHE_HELP, **cached_note)
    cols[4].metric("Training", _seconds(metrics["training_time"]), help="Time in the solver."
                   + CACHE_HELP, **cached_note)
    cols[5].metric("Objective F(w)", f"{metrics['objective']:.4g}", help=HELP["objective"])
    if metrics["epochs"] is not None:
        cols[6].metric("Epochs", f"{metrics['epochs']:.3g}", help=f"Stopped by: {metrics['stop']}.")
    else:
        cols[6].metric("Iterations", f"{metrics['iterations']:,}",
                       help=f"This solver does not pass over the data in epochs. Stopped by: "
                            f"{metrics['stop']}.")
    if metrics["predicted_classes"] == 1 and len(class_names(split)) > 1:
        st.warning(f"The model predicts one class for every test point: its error "
                   f"{_percent(metrics['test_error'])} is the majority-class rate, so it has "
                   "learned nothing. Click **Auto-tune** (a quick cross-validated search of "
                   f"γ, λ and m), or {_less_regularization()}, change γ, or set class "
                   "weight 'balanced'.",
                   icon=":material/warning:")
    elif learned_little(metrics):
        st.warning(f"Test error {_percent(metrics['test_error'])} is within a point of always "
                   f"predicting the majority class ({baseline}): the model has learned "
                   "little. Click **Auto-tune** (a quick cross-validated search of γ, λ and "
                   f"m), or {_less_regularization()} and raise m.", icon=":material/warning:")
    for note in run.notes:
        st.warning(note, icon=":material/warning:")


def landmark_description(model, split):
    """How the landmarks were chosen, with each class's count for balanced landmarks."""
    if model.sampling != "balanced":
        return f"{model.sampling} landmarks"
    labels, counts = np.unique(split.y_train[model.embedding_.landmark_indices_],
                               return_counts=True)
    if labels.shape[0] > 4:
        return (f"landmarks balanced over the {labels.shape[0]} classes "
                f"({counts.min()}–{counts.max()} each)")
    return "landmarks balanced over the classes (" + ", ".join(
        f"{count} of class {label}" for label, count in zip(labels, counts, strict=True)) + ")"


def run_facts(run, split):
    """The numbers behind the run in one short list: n, m, λ and C, γ, stopping rule."""
    model = run.model
    metrics = run.metrics
    n = split.X_train.shape[0]
    gamma = getattr(model.embedding_, "gamma_", None)
    lines = [f"- n = {n:,} training rows, d = {split.n_features} features",
             f"- λ = {model.lam:g}, so C = 1/(2nλ) = {metrics['C']:.4g}"]
    if metrics["n_landmarks"] is not None:
        lines.append(f"- m = {metrics['n_landmarks']} {landmark_description(model, split)}")
        dropped = metrics["n_landmarks"] - metrics["n_components"]
        if dropped > 0:
            lines.append(f"- {metrics['n_components']} embedding dimensions: {dropped} "
                         "eigenvalues of K_mm are below 10⁻¹⁰ × the largest (round-off, no "
                         "information), so their directions are dropped")
    elif model.solver == "libsvm":
        lines.append(f"- exact kernel SVM: f(x) = Σ αᵢyᵢ k(xᵢ, x) + b over its "
                     f"{metrics['n_components']} support vectors (no landmarks)")
    else:
        lines.append("- the whole n × n kernel, HSS-compressed (no landmarks)")
    if gamma is not None and model.kernel != "linear":
        lines.append(f"- γ = {gamma:.3g}")
    if metrics["epochs"] is not None:
        lines.append(f"- stopped by: {metrics['stop']} after {metrics['epochs']:.3g} epochs")
    else:
        lines.append(f"- stopped by: {metrics['stop']} after {metrics['iterations']:,} iterations")
    st.markdown("\n".join(lines))


def learned_little(metrics) -> bool:
    """Whether the test error is within :data:`MAJORITY_MARGIN` of always predicting the
    majority class."""
    return metrics["test_error"] > metrics["majority_error"] - MAJORITY_MARGIN


def try_this_hints(run, split):
    """The Playground's suggestions for the current settings and the trained model."""
    settings = {name: current(name) for name in SETTINGS}
    st.markdown(try_this({**settings, "lam": run.model.lam, "n_train": split.X_train.shape[0],
                          "train_error": run.metrics["train_error"],
                          "test_error": run.metrics["test_error"]},
                         learned_little(run.metrics)))


def export_section(request, split, params, run):
    """Code that reproduces the run and the whole fitted pipeline (scaling included) as a
    .npz download, or why this model cannot be saved."""
    with st.expander("Export: code and model", icon=":material/download:"):
        reason = persistence.unsaved_reason(run.model)
        try:
            dataset = cached.load_dataset(request)
            code = snippets.run_code(request, dataset, params, save_model=reason is None)
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


# The Playground's figure fits under the metrics in a 1280 × 800 window.
MARGINS_HEIGHT = 420
# Heights of the figures beside the robustness heatmap.
CELL_FIGURE_HEIGHT = 380
CELL_BOUNDARY_HEIGHT = 480


def landmarks_of(run):
    """The Nyström landmarks of a run, or None (LIBSVM's support vectors and ADMM's HSS
    skeletons are not landmarks)."""
    embedding = run.model.embedding_
    return embedding.landmarks_ if isinstance(embedding, NystromEmbedding) else None


def first_problem(history):
    """The rows of a history that belong to the first one-vs-rest problem."""
    rows = history["problem"] == 0
    return {name: values[rows] for name, values in history.items()}


def class_names(split):
    return np.unique(np.concatenate([np.asarray(split.y_train), np.asarray(split.y_test)]))


def decision_view(request, split, params, run, *, key_prefix, boundary_height,
                  margins_height):
    """The run's decision boundary for 2-D data, else the histogram of its decision values
    on the test rows; the charts' keys are ``key_prefix`` + "boundary" or "margins".

    ``boundary_height`` None gives the boundary the height app.py's CSS sets for the
    container ``boundary_figure``: as tall as the column is wide, within the window.
    """
    classes = class_names(split)
    if split.n_features == 2:
        surface = cached.surface(request, split, params, run)
        figure = figures.decision_boundary_figure(
            surface, split.X_train, split.y_train, split.X_test, split.y_test, classes=classes,
            train_pred=run.metrics["train_pred"], test_pred=run.metrics["test_pred"],
            landmarks=landmarks_of(run), axis_titles=split.feature_names[:2],
            height=boundary_height, legend_above=True)
        if boundary_height is None:
            with st.container(key=f"{key_prefix}boundary_figure"):
                st.plotly_chart(figure, width="stretch", height="stretch",
                                key=f"{key_prefix}boundary")
        else:
            st.plotly_chart(figure, width="stretch", key=f"{key_prefix}boundary")
    else:
        figure = figures.margin_histogram_figure(
            run.model.decision_function(split.X_test), split.y_test, classes=classes,
            height=margins_height)
        st.plotly_chart(figure, width="stretch", key=f"{key_prefix}margins")


def boundary_replay(request, split, params, run, *, key, **figure_options):
    """The decision boundary replayed over the run's checkpoints (2-D data), on every
    second point of the run's decision-surface grid."""
    surface = cached.surface(request, split, params, run)
    xs, ys = surface.xs[::2], surface.ys[::2]
    st.plotly_chart(figures.boundary_animation_figure(
        xs, ys, analysis.animation_frames(run, xs, ys), split.X_train, split.y_train,
        classes=class_names(split), landmarks=landmarks_of(run),
        axis_titles=split.feature_names[:2], **figure_options), width="stretch", key=key)


def pick_heatmap_cell():
    """Keep the heatmap cell just clicked (its row value and λ) for :func:`heatmap_cell_view`.

    A click elsewhere clears the selection and keeps the last cell shown.
    """
    points = st.session_state[Keys.HEATMAP].selection.points
    if points:
        row_value, lam = points[0]["customdata"][:2]
        st.session_state[Keys.HEATMAP_CELL] = (float(row_value), float(lam))


def sweep_models_to_keep(seed):
    """Which rows of a sweep keep their model for the page: the first seed's, and with
    cross-validation its first fold's (those :func:`heatmap_cell_view` and
    :func:`cell_thumbnails` draw), so that a session holds one model per cell."""
    return lambda row: row["seed"] == seed and row.get("fold", 0) == 0


# The most a session keeps of a sweep's models (their groups' embeddings, shared by the
# cells of a group): a γ grid at large m has one m × m factor per γ.
KEPT_MODELS_MAX_BYTES = 64 * 2**20


def _kept_cell(models, cell):
    """The key of ``models`` for a clicked (row value, λ), or None."""
    if cell is None:
        return None
    return next((key for key in models if np.allclose(key, cell)), None)


def _scored_rows(split, folds):
    """(X, y) the kept models trained on and (X, y) their error was measured on: the
    training and test parts, or with ``folds`` the first fold's two parts of the training
    rows, as the sweep split them."""
    if not folds:
        return (split.X_train, split.y_train), (split.X_test, split.y_test)
    fit, held = cv_splits(folds, split.X_train, split.y_train)[0]
    y = np.asarray(split.y_train)
    return (split.X_train[fit], y[fit]), (split.X_train[held], y[held])


def heatmap_cell_view(split, result, folds, solver):
    """The clicked cell's model, the one the sweep trained and scored (its first seed; with
    cross-validation, on its first fold): its decision boundary (2-D data) or margin
    histogram on the rows it was scored on, its error, and its ``solver``'s convergence."""
    axis, table, models = result["axis"], result["table"], result["models"]
    cell = _kept_cell(models, st.session_state.get(Keys.HEATMAP_CELL))
    if cell is None:
        if result["models_bytes"] > KEPT_MODELS_MAX_BYTES:
            st.info(f"This sweep's models are not kept: their embeddings would hold "
                    f"{result['models_bytes'] / 2**20:.0f} MB for this visitor (the limit is "
                    f"{KEPT_MODELS_MAX_BYTES // 2**20} MB). Lower m to see each cell's model.",
                    icon=":material/memory:")
        else:
            st.info("Click a cell of the heatmap to see its model here: the one the sweep "
                    "scored, its decision boundary (2-D data) or margins, and how its solver "
                    "converged.", icon=":material/ads_click:")
        return
    row_value, lam = cell
    model, seed = models[cell], result["models_seed"]
    rows = table[np.isclose(table[axis], row_value) & np.isclose(table["lam"], lam)]
    mine = rows[rows["seed"] == seed]
    mine = mine[mine["fold"] == 0] if folds else mine
    mine = mine.iloc[0]
    (X_fit, y_fit), (X_scored, y_scored) = _scored_rows(split, folds)
    fit_pred, scored_pred = cached.cell_predictions(result, cell, X_fit, X_scored)
    error = error_rate(y_scored, scored_pred)
    n_seeds = rows["seed"].nunique()
    cell_value = (f"{_percent(rows['test_error'].mean())} ± "
                  f"{_percent(float(np.std(rows['test_error'])))}")
    name = f"**Cell {GRID_AXIS_SYMBOLS[axis]} = {row_value:g}, λ = {lam:g}**"
    # Early stopping (from 10,000 rows) records the error of rows held out of training.
    held = (" (less those it held out to decide when to stop)"
            if np.isfinite(model.history_["validation_error"]).any() else "")
    if folds:
        over = f"the {folds} folds" + (f" and {n_seeds} seeds" if n_seeds > 1 else "")
        st.markdown(f"{name}: the sweep's model for fold 1 of {folds} (seed {seed}), trained "
                    f"on the fold's {len(y_fit):,} training rows{held}; on the fold's "
                    f"{len(y_scored):,} validation rows, its **validation error is "
                    f"{_percent(error)}**. The "
                    f"heatmap shows the cell's mean over {over}: {cell_value}.")
    else:
        value = ("the cell's value in the heatmap" if n_seeds == 1 else
                 f"the heatmap shows the cell's mean over {n_seeds} seeds, {cell_value}")
        st.markdown(f"{name}: the model the sweep trained with seed {seed} on the "
                    f"{len(y_fit):,} training rows{held} and scored: **test error "
                    f"{_percent(error)}** ({value}).")
    classes = class_names(split)
    if split.n_features == 2:
        surface = cached.cell_surfaces(result, [cell], split)[0]
        figure = figures.decision_boundary_figure(
            surface, X_fit, y_fit, X_scored, y_scored, classes=classes, train_pred=fit_pred,
            test_pred=scored_pred, landmarks=model.embedding_.landmarks_[:model.n_landmarks_],
            axis_titles=split.feature_names[:2], height=CELL_BOUNDARY_HEIGHT,
            legend_above=True)
        if folds:
            figure = figures.rename_test_points(figure, "validation")
        st.plotly_chart(figure, width="stretch", key="cell_boundary")
    else:
        figure = figures.margin_histogram_figure(
            model.decision_function(X_scored), y_scored, classes=classes,
            height=CELL_FIGURE_HEIGHT, rows="fold's validation rows" if folds else "test rows")
        st.plotly_chart(figure, width="stretch", key="cell_margins")
    # Under early stopping the history's errors are on rows held out of training, not on
    # the rows the figure's error panel names: the panel is left out.
    history = first_problem(model.history_)
    history["validation_error"] = np.full_like(history["objective"], np.nan)
    st.plotly_chart(figures.convergence_figure(
        {solver: history}, labels={solver: solver_label(solver)},
        height=CELL_FIGURE_HEIGHT), width="stretch", key="cell_convergence")
    larger = table.loc[table["lam"] > lam, "lam"]
    start = (f"warm-started from its solution at λ = {larger.min():g}" if mine["warm_start"]
             else "started from w = 0")
    st.caption(f"Its solver {start} (each column of the sweep runs λ from large to small) "
               f"and stopped {STOP_REASON_WORDS.get(mine['stop_reason'].split(',')[0], '')} "
               f"after {mine['epochs']:.3g} epochs, on {int(mine['n_components'])} "
               "dimensions. A sweep's checkpoints record no test error: the figure has no "
               "error panel.")


def cell_thumbnails(split, result, folds, best, row_values, col_values):
    """Small multiples (2-D data): every cell's kept model as a decision-boundary thumbnail,
    laid out as the heatmap (largest row value on top, λ across), each titled with the
    error of the model drawn; in an expander whose content is computed only when open."""
    models = result["models"]
    if split.n_features != 2 or not models:
        return
    expander = st.expander(f"Decision boundaries of the {len(models)} cells, side by side",
                           key=Keys.CELL_THUMBNAILS, on_change="rerun",
                           icon=":material/grid_view:")
    if not expander.open:
        return
    axis, table, seed = result["axis"], result["table"], result["models_seed"]
    row_values = list(row_values)[::-1]
    cells = [_kept_cell(models, (row, lam)) for row in row_values for lam in col_values]
    best = None if best is None else (len(row_values) - 1 - int(best[0]), int(best[1]))
    # Rows about as tall as a column is wide in a 1400 px window's main area.
    height = 60 + len(row_values) * min(150, 720 // len(col_values))

    def build():
        drawn = table[table["seed"] == seed]
        drawn = drawn[drawn["fold"] == 0] if folds else drawn
        errors = np.array([[drawn.loc[np.isclose(drawn[axis], row)
                                      & np.isclose(drawn["lam"], lam), "test_error"].mean()
                            for lam in col_values] for row in row_values])
        surfaces = iter(cached.cell_surfaces(result, [c for c in cells if c is not None],
                                             split, resolution=cached.THUMBNAIL_RESOLUTION))
        grid = [[None if cells[i * len(col_values) + j] is None else next(surfaces)
                 for j in range(len(col_values))] for i in range(len(row_values))]
        return figures.boundary_thumbnails_figure(
            grid, errors, row_values, col_values, row_symbol=GRID_AXIS_SYMBOLS[axis],
            col_symbol="λ", X=split.X_train, y=split.y_train, classes=class_names(split),
            best=best, height=height)

    with expander:
        what = (f"trained on fold 1's training rows (seed {seed}), titled with its validation "
                "error on the rows that fold held out; the heatmap shows the mean over folds"
                if folds else f"trained with seed {seed}, titled with its test error")
        st.caption(f"Each thumbnail is the model the sweep scored for that cell, {what}. "
                   f"★ and the red frame: {'the chosen cell' if folds else 'the best cell'}. "
                   f"Rows: {GRID_AXIS_SYMBOLS[axis]}, largest on top as in the heatmap; "
                   f"columns: λ. Points: a sample of at most {figures.THUMBNAIL_POINTS}. "
                   "Drawn only while this section is open.")
        figure = cached.figure_once(repr((result["key"], cells, folds, best, height)), build)
        st.plotly_chart(figure, width="stretch", key="cell_thumbnails_chart",
                        config={"displayModeBar": False})


def best_cell(table, axis, row_values, col_values, mean):
    """(row, column) index of the best cell: with cross-validation the sweep's chosen cell
    (``attrs['chosen']``), otherwise the lowest mean error."""
    chosen = table.attrs.get("chosen")
    if chosen is None or "fold" not in table:
        return np.unravel_index(np.nanargmin(mean), mean.shape) if np.isfinite(mean).any() \
            else None
    return (int(np.flatnonzero(np.isclose(row_values, chosen[axis]))[0]),
            int(np.flatnonzero(np.isclose(col_values, chosen["lam"]))[0]))


def grid_result(key, table, axis, split, stopped=None) -> dict:
    """What the Robustness page keeps of a sweep in the session: the table without its
    test decision values, which are only needed once, to measure how much choosing on the
    test rows flatters the choice (:func:`analysis.selection_optimism`; None when the
    cells were scored by cross-validation, or there is one fit to choose from), and the
    models kept by :func:`sweep_models_to_keep` apart (``models``: {(row value, λ): model},
    empty when their embeddings would take more than :data:`KEPT_MODELS_MAX_BYTES`; their
    size in ``models_bytes``)."""
    optimism = None
    if "test_scores" in table:
        if table["seed"].nunique() * table.groupby([axis, "lam"]).ngroups > 1:
            optimism = analysis.selection_optimism(table, split.y_train, split.y_test)
        table = table.drop(columns="test_scores")
    models, n_bytes = {}, 0
    if "model" in table:
        kept = table[table["model"].notna()]
        models = {(float(row[axis]), float(row["lam"])): row["model"]
                  for _, row in kept.iterrows()}
        # The models' own arrays are small; their groups' embeddings are not, and shared.
        embeddings = {id(model.embedding_): model.embedding_ for model in models.values()}
        n_bytes = sum(e.components_.nbytes + e.landmarks_.data.nbytes for e in embeddings.values())
        if n_bytes > KEPT_MODELS_MAX_BYTES:
            models = {}
        table = table.drop(columns="model")
    return {"key": key, "table": table, "axis": axis, "stopped": stopped,
            "optimism": optimism, "models": models, "models_bytes": n_bytes,
            "models_seed": int(table["seed"].min()) if len(table) else None}


def chosen_cell(table, axis, split, folds, best, summary, optimism):
    """The best cell and what its choice is worth: chosen by cross-validation, the chosen
    model's test error measured once; chosen on the test rows, how much that flatters it
    (``optimism``, from :func:`grid_result`)."""
    if best is None:
        return
    row_values, col_values, mean, std = summary
    i, j = best
    n_train = split.X_train.shape[0]
    where = (f"{figures.grid_axis_title(axis)} = {row_values[i]:g}, λ = {col_values[j]:g} "
             f"(C = {lam_to_C(col_values[j], n_train):.3g})")
    spread = f" ± {_percent(std[i, j])}" if np.isfinite(std[i, j]) and std[i, j] > 0 else ""
    if folds:
        chosen = table.attrs.get("chosen")
        text = f"Chosen by {folds}-fold cross-validation: {where}: CV error " \
               f"{_percent(mean[i, j])}{spread}."
        if chosen is not None:
            text += (f" Refitted on all {n_train:,} training rows, its **test error** "
                     f"(measured once, after the choice) is **{_percent(chosen['test_error'])}**.")
        st.success(text, icon=":material/star:")
        return
    st.success(f"Lowest test error: {where}: {_percent(mean[i, j])}{spread}.",
               icon=":material/star:")
    if optimism is not None:
        gap = optimism
        st.warning(
            f"Chosen on the test rows, so its test error flatters it. Measured here: "
            f"choosing among the {gap['n_cells']} cells on a random half of the "
            f"{gap['n_test']:,} test rows, the chosen cell's error is "
            f"{_percent(gap['picked'])} on that half and {_percent(gap['fresh'])} on the "
            f"other half (mean of {gap['n_halvings']} halvings): {100 * gap['gap']:+.2f} "
            "points. Choose by "
            "cross-validation to keep the test rows for one honest measurement.",
            icon=":material/visibility:")


def auto_tune(request, split, params):
    """The Playground's Auto-tune: a quick cross-validated search on the training rows
    whose best setting becomes the sidebar's (applied before the next run's widgets), and
    what it tried."""
    if st.button("Auto-tune", icon=":material/tune:", key="auto_tune",
                 help=HELP["auto_tune"]):
        with (server.heavy_run("Auto-tune"),
              st.status("Auto-tune: cross-validating on the training rows…") as status):
            with stop_on_user_error():
                result = analysis.auto_tune(split, params, by_C=current("reg_by") == "C")
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
        if analysis.grid_solver(params) != params["solver"]:
            values["solver"] = analysis.grid_solver(params)
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
    st.caption(f"Auto-tune tried {len(results)} settings by {analysis.AUTO_TUNE_FOLDS}-fold "
               f"cross-validation on the training rows and chose {chosen} (CV error "
               f"{_percent(tuned['cv_error'])})"
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
