"""Hostile input: every free-text input of every page gets ../shared/bad_inputs.txt.

Free-text inputs (the inventory test below fails when a page gains one that is not listed here):
  - the sidebar sentence (st.text_input "sentence", every page that analyses it);
  - the train page's checkpoint upload (st.file_uploader "upload_files": file names and file contents);
  - the attention_steps page's Q, K, V tables (st.data_editor: any cell text the front end sends);
  - the sidebar's vocabulary search (st.text_input "vocab_search");
  - the LLM heads page's sink text (st.text_area "llm_sink_text");
  - the LLM page's prompt (st.text_area "llm_prompt": tests/test_llm_page.py).
Number inputs (seeds) are bounded by their min/max, so Streamlit never hands a page anything else.
Also: the deployment settings (.streamlit/config.toml) and the dependency floor (requirements.txt).
"""
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from model.checkpoint import CheckpointError, load_checkpoint
from model.decode import greedy_decode
from serving.internals import data_editor_cell_parser
from tests.bad_inputs import load_bad_inputs
from tests.app_links import assert_healthy, open_page, shipped_checkpoint_upload
from ui.train import view as train_view
from ui.models import CHECKPOINT_DIR, shipped_model_names
from ui.text import check_sentence, escape_markdown

ROOT = Path(__file__).resolve().parents[1]
BAD_INPUTS = load_bad_inputs()
FREE_TEXT_INPUTS = {  # (file, widget) -> what tests it here
    ("ui/sidebar.py", "text_input"): "test_every_bad_sentence_gives_finite_attention_for_every_shipped_model",
    ("ui/attention/encoder.py", "text_input"):
        "tests/test_bert_pages.py::test_every_bad_second_sentence_gives_a_similarity_or_a_prompt",
    ("ui/train/view.py", "file_uploader"): "test_bad_file_names_and_contents_give_clear_errors",
    ("app_pages/attention_steps.py", "data_editor"): "test_bad_cells_in_the_attention_steps_tables",
    ("ui/lesson_bar/picker.py", "text_input"): "tests/test_class_pages.py::test_bad_class_codes_and_passwords",
    ("ui/live_class/teacher.py", "text_input"): "tests/test_class_pages.py::test_bad_class_codes_and_passwords",
    ("ui/vocabulary.py", "text_input"): "test_bad_vocabulary_searches_find_nothing_and_show_no_markup",
    ("ui/llm_heads/view.py", "text_area"): "tests/test_page_llm_heads.py::test_every_bad_text_gives_sinks_or_a_message",
    ("ui/llm/generation.py", "text_area"):
        "tests/test_llm_page.py::test_every_hostile_prompt_gives_a_generation_step_or_a_message",
    ("ui/attention/finder.py", "text_input"):
        "tests/test_page_head_finder.py::test_every_bad_second_text_gives_the_two_texts_or_a_message",
    ("ui/llm_heads/finder.py", "text_input"):
        "tests/test_page_head_finder.py::test_every_bad_finder_text_on_the_llm_heads_page_gives_a_ranking_or_a_message",
    ("ui/llm/answer.py", "text_input"): "tests/test_page_llm_answer.py::test_every_bad_text_gives_a_map_or_a_message",
    ("ui/llm/flow.py", "text_input"): "tests/test_page_llm_flow.py::test_every_bad_text_gives_a_graph_or_a_message",
    ("ui/lessons/questions.py", "text_input"):  # a text question's answer
        "tests/test_class_text_pages.py::test_every_bad_input_in_the_text_field_is_stored_or_refused_with_a_message",
    ("ui/lesson_builder/add_stop.py", "text_input"):  # a stop's title, text, prompt (and its measure's arguments)
        "tests/test_lesson_builder_pages.py::"
        "test_every_bad_input_in_the_builders_fields_is_added_as_text_or_refused_with_a_message",
    ("ui/lesson_builder/builder.py", "text_input"):  # the lesson's title, the sign-in password
        "tests/test_lesson_builder_pages.py::"
        "test_every_bad_input_in_the_builders_fields_is_added_as_text_or_refused_with_a_message",
}
FREE_TEXT_WIDGET = re.compile(r"\.(text_input|text_area|chat_input|data_editor|file_uploader)\(")
NUMBER_INPUT = re.compile(r"\.number_input\(([^()]|\([^()]*\))*\)", re.S)
WEIGHTS = ("encoder_self", "decoder_self", "cross", "alignment")  # probability rows; *_scores may hold −inf (masks)
MARKDOWN_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:=&\"'")


def app_sources() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]


def test_every_free_text_input_is_listed_and_number_inputs_are_bounded():
    found = set()
    for path in app_sources():
        source = path.read_text(encoding="utf-8")
        found |= {(str(path.relative_to(ROOT)), m.group(1)) for m in FREE_TEXT_WIDGET.finditer(source)}
        for call in NUMBER_INPUT.finditer(source):  # number_input(label, min, max, ...): positional bounds
            arguments = call.group(0)
            assert re.search(r"\(\s*[^,]+,\s*-?[\d_.]+,\s*-?[\d_.]+", arguments) or \
                ("min_value=" in arguments and "max_value=" in arguments), f"unbounded number input in {path}"
    assert found == set(FREE_TEXT_INPUTS), "a free-text input was added or removed: give it a hostile-input test"


