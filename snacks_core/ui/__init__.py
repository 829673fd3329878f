"""Streamlit helpers of the explorer: session state, cached calls, shared widgets.

:mod:`~snacks_core.ui.pipeline` and :mod:`~snacks_core.ui.export` are plain Python (usable
and testable without Streamlit); the other modules import Streamlit.
"""
