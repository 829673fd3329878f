"""Arriving at a page: through ``app.py`` whatever the first URL, and what was wrong in
the link."""

from __future__ import annotations

import streamlit as st

from snacks_core.app.state import Keys


def require_entry_point(page_name):
    """Send a run that skipped ``app.py`` through it, then back to ``page_name``.

    With a ``pages/`` folder beside the entry point, a fresh Streamlit server runs its very
    first script in the legacy folder-based multipage mode: when the first URL names a page
    (a shared link to /spectrum), that page file runs alone, without the sidebar, the
    session settings or ``st.navigation``.  ``app.py`` calls ``st.navigation``, which ends
    the legacy mode for the whole server, and then opens the page asked for here.
    """
    if not st.session_state.get(Keys.INITIALIZED):
        st.session_state[Keys.GOTO] = page_name
        st.switch_page("app.py", query_params=st.query_params.to_dict())
    st.session_state[Keys.PAGE] = page_name


def url_problems():
    problems = st.session_state.get(Keys.URL_PROBLEMS)
    if problems:
        st.warning("Some settings in the link were invalid and were replaced by defaults: "
                   + "; ".join(problems))
        st.session_state[Keys.URL_PROBLEMS] = []
