"""The lecture's measures (classroom/measures, issue 37): one registry, without Streamlit, is the only list of their
names; the lesson validator reads it; and every measure, called as the UI calls it (the model and the stop's view
values handed in), gives on the shipped models what the model itself shows. The models are loaded once for the
module; SmolLM2's measures are marked slow (it loads in about 20 s on 2 cores)."""
import ast
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from classroom.lessons import parse_lesson
from classroom.measures import (MEASURES, Asked, Measure, MeasureError, StopView, answer, checked_args, figure,
                                head_label, model_id, view_names)
from classroom.measures.registry import measure
from model.decode import greedy_decode

ROOT = Path(__file__).resolve().parents[1]
APP_CODE = ("ui", "runtime", "model", "viz", "classroom", "serving", "app_pages", "bench")
TRANSLATOR, GRU = "transformer_en-fr", "bahdanau_en-fr"
SENTENCE = "the small cat eats the red apple"  # the intro lesson's attention stops read it
SINK_TEXT = "The teacher reads a short story to the class. " * 2  # short: each pass costs seconds on 2 cores
COVERED: set[str] = set()  # the measures the tests below take on a shipped model


def covers(*names: str):
    def mark(test):
        COVERED.update(names)
        return test
    return mark


EXACT = Asked()  # a question with no tolerance and no misconceptions named


def _take(name: str, model, view: dict, args: dict | None = None, asked: Asked = EXACT):
    """The measure as a question's answer (or, for a claim-only measure, a claim's figure), as the UI calls it."""
    found = MEASURES[name]
    args = checked_args(found, args or {})
    return (answer(found, model, StopView.of(view), args, asked) if found.answers
            else figure(found, model, StopView.of(view), args))


# --- the registry is the one list, and it needs no Streamlit -------------------------------------------------------

def test_the_registry_and_the_lesson_validator_import_without_streamlit():
    code = ("import sys, classroom.measures, classroom.lessons; print('streamlit' in sys.modules, "
            "any(m.split('.')[0] == 'ui' for m in sys.modules), len(classroom.measures.MEASURES))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["False", "False", str(len(MEASURES))], result.stderr[-2000:]


def _shipped_names() -> set[tuple[str, str]]:
    """(role, name) of every compute and claim measure in the shipped lesson files, read from the TOML itself."""
    named = set()
    for path in (ROOT / "lessons").glob("*.toml"):
        for stop in tomllib.loads(path.read_text(encoding="utf-8"))["stop"]:
            if "compute" in stop.get("question", {}):
                named.add(("compute", stop["question"]["compute"]))
            named |= {("claim", claim["measure"]) for claim in stop.get("claim", [])}
    return named


def test_every_compute_and_claim_of_the_shipped_lessons_is_a_registered_measure_of_its_role():
    named = _shipped_names()
    assert len(named) >= 20  # both lessons: a file the glob missed would shrink this
    for role, name in named:
        assert name in MEASURES, (role, name)
        assert (MEASURES[name].answers is not None) if role == "compute" else MEASURES[name].bounds, (role, name)


PAGES = {"attention": (), "llm_heads": ()}
QUESTION = """title = "T"
[[stop]]
page = "attention"
[stop.question]
kind = "number"
prompt = "How many?"
compute = "{name}"
"""


def test_the_lesson_validator_reads_the_registry(monkeypatch):
    """A compute the registry gains is one a lesson may use; one it does not hold, or of another kind, is a problem."""
    assert parse_lesson("t", QUESTION.format(name="query_heads_per_kv_head"), PAGES).stops[0].problem is None
    unknown = parse_lesson("t", QUESTION.format(name="heads_of_a_new_kind"), PAGES).stops[0]
    assert "is not one of" in unknown.problem and "query_heads_per_kv_head" in unknown.problem
    monkeypatch.setitem(MEASURES, "heads_of_a_new_kind", Measure("heads_of_a_new_kind", lambda *a: 3.0, "number"))
    assert parse_lesson("t", QUESTION.format(name="heads_of_a_new_kind"), PAGES).stops[0].problem is None
    wrong_kind = parse_lesson("t", QUESTION.format(name="sharpest_cross_head"), PAGES).stops[0]
    assert "answers a head question, not a number question" in wrong_kind.problem
    claim_only = parse_lesson("t", QUESTION.format(name="row_peak"), PAGES).stops[0]
    assert "is not one of" in claim_only.problem  # a claim's measure answers no question


def test_a_measure_is_registered_once():
    with pytest.raises(ValueError, match="twice"):
        measure("sink_share", bounds=True)(lambda lab, view, args: 0.0)
    assert MEASURES["sink_share"].function.__module__ == "classroom.measures.llm"


def _app_modules():
    for package in APP_CODE:
        yield from (ROOT / package).rglob("*.py")
    yield ROOT / "app.py"


def test_no_other_module_holds_the_measure_names():
    """The registry's modules name each measure once (its declaration); no other module of the app holds one in a
    table, a list or a comparison (the dispatch that COMPUTED, CLAIMS and LLM_COMPUTES kept in step by hand)."""
    names, declared, elsewhere = set(MEASURES), {}, []
    for path in _app_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        inside = path.parent == ROOT / "classroom" / "measures"
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in names and inside:
                declared[node.value] = declared.get(node.value, 0) + 1
            if isinstance(node, (ast.Dict, ast.Tuple, ast.List, ast.Set, ast.Compare)) and not inside:
                held = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in names]
                if held:
                    elsewhere.append((str(path.relative_to(ROOT)), node.lineno, held))
    assert not elsewhere, elsewhere
    assert declared == dict.fromkeys(names, 1), {n: c for n, c in declared.items() if c != 1}


