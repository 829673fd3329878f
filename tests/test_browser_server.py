"""The explorer as a class's server, in headless Chromium: the warming-up message on a fresh
server (the solvers really compile: a copy of the checkout whose code was never compiled,
numba's cache an empty folder), and the queue of heavy runs with its visible places
(SNACKS_MAX_HEAVY_RUNS=1), emptied by closing a tab."""

from __future__ import annotations

import shutil

import pytest

from test_browser import (  # noqa: F401 (browser: a fixture)
    ROOT,
    assert_no_error_shown,
    browser,
    streamlit_server,
    wait_until_idle,
)

pytestmark = pytest.mark.slow  # each test starts a server and drives it in Chromium

METRIC = "[data-testid='stMetric']"


def test_a_fresh_server_says_it_is_warming_up(browser, tmp_path, tmp_path_factory):  # noqa: F811
    """Two visitors arrive while the solvers compile: both see the warming-up message, then
    the Playground's metrics, with no error."""
    shots = tmp_path_factory.getbasetemp() / "screenshots"
    shots.mkdir(exist_ok=True)
    # A fresh checkout: `make install` compiles into the checkout's __pycache__ folders,
    # which the package reads whatever NUMBA_CACHE_DIR says; a copy has none of them.
    fresh = tmp_path / "checkout"
    shutil.copytree(ROOT, fresh, ignore=shutil.ignore_patterns(
        "__pycache__", ".venv", ".git", "tests", "benchmarks", "docs", "*.egg-info"))
    with streamlit_server(tmp_path / "server.log", cwd=fresh, PYTHONPATH=str(fresh),
                          NUMBA_CACHE_DIR=str(tmp_path / "numba")) as url:
        pages = [browser.new_page(viewport={"width": w, "height": h})
                 for w, h in ((1400, 1000), (1024, 768))]
        try:
            for page in pages:
                page.goto(f"{url}/", wait_until="domcontentloaded")
            for page in pages:
                message = page.get_by_text("Warming up:", exact=False)
                message.first.wait_for(timeout=60_000)
                assert "once per server start" in page.inner_text("body")
                width = page.viewport_size["width"]
                page.screenshot(path=str(shots / f"warming_up_{width}.png"))
            for page in pages:
                page.wait_for_selector(METRIC, timeout=300_000)
                wait_until_idle(page, timeout=300_000)
                assert page.get_by_text("Warming up:", exact=False).count() == 0
                assert page.locator(METRIC).count() >= 7
                assert_no_error_shown(page, "the Playground after warming up")
        finally:
            for page in pages:
                page.close()


def test_heavy_runs_queue_and_a_closed_tab_frees_its_slot(
        browser, tmp_path, tmp_path_factory):  # noqa: F811
    """With one slot: a long sweep runs, two heavy Playground fits wait with their places
    shown; closing the sweep's tab cancels it, and both fits then run in order."""
    shots = tmp_path_factory.getbasetemp() / "screenshots"
    shots.mkdir(exist_ok=True)
    with streamlit_server(tmp_path / "server.log", SNACKS_MAX_HEAVY_RUNS="1") as url:
        sweep = browser.new_page(viewport={"width": 1400, "height": 1000})
        # ~30 s on two cores (see test_browser.test_robustness_sweep_can_be_stopped).
        sweep.goto(f"{url}/robustness?n_samples=50000&rob_grid=gamma&m=1000&rob_size=8"
                   "&rob_seeds=5", wait_until="domcontentloaded")
        sweep.wait_for_selector("[data-testid='stSidebar']", timeout=120_000)
        wait_until_idle(sweep)
        sweep.get_by_role("button", name="Run sweep", exact=True).click()
        sweep.get_by_text("Sweep running", exact=False).first.wait_for(timeout=30_000)
        # 15,000 training rows × m = 500: heavy, and small enough for live training.
        fits = []
        for seed, (width, height) in ((1, (1400, 1000)), (2, (1024, 768))):
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(f"{url}/?n_samples=20000&m=500&seed={seed}", wait_until="domcontentloaded")
            page.get_by_text("Queued:", exact=False).first.wait_for(timeout=120_000)
            fits.append(page)
        first, second = fits
        first.get_by_text("you are next in line", exact=False).first.wait_for(timeout=10_000)
        second.get_by_text("1 more waits ahead of you", exact=False).first.wait_for(
            timeout=10_000)
        assert "1 heavy run running" in second.inner_text("body")
        first.screenshot(path=str(shots / "queued_1400.png"))
        second.screenshot(path=str(shots / "queued_1024.png"))
        sweep.close()  # the sweep is cancelled: its slot goes to the first fit, then the second
        for page in fits:
            page.wait_for_selector(METRIC, timeout=120_000)
            wait_until_idle(page)
            assert page.get_by_text("Queued:", exact=False).count() == 0
            assert_no_error_shown(page, "a Playground fit after the queue: "
                                  + (tmp_path / "server.log").read_text()[-3000:])
            page.close()
