"""A class on one server (issue 23): 20 browser sessions open the app at once.

Run with ``.venv/bin/python benchmarks/bench_classroom.py`` (``--write`` also writes the
"classroom" section of BENCHMARKS.md).  One ``streamlit run app.py`` server is started fresh
(numba's disk cache as ``make run`` leaves it), and one headless Chromium opens 20 pages in
20 contexts at the same moment: 16 on the Playground at its defaults (moons, 280 training
rows), 4 with heavier settings (``?n_samples=20000&m=500``: 14,000 × 500, a heavy run that
takes a slot of the server's queue, ``SNACKS_MAX_HEAVY_RUNS``).  Recorded per session: the
time from opening the page to its first result (the metrics drawn), whether it saw the
warming-up message or a queue place, and any error shown; for the server, the resident
memory of its process tree before, at the peak and after the sessions closed.

Baselines in the same run: one session alone on the same (warm) server with settings not
cached yet, and the longest of the 20.  Then tab-close measurements: a Playground fit of
35,000 × 2,000 (n = 50,000, m = 2,000) whose tab closes 0.5, 1.5 and 3 s after Train, and
a robustness sweep on 50,000 rows closed after 4 s; the server's CPU time (user + system
of its process tree, through psutil) is sampled every 20 ms to find when its work stops,
beside the time the same run takes when it is left to finish.

``--first-picture`` (section "first-picture", issue 28): one new visitor at a time on a warm
server (a first visitor has trained the defaults), each in a fresh browser context (nothing
cached): seconds from opening the Playground to the page's scripts loaded, the server's last
message of the run received, the metrics drawn and the first picture drawn; the bytes of
scripts, styles and messages, the largest message (the figure) and the scripts loaded after
the page's own.  Baselines in the same run: Streamlit's own floors, a page that shows one
small Plotly figure, alone and with one widget of each kind the sidebar uses.

``--first-picture --baseline REV`` (section "first-picture-against"): the same visits to this
checkout's Playground and to REV's (a temporary git worktree), alternating, 9 each.

``--answers`` (section "class-answers", issue 38): on a warm server, new visitors' first
pictures alone and 10 arriving together; then 10 students (browser contexts) at once move
a sidebar slider, start a lesson and open another page: seconds from the action to its
answer drawn (the run over, a figure drawn), and the server's CPU seconds per answer.
Every browser runs on the server's cores, as students' machines would not.  Beside the
first pictures, the same visits to Streamlit's floor (one small figure and the sidebar's
kinds of widget), alone and arriving together, on its own server.

``--auto-tune`` (section "auto-tune"): the Playground's Auto-tune on w8a
(``../shared/data/w8a``, skipped when absent) and on a census-shaped set
(``make_a9a_like``, 32,561 rows), as the app splits them (70/30) and from its data-aware
defaults: seconds and the chosen model's test error, beside the previous Auto-tune (one
halving search over γ × 7 C values × m as set and 4×) and the defaults' model.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import machine, write_section  # noqa: E402
from snacks_core.app import preload  # noqa: E402
from test_browser import (  # noqa: E402
    CHROMIUM_ARGS,
    NOT_RUNNING,
    RUNNING,
    SETTLED,
    chromium_path,
    free_port,
)

N_SESSIONS = 20
HEAVY_QUERY = "n_samples=20000&m=500"
N_HEAVY = 4
METRIC = "[data-testid='stMetric']"
BIG_FIT = "n_samples=50000&m=2000"
BIG_SWEEP = "n_samples=50000&rob_grid=gamma&m=1000&rob_size=4&rob_seeds=2"
# CPU use (cores) under which the server counts as idle again.
IDLE_CORES = 0.1


# ``streamlit run`` with the snacks_core of the folder given first on the import path, before
# the one installed (editable) in the environment: another version's checkout.
CHECKOUT_SERVER = """
import importlib.machinery, sys
sys.path.insert(0, sys.argv[1])
sys.meta_path.insert(0, importlib.machinery.PathFinder)
from streamlit.web import cli
sys.argv = ["streamlit", "run", "app.py", *sys.argv[2:]]
cli.main()
"""


def start_server(folder=ROOT, checkout=False):
    """``streamlit run app.py`` in ``folder`` on a free port: (process, URL); with
    ``checkout``, the folder's own snacks_core (another version's worktree)."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items() if k != "SNACKS_BLAS_THREADS"}
    command = ([sys.executable, "-c", CHECKOUT_SERVER, str(folder)] if checkout else
               [sys.executable, "-m", "streamlit", "run", "app.py"])
    process = subprocess.Popen(
        [*command, "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false"],
        cwd=folder, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.read() == b"ok":
                    return process, url
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("streamlit did not start")


def tree(pid):
    process = psutil.Process(pid)
    return [process, *process.children(recursive=True)]


def rss(pid) -> float:
    """MiB resident in the server's process tree."""
    total = 0
    for process in tree(pid):
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


def machine_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy (every core, all processes)."""
    times = psutil.cpu_times()
    return sum(times) - times.idle - getattr(times, "iowait", 0.0)


def cpu_seconds(pid) -> float:
    """User + system CPU seconds of the server's process tree so far."""
    total = 0.0
    for process in tree(pid):
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


class MemorySampler(threading.Thread):
    """The server's RSS every 0.25 s; ``peak`` is the largest seen."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, 0.0, True

    def run(self):
        while self.running:
            self.peak = max(self.peak, rss(self.pid))
            time.sleep(0.25)


# Runs in every page from its first byte: the time (since the page's navigation started)
# at which all seven metrics are drawn, and whether the warming-up or queue message showed.
WATCH_PAGE = """
window.__snacks = {done: null, saw: []};
const watch = setInterval(() => {
  const text = document.body ? document.body.textContent : "";
  for (const [needle, label] of [["Warming up:", "warming up"], ["Queued:", "queued"]]) {
    if (text.includes(needle) && !window.__snacks.saw.includes(label)) {
      window.__snacks.saw.push(label);
    }
  }
  if (document.querySelectorAll("[data-testid='stMetric']").length >= 7) {
    window.__snacks.done = performance.now() / 1000;
    clearInterval(watch);
  }
}, 50);
"""


def open_sessions(browser, url, queries):
    """Open every page at once; per page the seconds to its first metrics and what it saw."""
    contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in queries]
    pages = []
    errors = [[] for _ in queries]
    for context, page_errors in zip(contexts, errors, strict=True):
        context.add_init_script(WATCH_PAGE)
        page = context.new_page()
        page.on("pageerror", lambda exc, found=page_errors: found.append(str(exc)))
        pages.append(page)
    for page, query in zip(pages, queries, strict=True):
        page.goto(f"{url}/?{query}", wait_until="commit")
    deadline = time.perf_counter() + 600
    states = [None] * len(pages)
    while time.perf_counter() < deadline:
        states = [page.evaluate("() => window.__snacks") for page in pages]
        if all(state and state["done"] is not None for state in states):
            break
        time.sleep(0.5)
    rows = []
    for page, query, state, page_errors in zip(pages, queries, states, errors, strict=True):
        page.wait_for_timeout(200)
        shown = (page.locator("[data-testid='stException']").count()
                 + page.locator("[data-testid='stAlertContentError']").count())
        rows.append({"query": query or "(defaults)", "seconds": state and state["done"],
                     "saw": ", ".join(state["saw"]) if state and state["saw"] else "-",
                     "errors": shown + len(page_errors)})
    for context in contexts:
        context.close()
    return rows


def first_result(browser, url, query):
    """Seconds from opening one page alone to its metrics."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    start = time.perf_counter()
    page.goto(f"{url}/?{query}", wait_until="commit")
    page.wait_for_selector(METRIC, timeout=300_000)
    seconds = time.perf_counter() - start
    page.close()
    return seconds


def wait_idle(pid, window=0.5, timeout=120):
    """Wait until the server uses under IDLE_CORES over ``window`` seconds."""
    end = time.perf_counter() + timeout
    while time.perf_counter() < end:
        before = cpu_seconds(pid)
        time.sleep(window)
        if (cpu_seconds(pid) - before) / window < IDLE_CORES:
            return


def busy_for(pid, start_action, stop_action=None, work_seconds=3.0):
    """Start a run in a page (``start_action``), let it work ``work_seconds``, then close the
    page (``stop_action``): seconds from the close until the server's CPU work stops (the
    end of the last 100 ms window above IDLE_CORES before 2 s of quiet).  Without a
    ``stop_action``: the seconds the run takes to finish."""
    wait_idle(pid)
    start_action()
    begin = time.perf_counter()
    time.sleep(work_seconds)
    if stop_action is not None:
        stop_action()
    closed = time.perf_counter()
    samples = [(closed, cpu_seconds(pid))]
    quiet_since, last_busy = None, closed
    while time.perf_counter() - closed < 600:
        time.sleep(0.02)
        samples.append((time.perf_counter(), cpu_seconds(pid)))
        # CPU rate over the last 100 ms.
        older = [(t, c) for t, c in samples if samples[-1][0] - t >= 0.1]
        if not older:
            continue
        t0, c0 = older[-1]
        busy = (samples[-1][1] - c0) / (samples[-1][0] - t0) >= IDLE_CORES
        if busy:
            quiet_since = None
            last_busy = samples[-1][0]
        elif quiet_since is None:
            quiet_since = samples[-1][0]
        elif samples[-1][0] - quiet_since >= 2.0:
            break
    return last_busy - closed if stop_action is not None else last_busy - begin


def cancellation(browser, url, pid):
    """(what, [(seconds after the click when its tab closed, seconds its work went on
    after that)], seconds the run takes when left to finish)."""
    results = []
    for what, path, button, closes in (
            ("Playground fit, n 50k (35k train) × m 2000", f"/?{BIG_FIT}", "Train",
             (0.5, 1.5, 3.0)),
            ("Robustness sweep, 50k rows, m 1000, γ × λ 4 × 4, 2 seeds",
             f"/robustness?{BIG_SWEEP}", "Run sweep", (4.0,))):
        stops, full = [], None
        # Each run on its own seed: none is in the cache.
        for seed, close in enumerate((*closes, None), start=11):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}{path}&seed={seed}", wait_until="domcontentloaded")
            page.get_by_role("button", name=button, exact=True).wait_for(timeout=300_000)

            def click(page=page, button=button):
                page.get_by_role("button", name=button, exact=True).click()

            if close is None:
                full = busy_for(pid, click)
                page.close()
            else:
                stops.append((close, busy_for(pid, click, page.close, close)))
        results.append((what, stops, full))
    return results