def test_every_view_value_a_measure_reads_is_a_widget_specs():
    """The UI resolves a measure's view values through the widget specs (ui/lessons/measured.stop_view): each name
    is a share-link parameter a spec reads, so a stop that leaves it out gets the page's own default."""
    from ui.specs import SPECS  # the UI's side (it imports Streamlit): this test only reads the names

    unknown = {(name, read) for name, found in MEASURES.items() for read in found.reads if read not in SPECS}
    assert not unknown, unknown


def test_the_args_schema_checks_and_converts_what_the_file_gives():
    row_peak = MEASURES["row_peak"]
    assert checked_args(row_peak, {"kind": "cross", "layer": 2, "head": "min"}) == {"kind": "cross", "layer": 1,
                                                                                    "head": "min"}
    assert checked_args(row_peak, {"kind": "cross", "layer": 1, "head": 3})["head"] == 2  # 1-based in the file
    for args, said in [({"kind": "cross", "head": 1}, "args.layer"), ({"kind": "cross", "layer": 0, "head": 1},
                                                                      "1-based"),
                       ({"kind": 3, "layer": 1, "head": 1}, "args.kind"), ("layer = 1", "table")]:
        with pytest.raises(ValueError, match=said):
            checked_args(row_peak, args)
    softmax = MEASURES["softmax_weight"]
    with pytest.raises(ValueError, match="from 1 to 2"):
        checked_args(softmax, {"scores": [0.3, 0.4], "index": 3})
    assert view_names(softmax, {"scores": [1], "index": 1, "factor_param": "v1x"}) == ("v1x",)
    assert view_names(MEASURES["head_linking"], {}) == ("model", "sentence")
    assert model_id(MEASURES["head_linking"], StopView.of({"model": GRU})) == GRU
    assert model_id(MEASURES["softmax_weight"], StopView()) is None


# --- every measure on the shipped models -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def translator():
    from model.families import open_model

    return open_model(TRANSLATOR)


@pytest.fixture(scope="module")
def cross(translator):
    """The translator's decode of SENTENCE, read directly: (output tokens, source tokens, cross maps (L, h, T, S))."""
    result = greedy_decode(translator.network, SENTENCE)
    return result.output_tokens, result.source.tokens, result.attention["cross"].astype(float)


VIEW = {"model": TRANSLATOR, "sentence": SENTENCE}


