"""The app in a real browser: `streamlit run app.py` headless on a free loopback port,
driven by Playwright with Debian's chromium.  Every page is visited, trained, checked for
exception boxes and tracebacks, and photographed: into a temporary folder, or into
docs/screenshots/ (the README's pictures) when SNACKS_UPDATE_SCREENSHOTS=1 is set.

Skipped (not failed) only when chromium or the Playwright package is missing: `make test`
installs chromium with apt first.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test drives the app in Chromium

ROOT = Path(__file__).resolve().parent.parent
README_SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
# (url path, query string, button to click, number of figures to wait for, screenshot name).
# The first visit is a deep link on the fresh server: st.navigation in app.py must open it.
# Live training is on by default, so pages train without a click (there is no Train button).
PAGES = [
    ("convergence", "conv_solvers=snacks,pegasos,liblinear&lam=0.0001", None, 2,
     "convergence"),
    ("", "", None, 1, "playground"),
    ("spectrum", "dataset=synthetic:spirals&gamma=2&spec_factors=0.1,1,10", None, 2,
     "spectrum"),
    ("robustness", "rob_seeds=2", "Run sweep", 1, "robustness"),
    ("solvers", "dataset=bundled:breast_cancer&m=100", None, 1, "solvers"),
    ("data", "dataset=bundled:wine", None, 2, "data"),
    ("paper", "dataset=bundled:digits7&paper_table=mnist-bin", None, 0, "paper"),
    # Points drawn by hand (the example drawing; tests/test_browser_drawing.py clicks).
    ("", "dataset=drawn:points", None, 1, "drawing"),
    # 50,000 rows (35,000 training rows): the plot draws a stratified sample.
    ("", "n_samples=50000", None, 1, "playground_50k"),
]

# The two screens: a laptop window and a 1024 × 768 projector.
SCREENS = [(1400, 1000), (1024, 768)]


def chromium_path():
    for candidate in ("/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def streamlit_server(log, cwd=ROOT, **env):
    """`streamlit run app.py` in the folder ``cwd`` (the checkout, or a copy of it) on a free
    port with these environment variables, its output in the file ``log``; its URL."""
    port = free_port()
    environ = {**os.environ, **env}
    # A real server sets its BLAS threads (tests/conftest.py turns that off for pytest).
    environ.pop("SNACKS_BLAS_THREADS", None)
    output = log.open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false"],
        cwd=cwd, env=environ, stdout=output, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    break
        except OSError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("streamlit did not start: " + log.read_text())
    try:
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        output.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with streamlit_server(tmp_path_factory.mktemp("server") / "streamlit.log") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    if path is None:
        pytest.skip("chromium is not installed (make test installs it with apt)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
NOT_RUNNING = "[data-testid='stApp'][data-test-script-state='notRunning']"


def wait_until_idle(page, timeout=120_000):
    """Wait until the script run an action started has finished and its elements are drawn.

    Streamlit's app root carries the script state (``data-test-script-state``: running,
    notRunning); an action's run may start a moment after the click, so a start is waited
    for briefly first, then the end, then the skeletons of elements still loading.
    """
    try:
        page.wait_for_selector(RUNNING, timeout=3_000)
    except Exception:  # the run was over before we looked
        pass
    page.wait_for_selector(NOT_RUNNING, timeout=timeout)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')",
                           timeout=timeout)
    page.wait_for_timeout(300)


# Two animation frames: the work the page had pending is done and painted.
SETTLED = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))"


def settle(page):
    """Wait until the page has done the work it had pending and painted (:data:`SETTLED`)."""
    page.evaluate(SETTLED)


def click_lesson(page, title):
    """Open the sidebar's Lessons and click the lesson ``title``.

    The click is dispatched on the button itself.  A mouse click goes to the point where
    the button was seen, and a long task still pending in the page (the Playground's figure
    drawn, the expander opening) could move the button first: the click then landed beside
    it (in about one run in five of a lesson's browser test here, and once in a CI run
    even after waiting for the page to settle), and the banner never came."""
    page.get_by_text("Lessons").first.click()
    button = page.get_by_role("button", name=title, exact=True)
    button.wait_for()
    settle(page)
    button.dispatch_event("click")


def open_page(page, url):
    """Go to ``url`` and wait until the app has drawn its sidebar and finished its run."""
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_selector("[data-testid='stSidebar']", timeout=60_000)
    wait_until_idle(page)


def assert_no_error_shown(page, where):
    assert page.locator("[data-testid='stException']").count() == 0, f"exception box on {where}"
    body = page.inner_text("body")
    assert "Traceback" not in body, f"traceback on {where}"
    assert page.locator("[data-testid='stAlertContentError']").count() == 0, \
        f"error message on {where}: {body[:500]}"


@pytest.mark.parametrize("path, query, button, n_figures, name", PAGES,
                         ids=[p[-1] for p in PAGES])
def test_page_in_browser(server, browser, path, query, button, n_figures, name, tmp_path_factory):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        open_page(page, f"{server}/{path}?{query}")
        if button:
            page.get_by_role("button", name=button, exact=True).first.click()
            wait_until_idle(page)
        page.wait_for_function(
            f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {n_figures}",
            timeout=90_000)
        page.wait_for_timeout(800)
        assert_no_error_shown(page, name)
        assert not errors, f"JavaScript errors on {name}: {errors}"
        folder = (README_SCREENSHOTS if os.environ.get("SNACKS_UPDATE_SCREENSHOTS") == "1"
                  else tmp_path_factory.getbasetemp() / "screenshots")
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
    finally:
        page.close()


def test_bad_upload_in_browser(server, browser, tmp_path):
    """A ragged CSV shows a line-numbered error in place; the page keeps working."""
    bad = tmp_path / "ragged.csv"
    bad.write_text("x1,x2,label\n1,2,a\n3,4\n5,6,b\n")
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    try:
        open_page(page, f"{server}/data")
        page.locator("input[type='file']").first.set_input_files(str(bad))
        wait_until_idle(page)
        page.get_by_role("button", name="Use this file", exact=True).click()
        wait_until_idle(page)
        error = page.locator("[data-testid='stAlertContentError']")
        error.first.wait_for(timeout=30_000)
        assert "line 3" in error.first.inner_text()
        assert page.locator("[data-testid='stException']").count() == 0
        assert "Traceback" not in page.inner_text("body")
    finally:
        page.close()


def test_wait_until_idle_waits_for_the_run(server, browser):
    """The helper returns only once the app's script state says the run is over."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_page(page, f"{server}/?n_samples=200")
        assert page.locator(NOT_RUNNING).count() == 1
        assert page.locator("[data-testid='stMetric']").count() >= 7
    finally:
        page.close()


