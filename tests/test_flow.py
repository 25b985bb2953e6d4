"""The information-flow graph (model/explain/flow.py, viz/flow.py): each block's parts add up to its output, the shares
of every node sum to 1 and so does each row of the relevance, the route keeps only edges above its threshold into
nodes on it, each node's lens is the logit lens's, and the per-head contributions match transformers'
LlamaForCausalLM on the same GGUF file (tests/conftest.py's `reference`): a pre-hook on each o_proj (the heads'
outputs, d_k columns each, times that head's columns of o_proj), a hook on each v_proj (the values) and its own
attention weights."""
import numpy as np
import pytest
import torch

from model.explain.flow import FLOW_MAX_TOKENS, flow_relevance, flow_route, information_flow, node_lens
from model.explain.logit_lens import logit_lens
from model.families import adapt
from model.gguf_weights import SMOLLM2_NAME
from model.llama import load_smollm2
from ui.language import words_for
from viz.flow import ROUTE, flow_graph, flow_node

TEXT = "When Mary and John went to the store, John gave a drink to"  # 14 tokens; the model says " Mary"


@pytest.fixture(scope="module")
def lab():
    return adapt(SMOLLM2_NAME, load_smollm2())


@pytest.fixture(scope="module")
def parts(lab):
    return list(lab.block_parts(TEXT, FLOW_MAX_TOKENS))


@pytest.fixture(scope="module")
def flow(lab):
    return information_flow(lab, TEXT)


def test_each_blocks_heads_and_residual_sum_to_its_attention_and_the_blocks_chain(parts, lab):
    stream = lab.residual_stream(TEXT).hidden  # (L+1, T, d)
    assert len(parts) == 30
    for layer, block in enumerate(parts):
        torch.testing.assert_close(block.entering, stream[layer], rtol=0, atol=1e-4)
        heads = torch.einsum("hij,hjd->id", block.weights, block.written)  # Σ_h Σ_j A^h_ij f_h(x_j)
        torch.testing.assert_close(block.entering + heads, block.entering + block.attention, rtol=0, atol=1e-4)
        torch.testing.assert_close(block.entering + block.attention + block.mlp, stream[layer + 1], rtol=0,
                                   atol=1e-3)


def test_every_node_shares_out_all_of_itself_and_every_row_of_the_relevance_sums_to_one(flow):
    layers, heads, length, _ = flow.heads.shape
    assert (layers, heads, length) == (30, 9, 14) and flow.tokens[-1] == " to"
    assert np.allclose(flow.edges.sum(-1) + flow.residual_shares, 1, atol=1e-5)
    assert np.allclose(np.triu(flow.edges, 1), 0)  # a query never reads a later key
    assert ((flow.mlp_shares > 0) & (flow.mlp_shares < 1)).all()
    relevance = flow.relevance()
    assert relevance.shape == (31, 14) and np.allclose(relevance.sum(1), 1, atol=1e-5)
    assert relevance[-1].tolist() == [0.0] * 13 + [1.0]
    # every layer passes all of the last position's relevance on: through its heads or straight up
    straight = (relevance[1:] * flow.residual_shares).sum(1)
    assert np.allclose(flow.head_flow().sum((1, 2)) + straight, 1, atol=1e-5)
    assert np.allclose(flow.mlp_flow(), relevance[1:] * flow.mlp_shares)
    assert flow.head_flow().shape == (30, 9, 14) and (flow.head_flow() >= 0).all()


def test_the_route_keeps_edges_above_its_threshold_into_nodes_on_it(flow):
    edges, straight = flow.edges, flow.residual_shares
    low, high = flow_route(edges, straight, 0.05), flow_route(edges, straight, 0.2)
    for kept_edges, kept_straight, threshold in (*low, 0.05), (*high, 0.2):
        assert (edges[kept_edges] >= threshold).all() and (straight[kept_straight] >= threshold).all()
        reached = np.zeros(14, dtype=bool)
        reached[-1] = True
        for layer in range(29, -1, -1):  # each kept edge enters a node the route reached from above
            assert not kept_edges[layer][~reached].any() and not kept_straight[layer][~reached].any()
            reached = kept_edges[layer].any(0) | kept_straight[layer]
    assert (low[0] >= high[0]).all() and low[0].sum() > high[0].sum()  # a higher threshold keeps fewer edges
    assert low[0][-1].any()  # the last block's heads carry at least 5 % of the prediction's node from somewhere
    # relevance computed from shares alone is the flow's own
    assert np.allclose(flow_relevance(edges, straight), flow.relevance())


