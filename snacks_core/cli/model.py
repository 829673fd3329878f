"""The model `fit` and `compare` train from their options, and what they print about it."""

from __future__ import annotations

import numpy as np

from snacks_core.model.defaults import (
    DEFAULT_N_COMPONENTS,
    HELD_OUT_WIDE_FEATURES,
    SEARCH_FOLDS,
    SMALL_SET_PAIR_ROWS,
    SMALL_SET_ROWS,
)
from snacks_core.model.engine import embedded_row_blocks
from snacks_core.model.estimator import estimator_from_settings
from snacks_core.model.evaluation import evaluate
from snacks_core.model.landmark_growth import describe_path, describe_rank_growth

# Above this many training rows `fit` measures the training error on a sample of them (an
# embedding pass over every training row would cost as much as the fit's own).
TRAIN_ERROR_ROWS = 200_000


def resolve_regularisation(args, n_train, n_features, n_classes):
    """Fill ``args.m`` and ``args.lam`` with what the estimator resolves on ``n_train``
    training rows of ``n_features`` features and ``n_classes`` classes by its own rules
    (:meth:`SnacksClassifier.regularization <snacks_core.SnacksClassifier.regularization>`:
    --lam, λ = 1/(2nC) from --C, else the default;
    :meth:`~snacks_core.SnacksClassifier.landmark_count` for m), so that what a command
    prints is what it fits.  For ``--m auto``, ``args.m`` is the m it grows from
    and ``args.grow_m`` is set; without --m, ``args.default_m`` is set (a fit of more than
    two classes may double the default m: :func:`grown_m`).  Without --lam and --C,
    ``args.lam_auto`` is set: the estimator gets lam='auto' (on a small set it chooses C
    itself; ``args.lam`` is then the default it starts from)."""
    args.grow_m = args.m == "auto"
    args.default_m = args.m is None
    args.lam_auto = args.lam is None and args.C is None
    probe = estimator_from_settings({
        "n_components": DEFAULT_N_COMPONENTS if args.m is None else args.m,
        "lam": "auto" if args.lam is None else args.lam, "C": args.C})
    probe._validate_params()
    args.m = probe.landmark_count(n_train, n_features, n_classes)
    args.lam, args.C = probe.regularization(n_train), None


def grown_m(model, m) -> int:
    """The m a fit asked its embedding for: ``m`` (the options'), or the m that
    ``n_components='auto'`` or the default's growth (more than two classes, wide rows of
    two) reached."""
    if model.m_path_ is not None:
        return int(model.m_path_["m"][-1])
    if model.m_unexplained_:
        return int(model.embedding_.n_components)
    return m


def growth_report(model) -> str | None:
    """The line saying how m grew and why it stopped (None for a fixed m): for
    ``n_components='auto'`` each m with its held-out error and the seconds its step took;
    for the default's growth on more than two classes the kernel's share each m left
    unexplained, then, on many rows, the held-out path from there (a second line); on
    wide rows of two classes the held-out path alone."""
    lines = []
    if model.m_unexplained_:
        held_out = model.m_path_ is not None
        lines.append(describe_rank_growth(
            model.m_unexplained_,
            int(model.m_path_["m"][0]) if held_out else grown_m(model, None),
            None if held_out else model.m_stop_reason_))
    if model.m_path_ is not None:
        how = ("--m auto" if model.n_components == "auto" else
               "the held-out error (more than two classes on many rows in large pairs)"
               if len(model.classes_) > 2 else
               f"the held-out error (two classes of rows of at least "
               f"{HELD_OUT_WIDE_FEATURES:,} features), from --m auto's start")
        lines.append(f"m grown by {how} (held-out error, time): "
                     + describe_path(model.m_path_, model.m_stop_reason_))
    lines = [line for line in lines if line is not None]
    return "\n  ".join(lines) if lines else None


def C_report(model) -> str | None:
    """The line saying how a small set's fit chose C (None where C was not chosen): each
    candidate's cross-validated error."""
    errors = getattr(model, "C_cv_errors_", None)
    if not errors:
        return None
    tried = ", ".join(f"{C:g}: {100 * error:.2f} %" for C, error in errors.items())
    return (f"C = {model.C_:g} chosen by a {SEARCH_FOLDS}-fold cross-validation on the "
            f"training rows (a small set: at most {SMALL_SET_ROWS:,} rows, or "
            f"{SMALL_SET_PAIR_ROWS:,} over its one-vs-one problems; CV error at C = {tried})")