@pytest.mark.parametrize("width, height", [(1024, 768), (1280, 800)])
def test_playground_fits_small_screens(server, browser, width, height, tmp_path_factory):
    """Metric values are never cut ('5.…'); at 1280 × 800 the whole figure is on screen."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_page(page, f"{server}/")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        page.wait_for_timeout(800)
        cut = page.evaluate("""() => [...document.querySelectorAll(
                '[data-testid="stMetricValue"] div, [data-testid="stMetricLabel"] p, '
                + '[data-testid="stMetricDelta"] div')]
            .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)""")
        assert not cut, f"cut metric text at {width}x{height}: {cut}"
        if (width, height) == (1280, 800):
            box = page.locator(".js-plotly-plot").first.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= height, box
        page.screenshot(path=str(tmp_path_factory.getbasetemp() / f"playground_{width}.png"))
    finally:
        page.close()


def test_robustness_sweep_can_be_stopped(server, browser):
    """During a sweep a Stop button and a running status show; Stop keeps the finished cells."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        # The γ × λ grid at m = 1000 on 50k rows runs ~30 s (40 (seed, γ) groups, each with
        # its own embedding); the m × λ grid now ends in ~8 s on 2 cores, which Stop missed
        # once in seven runs.
        open_page(page, f"{server}/robustness?n_samples=50000&rob_grid=gamma&m=1000&rob_size=8"
                        "&rob_seeds=5")
        page.get_by_role("button", name="Run sweep", exact=True).click()
        stop = page.get_by_role("button", name="Stop sweep")
        stop.wait_for(timeout=30_000)
        # Progress after the first finished fit ("k of 960 fits done (…% of the sweep) · last:").
        page.get_by_text("of the sweep").first.wait_for(timeout=60_000)
        assert page.get_by_text("Sweep running").count() >= 1
        stop.click()
        page.get_by_text("Sweep stopped after").wait_for(timeout=60_000)
        wait_until_idle(page)
        text = page.inner_text("body")
        # 320 cells and seeds, each scored by 3-fold cross-validation.
        assert "of 960 fits" in text
        assert page.locator(".js-plotly-plot").count() == 1
        assert_no_error_shown(page, "stopped sweep")
    finally:
        page.close()


