"""The sidebar's list of pages: st.navigation's own list, drawn with st.page_link so each link carries its view.

Why not st.navigation's sidebar: a click there opens the page with an empty query string, and Streamlit pushes
that bare address onto the browser's history before the page writes its view (ui/share.write_to_url) as a second
entry, so the browser's Back needed two presses to leave a page. A page link that carries the address the page
will write (its kept view, the same text write_to_url produces) makes one history entry per page change: Streamlit
pushes the link's address and the page's write finds it already there.

PAGE_SECTIONS is the app's one list of pages: app.py hands it to st.navigation (navigation_pages), this menu draws
it, the lesson files are checked against it (ui/lessons/catalogue.known_pages) and the tests open every page in it
(tests/app_links.APP_PAGES).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from i18n import tr
from ui.share import view_query

MENU_KEY = "page_menu"  # the container's key: CSS class st-key-page_menu (the browser tests find the menu by it)


@dataclass(frozen=True)
class AppPage:
    name: str  # the script app_pages/<name>.py, and the page's url path (a lesson stop's `page`)
    title_key: str  # i18n key of its title in the menu
    icon: str
    plotly: bool = True  # it draws Plotly charts (app.py starts loading plotly.js with its run: ui/display)


# (i18n key of the section title, its pages), in menu order; the first page is the default one (the app's root).
PAGE_SECTIONS: tuple[tuple[str, tuple[AppPage, ...]], ...] = (
    ("nav.start", (AppPage("home", "nav.home", ":material/home:", plotly=False),)),
    ("nav.foundations", (
        AppPage("positional", "nav.positional", ":material/timeline:"),
        AppPage("softmax_scaling", "nav.softmax_scaling", ":material/functions:"),
        AppPage("attention_steps", "nav.attention_steps", ":material/calculate:"),
        AppPage("normalization", "nav.normalization", ":material/equalizer:"),
        AppPage("residual", "nav.residual", ":material/alt_route:"),
    )),
    ("nav.attention_group", (
        AppPage("attention", "nav.attention", ":material/grid_on:"),
        AppPage("decoding", "nav.decoding", ":material/skip_next:"),
    )),
    ("nav.models", (AppPage("compare", "nav.compare", ":material/compare:"),)),
    ("llm.nav_group", (AppPage("llm", "llm.nav", ":material/smart_toy:"),
                       AppPage("llm_heads", "llm_heads.nav", ":material/psychology:"))),
    ("nav.train_group", (AppPage("train", "nav.train", ":material/model_training:"),)),
    ("lessons.nav_group", (AppPage("teacher", "lessons.nav_teacher", ":material/co_present:", plotly=False),)),
)
PAGE_NAMES: tuple[str, ...] = tuple(page.name for _, pages in PAGE_SECTIONS for page in pages)
PLOTLY_PAGES: frozenset[str] = frozenset(page.name for _, pages in PAGE_SECTIONS for page in pages if page.plotly)


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
