"""Figure builders: the right traces, values and annotations, without a browser."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import RegularGridInterpolator

from snacks_core import SnacksClassifier
from snacks_core.app.figures.animation import boundary_animation_figure
from snacks_core.app.figures.boundary import (
    MAX_CROSSES,
    MAX_TEST_POINTS,
    MAX_TRAIN_POINTS,
    BoundaryStyle,
    DecisionSurface,
    decision_boundary_figure,
    decision_surface,
    margin_histogram_figure,
    rename_test_points,
)
from snacks_core.app.figures.convergence import LOG_PANEL_DECADES, convergence_figure
from snacks_core.app.figures.data import class_balance_figure, data_scatter_figure
from snacks_core.app.figures.robustness import (
    boundary_thumbnails_figure,
    heatmap_figure,
    robust_color_range,
)
from snacks_core.app.figures.solvers import solver_bar_figure
from snacks_core.app.figures.spectrum import approximation_error_figure, spectrum_figure
from snacks_core.app.figures.style import DECISION_CLIP, SVG_MAX_POINTS
from snacks_core.datasets import make_synthetic, split_dataset


@pytest.fixture(scope="module")
def moons():
    split = split_dataset(make_synthetic("moons", 200, random_state=0), random_state=0)
    model = SnacksClassifier(n_components=15, lam=1e-3, gamma=1.0, random_state=0)
    model.fit(split.X_train, split.y_train)
    return split, model


def test_decision_surface_is_the_decision_function(moons):
    split, model = moons
    surface = decision_surface(model, split.X_train, resolution=30)
    assert surface.scores.shape == (30, 30)
    i, j = 7, 19
    point = np.array([[surface.xs[j], surface.ys[i]]])
    assert surface.scores[i, j] == pytest.approx(model.decision_function(point)[0])
    assert surface.xs[0] < split.X_train[:, 0].min() and surface.xs[-1] > split.X_train[:, 0].max()
    with pytest.raises(ValueError, match="2-D"):
        decision_surface(model, np.zeros((3, 3)))


def test_boundary_figure_layers(moons):
    split, model = moons
    surface = decision_surface(model, split.X_train, resolution=30)
    fig = decision_boundary_figure(
        surface, split.X_train, split.y_train, split.X_test, split.y_test, classes=[-1, 1],
        train_pred=model.predict(split.X_train), test_pred=model.predict(split.X_test),
        landmarks=model.embedding_.landmarks_)
    names = [trace.name for trace in fig.data]
    assert names[:3] == ["f(x)", "f = 0", "margins f = ±1"]
    fill, boundary, margins = fig.data[:3]
    assert fill.type == "heatmap" and fill.zsmooth == "fast"
    np.testing.assert_array_equal(fill.z, np.clip(surface.scores.astype(np.float32),
                                                  -DECISION_CLIP, DECISION_CLIP))
    # The curves traced here lie where the grid, linearly interpolated, is 0 and ±1, and
    # where the model itself is (to the grid's resolution).
    grid = RegularGridInterpolator((surface.ys, surface.xs), surface.scores.astype(np.float32),
                                   bounds_error=False, fill_value=None)
    for trace, levels in ((boundary, [0.0]), (margins, [-1.0, 1.0])):
        points = np.column_stack([trace.x, trace.y])
        points = points[np.isfinite(points).all(axis=1)]
        assert len(points) > 10
        on_grid = grid(points[:, ::-1])
        nearest = np.min(np.abs(on_grid[:, None] - np.array(levels)[None]), axis=1)
        np.testing.assert_allclose(nearest, 0.0, atol=1e-5)
        assert set(np.round(on_grid).astype(int)) == {int(level) for level in levels}
        np.testing.assert_allclose(np.abs(model.decision_function(points)),
                                   np.abs(on_grid), atol=0.1)
    assert {"train · -1", "train · 1", "test · -1", "test · 1"} <= set(names)
    assert "landmarks (m = 15)" in names
    wrong = np.sum(model.predict(split.X_train) != split.y_train) + np.sum(
        model.predict(split.X_test) != split.y_test)
    assert f"misclassified ({wrong})" in names


def test_boundary_style_sets_titles_legend_and_point_caps(moons):
    split, model = moons
    surface = decision_surface(model, split.X_train, resolution=10)
    style = BoundaryStyle(axis_titles=("a", "b"), title="T", height=None,
                          legend_above=True, max_train=50, max_test=20, max_crosses=5)
    fig = decision_boundary_figure(
        surface, split.X_train, split.y_train, split.X_test, split.y_test, classes=[-1, 1],
        train_pred=-split.y_train, test_pred=-split.y_test, style=style)
    assert fig.layout.title.text == "T" and fig.layout.height is None
    assert fig.layout.legend.orientation == "h"
    assert fig.layout.xaxis.title.text == "a" and fig.layout.yaxis.title.text == "b"
    shown = lambda prefix: sum(len(t.x) for t in fig.data if t.name.startswith(prefix))  # noqa: E731
    assert shown("train") <= 52 and shown("test") <= 22 and shown("misclassified") == 5


def test_multiclass_boundary_shows_regions():
    split = split_dataset(make_synthetic("blobs", 150, random_state=0))
    model = SnacksClassifier(n_components=10, gamma=1.0, random_state=0).fit(split.X_train,
                                                                            split.y_train)
    surface = decision_surface(model, split.X_train, resolution=20)
    assert surface.scores.shape == (20, 20, 3)
    fig = decision_boundary_figure(surface, split.X_train, split.y_train,
                                   classes=[0, 1, 2])
    assert fig.data[0].type == "heatmap"
    assert set(np.unique(fig.data[0].z)) <= {0, 1, 2}


def test_convergence_figure_gap_is_relative_to_the_best():
    histories = {
        "snacks": {"iteration": np.arange(3.0), "epoch": np.arange(3.0), "time": np.arange(3.0),
                   "objective": np.array([1.0, 0.5, 0.25]), "gap": np.array([1.0, 0.4, 0.1]),
                   "validation_error": np.array([0.5, 0.2, 0.1])},
        "pegasos": {"iteration": np.arange(2.0), "epoch": np.arange(2.0), "time": np.arange(2.0),
                    "objective": np.array([1.0, 0.3]), "gap": np.full(2, np.nan),
                    "validation_error": np.full(2, np.nan)},
    }
    fig = convergence_figure(histories, x_axis="iteration")
    excess = [trace for trace in fig.data if trace.yaxis == "y2" and trace.name == "snacks"][0]
    np.testing.assert_allclose(excess.y[:2], [0.75, 0.25])
    assert any("certified duality gap" in (trace.name or "") for trace in fig.data)
    assert fig.layout.yaxis2.type == "log"
    with pytest.raises(ValueError, match="x_axis"):
        convergence_figure(histories, x_axis="hours")


def test_animation_has_one_frame_per_checkpoint(moons):
    split, _ = moons
    xs, ys = np.linspace(-2, 2, 5), np.linspace(-1, 1, 4)
    frames = [(f"epoch {k}", np.full((4, 5), float(k))) for k in range(3)]
    fig = boundary_animation_figure(xs, ys, frames, split.X_train, split.y_train,
                                    classes=[-1, 1])
    assert [frame.name for frame in fig.frames] == ["epoch 0", "epoch 1", "epoch 2"]
    assert len(fig.layout.sliders[0].steps) == 3
    with pytest.raises(ValueError, match="no checkpoints"):
        boundary_animation_figure(xs, ys, [], split.X_train, split.y_train,
                                  classes=[-1, 1])


def test_spectrum_is_normalized_and_approximation_has_error_bars():
    fig = spectrum_figure({"a": np.array([4.0, 2.0, 1.0, 0.0])}, threshold=0.3)
    np.testing.assert_allclose(fig.data[0].y[:3], [1.0, 0.5, 0.25])
    assert np.isnan(fig.data[0].y[3])
    assert fig.layout.yaxis.type == "log"
    fig = approximation_error_figure([5, 10], {"uniform": (np.array([0.5, 0.1]),
                                                           np.array([0.6, 0.01]))})
    minus = np.asarray(fig.data[0].error_y.arrayminus)
    assert np.all(minus < np.array([0.5, 0.1]))


def test_heatmap_marks_the_best_cell():
    mean = np.array([[0.3, 0.2], [0.1, np.nan]])
    std = np.zeros((2, 2))
    fig = heatmap_figure([5, 50], [1e-4, 1e-2], mean, std, np.ones((2, 2)),
                         row_label="m", col_label="λ")
    text = np.asarray(fig.data[0].text)
    # The spread is in the hover, not in the cell, whose label must fit it.
    assert text[1, 0] == "★ 10.0"
    assert "± %{customdata[2]" in fig.data[1].hovertemplate
    assert sum(cell.startswith("★") for cell in text.ravel()) == 1
    assert text[1, 1] == ""
    assert list(fig.data[0].x) == ["0.0001", "0.01"]


def test_heatmap_marks_the_cells_of_a_stopped_sweep_with_fewer_fits():
    """A stopped sweep's cells averaged over fewer fits than asked carry a *."""
    mean = np.array([[0.3, 0.2], [0.1, np.nan]])
    partial = np.array([[False, True], [False, False]])
    fig = heatmap_figure([5, 50], [1e-4, 1e-2], mean, np.zeros((2, 2)), np.ones((2, 2)),
                         row_label="m", col_label="λ", partial=partial)
    text = np.asarray(fig.data[0].text)
    assert text[0, 1] == "20.0*" and text[0, 0] == "30.0" and text[1, 0] == "★ 10.0"


