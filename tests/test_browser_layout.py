"""The layout on a projector (1024 × 768) and a laptop (1400 × 1000), in a real browser:
every lesson's banner shows all its text and its button, each figure's plotting area is at
least 300 px wide, and the wide tables show every column header without scrolling.

Uses the server and browser of test_browser.py (Streamlit headless, Debian's chromium);
the screenshots go to a temporary folder.
"""

from __future__ import annotations

import pytest

from snacks_core.app.teaching import LESSONS
from test_browser import (  # noqa: F401
    SCREENS,
    assert_no_error_shown,
    browser,
    click_lesson,
    open_page,
    server,
    wait_until_idle,
)

pytestmark = pytest.mark.slow  # each test drives the app in Chromium

# A figure's plotting area (the axes, without legend or colour bar) narrower than this is
# unreadable on a projector.
MIN_PLOT_WIDTH = 300

# What is cut in the lesson banner: a box whose content overflows it (scrolling or
# clipped), a button whose label does not fit on one line inside it, text outside the box.
BANNER_CUTS = """() => {
    const banner = document.querySelector('.st-key-lesson_banner');
    if (!banner) return ['no banner'];
    const cut = [];
    const outer = banner.getBoundingClientRect();
    for (const e of [banner, ...banner.querySelectorAll('*')]) {
        if (e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== 'visible')
            cut.push('scrolls: ' + e.className);
    }
    for (const p of banner.querySelectorAll('p')) {
        const box = p.getBoundingClientRect();
        if (box.top < outer.top - 1 || box.bottom > outer.bottom + 1 || box.right > outer.right + 1)
            cut.push('text outside the banner: ' + p.innerText.slice(0, 40));
    }
    for (const button of banner.querySelectorAll('button')) {
        // One rectangle per line of each piece of the label's text.
        const walker = document.createTreeWalker(button, NodeFilter.SHOW_TEXT);
        const lines = [];
        while (walker.nextNode()) {
            const range = document.createRange();
            range.selectNodeContents(walker.currentNode);
            lines.push(...[...range.getClientRects()].filter(r => r.width > 0));
        }
        const box = button.getBoundingClientRect();
        if (lines.length !== 1 || lines[0].left < box.left - 1 || lines[0].right > box.right + 1
            || button.scrollWidth > button.clientWidth + 1)
            cut.push('button cut: ' + button.innerText);
    }
    return cut;
}"""
# The width of each figure's widest plotting area (subplots each have their own).
PLOT_WIDTHS = """() => [...document.querySelectorAll('.js-plotly-plot')].map(gd =>
    Math.max(0, ...[...gd.querySelectorAll('.nsewdrag')].map(
        r => r.getBoundingClientRect().width)))"""


def start_lesson(page, url, name):
    """Open the app, start lesson ``name`` from the sidebar and draw its figures."""
    lesson = LESSONS[name]
    open_page(page, f"{url}/")
    click_lesson(page, lesson.title)
    page.get_by_role("button", name="Got it").wait_for(timeout=60_000)
    wait_until_idle(page)
    if lesson.page == "robustness":
        page.get_by_role("button", name="Run sweep", exact=True).first.click()
        wait_until_idle(page)
    page.wait_for_selector(".js-plotly-plot .nsewdrag", timeout=90_000)
    page.wait_for_timeout(1000)


