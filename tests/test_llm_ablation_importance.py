"""Issue 26 on SmolLM2-135M-Instruct: ablation as the next-token prediction and loss, head importance as the gradient
of the next-token loss over fixed texts (Michel et al. 2019, §4.1), and pattern labels with the first token as the
sink and induction heads (model.explain.next_token, importance, patterns; model.families.LlamaAdapter)."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model.explain.fixed_sets import LANGUAGE_MODEL_TEXTS
from model.explain.importance import language_model_loss, language_model_texts
from model.explain.next_token import kl_divergence
from model.explain.patterns import PATTERNS, label_heads
from model.capabilities import ABLATION, IMPORTANCE, NEXT_TOKEN, PATTERNS as PATTERNS_CAPABILITY
from model.families import curve_counts, open_model

REPEATED = "The cat sat on the mat. The cat sat on the mat. The cat sat on the"
INDUCTION_HEAD = (18, 6)  # L19 H7 on screen: the top induction head of the LLM heads page (score 0.92)
# Picked from the maps (this file's test_the_picked_heads_do_what_their_labels_say reads them on a new text):
PREVIOUS_HEAD = (16, 0)  # L17 H1: each token looks at the one before it
SINK_HEAD = (24, 0)  # L25 H1: nearly every query rests on the first token


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")


def test_the_llm_declares_ablation_importance_and_patterns(lab):
    assert {ABLATION, NEXT_TOKEN, IMPORTANCE, PATTERNS_CAPABILITY} <= lab.capabilities
    assert lab.label_sentences == len(LANGUAGE_MODEL_TEXTS)


def test_the_next_token_prediction_is_the_models_own(lab):
    analysed = lab.analyse(REPEATED)
    ids = lab.encode(REPEATED)
    logits = lab.network.run(ids).logits[0]  # (T, V)
    prediction = analysed.next_token
    expected = torch.log_softmax(logits[-1], -1)
    np.testing.assert_allclose(prediction.log_probs, expected.numpy(), atol=1e-5)
    assert prediction.loss == pytest.approx(float(F.cross_entropy(logits[:-1], torch.tensor(ids[1:]))), abs=1e-5)
    assert prediction.predicted == len(ids) - 1
    assert prediction.top_ids == expected.topk(5).indices.tolist()
    assert prediction.top_tokens[0] == " mat"  # copied from the context
    assert prediction.top_probs == sorted(prediction.top_probs, reverse=True) and prediction.top_probs[0] > 0.2


def test_switching_the_induction_head_off_changes_the_prediction_and_the_loss(lab):
    on = lab.analyse(REPEATED).next_token
    off = lab.analyse(REPEATED, (("decoder_self", *INDUCTION_HEAD),)).next_token
    mat = on.top_ids[0]
    # measured: without L19 H7 the model is *surer* of " mat" (0.25 -> 0.61): other heads copy, and this one also
    # spreads probability over the other animals and objects of the text
    assert abs(float(np.exp(off.log_probs[mat]) - np.exp(on.log_probs[mat]))) > 0.2
    assert off.loss != pytest.approx(on.loss, abs=1e-3)
    assert kl_divergence(on.log_probs, off.log_probs) > 0.1
    assert kl_divergence(on.log_probs, on.log_probs) == pytest.approx(0, abs=1e-9)
    other = lab.analyse(REPEATED, (("decoder_self", 17, 3),)).next_token  # L18 H4, the second induction head
    assert kl_divergence(on.log_probs, other.log_probs) < 0.1 * kl_divergence(on.log_probs, off.log_probs)


def test_the_packed_texts_are_read_as_each_text_alone(lab):
    """One row with a block-diagonal mask (rotary positions: only distances count) = each text on its own."""
    texts = language_model_texts(lab.encode, LANGUAGE_MODEL_TEXTS[:3])
    gate = torch.ones(30, 9)
    gate[18, 6] = gate[3, 1] = 0.0
    total, count = 0.0, 0
    with torch.no_grad():
        for text in LANGUAGE_MODEL_TEXTS[:3]:
            ids = lab.encode(text)
            logits = lab.network.model(torch.tensor([ids]), need_weights=False, head_mask=gate).logits[0]
            total += float(F.cross_entropy(logits[:-1], torch.tensor(ids[1:]), reduction="sum"))
            count += len(ids) - 1
        packed = float(language_model_loss(lab.network.model, texts, gate))
    assert texts.tokens == count and texts.ids.shape == (1, count + 3)
    assert packed == pytest.approx(total / count, abs=1e-4)


@pytest.fixture(scope="module")
def importance(lab):
    return lab.importance()


@pytest.mark.slow
def test_importance_is_the_gradient_of_the_next_token_loss(lab, importance):
    found = importance.heads
    assert found.gradient.shape == (30, 9) and (found.gradient >= 0).all()
    texts = language_model_texts(lab.encode, LANGUAGE_MODEL_TEXTS)
    assert found.texts == len(LANGUAGE_MODEL_TEXTS) and found.tokens == texts.tokens < 400
    model = lab.network.model
    with torch.no_grad():
        assert found.baseline_loss == pytest.approx(float(language_model_loss(model, texts)), abs=1e-4)
        # the derivative by a finite difference on the most important head's gate: the same number
        layer, head = found.order()[-1]
        gate = torch.ones(30, 9)
        gate[layer, head] = 1 - 1e-2
        slope = (found.baseline_loss - float(language_model_loss(model, texts, gate))) / 1e-2
    assert abs(slope) == pytest.approx(found.gradient[layer, head], rel=0.1)
    assert found.gradient[layer, head] > 20 * np.median(found.gradient)


@pytest.mark.slow
def test_the_curve_switches_off_the_least_important_heads(lab, importance):
    found, curve = importance.heads, importance.curve
    assert [row["k"] for row in curve] == curve_counts(270)
    assert curve[0]["loss"] == pytest.approx(found.baseline_loss, abs=1e-4)
    texts = language_model_texts(lab.encode, LANGUAGE_MODEL_TEXTS)
    mask = torch.ones(30, 9)
    for layer, head in found.order()[:curve[1]["k"]]:
        mask[layer, head] = 0.0
    with torch.no_grad():
        assert curve[1]["loss"] == pytest.approx(float(language_model_loss(lab.network.model, texts, mask)), abs=1e-4)
    # the least important tenth costs little; switching off half of the heads costs a lot more
    half = next(row for row in curve if row["k"] >= 135)
    assert curve[1]["loss"] - curve[0]["loss"] < 0.5 < half["loss"] - curve[0]["loss"]


@pytest.fixture(scope="module")
def labels(lab):
    return lab.labels()["decoder_self"]


@pytest.mark.slow
def test_labels_name_induction_previous_token_and_first_token_heads(labels):
    assert labels.labels.shape == (30, 9) and set(labels.labels.ravel()) <= set(PATTERNS)
    assert labels.sink_on == "first" and labels.sink_label == "first"
    assert labels.induction[INDUCTION_HEAD] == pytest.approx(0.92, abs=0.02)
    assert labels.labels[INDUCTION_HEAD] == "induction"
    assert labels.labels[PREVIOUS_HEAD] == "previous" and labels.previous[PREVIOUS_HEAD] > 0.6
    assert labels.labels[SINK_HEAD] == "first" and labels.sink[SINK_HEAD] > 0.9
    assert "sink" not in labels.labels  # the text has no special token: its sink is the first token
    counts = {p: int((labels.labels == p).sum()) for p in ("first", "previous", "induction")}
    assert counts["first"] > 50 and counts["previous"] >= 2 and counts["induction"] >= 2, counts


def test_the_picked_heads_do_what_their_labels_say(lab):
    """On a text outside the fixed set, the maps themselves: where each picked head puts each query's weight."""
    text = "Every morning the baker opens the shop, sells fresh bread to the neighbours and closes at noon."
    weights = lab.analyse(text).maps["decoder_self"].weights  # (30, 9, T, T)
    t = weights.shape[-1]
    previous = weights[PREVIOUS_HEAD][np.arange(1, t), np.arange(t - 1)]  # weight of query i on key i − 1
    assert previous.mean() > 0.5 and (weights[PREVIOUS_HEAD].argmax(-1)[1:] == np.arange(t - 1)).mean() > 0.6
    assert weights[SINK_HEAD][1:, 0].mean() > 0.9


def test_first_token_sinks_and_induction_leave_the_other_labels_alone():
    """Hand-made maps: induction scores win first; sink_on="first" reads key 0 by position, not by its text."""
    t = 5
    sink = np.zeros((1, 2, t, t))
    sink[..., 0] = 1.0  # every query on key 0
    keys = ["a", "b", "a", "c", "d"]  # key 0's text occurs again: only its position counts
    first = label_heads([(sink, keys)], self_attention=True, sink_on="first")
    assert list(first.labels[0]) == ["first", "first"]
    special = label_heads([(sink, keys)], self_attention=True)  # no special token: not a sink by text
    assert "sink" not in special.labels and "first" not in special.labels
    with_induction = label_heads([(sink, keys)], self_attention=True, sink_on="first",
                                 induction=np.array([[0.9, 0.1]]))
    assert list(with_induction.labels[0]) == ["induction", "first"]
