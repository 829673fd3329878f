"""Lessons: one click sets up a small experiment, and a banner says what to look at while
that experiment is on screen."""

from __future__ import annotations

import streamlit as st

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


# The banner's height, and the room it takes with the gap below it (pixels).
BANNER_HEIGHT = 110
BANNER_SPACE = 140


def lesson_banner():
    """The explanation of the lesson the user started, until dismissed or its experiment is
    left (:func:`lesson_left`: the lesson ends then).  One short row beside its button, so
    that the Playground's plot still ends inside the window."""
    name = st.session_state.get(Keys.LESSON)
    if name not in LESSONS:
        return
    if lesson_left(name):
        _dismiss_lesson()
        return
    lesson = LESSONS[name]
    # A fixed height (longer texts scroll), which the Playground's figures give up: app.py's
    # PLAYGROUND_CSS sizes them to the window less what is above them.
    st.html("<style>.st-key-boundary_figure > div{height:clamp(340px,min(calc(100cqw - 15px),"
            f"calc(100vh - {290 + BANNER_SPACE}px)),900px)}}"
            ".st-key-drawing_figure > div{height:clamp(340px,min(calc(100cqw - 15px),"
            f"calc(100vh - {400 + BANNER_SPACE}px)),900px)}}</style>")
    with st.container(border=True, key="lesson_banner", height=BANNER_HEIGHT):
        text, button = st.columns([12, 1], vertical_alignment="center")
        text.markdown(f"**Lesson · {lesson.title}** — {lesson.text}")
        button.button("Got it", key="dismiss_lesson", on_click=_dismiss_lesson)