def main(write=False):
    path = chromium_path()
    if path is None:
        raise SystemExit("chromium is not installed")
    from playwright.sync_api import sync_playwright

    queries = [""] * (N_SESSIONS - N_HEAVY) + [f"{HEAVY_QUERY}&seed={k}" for k in range(N_HEAVY)]
    process, url = start_server()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
            before = rss(process.pid)
            sampler = MemorySampler(process.pid)
            sampler.start()
            machine_before, server_before = machine_cpu_seconds(), cpu_seconds(process.pid)
            start = time.perf_counter()
            rows = open_sessions(browser, url, queries)
            cpu = {"wall": time.perf_counter() - start,
                   "server": cpu_seconds(process.pid) - server_before,
                   "machine": machine_cpu_seconds() - machine_before}
            time.sleep(5)
            sampler.running = False
            after = rss(process.pid)
            alone = first_result(browser, url, "seed=99")
            alone_heavy = first_result(browser, url, f"{HEAVY_QUERY}&seed=99")
            print(sessions_report(rows, before, sampler.peak, after, alone, alone_heavy, cpu),
                  flush=True)
            stops = cancellation(browser, url, process.pid)
            browser.close()
    finally:
        process.terminate()
        process.wait(timeout=20)
    lines = ["", "| run, tab closed while it works | tab closed after (s) | CPU work after "
             "the close (s) | the run left to finish (s) |", "|---|---|---|---|"]
    for what, closes, full in stops:
        for closed_after, after_close in closes:
            lines.append(f"| {what} | {closed_after:.1f} | {after_close:.2f} | {full:.1f} |")
    print("\n".join(lines))
    if write:
        write_section("classroom", sessions_report(rows, before, sampler.peak, after, alone,
                                                   alone_heavy, cpu) + "\n" + "\n".join(lines))


