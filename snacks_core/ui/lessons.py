"""Lessons: one click sets up a small experiment, and a banner says what to look at."""

from __future__ import annotations

import streamlit as st

from .state import (
    Keys,
    apply,
    lesson_values,
)
from .teaching import LESSONS


def start_lesson(name):
    lesson = LESSONS[name]
    apply(lesson_values(lesson.settings))
    # The lesson's values stand: none of them is automatic.
    st.session_state[Keys.DATA_DEFAULTS] = {"rows": None, "auto": {}}
    st.session_state[Keys.LESSON] = name
    st.session_state[Keys.GOTO] = lesson.page


def _dismiss_lesson():
    st.session_state.pop(Keys.LESSON, None)


def lesson_banner():
    """The explanation of the lesson the user started, until dismissed."""
    name = st.session_state.get(Keys.LESSON)
    if name in LESSONS:
        lesson = LESSONS[name]
        with st.container(border=True):
            st.markdown(f"**Lesson · {lesson.title}** — {lesson.text}")
            st.button("Got it", key="dismiss_lesson", on_click=_dismiss_lesson)