def test_a_nodes_lens_is_the_logit_lens_there_and_the_top_node_says_the_prediction(lab, flow):
    top = node_lens(lab, TEXT, 30, 13)
    assert top.promoted[0] == flow.predicted and lab.token_texts([flow.predicted]) == [" Mary"]
    short = "The capital of France is"  # a 5-token lens: 155 rows through the unembedding, not 434
    lens = logit_lens(lab, short)
    for row, position in ((18, 3), (0, 2)):
        shown = node_lens(lab, short, row, position)
        assert shown.promoted == lens.top_ids[row, position].tolist()
        np.testing.assert_allclose(shown.promoted_probs, lens.top_probs[row, position], atol=1e-5)
        assert list(shown.suppressed_logits) == sorted(shown.suppressed_logits)  # the lowest first
    with pytest.raises(ValueError):
        node_lens(lab, TEXT, 30, 14)


def test_the_graph_draws_each_edge_of_its_threshold_once_the_route_in_vermillion(flow):
    threshold = 0.1
    route = flow_route(flow.edges, flow.residual_shares, threshold)
    fig = flow_graph(flow.edges, flow.residual_shares, flow.mlp_shares, flow.relevance(), route, flow.tokens,
                     threshold, "flow", selected=(30, 13), words=words_for("llm_answer", "llm_flow"))
    lines = [trace for trace in fig.data if trace.mode == "lines"]
    drawn = sum(list(trace.x).count(None) for trace in lines)  # one None after each segment
    shown = (flow.edges >= threshold).sum() + (flow.residual_shares >= threshold).sum()
    assert drawn == shown
    on_route = sum(list(trace.x).count(None) for trace in lines if trace.line.color == ROUTE)
    assert on_route == route[0].sum() + route[1].sum() > 0
    nodes = next(trace for trace in fig.data if trace.mode == "markers" and trace.customdata is not None)
    assert len(nodes.x) == 31 * 14
    assert flow_node(nodes.customdata[-1]) == (30, 13) and flow_node(None) is None


@pytest.mark.slow  # loads transformers' reference model
def test_per_head_contributions_match_transformers_hooked_attention(parts, flow, lab, reference):
    ids = torch.tensor([lab.encode(TEXT)])
    cfg = reference.config
    heads, d_k = cfg.num_attention_heads, cfg.hidden_size // cfg.num_attention_heads
    group = heads // cfg.num_key_value_heads
    o_inputs, values = [], []
    handles = []
    for block in reference.model.layers:
        handles.append(block.self_attn.o_proj.register_forward_pre_hook(
            lambda module, args: o_inputs.append(args[0][0].clone())))  # (T, h·d_k): the heads' outputs
        handles.append(block.self_attn.v_proj.register_forward_hook(
            lambda module, args, output: values.append(output[0].clone())))  # (T, h_kv·d_k)
    try:
        with torch.no_grad():
            attentions = reference(ids, output_attentions=True).attentions  # L × (1, h, T, T)
    finally:  # the reference is the worker's (tests/conftest.py): no hook outlives this test
        for handle in handles:
            handle.remove()
    length = ids.size(1)
    with torch.no_grad():
        for layer, block in enumerate(reference.model.layers):
            w_o = block.self_attn.o_proj.weight.view(cfg.hidden_size, heads, d_k)  # (d, h, d_k)
            per_head = torch.einsum("thk,dhk->htd", o_inputs[layer].view(length, heads, d_k), w_o)  # (h, T, d)
            ours = torch.einsum("hij,hjd->hid", parts[layer].weights, parts[layer].written)
            torch.testing.assert_close(ours, per_head, rtol=0, atol=1e-4)
            v = values[layer].view(length, -1, d_k).repeat_interleave(group, dim=1)  # (T, h, d_k)
            written = torch.einsum("thk,dhk->htd", v, w_o).norm(dim=-1)  # (h, T): ‖v_j W_O^h‖
            expected = attentions[layer][0] * written[:, None, :]  # (h, T, T): ‖A^h_ij v_j W_O^h‖
            np.testing.assert_allclose(flow.heads[layer], expected.numpy(), rtol=1e-4, atol=1e-4)