def test_solver_bars_and_data_figures():
    rows = [{"solver": "Snacks (ASSG)", "embedding time (s)": 0.1, "training time (s)": 0.2,
             "test error": 0.05},
            {"solver": "LIBSVM (exact)", "embedding time (s)": 0.0, "training time (s)": 0.5,
             "test error": 0.04}]
    fig = solver_bar_figure(rows)
    assert len(fig.data) == 3
    fig = class_balance_figure({-1: 30, 1: 10}, {-1: 10, 1: 3})
    assert list(fig.data[0].x) == [30, 10]
    X = np.random.default_rng(0).normal(size=(300, 2))
    y = np.where(X[:, 0] > 0, 1, -1)
    fig = data_scatter_figure(X, y, classes=[-1, 1], max_points=100)
    assert sum(len(trace.x) for trace in fig.data) == 100


def test_margin_histogram_by_class():
    scores = np.array([-2.0, -0.5, 0.5, 1.5])
    fig = margin_histogram_figure(scores, np.array([-1, -1, 1, 1]), classes=[-1, 1])
    assert [list(trace.x) for trace in fig.data] == [[-2.0, -0.5], [0.5, 1.5]]
    multi = margin_histogram_figure(np.array([2.0, 3.0]), np.array([0, 1]), classes=[0, 1])
    assert [list(trace.x) for trace in multi.data] == [[2.0], [3.0]]


