"""This session's language: the provider tr() reads (use_session_language), a chart builder's words in the reader's
language (words_for), and the page's <html lang> (document_language).

The choice lives in this user's session (ui/session.py; and the URL, see ui/share.py), so one student switching to
Korean changes nothing for anyone else.
"""
from __future__ import annotations

import functools
import json

import streamlit as st

import i18n
from i18n.particles import attach_particles
from serving.internals import in_script_run
from ui.session import WidgetKey
from viz.words import Words

LANGUAGE = "lang"  # widget key (its spec: ui/specs/common.py's LANGUAGE_SPEC, which imports this module)
_LANGUAGE = WidgetKey(LANGUAGE)


def _session_language() -> str:
    """The language of the browser session this thread is drawing for; English outside a session."""
    if not in_script_run():
        return i18n.DEFAULT_LANGUAGE
    return _LANGUAGE.get(i18n.DEFAULT_LANGUAGE)


def use_session_language() -> None:
    """Make tr() read this browser session's language: called first in every run (ui/run.run_app), never as a side
    effect of importing this module. A fragment's own rerun (ui/share.view_fragment) follows a full run of its session
    in the same process, so the provider is in place; it reads the session's language at each call."""
    i18n.set_language_provider(_session_language)


def words_for(*tables: str) -> Words:
    """The words of the i18n tables a chart family reads ("positional", "llm_explain", ...), in this reader's language,
    for a viz/ builder's `words`: what tr() would say for each of their keys."""
    return _words(i18n.current_language(), tables)


@functools.cache
def _words(language: str, tables: tuple[str, ...]) -> Words:
    english, own = i18n.strings(i18n.DEFAULT_LANGUAGE), i18n.strings(language)
    prefixes = tuple(f"{table}." for table in tables)
    templates = {key: own.get(key, template) for key, template in english.items() if key.startswith(prefixes)}
    if language == "ko":
        return Words(language, tables, templates, finish=attach_particles)
    return Words(language, tables, templates)


def document_language() -> None:
    """Set the page's <html lang> to the interface language, so that a screen reader reads Korean as Korean.

    Streamlit serves its page as lang="en" and offers no setting for it: a script (st.html runs it in the page
    itself, not in an iframe) sets it on every run; it runs again when the language, hence its text, changes. Only a
    language code of i18n.LANGUAGES goes into the script, never user text.
    """
    language = i18n.current_language()
    code = language if language in i18n.LANGUAGES else i18n.DEFAULT_LANGUAGE
    st.html(f"<script>document.documentElement.lang = {json.dumps(code)};</script>", width="content",
            unsafe_allow_javascript=True)


def reader_zone() -> str | None:
    """The reader's time zone as her browser reports it (an IANA name such as 'Asia/Seoul'), or None where there is
    no browser (AppTest, a script): a deadline is then said in UTC alone (classroom/errors.utc_minute)."""
    try:
        zone = st.context.timezone
    except Exception:  # no client context
        return None
    return zone if isinstance(zone, str) and 0 < len(zone) <= 64 else None
