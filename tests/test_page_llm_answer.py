"""AppTest for the page "How an LLM finds its answer" (the logit lens and activation patching on SmolLM2-135M-Instruct):
the defaults draw every section with the model functions' own numbers, in English and Korean; refusals show the tokens;
a link restores every field; a sweep runs once per input; hostile text gives a map or a message.

Tests that are not about the defaults patch a 5-token pair (a sweep of 30 × 5 runs, seconds)."""
import numpy as np
import pytest

from i18n import translate
from model.explain.logit_lens import logit_lens
from model.explain.attribution import direct_logit_attribution
from model.explain.patching import head_patching, residual_patching
from model.families import open_model
from tests.app_links import assert_healthy, chart_specs, open_page, query_param, trace_array
from tests.bad_inputs import load_bad_inputs
from classroom.measures import llm_answer as sweeps
from model.forward_guard import TimeLimitExceeded
from runtime import analysis_worker
from ui.llm.answer import LENS_MAX_TOKENS, PATCH_MAX_TOKENS, RUN_KEY
from viz.llm_answer import cell_text
from ui.specs.llm_answer import (ANSWER, CLEAN, CORRUPT, DEFAULT_ANSWER, DEFAULT_CLEAN, DEFAULT_CORRUPT,
                                 DEFAULT_LENS_TEXT, DEFAULT_WRONG, DIFFERENCE, LENS_POSITION, LENS_ROW, LENS_ROWS,
                                 LENS_TEXT, LENS_TOKEN, WRONG)

SHORT = {"clean": "The capital of France is", "corrupt": "The capital of Italy is", "answer": " Paris",
         "difference": "false"}


@pytest.fixture(autouse=True)
def unhurried_worker(monkeypatch):
    """The analysis worker's time limit lifted: on a shared 2-core test machine the default sweep's 30 × 14 runs may
    pass the seconds a server gives one analysis, and that limit is not what these tests check
    (tests/test_analysis_queue_page.py does)."""
    monkeypatch.setattr(analysis_worker.ANALYSES, "time_limit", 600.0)


@pytest.fixture(scope="module")
def lab():
    return open_model("SmolLM2-135M-Instruct")  # the process's one copy, which the page's load_model shares


def chart(at, title_start: str) -> dict:
    return next(c for c in chart_specs(at) if c["layout"]["title"]["text"].replace("<br>", " ").startswith(title_start))


def metrics(at) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.metric}


def press_run(at):
    """The student presses Run patching: both sweeps of the fields' prompts."""
    at.button(key=RUN_KEY).click().run()
    assert_healthy(at)
    return at


def patched(at) -> bool:
    return any(c["layout"]["title"]["text"].startswith("p(") for c in chart_specs(at))


