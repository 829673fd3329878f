"""Every session-state key of the explorer, its default and how it travels in the URL.

Settings (:data:`SETTINGS`) are widget values: each widget is created with ``key=<name>``
and no ``value=``, after :func:`init_session` has put the value (from the URL, else the
default) into ``st.session_state``.  :func:`keep_settings` stops Streamlit from dropping
the values of widgets of pages not shown, and :func:`write_query_params` mirrors the
settings that differ from their defaults into the URL, so a link reproduces the view.
Other keys (uploads, lessons, the last training request) are listed in :class:`Keys`.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import streamlit as st

from snacks_core.app.paper_tables import PAPER_TABLES
from snacks_core.datasets import SCALINGS, make_synthetic, split_dataset
from snacks_core.datasets.drawn import EXAMPLE_POINTS, decode_points, encode_points
from snacks_core.kernels.functions import KERNELS
from snacks_core.kernels.landmarks import SAMPLINGS
from snacks_core.model.defaults import (
    DEFAULT_C_ON_STEPS,
    DEFAULT_LAM,
    DEFAULT_M,
    GAMMA_RANGE,
    grid_lam_values,
)
from snacks_core.model.estimator import SnacksClassifier
from snacks_core.solvers import EMBEDDED_SOLVERS, SOLVERS


def _one_two_five(low_exponent, high_exponent):
    values = [mantissa * 10.0**e for e in range(low_exponent, high_exponent + 1)
              for mantissa in (1, 2, 5)]
    return tuple(float(f"{v:.0e}") for v in values if v <= 10.0**high_exponent)


LAM_OPTIONS = _one_two_five(-9, 0)
# C = 1/(2nλ), for those who think of the textbook parameter (the "reg_by" setting).
C_OPTIONS = _one_two_five(-3, 5)
REGULARIZERS = ("lam", "C")
REGULARIZER_LABELS = {"lam": "λ", "C": "C"}
GAMMA_OPTIONS = _one_two_five(*(int(math.log10(g)) for g in GAMMA_RANGE))
M_OPTIONS = (5, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000)
N_OPTIONS = (100, 200, 400, 700, 1000, 2000, 5000, 10000, 20000, 50000)
EPOCH_OPTIONS = (1, 2, 5, 10, 20, 50, 100, 200)
GAMMA_FACTORS = (0.01, 0.1, 0.3, 1.0, 3.0, 10.0, 100.0)
CLASS_WEIGHTS = ("none", "balanced")
CONVERGENCE_AXES = ("epoch", "iteration", "time")
# The datasets of the Snacks paper's Tables III–VII (ui.paper_tables.PAPER_TABLES).
PAPER_DATASETS = tuple(PAPER_TABLES)
# Robustness grids by the axis varied against λ (the URL value), with their display labels.
GRIDS = ("m", "gamma")
GRID_LABELS = {"m": "m × λ", "gamma": "γ × λ"}
# How the Robustness page scores cells and so chooses the best one.
ROBUSTNESS_FOLDS = 3
SELECTIONS = ("cv", "test")
SELECTION_LABELS = {"cv": f"{ROBUSTNESS_FOLDS}-fold cross-validation",
                    "test": "test error (peeking)"}
# The most steps a robustness grid's axis is extended by beyond each end of its default.
GRID_EXTRA_MAX = 6
# Any m from a link is accepted; the slider offers M_OPTIONS up to the training rows.
M_BOUNDS = (1, 100_000)


def _keyword_defaults(function) -> dict:
    """The defaults of ``function``'s parameters, by name."""
    return {name: parameter.default
            for name, parameter in inspect.signature(function).parameters.items()
            if parameter.default is not inspect.Parameter.empty}


# The settings start from the library's own defaults, read where they are defined: the
# estimator's parameters, the synthetic data and the split of the Data settings, the size of
# a robustness grid's axes.
ESTIMATOR_DEFAULTS = SnacksClassifier().get_params()
SYNTHETIC_DEFAULTS = _keyword_defaults(make_synthetic)
SPLIT_DEFAULTS = _keyword_defaults(split_dataset)
GRID_SIZE = _keyword_defaults(grid_lam_values)["size"]


@dataclass(frozen=True)
class Setting:
    """A setting's default and what values are valid.

    ``kind`` is one of 'choice' (one of ``choices``), 'multi' (a subset of ``choices``),
    'int' and 'float' (within ``bounds``), 'bool', 'str', 'points' (a drawing's text form).
    """

    default: object
    kind: str
    choices: tuple = ()
    bounds: tuple = ()


