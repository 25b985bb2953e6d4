"""AppTest for the answer page's information-flow section (ui/llm/flow.py): the default prompt's graph draws the model
function's shares and route, a node chosen by its row and token shows that node's lens, the threshold redraws the
route, a prompt past 64 tokens is refused, in English and Korean; hostile text gives a graph or a message."""
import numpy as np
import pytest

from i18n import translate
from model.explain.flow import flow_route, information_flow, node_lens
from model.families import open_model
from runtime import analysis_worker
from tests.app_links import assert_healthy, chart_specs, open_page, trace_array
from tests.bad_inputs import load_bad_inputs
from ui.llm.flow import FLOW_VIEW_MAX_TOKENS, NODE_POSITION, NODE_ROW
from ui.llm.flow_specs import DEFAULT_FLOW_TEXT, FLOW_TEXT, FLOW_THRESHOLD


@pytest.fixture(autouse=True)
def unhurried_worker(monkeypatch):
    """The analysis worker's time limit lifted: a loaded 2-core test machine is not what these tests check."""
    monkeypatch.setattr(analysis_worker.ANALYSES, "time_limit", 600.0)


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")


def graph(at) -> dict:
    return next(c for c in chart_specs(at) if c["layout"]["title"]["text"].startswith(
        ("Information flow", "' Paris'")))


def route_summary(language: str, flow, threshold: float) -> str:
    edges, straight = flow_route(flow.edges, flow.residual_shares, threshold)
    on_route = np.zeros((31, len(flow.tokens)), dtype=bool)
    on_route[-1, -1] = True
    on_route[:-1] |= edges.any(axis=1) | straight
    return translate(language, "llm_flow.route_summary", threshold=f"{threshold:.0%}", edges=int(edges.sum()),
                     nodes=int(on_route.sum()), positions=int(on_route[0].sum()), total=len(flow.tokens))


def test_the_graph_draws_the_models_shares_and_a_chosen_nodes_lens(lab):
    at = open_page("llm_answer")
    flow = information_flow(lab, DEFAULT_FLOW_TEXT)
    spec = graph(at)
    assert spec["layout"]["title"]["text"] == "Information flow to ' Paris': edges of at least 10% of a node"
    nodes = next(trace for trace in spec["data"] if trace.get("customdata") is not None)
    colours = trace_array(nodes["marker"]["color"]).reshape(31, 5)
    np.testing.assert_allclose(colours[1:], flow.mlp_shares, atol=1e-6)  # each node coloured by its MLP's share
    captions = [c.value for c in at.caption]
    assert route_summary("en", flow, 0.1) in captions
    # the top node at the last position is chosen first: its lens names the prediction
    assert any(s.value == "The node L30 · \\' is\\'" for s in at.subheader)
    assert any(m.value.startswith("1. \\' Paris\\'") for m in at.markdown)
    # a node chosen by row and token (the graph's keyboard twin): its own lens
    at.selectbox(key=NODE_ROW.key).set_value(18).run()
    at.selectbox(key=NODE_POSITION.key).set_value(3).run()
    assert_healthy(at)
    assert any(s.value == "The node L18 · \\' France\\'" for s in at.subheader)
    lens = node_lens(lab, DEFAULT_FLOW_TEXT, 18, 3)
    first = lab.token_texts(lens.promoted[:1])[0]
    assert any(m.value.startswith(f"1. {first!r}".replace("'", "\\'")) for m in at.markdown), first
    # a higher threshold: fewer edges on the route
    at.select_slider(key=FLOW_THRESHOLD.key).set_value(0.3).run()
    assert route_summary("en", flow, 0.3) in [c.value for c in at.caption]
    assert graph(at)["layout"]["title"]["text"].endswith("at least 30% of a node")
    # past 64 tokens: a message, no graph
    long = "word " * FLOW_VIEW_MAX_TOKENS
    at.text_input(key=FLOW_TEXT.key).set_value(long).run()
    assert len(lab.encode(long)) > FLOW_VIEW_MAX_TOKENS
    assert translate("en", "llm_flow.too_long", tokens=len(lab.encode(long)), limit=FLOW_VIEW_MAX_TOKENS) in [
        i.value for i in at.info]
    assert not any(c["layout"]["title"]["text"].startswith("Information flow") for c in chart_specs(at))


def test_the_section_in_korean(lab):
    at = open_page("llm_answer", {"flow_min": "0.05"}, lang="ko")
    assert translate("ko", "llm_flow.title") in [h.value for h in at.header]
    titles = [c["layout"]["title"]["text"] for c in chart_specs(at)]
    assert translate("ko", "llm_flow.chart.title", token="' Paris'", threshold="5%") in titles
    flow = information_flow(lab, DEFAULT_FLOW_TEXT)
    assert route_summary("ko", flow, 0.05) in [c.value for c in at.caption]
    assert translate("ko", "llm_flow.promotes") in " ".join(m.value for m in at.markdown)


@pytest.mark.slow
def test_every_bad_text_gives_a_graph_or_a_message():
    at = open_page("llm_answer")
    for text in load_bad_inputs():
        at.text_input(key=FLOW_TEXT.key).set_value(text).run()
        assert_healthy(at)
        assert not at.error, repr(text[:40])
        shown = " ".join(str(m.value) for m in list(at.markdown) + list(at.info) + list(at.caption))
        assert "<script>" not in shown and "<img" not in shown, repr(text[:40])
        drawn = any(c["layout"]["title"]["text"].startswith("Information flow") for c in chart_specs(at))
        assert drawn or at.info, repr(text[:40])  # nothing drawn: a message says why
