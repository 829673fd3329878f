"""The app in a real browser: `streamlit run app.py` headless on a free loopback port,
driven by Playwright with Debian's chromium.  Every page is visited, trained, checked for
exception boxes and tracebacks, and photographed: into a temporary folder, or into
docs/screenshots/ (the README's pictures) when SNACKS_UPDATE_SCREENSHOTS=1 is set.

Skipped (not failed) only when chromium or the Playwright package is missing: `make test`
installs chromium with apt first.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
# (url path, query string, button to click, number of figures to wait for, screenshot name).
# The first visit is a deep link on the fresh server: Streamlit runs that first script in its
# legacy pages/-folder mode, which widgets.require_entry_point must route through app.py.
PAGES = [
    ("convergence", "conv_solvers=snacks,pegasos,liblinear&lam=0.0001", "Train", 2,
     "convergence"),
    ("", "", "Train", 1, "playground"),
    ("spectrum", "dataset=synthetic:spirals&gamma=2&spec_factors=0.1,1,10", "Train", 2,
     "spectrum"),
    ("robustness", "rob_seeds=2", "Run sweep", 1, "robustness"),
    ("solvers", "dataset=bundled:breast_cancer&m=100", "Train", 1, "solvers"),
    ("data", "dataset=bundled:wine", None, 2, "data"),
]


def chromium_path():
    for candidate in ("/usr/bin/chromium", shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
        pytest.fail("streamlit did not start: " + (process.stdout.read() or ""))
    yield url
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


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


def wait_until_idle(page, timeout=90_000):
    """Wait for the script run to finish (the 'Running…' status widget disappears)."""
    page.wait_for_timeout(500)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)
    page.wait_for_timeout(300)


def assert_no_error_shown(page, where):
    assert page.locator("[data-testid='stException']").count() == 0, f"exception box on {where}"
    body = page.inner_text("body")
    assert "Traceback" not in body, f"traceback on {where}"
    assert page.locator("[data-testid='stAlertContentError']").count() == 0, \
        f"error message on {where}: {body[:500]}"


@pytest.mark.parametrize("path, query, button, n_figures, name", PAGES,
                         ids=[p[-1] for p in PAGES])
def test_page_in_browser(server, browser, path, query, button, n_figures, name, tmp_path_factory):
    page = browser.new_page(viewport={"width": 1500, "height": 1250})
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{server}/{path}?{query}", wait_until="domcontentloaded")
        page.wait_for_selector("[data-testid='stSidebar']", timeout=60_000)
        wait_until_idle(page)
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
        page.goto(f"{server}/data", wait_until="domcontentloaded")
        page.wait_for_selector("[data-testid='stSidebar']", timeout=60_000)
        wait_until_idle(page)
        page.locator("input[type='file']").set_input_files(str(bad))
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