@covers("sharpest_cross_head")
def test_the_sharpest_cross_head_has_the_lowest_mean_row_entropy(translator, cross):
    weights = cross[2]
    entropy = -(weights * np.log(np.clip(weights, 1e-12, None))).sum(-1).mean(-1)  # (L, h)
    found = _take("sharpest_cross_head", translator, VIEW)
    assert found.shown == head_label(*np.unravel_index(entropy.argmin(), entropy.shape))
    assert found.accepted == {found.shown} and found.separation > 0
    loose = _take("sharpest_cross_head", translator, VIEW, asked=Asked(tolerance=float(np.ptp(entropy)) + 0.01))
    assert len(loose.accepted) == entropy.size and loose.separation is None  # as wide as the spread: every head


@covers("head_linking")
def test_the_linking_head_puts_the_most_or_least_weight_from_the_target_on_the_source(translator, cross):
    output, source, weights = cross
    target, word = output[0], source[0]
    column = weights[:, :, output.index(target), source.index(word)]
    most = _take("head_linking", translator, VIEW, {"target": target, "source": word})
    least = _take("head_linking", translator, VIEW, {"target": target, "source": word, "least": True})
    assert most.shown == head_label(*np.unravel_index(column.argmax(), column.shape))
    assert least.shown == head_label(*np.unravel_index(column.argmin(), column.shape))
    with pytest.raises(MeasureError, match="zebra"):
        _take("head_linking", translator, VIEW, {"target": "zebra", "source": word})


@covers("alignment_source_token")
def test_the_alignment_token_is_the_one_the_target_row_weighs_most(translator):
    from model.families import open_model

    gru = open_model(GRU)
    view = {"model": GRU, "sentence": "i am a student"}
    result = greedy_decode(gru.network, view["sentence"])
    target = result.output_tokens[0]
    row = result.attention["alignment"][0]
    found = _take("alignment_source_token", gru, view, {"target": target})
    assert found.shown == result.source.tokens[int(np.argmax(row))] and found.accepted == {found.shown}
    with pytest.raises(MeasureError):  # the Transformer has cross-attention heads, no alignment
        _take("alignment_source_token", translator, VIEW, {"target": target})


@covers("aligned_cross_layers")
def test_the_aligned_layers_are_those_whose_heads_all_peak_above_the_bound(translator):
    options = [[1], [2], [1, 2], []]
    every = _take("aligned_cross_layers", translator, VIEW, {"option_layers": options, "at_least": 0.0})
    none = _take("aligned_cross_layers", translator, VIEW, {"option_layers": options, "at_least": 1.01})
    assert (every.shown, none.shown) == ("3", "4")  # every row peak is >= 0, none above 1
    with pytest.raises(MeasureError):
        _take("aligned_cross_layers", translator, VIEW, {"option_layers": [[1], [2]], "at_least": 0.0})


@covers("lowest_long_sentence_model")
def test_the_lowest_long_sentence_model_follows_its_option_wherever_it_is_listed():
    models = ["bahdanau_en-fr", "no-attention_en-fr", TRANSLATOR]
    first = _take("lowest_long_sentence_model", None, {}, {"models": models})
    lowest = models[int(first.shown) - 1]
    again = _take("lowest_long_sentence_model", None, {}, {"models": models[::-1]})
    assert models[::-1][int(again.shown) - 1] == lowest and "%" in dict(first.measured.values)["value"]


