"""The attention explorer's "All heads" view: every head's map as a thumbnail, a deep model's layers a page at a time,
a long text's maps block-averaged; a click on a thumbnail (or its keyboard twin, a row of head pills a layer) opens that
head in the Head view (ui/attention/view.py draws the views and asks this one for the grid)."""
from __future__ import annotations

import numpy as np
import streamlit as st

from i18n import tr
from model.sources import KindMaps
from ui.attention.ids import attention_kind_label
from ui.attention.specs import HEAD, LAYER, VIEW
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import presenting
from ui.session import WidgetKey, lab_session
from viz.attention import grid_head, head_grid

GRID = WidgetKey("grid")  # the all-heads chart: its value is its selection (a clicked thumbnail)
GRID_MAX_CELLS = 48  # a grid thumbnail of a longer text averages blocks of tokens into this many cells a side


def _focus(layer: int, head: int) -> None:
    """Open one head of the grid in the Head view (a callback: it runs before the widgets are drawn)."""
    LAYER.set(layer)
    HEAD.set(head)
    VIEW.set("Head")


def _focus_row(layer: int) -> WidgetKey:
    """The grid's row of head pills of a layer (0-based)."""
    return WidgetKey(f"focus_layer_{layer}")


def _focus_picked(layer: int) -> None:
    """A head picked in a layer's row of pills under the grid opens it (picking the open one again unselects the
    pill: the Head view stays as it is)."""
    head = _focus_row(layer).get()
    if head is not None:
        _focus(layer, head)


def _focus_clicked_thumbnail() -> None:
    """A click on a thumbnail (the grid's invisible scatter points over its tiled maps, viz.attention.head_grid)
    opens that head."""
    points = GRID.get().selection.points
    heads = [head for head in map(grid_head, points) if head is not None]
    if heads:
        _focus(*heads[0])


GRID_PAGE_LAYERS = 6  # a deeper model's grid shows this many layers at a time (SmolLM2: 30 layers × 9 heads)
GRID_PAGE = WidgetKey("attn_grid_page")  # the first layer (0-based) of the page of layers the grid shows


def grid_page(layers: int, layer: int) -> tuple[int, int]:
    """The layers [first, last) the grid shows: all of them, or for a deep model a page of GRID_PAGE_LAYERS picked
    above the grid, following the selected layer when that changes (a click in the grid stays on its page)."""
    if layers <= GRID_PAGE_LAYERS:
        return 0, layers
    starts = list(range(0, layers, GRID_PAGE_LAYERS))
    explorer = lab_session().explorer
    if explorer.grid_page_for != layer or GRID_PAGE.get() not in starts:
        GRID_PAGE.set(layer - layer % GRID_PAGE_LAYERS)
        explorer.grid_page_for = layer  # the selected layer the page last followed
    first = st.segmented_control(
        tr("attention.grid_page"), starts, key=GRID_PAGE.key, help=tr("attention.grid_page_help", layers=layers),
        format_func=lambda start: tr("attention.grid_page_option", first=start + 1,
                                     last=min(start + GRID_PAGE_LAYERS, layers)))
    first = layer - layer % GRID_PAGE_LAYERS if first is None else first  # deselected: the selected layer's page
    return first, min(first + GRID_PAGE_LAYERS, layers)


def show_grid(maps: KindMaps, layer: int, head: int, labels=None) -> None:
    """labels: (L, h) short pattern names of the kind's heads (ui.attention.explain.grid_labels), or None."""
    first, last = grid_page(maps.weights.shape[0], layer)
    heads = maps.weights.shape[1]
    weights, queries, keys, masked = maps.weights[first:last], maps.query_tokens, maps.key_tokens, maps.masked
    labels = None if labels is None else np.asarray(labels, dtype=object)[first:last]
    selected = (layer - first, head) if first <= layer < last else None
    tokens = max(len(queries), len(keys))
    if tokens > GRID_MAX_CELLS:  # 72 heads × 256² cells would freeze the browser: block-average the thumbnails
        weights, queries, keys = pooled_maps(weights, queries, keys, GRID_MAX_CELLS)
        masked = None
    # Built once per content for every session (a class opens the same grid, and the real encoder's 72-head grid is
    # slow to build): the key is the data itself, as cached_figure's.
    weights = np.ascontiguousarray(weights, dtype=float)
    title = tr("attention.grid_title", kind=attention_kind_label(maps.kind))
    key = ("attention", "grid", first, weights.shape, weights.tobytes(), tuple(queries), tuple(keys), title, selected,
           None if masked is None else np.asarray(masked).tobytes(),
           None if labels is None else tuple(map(tuple, np.asarray(labels, dtype=object).tolist())))
    grid = shared_figure(key, lambda: head_grid(weights, list(queries), list(keys), title, selected=selected,
                                                masked=masked, labels=labels, first_layer=first,
                                                words=words_for("attention")))
    show_chart(grid, f"attention_{maps.kind}_all_heads", key=GRID.key, on_select=_focus_clicked_thumbnail)
    if tokens > GRID_MAX_CELLS:
        st.caption(tr("bert.grid_pooled", tokens=tokens, cells=GRID_MAX_CELLS))
    if not presenting():
        st.caption(tr("attention.grid_caption"))
        if labels is not None:
            st.caption(tr("explain_encoder.grid_labels"))
    for l in range(first, last):  # the thumbnails' keyboard twin: one row of heads a layer, the open head selected
        row = _focus_row(l)
        row.set(head if l == layer else None)
        st.pills(tr("attention.focus_row", layer=l + 1), range(heads), key=row.key, label_visibility="collapsed",
                 format_func=lambda h, l=l: f"L{l + 1} H{h + 1}", on_change=_focus_picked, args=(l,))


def pooled_maps(weights: np.ndarray, queries: list[str], keys: list[str], cells: int):
    """(L, h, T_q, T_k) -> (L, h, ≤cells, ≤cells): the mean of each block of consecutive queries and keys, with
    "first…last" token labels, for thumbnails of long texts."""
    def blocks(length: int) -> list[np.ndarray]:
        return np.array_split(np.arange(length), min(cells, length))

    rows, cols = blocks(weights.shape[-2]), blocks(weights.shape[-1])
    pooled = np.stack([np.stack([weights[..., r, :][..., c].mean((-2, -1)) for c in cols], -1) for r in rows], -2)

    def names(tokens: list[str], groups) -> list[str]:
        return [tokens[g[0]] if len(g) == 1 else f"{tokens[g[0]]}…{tokens[g[-1]]}" for g in groups]

    return pooled, names(queries, rows), names(keys, cols)
