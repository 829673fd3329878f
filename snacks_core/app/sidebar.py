"""The shared sidebar: data, kernel and landmarks, solver, and the data-aware defaults it
starts from (:mod:`snacks_core.model.defaults` on the sliders' steps)."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import streamlit as st
from sklearn.preprocessing import StandardScaler

from snacks_core.app import cached
from snacks_core.app.lessons import start_lesson
from snacks_core.app.state import (
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
    encode_setting,
    forget_pending,
    nearest_option,
    parse_setting,
)
from snacks_core.app.teaching import HELP, LESSONS, solver_label
from snacks_core.app.training import LIVE_MAX_ENTRIES
from snacks_core.app.user_errors import USER_ERRORS
from snacks_core.datasets.drawn import decode_points
from snacks_core.kernels.functions import resolve_gamma
from snacks_core.model import defaults
from snacks_core.model.landmark_growth import rank_grown_default_m
from snacks_core.solvers.objective import C_to_lam, lam_to_C


def _format_float(value):
    return f"{value:g}"


def _format_bound(value):
    return str(value) if isinstance(value, int) else f"{value:g}"


def _use_typed(name, label):
    """The text field of setting ``name`` changed: use its number, or say why not."""
    text = st.session_state[Keys.TYPED + name].strip()
    problems = st.session_state.setdefault(Keys.TYPED_PROBLEMS, {})
    setting = SETTINGS[name]
    try:
        st.session_state[name] = parse_setting(name, text)
        problems.pop(name, None)
    except ValueError:
        low, high = setting.bounds
        kind = "a whole number" if setting.kind == "int" else "a number"
        problems[name] = (f"**{label}**: '{text}' is not used: {kind} from "
                          f"{_format_bound(low)} to {_format_bound(high)} is needed. The "
                          f"value used is still {current(name):g}.")


def typed_number(where, label, name, help):
    """A text field for the number setting ``name``, in ``where``: what is typed is read as
    a number (scientific notation too) and used when valid; otherwise the field keeps the
    text and a message under it says why it is not used and which value is."""
    key = Keys.TYPED + name
    problem = st.session_state.get(Keys.TYPED_PROBLEMS, {}).get(name)
    if problem is None:
        # The setting may have changed elsewhere (a lesson, a link, Auto-tune).
        st.session_state[key] = encode_setting(current(name))
    where.text_input(label, key=key, help=help, on_change=_use_typed, args=(name, label))
    if problem is not None:
        where.warning(problem, icon=":material/warning:")


def sidebar():
    """The shared sidebar: lessons, data, kernel and landmarks, solver."""
    options = cached.dataset_options()
    if current("dataset") not in options:
        asked = current("dataset")
        st.session_state["dataset"] = SETTINGS["dataset"].default
        st.session_state[Keys.URL_PROBLEMS] = [
            *st.session_state.get(Keys.URL_PROBLEMS, []), unavailable_dataset(asked, options)]
    apply_data_aware_defaults()
    with st.sidebar:
        with st.expander("Lessons", icon=":material/school:"):
            st.caption("One click sets up a small experiment and says what to look at.")
            for name, lesson in LESSONS.items():
                st.button(lesson.title, key=f"lesson_{name}", on_click=start_lesson,
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


def apply_data_aware_defaults():
    """Settings that learn on the data shown
    (:func:`snacks_core.model.defaults.data_aware_defaults`): the scaling, λ (or C) and m,
    with γ by the 'scale' rule.

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
    m_note = values.pop("m_note")
    if stored["rows"] is None or stored["rows"][0] == option:
        values = {name: value for name, value in values.items()
                  if name in stored["auto"] and current(name) == stored["auto"][name]}
    apply(values)
    st.session_state[Keys.DATA_DEFAULTS] = {"rows": rows, "auto": values, "m_note": m_note}


# The rows of a dataset on which the sidebar measures how much of the kernel the default
# landmarks leave unexplained (a stratified sample would do as well: these are drawn).
RANK_PROBE_ROWS = 20_000


