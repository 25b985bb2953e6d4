"""The head finder and the two-texts view (issue 41), drawn on the attention page (its "Find heads" and "Two texts"
views, any model with heads) and on the LLM heads page (SmolLM2): computations in model/explain/head_finder.py,
charts in viz/head_finder.py; this module picks, caches and draws.

The finder reads the model's own maps of the kind, every token as the model computed it (the encoder's "hide
[CLS]/[SEP]" and "merge word pieces" toggles do not apply): the ranking is the one `python -m model.inspect --find`
writes. A click on a bar (or a head in the row under it) opens that head: the caller says how (open_head).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from i18n import tr
from model.capabilities import NORMS
from model.explain.head_finder import HeadRanking, compare_head, rank_heads
from model.explain.kinds import head_label
from model.families import LabModel
from model.sources import AnalysedInput, KindMaps, as_float32
from ui.analysis_queue import heavy
from ui.attention.finder_specs import (FIND_BY, FIND_KEY, FIND_QUERY, TEXT_B, default_pair, named_token,
                                       token_names)
from ui.attention.explain import explanations
from ui.attention.ids import attention_kind_label
from ui.attention.maps import head_table
from ui.attention.specs import HEAD, KIND, LAYER, VIEW
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.presenter import chart_first, presenting
from runtime.result_cache import memoized
from ui.session import WidgetKey
from ui.state import analysis_of
from ui.text import check_sentence, escape_markdown
from ui.widget_spec import WidgetSpec, prepare, spec_segmented
from viz.attention import attention_heatmap, difference_heatmap, html_escaped
from viz.head_finder import highlight_row, ranked_head, ranking_bars, ranking_table

TOP = 15  # heads in the bar chart; the table below it lists every head
OPEN_ROW = 5  # heads in the row of buttons under the chart (the bars' keyboard twin)
RANKING = WidgetKey("finder_ranking")  # the bar chart's selection (a clicked bar)
OPEN = WidgetKey("finder_open")  # the row of head buttons

def chart_above() -> tuple:
    """-> (chart, controls) containers: the chart above its pickers when presenting (a view's chart must start on
    the first 1280×720 screen under the explorer's own pickers), else as chart_first orders them."""
    if presenting():
        return st.container(), st.container()
    return chart_first()


OpenHead = Callable[[int, int], None]  # (layer, head), 0-based: open that head where the page shows one


@memoized
def value_norms(model_id: str, text: str, kind: str, _lab: LabModel, _analysed: AnalysedInput) -> np.ndarray:
    """(L, h, T_q, T_k): the kind's value-weighted norms (Kobayashi et al. 2020) of the text, per (model id, text,
    kind), as the Explain view's explanations hold them (a long text's compact float16): one computation for both."""
    return explanations(model_id, text, _lab, _analysed)[f"value_norms_{kind}"]


def picked_token(spec: WidgetSpec, tokens: list[str], default: int) -> int:
    """The token the spec's name finds in `tokens` (default when unnamed; a name the text lacks is said and the
    default used), written back under its own name, so the picker shows it and the link names it."""
    name = spec.get() or ""
    index = default
    if name:
        try:
            index = named_token(tokens, name)
        except ValueError:
            st.info(tr("head_finder.not_found", name=escape_markdown(repr(name)),
                       tokens=escape_markdown(", ".join(repr(t) for t in tokens))))
    spec.set(token_names(tokens)[index])
    return index


def token_picker(spec: WidgetSpec, label: str, tokens: list[str], default: int, where) -> int:
    """A selectbox of the tokens, each shown with its position ("8: it"): its value is the token's link name."""
    index = picked_token(spec, tokens, default)
    names = token_names(tokens)
    shown = {name: f"{i + 1}: {token}" for i, (name, token) in enumerate(zip(names, tokens))}
    chosen = where.selectbox(label, names, key=spec.key, format_func=shown.get)
    return names.index(chosen) if chosen in names else index


def finder_ranking(model_id: str, lab: LabModel, analysed: AnalysedInput, kind: str, where=st
                   ) -> HeadRanking | None:
    """The query and key pickers, and every head of `kind` ranked (None past the time limit of the norms)."""
    maps = analysed.maps[kind]
    default_query, default_key = default_pair(maps)
    c = where.columns([2, 2, 3] if lab.can(NORMS) else 2)
    query = token_picker(FIND_QUERY, tr("head_finder.query"), maps.query_tokens, default_query, c[0])
    key = token_picker(FIND_KEY, tr("head_finder.key"), maps.key_tokens, default_key, c[1])
    norms = None
    if lab.can(NORMS):
        spec_segmented(FIND_BY, tr("head_finder.rank_by"), where=c[2],
                       format_func=lambda by: tr(f"head_finder.by_{by}"))
        norms = heavy(("value_norms", model_id, analysed.text, kind),
                      lambda: value_norms(model_id, analysed.text, kind, lab, analysed), where=where)
        if norms is None:
            return None
    return rank_heads(maps, query, key, norms)


def show_finder(model_id: str, lab: LabModel, analysed: AnalysedInput, kind: str, open_head: OpenHead,
                selected: tuple[int, int] | None = None) -> HeadRanking | None:
    """The finder: its pickers, the top heads as bars (the chart above the fold when projected), every head in a
    table, and a row of the first heads' buttons; a click opens the head (open_head)."""
    chart, controls = chart_above()
    below = st.container()  # the table under both
    ranking = finder_ranking(model_id, lab, analysed, kind, where=controls)
    if ranking is None:
        return None
    by_norm = ranking.norm is not None and FIND_BY.get() == "norm"
    values, order = (ranking.norm, ranking.by_norm) if by_norm else (ranking.weight, ranking.by_weight)
    value_name = tr("head_finder.chart.norm" if by_norm else "head_finder.chart.weight")
    title = tr("head_finder.chart.title", query=html_escaped(ranking.query_token),  # token text is user text
               key_token=html_escaped(ranking.key_token), top=min(TOP, len(order)), kind=attention_kind_label(kind))

    def clicked() -> None:
        heads = [head for head in map(ranked_head, RANKING.get().selection.points) if head is not None]
        if heads:
            open_head(*heads[0])

    figure = shared_figure(("finder", model_id, analysed.text, kind, ranking.query_index, ranking.key_index, by_norm,
                            selected), lambda: ranking_bars(values, order, title, value_name, TOP, selected,
                                                           words=words_for("head_finder")))
    table = ranking_table(ranking.weight, ranking.norm, order, words=words_for("head_finder"))
    with chart:
        show_chart(figure, f"head_finder_{kind}_{'norm' if by_norm else 'weight'}", key=RANKING.key,
                   on_select=clicked, table=table)
        _open_row(order[:OPEN_ROW], open_head)
    below.dataframe(table, height=240, width="stretch")
    if not presenting():
        below.caption(tr("head_finder.caption_norm" if lab.can(NORMS) else "head_finder.caption"))
    return ranking


def _open_row(heads: list[tuple[int, int]], open_head: OpenHead) -> None:
    """The first heads as buttons: a keyboard's way to open one (the bars are the mouse's)."""
    OPEN.set(None)

    def picked() -> None:
        if OPEN.get() is not None:
            open_head(*OPEN.get())

    st.pills(tr("head_finder.open"), heads, key=OPEN.key, format_func=lambda head: head_label(*head),
             on_change=picked)


def two_texts_input(spec: WidgetSpec, where=st) -> str:
    """The second text's box (the spec's value); the caller checks it like the first."""
    prepare(spec)
    return where.text_input(tr("head_finder.text_b"), key=spec.key, help=tr("head_finder.text_b_help"))


def show_two_texts(first: AnalysedInput, second: AnalysedInput, kind: str, layer: int, head: int, query: int,
                   key: int) -> None:
    """Head (layer, head) of `kind` on both texts, side by side, and B − A where their tokens align; the query
    token's row (an index into the first text's queries) framed in each, and its weight on `key` stated."""
    comparison = compare_head(first, second, kind, layer, head)
    maps_a, maps_b = first.maps[kind], second.maps[kind]
    rows, columns = dict(comparison.aligned_queries), dict(comparison.aligned_keys)
    name = head_label(layer, head)
    left, right = st.columns(2)
    for where, maps, weights, row, letter in ((left, maps_a, comparison.first, query, "A"),
                                              (right, maps_b, comparison.second, rows.get(query), "B")):
        title = tr("head_finder.chart.pair_title", letter=letter, head=name, kind=attention_kind_label(kind))
        figure = highlight_row(attention_heatmap(weights, maps.query_tokens, maps.key_tokens, title,
                                                 masked=maps.masked, words=words_for("attention")), row)
        show_chart(figure, f"two_texts_{letter}_{kind}_L{layer + 1}_H{head + 1}", key=f"two_texts_{letter}",
                   where=where, table=head_table(weights, maps.query_tokens, maps.key_tokens))
    _state_row(comparison.first, comparison.second, maps_a, query, key, rows.get(query), columns.get(key))
    if not comparison.difference.size:
        st.info(tr("head_finder.nothing_aligned"))
        return
    # B − A on the aligned cells: compare_head's difference, drawn by the page's one difference map
    aligned_a = comparison.first[np.ix_([i for i, _ in comparison.aligned_queries],
                                        [i for i, _ in comparison.aligned_keys])]
    show_chart(difference_heatmap(aligned_a + comparison.difference, aligned_a, comparison.aligned_query_tokens,
                                  comparison.aligned_key_tokens, tr("head_finder.chart.difference_title"),
                                  words=words_for("attention"), value_name="B − A"),
               f"two_texts_difference_{kind}_L{layer + 1}_H{head + 1}", key="two_texts_difference",
               table=head_table(comparison.difference, comparison.aligned_query_tokens, comparison.aligned_key_tokens))
    if not presenting():
        st.caption(tr("head_finder.difference_caption"))


def _named(spec: WidgetSpec, tokens: list[str], default: int) -> int:
    """The token the spec names (its picker drawn already), else `default`."""
    try:
        return named_token(tokens, spec.get() or "")
    except ValueError:
        return default


def _state_row(first: np.ndarray, second: np.ndarray, maps: KindMaps, query: int, key: int, query_b: int | None,
               key_b: int | None) -> None:
    """One line: the query token's weight on the key token in A, and in B where both tokens align."""
    a = float(as_float32(first)[query, key])
    b = None if query_b is None or key_b is None else float(second[query_b, key_b])
    st.markdown(tr("head_finder.row_stated" if b is not None else "head_finder.row_stated_a",
                   query=escape_markdown(maps.query_tokens[query].strip()),  # " it": bold needs no space inside
                   key_token=escape_markdown(maps.key_tokens[key].strip()),
                   position=query + 1, a=f"{a:.2f}", b="" if b is None else f"{b:.2f}"))


# --- the attention page's two views ---------------------------------------------------------------------------------

def show_find_view(model_id: str, lab: LabModel, analysed: AnalysedInput, kind: str, layer: int, head: int) -> None:
    """The "Find heads" view: the finder on the explorer's kind; a click opens the head in the Head view."""
    def open_head(layer: int, head: int) -> None:  # a callback: it runs before the explorer's pickers are drawn
        KIND.set(kind)
        LAYER.set(layer)
        HEAD.set(head)
        VIEW.set("Head")

    show_finder(model_id, lab, analysed, kind, open_head, selected=(layer, head))


def second_analysis(model_id: str, text_spec: WidgetSpec, maps: KindMaps, where, pickers: bool = True
                    ) -> tuple[AnalysedInput | None, int, int]:
    """The second text's box and (pickers) the query and key pickers, in `where` -> (the second text's analysis or
    None, query, key): indices into the first text's tokens. pickers=False: the page drew them above (the finder's)."""
    with where:
        text, notices = check_sentence(two_texts_input(text_spec))
        for notice in notices:
            st.info(notice)
        default_query, default_key = default_pair(maps)
        if pickers:
            c = st.columns(2)
            query = token_picker(FIND_QUERY, tr("head_finder.query"), maps.query_tokens, default_query, c[0])
            key = token_picker(FIND_KEY, tr("head_finder.key"), maps.key_tokens, default_key, c[1])
        else:
            query, key = _named(FIND_QUERY, maps.query_tokens, default_query), _named(FIND_KEY, maps.key_tokens,
                                                                                     default_key)
    return (None if text is None else analysis_of(model_id, text)), query, key


def _strongest_head(maps: KindMaps, query: int, key: int, shown: tuple[int, int]) -> None:
    """The finder's strongest head by weight for (query, key), with a button that opens it in this view, unless it is
    the head `shown`."""
    ranking = rank_heads(maps, query, key)
    strongest = ranking.by_weight[0]
    if strongest == tuple(shown):
        return

    def show() -> None:  # a callback: it runs before the explorer's pickers are drawn
        LAYER.set(strongest[0])
        HEAD.set(strongest[1])
    st.markdown(tr("head_finder.strongest", query=escape_markdown(ranking.query_token.strip()),
                   key_token=escape_markdown(ranking.key_token.strip()), head=head_label(*strongest),
                   weight=f"{ranking.weight[strongest]:.2f}", shown=head_label(*shown),
                   shown_weight=f"{ranking.weight[tuple(shown)]:.2f}"))
    st.button(tr("head_finder.show_strongest", head=head_label(*strongest)), key="two_texts_strongest",
              on_click=show)


def show_pair_view(model_id: str, analysed: AnalysedInput, kind: str, layer: int, head: int) -> None:
    """The "Two texts" view: the explorer's head on the sidebar's text (A) and a second one (B); where that head is
    not the finder's strongest for the query and key, a line names the strongest and a button shows it (issue 51:
    a stop opened on "Find heads" by its link, then "Two texts", showed the page's default head, "0.00 in A")."""
    chart, controls = chart_above()
    second, query, key = second_analysis(model_id, TEXT_B, analysed.maps[kind], controls)
    with controls:
        _strongest_head(analysed.maps[kind], query, key, (layer, head))
    if second is not None:
        with chart:
            show_two_texts(analysed, second, kind, layer, head, query, key)
