"""Arriving at a page: which page this run shows, and what was wrong in the link."""

from __future__ import annotations

import streamlit as st

from snacks_core.app.state import Keys


def record_page(pages, page):
    """Remember the name (a key of ``pages``) of the page ``st.navigation`` chose for this
    run: a lesson ends when its page is left (:func:`snacks_core.app.lessons.lesson_left`)."""
    st.session_state[Keys.PAGE] = next(name for name, known in pages.items() if known is page)


def url_problems():
    problems = st.session_state.get(Keys.URL_PROBLEMS)
    if problems:
        st.warning("Some settings in the link were invalid and were replaced by defaults: "
                   + "; ".join(problems))
        st.session_state[Keys.URL_PROBLEMS] = []
