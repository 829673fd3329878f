"""Snacks Explorer: the Streamlit entry point (page config, shared sidebar, navigation)."""

import time

import streamlit as st

from snacks_core.app import layout, navigation, preload, server, sidebar, state

st.set_page_config(page_title="Snacks Explorer", page_icon=":material/scatter_plot:",
                   layout="wide", initial_sidebar_state="expanded")

state.init_session(st.query_params)
st.session_state[state.Keys.RUN_STARTED] = time.time()
state.keep_settings()
state.apply_pending()

PAGES = {
    "playground": st.Page("app_pages/playground.py", title="Playground",
                          icon=":material/scatter_plot:", default=True),
    "convergence": st.Page("app_pages/convergence.py", title="Convergence",
                           icon=":material/trending_down:"),
    "spectrum": st.Page("app_pages/spectrum.py", title="Spectrum", icon=":material/equalizer:"),
    "robustness": st.Page("app_pages/robustness.py", title="Robustness heatmap",
                          icon=":material/grid_on:"),
    "solvers": st.Page("app_pages/solvers.py", title="Solver comparison",
                       icon=":material/leaderboard:"),
    "paper": st.Page("app_pages/paper.py", title="The paper's tables", icon=":material/article:"),
    "data": st.Page("app_pages/data.py", title="Data", icon=":material/database:"),
}
page = st.navigation(list(PAGES.values()))
navigation.record_page(PAGES, page)
# Less empty space above the page title than Streamlit's default; metric values wrap
# instead of being cut to "5.…" in narrow columns.
st.html("<style>[data-testid='stMainBlockContainer']{padding-top:2.5rem}"
        "[data-testid='stMetricValue'] > div{white-space:normal;overflow:visible;"
        "text-overflow:clip;line-height:1.15}"
        "[data-testid='stMetricValue']{font-size:1.6rem}"
        "[data-testid='stMetricLabel'] p{white-space:normal;overflow:visible}"
        "[data-testid='stMetricDelta'] div, [data-testid='stMetricDelta'] p"
        "{white-space:normal;overflow:visible;"
        "text-overflow:clip}"
        "[data-testid='stHorizontalBlock']:has(> div [data-testid='stMetric'])"
        "{flex-wrap:wrap;row-gap:0.5rem}"
        "[data-testid='stColumn']:has(> div [data-testid='stMetric']){min-width:5.5rem}"
        + layout.SMALL_SCREEN_CSS + preload.HIDDEN_CSS + "</style>")
# A new visitor's browser starts on Plotly's script while the server builds the page.
plotly_loading = preload.start_loading_plotly()
# First in the page: a visitor who arrives while the solvers warm up is told at once.
server.wait_for_warm_up()
sidebar.sidebar()

goto = st.session_state.pop(state.Keys.GOTO, None)
if goto in PAGES and PAGES[goto] is not page:
    st.switch_page(PAGES[goto])

state.write_query_params()
navigation.url_problems()
# The BLAS threads are set once for the server process (snacks_core.app.server, at import).
# A page's computations stop soon after its tab closes or a new run preempts it.
with server.cancel_when_gone(), preload.emptied_after(plotly_loading):
    page.run()
