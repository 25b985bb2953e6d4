"""An "explain with a view" question (kind = "view", issue 55): the stop's page shows while it is asked; the student
sets it to the view that explains her answer (a layer, a head, a sentence...) and sends that view's link, the one
"Link to this view" gives (ui/share.py), made here on the server from her session's values, never typed. The link is
checked (classroom/showcase.view_link: a page of this app and only the parameters that page knows, bounded in
length) before it is sent, and again by the store when it takes it (ClassStore.answer_view). It is neither right nor
wrong; the teacher may project one without a name (ui/live_class/showcase.py).
"""
from __future__ import annotations

import functools
from urllib.parse import urlencode

import streamlit as st

from classroom.errors import NotAView
from classroom.lessons import Stop
from classroom.showcase import SHARED_ONLY, view_link, view_parts
from i18n import current_language, tr
from ui.page_list import PAGE_NAMES, PAGE_SECTIONS
from ui.presenter import presenting
from ui.specs import SPECS
from ui.text import escape_markdown
from ui.view import current_view

SHOWN_VALUE_CHARS = 80  # a value as a view's label shows it (a long sentence: its start, then "…")


@functools.cache
def app_views() -> dict[str, frozenset[str]]:
    """Every page of the app (its url path) -> the link parameters it knows: its own values' and every page's (the
    model, the sentence, the language...) and the link's version `v`."""
    return {page: frozenset({name for name, spec in SPECS.items() if not spec.pages or page in spec.pages} | {"v"})
            for page in PAGE_NAMES}


def current_link(page: str) -> str:
    """The link of the view this session has of `page` now, relative (its page and values), as a view question sends
    it: her language and presenter mode are the reader's own, left out (classroom/showcase.SHARED_ONLY)."""
    query = {name: value for name, value in current_view(page).query().items() if name not in SHARED_ONLY}
    return f"{page}?{urlencode(query)}" if query else page


def _page_title(page: str) -> str:
    return next((tr(p.title_key) for _, pages in PAGE_SECTIONS for p in pages if p.name == page), page)


def sent_view_words(link: str) -> str:
    """A view's link as words (plain text: escape it for Markdown): its page's title and its values ("Transformer
    attention · layer = 2 · head = 4"), each value cut to SHOWN_VALUE_CHARS."""
    page, values = view_parts(link)
    return " · ".join([_page_title(page), *(f"{name} = {_cut(value)}" for name, value in values if name != "v")])


def _cut(value: str) -> str:
    return value if len(value) <= SHOWN_VALUE_CHARS else value[:SHOWN_VALUE_CHARS - 1] + "…"


def openable_link(link: str, presenter: bool = False) -> str | None:
    """A stored view's link as the room opens it (checked again: None for anything that is not a view of this app),
    in the reader's language, projected in presenter mode."""
    try:
        canonical = view_link(link, app_views())
    except NotAView:
        return None
    extra = {**({"lang": current_language()} if current_language() != "en" else {}),
             **({"presenter": "true"} if presenter else {})}
    if not extra:
        return canonical
    return f"{canonical}{'&' if '?' in canonical else '?'}{urlencode(extra)}"


def ask_view(stop: Stop, key: str, prompt: str, submit: str | None = None) -> str | None:
    """Draw the question: its prompt, the view she has now in words, and "Send this view"; -> the view's link when she
    sends it in this run (checked: a view that is not one of this app's is said, and nothing is sent)."""
    st.markdown(f"**{prompt}**")
    projected = presenting()
    if not projected:  # projected, the prompt says what to do and the stop's section stays on the first screen
        st.caption(tr("showcase.view_help"))
    link = current_link(stop.page)
    try:
        link = view_link(link, app_views())
    except NotAView as refused:
        st.warning(tr("showcase.not_a_view", reason=refused.reason))
        return None
    words, send = st.columns([3, 1], vertical_alignment="center") if projected else (st, st)  # projected: one row
    words.markdown(tr("showcase.view_now", view=escape_markdown(sent_view_words(link))))
    if not send.button(submit or tr("showcase.send_view"), type="primary", key=f"{key}_send_view",
                       icon=":material/send:"):
        return None
    return link