# The middle cell's centre on screen, its λ and m, and the text the heatmap writes in it.
CELL_CENTRE = """(gd) => {
    const layout = gd._fullLayout, xa = layout.xaxis, ya = layout.yaxis;
    const cells = gd.data.find(trace => trace.name === 'cells');
    const k = Math.floor(cells.x.length / 2);
    const box = gd.getBoundingClientRect();
    const map = gd.data[0];
    const text = map.text[map.y.indexOf(cells.y[k])][map.x.indexOf(cells.x[k])];
    return [box.left + xa._offset + xa.l2p(xa.d2c(cells.x[k])),
            box.top + ya._offset + ya.l2p(ya.d2c(cells.y[k])), cells.x[k], cells.y[k], text];
}"""


# True when an element or one of its descendants cuts its text (an ellipsis).
CUT_TEXT = """(el) => [el, ...el.querySelectorAll('*')].some(
    node => node.scrollWidth > node.clientWidth + 1)"""


@pytest.mark.parametrize("width, height", SCREENS)
def test_clicking_a_heatmap_cell_shows_its_model(server, browser, tmp_path_factory, width,
                                                 height):
    """A click on a cell draws the model the sweep scored there: its decision boundary and
    convergence beside the map (below it on a 1024 × 768 projector, at a readable size),
    with a test error equal to the value the heatmap writes in the cell; the small
    multiples open below."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_page(page, f"{server}/robustness?n_samples=400&rob_size=3&rob_seeds=1"
                        "&rob_select=test")
        run = page.get_by_role("button", name="Run sweep", exact=True)
        assert not run.evaluate(CUT_TEXT), "the Run sweep label is cut"
        run.click()
        wait_until_idle(page)
        heatmap = page.locator(".js-plotly-plot").first
        heatmap.wait_for(timeout=60_000)
        assert page.get_by_text("Click a cell of the heatmap").count() == 1
        # On a projector the heatmap starts near the bottom of the screen: scroll to it.
        heatmap.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        x, y, lam, m, value = heatmap.evaluate(CELL_CENTRE)
        page.mouse.click(x, y)
        page.get_by_text("the model the sweep trained with seed").wait_for(timeout=60_000)
        wait_until_idle(page)
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 3",
            timeout=60_000)
        page.wait_for_timeout(800)
        text = page.inner_text("body")
        assert f"Cell m = {m}, λ = {lam}" in text, text[:3000]
        said = page.get_by_text("the model the sweep trained with seed").inner_text()
        shown = re.search(r"test error ([0-9.]+) %", said).group(1)
        assert shown == value.removeprefix("★ "), (shown, value)
        assert "retrained" not in text
        assert page.get_by_text("Click a cell of the heatmap").count() == 0
        assert_no_error_shown(page, "heatmap cell")
        boxes = page.locator(".js-plotly-plot").evaluate_all(
            "plots => plots.map(p => p.getBoundingClientRect().toJSON())")
        heatmap_box, cell_box, convergence_box = boxes[0], boxes[1], boxes[2]
        assert cell_box["width"] >= 300, boxes
        # Below the heatmap, which takes the column's width; the cell's two figures side by
        # side where the column is wide enough, one above the other on a projector.
        assert cell_box["y"] >= heatmap_box["y"] + heatmap_box["height"], boxes
        assert (convergence_box["x"] >= cell_box["x"] + cell_box["width"]) == (width >= 1280)
        folder = (README_SCREENSHOTS if os.environ.get("SNACKS_UPDATE_SCREENSHOTS") == "1"
                  and width == 1400 else tmp_path_factory.getbasetemp() / "screenshots")
        folder.mkdir(parents=True, exist_ok=True)
        # The page scrolls inside Streamlit's main container: the cell's model (below the
        # heatmap) as it fills the window.
        page.get_by_text("the model the sweep trained with seed").evaluate(
            "el => el.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        page.screenshot(path=str(folder / f"robustness_cell_{width}.png"
                                 if width != 1400 else folder / "robustness_cell.png"))
        page.get_by_text("Decision boundaries of the 9 cells").click()
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot').length >= 4", timeout=60_000)
        wait_until_idle(page)
        assert_no_error_shown(page, "small multiples")
        thumbnails = page.locator(".js-plotly-plot").nth(3)
        box = thumbnails.bounding_box()
        assert box["width"] >= 0.5 * width, box
        thumbnails.screenshot(path=str(folder / ("robustness_thumbnails.png" if width == 1400
                                                 else f"robustness_thumbnails_{width}.png")))
    finally:
        page.close()


def test_watch_it_learn_plays_the_checkpoints(server, browser, tmp_path_factory):
    """Play moves the boundary and the error marker through the checkpoints; Pause holds."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_page(page, f"{server}/?n_samples=400")
        page.get_by_text("Watch it learn").first.click()
        wait_until_idle(page)
        animation = page.locator(".js-plotly-plot").nth(1)
        animation.wait_for(timeout=30_000)
        page.wait_for_timeout(800)

        def current():
            return animation.evaluate("(gd) => gd._fullLayout.sliders[0].active")

        last = current()
        assert last == animation.evaluate("(gd) => gd._transitionData._frames.length - 1")
        page.get_by_text("▶ Play").first.click()
        page.wait_for_timeout(600)
        playing = current()
        assert 0 <= playing < last, (playing, last)
        page.get_by_text("❚❚ Pause").first.click()
        page.wait_for_timeout(300)
        held = current()
        page.wait_for_timeout(1200)
        assert current() == held
        marker = animation.evaluate("(gd) => gd.data[gd.data.length - 1].text[0]")
        frame = animation.evaluate(f"(gd) => gd._transitionData._frames[{held}].data[2].text[0]")
        assert marker == frame
        assert_no_error_shown(page, "watch it learn")
        folder = (README_SCREENSHOTS if os.environ.get("SNACKS_UPDATE_SCREENSHOTS") == "1"
                  else tmp_path_factory.getbasetemp() / "screenshots")
        folder.mkdir(parents=True, exist_ok=True)
        # The figure and its caption.
        top = animation.bounding_box()
        bottom = page.get_by_text("The weights").first.bounding_box()
        page.screenshot(path=str(folder / "watch_it_learn.png"), clip={
            "x": top["x"] - 10, "y": top["y"] - 10, "width": top["width"] + 20,
            "height": bottom["y"] + bottom["height"] - top["y"] + 20})
    finally:
        page.close()