def test_the_bad_inputs_file_is_read():
    assert len(BAD_INPUTS) >= 20
    assert "<script>alert(1)</script>" in BAD_INPUTS and any("\x00" in text for text in BAD_INPUTS)


# ------------------------------------------------------------------------------------ the sidebar sentence

@pytest.fixture(scope="module")
def shipped():
    return {name: load_checkpoint(CHECKPOINT_DIR / name) for name in shipped_model_names()}


def assert_finite_attention(result, where: str) -> None:
    for name, array in result.attention.items():
        assert not np.isnan(array).any(), f"NaN in {name} ({where})"
        if name in WEIGHTS:
            assert np.isfinite(array).all() and (array >= 0).all() and (array <= 1 + 1e-6).all(), (name, where)
            np.testing.assert_allclose(array.sum(-1), 1.0, atol=1e-4, err_msg=f"{name} rows ({where})")
    assert np.isfinite(result.step_probs).all() and np.isfinite(result.chosen_probs).all(), where


def test_every_bad_sentence_gives_finite_attention_for_every_shipped_model(shipped):
    assert set(shipped) >= {"transformer_en-fr", "bahdanau_en-fr", "no-attention_en-fr", "transformer_reverse"}
    for text in BAD_INPUTS:
        cleaned, notices = check_sentence(text)  # what the pages do before analysing
        if cleaned is None:
            assert notices and not text.strip(" \t\n\r\x00\x07\x1b\u200d"), repr(text)
        for name, loaded in shipped.items():
            for sentence in {cleaned, text} - {None}:  # the page's path, and the raw text straight into the model
                result = greedy_decode(loaded, sentence)
                assert_finite_attention(result, f"{name}, {sentence[:40]!r}")
                if "transformer" in name:
                    assert {"encoder_self", "decoder_self", "cross"} <= set(result.attention)
                elif name.startswith("bahdanau"):
                    assert "alignment" in result.attention


def test_bad_text_is_escaped_before_markdown_sees_it():
    for text in BAD_INPUTS:
        escaped = escape_markdown(text)
        bare = re.sub(r"\\.", "", escaped)  # what is left once every escaped character is taken out
        assert not set(bare) & MARKDOWN_SPECIAL, (text, escaped)
        assert all(ch.isprintable() for ch in escaped), repr(escaped)


# ------------------------------------------------------------------------------------------ the upload

def test_bad_file_names_and_contents_give_clear_errors(monkeypatch):
    monkeypatch.setattr(st, "session_state", {})
    weights, sidecar = shipped_checkpoint_upload()
    for text in BAD_INPUTS:
        stem = text[:200]
        # a hostile name with valid contents loads, under a server-made id that never contains the name
        model_id = train_view.load_upload([(f"{stem}.safetensors", weights), (f"{stem}.json", sidecar)])
        assert re.fullmatch(r"uploaded-[0-9a-f]{8}", model_id)
        content = text.encode("utf-8", "surrogatepass")
        for files in ([(f"{stem}.safetensors", content), (f"{stem}.json", sidecar)],  # hostile weights
                      [(f"{stem}.safetensors", weights), (f"{stem}.json", content)],  # hostile JSON
                      [(stem, content)]):  # a file of neither kind
            with pytest.raises(CheckpointError) as error:
                train_view.load_upload(files)
            assert str(error.value).strip(), (text, files[0][0])


# A name with a NUL byte cannot come from a browser (no file system allows it); Streamlit itself rejects it before
# the script runs (StreamlitAPIException "Filename cannot contain null bytes"), so the page never sees one.
NASTY = [t for t in BAD_INPUTS if re.search(r"[<>*_`{$\\\n]", t) and "\x00" not in t]


@pytest.mark.parametrize("text", NASTY[:6], ids=range(len(NASTY[:6])))
def test_upload_errors_with_hostile_names_are_shown_as_text(text):
    weights, sidecar = shipped_checkpoint_upload()
    at = open_page("train")
    stem = text[:100].replace("/", "_")
    at.file_uploader(key="upload_files").set_value([(f"{stem}.safetensors", text.encode("utf-8", "surrogatepass"),
                                                     "application/octet-stream"),
                                                    (f"{stem}.json", sidecar, "application/json")]).run()
    at.button(key="upload_load").click().run()
    assert_healthy(at)
    shown = " ".join(e.value for e in at.error)
    bare = re.sub(r"\\.", "", shown)  # markdown drops the backslash of an escaped character and shows it as text
    assert shown and not set(bare) & set("<>`*"), shown