def test_boundary_at_scale_draws_a_stratified_sample_with_counts(moons):
    split, model = moons
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50_000, 2))
    y = np.where(rng.random(50_000) < 0.2, 1, -1)
    wrong = np.where(rng.random(50_000) < 0.1, -y, y)
    surface = decision_surface(model, X[:1000], resolution=20)
    landmarks = X[:30]
    fig = decision_boundary_figure(surface, X, y, X[:20_000], y[:20_000],
                                   classes=[-1, 1], train_pred=wrong,
                                   test_pred=wrong[:20_000], landmarks=landmarks)
    points = [t for t in fig.data if t.name.startswith(("train", "test"))]
    assert sum(len(t.x) for t in points if t.name.startswith("train")) <= \
        MAX_TRAIN_POINTS + 2
    assert sum(len(t.x) for t in points if t.name.startswith("test")) <= \
        MAX_TEST_POINTS + 2
    # The legend says how many of how many; the classes keep their shares.
    minority = next(t for t in points if t.name.startswith("train · 1"))
    total = int(np.sum(y == 1))
    assert f"of {total:,} shown" in minority.name
    assert abs(len(minority.x) / MAX_TRAIN_POINTS - total / 50_000) < 0.01
    crosses = next(t for t in fig.data if t.name.startswith("misclassified"))
    assert len(crosses.x) == MAX_CROSSES and "shown" in crosses.name
    # Landmarks are all drawn, last (on top).
    assert fig.data[-1].name == "landmarks (m = 30)" and len(fig.data[-1].x) == 30