def sessions_report(rows, before, peak, after, alone, alone_heavy, cpu) -> str:
    """The 20 sessions' table and summary; ``cpu``: the wall seconds until every session had
    its result, and the CPU seconds the server and the whole machine used meanwhile."""
    lines = [f"Machine: {machine()}", "",
             f"{N_SESSIONS} sessions opened at once on a fresh server (SNACKS_MAX_HEAVY_RUNS "
             f"default: {max(1, len(os.sched_getaffinity(0)) // 2)} heavy run(s) at once).",
             "", "| # | settings | first result (s) | saw | errors |", "|---|---|---|---|---|"]
    for i, row in enumerate(rows, 1):
        seconds = "never" if row["seconds"] is None else f"{row['seconds']:.1f}"
        lines.append(f"| {i} | {row['query']} | {seconds} | {row['saw']} | {row['errors']} |")
    light = [r["seconds"] for r in rows[:N_SESSIONS - N_HEAVY] if r["seconds"] is not None]
    heavy = [r["seconds"] for r in rows[N_SESSIONS - N_HEAVY:] if r["seconds"] is not None]
    lines += ["",
              f"Defaults ({len(light)} sessions): median {statistics.median(light):.1f} s, "
              f"longest {max(light):.1f} s; alone on the warm server {alone:.2f} s "
              f"(median / alone = {statistics.median(light) / alone:.1f}×).",
              f"Heavy ({len(heavy)} sessions, {HEAVY_QUERY}): median "
              f"{statistics.median(heavy):.1f} s, longest {max(heavy):.1f} s; alone "
              f"{alone_heavy:.2f} s.",
              f"Errors shown: {sum(r['errors'] for r in rows)}; sessions without a result: "
              f"{sum(r['seconds'] is None for r in rows)}.",
              f"Server memory (RSS of its process tree): before {before:.0f} MiB, peak "
              f"{peak:.0f} MiB, after the sessions closed {after:.0f} MiB.",
              f"CPU until the last result ({cpu['wall']:.1f} s of wall time, "
              f"{os.cpu_count()} cores): the server {cpu['server']:.1f} s "
              f"({cpu['server'] / N_SESSIONS:.2f} s a session), the whole machine "
              f"{cpu['machine']:.1f} s: the rest is the {N_SESSIONS} Chromium pages, which a "
              "class runs on its own machines."]
    return "\n".join(lines)