def defaults_for(dataset, test_size) -> dict:
    """The settings of :func:`data_aware_defaults` for a dataset, on the sidebar's values:
    λ rounded to the slider's steps (C = 25 is offered as 20), m down to the slider's
    steps and, from about 40,000 training rows, to what trains live (n·m ≤
    LIVE_MAX_ENTRIES, at least 50): the first picture comes without a click, and m can
    be raised from there.  On more than two classes beyond a small set m is first
    doubled as a default fit's is, while its landmarks leave more than 20 % of the kernel
    unexplained (on up to :data:`RANK_PROBE_ROWS` rows of the scaled data), where that
    m still trains live, and kept off the slider's steps; ``m_note`` says so (None where m
    is the rule's)."""
    X = dataset.X
    n_train = X.shape[0] if dataset.X_test is not None else round(X.shape[0] * (1 - test_size))
    n_classes = dataset.classes.shape[0]
    learned = defaults.data_aware_defaults(X, n_train, n_classes)
    m = learned["n_components"]
    live = max(defaults.DEFAULT_M_RANGE[0], LIVE_MAX_ENTRIES // max(n_train, 1))
    if defaults.grows_by_rank("sqrt", "balanced", n_train, n_classes) and m < live:
        rows = np.sort(np.random.default_rng(0).permutation(X.shape[0])[:RANK_PROBE_ROWS])
        probe = X[rows]
        if learned["scaling"] == "standard":
            # Fitted on every row, applied to the probe's only (no scaled copy of X).
            probe = StandardScaler(with_mean=not sp.issparse(X)).fit(X).transform(probe)
        grown, shares, _ = rank_grown_default_m(probe, dataset.y[rows], m)
        if m < grown <= live:
            # As grown (the slider offers the current m), where it still trains live.
            measured = ", ".join(f"{100 * share:.0f} % at {k:,}" for k, share in shares.items()
                                 if not np.isnan(share))
            return _settings(learned, n_train, grown,
                             f"m = {grown:,}: the rule's {m:,} doubled while its landmarks "
                             f"left more than {100 * defaults.RANK_UNEXPLAINED:.0f} % of the "
                             f"kernel unexplained ({measured}).")
    if m >= min(M_OPTIONS):
        m = max(v for v in M_OPTIONS if v <= min(m, live))
    return _settings(learned, n_train, m, None)


def _settings(learned, n_train, m, m_note) -> dict:
    """:func:`defaults_for`'s settings from :func:`data_aware_defaults`' ``learned``, at
    ``m`` landmarks."""
    lam = learned["lam"]
    return {"scaling": learned["scaling"], "gamma_scale": True,
            "lam": nearest_option(LAM_OPTIONS, lam),
            "C": nearest_option(C_OPTIONS, lam_to_C(lam, n_train)),
            "m": int(m), "m_note": m_note}


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
        own_test = _own_test_rows()
        st.slider("Test fraction", 0.1, 0.5, step=0.05, key="test_size", help=HELP["test_size"],
                  disabled=own_test is not None)
        if own_test is not None:
            st.caption(f"Test rows: {own_test}.")
        st.selectbox("Feature scaling", SETTINGS["scaling"].choices, key="scaling",
                     help=HELP["scaling"])
        two_d = (option.startswith("synthetic:") and option != "synthetic:classification"
                 or option == cached.DRAWN_OPTION)
        if not two_d:
            st.checkbox("Train on a 2-D PCA projection", key="pca2d", help=HELP["pca2d"])


def _own_test_rows():
    """Where the test rows of a dataset with its own come from (None: a random split, or
    drawn points, which the test fraction splits as they are drawn)."""
    request = cached.data_request()
    test_file = cached.upload_test_file(request)
    if test_file is not None:
        return f"the test file {test_file}"
    if request.dataset == cached.DRAWN_OPTION:
        return None
    try:
        dataset = cached.load_dataset(request)
    except USER_ERRORS:
        return None
    return None if dataset.X_test is None else "the dataset's own test file"


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
            typed_number(left, "Degree p", "degree", HELP["degree"])
            typed_number(right, "c₀", "coef0", HELP["coef0"])
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
    elif note := _automatic_m_note():
        st.caption(note)


def _automatic_m_note():
    """Why the data-aware m is larger than the rule's (:func:`defaults_for`), while the
    slider still holds it; else None."""
    stored = st.session_state.get(Keys.DATA_DEFAULTS) or {}
    auto = stored.get("auto") or {}
    if stored.get("m_note") and auto.get("m") == current("m"):
        return stored["m_note"]
    return None


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
        typed_number(st, "Seed", "seed", HELP["seed"])
        st.toggle("Train live on every change", key="live", help=HELP["live"])