@covers("position_share", "row_peak", "linking_weight")
def test_the_claims_on_attention_read_the_stops_weights(translator, cross):
    output, source, weights = cross
    peaks = _take("row_peak", translator, VIEW, {"kind": "cross", "layer": 2, "head": 1})
    assert math.isclose(peaks, weights[1, 0].max(-1).mean(), abs_tol=2e-3)  # the pages' float16 maps
    best = _take("row_peak", translator, VIEW, {"kind": "cross", "layer": 2, "head": "max"})
    assert best == max(_take("row_peak", translator, VIEW, {"kind": "cross", "layer": 2, "head": h})
                       for h in range(1, weights.shape[1] + 1))
    same = _take("position_share", translator, VIEW, {"kind": "encoder_self", "layer": 1, "head": 1, "offset": 0})
    encoder = greedy_decode(translator.network, SENTENCE).attention["encoder_self"].astype(float)
    assert math.isclose(same, np.mean(np.diagonal(encoder[0, 0])), abs_tol=2e-3)
    linking = _take("linking_weight", translator, VIEW,
                    {"layer": 1, "head": 1, "target": output[0], "source": source[0]})
    assert math.isclose(linking, weights[0, 0, 0, 0], abs_tol=2e-3)


@covers("exact_match_at_length")
def test_the_exact_match_at_a_length_is_a_share_and_needs_a_bucket():
    share = _take("exact_match_at_length", None, {}, {"model": TRANSLATOR, "words": 5})
    assert 0 <= share <= 1
    with pytest.raises(ValueError, match="bucket"):
        _take("exact_match_at_length", None, {}, {"model": TRANSLATOR, "words": 10_000})


@covers("softmax_weight")
def test_the_softmax_weight_scales_by_the_stops_factor():
    args = {"scores": [0.3, 0.4], "index": 2, "factor_param": "v1x"}
    found = _take("softmax_weight", None, {"v1x": 10}, args)
    assert math.isclose(found.number, 1 / (1 + math.exp(-1)), rel_tol=1e-12) and found.shown == "0.731"
    assert not found.by_model  # worked out from the question: 'The answer', not 'The model's answer'
    plain = _take("softmax_weight", None, {}, {"scores": [0.3, 0.4], "index": 2})
    assert math.isclose(plain.number, 1 / (1 + math.exp(-0.1)), rel_tol=1e-12)


@covers("causal_visible_keys")
def test_a_query_sees_the_keys_the_drawn_mask_allows():
    causal = _take("causal_visible_keys", None, {"tokens": 5, "mask": "causal"}, {"query": 4})
    assert causal.number == 4 and causal.shown == "4"
    assert _take("causal_visible_keys", None, {"tokens": 5, "mask": "none"}, {"query": 4}).number == 5
    assert _take("causal_visible_keys", None, {"tokens": 5, "mask": "causal"}, {"query": 4},
                 Asked(misconceptions=("5",))).separation == 1


@covers("zeroed_fraction", "pooled_count")
def test_per_step_batch_statistics_over_one_sequence_zero_every_output():
    view = {"batch": 1, "len": 6, "features": 6, "norm": "batch_per_step", "norm_seed": 0}
    assert _take("zeroed_fraction", None, view) == 1.0 and _take("pooled_count", None, view) == 1
    assert _take("zeroed_fraction", None, view, {"norm": "layer"}) == 0.0  # args.norm before the stop's
    assert _take("pooled_count", None, view, {"norm": "layer"}) == 6  # a layer norm pools a token's features


@covers("rope_distance_spread")
def test_rope_scores_depend_on_the_distance_only():
    spread = _take("rope_distance_spread", None, {"pe_len": 64, "pe_d": 64, "pe_k": 5})
    assert 0 <= spread < 1e-3  # float32 rounding of scores of size ~d_k
    with pytest.raises(ValueError, match="distance"):  # the distance is the stop's pe_k, within its pe_len
        _take("rope_distance_spread", None, {"pe_len": 8, "pe_d": 64, "pe_k": 8})


# --- SmolLM2 ------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def llm():
    from model.families import open_model
    from model.gguf_weights import SMOLLM2_NAME

    return open_model(SMOLLM2_NAME)


PROMPT = {"llm_prompt": "The Transformer is a neural network that", "llm_chat": False}