# The first picture: the Playground's figure drawn (its plot area has its SVG layers), not
# the hidden chart that loads Plotly early (snacks_core.app.preload).
PICTURE = f".js-plotly-plot:not(.st-key-{preload.KEY} *) .main-svg .cartesianlayer"
# Streamlit's floors: the smallest page that shows a Plotly figure, and the same page with
# one widget of each kind the sidebar uses (each kind is a script loaded on first use).
FLOOR_APP = """import plotly.graph_objects as go
import streamlit as st

if WIDGETS:
    with st.sidebar:
        st.selectbox("Dataset", ["moons", "circles"])
        st.select_slider("n", [100, 200, 400])
        st.slider("Noise", 0.0, 1.0, 0.2)
        st.toggle("γ from the data", True)
        st.number_input("Seed", 0, 10, 0)
        st.segmented_control("Regularize with", ["λ", "C"], default="λ")
        st.checkbox("PCA")
st.title("Floor")
st.metric("Test error", "0.0 %")
st.plotly_chart(go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 0, 1], mode="markers")))
"""


def floor_server(widgets):
    """A server of Streamlit's floor page (:data:`FLOOR_APP`), with or without the
    sidebar's kinds of widget: (process, URL)."""
    folder = Path(os.environ.get("TMPDIR") or "/tmp") / f"snacks_floor_{os.getpid()}_{widgets}"
    folder.mkdir(exist_ok=True)
    (folder / "app.py").write_text(f"WIDGETS = {widgets}\n" + FLOOR_APP)
    return start_server(folder)