def class_split(model) -> str:
    """How a fitted model of more than two classes split them, for its header line
    (empty for two classes)."""
    n_classes = len(model.classes_)
    if n_classes == 2:
        return ""
    if model._one_vs_one:
        return f", {n_classes} classes one-vs-one ({model.coef_.shape[0]} pairs)"
    return f", {n_classes} classes one-vs-rest"


def model_settings(args) -> dict:
    """The estimator settings every training command reads the same way from its options
    (the kernel, the landmarks' sampling and the solver's budget; ``compare`` runs several
    solvers, so the solver is each command's own)."""
    settings = {"kernel": args.kernel, "degree": args.degree, "coef0": args.coef0,
                "sampling": args.sampling, "multiclass": args.multiclass,
                "max_epochs": args.max_epochs, "tol": args.tol}
    # An option left out keeps the estimator's own default (the parser writes none again).
    return {name: value for name, value in settings.items() if value is not None}


def make_estimator(args, solver, classes):
    """The estimator the options describe (``args.m`` and ``args.lam`` resolved), with
    ``solver``; without --m at the default 'sqrt', whose m a fit of more than two classes
    may double (:func:`grown_m`)."""
    n_components = args.m
    if getattr(args, "grow_m", False):
        n_components = "auto"
    elif getattr(args, "default_m", False):
        n_components = DEFAULT_N_COMPONENTS
    return estimator_from_settings({
        **model_settings(args), "solver": solver, "gamma": args.gamma,
        "n_components": n_components,
        "lam": "auto" if getattr(args, "lam_auto", False) else args.lam, "dtype": args.dtype,
        "random_state": args.seed, "class_weight": class_weights(args.class_weight, classes),
        "memory_budget": args.memory_budget, "storage": args.storage})


def class_weights(weights, classes):
    """--class-weight for the estimator: 'balanced', None, or {class: weight} by label text."""
    if not isinstance(weights, dict):
        return weights
    by_text = {str(c): c for c in classes}
    unknown = [label for label in weights if label not in by_text]
    if unknown:
        raise ValueError(f"--class-weight names {', '.join(map(repr, unknown))}, not a label "
                         f"of the data; the labels are {', '.join(by_text)}.")
    return {by_text[label]: weight for label, weight in weights.items()}


def f1_name(label) -> str:
    """How a printed F1 names its class: ``F1 (class 1)`` or ``F1 (macro average)``."""
    return "F1 (macro average)" if label is None else f"F1 (class {label})"


def measure(model, split, progress=None):
    """Errors, F1, objective, times and stop reasons of a fitted model (the app's evaluate);
    on more than :data:`TRAIN_ERROR_ROWS` training rows the training error is measured on a
    sample of them.  ``F1 of`` is the class of the F1 (the minority training class), or
    'macro average'."""
    test_pred = predict_in_blocks(model, split.X_test, progress)
    metrics = evaluate(model, split, test_pred=test_pred, max_train_rows=TRAIN_ERROR_ROWS)
    label = metrics["f1_label"]
    sampled = metrics["train_error_rows"] < split.X_train.shape[0]
    return {
        f"train error{' (sample)' if sampled else ''}": metrics["train_error"],
        "test error": metrics["test_error"],
        "majority error": metrics["majority_error"],
        "F1": metrics["f1"],
        "F1 of": "macro average" if label is None else str(label),
        "objective": metrics["objective"],
        "embedding time (s)": metrics["embedding_time"],
        "training time (s)": metrics["training_time"],
        "iterations": metrics["iterations"],
        "stopped by": metrics["stop"],
    }, metrics


def predict_in_blocks(model, X, progress=None):
    """Predictions of X in blocks of rows, with a progress line."""
    if progress is None:
        return model.predict(X)
    blocks = []
    for start, stop in embedded_row_blocks(X.shape[0], model.coef_.shape[1]):
        blocks.append(model.predict(X[start:stop]))
        progress("predicting", stop, X.shape[0])
    return np.concatenate(blocks)


def fit_and_measure(args, solver, split, progress):
    """A fitted model of ``solver``, its printed metrics and evaluate()'s dict, with progress
    lines on stderr."""
    model = make_estimator(args, solver, np.unique(split.y_train))
    model.fit(split.X_train, split.y_train, progress=progress)
    if progress is not None:
        progress.end()
    table, metrics = measure(model, split, progress)
    if progress is not None:
        progress.end()
    return model, table, metrics
