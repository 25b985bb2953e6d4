"""The app's one list of pages, as data alone (no Streamlit call, so asgi.py can read it before Streamlit's runtime
starts: its PLOTLY_PAGES tells serving/plotly_preload which addresses get plotly.js in their HTML).

PAGE_SECTIONS is what app.py hands st.navigation (ui/page_menu.navigation_pages), what the sidebar's menu draws, what
the lesson files are checked against (ui/lessons/catalogue.known_pages) and what the tests open (tests/app_links).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AppPage:
    name: str  # the script app_pages/<name>.py, and the page's url path (a lesson stop's `page`)
    title_key: str  # i18n key of its title in the menu
    icon: str
    plotly: bool = True  # it draws Plotly charts (app.py starts loading plotly.js with its run: ui/plotly_loader.py)


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
                       AppPage("llm_heads", "llm_heads.nav", ":material/psychology:"),
                       AppPage("llm_answer", "llm_answer.nav", ":material/lightbulb:"))),
    ("nav.train_group", (AppPage("train", "nav.train", ":material/model_training:"),)),
    ("lessons.nav_group", (AppPage("teacher", "lessons.nav_teacher", ":material/co_present:", plotly=False),)),
)
PAGE_NAMES: tuple[str, ...] = tuple(page.name for _, pages in PAGE_SECTIONS for page in pages)
PLOTLY_PAGES: frozenset[str] = frozenset(page.name for _, pages in PAGE_SECTIONS for page in pages if page.plotly)
