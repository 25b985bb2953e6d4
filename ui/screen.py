"""The screen a chart is drawn for: whether this session's browser is a phone (is_phone, on_phone), and the px a
chart gets across the page, in a column, projected or on a phone (PAGE_WIDTH, COLUMN_WIDTH, PHONE_WIDTH, page_width)."""
from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from serving.internals import in_script_run
from ui.presenter import presenting
from viz.presentation import COLUMN_TITLE_WIDTH

# px a chart gets: the page's width, or a column's (most columns are half the page; another passes its own width to
# show_chart), in a 1280 px wide window with the sidebar open. Only the thinning of token labels reads them, and a smaller guess
# than the real width only labels fewer tokens: with the sidebar closed or projected the charts are wider.
PAGE_WIDTH, COLUMN_WIDTH = 820, 400
# Projected, the sidebar starts collapsed (ui/run.py): the page gains the sidebar's 300 px
PROJECTED_PAGE_WIDTH, PROJECTED_COLUMN_WIDTH = PAGE_WIDTH + 300, COLUMN_WIDTH + 150


# A phone (a student's, in class): the page is about 360 px wide and stacks columns, so every chart gets about this
PHONE_WIDTH = 340
PHONE_TITLE_WIDTH = COLUMN_TITLE_WIDTH * PHONE_WIDTH // COLUMN_WIDTH  # display columns of a title: 44


def is_phone(headers: Mapping[str, str]) -> bool:
    """Whether a browser's request headers say it is a phone: "Mobi" in its User-Agent (the rule MDN gives for
    phones, tablets left out) or the client hint Sec-CH-UA-Mobile: ?1 (sent where the page is a secure context)."""
    return "Mobi" in headers.get("User-Agent", "") or headers.get("Sec-CH-UA-Mobile", "") == "?1"


def on_phone() -> bool:
    """Whether this session's browser is a phone (is_phone of the headers that opened its session)."""
    return in_script_run() and is_phone(st.context.headers)


def page_width() -> int:
    """px of the page's width a full-width chart gets (see PAGE_WIDTH): wider projected, the sidebar folded; a
    phone's narrow screen (PHONE_WIDTH)."""
    if presenting():
        return PROJECTED_PAGE_WIDTH
    return PHONE_WIDTH if on_phone() else PAGE_WIDTH
