"""Shareable views: the state a person would share lives in the URL's query string (st.query_params).

On a session's first run, values from the link are validated and copied into the widgets' values (a bad or stale
value is dropped with a notice, never an error); after every run, the current page's values are written back so
the address bar always reproduces the view. The page itself is the URL's path (st.navigation). Each parameter
names the pages it belongs to, so the address of one page does not carry another page's sliders.

Layer and head numbers count from 1 in links, as on screen (`layer=2` is the second layer). Links made before
that counted from 0; a link says which it is by its version: new links carry `v=2`, and a link without `v`
is read as an old 0-based one, so every link ever shared opens the same view. The session counts from 0.

The same specs keep each page's view while the page is not shown: Streamlit forgets a widget's value at the
end of a run that does not draw it (another page, another view of the attention page, a control hidden in
presenter mode). keep_view_state() copies every spec's value into the session object and puts it back,
checked against the current model, before the widgets are drawn again.

What is shared is declared once per widget, in ui/specs/ (one module per page): its key, its name in links, its
page, its default and its bounds or options (ui/widget_spec.py). The page draws the widget from that spec and this
module reads links with it, so a bound or a default is written once and this module knows no page.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, MutableMapping
from typing import NoReturn
from urllib.parse import urlencode

import streamlit as st

from i18n import tr
from ui.analysis_queue import page_turn
from ui.charts import IMAGE_FORMAT
from ui.errors import lab_fragment, page_guard
from ui.session import lab_session, widget_values
from ui.specs import KEPT_ONLY, SPECS
from ui.specs.common import MODEL
from ui.state import get_model
from ui.view import (Resolution, Source, current_view, install_view, link_values, page_specs, resolve_view,
                     spec_text)

# What this module keeps between runs is the session object's `address` (ui.session.AddressState).
TRANSITS_KEPT = 200  # the history entries switch_page left (the page left under a new address) remembered


def restore_from_url() -> None:
    """On the first run of a session, copy valid link values into the widgets' values; report the bad ones.

    app.py calls it first in every full run, so it also forgets which fragment drew the link in the last run,
    and puts back the view of the page being opened (keep_view_state).
    """
    address = lab_session().address
    address.link_drawn_by = None
    address.link_run = None
    if not address.restored:
        address.restored = True
        _read_link(st.query_params.to_dict())
    elif address.written is not None and st.query_params.to_dict() not in (address.written, {}):
        # The address is not the one this app wrote: the browser's Back or Forward button (each view the app
        # wrote is an entry of the browser's history) or an address edited by hand. It is a link: open its view
        # (and ui/lesson_bar/bar its lesson stop, reading opened_link()).
        _read_link(st.query_params.to_dict())
    keep_view_state()
    carry_view_state()  # a value held only by a widget this run may not draw must not fall back to an older one


def switch_page(page_left: str, target: str) -> NoReturn:
    """st.switch_page to `target` under the address it will write (ui/lesson_bar/bar: a stop on another page).

    Streamlit sends the new query string before the new page (streamlit/commands/execution_control.switch_page sets
    st.query_params, whose page_info_changed message the frontend's handlePageInfoChanged pushes onto the browser's
    history under the path of the page still shown), then pushes the new page's path (maybeUpdatePageUrl): one page
    switch, two entries, the first the page left under the new address. Remembered here, so that Back steps over it
    (follow_page_change) and one press returns to the stop before."""
    carry_view_state()  # st.switch_page forgets widget values (the language...) unless set in this run
    query = view_query(target, link=True)
    transits = lab_session().address.transits
    if (page_left, query) not in transits:
        transits.append((page_left, query))
        del transits[:-TRANSITS_KEPT]
    st.switch_page(f"app_pages/{target}.py", query_params=query)


def follow_page_change(page: str) -> None:
    """After st.navigation, before any widget: Back from a page switched to by switch_page reaches the entry it
    left behind (the page left under the new address). That entry is no view of its own: step over it to the entry
    before it, the page left under its own address, as the browser's history would read without it. Forward onto
    it (from the page left, whose address it is not) opens it as the link it is: the next stop again."""
    address = lab_session().address
    arrived_from_another_page = address.written_page not in (None, page)
    if arrived_from_another_page and (page, st.query_params.to_dict()) in address.transits:
        st.html("<script>history.back()</script>", width="content", unsafe_allow_javascript=True)
        st.stop()


def opened_link() -> dict[str, str] | None:
    """The query string a full run opened as a link (the session's first run, Back, Forward), else None."""
    return lab_session().address.link_run


def _read_link(query: dict[str, str]) -> None:
    """The link's view (ui.view.resolve_view, its page not known yet), installed; what did not fit is said once."""
    address = lab_session().address
    address.link_run = query
    named, one_based = link_values(query)  # one_based: LINK_VERSION or later; an old link has no version
    resolved = resolve_view(None, named, Source.LINK, widget_values(), one_based=one_based)
    _install(resolved, model_named=MODEL.url in query)
    if resolved.say_on_screen:
        address.notice = [name for name in resolved.unfit]


def _install(resolved: Resolution, model_named: bool, state: MutableMapping | None = None) -> None:
    """Install a resolved view in the session (or in `state`, a mapping of a test's own)."""
    if state is not None:
        install_view(resolved, state)
        return
    install_view(resolved, kept=lab_session().address.kept)
    if model_named and MODEL.url not in resolved.unfit:  # the sidebar keeps a linked sentence of its model's task
        lab_session().input.sentence_task = get_model(resolved.view.model).task


def report_unfit_link_value(name: str) -> None:
    """A link value read outside the specs (the lesson's stop) that does not fit: named in the link's notice."""
    lab_session().address.notice.append(name)


def open_view(page: str, named: dict[str, str], keep: Collection[str] = (),
              state: MutableMapping | None = None, source: Source = Source.STOP) -> list[str]:
    """Open a view that names some of its page's values (a lesson stop's state, the teacher's move, Back onto a
    stop), the same by every path (ui.view.resolve_view): the page's values it does not name are forgotten (the kept
    copies too), so the page opens them as in a new session, on its model's own defaults (the encoder's sharpest
    word-to-word head); never on a value left over from another stop or another model, which might not fit it.

    keep: link names whose values, read already from the link that opened this stop, stand (a link to a stop that
    names a head). Lesson files count layers and heads from 1, as on screen and in links with `v`. -> the names
    that do not fit (unknown, of another page, or not offered by the model), which the page then opens on its own.
    """
    resolved = resolve_view(page, named, source, widget_values() if state is None else state, keep=keep)
    _install(resolved, model_named=MODEL.url in named, state=state)
    return list(resolved.unfit)


def carry_view_state() -> None:
    """Set every shared value again in this run (before any widget is drawn): a value set in this run is the one
    that stands at its end.

    Called at the start of every full run (restore_from_url) and again before st.switch_page. A server-side page
    switch sends no widget states, and Streamlit then drops the values of widgets not on the new page's first run
    (the sidebar's language, presenter mode, model...). And Streamlit 1.67 keeps a value set through the session state
    twice, under the key and, once the widget has been drawn, under the widget's id; a run that does not draw the
    widget forgets the second copy and the first, older one comes back: a lesson stop hidden behind its question
    for two runs (the class's move, then the student's answer) would show an earlier visit's value
    (tests/test_lesson_paths.py, the teacher's path)."""
    values = widget_values()
    for key in [spec.key for spec in SPECS.values()] + [IMAGE_FORMAT]:
        if key in values:
            values[key] = values[key]


def keep_view_state() -> None:
    """Keep every page's values across runs that do not draw their widgets; call it before widgets are drawn.

    A value present now is remembered (a non-widget key survives every run); a value Streamlit has dropped is
    put back, if it still fits the current model (the same check as a link's), else forgotten.
    """
    kept = lab_session().address.kept
    values = widget_values()
    checks = {spec.key: (lambda value, state, spec=spec: spec.parse(spec_text(spec, value), state))
              for spec in SPECS.values()}
    for key, check in {**checks, **KEPT_ONLY}.items():
        if key in values:
            kept[key] = values[key]
        elif key in kept:
            try:
                values[key] = check(kept[key], values)
            except (ValueError, KeyError, TypeError):
                del kept[key]


def show_url_notice() -> None:
    address = lab_session().address
    ignored, address.notice = address.notice, []
    if ignored:
        st.info(tr("share.bad_link", names=", ".join(ignored)))  # our own parameter names, never the link's text


def _current(page: str, first_visit_defaults: bool = False) -> dict[str, str]:
    """The shareable values of this page (and the global ones) as URL text: its View's query (ui.view).

    first_visit_defaults: a value the page has not set yet (never visited) is its spec's default, as the page will
    set it when it opens.
    """
    view = current_view(page)
    if first_visit_defaults:
        state = widget_values()
        defaults = {spec.url: spec.fitted(spec.current(state), state) for spec in page_specs(page)
                    if spec.url not in view.controls and spec.drawn(state)}
        view = dataclasses.replace(view, controls={**view.controls, **defaults})
    return view.query()


# Pages whose first view is chosen from the data when they open (the attention page's sharpest head): a link to a
# first visit cannot name it in advance, and naming the spec's default would override that choice.
FIRST_VIEW_FROM_DATA = {"attention"}


def view_query(page: str, link: bool = False) -> dict[str, str]:
    """The query string write_to_url writes for `page` with the values kept now.

    link: for ui/page_menu's links from another page; a page never visited gets its defaults, so the address the
    link opens is the one the page writes (one history entry per page change).
    """
    defaults = link and page not in FIRST_VIEW_FROM_DATA
    return {**_current(page, first_visit_defaults=defaults), **lab_session().address.extra}


def write_to_url(page: str) -> None:
    """Mirror the current page's shareable state into the address bar (and drop other pages' values)."""
    values = view_query(page)
    if st.query_params.to_dict() != values:
        # One update, so one entry in the browser's history per view (a value set at a time made one per value,
        # and Back stepped through half-written addresses).
        st.query_params.from_dict(values)
    address = lab_session().address
    address.written, address.written_page = values, page


def share_link(page: str) -> None:
    """'Link to this view': the address with the current state, in a code block (which has a copy button).

    Not drawn again when a fragment of this page has drawn it in this run (follow_fragment).
    """
    if lab_session().address.link_drawn_by == page:
        return
    _draw_link(page)


def view_fragment(body: Callable[..., None]) -> Callable[..., None]:
    """A page's fragment whose widgets belong to the view (the attention explorer, the decoding steps): called with the
    page's url path first. Each run of it, full or its own, is framed the same way: its page guard
    (ui.errors.lab_fragment, as every fragment's), the kept values put back first (a rerun drops the widgets of the
    view it leaves), then the address bar and the sidebar's link written after (its own rerun skips the end of
    run_app), even when the body failed."""
    @lab_fragment()
    @functools.wraps(body)
    def fragment(page: str, *args, **kwargs) -> None:
        with page_guard(), page_turn():  # its own rerun waits for a page slot as a page does (in a page's run: held)
            keep_view_state()
            body(page, *args, **kwargs)
        follow_fragment(page)
    return fragment


def follow_fragment(page: str) -> None:
    """End of a page's fragment whose widgets are shared: a fragment rerun does not run the rest of app.py, so
    the fragment writes the URL and draws the sidebar's link itself (a fragment's writes to the sidebar are
    redrawn in place when it reruns); app.py's share_link then leaves the link to it."""
    write_to_url(page)
    with st.sidebar:
        _draw_link(page)
    lab_session().address.link_drawn_by = page


def _draw_link(page: str) -> None:
    base = st.context.url
    if not base:
        return
    with st.popover(tr("share.link"), icon=":material/link:", width="stretch"):
        st.caption(tr("share.link_help"))
        shared = {name: value for name, value in _current(page).items() if name != "training"}
        st.code(f"{base}?{urlencode(shared)}", language=None, wrap_lines=True)