@pytest.mark.slow
@covers("llm_next_token", "kv_cache_key_vectors", "query_heads_per_kv_head")
def test_the_llm_page_measures_read_its_prompt(llm):
    from model.generation import generate

    ids = llm.encode(PROMPT["llm_prompt"])
    greedy = llm.token_texts([generate(llm.network.model, ids, 1).new_ids[0]])[0]
    options = [" zebra", greedy, " quietly"]
    found = _take("llm_next_token", llm, PROMPT, {"option_tokens": options})
    assert found.shown == "2" and found.separation > 0
    with pytest.raises(MeasureError):
        _take("llm_next_token", llm, PROMPT, {"option_tokens": [" zebra", " quietly"]})
    cfg = llm.config
    assert _take("query_heads_per_kv_head", llm, {}).number == cfg.num_heads / cfg.num_kv_heads
    cached = _take("kv_cache_key_vectors", llm, PROMPT, {"step": 20, "cached": True}).number
    full = _take("kv_cache_key_vectors", llm, PROMPT, {"step": 20, "cached": False}).number
    assert cached == cfg.num_layers * cfg.num_kv_heads and full == (len(ids) + 19) * cached
    chat = _take("kv_cache_key_vectors", llm, {**PROMPT, "llm_chat": True}, {"step": 20, "cached": False}).number
    assert chat > full  # the chat template wraps the prompt in more tokens


@pytest.mark.slow
@covers("sink_share", "window_gain")
def test_the_sink_measures_read_the_stops_text(llm):
    from model.explain.sinks import sink_analysis, window_losses

    ids = llm.encode(SINK_TEXT)
    share = sink_analysis(llm.network.model, ids).share
    view = {"sink_text": SINK_TEXT, "window": 4}
    question = _take("sink_share", llm, view, {"from_layer": 4})
    claim = figure(MEASURES["sink_share"], llm, StopView.of(view), {"from_layer": 4})
    assert math.isclose(claim, share[3:].mean(), rel_tol=1e-6) and question.number == claim  # one measure, two roles
    assert question.measured == question.shown == f"{claim:.2f}"
    with pytest.raises(ValueError, match="from_layer"):
        _take("sink_share", llm, view, {"from_layer": share.shape[0] + 1})
    losses = window_losses(llm.network.model, ids, 4)
    assert math.isclose(_take("window_gain", llm, view), losses.window_only - losses.window_with_sink, rel_tol=1e-6)


@pytest.mark.slow
@covers("induction_layer", "induction_layer_band", "induction_score", "copy_probability")
def test_the_induction_measures_agree_on_the_strongest_head(llm):
    from model.explain.induction import induction_analysis

    view = {"ind_len": 20, "ind_seed": 0}
    scores = induction_analysis(llm.network.model, llm.config.vocab_size, 20, 0).scores
    layer = _take("induction_layer", llm, view)
    assert layer.number == np.unravel_index(scores.argmax(), scores.shape)[0] + 1 and layer.measured == layer.shown
    bands = [[1, int(layer.number)], [int(layer.number) + 1, 10_000]]
    assert _take("induction_layer_band", llm, view, {"bands": bands}).shown == "1"
    assert math.isclose(_take("induction_score", llm, view), scores.max(), rel_tol=1e-6)
    assert _take("copy_probability", llm, {}, {"token": " mat"}) > 0  # the page's copy prompt ends "... on the"
    assert _take("copy_probability", llm, {}, {"token": " zebra"}) == 0.0


@covers("finder_head")
def test_the_finder_measure_is_the_finders_first_head_and_accepts_its_near_ties():
    """MiniLM on the Winograd sentence: "it" → "animal" in L4 H2 (0.68) and L6 H12 (0.67), a near-tie both accepted
    within the stop's tolerance; the next head is far below."""
    from model.bert import MINILM_NAME
    from model.explain.head_finder import find_heads
    from model.families import open_model

    lab, sentence = open_model(MINILM_NAME), "The animal didn't cross the street because it was too tired."
    view = {"model": MINILM_NAME, "sentence": sentence, "find_q": "it", "find_k": "animal"}
    ranking = find_heads(lab, lab.analyse(sentence), "it", "animal")
    first, second, third = ranking.by_weight[:3]
    found = _take("finder_head", lab, view, None, Asked(tolerance=0.02))
    assert found.shown == f"L{first[0] + 1} H{first[1] + 1}"
    assert {f"L{layer + 1} H{head + 1}" for layer, head in (first, second)} <= found.accepted
    assert f"L{third[0] + 1} H{third[1] + 1}" not in found.accepted
    with pytest.raises(MeasureError):  # a token the sentence lacks
        _take("finder_head", lab, {**view, "find_k": "zebra"})
    with pytest.raises(MeasureError):  # no tokens named
        _take("finder_head", lab, {**view, "find_q": ""})
