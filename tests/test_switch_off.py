"""Heads switched off while the model writes (model/switch_off.py, issue 56 part 2), as `python -m model.inspect …
--switch-off` writes it, against transformers' LlamaForCausalLM on the same GGUF file (tests/conftest.py's
`reference`): a forward pre-hook on each chosen layer's o_proj zeroes those heads' slice of its input, then its own
generate(); and the copy of a repeated random sequence, which the induction heads' removal breaks.
"""
import numpy as np
import pytest
import torch

from classroom.measures.llm import shared_induction
from model.explain.induction import top_heads
from model.families import adapt
from model.generation import generate
from model.gguf_weights import SMOLLM2_NAME
from model.inspect import main
from model.llama import load_smollm2
from model.switch_off import (INDUCTION_LENGTH, INDUCTION_SEED, MAX_HEADS, CopyLosses, check_heads, continue_both,
                              copy_losses, first_divergence, heads_text, parse_heads)

PROMPT = "The Transformer is a neural network that"
# The five heads writing most into the prompt's next token (direct logit attribution): with them off the text parts
# from the intact model's at its second new token (" can recognize patterns in images" against " can be trained").
HEADS = "26.4,26.5,27.1,28.1,28.9"
STEPS = 8


@pytest.fixture(scope="module")
def lab():
    return adapt(SMOLLM2_NAME, load_smollm2())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("inspect") / "switched.npz"
    assert main([SMOLLM2_NAME, PROMPT, "--switch-off", HEADS, "--steps", str(STEPS), "--out", str(out)]) == 0
    return dict(np.load(out))


@pytest.fixture(scope="module")
def induction_copy(lab) -> CopyLosses:
    """Both models' losses on 2 × 20 random tokens, the top 5 induction heads of the LLM heads page's sequence off."""
    result, _ = shared_induction(lab.network, INDUCTION_LENGTH, INDUCTION_SEED)  # the page's one click reads this
    heads = tuple(sorted((layer, head) for layer, head, _ in top_heads(result.scores, 5)))
    return copy_losses(lab, lab.config.vocab_size, heads)


@pytest.mark.slow  # loads transformers' reference model (about 20 s)
def test_generated_ids_match_transformers_generate_with_those_heads_zeroed_before_o_proj(written, lab, reference):
    ids = lab.encode(PROMPT)
    d_k = reference.config.hidden_size // reference.config.num_attention_heads
    chosen = parse_heads(HEADS)

    def zero(heads):  # the o_proj input (B, T, h·d_k): each chosen head's d_k columns set to 0
        def hook(module, args):
            values = args[0].clone()
            for head in heads:
                values[..., head * d_k:(head + 1) * d_k] = 0.0
            return (values, *args[1:])
        return hook

    layers = {layer for layer, _ in chosen}
    handles = [reference.model.layers[layer].self_attn.o_proj.register_forward_pre_hook(
        zero([head for l, head in chosen if l == layer])) for layer in layers]
    try:
        with torch.no_grad():
            out = reference.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                     do_sample=False, max_new_tokens=STEPS)
    finally:  # the reference is the worker's (tests/conftest.py): no hook outlives this test
        for handle in handles:
            handle.remove()
    expected = out[0, len(ids):].tolist()
    assert written["generated_ids"].dtype == np.int64 and written["generated_ids"].shape == (STEPS,)
    assert written["generated_ids"].tolist() == expected
    with torch.no_grad():  # and the intact reference writes what our intact model writes, which differs
        intact = reference.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                    do_sample=False, max_new_tokens=STEPS)[0, len(ids):].tolist()
    assert intact == lab.generate_with_heads_off(ids, STEPS, ())
    assert first_divergence(intact, expected) == 1


def test_the_kv_cache_writes_what_recomputing_the_whole_text_writes_with_the_heads_off(written, lab):
    ids = lab.encode(PROMPT)
    mask = torch.ones(30, 9)
    for layer, head in parse_heads(HEADS):
        mask[layer, head] = 0.0
    recomputed = generate(lab.network.model, ids, STEPS, use_cache=False, head_mask=mask)
    assert recomputed.steps[-1].computed_positions == len(ids) + STEPS - 1  # no cache: the whole text each step
    assert written["generated_ids"].tolist() == recomputed.new_ids
    cached = generate(lab.network.model, ids, STEPS, head_mask=mask)
    assert [step.computed_positions for step in cached.steps[1:]] == [1] * (STEPS - 1)  # the cache: one token a step


def test_side_by_side_marks_where_the_texts_part_and_keeps_the_seed(lab):
    ids = lab.encode(PROMPT)
    greedy = continue_both(lab, ids, parse_heads(HEADS), STEPS)
    assert greedy.intact_ids[:1] == greedy.switched_ids[:1] and greedy.divergence == 1
    sampled = continue_both(lab, ids, (), 4, temperature=1.0, top_k=50, seed=7)
    assert sampled.intact_ids == sampled.switched_ids and sampled.divergence is None  # no head off: one draw


def test_switching_the_induction_heads_off_breaks_the_copy_of_the_repeated_half(induction_copy):
    """Measured on the live model (2 × 20 tokens, seed 0, the top 5 induction heads of the 2 × 40 sequence, L18 H4,
    L18 H5, L19 H7, L19 H8, L24 H3): on the second copy the loss rises from 2.27 to 9.97 nats; on the first copy, where
    nothing can be copied, both stay near 15.2."""
    copy = induction_copy
    assert copy.intact.shape == copy.switched.shape == (2 * copy.period - 1,)
    intact, switched = copy.second_half(copy.intact), copy.second_half(copy.switched)
    assert intact < 4.0 < 7.0 < switched  # the intact model copies; without its induction heads it cannot
    assert abs(copy.first_half(copy.switched) - copy.first_half(copy.intact)) < 1.0
    assert copy.first_half(copy.intact) > intact + 8.0  # copying is what the second half's low loss was


