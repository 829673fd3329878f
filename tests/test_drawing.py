"""Points drawn on the Playground: their text form (the ``points`` link parameter), the
edits a click makes, the dataset they make, its CSV and its exported code; and the app with
a drawing (AppTest), the clicks simulated through the chart's callback."""

from __future__ import annotations

import doctest
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snacks_core.datasets import drawn, load_csv, split_dataset
from snacks_core.datasets.drawn import (
    CLASSES,
    EXAMPLE_POINTS,
    MAX_POINTS,
    add_point,
    decode_points,
    describe_points,
    drawn_dataset,
    encode_points,
    erase_nearest,
    held_out_mask,
    holdout_period,
    missing_points,
    points_csv,
)

hundredths = st.integers(-100, 100)
drawings = st.lists(st.tuples(st.sampled_from(CLASSES), hundredths, hundredths),
                    max_size=MAX_POINTS).map(
    lambda points: [(label, x / 100, y / 100) for label, x, y in points])


def test_examples_in_the_docstrings():
    assert doctest.testmod(drawn).failed == 0


@settings(max_examples=200, deadline=None)
@given(drawings)
def test_text_form_round_trips(points):
    text = encode_points(points)
    decoded = decode_points(text)
    assert [p[0] for p in decoded] == [p[0] for p in points]
    np.testing.assert_allclose(np.array([p[1:] for p in decoded]).reshape(-1, 2),
                               np.array([p[1:] for p in points]).reshape(-1, 2), atol=1e-12)
    assert encode_points(decoded) == text
    # Compact enough for a link: at most 10 characters a point ('a-100,-100').
    assert len(text) <= 10 * len(points)


