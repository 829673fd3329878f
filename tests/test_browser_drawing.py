"""Drawing your own points on the Playground, in a real browser: clicks on the plane add
points of the chosen class, Erase and Clear remove them, the boundary is retrained and
redrawn after each click, and the link carries the points.

Uses the server and browser of test_browser.py (Streamlit headless, Debian's chromium).
"""

from __future__ import annotations

import re
import urllib.parse

import pytest

from snacks_core.datasets.drawn import decode_points
from test_browser import assert_no_error_shown, browser, server, wait_until_idle  # noqa: F401

pytestmark = pytest.mark.slow  # each test drives the app in Chromium

PLANE = ".st-key-drawing_figure .js-plotly-plot"
# Page coordinates of a point (x1, x2) of the plane, from the chart's own axes.
TO_PAGE = """(gd, point) => {
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
    const box = gd.getBoundingClientRect();
    return [box.left + xa._offset + xa.l2p(point[0]), box.top + ya._offset + ya.l2p(point[1])];
}"""
# What the plane draws: the points of each legend entry, and f(x) (None before a model
# exists), to see that a click redrew the boundary.
DRAWN = """(gd) => {
    const counts = {};
    for (const trace of gd._fullData) {  // decoded, unlike gd.data's typed arrays
        if (trace.legendgroup === 'train' || trace.legendgroup === 'test') {
            counts[trace.name] = trace._length;
        }
    }
    const fill = gd.data.find(trace => trace.name === 'f(x)');
    // f(x) as sent (nested numbers or an encoded typed array): compared, not read.
    return [counts, fill ? JSON.stringify(fill.z) : null];
}"""
COUNT = re.compile(r"(\d+) points?: (\d+) of class A, (\d+) of class B")


def counts(page):
    """(points, of class A, of class B) as the page says."""
    match = COUNT.search(page.inner_text("body"))
    assert match, page.inner_text("body")[:2000]
    return tuple(int(g) for g in match.groups())


def click_plane(page, x1, x2):
    plane = page.locator(PLANE).first
    plane.scroll_into_view_if_needed()
    x, y = plane.evaluate(TO_PAGE, [x1, x2])
    page.mouse.click(x, y)
    wait_until_idle(page)
    page.locator(PLANE).first.wait_for(timeout=60_000)
    page.wait_for_timeout(300)


def choose(page, mode):
    page.locator("button").filter(has_text=re.compile(f"^{mode}$")).click()
    wait_until_idle(page)


def url_points(page):
    query = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query,
                                  keep_blank_values=True)
    return decode_points(query["points"][0]) if "points" in query else None


@pytest.mark.parametrize("width, height", [(1400, 1000), (1024, 768)])
def test_drawing_points_by_clicking(server, browser, tmp_path_factory, width, height):  # noqa: F811
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    folder = tmp_path_factory.getbasetemp() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    try:
        page.goto(f"{server}/?dataset=drawn:points", wait_until="domcontentloaded")
        page.wait_for_selector("[data-testid='stSidebar']", timeout=60_000)
        wait_until_idle(page)
        page.locator(PLANE).first.wait_for(timeout=60_000)
        # The example drawing trains at once.
        assert counts(page) == (12, 6, 6)
        assert page.locator("[data-testid='stMetric']").count() >= 7
        page.get_by_role("button", name="Clear", exact=True).click()
        wait_until_idle(page)
        assert counts(page) == (0, 0, 0)
        assert page.get_by_text("Training needs at least 3 points of each class").count() == 1
        assert url_points(page) == []

        # Class A on the left, class B on the right; the same spot twice adds two points.
        for x1, x2 in [(-0.6, 0.5), (-0.5, -0.2), (-0.5, -0.2)]:
            before = counts(page)[0]
            click_plane(page, x1, x2)
            assert counts(page)[0] == before + 1
        choose(page, "Add class B")
        for x1, x2 in [(0.5, 0.4), (0.6, -0.3), (0.3, 0.0)]:
            click_plane(page, x1, x2)
        assert counts(page) == (6, 3, 3)
        page.screenshot(path=str(folder / f"drawing_six_points_{width}.png"))
        # Two classes of three: trained, the boundary drawn over the points.
        assert page.get_by_text("Training needs at least").count() == 0
        legend, first_fill = page.locator(PLANE).first.evaluate(DRAWN)
        assert first_fill is not None
        assert sum(legend.values()) == 6

        choose(page, "Add class A")
        click_plane(page, -0.2, 0.7)
        assert counts(page) == (7, 4, 3)
        legend, fill = page.locator(PLANE).first.evaluate(DRAWN)
        assert sum(legend.values()) == 7 and fill != first_fill, "the boundary was not redrawn"
        # The link carries the drawing: each point within a click's precision.
        drawn = url_points(page)
        assert [p[0] for p in drawn] == ["A", "A", "A", "B", "B", "B", "A"]
        for (_, x1, x2), (want_x1, want_x2) in zip(
                drawn, [(-0.6, 0.5), (-0.5, -0.2), (-0.5, -0.2), (0.5, 0.4), (0.6, -0.3),
                        (0.3, 0.0), (-0.2, 0.7)], strict=True):
            assert abs(x1 - want_x1) <= 0.03 and abs(x2 - want_x2) <= 0.03
        page.screenshot(path=str(folder / f"drawing_{width}.png"))

        # Erase removes the point under the click, then nothing where there is none.
        choose(page, "Erase")
        click_plane(page, 0.6, -0.3)
        assert counts(page) == (6, 4, 2)
        click_plane(page, 0.0, -0.8)
        assert counts(page) == (6, 4, 2)
        assert page.get_by_text("Training needs at least 3 points of each class").count() == 1
        assert [p[0] for p in url_points(page)] == ["A", "A", "A", "B", "B", "A"]

        page.get_by_role("button", name="Clear", exact=True).click()
        wait_until_idle(page)
        assert counts(page) == (0, 0, 0)
        assert url_points(page) == []
        assert_no_error_shown(page, f"drawing at {width}x{height}")
        assert not errors, f"JavaScript errors while drawing: {errors}"
    finally:
        page.close()
