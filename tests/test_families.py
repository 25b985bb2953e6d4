"""model/adapters/: every family answers the same questions, and its answers match what it computes."""
import numpy as np
import pytest
import torch

from model.bert import MINILM_NAME
from model.checkpoint import CheckpointError, load_checkpoint
from model.decode import greedy_decode
from model.adapters import (ADAPTERS, FAMILY_NAMES, EmbedsWords, Generates, HasWordVocabulary, ReadsQueriesKeys,
                            ReadsResidualStream, ScoresHeads, family)
from model import capabilities
from model.capabilities import (ABLATION, EMBEDDING, GENERATION, IMPORTANCE, NORMS, QUERIES_KEYS, RESIDUAL_STREAM,
                                STEPS, TRANSLATION, VOCABULARY)
from model.families import CHECKPOINT_DIR, LabModel, adapt, model_family, open_model, shipped_model_names
from model.transformer import HeadMasks

SENTENCES = {"en-fr": "the small cat eats the red apple", "reverse": "3 1 4 15 9",
             "english": "The animal didn't cross the street because it was too tired."}
FAMILIES = {"transformer_en-fr": "transformer", "transformer_reverse": "transformer", "bahdanau_en-fr": "bahdanau",
            "no-attention_en-fr": "no-attention", "decoder-only_en-fr": "decoder-only", MINILM_NAME: "bert"}


@pytest.fixture(scope="module", params=list(FAMILIES))
def lab(request) -> LabModel:
    return open_model(request.param)


def test_every_shipped_model_and_the_encoder_open_by_id_with_their_family(lab):
    assert isinstance(lab, LabModel) and lab.family == FAMILIES[lab.model_id]
    assert set(FAMILIES) - {MINILM_NAME} == set(shipped_model_names())
    assert model_family(lab.model_id) == lab.family  # known from the JSON alone, before the weights are loaded


def test_the_layout_known_before_analysis_is_the_analysis_own(lab):
    """Links and pickers offer the kinds, layers and heads of `layout`; an analysis must have exactly them."""
    analysed = lab.analyse(SENTENCES[lab.task])
    shapes = {kind: maps.weights.shape[:2] for kind, maps in analysed.maps.items()}
    assert lab.layout == {kind: shape for kind, shape in shapes.items() if kind in lab.layout}
    # beyond the heads a page can pick: only the GRU's one additive alignment, a map of (1, 1)
    headless = {kind: shape for kind, shape in shapes.items() if kind not in lab.layout}
    assert headless == ({"alignment": (1, 1)} if lab.family == "bahdanau" else {})
    assert analysed.capabilities == lab.capabilities
    for maps in analysed.maps.values():
        assert np.allclose(maps.weights.sum(-1), 1, atol=1e-5)


def test_a_translator_analyses_as_greedy_decoding_does_with_the_same_heads_off():
    lab = open_model("transformer_en-fr")
    sentence = SENTENCES["en-fr"]
    off = (("cross", 1, 0), ("cross", 1, 1), ("cross", 1, 2), ("cross", 1, 3), ("cross", 0, 0))
    masks = {kind: torch.ones(2, 4) for kind in ("encoder_self", "decoder_self", "cross")}
    for kind, layer, head in off:
        masks[kind][layer, head] = 0.0
    reference = greedy_decode(load_checkpoint(CHECKPOINT_DIR / "transformer_en-fr"), sentence,
                              head_masks=HeadMasks(**masks))
    ablated = lab.analyse(sentence, off)
    assert ablated.output_tokens == reference.output_tokens
    np.testing.assert_allclose(ablated.maps["cross"].weights, reference.attention["cross"], atol=1e-6)
    assert lab.analyse(sentence).output_tokens != ablated.output_tokens  # five cross heads off change it


def test_capabilities_say_what_each_family_can_do(lab):
    assert lab.can(TRANSLATION) == (lab.family != "bert")
    # the decoding page follows cross-attention: a decoder-only translator reads its English in one causal map
    assert lab.can(STEPS) == (lab.family not in ("bert", "decoder-only"))
    assert lab.can(EMBEDDING) == (lab.family == "bert")
    assert lab.can(ABLATION) == lab.can(NORMS) == bool(lab.layout)
    if not lab.can(ABLATION):
        with pytest.raises(ValueError):
            lab.analyse(SENTENCES[lab.task], (("cross", 0, 0),))


