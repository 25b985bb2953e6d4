"""The app's one run, in the one order every path needs (app.py calls run_app, nothing else):

1. the link (ui/share.restore_from_url): the language the page titles are drawn in, and a shared view;
2. the navigation (hidden: ui/page_menu draws the list, each link carrying its page's view);
3. the lesson (ui/lesson_bar/bar.lesson_bar): a stop's view is resolved (ui.share.open_view) before any widget;
4. the sidebar (the model and sentence widgets), then the page itself;
5. the address (ui/share.write_to_url): after the page, whose widgets have set their defaults by then, so a page
   change adds one history entry; then the menu, the link to this view and the document's language.

A fragment of a page reruns alone and skips this order: ui.share.view_fragment frames it instead.
"""
from __future__ import annotations

import streamlit as st

from ui.analysis_queue import page_turn
from ui.language import document_language, use_session_language
from ui.plotly_loader import preload_plotly, preload_plotly_when_idle
from ui.presenter import presenting
from ui.errors import page_guard
from ui.lesson_bar.bar import lesson_bar
from ui.lesson_bar.picker import lesson_picker
from ui.lesson_builder.add_stop import add_view_control
from ui.page_list import PLOTLY_PAGES
from ui.page_menu import navigation_pages, page_menu, page_menu_place
from ui.share import follow_page_change, restore_from_url, share_link, show_url_notice, write_to_url
from ui.sidebar import render_sidebar
from ui.train.view import lost_training_notice


def run_app() -> None:
    use_session_language()  # before anything says a word: tr() reads this session's language from here on
    with page_guard():
        restore_from_url()  # first: the link may choose the language the page titles are drawn in
        if presenting():  # the projected page gets the whole width; the sidebar stays one click away
            st.set_page_config(initial_sidebar_state="collapsed")
        pages = navigation_pages()  # ui/page_list.PAGE_SECTIONS: the app's one list of pages
        navigation = st.navigation(pages, position="hidden")
        draws_plotly = (navigation.url_path or "home") in PLOTLY_PAGES
        preload_plotly(draws_plotly)  # plotly.js loads while this run goes on
        follow_page_change(navigation.url_path)  # Back onto the entry a page switch left behind: stepped over
        menu = page_menu_place()
        show_page = lesson_bar(navigation.url_path)  # before the sidebar: a lesson stop may set the sidebar's state
        # The body waits for one of the process's page slots (runtime/page_slots.py): in a class's answer burst the bar
        # above, which confirms the answer, is drawn at once, and the charts follow one after the other.
        with page_turn():
            render_sidebar()
            lesson_picker()
            show_url_notice()
            lost_training_notice()  # on any page: the replica that ran this tab's training is gone
            if show_page:  # False while a lesson question waits for the student's prediction
                navigation.run()
            write_to_url(navigation.url_path)
            page_menu(menu, pages, navigation.url_path)
            with st.sidebar:
                share_link(navigation.url_path)
                add_view_control(navigation.url_path)  # a teacher building a lesson: this view as its next stop
                with st.container(key="page_language"):  # <html lang>; last, so its element moves no other
                    document_language()
                preload_plotly_when_idle(draws_plotly)  # Home: plotly.js for the lesson its buttons open