SETTINGS = {
    # Data (sidebar)
    "dataset": Setting("synthetic:moons", "str"),
    "n_samples": Setting(SYNTHETIC_DEFAULTS["n_samples"], "choice", N_OPTIONS),
    "noise": Setting(SYNTHETIC_DEFAULTS["noise"], "float", bounds=(0.0, 1.0)),
    "n_features": Setting(SYNTHETIC_DEFAULTS["n_features"], "int", bounds=(2, 100)),
    "positive_fraction": Setting(SYNTHETIC_DEFAULTS["positive_fraction"], "float",
                                 bounds=(0.05, 0.95)),
    "test_size": Setting(SPLIT_DEFAULTS["test_size"], "float", bounds=(0.1, 0.5)),
    "scaling": Setting(SPLIT_DEFAULTS["scaling"], "choice", SCALINGS),
    "pca2d": Setting(False, "bool"),
    # The drawn dataset's points, in the text form of snacks_core.datasets.drawn.
    "points": Setting(EXAMPLE_POINTS, "points"),
    # Model (sidebar)
    "kernel": Setting(ESTIMATOR_DEFAULTS["kernel"], "choice", KERNELS),
    "gamma_scale": Setting(True, "bool"),
    "gamma": Setting(1.0, "choice", GAMMA_OPTIONS),
    "degree": Setting(ESTIMATOR_DEFAULTS["degree"], "int", bounds=(1, 10)),
    "coef0": Setting(ESTIMATOR_DEFAULTS["coef0"], "float", bounds=(-10.0, 10.0)),
    "m": Setting(DEFAULT_M, "int", bounds=M_BOUNDS),
    "sampling": Setting(ESTIMATOR_DEFAULTS["sampling"], "choice", SAMPLINGS),
    "lam": Setting(DEFAULT_LAM, "choice", LAM_OPTIONS),
    "reg_by": Setting("lam", "choice", REGULARIZERS),
    "C": Setting(DEFAULT_C_ON_STEPS, "choice", C_OPTIONS),
    "solver": Setting(ESTIMATOR_DEFAULTS["solver"], "choice", SOLVERS),
    "max_epochs": Setting(ESTIMATOR_DEFAULTS["max_epochs"], "choice", EPOCH_OPTIONS),
    "class_weight": Setting("none", "choice", CLASS_WEIGHTS),
    "seed": Setting(0, "int", bounds=(0, 2**31 - 1)),
    "live": Setting(True, "bool"),
    # Pages
    "conv_solvers": Setting(("snacks", "pegasos"), "multi", tuple(EMBEDDED_SOLVERS)),
    "conv_axis": Setting("epoch", "choice", CONVERGENCE_AXES),
    "spec_factors": Setting((0.1, 1.0, 10.0), "multi", GAMMA_FACTORS),
    "spec_max_m": Setting(200, "choice", (50, 100, 200, 400)),
    "rob_grid": Setting("m", "choice", GRIDS),
    "rob_size": Setting(GRID_SIZE, "int", bounds=(2, 8)),
    "rob_seeds": Setting(2, "int", bounds=(1, 5)),
    "rob_select": Setting("cv", "choice", SELECTIONS),
    # Steps the robustness grid reaches beyond its default axes (the edge warning's button):
    # λ below its smallest and above its largest value, and likewise m (or γ).
    "rob_lam_below": Setting(0, "int", bounds=(0, GRID_EXTRA_MAX)),
    "rob_lam_above": Setting(0, "int", bounds=(0, GRID_EXTRA_MAX)),
    "rob_axis_below": Setting(0, "int", bounds=(0, GRID_EXTRA_MAX)),
    "rob_axis_above": Setting(0, "int", bounds=(0, GRID_EXTRA_MAX)),
    "cmp_solvers": Setting(tuple(SOLVERS), "multi", tuple(SOLVERS)),
    "paper_table": Setting("a9a", "choice", PAPER_DATASETS),
}