@pytest.mark.parametrize("width, height", SCREENS)
@pytest.mark.parametrize("name", list(LESSONS))
def test_every_lesson_banner_and_figure_fit(server, browser,  # noqa: F811
                                            tmp_path_factory, name, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        start_lesson(page, server, name)
        assert_no_error_shown(page, f"lesson {name}")
        folder = tmp_path_factory.getbasetemp() / "screenshots"
        folder.mkdir(exist_ok=True)
        page.screenshot(path=str(folder / f"lesson_{name}_{width}.png"), full_page=True)
        assert page.evaluate(BANNER_CUTS) == [], f"{name} at {width}x{height}"
        widths = page.evaluate(PLOT_WIDTHS)
        assert widths and min(widths) >= MIN_PLOT_WIDTH, (name, width, widths)
    finally:
        page.close()


# Tables drawn wider than their frame scroll sideways (the grid's scroller overflows), or
# stick out of the window: either hides columns.
TABLE_CUTS = """() => {
    const cut = [];
    for (const frame of document.querySelectorAll('[data-testid="stDataFrame"]')) {
        const box = frame.getBoundingClientRect();
        if (box.right > window.innerWidth + 1) cut.push('frame past the window');
        for (const scroller of frame.querySelectorAll('.dvn-scroller'))
            if (scroller.scrollWidth > scroller.clientWidth + 1)
                cut.push('scrolls sideways: ' + scroller.scrollWidth + ' > '
                         + scroller.clientWidth);
    }
    for (const th of document.querySelectorAll('[data-testid="stTable"] th')) {
        if (th.getBoundingClientRect().right > window.innerWidth + 1)
            cut.push('header past the window: ' + th.innerText);
    }
    return cut;
}"""
TABLE_PAGES = [("solvers", "dataset=bundled:breast_cancer&m=100", 1),
               ("paper", "dataset=bundled:digits7&paper_table=mnist-bin", 1)]


@pytest.mark.parametrize("width, height", SCREENS)
@pytest.mark.parametrize("path, query, n_tables", TABLE_PAGES, ids=[p[0] for p in TABLE_PAGES])
def test_wide_tables_show_every_column(server, browser,  # noqa: F811
                                       tmp_path_factory, path, query, n_tables, width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_page(page, f"{server}/{path}?{query}")
        page.wait_for_selector("[data-testid='stDataFrame'] .dvn-scroller", timeout=90_000)
        page.wait_for_timeout(1000)
        assert_no_error_shown(page, path)
        assert page.locator("[data-testid='stDataFrame']").count() >= n_tables
        folder = tmp_path_factory.getbasetemp() / "screenshots"
        folder.mkdir(exist_ok=True)
        page.screenshot(path=str(folder / f"table_{path}_{width}.png"), full_page=True)
        assert page.evaluate(TABLE_CUTS) == [], f"{path} at {width}x{height}"
    finally:
        page.close()


def test_the_uploaders_state_the_apps_cap(server, browser):  # noqa: F811
    """Streamlit's ceiling is above the app's cap: the uploaders say the app's."""
    from snacks_core.app.explorer import MAX_UPLOAD_MB
    page = browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        open_page(page, f"{server}/data")
        notes = page.evaluate("""() => [...document.querySelectorAll(
            '[data-testid="stFileUploaderDropzoneInstructions"] span')].map(
            e => getComputedStyle(e, '::after').content + '|' + getComputedStyle(e).fontSize)""")
        assert len(notes) == 2
        assert all(n == f'"Up to {MAX_UPLOAD_MB} MB per file"|0px' for n in notes), notes
    finally:
        page.close()


# Legends drawn over a plotting area hide its points (at 1024 × 768 the Playground's legend
# above the plot covered the top of the square plot when Plotly's automatic margin gave up).
LEGEND_OVERLAPS = """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(gd => {
    const legend = gd.querySelector('.legend');
    if (!legend) return [];
    const l = legend.getBoundingClientRect();
    return [...gd.querySelectorAll('.nsewdrag')].map(d => d.getBoundingClientRect())
        .filter(p => l.bottom > p.top + 1 && l.top < p.bottom - 1
                     && l.right > p.left + 1 && l.left < p.right - 1)
        .map(p => `legend ${Math.round(l.top)}-${Math.round(l.bottom)} over plot `
                  + `${Math.round(p.top)}-${Math.round(p.bottom)}`);
})"""


@pytest.mark.parametrize("width, height", SCREENS)
def test_the_playgrounds_legend_stays_off_its_plot(server, browser,  # noqa: F811
                                                    width, height):
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_page(page, f"{server}/")
        page.wait_for_selector(".js-plotly-plot .legend", timeout=90_000)
        assert page.evaluate(LEGEND_OVERLAPS) == [], (width, height)
        assert min(page.evaluate(PLOT_WIDTHS)) >= MIN_PLOT_WIDTH
    finally:
        page.close()