def choose_upload(page, server, path, n_rows):
    """Write a small two-feature LIBSVM file of ``n_rows`` rows at ``path``, open the Data
    page and choose the file in its uploader; returns once the page says how it reads it."""
    path.write_text("".join(f"{1 if i % 3 else -1} 1:{i / 40:.3f} 2:{(i * 7) % 5 / 5:.2f}\n"
                            for i in range(n_rows)))
    open_page(page, f"{server}/data")
    page.locator("input[type='file']").first.set_input_files(str(path))
    page.get_by_text("(detected from the content)").wait_for(timeout=60_000)
    wait_until_idle(page)


@pytest.mark.parametrize("width, height", SCREENS)
def test_uploading_a_trn_libsvm_file(server, browser, tmp_path, width, height):
    """LIBSVM files often end in .trn or .t: the uploader takes any name and the content
    decides how it is read."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        choose_upload(page, server, tmp_path / "ijcnn1.trn", 80)
        assert "Read as LIBSVM" in page.inner_text("body")
        page.get_by_role("button", name="Use this file").click()
        page.get_by_text("uploaded · ijcnn1.trn").first.wait_for(timeout=60_000)
        wait_until_idle(page)
        assert_no_error_shown(page, "the .trn upload")
    finally:
        page.close()


@pytest.mark.parametrize("width, height", SCREENS)
def test_a_quick_page_change_after_use_this_file_keeps_the_upload(server, browser, tmp_path,
                                                                  width, height):
    """Playground clicked at once after "Use this file": the uploaded data is trained on."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        choose_upload(page, server, tmp_path / "quick.trn", 120)
        page.get_by_role("button", name="Use this file").click()
        page.get_by_role("link", name="Playground").click()
        page.get_by_text("Test error").first.wait_for(timeout=60_000)
        wait_until_idle(page)
        # The sidebar's settings travel in the URL: the dataset is the upload.
        assert "quick.trn" in urllib.parse.unquote(page.url), page.url
        assert "Samples n" not in page.locator("[data-testid='stSidebar']").inner_text()
        assert_no_error_shown(page, "the Playground after a quick page change")
    finally:
        page.close()