class Keys:
    """Session-state keys that are not settings."""

    INITIALIZED = "_initialized"
    URL_PROBLEMS = "_url_problems"
    UPLOADS = "uploads"            # {fingerprint: Dataset} parsed uploads, kept for the session
    UPLOAD_TEST_FILES = "_upload_test_files"  # {fingerprint: test file name} of uploaded pairs
    UPLOAD_TEST = "upload_test"    # the Data page's uploader of an optional test file
    LESSON = "lesson"              # name of the lesson whose explanation is shown
    GOTO = "_goto"                 # page a lesson asks to open
    PAGE = "_page"                 # the page this run shows (navigation.record_page)
    TRAINED = "_trained"           # settings of the last click on Train (when not live)
    GRID_RESULT = "_grid_result"   # last robustness sweep (rows, parameters)
    CMP_RESULT = "_cmp_result"     # last solver comparison (rows, parameters)
    UPLOAD_LABEL = "upload_label"  # label column chosen for a CSV upload
    UPLOAD_FILE = "upload_file"    # the file uploader widget
    UPLOAD_ERROR = "_upload_error"  # why "Use this file" failed, shown by the Data page
    PENDING = "_pending"           # settings to apply at the start of the next runs
    LIBSVM_NAME = "libsvm_name"    # public dataset chosen on the Data page
    CONV_REPLAY = "conv_replay"    # solver whose boundary the Convergence page replays
    RUN_STARTED = "_run_started"   # time.time() at the start of this script run
    SWEEP_ROWS = "_sweep_rows"     # finished fits of the sweep in progress (kept by Stop)
    DATA_DEFAULTS = "_data_defaults"  # rows the data-aware defaults fit, settings still automatic
    HEATMAP = "heatmap"            # the robustness heatmap (its selection: the clicked cell)
    WATCH_LEARNING = "watch_learning"  # the Playground's replay of training is shown
    EXPORT = "export_open"         # the Playground's export (code, model file) is open
    HEATMAP_CELL = "_heatmap_cell"  # (row value, λ) of the heatmap cell clicked last
    AUTO_TUNE = "_auto_tune"       # the last Auto-tune: data, chosen values, what it tried
    PLOTLY_LOADING = "_plotly_loading"  # this visit's browser was asked to load Plotly early
    DRAW_MODE = "draw_mode"        # what a click on the drawing plane does: add A, add B, erase
    DRAW_CLICKS = "_draw_clicks"   # clicks handled on the plane (part of its chart's key)
    CELL_THUMBNAILS = "cell_thumbnails"  # the Robustness page's small multiples (open or not)
    GRID_EXTEND = "_grid_extend"   # the edge warning's button asked to compute the new cells
    TYPED = "typed_"               # prefix of a typed number's text field (+ the setting's name)
    TYPED_PROBLEMS = "_typed_problems"  # {setting: why its typed text is not used}


def nearest_option(options, value):
    """The option nearest to ``value`` on a log scale (the sliders' steps are 1-2-5)."""
    return min(options, key=lambda option: abs(math.log(option / value)))


def _matching_choice(value, choices):
    for choice in choices:
        if isinstance(choice, float) and isinstance(value, (int, float)):
            if math.isclose(choice, float(value), rel_tol=1e-9):
                return choice
        elif choice == value:
            return choice
    raise ValueError(f"not one of {list(choices)}")