@pytest.mark.slow
@covers("lens_commitment_band", "lens_top_probability", "lens_rank_at_layer", "patching_position",
        "patching_recovered", "patching_head_band", "sink_heads_logit_share", "sink_heads_attention", "largest_logit_part")
def test_the_answer_lessons_measures_read_what_the_model_functions_compute(llm):
    """The answer lesson's measures (classroom/measures/llm_answer.py) on a 5-token pair, against the model
    functions the page draws (cheap: 150 residual and 270 head runs of 5 tokens)."""
    from model.explain.attribution import direct_logit_attribution
    from model.explain.logit_lens import logit_lens
    from model.explain.patching import head_patching, residual_patching

    text, corrupt = "The capital of France is", "The capital of Italy is"
    lens = logit_lens(llm, text)
    top, commitment = int(lens.top_ids[-1, -1, 0]), int(lens.commitment[-1])
    view = {"lens_text": text}
    band = _take("lens_commitment_band", llm, view, {"bands": [[1, commitment], [commitment + 1, 10_000]]})
    assert band.shown == "1" and band.separation == 1.0 and dict(band.measured.values)["layer"] == str(commitment)
    assert math.isclose(_take("lens_top_probability", llm, view), float(lens.top_probs[-1, -1, 0]), rel_tol=1e-6)
    ranks = logit_lens(llm, text, token_id=top).token_ranks  # (L+1, T)
    assert _take("lens_rank_at_layer", llm, view, {"layer": lens.layers}) == 1.0  # the last row's top is itself
    assert _take("lens_rank_at_layer", llm, view, {"layer": 12}) == float(ranks[12, -1])
    with pytest.raises(MeasureError):
        _take("lens_rank_at_layer", llm, view, {"layer": lens.layers + 1})

    view = {"clean": text, "corrupt": corrupt, "answer": " Paris", "difference": False, "wrong": " Rome"}
    swept = residual_patching(llm, text, corrupt, " Paris")
    early = swept.patched_probs[:5]  # (5, T): layers 1 … 5
    position = _take("patching_position", llm, view, {"option_positions": [1, 4], "from_layer": 1, "to_layer": 5})
    means = [float(early[:, 0].mean()), float(early[:, 3].mean())]
    assert position.shown == str(1 + int(np.argmax(means))) == "2"  # " France": the only token that differs
    assert math.isclose(position.separation, abs(means[1] - means[0]), rel_tol=1e-6)
    assert math.isclose(_take("patching_recovered", llm, view), swept.clean_prob - swept.corrupt_prob, rel_tol=1e-6)
    heads = head_patching(llm, text, corrupt, " Paris").patched_probs  # (L, H)
    layer, head = np.unravel_index(heads.argmax(), heads.shape)
    band = _take("patching_head_band", llm, view, {"bands": [[1, int(layer) + 1], [int(layer) + 2, 10_000]]})
    assert band.shown == "1" and dict(band.measured.values)["head"] == f"L{layer + 1} H{head + 1}"
    outside = heads[int(layer) + 1:].max() if layer + 1 < heads.shape[0] else None
    assert outside is None or math.isclose(band.separation, float(heads.max() - outside), rel_tol=1e-5)

    parts = direct_logit_attribution(llm, text)
    sinks = np.argsort(-parts.attention_to_first.ravel())[:10]
    share = np.abs(parts.heads.ravel()[sinks]).max() / np.abs(parts.heads).max()
    assert math.isclose(_take("sink_heads_logit_share", llm, view, {"heads": 10}), float(share), rel_tol=1e-6)
    assert math.isclose(_take("sink_heads_attention", llm, view, {"heads": 10}),
                        float(parts.attention_to_first.ravel()[sinks].mean()), rel_tol=1e-6)
    largest = [float(parts.heads.max()), float(parts.mlps.max()), parts.embedding]
    assert _take("largest_logit_part", llm, view).shown == str(1 + int(np.argmax(largest)))