def test_the_defaults_draw_the_lens_and_the_sweep_with_the_models_own_numbers(lab):
    at = open_page("llm_answer")
    assert at.title[0].value == translate("en", "llm_answer.title")
    assert [h.value for h in at.header] == ["The logit lens", "Activation patching", "Patching one head at a time",
                                            "Direct logit attribution", translate("en", "llm_influence.title"),
                                            "Where the information flows"]
    # the lens: each cell's top token and its probability, as model.explain.logit_lens computes them
    lens = logit_lens(lab, DEFAULT_LENS_TEXT)
    lens_map = chart(at, "Logit lens: top next token")
    heatmap, marks, targets = lens_map["data"]  # the map, its commitment frames, a click target a cell
    np.testing.assert_allclose(trace_array(heatmap["z"]), lens.top_probs[..., 0], atol=1e-6)
    assert lens.layers + 1 == LENS_ROWS and len(trace_array(targets["x"])) == LENS_ROWS * len(lens.tokens)
    tops = np.array(lab.token_texts(lens.top_ids[..., 0].ravel().tolist()), dtype=object).reshape(
        lens.top_ids.shape[:2])
    assert heatmap["text"] == [[cell_text(token) for token in row] for row in tops]
    assert trace_array(marks["y"]).tolist() == lens.commitment.tolist()  # each position's commitment row
    # the fact's answer forms late: " Paris" is the prediction and the last position commits only in the last rows
    assert tops[-1, -1] == " Paris" and lens.commitment[-1] >= lens.layers - 3
    shown = metrics(at)
    assert shown["The model's prediction after the prompt (p)"] == ("' Paris'", f"{lens.top_probs[-1, -1, 0]:.1%}")
    assert shown["Commitment of the last position"][0] == f"layer {lens.commitment[-1]} of {lens.layers}"
    # the rank chart follows the prediction through the rows, at the last position
    followed = logit_lens(lab, DEFAULT_LENS_TEXT, lens.top_ids[-1, -1, 0])
    ranks = chart(at, "The model's prediction")
    assert trace_array(ranks["data"][0]["y"]).tolist() == followed.token_ranks[:, -1].tolist()
    np.testing.assert_allclose(trace_array(ranks["data"][1]["y"]), followed.token_probs[:, -1], atol=1e-6)
    assert ranks["layout"]["yaxis"]["type"] == "log" and ranks["layout"]["yaxis"]["autorange"] == "reversed"
    # the cell under the map opens on the last position's last row (the prediction), its 10 tokens computed alone
    assert (at.selectbox(key=LENS_ROW.key).value, at.selectbox(key=LENS_POSITION.key).value) == (30, 4)
    cell = at.dataframe[0].value
    assert cell.iloc[0, 0] == "' Paris'" and len(cell) == 10
    assert cell.iloc[:5, 0].tolist() == [repr(t) for t in lab.token_texts(lens.top_ids[-1, -1].tolist())]
    # the pickers (the map's clicks' keyboard twin; a click is the browser walk's) pick row 12 at " France"
    at.selectbox(key=LENS_ROW.key).set_value(12).run()
    at.selectbox(key=LENS_POSITION.key).set_value(3).run()
    assert at.dataframe[0].value.iloc[:5, 0].tolist() == [repr(t) for t in lab.token_texts(lens.top_ids[12, 3].tolist())]
    assert query_param(at, "lens_row") == "12" and query_param(at, "lens_position") == "3"
    # the sweeps wait for Run; direct logit attribution reads the clean prompt at once
    assert not patched(at) and [i.value for i in at.info].count(translate("en", "llm_answer.press_run")) == 2
    assert chart(at, "The 15 parts that write most into the logit of ' Mary'")
    press_run(at)
    shown = metrics(at)
    # the sweep on the indirect-object sentence: same token count, p(answer) clearly apart, both maps drawn
    assert len(lab.encode(DEFAULT_CLEAN)) == len(lab.encode(DEFAULT_CORRUPT))
    probs = trace_array(chart(at, "p(' Mary'), one block")["data"][0]["z"])
    diffs = trace_array(chart(at, "logit(' Mary') − logit(' John')")["data"][0]["z"])
    assert probs.shape == diffs.shape == (30, len(lab.encode(DEFAULT_CLEAN)))
    clean, corrupt = (float(shown[f"p(\\' Mary\\'), {which}"][0].rstrip("%")) / 100
                      for which in ("clean", "corrupted"))
    assert clean > 0.5 > 0.05 > corrupt
    # patching the last position at the last block gives the clean run's answer back: its residual is the clean one
    assert probs[-1, -1] == pytest.approx(clean, abs=0.001)
    assert (DEFAULT_ANSWER, DEFAULT_WRONG) == (" Mary", " John")
    heads = chart(at, "p(' Mary'), one head")
    assert trace_array(heads["data"][0]["z"]).shape == (30, 9)
    assert chart(at, "logit(' Mary') − logit(' John'), one head")
    # full-width charts: a title wraps at the page's width, not a column's (issue 51: "logit(' Mary') − / logit(' John'),
    # one / head at the last position patched" across the whole page)
    assert not any("<br>" in c["layout"]["title"]["text"] for c in chart_specs(at)), [
        c["layout"]["title"]["text"] for c in chart_specs(at)]
    assert chart(at, "The 15 parts that write most into the logit of ' Mary'")