def test_convergence_axes_are_honest():
    flat = {"iteration": np.arange(4.0), "epoch": np.arange(4.0),
            "time": np.array([0.0, 0.001, 0.01, 0.1]),
            "objective": np.array([1.0, 0.5, 0.4, 0.39]), "gap": np.full(4, np.nan),
            "validation_error": np.array([0.5, 0.233, 0.233, 0.233])}
    single = {"iteration": np.array([7.0]), "epoch": np.array([7.0]), "time": np.array([0.05]),
              "objective": np.array([0.38]), "gap": np.array([np.nan]),
              "validation_error": np.array([0.233])}
    fig = convergence_figure({"snacks": flat, "liblinear": single}, x_axis="time",
                             labels={"snacks": "Snacks (ASSG)",
                                     "liblinear": "LIBLINEAR"})
    # The test-error panel goes from 0 to just above the largest error, not −50 % … 100 %.
    low, high = fig.layout.yaxis3.range
    assert low == 0 and 0.233 < high < 0.3
    # Wall time on a log axis (points near 0 are not crammed), t = 0 left out.
    assert fig.layout.xaxis3.type == "log"
    assert np.isnan(fig.data[0].x[0])
    names = [t.name for t in fig.data if t.showlegend is not False]
    assert "Snacks (ASSG)" in names and "LIBLINEAR (1 checkpoint)" in names
    dot = next(t for t in fig.data if t.name == "LIBLINEAR (1 checkpoint)")
    assert dot.mode == "markers"
    # No subplot titles under the legend: the panels are named by their y axes.
    assert not fig.layout.annotations
    assert fig.layout.yaxis.title.text == "F(w)"


def test_spectrum_round_off_and_symbols():
    fig = spectrum_figure({"γ": np.array([2.0, 1.0, 1e-9, 1e-16, 1e-18])})
    y = fig.data[0].y
    assert y[2] == pytest.approx(5e-10) and np.isnan(y[3]) and np.isnan(y[4])
    assert fig.layout.yaxis.title.text == "μᵢ / μ₁"
    fig = approximation_error_figure([5, 10], {"a": (np.ones(2), np.zeros(2))})
    assert "‖" not in fig.layout.yaxis.title.text


def test_heatmap_colour_scale_ignores_one_outlier():
    mean = np.full((4, 4), 0.1) + np.arange(16).reshape(4, 4) * 0.002
    mean[3, 3] = 0.458
    fig = heatmap_figure([1, 2, 3, 4], [1, 2, 3, 4], mean, np.zeros((4, 4)),
                         np.ones((4, 4)), row_label="γ", col_label="λ", spread=False)
    heatmap = fig.data[0]
    assert heatmap.zmax < 20 and heatmap.zmin == pytest.approx(10.0)
    assert "darkest" in heatmap.colorbar.title.text
    assert np.asarray(heatmap.text)[3, 3] == "45.8"
    low, high = robust_color_range(np.array([5.0, 10.0, 40.0]))
    assert (low, high) == (5.0, 40.0)


def test_solver_bar_labels_fit_in_their_panel():
    rows = [{"solver": "A", "embedding time (s)": 0.1, "training time (s)": 0.2,
             "test error": 0.233},
            {"solver": "B", "embedding time (s)": 0.1, "training time (s)": 0.3,
             "test error": 0.1}]
    fig = solver_bar_figure(rows, majority_error=0.233)
    assert fig.layout.xaxis.range[1] >= 1.3 * 0.233
    assert any("majority class 23.3%" in (a.text or "") for a in fig.layout.annotations)