@pytest.mark.parametrize("text, message", [
    ("a10", "unreadable drawing at character 1"),
    ("a10,20c5,5", "unreadable drawing at character 7"),
    ("a10,20 b5,5", "unreadable drawing at character 7"),
    ("A10,20", "unreadable drawing at character 1"),
    ("a1.5,2", "unreadable drawing at character 1"),
    ("a10,20b101,0", "point 2 ('b101,0') is off the plane"),
    ("a-120,0", "off the plane"),
    ("a10,20,30", "unreadable drawing at character 7"),
    ("a" + "0,0a" * MAX_POINTS + "0,0", f"a drawing holds at most {MAX_POINTS}"),
])
def test_malformed_text_is_rejected_with_a_message(text, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_points(text)


def test_empty_text_is_an_empty_drawing():
    assert decode_points("") == [] and encode_points([]) == ""


def test_add_point_rounds_clips_and_stops_when_full():
    points = add_point([], "A", 0.123, -1.7)
    assert points == [("A", 0.12, -1.0)]
    with pytest.raises(ValueError, match="class is one of"):
        add_point(points, "C", 0, 0)
    full = [("B", 0.0, 0.0)] * MAX_POINTS
    with pytest.raises(ValueError, match="full"):
        add_point(full, "A", 0, 0)


@settings(max_examples=100, deadline=None)
@given(drawings, hundredths, hundredths)
def test_erase_removes_the_nearest_point_within_reach(points, x, y):
    x, y = x / 100, y / 100
    after = erase_nearest(points, x, y)
    # Brute force: the distances, the nearest first in the order drawn.
    distances = [np.hypot(p[1] - x, p[2] - y) for p in points]
    if not points or min(distances) > drawn.ERASE_RADIUS:
        assert after == points
    else:
        k = int(np.argmin(distances))
        assert after == points[:k] + points[k + 1:]


@pytest.mark.parametrize("test_size, period", [(0.3, 3), (0.5, 2), (0.45, 2), (0.25, 4),
                                               (0.2, 5), (0.1, 10)])
def test_every_kth_point_of_a_class_is_held_out(test_size, period):
    assert holdout_period(test_size) == period
    labels = list("AABABBBAAABBABAB")
    points = [(label, 0.0, 0.0) for label in labels]
    mask = held_out_mask(points, test_size)
    seen = {"A": 0, "B": 0}
    for label, held in zip(labels, mask, strict=True):
        seen[label] += 1
        assert held == (seen[label] % period == 0)


def test_adding_a_point_moves_no_other_point_between_train_and_test():
    points = decode_points(EXAMPLE_POINTS)
    before = held_out_mask(points, 0.3)
    after = held_out_mask(add_point(points, "A", 0.0, 0.0), 0.3)
    assert np.array_equal(after[:-1], before)


def test_too_few_points_say_how_many_more():
    points = decode_points("a0,0a10,10b50,50")
    assert missing_points(points, 0.3) == {"A": 1, "B": 2}
    assert missing_points(decode_points(EXAMPLE_POINTS), 0.3) == {}
    with pytest.raises(ValueError, match="needs 1 more point of class A and 2 more points of "
                                         r"class B \(every 3rd point"):
        drawn_dataset("a0,0a10,10b50,50", test_size=0.3)


def test_drawn_dataset_holds_the_points_and_its_own_test_part():
    points = decode_points(EXAMPLE_POINTS)
    data = drawn_dataset(EXAMPLE_POINTS, test_size=0.3)
    mask = held_out_mask(points, 0.3)
    X = np.array([p[1:] for p in points])
    np.testing.assert_array_equal(data.X, X[~mask])
    np.testing.assert_array_equal(data.X_test, X[mask])
    assert list(data.y_test) == [p[0] for p, held in zip(points, mask, strict=True) if held]
    split = split_dataset(data, scaling="none")
    np.testing.assert_array_equal(split.X_test, X[mask])


def test_the_csv_loads_back_as_the_same_points():
    points = decode_points(EXAMPLE_POINTS)
    data = load_csv(points_csv(points).encode(), name="drawn_points.csv")
    np.testing.assert_allclose(data.X, np.array([p[1:] for p in points]))
    assert list(data.y) == [p[0] for p in points]


def test_describe_points():
    assert describe_points(decode_points("a0,0a1,1b2,2")) == "3 points: 2 of class A, 1 of class B"
    assert describe_points([("B", 0.0, 0.0)]) == "1 point: 0 of class A, 1 of class B"


def test_points_setting_reads_the_link_and_rejects_bad_text():
    from snacks_core.app.state import SETTINGS, parse_setting, query_params_for

    assert parse_setting("points", "a5,-5b-10,10") == "a5,-5b-10,10"
    assert parse_setting("points", "a05,-05") == "a5,-5"
    with pytest.raises(ValueError, match="unreadable drawing"):
        parse_setting("points", "a5;b6")
    assert "points" not in query_params_for({"points": SETTINGS["points"].default})
    assert query_params_for({"points": ""}) == {"points": ""}


def test_exported_code_rebuilds_the_drawn_dataset():
    from snacks_core.app.cached import DataRequest
    from snacks_core.app.snippets import dataset_code

    request = DataRequest("drawn:points", None, None, None, None, 0, 0.3, "standard", False,
                          points=EXAMPLE_POINTS)
    code = dataset_code(request, drawn_dataset(EXAMPLE_POINTS, 0.3))
    namespace = {}
    exec(code, namespace)  # noqa: S102 - our own generated code
    rebuilt = namespace["dataset"]
    expected = drawn_dataset(EXAMPLE_POINTS, 0.3)
    np.testing.assert_array_equal(rebuilt.X, expected.X)
    np.testing.assert_array_equal(rebuilt.X_test, expected.X_test)


def test_drawing_figure_is_a_fixed_plane_of_click_targets():
    from snacks_core.app.figures.drawing_plane import CLICK_STEP, drawing_figure

    points = decode_points(EXAMPLE_POINTS)
    X = np.array([p[1:] for p in points])
    y = np.array([p[0] for p in points])
    fig = drawing_figure(None, X, y, classes=np.array(CLASSES), plane=drawn.PLANE)
    grid = next(t for t in fig.data if t.name == "plane")
    ticks = np.arange(-1.0, 1.0 + 1e-9, CLICK_STEP)
    assert len(grid.x) == ticks.size ** 2
    np.testing.assert_allclose(np.unique(np.round(grid.x, 9)), ticks, atol=1e-9)
    assert grid.marker.opacity == 0 and grid.hoverinfo == "none" and not grid.showlegend
    assert fig.layout.dragmode is False
    assert tuple(fig.layout.xaxis.range) == (-1.0, 1.0) and fig.layout.xaxis.fixedrange
    assert tuple(fig.layout.yaxis.range) == (-1.0, 1.0) and fig.layout.yaxis.fixedrange
    assert sum(len(t.x) for t in fig.data if t.legendgroup == "train") == len(points)


def test_the_plane_shows_the_model_where_the_points_were_drawn():
    """f on the plane's grid is the model's f of the scaled point; the landmarks go back
    to where they were drawn."""
    from snacks_core import SnacksClassifier
    from snacks_core.app import drawing

    data = drawn_dataset(EXAMPLE_POINTS, 0.3)
    split = split_dataset(data, scaling="standard")
    model = SnacksClassifier(n_components=6, random_state=0).fit(split.X_train, split.y_train)
    surface = drawing._plane_surface("key", "model", split, model)
    assert surface.xs[0] == -1.0 and surface.xs[-1] == 1.0 and surface.ys[-1] == 1.0
    i, j = 17, 101
    scaled = split.preprocessing[0].transform([[surface.xs[j], surface.ys[i]]])
    assert surface.scores[i, j] == pytest.approx(model.decision_function(scaled)[0])
    np.testing.assert_allclose(drawing._to_plane(split, split.X_train), data.X, atol=1e-12)


class FakeState(dict):
    """Session state as the chart's callback sees it: keys and attributes."""

    __getattr__ = dict.get


@pytest.fixture
def session(monkeypatch):
    import streamlit

    state = FakeState(points="", draw_mode="A")
    monkeypatch.setattr(streamlit, "session_state", state)
    return state


def click(state, x, y):
    """What the chart reports for a click on the grid point (x, y), and the callback."""
    from snacks_core.app import drawing

    state[drawing._chart_key()] = SimpleNamespace(
        selection=SimpleNamespace(points=[{"x": x, "y": y, "curve_number": 9}]))
    drawing._on_click()


def test_a_click_adds_or_erases_and_renews_the_chart(session):
    from snacks_core.app import drawing

    first = drawing._chart_key()
    click(session, -0.5, 0.5)
    click(session, -0.5, 0.5)  # the same spot again: a new chart, so a new selection
    session["draw_mode"] = "B"
    click(session, 0.42, -0.3)
    assert decode_points(session["points"]) == [("A", -0.5, 0.5), ("A", -0.5, 0.5),
                                                ("B", 0.42, -0.3)]
    assert drawing._chart_key() != first
    session["draw_mode"] = "erase"
    click(session, 0.44, -0.32)
    click(session, 0.9, 0.9)  # nothing within reach
    assert decode_points(session["points"]) == [("A", -0.5, 0.5), ("A", -0.5, 0.5)]


def test_a_click_on_a_full_drawing_adds_nothing(session):
    session["points"] = encode_points([("A", 0.0, 0.0)] * MAX_POINTS)
    click(session, 0.5, 0.5)
    assert len(decode_points(session["points"])) == MAX_POINTS


# ----------------------------------------------------------------------------- the app


@pytest.mark.slow
def test_a_drawing_trains_and_clear_and_example_work():
    from snacks_core.app.state import Keys
    from test_app import assert_clean, figure_data, metric, run_app

    # The export is built while its expander is open.
    at = run_app(dataset="drawn:points", **{Keys.EXPORT: True})
    assert_clean(at)
    assert any(m.value == "**12 points: 6 of class A, 6 of class B**" for m in at.markdown)
    assert metric(at, "Test error") == "0.0 %"
    plane = next(c for c in at.get("plotly_chart") if "drawing_plane_" in c.proto.id)
    names = [t.get("name") for t in figure_data(plane)]
    assert {"f(x)", "f = 0", "train · A", "test · B", "plane"} <= set(names)
    export = next(c.value for c in at.code if "drawn_dataset" in c.value)
    assert f"drawn_dataset({EXAMPLE_POINTS!r}, test_size=0.3)" in export

    at.button(key="drawing_clear").click().run()
    assert_clean(at)
    assert at.session_state["points"] == ""
    assert any(m.value == "**0 points: 0 of class A, 0 of class B**" for m in at.markdown)
    assert any("Training needs at least 3 points of each class: add 3 more of class A and "
               "3 more of class B" in i.value for i in at.info)
    assert not at.metric

    at.session_state["points"] = "a-50,50a-40,40a-60,30b50,-50b40,-40"
    at.run()
    assert any("add 1 more of class B" in i.value for i in at.info)
    at.session_state["points"] = "a-50,50a-40,40a-60,30b50,-50b40,-40b60,-30"
    at.run()
    assert_clean(at)
    assert not at.info and metric(at, "Test error") == "0.0 %"
    assert any(m.value == "**6 points: 3 of class A, 3 of class B**" for m in at.markdown)

    at.button(key="drawing_example").click().run()
    assert_clean(at)
    assert at.session_state["points"] == EXAMPLE_POINTS


@pytest.mark.slow
def test_a_bad_drawing_in_a_link_is_reported_and_replaced():
    from test_app import assert_clean, run_app

    at = run_app({"dataset": "drawn:points", "points": "a10,10b5"})
    assert_clean(at)
    assert any("points='a10,10b5'" in w.value and "unreadable drawing" in w.value
               for w in at.warning)
    assert at.session_state["points"] == EXAMPLE_POINTS


@pytest.mark.slow
def test_other_pages_explain_a_drawing_too_small_to_train():
    from test_app import run_app

    at = run_app(dataset="drawn:points", points="a10,10b5,5")
    at.switch_page("app_pages/convergence.py").run()
    assert not at.exception
    assert any("the drawing needs 2 more points of class A" in e.value for e in at.error)


@pytest.mark.slow
def test_exported_code_of_a_drawing_gives_the_apps_test_error(tmp_path, monkeypatch):
    """Overlapping classes, so that the error is not 0: the exported code, run alone,
    prints the test error the app shows."""
    from snacks_core.app.state import Keys
    from test_app import assert_clean, metric, run_app
    from test_export import run_exported

    rng = np.random.default_rng(0)
    points = [(str(label), *xy) for label, xy in zip(
        rng.choice(CLASSES, 30), np.round(rng.uniform(-1, 1, (30, 2)), 2), strict=True)]
    monkeypatch.chdir(tmp_path)
    at = run_app(dataset="drawn:points", points=encode_points(points), **{Keys.EXPORT: True})
    assert_clean(at)
    shown = metric(at, "Test error")
    assert shown != "0.0 %"
    code = next(c.value for c in at.code if "drawn_dataset" in c.value)
    stdout = run_exported(code, tmp_path, "test_size=0.3, scaling='none', random_state=0")
    printed = float(stdout.split("test error:")[1].split()[0])
    assert f"{100 * printed:.1f} %" == shown