def test_the_heads_and_the_attribution_of_a_short_pair_are_the_model_functions(lab):
    at = press_run(open_page("llm_answer", {**SHORT, "difference": "true", "wrong": " Rome"}))
    expected = head_patching(lab, SHORT["clean"], SHORT["corrupt"], SHORT["answer"], " Rome")
    heads = chart(at, "p(' Paris'), one head")
    np.testing.assert_allclose(trace_array(heads["data"][0]["z"]), expected.patched_probs, atol=1e-6)
    diffs = chart(at, "logit(' Paris') − logit(' Rome'), one head")
    np.testing.assert_allclose(trace_array(diffs["data"][0]["z"]), expected.patched_logit_diffs, atol=1e-5)
    strongest = np.unravel_index(np.argmax(expected.patched_probs), expected.patched_probs.shape)
    name = f"L{strongest[0] + 1} H{strongest[1] + 1}"
    assert any(a["text"].startswith(f"<b>{name}</b>") for a in heads["layout"]["annotations"])
    assert any(f"The strongest head: {name}" in c.value for c in at.caption)
    # direct logit attribution of the clean prompt's prediction: the 15 bars are the 15 largest parts in size
    parts = direct_logit_attribution(lab, SHORT["clean"])
    bars = chart(at, "The 15 parts that write most into the logit of ' Paris'")
    values = trace_array(bars["data"][0]["x"])
    every = np.concatenate([parts.heads.ravel(), parts.mlps, [parts.embedding]])
    np.testing.assert_allclose(np.sort(np.abs(values)), np.sort(np.abs(every))[-15:], atol=1e-5)
    assert list(values) == sorted(values, reverse=True)
    shown = metrics(at)
    assert shown["Logit of \\' Paris\\'"][0] == f"{parts.logit:.2f}"
    assert float(shown["Sum of the parts"][0]) == pytest.approx(parts.logit, abs=0.01)
    # the sink table: the heads with the most weight on the first token, each with its (small) contribution
    table = at.dataframe[-1].value  # after the lens cell's table
    assert len(table) == 10  # the heads the answer lesson's claims above it name: "the 10 heads…" (issue 51)
    first = parts.attention_to_first
    order = np.argsort(first, axis=None)[::-1][:len(table)]
    assert list(table["head"]) == [f"L{i // 9 + 1} H{i % 9 + 1}" for i in order]
    np.testing.assert_allclose(table["direct contribution (logit)"], [parts.heads.flat[i] for i in order], atol=1e-3)
    assert table["weight on the first token"].min() > 0.9  # sinks: nearly all their weight on the first token
    assert np.abs(table["direct contribution (logit)"]).max() < 0.1 * np.abs(parts.heads).max()


def test_a_short_pair_is_patched_with_the_model_functions_numbers(lab):
    at = press_run(open_page("llm_answer", SHORT))
    expected = residual_patching(lab, SHORT["clean"], SHORT["corrupt"], SHORT["answer"])
    probs = chart(at, "p(' Paris'), one block")
    np.testing.assert_allclose(trace_array(probs["data"][0]["z"]), expected.patched_probs, atol=1e-6)
    assert probs["layout"]["xaxis"]["ticktext"][3] == "3: ' France' → ' Italy'"
    assert not any("logit(" in c["layout"]["title"]["text"] for c in chart_specs(at))  # no wrong token: no difference
    shown = metrics(at)
    assert shown["p(\\' Paris\\'), clean"][0] == f"{expected.clean_prob:.1%}"
    assert shown["p(\\' Paris\\'), corrupted"][0] == f"{expected.corrupt_prob:.1%}"
    # each label fits its column: "p(' Mary') after the clean prom…" was cut (issue 51)
    from viz.text_width import text_width
    assert all(text_width(label.replace("\\", ""), 14) < text_width("p(' Mary') after the clean pro", 14)
               for label in shown if label.startswith(("p(", "Logit"))), list(shown)  # the four-column rows


def test_the_page_in_korean():
    at = press_run(open_page("llm_answer", SHORT, lang="ko"))
    assert at.title[0].value == translate("ko", "llm_answer.title")
    assert [h.value for h in at.header] == [translate("ko", f"llm_answer.{name}_title")
                                            for name in ("lens", "patching", "heads", "attribution")] + [
        translate("ko", "llm_influence.title"), translate("ko", "llm_flow.title")]
    titles = [c["layout"]["title"]["text"].replace("<br>", " ") for c in chart_specs(at)]
    assert titles[0] == translate("ko", "llm_answer.chart.lens_title", rows=31)
    assert any(title.endswith("한 위치의 블록 하나를 패칭") for title in titles)
    assert chart_specs(at)[0]["layout"]["yaxis"]["ticktext"][0] == translate("ko", "llm_answer.chart.embeddings_row")


