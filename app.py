"""Snacks Explorer: the Streamlit entry point (page config, shared sidebar, navigation)."""

import streamlit as st

from snacks_core.ui import state, widgets

st.set_page_config(page_title="Snacks Explorer", page_icon=":material/scatter_plot:",
                   layout="wide", initial_sidebar_state="expanded")

state.init_session(st.query_params)
state.keep_settings()

PAGES = {
    "playground": st.Page("pages/playground.py", title="Playground", icon=":material/scatter_plot:",
                          default=True),
}
page = st.navigation(list(PAGES.values()))
widgets.sidebar()

goto = st.session_state.pop(state.Keys.GOTO, None)
if goto in PAGES and PAGES[goto] is not page:
    st.switch_page(PAGES[goto])

state.write_query_params()
widgets.url_problems()
page.run()