# The heatmap's width against its column's, and its cell labels that leave their cell
# (text, label width and height, cell width and height): cells from plotly's axes, labels
# from the SVG text elements of its 'heatmap-label' layer.
HEATMAP_FIT = """(gd) => {
    const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, map = gd.data[0];
    const box = gd.getBoundingClientRect();
    const cw = xa._length / map.x.length, ch = ya._length / map.y.length;
    const left = box.left + xa._offset, top = box.top + ya._offset;
    const labels = [...gd.querySelectorAll('g.heatmap-label text')].filter(t => t.textContent);
    const outside = [];
    for (const t of labels) {
        const r = t.getBoundingClientRect();
        const i = Math.floor(((r.left + r.right) / 2 - left) / cw);
        const j = Math.floor(((r.top + r.bottom) / 2 - top) / ch);
        const cl = left + i * cw, ct = top + j * ch;
        if (r.left < cl - 0.5 || r.right > cl + cw + 0.5 || r.top < ct - 0.5
                || r.bottom > ct + ch + 0.5) {
            outside.push([t.textContent, r.width, r.height, cw, ch]);
        }
    }
    const column = gd.closest('[data-testid="stVerticalBlock"]').getBoundingClientRect();
    return {width: box.width, column: column.width, labels: labels.length, outside: outside,
            cells: map.x.length * map.y.length};
}"""


# The heatmap's columns, rows and cell labels (the mean, without the best cell's ★).
# The heatmap's axes and its cells' values (the labels round them to as many decimals as
# the grid's spread of colours needs, which an extension can change).
CELL_VALUES = """(gd) => [Array.from(gd.data[0].x), Array.from(gd.data[0].y),
    Array.from(gd._fullData[0].z, row => Array.from(row))]"""


def assert_heatmap_fits(page, where):
    """The heatmap fills at least 80 % of its column and every cell label lies inside its
    cell; returns what :data:`HEATMAP_FIT` measured."""
    for attempt in range(3):
        # A rerun that just ended may still replace the chart: look again once it has.
        try:
            heatmap = page.locator(".js-plotly-plot").first
            heatmap.scroll_into_view_if_needed()
            page.wait_for_timeout(300)
            fit = heatmap.evaluate(HEATMAP_FIT)
            break
        except Exception:
            if attempt == 2:
                raise
            wait_until_idle(page)
    assert fit["width"] >= 0.8 * fit["column"], (where, fit)
    assert fit["labels"] == fit["cells"] and not fit["outside"], (where, fit)
    return fit