def test_refusals_show_both_tokenizations_and_name_the_tokens_of_a_multi_token_answer(lab):
    at = open_page("llm_answer", SHORT)
    at.text_input(key=CORRUPT.key).set_value("The capital of the Netherlands is").run()
    assert_healthy(at)
    message = next(i.value for i in at.info if "same number of tokens" in i.value)
    assert "has 5: \\'The\\', \\' capital\\', \\' of\\', \\' France\\', \\' is\\'" in message
    assert "\\' the\\', \\' Netherlands\\'" in message and f"has {len(lab.encode('The capital of the Netherlands is'))}" \
        in message
    assert not any(c["layout"]["title"]["text"].startswith("p(") for c in chart_specs(at))
    at.text_input(key=CORRUPT.key).set_value(SHORT["corrupt"]).run()
    at.text_input(key=ANSWER.key).set_value(" Parisian").run()
    tokens = lab.token_texts(lab.encode(" Parisian"))
    assert len(tokens) > 1
    message = next(i.value for i in at.info if "is not one token" in i.value)
    assert f"but {len(tokens)}: " + ", ".join(repr(t).replace("'", "\\'") for t in tokens) in message
    at.text_input(key=ANSWER.key).set_value(SHORT["answer"]).run()
    assert WRONG.key not in [t.key for t in at.text_input]  # no logit difference: no wrong token asked for
    at.toggle(key=DIFFERENCE.key).set_value(True).run()  # the wrong token is asked for with the logit difference
    at.text_input(key=WRONG.key).set_value(" Romeland").run()
    assert any(i.value.startswith("The wrong token") for i in at.info)
    at.text_input(key=WRONG.key).set_value("").run()
    assert translate("en", "llm_answer.no_wrong") in [i.value for i in at.info]
    at.text_input(key=LENS_TOKEN.key).set_value("Parisian").run()
    assert any(i.value.startswith("The token to follow") for i in at.info)
    assert not any(c["layout"]["title"]["text"].startswith("Logit lens") for c in chart_specs(at))
    at.text_input(key=LENS_TOKEN.key).set_value("").run()
    at.text_input(key=LENS_TEXT.key).set_value("word " * (LENS_MAX_TOKENS + 1)).run()
    assert any(f"reads at most {LENS_MAX_TOKENS}" in i.value for i in at.info)
    long = "word " * (PATCH_MAX_TOKENS + 1)
    at.text_input(key=CLEAN.key).set_value(long).run()
    at.text_input(key=CORRUPT.key).set_value(long).run()
    assert any(f"patches at most {PATCH_MAX_TOKENS}" in i.value for i in at.info)
    assert_healthy(at)


def test_a_link_restores_every_field_and_the_address_keeps_them():
    query = {"lens_text": "The capital of Japan is", "lens_token": " Tokyo", **SHORT, "difference": "true",
             "wrong": " Rome"}
    at = press_run(open_page("llm_answer", query))
    for spec, value in ((LENS_TEXT, query["lens_text"]), (LENS_TOKEN, " Tokyo"), (CLEAN, SHORT["clean"]),
                        (CORRUPT, SHORT["corrupt"]), (ANSWER, " Paris"), (WRONG, " Rome")):
        assert at.text_input(key=spec.key).value == value, spec.key
        assert query_param(at, spec.url) == value, spec.url
    assert chart(at, "' Tokyo': rank and probability")
    assert chart(at, "logit(' Paris') − logit(' Rome')")
    assert query_param(at, DIFFERENCE.url) == "true"
    # the address written after a change opens the same page again: the logit difference switched off stays off
    press_run(at.toggle(key=DIFFERENCE.key).set_value(False).run())  # other inputs: another press
    address = {name: query_param(at, name) for name in ("lens_text", "lens_token", "clean", "corrupt", "answer",
                                                        "difference", "wrong")}
    assert address["difference"] == "false"
    again = press_run(open_page("llm_answer", {name: value for name, value in address.items() if value is not None}))
    assert [c["layout"]["title"]["text"] for c in chart_specs(again)] == \
        [c["layout"]["title"]["text"] for c in chart_specs(at)]
    assert not any(c["layout"]["title"]["text"].startswith("logit(") for c in chart_specs(again))