def test_explain_gives_norms_and_rollout_shaped_like_the_maps(lab):
    analysed = lab.analyse(SENTENCES[lab.task])
    arrays = lab.explain(analysed)
    assert set(arrays) >= {f"value_norms_{kind}" for kind in lab.layout} if lab.can(NORMS) else arrays == {}
    for kind in lab.layout:
        maps = analysed.maps[kind]
        assert arrays[f"value_norms_{kind}"].shape == maps.weights.shape
        if kind != "cross":
            layers, _, tokens, _ = maps.weights.shape
            assert arrays[f"rollout_{kind}"].shape == (layers, tokens, tokens)


def test_an_already_loaded_network_gets_the_same_adapter_and_an_unknown_id_names_the_choices():
    loaded = load_checkpoint(CHECKPOINT_DIR / "bahdanau_en-fr")
    lab = adapt("my-bahdanau", loaded)
    assert lab.family == "bahdanau" and lab.network is loaded and adapt("again", lab) is lab
    with pytest.raises(CheckpointError, match="transformer_en-fr"):
        open_model("no-such-model")
    with pytest.raises(TypeError):
        adapt("x", object())


def test_each_protocol_is_there_exactly_where_its_capability_is(lab):
    """A view that checks a capability may call the protocol that goes with it, and only then."""
    assert lab.capabilities <= capabilities.ALL  # every capability is one of model/capabilities.py's
    assert isinstance(lab, ScoresHeads) == lab.can(IMPORTANCE)
    assert isinstance(lab, Generates) == lab.can(GENERATION)
    assert isinstance(lab, ReadsResidualStream) == lab.can(RESIDUAL_STREAM)
    assert isinstance(lab, HasWordVocabulary) == lab.can(VOCABULARY)
    assert isinstance(lab, EmbedsWords) == lab.can(EMBEDDING)
    assert isinstance(lab, ReadsQueriesKeys) == lab.can(QUERIES_KEYS)


def test_a_closed_vocabulary_is_the_networks_own(lab):
    """The typed vocabulary part says what the network's vocabularies say: its words, unknown id and input length."""
    if not lab.can(VOCABULARY):
        pytest.skip(f"{lab.model_id} reads subword tokens, not a closed word list")
    vocabulary, network = lab.vocabulary, lab.network
    assert vocabulary.known_words == [w for w in network.src_vocab.itos if not w.startswith("<")]
    assert vocabulary.target is network.tgt_vocab and vocabulary.task == network.task
    assert vocabulary.source.itos[vocabulary.unknown_id] == "<unk>"
    assert all(vocabulary.knows(w) for w in vocabulary.known_words[:20]) and not vocabulary.knows("zzzz")
    # the decode reads at most this many words (plus <eos>): a longer sentence is cut there
    assert greedy_decode(network, " ".join([vocabulary.known_words[0]] * 400)).source.truncated_from
    assert len(greedy_decode(network, " ".join([vocabulary.known_words[0]] * 400)).source.tokens) == \
        vocabulary.max_words + 1


def test_every_model_freezes_and_counts_its_weights(lab):
    """Shared read-only by every session: no weight keeps a gradient after freeze(); the analysis queue sizes its
    work by the count."""
    module = lab.weights()
    assert lab.parameter_count == sum(p.numel() for p in module.parameters()) > 0
    before = [p.requires_grad for p in module.parameters()]
    try:
        lab.freeze()
        assert not any(p.requires_grad for p in module.parameters())
    finally:  # the module-scoped model may be shared with the other tests here: leave it as it was
        for parameter, required in zip(module.parameters(), before):
            parameter.requires_grad_(required)


def test_every_family_has_one_registered_adapter_and_a_second_registration_is_refused():
    assert set(FAMILY_NAMES) == set(ADAPTERS) >= set(FAMILIES.values()) | {"transformers", "llama"}
    with pytest.raises(ValueError, match="already has an adapter"):
        family("bert")(type("Another", (), {}))


def test_the_head_masks_are_built_from_the_layout_and_refuse_a_kind_it_lacks(lab):
    if not lab.layout:
        with pytest.raises(ValueError, match="no heads at all"):
            lab.head_masks((("cross", 0, 0),))
        return
    kind = next(iter(lab.layout))
    masks = lab.head_masks(((kind, 0, 1),))
    assert {k: tuple(m.shape) for k, m in masks.items()} == lab.layout and lab.head_masks(()) is None
    assert masks[kind][0, 1] == 0 and masks[kind].sum() == masks[kind].numel() - 1
    with pytest.raises(ValueError, match="no alignment heads"):
        lab.head_masks((("alignment", 0, 0),))