# ----------------------------------------------------------------------------- the attention_steps tables

def edited_cells(texts: list[str]) -> list[float | None]:
    """What st.data_editor makes of cell text in a float column (its own parser: float(), or None)."""
    parse = data_editor_cell_parser()  # the widget's own cell parser
    return [parse(text) for text in texts]


CELL_TEXTS = BAD_INPUTS + ["nan", "inf", "-inf", "1e308", "-1e308", "1e200", "1e-320", "-0", "  3.5  ", "0x10"]


def test_bad_cells_in_the_attention_steps_tables(monkeypatch):
    values = edited_cells(CELL_TEXTS)
    assert any(v is None for v in values) and any(v is not None and math.isinf(v) for v in values)
    original = DeltaGenerator.data_editor
    served = []

    def hostile_editor(self, data, *args, **kwargs):
        """The real widget is drawn; its result gets hostile edits in every cell, as the front end could send."""
        original(self, data, *args, **kwargs)
        frame = pd.DataFrame(data).astype(object)
        flat = frame.to_numpy().ravel()
        for i in range(flat.size):  # Q, K and V start at the same value: a huge one meets itself in QKᵀ
            flat[i] = values[(offset[0] + i) % len(values)]
        served.append(1)
        return pd.DataFrame(flat.reshape(frame.shape), index=frame.index, columns=frame.columns)

    import model.foundations.attention_steps

    stages_drawn = []
    real_stages = model.foundations.attention_steps.attention_stages

    def recorded_stages(*args, **kwargs):  # the page imports it at each run: it gets this one
        stages_drawn.append(real_stages(*args, **kwargs))
        return stages_drawn[-1]

    monkeypatch.setattr(DeltaGenerator, "data_editor", hostile_editor)
    monkeypatch.setattr(model.foundations.attention_steps, "attention_stages", recorded_stages)
    offset = [0]
    # one run per special number (and one with the text garbage first), masks in turn
    for run, start in enumerate([0] + list(range(len(BAD_INPUTS), len(CELL_TEXTS)))):
        offset[0], mask = start, ("none", "causal", "padding")[run % 3]
        stages_drawn.clear()
        at = open_page("attention_steps", steps_mask=mask)
        assert served, "the page did not draw its tables"
        if start == 0:
            assert at.warning, "invalid cells should be reported"
        assert stages_drawn, "the page did not compute its stages"
        for stages in stages_drawn:
            where = (CELL_TEXTS[start], mask)
            assert np.isfinite(stages.weights).all() and np.isfinite(stages.output).all(), where
            assert not np.isnan(stages.masked).any() and not np.isnan(stages.qk).any(), where
        for chart in at.get("plotly_chart"):
            spec = chart.proto.spec
            assert "NaN" not in spec and "Infinity" not in spec, mask


def test_attention_stages_stay_finite_for_any_number_typed():
    from model.foundations.attention_steps import INPUT_LIMIT, attention_stages, build_mask

    for value in (1e308, -1e308, 1e200, 1e-320, INPUT_LIMIT * 10, np.inf, -np.inf, np.nan):
        for mask in ("none", "causal", "padding"):
            q = np.full((4, 3), value)
            stages = attention_stages(q, -q, q, build_mask(mask, 4, 4, 1))
            assert np.isfinite(stages.weights).all() and np.isfinite(stages.output).all(), (value, mask)
            np.testing.assert_allclose(stages.weights.sum(-1), 1.0)


# ------------------------------------------------------------------------- deployment and dependencies

def test_config_keeps_xsrf_protection_and_cors_at_their_safe_defaults():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = config.get("server", {})
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True
    assert "corsAllowedOrigins" not in server or not server["corsAllowedOrigins"]


def _floor(requirement: str) -> tuple[int, ...]:
    match = re.search(r"(?:>=|==|~=)\s*([\d.]+)", requirement)
    assert match, f"no lower bound in {requirement!r}"
    return tuple(int(part) for part in match.group(1).split(".") if part.isdigit())


def test_requirements_pin_the_dependency_floor():
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    pinned = {re.split(r"[<>=~!\[ ;]", line, maxsplit=1)[0].lower(): line for line in lines if line}
    assert _floor(pinned["streamlit"]) >= (1, 54)
    assert _floor(pinned["torch"]) >= (2, 6)


def test_bad_vocabulary_searches_find_nothing_and_show_no_markup():
    at = open_page("home")
    for text in BAD_INPUTS:
        at.sidebar.text_input(key="vocab_search").set_value(text).run()
        assert not at.exception, repr(text)
        shown = [m.value for m in at.sidebar.markdown if m.value.startswith("**")]
        # a search either matches known words (lists of plain words) or says that nothing matched
        assert shown or any(c.value == "No word of this model contains that text." for c in at.sidebar.caption), \
            repr(text)
        assert all(re.fullmatch(r"\*\*[^*]+\*\* \(\d+\)  \n[\w, ']+", m) for m in shown), (repr(text), shown)