def test_a_sweep_runs_once_per_input_whoever_asks(monkeypatch):
    runs = []

    def counted(*args, **kwargs):
        runs.append(args[1:4])
        return residual_patching(*args, **kwargs)

    monkeypatch.setattr(sweeps, "residual_patching", counted)  # the page sweeps with the lesson measures' own
    pair = {"clean": "The capital of Spain is", "corrupt": "The capital of Italy is", "answer": " Madrid"}
    first = press_run(open_page("llm_answer", pair))
    first.text_input(key=LENS_TEXT.key).set_value("The capital of Spain is").run()  # a rerun of the same session
    assert patched(first)  # the press is kept while the fields keep its prompts
    second = press_run(open_page("llm_answer", pair))  # another student
    assert runs == [(pair["clean"], pair["corrupt"], pair["answer"])]
    assert chart(first, "p(' Madrid'), one block") == chart(second, "p(' Madrid'), one block")
    # an edit of a patching field runs nothing: it asks for another press
    first.text_input(key=ANSWER.key).set_value(" Barcelona").run()
    assert not patched(first) and translate("en", "llm_answer.press_run") in [i.value for i in first.info]
    first.text_input(key=ANSWER.key).set_value(pair["answer"]).run()
    assert patched(first)  # back to the prompts Run was pressed on: their result again, from the cache
    assert runs == [(pair["clean"], pair["corrupt"], pair["answer"])]


def test_a_sweep_past_the_time_limit_is_tried_again_by_run_only(monkeypatch):
    """A time-out says so once; a later action elsewhere on the page (the lens's prompt) neither runs the sweep
    again nor shows the time-out again, and attribution, which reads one prompt, is drawn throughout."""
    runs, slow = [], [True]

    def timed(sweep):
        def run(*args, **kwargs):
            runs.append((sweep.__name__, *args[1:4]))
            if slow[0]:  # as the worker's deadline stops a sweep on a loaded server
                raise TimeLimitExceeded
            return sweep(*args, **kwargs)
        return run

    monkeypatch.setattr(sweeps, "residual_patching", timed(residual_patching))
    monkeypatch.setattr(sweeps, "head_patching", timed(head_patching))
    pair = {"clean": "The capital of Peru is", "corrupt": "The capital of Chile is", "answer": " Lima"}
    at = press_run(open_page("llm_answer", pair))
    too_slow = translate("en", "analysis_queue.too_slow", seconds=f"{analysis_worker.ANALYSES.time_limit:.0f}")
    assert [w.value for w in at.warning].count(too_slow) == 2 and not patched(at) and len(runs) == 2
    at.text_input(key=LENS_TEXT.key).set_value("The capital of Peru is").run()
    assert_healthy(at)
    assert len(runs) == 2 and too_slow not in [w.value for w in at.warning]
    assert translate("en", "llm_answer.press_run") in [i.value for i in at.info]
    assert chart(at, "The 15 parts that write most into the logit of")
    slow[0] = False
    press_run(at)  # Run again: now it has the time
    assert patched(at) and len(runs) == 4


def test_attribution_reads_the_clean_prompt_without_a_pair():
    at = open_page("llm_answer", {**SHORT, "corrupt": "The capital of the Netherlands is"})
    assert any("same number of tokens" in i.value for i in at.info)
    assert at.button(key=RUN_KEY).disabled  # no pair: nothing to run
    assert chart(at, "The 15 parts that write most into the logit of ' Paris'")


@pytest.mark.slow
def test_every_bad_text_gives_a_map_or_a_message():
    at = open_page("llm_answer", SHORT)
    # each field in turn, the other left at its good text (one run a text: the lens's field, then the clean prompt)
    for spec, good in ((LENS_TEXT, DEFAULT_LENS_TEXT), (CLEAN, SHORT["clean"])):
        for text in load_bad_inputs():
            at.text_input(key=spec.key).set_value(text).run()
            assert_healthy(at)
            assert not at.error, repr(text[:40])
            shown = " ".join(str(m.value) for m in list(at.markdown) + list(at.info) + list(at.caption))
            assert "<script>" not in shown and "<img" not in shown, repr(text[:40])
            titles = [c["layout"]["title"]["text"] for c in chart_specs(at)]
            drawn = any(t.startswith("Logit lens") for t in titles) if spec is LENS_TEXT else \
                any(t.startswith("p(") for t in titles)
            assert drawn or at.info, repr(text[:40])  # nothing drawn: a message says why
        at.text_input(key=spec.key).set_value(good).run()


def test_an_empty_prompt_asks_for_one_in_the_pages_own_words():
    """Not the attention pages' "Type a sentence (or pick an example) to see its attention": this page has no
    example picker and is about the next token (issue 51)."""
    at = open_page("llm_answer", SHORT, lang="ko")
    for spec in (LENS_TEXT, CLEAN):
        at.text_input(key=spec.key).set_value("  ").run()
        assert_healthy(at)
        shown = [str(message.value) for message in at.info]
        assert translate("ko", "llm_answer.empty_prompt") in shown
        assert translate("ko", "input.empty") not in shown
        at.text_input(key=spec.key).set_value(SHORT["clean"]).run()


