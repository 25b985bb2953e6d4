"""The answer page's information-flow section (app_pages/llm_answer.py): the flow graph of one prompt on SmolLM2
(model/explain/flow.py: Kobayashi et al. 2020's norms, Ferrando & Voita 2024's route), its threshold, and the logit
lens at a node chosen by a click on the graph or by its row and token (the keyboard's way).

Bounded like the lens: a prompt of at most FLOW_VIEW_MAX_TOKENS tokens; the graph (one run of the blocks) and each
node's lens (one run and one unembedding) are computed through the analysis queue (ui/analysis_queue.heavy) and kept
for the whole server (runtime/result_cache.py) without the (L, h, T, T) contributions: the view keeps the shares.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from streamlit.delta_generator import DeltaGenerator

from i18n import tr
from model.explain.flow import NodeLens, flow_route, information_flow, node_lens
from model.explain.kinds import head_label
from model.families import ResidualModel
from runtime.result_cache import memoized
from ui.analysis_queue import heavy
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.llm.answer import LENS_MAX_TOKENS, LLM_ID, token_list
from ui.llm.flow_specs import FLOW_TEXT, FLOW_THRESHOLD
from ui.presenter import presenting
from ui.screen import page_width
from ui.session import WidgetKey
from ui.text import MAX_INPUT_CHARS, check_sentence, escape_markdown
from ui.widget_spec import prepare, spec_select_slider
from viz.attention import html_escaped
from viz.flow import flow_graph, flow_node
from viz.llm_answer import lens_row_labels

# The longest prompt the graph reads: its 64 token labels and 31 rows are what a projected 1280 px chart can still
# name (the lens's own bound).
FLOW_VIEW_MAX_TOKENS = LENS_MAX_TOKENS
GRAPH = WidgetKey("answer_flow_graph")  # the graph's selection: a clicked node
NODE_ROW = WidgetKey("answer_flow_row")  # the chosen node's row (0: the embeddings) and position
NODE_POSITION = WidgetKey("answer_flow_position")
NODE_HEADS = 3  # the heads named under a node: those carrying most into it


@dataclass(frozen=True)
class FlowView:
    """What the section draws of one prompt's InformationFlow (its shares, not its (L, h, T, T) norms)."""

    tokens: list[str]  # (T,)
    predicted: str  # the model's next token after the prompt, as text
    edges: np.ndarray  # (L, T, T) float32
    residual_shares: np.ndarray  # (L, T) float32
    mlp_shares: np.ndarray  # (L, T) float32
    head_shares: np.ndarray  # (L, h, T) float32
    relevance: np.ndarray  # (L+1, T) float32


@memoized
def flow_view(model_id: str, text: str, _lab: ResidualModel) -> FlowView:
    flow = information_flow(_lab, text)
    return FlowView(flow.tokens, _lab.token_texts([flow.predicted])[0], flow.edges, flow.residual_shares,
                    flow.mlp_shares, flow.head_shares, flow.relevance())


@memoized
def flow_node_lens(model_id: str, text: str, row: int, position: int, _lab: ResidualModel) -> NodeLens:
    return node_lens(_lab, text, row, position)


def flow_input(where: DeltaGenerator, lab: ResidualModel) -> str | None:
    """The prompt field -> its text, or None with a message (empty, past FLOW_VIEW_MAX_TOKENS tokens)."""
    prepare(FLOW_TEXT)
    typed = where.text_input(tr("llm_flow.text_label"), key=FLOW_TEXT.key, max_chars=MAX_INPUT_CHARS,
                             help=tr("llm_flow.text_help", limit=FLOW_VIEW_MAX_TOKENS))
    text, notices = check_sentence(typed, "llm_answer.empty_prompt")
    for notice in notices:
        where.info(notice)
    if text is None:
        return None
    length = len(lab.encode(text))
    if length == 0:
        where.info(tr("llm_answer.empty_prompt"))
        return None
    if length > FLOW_VIEW_MAX_TOKENS:
        where.info(tr("llm_flow.too_long", tokens=length, limit=FLOW_VIEW_MAX_TOKENS))
        return None
    return text


def _node_clicked() -> None:
    """A click on a node of the graph chooses it (a callback: it runs before the selects are drawn)."""
    nodes = [node for node in (flow_node(point.get("customdata")) for point in GRAPH.get().selection.points)
             if node is not None]
    if nodes:
        NODE_ROW.set(nodes[0][0])
        NODE_POSITION.set(nodes[0][1])


