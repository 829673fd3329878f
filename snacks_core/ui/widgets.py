"""Shared widgets: the sidebar, lessons, the Train gate, solver choice, error boxes, metrics,
the decision boundary or margins of a run, export and the robustness heatmap's clicked-cell
view."""

from __future__ import annotations

import math
import time
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
import streamlit as st

from .. import analysis, figures, persistence, snippets
from ..datasets import DownloadError
from ..kernels import resolve_gamma
from ..nystrom import NystromEmbedding
from ..objective import lam_to_C
from ..sweeps import GRID_AXIS_SYMBOLS
from . import cached
from .state import (
    EPOCH_OPTIONS,
    GAMMA_OPTIONS,
    LAM_OPTIONS,
    M_OPTIONS,
    N_OPTIONS,
    SETTINGS,
    Keys,
    apply,
    current,
    forget_pending,
    lesson_values,
    set_settings_next_run,
)
from .text import HELP, LESSONS, solver_label, try_this

# Errors a user can cause (bad data, bad parameters, no network) and that we show in place.
USER_ERRORS = (ValueError, DownloadError, MemoryError, OSError)
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
    apply(lesson_values(lesson.settings))
    st.session_state[Keys.DATA_DEFAULTS] = lesson.settings.get("dataset")
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
            "synthetic, bundled, sample, libsvm")


def data_aware_defaults():
    """Defaults that fit the data, applied when a dataset is first shown.

    Sparse binary data (one-hot rows such as a9a) are used as they are, without scaling
    (standardising them inflates rare columns) and with a λ that shrinks with n (≈ 0.02/n,
    the scale at which such data needs its hinge terms to outweigh the norm); other data
    get the standard scaling.  A link that sets λ or the scaling keeps its values.
    """
    option = current("dataset")
    if st.session_state.get(Keys.DATA_DEFAULTS) == option:
        return
    st.session_state[Keys.DATA_DEFAULTS] = option
    try:
        dataset = cached.load_dataset(cached.data_request())
    except USER_ERRORS:
        return
    apply(defaults_for(dataset, current("test_size")))


def defaults_for(dataset, test_size) -> dict:
    """The data-aware settings of :func:`data_aware_defaults` for a dataset."""
    X = dataset.X
    binary = sp.issparse(X) and X.nnz > 0 and bool(np.all(X.data == 1))
    if not binary:
        return {"scaling": "standard"}
    n_train = X.shape[0] if dataset.X_test is not None else round(X.shape[0] * (1 - test_size))
    target = 0.02 / max(n_train, 1)
    lam = min(LAM_OPTIONS, key=lambda v: abs(math.log(v / target)))
    return {"scaling": "none", "lam": lam}


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
    """The cached run, with a spinner while it trains; an error box on bad input."""
    with stop_on_user_error(), st.spinner("Training…"):
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
                   "γ, λ and m), or lower λ, change γ, or set class weight 'balanced'.",
                   icon=":material/warning:")
    elif learned_little(metrics):
        st.warning(f"Test error {_percent(metrics['test_error'])} is within a point of always "
                   f"predicting the majority class ({baseline}): the model has learned "
                   "little. Click **Auto-tune** (a quick cross-validated search of γ, λ and "
                   "m), or lower λ and raise m.", icon=":material/warning:")
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


