"""Snacks Explorer: the Streamlit entry point (page config, shared sidebar, navigation)."""

import time

import streamlit as st
from threadpoolctl import threadpool_limits

from snacks_core.ui import cached, state, widgets

st.set_page_config(page_title="Snacks Explorer", page_icon=":material/scatter_plot:",
                   layout="wide", initial_sidebar_state="expanded")

state.init_session(st.query_params)
st.session_state[state.Keys.RUN_STARTED] = time.time()
state.keep_settings()
state.apply_pending()

PAGES = {
    "playground": st.Page("pages/playground.py", title="Playground", icon=":material/scatter_plot:",
                          default=True),
    "convergence": st.Page("pages/convergence.py", title="Convergence",
                           icon=":material/trending_down:"),
    "spectrum": st.Page("pages/spectrum.py", title="Spectrum", icon=":material/equalizer:"),
    "robustness": st.Page("pages/robustness.py", title="Robustness heatmap",
                          icon=":material/grid_on:"),
    "solvers": st.Page("pages/solvers.py", title="Solver comparison",
                       icon=":material/leaderboard:"),
    "paper": st.Page("pages/paper.py", title="The paper's tables", icon=":material/article:"),
    "data": st.Page("pages/data.py", title="Data", icon=":material/database:"),
}
page = st.navigation(list(PAGES.values()))
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
        "</style>")
widgets.sidebar()

goto = st.session_state.pop(state.Keys.GOTO, None)
if goto in PAGES and PAGES[goto] is not page:
    st.switch_page(PAGES[goto])

state.write_query_params()
widgets.url_problems()
# The explorer's matrices are small: one BLAS thread avoids oversubscribing a busy shared
# machine's cores.  Scoped to this run, so the process (and anything else running in it)
# keeps its own setting.
with threadpool_limits(1, user_api="blas"):
    cached.warm_up()
    page.run()