def test_boundary_thumbnails_lay_out_one_model_per_cell():
    """One thumbnail per cell with a model, in grid order, titled with its error; the best
    framed and starred; the values label the left column and the bottom row."""
    xs = np.linspace(-1.0, 1.0, 12)
    gx, gy = np.meshgrid(xs, xs)

    def surface(shift):
        return DecisionSurface(xs, xs, gx - shift)

    surfaces = [[surface(-0.5), surface(0.0), None], [surface(0.5), surface(0.2), surface(0.1)]]
    errors = np.array([[0.1, 0.05, np.nan], [0.2, 0.125, 0.3]])
    X = np.column_stack([xs, xs])
    y = np.where(xs > 0, 1, -1)
    fig = boundary_thumbnails_figure(
        surfaces, errors, [50, 10], [1e-3, 1e-2, 1e-1], row_symbol="m", col_symbol="λ",
        X=X, y=y, classes=[-1, 1], best=(1, 1))
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["10.0 %", "5.0 %", "20.0 %", "★ 12.5 %", "30.0 %"]
    fills = [t for t in fig.data if t.type == "contour"]
    assert len(fills) == 5
    # The fill is f in the decision colours (to ±DECISION_CLIP) on the thumbnail of its
    # cell, with its line f = 0.
    assert [t.xaxis for t in fills] == ["x", "x2", "x4", "x5", "x6"]
    np.testing.assert_array_equal(fills[1].z, gx.astype(np.float32))
    assert (fills[1].zmin, fills[1].zmax) == (-DECISION_CLIP, DECISION_CLIP)
    assert fills[0].contours.coloring == "heatmap"
    assert fills[0].contours.start == fills[0].contours.end == 0
    points = [t for t in fig.data if t.type == "scatter"]
    assert len(points) == 10 and sum(len(t.x) for t in points[:2]) == len(xs)
    frame = fig.layout.shapes[0]
    assert (frame.xref, frame.yref) == ("x5 domain", "y5 domain")
    assert fig.layout.yaxis.title.text == "m = 50" and fig.layout.yaxis4.title.text == "m = 10"
    assert [fig.layout[f"xaxis{k}"].title.text for k in (4, 5, 6)] == \
        ["λ = 0.001", "λ = 0.01", "λ = 0.1"]
    assert fig.layout.xaxis.range == (-1.0, 1.0)


def test_boundary_thumbnails_of_three_classes_show_regions():
    xs = np.linspace(0.0, 1.0, 8)
    scores = np.stack([*np.meshgrid(xs, xs), np.full((8, 8), 0.5)], axis=2)
    surfaces = [[DecisionSurface(xs, xs, scores)]]
    fig = boundary_thumbnails_figure(
        surfaces, np.array([[0.25]]), [5], [1e-2], row_symbol="γ", col_symbol="λ",
        X=np.zeros((3, 2)), y=np.array([0, 1, 2]), classes=[0, 1, 2])
    regions = next(t for t in fig.data if t.type == "heatmap")
    np.testing.assert_array_equal(regions.z, np.argmax(scores, axis=2))
    assert [a.text for a in fig.layout.annotations] == ["25.0 %"]
    assert not fig.layout.shapes
    assert fig.layout.xaxis.title.text == "λ = 0.01" and fig.layout.yaxis.title.text == "γ = 5"


def test_test_points_renamed_for_a_folds_held_out_rows(moons):
    split, model = moons
    surface = decision_surface(model, split.X_train, resolution=10)
    fig = rename_test_points(decision_boundary_figure(
        surface, split.X_train, split.y_train, split.X_test, split.y_test, classes=[-1, 1]),
        "validation")
    names = [t.name for t in fig.data if t.legendgroup in ("test", "validation")]
    assert names and all(n.startswith("validation · ") for n in names)
    assert all("validation" in t.hovertemplate for t in fig.data if t.legendgroup == "validation")
    assert any(t.name.startswith("train · ") for t in fig.data)