def new_visitor(browser, url, measure_bytes=False) -> dict:
    """One new visitor (a fresh context: no cache) on ``url``: seconds to each stage; with
    ``measure_bytes``, what was downloaded instead (reading each response's body slows the
    browser, so a visit measures one or the other)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    got = {"script_bytes": 0, "style_bytes": 0, "other_bytes": 0, "message_bytes": 0,
           "largest_message": 0, "messages_done": 0.0, "late_scripts": []}
    start = time.perf_counter()

    def response(answer):
        try:
            size = len(answer.body())
        except Exception:  # a redirect or an aborted request has no body
            return
        kind = ("script" if answer.url.endswith(".js") else
                "style" if answer.url.endswith(".css") else "other")
        got[f"{kind}_bytes"] += size
        if kind == "script" and got.get("scripts_loaded"):
            got["late_scripts"].append((answer.url.rsplit("/", 1)[-1].split(".")[0], size))

    def websocket(socket):
        def frame(payload):
            got["message_bytes"] += len(payload or b"")
            got["largest_message"] = max(got["largest_message"], len(payload or b""))
            got["messages_done"] = time.perf_counter() - start
        socket.on("framereceived", frame)

    if measure_bytes:
        page.on("response", response)
    page.on("websocket", websocket)
    page.goto(f"{url}/", wait_until="load")
    got["scripts_loaded"] = time.perf_counter() - start
    page.wait_for_selector(METRIC, timeout=300_000)
    got["metrics"] = time.perf_counter() - start
    page.wait_for_selector(PICTURE, timeout=300_000)
    got["picture"] = time.perf_counter() - start
    page.wait_for_timeout(500)
    context.close()
    return got


def first_picture(write=False, visitors=5):
    """Each stage of a new visitor's first picture on a warm server, beside Streamlit's
    floor (module docstring)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(),
                                             args=CHROMIUM_ARGS)
        process, url = start_server()
        floors = {name: floor_server(widgets)
                  for name, widgets in (("floor", False), ("floor with widgets", True))}
        try:
            rows, downloads = {}, {}
            for name, (_, address) in {"Playground": (process, url), **floors}.items():
                new_visitor(browser, address)  # the first visitor trains the defaults
                rows[name] = [new_visitor(browser, address) for _ in range(visitors)]
                downloads[name] = new_visitor(browser, address, measure_bytes=True)
        finally:
            for running, _ in [(process, url), *floors.values()]:
                running.terminate()
                running.wait(timeout=20)
            browser.close()
    report = first_picture_report(rows, downloads)
    print(report)
    if write:
        write_section("first-picture", report)


def first_picture_against(baseline, write=False, visitors=9):
    """New visitors' first pictures on the Playground of this checkout and of ``baseline``
    (a git revision, in a temporary worktree), both servers warm, visits alternating."""
    import tempfile

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        worktree = Path(folder) / "baseline"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(worktree), baseline], check=True)
        servers = {"now": start_server(), f"before ({baseline})": start_server(worktree, True)}
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=chromium_path(),
                                                     args=CHROMIUM_ARGS)
                for _, url in servers.values():
                    new_visitor(browser, url)  # the first visitor trains the defaults
                rows = {name: [] for name in servers}
                for _ in range(visitors):
                    for name, (_, url) in servers.items():
                        rows[name].append(new_visitor(browser, url))
                browser.close()
        finally:
            for process, _ in servers.values():
                process.terminate()
                process.wait(timeout=20)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(worktree)], check=True)
    report = against_report(baseline, rows)
    print(report)
    if write:
        write_section("first-picture-against", report)


def against_report(baseline, rows) -> str:
    """Medians of each stage, now against ``baseline``."""
    before, now = rows[f"before ({baseline})"], rows["now"]
    lines = [f"## First picture against {baseline}: `bench_classroom.py --first-picture "
             f"--baseline {baseline}`", "",
             f"Machine: {machine()} (load average {os.getloadavg()[0]:.1f} at the end). "
             f"{len(now)} new visitors to each of two warm servers, this checkout's and "
             f"{baseline}'s, visits alternating. Medians, seconds from opening the page.", "",
             f"| stage | before ({baseline}) | now | now / before |", "|---|---|---|---|"]
    for label, name in [("page and its scripts loaded", "scripts_loaded"),
                        ("the run's last message received", "messages_done"),
                        ("metrics drawn", "metrics"), ("first picture drawn", "picture")]:
        old, new = (statistics.median(row[name] for row in rows_)
                    for rows_ in (before, now))
        lines.append(f"| {label} | {old:.2f} | {new:.2f} | {new / old:.2f}× |")
    return "\n".join(lines)


