"""Each shareable widget is declared once (ui/widget_spec.py, ui/specs/ and the rooms' specs): the widget a page
draws and the link parser read the same bounds, options and default, so a link to the edge of a slider opens on that
edge and one past it is refused with the notice."""
import re

import pytest
from streamlit.testing.v1 import AppTest

from i18n import translate
from tests.app_links import open_from_link
from ui.specs import SPECS
from ui.specs import llm_answer, normalization
from ui.attention import decoding_specs as decoding
from ui.llm import switch_off_specs
from ui.widget_spec import WidgetSpec, sentence_text

# button_group: a segmented control (ui.widget_spec.spec_segmented: the LLM heads page's "rank by" and "colour by")
WIDGET_TYPES = ("slider", "number_input", "select_slider", "selectbox", "radio", "toggle", "button_group")
# What a page draws at the edge only with another value set (the padded count, under the padding mask)
EDGE_EXTRA = {"attention_steps": {"mask": "padding"}}
OPEN_SECTIONS = {"positional": {"pe_open_dials": True}}  # the position slider is in a folded section
# Bounds a page narrows from data a link cannot know: the translation's steps, the highlighted sentence's length, the
# lens prompt's tokens; and the heads switched off, a list of any of the model's heads (its multiselect offers them)
NARROWED_BY_DATA = {decoding.STEP.key, normalization.POSITION.key, llm_answer.LENS_POSITION.key,
                    switch_off_specs.HEADS_OFF.key}
PAGE_HINTS = {translate("en", "llm_answer.press_run")}
PAGES = ["positional", "softmax_scaling", "attention_steps", "normalization", "residual", "decoding", "compare",
         "llm_heads", "llm", "llm_answer"]


def page_specs(page: str) -> list[WidgetSpec]:
    """The page's widgets with bounds or options (not the sentence: any text is one)."""
    return [spec for spec in SPECS.values() if page in spec.pages and (spec.options, spec.low) != (None, None)]


def link_text(spec: WidgetSpec, value) -> str:
    """As ui.share writes it: true/false, layers and heads counted from 1 (with v=2 in the link)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value + 1) if spec.counted and isinstance(value, int) else str(value)


def bad_texts(spec: WidgetSpec, state: dict) -> list[str]:
    """Link values the widget does not offer: words where it takes numbers or names, numbers past each end."""
    texts = ["no-such-choice"]
    if spec.options is None and spec.low is not None:
        low, high = spec.bounds(state)
        texts += [link_text(spec, low - 1), link_text(spec, high + 1)]
        if spec.step > 1:
            texts.append(link_text(spec, low + 1))
    elif spec.options is not None and spec.choices(state) and all(isinstance(o, (int, float))
                                                                  for o in spec.choices(state)):
        texts.append(str(max(spec.choices(state)) * 1000 + 7))
    return texts


def widget(at: AppTest, key: str):
    found = [w for kind in WIDGET_TYPES for w in at.get(kind) if w.key == key]
    assert len(found) == 1, f"{key}: {len(found)} widgets"
    return found[0]


def test_the_registry_holds_every_page_and_each_name_once():
    keys = [spec.key for spec in SPECS.values()]
    assert len(set(keys)) == len(keys)
    # (the teacher's private switch is drawn only for a teacher who holds a class: no edge walk below)
    assert {page for spec in SPECS.values() for page in spec.pages} == {"attention", "teacher", *PAGES}
    names = list(SPECS)
    assert names.index("model") < names.index("layer") < names.index("cmp_head")  # the model before its heads
    assert names.index("pe_len") < names.index("pe_pos") and names.index("batch") < names.index("norm_seq")


@pytest.mark.parametrize("name", [name for name, spec in SPECS.items() if spec.default is not None])
def test_every_default_is_one_the_widget_offers(name):
    spec, state = SPECS[name], {}
    default = spec.initial(state)
    assert spec.allows(default, state)
    text = spec.text(default) if spec.text else str(default).lower() if isinstance(default, bool) else str(default)
    assert spec.parse(text, state) == default


@pytest.mark.parametrize("name", [name for name, spec in SPECS.items()
                                  if spec.convert is not sentence_text])  # any text is a sentence (or a sink text)
def test_every_spec_refuses_a_value_it_does_not_offer(name):
    spec, state = SPECS[name], {}
    for text in bad_texts(spec, state):
        with pytest.raises((ValueError, KeyError, TypeError)):
            # counted specs: the text in session_state's counting, as ui.share hands it over
            spec.parse(str(int(text) - 1) if spec.counted and text.lstrip("-").isdigit() else text, state)


def test_a_value_out_of_bounds_is_brought_back_inside():
    state = {"pe_length": 16}
    assert SPECS["pe_pos"].fitted(40, state) == 15  # a shorter length: the position moves to its end
    assert SPECS["scale"].fitted(0.125, {"scaling_dk": 4}) == 0.5  # d_k 64's 1/√d_k follows d_k: 1/√4
    assert SPECS["dec_head"].fitted(7, {}) == "all"  # a head the model lacks: back to every head


@pytest.mark.slow
@pytest.mark.parametrize("page_name", PAGES)
def test_a_link_to_each_upper_bound_opens_there_and_one_past_it_is_refused(page_name):
    specs = [spec for spec in page_specs(page_name) if spec.key not in NARROWED_BY_DATA]
    at = open_from_link(page_name, **OPEN_SECTIONS.get(page_name, {}))[0]
    state = {key: at.session_state[key] for key in [spec.key for spec in page_specs(page_name)]
             if key in at.session_state}
    edge = {}
    for spec in specs:  # in the specs' order: a bound that depends on a length reads the length's edge
        state[spec.key] = spec.choices(state)[-1]
        edge[spec.url] = link_text(spec, state[spec.key])
    at, _ = open_from_link(page_name, {**edge, **EDGE_EXTRA.get(page_name, {}), "v": "2"},
                           **OPEN_SECTIONS.get(page_name, {}))
    # no notice about the link; a page's own hint (patching waits for its Run button) is not about it
    assert not [i.value for i in at.info if i.value not in PAGE_HINTS]
    for spec in specs:
        drawn = widget(at, spec.key)
        assert drawn.value == spec.choices(at.session_state)[-1], spec.key
        if drawn.type in ("slider", "number_input"):  # its bounds are the parser's
            assert (drawn.min, drawn.max) == spec.bounds(at.session_state), spec.key
        elif drawn.type != "toggle":  # a select slider, selectbox, radio or segmented control: one option per value
            assert len(drawn.options) == len(spec.choices(at.session_state)), spec.key
    past = {spec.url: bad_texts(spec, state)[-1] for spec in specs}
    notice = open_from_link(page_name, {**past, "v": "2"})[1]
    assert notice.startswith(translate("en", "share.bad_link", names="")[:30])
    assert set(re.search(r"\(([^)]*)\)", notice).group(1).split(", ")) == set(past), notice
