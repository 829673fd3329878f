"""Errors a user can cause (bad data, bad parameters, no network), shown in place of a
traceback while the app keeps running."""

from __future__ import annotations

from contextlib import contextmanager

import streamlit as st

from snacks_core.app import cached
from snacks_core.datasets import DownloadError

# Errors a user can cause (bad data, bad parameters, no network) and that we show in place.
USER_ERRORS = (ValueError, DownloadError, MemoryError, OSError)


def show_error(exc):
    """A readable message in place of a traceback; the app keeps running."""
    st.error(f"**{type(exc).__name__ if not isinstance(exc, ValueError) else 'Problem'}:** "
             f"{exc}", icon=":material/error:")


@contextmanager
def stop_on_user_error():
    """Run the block; on an error the user caused, show it in place and end the page there."""
    try:
        yield
    except USER_ERRORS as exc:
        show_error(exc)
        st.stop()


def load_split_or_stop():
    """The current split, or an error box and the end of this page."""
    request = cached.data_request()
    with stop_on_user_error():
        return request, cached.load_split(request)