def try_this_hints(run):
    """The Playground's suggestions for the current settings and the trained model."""
    st.markdown(try_this({name: current(name) for name in SETTINGS},
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
BOUNDARY_HEIGHT = 500
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
    on the test rows; the charts' keys are ``key_prefix`` + "boundary" or "margins"."""
    classes = class_names(split)
    if split.n_features == 2:
        surface = cached.surface(request, split, params, run)
        figure = figures.decision_boundary_figure(
            surface, split.X_train, split.y_train, split.X_test, split.y_test, classes=classes,
            train_pred=run.metrics["train_pred"], test_pred=run.metrics["test_pred"],
            landmarks=landmarks_of(run), axis_titles=split.feature_names[:2],
            height=boundary_height, legend_below=True)
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


def heatmap_cell_view(request, split, params, axis, seed, table):
    """The clicked cell's model, retrained alone: its decision boundary (2-D data) or margin
    histogram, and its convergence curve."""
    cell = st.session_state.get(Keys.HEATMAP_CELL)
    rows = table[np.isclose(table[axis], cell[0]) & np.isclose(table["lam"], cell[1])] \
        if cell is not None else table.iloc[:0]
    if rows.empty:
        st.info("Click a cell of the heatmap to see its model here: the decision boundary "
                "(2-D data) or the margins, and how the solver converged.",
                icon=":material/ads_click:")
        return
    row_value, lam = cell
    # As in the sweep: its solver and precision, the grid's first seed.
    cell_params = {**params, "lam": lam, "solver": analysis.grid_solver(params),
                   "random_state": int(seed), "dtype": "float32"}
    if axis == "m":
        cell_params["n_components"] = int(row_value)
    else:
        cell_params["gamma"] = row_value
    run = train_or_stop(request, split, cell_params)
    if "fold" in rows:
        sweep = [f"its {rows['fold'].nunique()}-fold CV error in the sweep: "
                 f"{_percent(rows['test_error'].mean())}"]
    else:
        same_seed = rows.loc[rows["seed"] == seed, "test_error"]
        sweep = [f"in the sweep with seed {seed}: {_percent(same_seed.iloc[0])}"] \
            if len(same_seed) else []
        if rows["seed"].nunique() > 1:
            sweep.append(f"the cell's mean over {rows['seed'].nunique()} seeds: "
                         f"{_percent(rows['test_error'].mean())}")
    st.markdown(f"**Cell {GRID_AXIS_SYMBOLS[axis]} = {row_value:g}, λ = {lam:g}**: "
                f"retrained alone with seed {seed}, test error "
                f"{_percent(run.metrics['test_error'])} ({'; '.join(sweep)}).")
    decision_view(request, split, cell_params, run, key_prefix="cell_",
                  boundary_height=CELL_BOUNDARY_HEIGHT, margins_height=CELL_FIGURE_HEIGHT)
    solver = cell_params["solver"]
    st.plotly_chart(figures.convergence_figure(
        {solver: first_problem(run.model.history_)}, labels={solver: solver_label(solver)},
        height=CELL_FIGURE_HEIGHT), width="stretch", key="cell_convergence")
    shared = ("shares landmarks across m (each m takes the first m of one selection) and "
              if axis == "m" else "")
    st.caption(f"The sweep {shared}starts each λ from the previous λ's solution, and its "
               "solver stops within a tolerance of the optimum; this model is fitted from "
               "scratch (on float32 embeddings, as the sweep's), so its error can differ "
               "slightly from the sweep's, except at the largest λ"
               + (" and m" if axis == "m" else "") + ", where both are the same fit.")


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
    cells were scored by cross-validation, or there is one fit to choose from)."""
    optimism = None
    if "test_scores" in table:
        if table["seed"].nunique() * table.groupby([axis, "lam"]).ngroups > 1:
            optimism = analysis.selection_optimism(table, split.y_train, split.y_test)
        table = table.drop(columns="test_scores")
    return {"key": key, "table": table, "axis": axis, "stopped": stopped,
            "optimism": optimism}


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
        with st.status("Auto-tune: cross-validating on the training rows…") as status:
            with stop_on_user_error():
                result = analysis.auto_tune(split, params)
            status.update(label=f"Auto-tune done in {result['seconds']:.1f} s",
                          state="complete")
        chosen = result["params"]
        values = {"lam": chosen["lam"], "m": int(chosen["n_components"])}
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
    symbols = {"gamma": "γ", "lam": "λ", "m": "m"}
    chosen = ", ".join(f"{symbols[name]} = {values[name]:g}" for name in symbols
                       if name in values)
    st.caption(f"Auto-tune tried {len(results)} settings by {analysis.AUTO_TUNE_FOLDS}-fold "
               f"cross-validation on the training rows and chose {chosen} (CV error "
               f"{_percent(tuned['cv_error'])})"
               + ("; the sidebar holds them, and the test error above is theirs, measured "
                  "once." if now else "; the sidebar has changed since."))
    with st.expander("What Auto-tune tried"):
        shown = results.assign(cv_error=(100 * (1 - results["mean_test_score"])).round(2))
        shown = shown.sort_values(["n_resources", "cv_error"], ascending=[False, True])
        columns = {"param_gamma": "γ", "param_lam": "λ", "param_n_components": "m",
                   "cv_error": "CV error %", "n_resources": "rows"}
        if shown["n_resources"].nunique() == 1:
            del columns["n_resources"]
        st.dataframe(shown[[c for c in columns if c in shown]].rename(columns=columns),
                     hide_index=True, height=240)
        if "n_resources" in columns:
            st.caption("Successive halving: every setting was scored on a subsample of the "
                       "training rows, the best third on three times as many, until all.")
