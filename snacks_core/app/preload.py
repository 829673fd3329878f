"""Plotly's script loaded while a new visitor's first run is still on the server.

Streamlit's browser side fetches and evaluates its Plotly chart script (about 4.6 MB, the
largest of the app's) only when a run's first figure arrives, after the server has built
everything before it; until then the visitor's browser sits idle.  A new visit's first run
draws an empty Plotly chart first, out of sight, so that the script loads while the server
builds the page, and empties it when the page's run ends (BENCHMARKS.md, "First picture").
"""

from __future__ import annotations

import contextlib

import plotly.graph_objects as go
import streamlit as st

from snacks_core.app.state import Keys

# The hidden chart's container: app.py's CSS keeps it out of sight, and figures counted or
# waited for by the browser tests and benchmarks leave it out.
KEY = "plotly_loading"
HIDDEN_CSS = f".st-key-{KEY}{{display:none}}"


def start_loading_plotly():
    """On a visit's first run, an empty hidden Plotly chart (the placeholder that holds it,
    for :func:`emptied_after`); None on later runs, where the script is loaded already."""
    if st.session_state.get(Keys.PLOTLY_LOADING):
        return None
    st.session_state[Keys.PLOTLY_LOADING] = True
    placeholder = st.empty()
    with placeholder.container(key=KEY):
        st.plotly_chart(go.Figure(layout=dict(width=10, height=10, xaxis_visible=False,
                                              yaxis_visible=False)),
                        key=f"{KEY}_chart")
    return placeholder


@contextlib.contextmanager
def emptied_after(placeholder):
    """The hidden chart removed when the block (the page's run) ends, however it ends."""
    try:
        yield
    finally:
        if placeholder is not None:
            placeholder.empty()