def screenshot_folder(tmp_path_factory, in_docs):
    """docs/screenshots/ for a picture the docs show (``in_docs``) when
    SNACKS_UPDATE_SCREENSHOTS=1 is set, a temporary folder otherwise."""
    folder = (README_SCREENSHOTS if in_docs and os.environ.get("SNACKS_UPDATE_SCREENSHOTS")
              == "1" else tmp_path_factory.getbasetemp() / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def open_robustness(page, server, query):
    open_page(page, f"{server}/robustness?{query}")
    page.get_by_role("button", name="Run sweep", exact=True).click()
    wait_until_idle(page, timeout=300_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=60_000)


@pytest.mark.parametrize("width, height", SCREENS)
def test_heatmap_fills_its_column_and_an_edge_cell_extends_the_grid(
        server, browser, tmp_path_factory, width, height):
    """The heatmap is at least 80 % of its column's width with every label inside its cell,
    on a 2 × 2 grid and on an 8 × 8 one; on the 2 × 2 grid the best cell is on an edge,
    the page says so, and its button adds the cells beyond that edge (the old cells keep
    their values)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    suffix = "" if width == 1400 else f"_{width}"
    try:
        open_robustness(page, server, "n_samples=400&rob_size=2&rob_seeds=1&rob_select=test")
        before = assert_heatmap_fits(page, "2 × 2 grid")
        heatmap = page.locator(".js-plotly-plot").first
        old = heatmap.evaluate(CELL_VALUES)
        warning = page.get_by_text("the good models may lie beyond the grid")
        assert warning.count() == 1
        extend = page.get_by_role("button", name=re.compile("^Extend the grid"))
        assert not extend.evaluate(CUT_TEXT), "the Extend label is cut"
        # The button at the foot of the window: the heatmap's cells above its warning.
        extend.evaluate("el => el.scrollIntoView({block: 'end'})")
        page.wait_for_timeout(300)
        page.screenshot(path=str(screenshot_folder(tmp_path_factory, width == 1400)
                                 / f"robustness_edge{suffix}.png"))
        extend.click()
        wait_until_idle(page, timeout=300_000)
        assert_no_error_shown(page, "extended grid")
        after = assert_heatmap_fits(page, "extended grid")
        assert after["cells"] > before["cells"], (before, after)
        x, y, values = page.locator(".js-plotly-plot").first.evaluate(CELL_VALUES)
        for j, row in enumerate(old[1]):
            for i, col in enumerate(old[0]):
                value = values[y.index(row)][x.index(col)]
                assert value == pytest.approx(old[2][j][i]), (row, col)
        assert "Default axes" in page.inner_text("body")
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_folder(tmp_path_factory, False)
                                 / f"robustness_extended{suffix}.png"))
        open_robustness(page, server, "n_samples=400&rob_size=8&rob_seeds=1&rob_select=test")
        assert_heatmap_fits(page, "8 × 8 grid")
        assert_no_error_shown(page, "8 × 8 grid")
    finally:
        page.close()


def test_the_default_sweep_on_50000_rows_reads_at_both_sizes(server, browser,
                                                             tmp_path_factory):
    """The default sweep (5 × 5 cells around the data-aware defaults, 2 seeds, 3-fold
    cross-validation) on 50,000 rows: the heatmap fills its column with its labels inside
    their cells in a 1400 × 1000 window and, resized, on a 1024 × 768 projector."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_robustness(page, server, "n_samples=50000")
        assert_no_error_shown(page, "50,000 rows")
        for width, height in SCREENS:
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(1000)
            fit = assert_heatmap_fits(page, f"50,000 rows at {width} px")
            assert fit["cells"] == 25
            page.screenshot(path=str(screenshot_folder(tmp_path_factory, width == 1024)
                                     / f"robustness_50k_{width}.png"))
    finally:
        page.close()


def libsvm_rows(n_rows, seed):
    """Two noisy classes on two features, as LIBSVM text (one-based indices)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n_rows) < 0.5, 1, -1)
    X = rng.normal(size=(n_rows, 2)) + 1.2 * y[:, None]
    return "".join(f"{label:+d} 1:{a:.4f} 2:{b:.4f}\n" for label, (a, b) in zip(y, X, strict=True))


@pytest.mark.parametrize("width, height", SCREENS)
def test_a_training_and_test_pair_is_uploaded_and_used(server, browser, tmp_path,
                                                       tmp_path_factory, width, height):
    """`pair` and `pair.t`: the test file's rows are the test rows on the Data page and on
    the Playground, and the sidebar's test fraction no longer applies."""
    (tmp_path / "pair").write_text(libsvm_rows(300, 0))
    (tmp_path / "pair.t").write_text(libsvm_rows(120, 1))
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_page(page, f"{server}/data")
        uploaders = page.locator("input[type='file']")
        uploaders.nth(0).set_input_files(str(tmp_path / "pair"))
        page.get_by_text("(detected from the content)").wait_for(timeout=60_000)
        wait_until_idle(page)
        uploaders.nth(1).set_input_files(str(tmp_path / "pair.t"))
        page.get_by_text("Its test rows: pair.t").wait_for(timeout=60_000)
        wait_until_idle(page)
        page.get_by_role("button", name="Use these files").click()
        page.get_by_text("Test rows from pair.t").first.wait_for(timeout=60_000)
        wait_until_idle(page)
        metrics = page.locator("[data-testid='stMetric']").all_inner_texts()
        assert any("Training rows" in m and "300" in m for m in metrics), metrics
        assert any("Test rows" in m and "120" in m for m in metrics), metrics
        sidebar = page.locator("[data-testid='stSidebar']").inner_text()
        assert "Test rows: the test file pair.t." in sidebar
        assert_no_error_shown(page, "the Data page with a test file")
        page.screenshot(path=str(screenshot_folder(tmp_path_factory, width == 1400)
                                 / f"test_file_data_{width}.png"))
        page.get_by_role("link", name="Playground").click()
        page.get_by_text("Test error").first.wait_for(timeout=60_000)
        wait_until_idle(page)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        facts = page.inner_text("body")
        assert "n = 300 training rows" in facts
        assert_no_error_shown(page, "the Playground with a test file")
        page.screenshot(path=str(screenshot_folder(tmp_path_factory, False)
                                 / f"test_file_playground_{width}.png"))
    finally:
        page.close()


@pytest.mark.parametrize("width, height", SCREENS)
def test_auto_tune_shows_its_chosen_model_without_another_click(server, browser,
                                                                tmp_path_factory, width,
                                                                height):
    """Live training off, as on a large set: after Train and Auto-tune, the chosen model is
    trained and shown at once, and what Auto-tune tried spans the page."""
    page = browser.new_page(viewport={"width": width, "height": height})
    try:
        open_page(page, f"{server}/?live=false&lam=0.5&n_samples=400")
        page.get_by_role("button", name="Train", exact=True).click()
        wait_until_idle(page)
        page.get_by_role("button", name="Auto-tune").click()
        page.get_by_text("Auto-tune scored").wait_for(timeout=120_000)
        wait_until_idle(page)
        body = page.inner_text("body")
        assert "the model above is theirs" in body
        assert "click Train" not in body and "Click Train" not in body
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        tried = page.locator(".stExpander", has_text="What Auto-tune tried").first
        tried.locator("summary").click()
        wait_until_idle(page)
        main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
        table = tried.locator("[data-testid='stDataFrame']")
        table.wait_for(timeout=30_000)
        box = table.bounding_box()
        assert box["width"] >= 0.8 * (main["width"] - 100), (box, main)
        assert "measured once" in tried.inner_text()
        assert_no_error_shown(page, "the Playground after Auto-tune")
        tried.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_folder(tmp_path_factory, width == 1400)
                                 / f"auto_tune_{width}.png"))
    finally:
        page.close()