def _parse_scalar(text, like):
    if isinstance(like, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if isinstance(like, int):
        try:
            return int(text)
        except ValueError:
            value = float(text)  # '1e9' is a whole number too
            if not value.is_integer():
                raise ValueError("expected a whole number") from None
            return int(value)
    if isinstance(like, float):
        return float(text)
    return text


def parse_setting(name, text):
    """The value of setting ``name`` from its URL text; ValueError saying why it is invalid."""
    setting = SETTINGS[name]
    if setting.kind == "points":
        return encode_points(decode_points(text))
    if setting.kind == "multi":
        parts = [p for p in str(text).split(",") if p]
        return tuple(_matching_choice(_parse_scalar(p, setting.choices[0]), setting.choices)
                     for p in parts)
    value = _parse_scalar(str(text), setting.default)
    if setting.kind == "choice":
        return _matching_choice(value, setting.choices)
    if setting.kind in ("int", "float"):
        low, high = setting.bounds
        if not (low <= value <= high) or (isinstance(value, float) and not math.isfinite(value)):
            raise ValueError(f"outside [{low}, {high}]")
    return value


def encode_setting(value) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(encode_setting(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def init_session(query_params) -> None:
    """Fill every setting from the URL (valid values) or its default, once per session."""
    state = st.session_state
    if state.get(Keys.INITIALIZED):
        return
    problems = []
    for name, setting in SETTINGS.items():
        if name in state:
            continue
        value = setting.default
        if name in query_params:
            try:
                value = parse_setting(name, query_params[name])
            except ValueError as exc:
                problems.append(f"{name}={query_params[name]!r} ({exc})")
        state[name] = list(value) if setting.kind == "multi" else value
    state[Keys.URL_PROBLEMS] = problems
    state[Keys.DATA_DEFAULTS] = data_defaults_state(query_params)
    state.setdefault(Keys.UPLOADS, {})
    state[Keys.INITIALIZED] = True


# The settings that data-aware defaults choose (see sidebar.apply_data_aware_defaults).
DATA_AWARE = ("scaling", "gamma_scale", "lam", "C", "m")


def data_defaults_state(query_params=()) -> dict:
    """The data-aware defaults' record before any data is shown: which rows they were
    chosen for (none yet) and the settings still automatic, with their values (each at its
    default, except those a link sets: a link chose for itself)."""
    return {"rows": None, "auto": {name: SETTINGS[name].default for name in DATA_AWARE
                                   if name not in query_params}}


def keep_settings() -> None:
    """Re-assign every setting so that Streamlit keeps it while its widget is not shown."""
    state = st.session_state
    for name in SETTINGS:
        if name in state:
            state[name] = state[name]


def current(name):
    """The current value of a setting (multi settings as tuples)."""
    value = st.session_state.get(name, SETTINGS[name].default)
    return tuple(value) if SETTINGS[name].kind == "multi" else value


def query_params_for(values) -> dict:
    """The URL parameters for a dict of settings: those that differ from their defaults."""
    params = {}
    for name, value in values.items():
        default = SETTINGS[name].default
        if encode_setting(value) != encode_setting(default):
            params[name] = encode_setting(value)
    return params


def write_query_params() -> None:
    """Mirror the non-default settings into the URL (only when they changed)."""
    wanted = query_params_for({name: current(name) for name in SETTINGS})
    if dict(st.query_params) != wanted:
        st.query_params.from_dict(wanted)


# Runs that re-apply a pending setting the browser has not taken yet (see apply_pending).
PENDING_RUNS = 3


def select_dataset_next_run(option) -> None:
    """Ask for ``option`` to become the dataset; the sidebar widget exists already in this
    run, so the change is applied by :func:`apply_pending` at the start of the next."""
    set_settings_next_run({"dataset": option})


def set_settings_next_run(values) -> None:
    """Ask for settings to change; applied by :func:`apply_pending` before the widgets of
    the next runs exist."""
    pending = st.session_state.setdefault(Keys.PENDING,
                                          {"values": {}, "before": {}, "runs": PENDING_RUNS})
    for name in values:
        pending["before"].setdefault(name, st.session_state.get(name))
    pending["values"].update(values)
    pending["runs"] = PENDING_RUNS


def apply_pending() -> None:
    """Apply the settings asked for by :func:`set_settings_next_run`, at the start of a
    run, before the widgets exist.

    A run that a click interrupts (a page change right after "Use this file") is followed
    by one whose widgets arrive from the browser with their old values: a setting stays
    pending, and is applied again, until a run starts with it (the browser has taken it),
    for at most :data:`PENDING_RUNS` runs, or until the user chooses that widget's value
    (:func:`forget_pending`)."""
    pending = st.session_state.get(Keys.PENDING)
    if not pending:
        return
    waiting = {name: value for name, value in pending["values"].items()
               if st.session_state.get(name) != value}
    apply(waiting)
    pending["values"], pending["runs"] = waiting, pending["runs"] - 1
    if not waiting or pending["runs"] <= 0:
        del st.session_state[Keys.PENDING]


def forget_pending(name) -> None:
    """The user chose ``name``'s value: a pending one must not replace it.

    A widget's callback also fires when the browser sends back the value it showed before
    the pending one was applied (the run that would have shown it was interrupted): that
    stale value is not a choice, and the pending one stays."""
    pending = st.session_state.get(Keys.PENDING)
    if pending and st.session_state.get(name) != pending["before"].get(name):
        pending["values"].pop(name, None)


# Settings a lesson leaves to the user: everything else is reset to its default first.
# A drawing is the user's work, not an exploration setting.
LESSON_KEEPS = ("live", "points")


def lesson_values(settings) -> dict:
    """Every setting a lesson determines: its own values over the defaults of the rest, so
    that nothing of the previous lesson or exploration changes what the lesson shows."""
    values = {name: setting.default for name, setting in SETTINGS.items()
              if name not in LESSON_KEEPS}
    values.update(settings)
    return values


def apply(values) -> None:
    """Set several settings at once (from a callback: before widgets are created)."""
    for name, value in values.items():
        setting = SETTINGS[name]
        st.session_state[name] = list(value) if setting.kind == "multi" else value