def _chosen_node(where: DeltaGenerator, view: FlowView) -> tuple[int, int]:
    """The row and position selects (the graph's keyboard twin), kept inside the prompt's graph; the top node at the
    last position until one is chosen."""
    layers, length = view.residual_shares.shape
    rows = lens_row_labels(layers, words=words_for("llm_answer"))
    if NODE_ROW.get() not in range(layers + 1):
        NODE_ROW.set(layers)
    if NODE_POSITION.get() not in range(length):
        NODE_POSITION.set(length - 1)
    left, right = where.columns(2)
    row = left.selectbox(tr("llm_flow.node_row"), range(layers + 1), key=NODE_ROW.key, format_func=rows.__getitem__,
                         help=tr("llm_flow.node_help"))
    position = right.selectbox(tr("llm_flow.node_position"), range(length), key=NODE_POSITION.key,
                               format_func=lambda at: f"{at}: {view.tokens[at]!r}", help=tr("llm_flow.node_help"))
    return int(row), int(position)


def show_flow(charts: DeltaGenerator, controls: DeltaGenerator, lab: ResidualModel, text: str) -> FlowView | None:
    """The graph in `charts` at the threshold chosen in `controls`, the chosen node's numbers and lens under it."""
    key = ("llm_flow", LLM_ID, text)
    view = heavy(key, lambda: flow_view(LLM_ID, text, lab), where=charts)
    if view is None:
        return None
    threshold = float(spec_select_slider(FLOW_THRESHOLD, tr("llm_flow.threshold_label"), where=controls,
                                         format_func=lambda share: f"{share:.0%}",
                                         help=tr("llm_flow.threshold_help")))
    row, position = _chosen_node(controls, view)
    route = flow_route(view.edges, view.residual_shares, threshold)
    words = words_for("llm_answer", "llm_flow")
    predicted = html_escaped(repr(view.predicted))
    show_chart(shared_figure(key + ("graph", threshold, row, position), lambda: flow_graph(
                   view.edges, view.residual_shares, view.mlp_shares, view.relevance, route, view.tokens, threshold,
                   words("llm_flow.chart.title", token=predicted, threshold=f"{threshold:.0%}"),
                   selected=(row, position), words=words)),
               "llm_information_flow", key=GRAPH.key, where=charts, on_select=_node_clicked, width=page_width())
    edges, straight = route
    on_route = np.zeros((view.relevance.shape[0], len(view.tokens)), dtype=bool)
    on_route[-1, -1] = True
    on_route[:-1] |= edges.any(axis=1) | straight  # a kept edge's lower node
    charts.caption(tr("llm_flow.route_summary", threshold=f"{threshold:.0%}", edges=int(edges.sum()),
                      nodes=int(on_route.sum()), positions=int(on_route[0].sum()), total=len(view.tokens)))
    if not presenting():
        charts.caption(tr("llm_flow.caption", token=escape_markdown(repr(view.predicted)),
                          threshold=f"{threshold:.0%}"))
    _show_node(charts, lab, text, view, row, position)
    if not presenting():
        charts.write(tr("llm_flow.text"))
    return view


def _show_node(where: DeltaGenerator, lab: ResidualModel, text: str, view: FlowView, row: int, position: int) -> None:
    """The chosen node's shares, the heads carrying most into it, and its lens: the tokens it promotes and
    suppresses."""
    rows = lens_row_labels(view.residual_shares.shape[0], words=words_for("llm_answer"))
    where.subheader(tr("llm_flow.node_title", row=rows[row], token=escape_markdown(repr(view.tokens[position]))))
    metrics = where.columns(3)
    metrics[0].metric(tr("llm_flow.relevance"), f"{view.relevance[row, position]:.1%}",
                      help=tr("llm_flow.relevance_help"))
    if row == 0:
        where.caption(tr("llm_flow.embedding_node"))
    else:
        metrics[1].metric(tr("llm_flow.mlp_share"), f"{view.mlp_shares[row - 1, position]:.0%}",
                          help=tr("llm_flow.mlp_share_help"))
        metrics[2].metric(tr("llm_flow.residual_share"), f"{view.residual_shares[row - 1, position]:.0%}",
                          help=tr("llm_flow.residual_share_help"))
        shares = view.head_shares[row - 1, :, position]  # (h,)
        strongest = np.argsort(-shares)[:NODE_HEADS]
        where.caption(tr("llm_flow.node_heads", heads=", ".join(
            f"{head_label(row - 1, int(head))} ({shares[head]:.0%})" for head in strongest)))
    lens = heavy(("llm_flow_node", LLM_ID, text, row, position),
                 lambda: flow_node_lens(LLM_ID, text, row, position, lab), where=where)
    if lens is None:
        return
    promoted, suppressed = where.columns(2)
    promoted.markdown(f"**{tr('llm_flow.promotes')}**", help=tr("llm_flow.promotes_help"))
    promoted.markdown("\n".join(f"1. {token_list([token])} {prob:.1%}" for token, prob in
                                zip(lab.token_texts(lens.promoted), lens.promoted_probs)))
    suppressed.markdown(f"**{tr('llm_flow.suppresses')}**", help=tr("llm_flow.suppresses_help"))
    suppressed.markdown("\n".join(f"1. {token_list([token])} {logit:+.1f}" for token, logit in
                                  zip(lab.token_texts(lens.suppressed), lens.suppressed_logits)))
