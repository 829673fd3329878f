"""Lessons: one click sets up a small experiment, and a banner says what to look at while
that experiment is on screen."""

from __future__ import annotations

import streamlit as st

from snacks_core.app.layout import figure_heights_css
from snacks_core.app.state import Keys, apply, current, lesson_values
from snacks_core.app.teaching import LESSONS


def start_lesson(name):
    lesson = LESSONS[name]
    apply(lesson_values(lesson.settings))
    # The lesson's values stand: none of them is automatic.
    st.session_state[Keys.DATA_DEFAULTS] = {"rows": None, "auto": {}}
    st.session_state[Keys.LESSON] = name
    st.session_state[Keys.GOTO] = lesson.page


def _dismiss_lesson():
    st.session_state.pop(Keys.LESSON, None)


def lesson_left(name) -> bool:
    """Whether the user has left lesson ``name``'s experiment: another page shown, or
    another dataset chosen (its other settings are the user's to vary)."""
    lesson = LESSONS[name]
    return (st.session_state.get(Keys.PAGE, lesson.page) != lesson.page
            or current("dataset") != lesson_values(lesson.settings)["dataset"])


# The room a banner of three lines takes with the gap below it (pixels): a longer one pushes
# the Playground's figure further down rather than shrinking it below its readable size.
BANNER_SPACE = 140


def lesson_banner():
    """The explanation of the lesson the user started, until dismissed or its experiment is
    left (:func:`lesson_left`: the lesson ends then).  The banner grows with its text, and
    its button keeps the width of its label."""
    name = st.session_state.get(Keys.LESSON)
    if name not in LESSONS:
        return
    if lesson_left(name):
        _dismiss_lesson()
        return
    lesson = LESSONS[name]
    st.html(f"<style>{figure_heights_css(BANNER_SPACE)}</style>")
    with st.container(border=True, key="lesson_banner", horizontal=True,
                      vertical_alignment="center"):
        st.markdown(f"**Lesson · {lesson.title}** — {lesson.text}", width="stretch")
        st.button("Got it", key="dismiss_lesson", on_click=_dismiss_lesson, width="content")