def test_the_sink_table_has_as_many_heads_as_the_lessons_sink_claims_name():
    """The answer lesson's stop 4 says "The 10 heads that look most at the first token…" above the page's sink table,
    which had 8 rows (issue 51)."""
    import tomllib
    from pathlib import Path
    from ui.llm.attribution import SINK_HEADS

    lesson = tomllib.loads((Path(__file__).resolve().parents[1] / "lessons" / "answer.toml").read_text("utf-8"))
    named = {claim["args"]["heads"] for stop in lesson["stop"] for claim in stop.get("claim", [])
             if claim["measure"].startswith("sink_heads")}
    assert named == {SINK_HEADS}
    assert all(f"{SINK_HEADS} heads" in claim["text"]["en"] for stop in lesson["stop"] for claim in stop.get("claim", [])
               if claim["measure"] == "sink_heads_attention")


def test_a_korean_prompt_shows_its_byte_pieces_and_says_the_model_reads_english(lab):
    """Byte-level BPE splits a Hangul syllable into bytes; each decoded alone was '�' (a lens of blank cells, a token
    list of '�'), with no word that SmolLM2 reads English mostly (issue 51)."""
    pieces = lab.token_texts(lab.encode("한국의 수도는"))
    assert not any("\ufffd" in piece for piece in pieces)
    assert pieces[:2] == ["<0xED><0x95>", "<0x9C>"]  # 한 is ED 95 9C in UTF-8, read as two tokens
    assert lab.token_texts(lab.encode(" café <|im_start|>")) == [" café", " ", "<|im_start|>"]
    at = open_page("llm_answer", {**SHORT, "clean": "한국의 수도는", "corrupt": "Seoul"}, lang="ko")
    at.text_input(key=LENS_TEXT.key).set_value("한국의 수도는").run()
    assert_healthy(at)
    shown = " ".join(str(message.value) for message in at.info)
    assert translate("ko", "llm_answer.not_english") in shown
    assert "\ufffd" not in shown and "0xED" in shown  # the pair's differing token counts, named by their bytes
    lens = chart(at, translate("ko", "llm_answer.chart.lens_title", rows=31).split(":")[0])
    assert "&lt;0xED&gt;" in lens["layout"]["xaxis"]["ticktext"][0]  # plotly shows &lt; as <
    assert not any("\ufffd" in str(cell) for row in lens["data"][0].get("text", []) for cell in row)


def test_the_answer_lessons_patching_stops_show_their_sweeps_without_a_press():
    """A stop about patching opens with its sweeps, by link and by Next (its prompts count as asked); the lens's stop
    leaves them to Run, and an edit at a patching stop waits for a press like anywhere else."""
    from classroom.lessons import load_lessons
    from tests.app_links import lab_session_of, open_from_link
    from tests.test_lessons import _answer
    from ui.lessons.catalogue import known_pages

    stops = load_lessons(known_pages())[0]["answer"].stops
    assert [stop.section for stop in stops[:3]] == ["lens", "patching", "heads"]

    def answered(at, stop):
        if stop.question and f"answer:{stop.number}" not in lab_session_of(at).lesson.answers:
            _answer(at, f"q_answer_{stop.number}", stop.question.kind, None)
        assert_healthy(at)
        return at
    at = answered(open_from_link(None, {"lesson": "answer", "stop": "1"})[0], stops[0])
    # the lens's stop draws no patching at all: that section answers stop 2 (classroom/answers_ahead.py)
    assert not patched(at) and translate("en", "page_sections.held", stop=2) in [i.value for i in at.info]
    at.button(key="lesson_next").click().run()
    answered(at, stops[1])
    assert chart(at, "p(' Mary'), one block")
    assert not [c for c in chart_specs(at) if "one head" in c["layout"]["title"]["text"]]  # stop 3's, held
    at.button(key="lesson_next").click().run()
    answered(at, stops[2])
    assert chart(at, "p(' Mary'), one head")
    at.text_input(key=ANSWER.key).set_value(" John").run()
    assert not patched(at)
    linked = answered(open_from_link(None, {"lesson": "answer", "stop": "3"})[0], stops[2])
    assert chart(linked, "p(' Mary'), one head")