def test_heads_are_read_and_written_as_layer_dot_head_counted_from_one():
    assert parse_heads("19.7, 18.4,19.7") == ((17, 3), (18, 6))
    assert heads_text(parse_heads("19.7,18.4")) == "18.4,19.7"
    assert parse_heads("") == ()
    for wrong in ("19", "L19 H7", "0.1", "1.0", "1.-2", "a.b", "1.2.3"):
        with pytest.raises(ValueError):
            parse_heads(wrong)
    assert check_heads(((29, 8), (0, 0)), 30, 9) == ((0, 0), (29, 8))
    with pytest.raises(ValueError, match="30 layers of 9 heads"):
        check_heads(((30, 0),), 30, 9)
    with pytest.raises(ValueError, match=f"at most {MAX_HEADS}"):
        check_heads(tuple((layer, 0) for layer in range(MAX_HEADS + 1)), 30, 9)


def test_first_divergence_counts_a_text_that_ends_first():
    assert first_divergence([1, 2, 3], [1, 2, 3]) is None
    assert first_divergence([1, 2, 3], [1, 5, 3]) == 1
    assert first_divergence([1, 2], [1, 2, 3]) == 2


def test_a_head_the_model_lacks_or_a_model_without_it_exits_2(tmp_path, capsys):
    out = tmp_path / "x.npz"
    assert main([SMOLLM2_NAME, PROMPT, "--switch-off", "31.1", "--out", str(out)]) == 2
    assert "30 layers of 9 heads" in capsys.readouterr().err and not out.exists()
    assert main([SMOLLM2_NAME, PROMPT, "--switch-off", "1.1", "--steps", "600", "--out", str(out)]) == 2
    assert main(["transformer_en-fr", "i am a student", "--switch-off", "1.1", "--out", str(out)]) == 2
    assert "decoder-only LLM" in capsys.readouterr().err and not out.exists()


def test_the_one_click_reads_the_llm_heads_pages_default_sequence():
    from ui.llm_heads.specs import INDUCTION_LENGTH as PAGE_LENGTH, INDUCTION_SEED as PAGE_SEED

    assert (INDUCTION_LENGTH, INDUCTION_SEED) == (PAGE_LENGTH.default, PAGE_SEED.default)


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_the_page_section_from_a_link_shows_both_texts_parting_where_the_model_does(lab):
    from i18n import translate
    from tests.app_links import assert_healthy, open_page
    from ui.llm.specs import DEFAULT_PROMPT
    from ui.text import escape_markdown

    assert DEFAULT_PROMPT == PROMPT  # the page opens on the prompt the reference test generates from
    at = open_page("llm", {"off_heads": HEADS, "off_steps": str(STEPS)})
    assert_healthy(at)
    assert at.multiselect(key="llm_off_heads").value == list(parse_heads(HEADS))
    both = continue_both(lab, lab.encode(PROMPT), parse_heads(HEADS), STEPS, stop_ids=lab.stop_ids)
    intact, switched = (lab.token_texts([ids[1]])[0] for ids in (both.intact_ids, both.switched_ids))
    assert translate("en", "llm_switch_off.parted", step=2, intact=escape_markdown(repr(intact)),
                     switched=escape_markdown(repr(switched))) in [c.value for c in at.caption]
    assert any(escape_markdown(lab.decode(both.switched_ids).strip()) in m.value for m in at.markdown)
    assert "Second copy, intact (nats)" in _metrics(at)


def test_the_induction_button_in_korean_picks_the_heads_page_heads_and_shows_the_copy_broken(induction_copy):
    from i18n import translate
    from tests.app_links import assert_healthy, open_page

    at = open_page("llm", lang="ko")
    assert at.button(key="llm_off_induction").label == translate("ko", "llm_switch_off.induction_button", count=5)
    assert translate("ko", "llm_switch_off.no_heads") in [c.value for c in at.caption]
    at.button(key="llm_off_induction").click().run()
    assert_healthy(at)
    assert at.multiselect(key="llm_off_heads").value == list(induction_copy.heads)
    shown = _metrics(at)
    copy = induction_copy
    assert shown[translate("ko", "llm_switch_off.second_intact")] == f"{copy.second_half(copy.intact):.2f}"
    assert shown[translate("ko", "llm_switch_off.second_switched", heads=5)] == f"{copy.second_half(copy.switched):.2f}"
    at.button(key="llm_off_attributed").click().run()  # the heads writing the prompt's next token: HEADS
    assert_healthy(at)
    assert at.multiselect(key="llm_off_heads").value == list(parse_heads(HEADS))


def test_the_aligned_chart_marks_the_first_divergence_and_leaves_a_shorter_texts_cells_empty():
    from ui.language import words_for
    from viz.chart_data import chart_data
    from viz.switch_off import AFTER, FIRST, SAME, aligned_tokens_chart

    fig = aligned_tokens_chart([" a", " b", " c"], [" a", " <x>"], 1, "t", words=words_for("llm_switch_off"))
    heat = fig.data[0]
    assert [list(row) for row in heat.z] == [[SAME, SAME], [FIRST, FIRST], [AFTER, AFTER]]
    assert list(heat.y) == ["1", "2 ◀ first divergence", "3"]
    assert [list(row) for row in heat.text] == [["' a'", "' a'"], ["' b'", "' &lt;x&gt;'"], ["' c'", ""]]  # escaped
    assert chart_data(fig).maps[0].values.ravel().tolist() == [0.0, 1.0, 1.0]  # which rows differ