@pytest.mark.slow
@covers("next_token_probability", "next_token_rank", "next_token_probability_band", "copy_loss_rise", "copy_loss",
        "off_heads_induction_rank", "flow_layer_band")
def test_the_choices_lessons_measures_read_the_sampler_the_switched_heads_and_the_flow(llm):
    """The choices lesson's measures (classroom/measures/choices.py) against the model functions its pages draw: the
    sampler's distribution (what choose_next draws from), the copy losses of the heads-off section, the flow's edges."""
    import torch

    from model.explain.flow import information_flow
    from model.generation import sampling_probabilities
    from model.switch_off import copy_losses

    ids = llm.encode(PROMPT["llm_prompt"])
    logits = llm.network.model(torch.tensor([ids]), need_weights=False, last_logits_only=True).logits[0, -1].float()
    own = torch.softmax(logits, -1)
    top = own.topk(4).indices.tolist()
    first, fourth = llm.token_texts([top[0]])[0], llm.token_texts([top[3]])[0]
    view = {**PROMPT, "llm_choice": "sampled", "llm_temp": 0.4, "llm_top_k": 3}
    assert math.isclose(_take("next_token_probability", llm, view, {"token": first}).number, float(own[top[0]]),
                        rel_tol=1e-5)
    sampled = _take("next_token_probability", llm, view, {"token": first, "sampled": True})
    drawn = sampling_probabilities(logits, 0.4, 3)
    assert math.isclose(sampled.number, float(drawn[top[0]]), rel_tol=1e-5) and sampled.measured == sampled.shown
    assert _take("next_token_probability", llm, view, {"token": fourth, "sampled": True}).number == 0.0  # past top-3
    assert _take("next_token_rank", llm, view, {"token": fourth}) == 4.0
    band = _take("next_token_probability_band", llm, view, {"token": first, "bands": [[0, 0.5], [0.5, 1]],
                                                             "sampled": True})
    assert band.shown == "2" and math.isclose(band.separation, float(drawn[top[0]]) - 0.5, rel_tol=1e-5)
    with pytest.raises(MeasureError):  # a greedy stop samples nothing
        _take("next_token_probability", llm, {**view, "llm_choice": "greedy"}, {"token": first, "sampled": True})
    with pytest.raises(MeasureError):  # two tokens
        _take("next_token_probability", llm, view, {"token": " neural network"})

    heads = ((18, 6), (17, 3))  # 0-based: L19 H7 and L18 H4, the two strongest induction heads
    copy = copy_losses(llm, llm.config.vocab_size, heads)
    rise = _take("copy_loss_rise", llm, {"off_heads": heads})
    assert math.isclose(rise.number, copy.second_half(copy.switched) - copy.second_half(copy.intact), rel_tol=1e-5)
    assert math.isclose(_take("copy_loss", llm, {"off_heads": heads}, {"half": "first"}), copy.first_half(copy.intact),
                        rel_tol=1e-5)
    assert _take("off_heads_induction_rank", llm, {"off_heads": heads}) == 2.0
    with pytest.raises(MeasureError):
        _take("copy_loss_rise", llm, {"off_heads": ()})

    text = "The capital of France is"
    shares = information_flow(llm, text).edges[:, -1, 3]  # " France" into the last position, per layer
    layer = int(np.argmax(shares)) + 1
    found = _take("flow_layer_band", llm, {"flow_text": text}, {"source": " France",
                                                                "bands": [[1, layer], [layer + 1, 10_000]]})
    assert found.shown == "1" and dict(found.measured.values)["layer"] == str(layer)
    with pytest.raises(MeasureError):
        _take("flow_layer_band", llm, {"flow_text": text}, {"source": " Rome", "bands": [[1, 30]]})


