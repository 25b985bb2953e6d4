"""The sidebar's list of pages: st.navigation's own list, drawn with st.page_link so each link carries its view.

Why not st.navigation's sidebar: a click there opens the page with an empty query string, and Streamlit pushes
that bare address onto the browser's history before the page writes its view (ui/share.write_to_url) as a second
entry, so the browser's Back needed two presses to leave a page. A page link that carries the address the page
will write (its kept view, the same text write_to_url produces) makes one history entry per page change: Streamlit
pushes the link's address and the page's write finds it already there.

The pages themselves are ui/page_list.PAGE_SECTIONS, the app's one list: app.py hands it to st.navigation
(navigation_pages) and this menu draws it.
"""
from __future__ import annotations

import streamlit as st

from i18n import tr
from ui.page_list import PAGE_NAMES, PAGE_SECTIONS
from ui.share import view_query

MENU_KEY = "page_menu"  # the container's key: CSS class st-key-page_menu (the browser tests find the menu by it)


def navigation_pages() -> dict[str, list[st.Page]]:
    """PAGE_SECTIONS as st.navigation takes them, titled in this user's language: {section title: [st.Page]}."""
    return {tr(section): [st.Page(f"app_pages/{page.name}.py", title=tr(page.title_key), icon=page.icon,
                                  default=page.name == PAGE_NAMES[0]) for page in pages]
            for section, pages in PAGE_SECTIONS}


def page_menu_place():
    """The menu's place at the top of the sidebar; app.py fills it at the end of the run (page_menu)."""
    return st.sidebar.container(key=MENU_KEY)


def page_menu(place, pages: dict[str, list], current: str) -> None:
    """Filled last, when every value of this run is known (a model or sentence changed in this run is in the links).

    pages: st.navigation's {section title: [st.Page]}; current: the url_path of the page being shown.
    """
    with place:
        for section, section_pages in pages.items():
            st.caption(section)
            for page in section_pages:
                # The page being shown gets no query string of its own: its widgets may change in this run.
                query = None if page.url_path == current else view_query(page.url_path, link=True) or None
                st.page_link(page, query_params=query)