def first_picture_report(rows, downloads) -> str:
    """Medians of each stage per page (``rows``: page → the visitors' :func:`new_visitor`
    records), the Playground first, and what one more visitor downloaded
    (``downloads``: page → its record)."""
    def median(name, page):
        return statistics.median(row[name] for row in rows[page])

    pages = list(rows)
    stages = [("page and its scripts loaded", "scripts_loaded"),
              ("the run's last message received", "messages_done"),
              ("metrics drawn", "metrics"), ("first picture drawn", "picture")]
    lines = ["## First picture (issue 28): `bench_classroom.py --first-picture`", "",
             f"Machine: {machine()} (load average {os.getloadavg()[0]:.1f} at the end)", "",
             f"{len(rows['Playground'])} new visitors one after another on a warm server (the "
             "Playground at its defaults, trained by a first visitor), each in a fresh browser "
             "context; beside them Streamlit's floors: one small Plotly figure, alone and with "
             "one widget of each kind the sidebar uses. Medians, seconds from opening the page; "
             "what was downloaded, from one more visitor (reading the bodies slows a visit).",
             "", "| stage | " + " | ".join(pages) + " | Playground / floor with widgets |",
             "|---" * (len(pages) + 2) + "|"]
    for label, name in stages:
        lines.append(f"| {label} | " + " | ".join(f"{median(name, page):.2f}" for page in pages)
                     + f" | {median(name, 'Playground') / median(name, pages[-1]):.1f}× |")
    kib = 1024
    lines += ["", "| downloaded (KiB) | " + " | ".join(pages) + " |",
              "|---" * (len(pages) + 1) + "|"]
    for label, name in [("scripts", "script_bytes"), ("styles", "style_bytes"),
                        ("other (page, fonts, icons)", "other_bytes"),
                        ("messages of the run", "message_bytes"),
                        ("largest message (the figure)", "largest_message")]:
        lines.append(f"| {label} | "
                     + " | ".join(f"{downloads[page][name] / kib:,.0f}" for page in pages)
                     + " |")
    late = sorted(downloads["Playground"]["late_scripts"], key=lambda item: -item[1])[:4]
    lines += ["", "Largest scripts the Playground loads after the page, as its elements first "
              "appear: " + ", ".join(f"{name} {size / kib:,.0f} KiB" for name, size in late)
              + "."]
    return "\n".join(lines)


def _one_search(split, params):
    """The previous Auto-tune: γ × 7 C values × m as set and 4×, one halving search on every
    training row."""
    from snacks_core.app import explorer
    from snacks_core.kernels.functions import resolve_gamma
    from snacks_core.model.defaults import (
        SEARCH_GAMMA_FACTORS,
        C_values_around_default,
        gamma_values_around,
        round_125,
    )
    from snacks_core.model.estimator import estimator_from_settings
    from snacks_core.model.search import SnacksSearchCV
    from snacks_core.solvers.objective import C_to_lam

    m = params["n_components"]
    grid = {"C": list(C_values_around_default(3)), "n_components": [m, min(4 * m, 2000)],
            "gamma": gamma_values_around(resolve_gamma("scale", split.X_train),
                                         SEARCH_GAMMA_FACTORS)}
    search = SnacksSearchCV(estimator_from_settings(params), grid, cv=explorer.AUTO_TUNE_FOLDS,
                            halving=True, refit=False, random_state=0)
    search.fit(split.X_train, split.y_train)
    chosen = dict(search.best_params_)
    chosen["lam"] = round_125(C_to_lam(chosen.pop("C"), split.X_train.shape[0]))
    return {"params": chosen, "cv_error": 1.0 - search.best_score_,
            "n_rows": split.X_train.shape[0],
            "fits": explorer.AUTO_TUNE_FOLDS * len(search.cv_results_["params"])}


def auto_tune_bench(write=False):
    """Auto-tune's seconds and its choice's test error (module docstring)."""
    from snacks_core import datasets
    from snacks_core.app import explorer
    from snacks_core.app.sidebar import defaults_for
    from snacks_core.model import evaluation

    sets = []
    w8a = ROOT.parent / "shared" / "data" / "w8a"
    if w8a.exists():
        sets.append(("w8a", lambda: datasets.load_file(w8a, n_features=300)))
    else:
        print(f"w8a skipped: {w8a} not found.")

    def census():
        X, y, _, _ = datasets.make_a9a_like(32561, 100, random_state=0)
        return datasets.make_dataset(X, y, "census-shaped (a9a-like)")

    sets.append(("census-shaped", census))
    lines = ["## Auto-tune (issue 28): `bench_classroom.py --auto-tune`", "",
             f"Machine: {machine()}", "",
             "| data (training rows) | run | seconds | then training the choice (s) | "
             "chosen | CV error % | test error % |", "|---|---|---|---|---|---|---|"]
    for name, load in sets:
        dataset = load()
        chosen = defaults_for(dataset, 0.3)
        split = datasets.split_dataset(dataset, test_size=0.3, scaling=chosen["scaling"],
                                       random_state=0)
        params = {"kernel": "rbf", "gamma": "scale", "n_components": chosen["m"],
                  "lam": chosen["lam"], "solver": "snacks", "sampling": "balanced",
                  "max_epochs": 50, "class_weight": None, "random_state": 0}
        default = evaluation.train(split, params).metrics
        label = f"{name} ({split.X_train.shape[0]:,})"
        lines.append(f"| {label} | the defaults (m = {chosen['m']}, λ = {chosen['lam']:g}) | "
                     f"- | - | - | - | {100 * default['test_error']:.2f} |")
        for run, tune in (("Auto-tune", explorer.auto_tune),
                          ("one search over γ × C × m (Auto-tune before)", _one_search)):
            start = time.perf_counter()
            tuned = tune(split, params)
            seconds = time.perf_counter() - start
            start = time.perf_counter()
            after = evaluation.train(split, {**params, **tuned["params"]}).metrics
            fit = time.perf_counter() - start
            picked = ", ".join(f"{key} = {value:g}" for key, value in tuned["params"].items())
            lines.append(f"| {label} | {run} ({tuned['fits']} fits on {tuned['n_rows']:,} "
                         f"rows) | {seconds:.1f} | {fit:.1f} | {picked} | "
                         f"{100 * tuned['cv_error']:.2f} | {100 * after['test_error']:.2f} |")
            print(lines[-1], flush=True)
    report = "\n".join(lines)
    print(report)
    if write:
        write_section("auto-tune", report)