# --- cell questions (issue 55) -------------------------------------------------------------------------------------

def test_a_cell_maps_right_cells_are_its_top_cells_of_the_row_or_the_map():
    from classroom.measures import CellMap

    weights = np.array([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3], [np.nan, 0.05, 0.95]])  # a masked cell is never right
    cells = CellMap(weights, ("je", "suis", "là"), ("i", "am", "here"))
    best = cells.expected(Asked())
    assert best.shown == "3,3" and best.accepted == {"3,3"} and best.separation == pytest.approx(0.95 - 0.6)
    assert dict(best.measured.values) == {"value": "0.95"}
    two = cells.expected(Asked(top=2))
    assert two.accepted == {"3,3", "1,2"} and two.separation == pytest.approx(0.1)
    row = cells.expected(Asked(row="suis"))  # the row's keys only: its argmax, and the store takes its cells only
    assert row.shown == "2,1" and row.separation == pytest.approx(0.2) and row.cells.row == 1
    assert row.cells.answers() == {"2,1", "2,2", "2,3"} and len(cells.answers()) == 9
    assert cells.expected(Asked(row=1)).shown == "1,2"  # a row by its 1-based position
    assert row.cells.label("2,1") == "suis → i" and cells.label("4,1") is None and cells.label("x") is None
    fixed = cells.expected(Asked(fixed="2,3"))
    assert fixed.accepted == {"2,3"} and fixed.is_right("2,3") and not fixed.is_right("3,3")
    with pytest.raises(MeasureError):  # a fixed cell off the map
        cells.expected(Asked(fixed="9,1"))
    for row in ("zebra", 4):  # a row the map lacks: said at the stop
        with pytest.raises(MeasureError):
            cells.expected(Asked(row=row))


@covers("attention_cell", "decoding_cross_cell")
def test_the_cell_maps_of_the_attention_and_decoding_pages_are_the_maps_they_draw(translator, cross):
    output, source, weights = cross
    view = {**VIEW, "kind": "cross", "layer": 1, "head": 0}  # 0-based here: layer 2, head 1 on screen
    found = _take("attention_cell", translator, view, asked=Asked(row="rouge"))
    query = found.cells.rows.index("rouge")
    assert found.shown == f"{query + 1},{int(np.argmax(weights[1, 0, query])) + 1}"
    assert list(found.cells.columns) == source and found.cells.rows[: len(output)] == tuple(output)
    mean = _take("decoding_cross_cell", translator, {**VIEW, "dec_layer": 1, "dec_head": "all"}, asked=Asked(row=6))
    assert mean.shown == f"6,{int(np.argmax(weights[1, :, 5].mean(0))) + 1}"
    one = _take("decoding_cross_cell", translator, {**VIEW, "dec_layer": 0, "dec_head": 2}, asked=Asked(row=6))
    assert one.shown == f"6,{int(np.argmax(weights[0, 2, 5])) + 1}"
    with pytest.raises(MeasureError):  # a head the model lacks
        _take("attention_cell", translator, {**view, "head": 99})


@pytest.mark.slow
@covers("induction_copy_cell")
def test_the_induction_cell_is_the_top_heads_map_on_the_copy_prompt(llm):
    from model.explain.induction import COPY_PROMPT, induction_analysis, top_heads

    view = {"ind_len": 20, "ind_seed": 0}
    layer, head, _ = top_heads(induction_analysis(llm.network.model, llm.config.vocab_size, 20, 0).scores, 1)[0]
    ids = llm.encode(COPY_PROMPT)
    row = llm.network.run(ids).weights[layer, 0, head, -1].float().numpy()
    found = _take("induction_copy_cell", llm, view, asked=Asked(row=len(ids)))
    assert found.shown == f"{len(ids)},{int(np.argmax(row)) + 1}" and found.cells.rows == tuple(llm.token_texts(ids))


def test_every_measure_is_taken_on_a_shipped_model_above():
    assert COVERED == set(MEASURES)
