"""What a trained run shows: its metrics beside the majority-class baseline, the numbers
behind it, hints, and its decision boundary (2-D data) or margins."""

from __future__ import annotations

import numpy as np
import streamlit as st

from snacks_core.app import cached, explorer
from snacks_core.app.figures.animation import boundary_animation_figure
from snacks_core.app.figures.boundary import (
    BoundaryStyle,
    decision_boundary_figure,
    margin_histogram_figure,
)
from snacks_core.app.state import SETTINGS, current
from snacks_core.app.teaching import HELP, try_this
from snacks_core.app.training import from_cache
from snacks_core.kernels.nystrom import NystromEmbedding
from snacks_core.model.landmark_growth import describe_path


def percent(x):
    return f"{100 * x:.1f} %"


def _seconds(x):
    return f"{1000 * x:.0f} ms" if x < 1 else f"{x:.2f} s"


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
    baseline = percent(metrics["majority_error"])
    cols = st.columns(7)
    cols[0].metric("Test error", percent(metrics["test_error"]), delta=f"majority {baseline}",
                   delta_color="off", delta_arrow="off",
                   help="Share of held-out points misclassified. Below it: the error of always "
                        "predicting the most frequent training class. Its binomial standard "
                        "error is in the facts beside the picture.")
    cols[1].metric("Train error", percent(metrics["train_error"]),
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
                   f"{percent(metrics['test_error'])} is the majority-class rate, so it has "
                   "learned nothing. Click **Auto-tune** (a quick cross-validated search of "
                   f"γ, λ and m), or {_less_regularization()}, change γ, or set class "
                   "weight 'balanced'.",
                   icon=":material/warning:")
    elif learned_little(metrics):
        st.warning(f"Test error {percent(metrics['test_error'])} is within a point of always "
                   f"predicting the majority class ({baseline}): the model has learned "
                   "little. Click **Auto-tune** (a quick cross-validated search of γ, λ and "
                   f"m), or {_less_regularization()} and raise m.", icon=":material/warning:")
    for note in run.notes:
        st.warning(note, icon=":material/warning:")


def standard_error(error, n_test) -> float:
    """The binomial standard error √(p(1−p)/n) of an error rate p measured on n test rows."""
    return float(np.sqrt(error * (1.0 - error) / n_test))


def test_error_uncertainty(error, n_test) -> str:
    """A test error with its binomial standard error: "14.2 % ± 3.2 (120 test rows)"."""
    return (f"{percent(error)} ± {100 * standard_error(error, n_test):.1f} "
            f"({n_test:,} test rows)")


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
             f"- test error {test_error_uncertainty(metrics['test_error'], split.X_test.shape[0])}"
             ", ± one binomial standard error √(p(1−p)/n)",
             f"- λ = {model.lam_:g}, so C = 1/(2nλ) = {metrics['C']:.4g}"]
    if metrics["n_landmarks"] is not None:
        lines.append(f"- m = {metrics['n_landmarks']} {landmark_description(model, split)}"
                     + _repeated_landmarks(model, metrics["n_landmarks"], n))
        if getattr(model, "m_path_", None) is not None:
            lines.append("- m grown by n_components='auto' (held-out error, time): "
                         + describe_path(model.m_path_, model.m_stop_reason_))
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


def _repeated_landmarks(model, n_landmarks, n_train) -> str:
    """Why m is below the m asked for (the sidebar's, Auto-tune's): rows drawn twice, as
    duplicate rows of the data are, are dropped (they would make K_mm singular)."""
    asked = model.embedding_.n_components
    drawn = min(int(asked), n_train) if isinstance(asked, (int, np.integer)) else n_landmarks
    if drawn <= n_landmarks:
        return ""
    return (f": {drawn} drawn, {drawn - n_landmarks} of them repeating a row already drawn "
            "(duplicate rows in the data) and dropped")


def learned_little(metrics) -> bool:
    """Whether the test error is within :data:`MAJORITY_MARGIN` of always predicting the
    majority class."""
    return metrics["test_error"] > metrics["majority_error"] - MAJORITY_MARGIN


def try_this_hints(run, split):
    """The Playground's suggestions for the current settings and the trained model."""
    settings = {name: current(name) for name in SETTINGS}
    st.markdown(try_this({**settings, "lam": run.model.lam_, "n_train": split.X_train.shape[0],
                          "train_error": run.metrics["train_error"],
                          "test_error": run.metrics["test_error"]},
                         learned_little(run.metrics)))


# The Playground's figure fits under the metrics in a 1280 × 800 window.
MARGINS_HEIGHT = 420


def landmarks_of(run):
    """The Nyström landmarks of a run, or None (LIBSVM's support vectors and ADMM's HSS
    skeletons are not landmarks)."""
    embedding = run.model.embedding_
    return embedding.landmarks_ if isinstance(embedding, NystromEmbedding) else None


def first_problem(history):
    """The rows of a history that belong to the first two-class problem (of one-vs-one or
    one-vs-rest)."""
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
        figure = decision_boundary_figure(
            surface, split.X_train, split.y_train, split.X_test, split.y_test, classes=classes,
            train_pred=run.metrics["train_pred"], test_pred=run.metrics["test_pred"],
            landmarks=landmarks_of(run), style=BoundaryStyle(
                axis_titles=split.feature_names[:2], height=boundary_height, legend_above=True))
        if boundary_height is None:
            with st.container(key=f"{key_prefix}boundary_figure"):
                st.plotly_chart(figure, width="stretch", height="stretch",
                                key=f"{key_prefix}boundary")
        else:
            st.plotly_chart(figure, width="stretch", key=f"{key_prefix}boundary")
    else:
        figure = margin_histogram_figure(
            run.model.margin_values(split.X_test), split.y_test, classes=classes,
            height=margins_height)
        st.plotly_chart(figure, width="stretch", key=f"{key_prefix}margins")


def boundary_replay(request, split, params, run, *, key, **figure_options):
    """The decision boundary replayed over the run's checkpoints (2-D data), on every
    second point of the run's decision-surface grid."""
    surface = cached.surface(request, split, params, run)
    xs, ys = surface.xs[::2], surface.ys[::2]
    st.plotly_chart(boundary_animation_figure(
        xs, ys, explorer.animation_frames(run, xs, ys), split.X_train, split.y_train,
        classes=class_names(split), landmarks=landmarks_of(run),
        axis_titles=split.feature_names[:2], **figure_options), width="stretch", key=key)