# A class's answers (issue 38): the script run an action started is over, no element is
# still loading and a figure is drawn.
ANSWERED = f"""() => document.querySelector("{NOT_RUNNING}") !== null
  && !document.querySelector("[data-testid='stSkeleton']")
  && document.querySelector("{PICTURE}") !== null"""


async def answered(page, started):
    """Seconds from ``started`` until the run an action started is drawn (the run may end
    before it is seen starting: then only the end is waited for)."""
    try:
        await page.wait_for_selector(RUNNING, timeout=5_000)
    except Exception:  # over before we looked
        pass
    await page.wait_for_function(ANSWERED, timeout=300_000, polling=20)
    return time.perf_counter() - started


async def move_slider(page):
    """The sidebar's noise slider one step to the right (new data, a new model)."""
    thumb = page.locator(".st-key-noise input[type='range']")
    await thumb.focus()
    started = time.perf_counter()
    await thumb.press("ArrowRight")
    return started


async def start_lesson(page):
    """The sidebar's first lesson ("Too few landmarks")."""
    from snacks_core.app.teaching import LESSONS

    await page.get_by_text("Lessons").first.click()
    button = page.get_by_role("button", name=LESSONS["few_landmarks"].title, exact=True)
    # A student's mouse click, once the page has settled, or it may land where the button
    # was a moment before (tests/test_browser.py's click_lesson dispatches its click on the
    # button instead, which no late move of the page can miss).
    await button.wait_for()
    await page.evaluate(SETTLED)
    started = time.perf_counter()
    await button.click()
    return started


async def open_other_page(page):
    """The Convergence page from the navigation."""
    link = page.get_by_role("link", name="Convergence")
    started = time.perf_counter()
    await link.click()
    return started


ACTIONS = {"slider (noise one step)": move_slider, "lesson": start_lesson,
           "page (Convergence)": open_other_page}


async def student(browser, url, ready, go, seconds):
    """One student's browser: the Playground, then each action when the class acts."""
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    try:
        await page.goto(f"{url}/", wait_until="domcontentloaded")
        await page.wait_for_function(ANSWERED, timeout=300_000, polling=100)
        for name, action in ACTIONS.items():
            ready.release()
            await go[name].wait()
            started = await action(page)
            seconds[name].append(await answered(page, started))
    finally:
        await context.close()


async def class_answers(url, pid, students):
    """Every student acts at once, action after action: seconds to each answer, and the
    server's CPU seconds per answer."""
    import asyncio

    from playwright.async_api import async_playwright

    seconds = {name: [] for name in ACTIONS}
    server_cpu = {}
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(),
                                                   args=CHROMIUM_ARGS)
        ready = asyncio.Semaphore(0)
        go = {name: asyncio.Event() for name in ACTIONS}
        tasks = [asyncio.create_task(student(browser, url, ready, go, seconds))
                 for _ in range(students)]
        for name in ACTIONS:
            for _ in range(students):
                await ready.acquire()
            before = cpu_seconds(pid)
            go[name].set()
            while len(seconds[name]) < students and not any(t.done() for t in tasks):
                await asyncio.sleep(0.05)
            server_cpu[name] = (cpu_seconds(pid) - before) / students
        await asyncio.gather(*tasks)
        await browser.close()
    return seconds, server_cpu