def test_convergence_without_errors_has_no_error_panel():
    """A sweep's solves record no error: two panels, the epochs under the second."""
    history = {"iteration": np.arange(3.0), "epoch": np.arange(3.0), "time": np.arange(3.0),
               "objective": np.array([1.0, 0.5, 0.4]), "gap": np.full(3, np.nan),
               "validation_error": np.full(3, np.nan)}
    fig = convergence_figure({"snacks": history})
    assert "yaxis3" not in fig.layout and fig.layout.xaxis2.title.text.startswith("epochs")
    history["validation_error"] = np.array([np.nan, 0.2, 0.1])
    fig = convergence_figure({"snacks": history})
    assert fig.layout.yaxis3.title.text == "test error"


def test_a_short_gap_panel_shows_at_most_ten_decades_with_spaced_ticks():
    """A heatmap cell's convergence figure (440 px, two panels) whose gap falls from 0.1 to
    1e-16: the panel shows 10 decades, a tick every 2 (labels about 30 px apart)."""
    k = np.arange(16)
    history = {"iteration": k, "epoch": k.astype(float), "time": k.astype(float),
               "objective": 1.0 + np.logspace(-1, -16, 16), "gap": np.logspace(-1, -16, 16),
               "validation_error": np.full(16, np.nan)}
    fig = convergence_figure({"snacks": history}, height=440)
    low, high = fig.layout.yaxis2.range
    assert high - low == LOG_PANEL_DECADES and high == -1
    assert fig.layout.yaxis2.dtick == 2
    tall = convergence_figure({"snacks": history}, height=1400)
    assert tall.layout.yaxis2.dtick == 1


def test_heatmap_labels_shrink_to_fit_an_extended_grid():
    """Twenty λ columns (an 8-value axis extended six steps each way): labels without
    decimals in the smallest font; five columns keep one decimal at full size."""
    rng = np.random.default_rng(0)
    wide = heatmap_figure(list(range(8)), list(range(20)), rng.uniform(0, 0.5, (8, 20)),
                          np.zeros((8, 20)), np.ones((8, 20)), row_label="m",
                          col_label="λ")
    assert all("." not in cell for cell in np.asarray(wide.data[0].text).ravel())
    assert wide.data[0].textfont.size == 8
    five = heatmap_figure(list(range(5)), list(range(5)), rng.uniform(0, 0.5, (5, 5)),
                          np.zeros((5, 5)), np.ones((5, 5)), row_label="m",
                          col_label="λ")
    assert all(cell.split()[-1].count(".") == 1 for cell in np.asarray(five.data[0].text).ravel())
    assert five.data[0].textfont.size == 13


def test_a_figure_draws_its_markers_in_one_kind_svg_when_few(moons):
    """Few markers (the Playground's defaults) are SVG, which draws sooner than WebGL
    starts; beyond SVG_MAX_POINTS every marker trace is WebGL (one kind per figure, else
    WebGL would cover the SVG markers; the curves f = 0 and ±1 are SVG lines under them)."""
    split, model = moons
    surface = decision_surface(model, split.X_train, resolution=20)

    def marker_types(X, y):
        fig = decision_boundary_figure(surface, X, y, X[:50], y[:50], classes=[-1, 1],
                                       train_pred=-y, test_pred=-y[:50],
                                       landmarks=model.embedding_.landmarks_)
        return {t.type for t in fig.data if t.type.startswith("scatter") and "markers" in t.mode}

    assert marker_types(split.X_train, split.y_train) == {"scatter"}
    rng = np.random.default_rng(0)
    X = rng.normal(size=(SVG_MAX_POINTS, 2))
    y = np.where(rng.random(SVG_MAX_POINTS) < 0.5, 1, -1)
    assert marker_types(X, y) == {"scattergl"}