def test_a_lesson_banner_keeps_the_plot_on_screen_and_ends_with_its_page(
        server, browser, tmp_path_factory):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_page(page, f"{server}/")
        click_lesson(page, "λ too large")
        page.get_by_role("button", name="Got it").wait_for(timeout=60_000)
        wait_until_idle(page)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        page.wait_for_timeout(800)
        # The plotting area (its legend above and axis title below may run past the fold
        # rather than shrink it under the figures' readable size).
        box = page.locator(".st-key-boundary_figure .nsewdrag").first.bounding_box()
        assert box["y"] + box["height"] <= 1000, box
        page.screenshot(path=str(screenshot_folder(tmp_path_factory, False)
                                 / "lesson_banner.png"))
        page.get_by_role("link", name="Data").click()
        page.get_by_text("Training rows").first.wait_for(timeout=60_000)
        wait_until_idle(page)
        assert page.get_by_role("button", name="Got it").count() == 0
        page.get_by_role("link", name="Playground").click()
        page.get_by_text("Test error").first.wait_for(timeout=60_000)
        wait_until_idle(page)
        assert page.get_by_role("button", name="Got it").count() == 0
    finally:
        page.close()


def test_a_new_visitor_starts_loading_plotly_before_the_figure_arrives(server, browser):
    """The first run draws a hidden chart first (snacks_core.app.preload): the browser asks
    for Plotly's script before the Playground's figure (the run's largest message) arrives,
    and the hidden chart is gone once the run is over."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    events = []
    page.on("request", lambda request: "PlotlyChart" in request.url
            and events.append(("plotly script", time.perf_counter())))

    def frames(socket):
        socket.on("framereceived", lambda payload: len(payload or b"") > 100_000
                  and events.append(("figure", time.perf_counter())))

    page.on("websocket", frames)
    try:
        open_page(page, f"{server}/")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)
        firsts = {}
        for name, at in events:
            firsts.setdefault(name, at)
        assert set(firsts) == {"plotly script", "figure"}, events
        assert firsts["plotly script"] < firsts["figure"]
        assert page.locator(".st-key-plotly_loading").count() == 0
        assert_no_error_shown(page, "Playground")
    finally:
        context.close()