async def arriving_together(url, visitors):
    """Seconds to the first picture of ``visitors`` new visitors opening the page at once."""
    import asyncio

    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(),
                                                   args=CHROMIUM_ARGS)

        async def visitor():
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            page = await context.new_page()
            started = time.perf_counter()
            await page.goto(f"{url}/", wait_until="commit")
            await page.wait_for_selector(PICTURE, timeout=300_000)
            await context.close()
            return time.perf_counter() - started

        times = await asyncio.gather(*(visitor() for _ in range(visitors)))
        await browser.close()
    return list(times)


def answers(write=False, students=10):
    """A class on a warm server: new visitors arriving together, then every student moving
    a slider, starting a lesson and opening a page at once (issue 38)."""
    import asyncio

    def first_pictures(url):
        asyncio.run(arriving_together(url, 1))  # the first visitor trains the defaults
        alone = [asyncio.run(arriving_together(url, 1))[0] for _ in range(3)]
        return alone, asyncio.run(arriving_together(url, students))

    floor, floor_url = floor_server(widgets=True)
    try:
        floor_pictures = first_pictures(floor_url)
    finally:
        floor.terminate()
        floor.wait(timeout=20)
    process, url = start_server()
    try:
        pictures = first_pictures(url)
        alone_answers, alone_cpu = asyncio.run(class_answers(url, process.pid, 1))
        seconds, server_cpu = asyncio.run(class_answers(url, process.pid, students))
    finally:
        process.terminate()
        process.wait(timeout=20)
    report = answers_report(students, pictures, floor_pictures, alone_answers, alone_cpu,
                            seconds, server_cpu)
    print(report)
    if write:
        write_section("class-answers", report)


def answers_report(students, pictures, floor_pictures, alone_answers, alone_cpu, seconds,
                   server_cpu) -> str:
    """The medians against issue 38's targets; ``pictures`` and ``floor_pictures``: the
    first pictures (alone, together) of the Playground and of Streamlit's floor."""
    median = statistics.median
    (alone, together), (floor_alone, floor_together) = pictures, floor_pictures
    lines = ["## A class's answers (issue 38): `bench_classroom.py --answers`", "",
             f"Machine: {machine()} (load average {os.getloadavg()[0]:.1f} at the end); the "
             "server and every student's headless Chromium on the same cores.", "",
             "| what | alone: median s | "
             f"{students} at once: median s | max s | server CPU s per answer "
             "(alone / at once) | target |", "|---|---|---|---|---|---|",
             f"| a new visitor's first picture | {median(alone):.2f} | {median(together):.2f} "
             f"| {max(together):.2f} | - | ≤ 3 alone, ≤ 5 together |",
             f"| Streamlit's floor: one small figure and the sidebar's widgets "
             f"| {median(floor_alone):.2f} | {median(floor_together):.2f} "
             f"| {max(floor_together):.2f} | - | - |"]
    for name in ACTIONS:
        lines.append(f"| {name} | {median(alone_answers[name]):.2f} | "
                     f"{median(seconds[name]):.2f} | {max(seconds[name]):.2f} | "
                     f"{alone_cpu[name]:.2f} / {server_cpu[name]:.2f} | ≤ 3 on screen, "
                     "≤ 1 of server time |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="also write this mode's section of BENCHMARKS.md")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--first-picture", action="store_true",
                      help="a new visitor's time to the first picture on a warm server")
    mode.add_argument("--auto-tune", action="store_true",
                      help="Auto-tune's time and choice on 50,000- and 32,561-row sets")
    mode.add_argument("--answers", action="store_true",
                      help="10 students: first pictures arriving together, then a slider, a "
                           "lesson and a page clicked at once")
    parser.add_argument("--baseline", metavar="REV",
                        help="with --first-picture: against this git revision's app instead "
                             "of Streamlit's floors")
    arguments = parser.parse_args()
    if arguments.first_picture and arguments.baseline:
        first_picture_against(arguments.baseline, arguments.write)
    elif arguments.answers:
        answers(arguments.write)
    elif arguments.first_picture:
        first_picture(arguments.write)
    elif arguments.auto_tune:
        auto_tune_bench(arguments.write)
    else:
        main(arguments.write)
