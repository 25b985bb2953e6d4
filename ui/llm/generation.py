"""The LLM page's glue: the server's shared model (read-only), this session's generation (in its session object: token
ids, the step records and this session's own KV cache), and the page's three parts: generation step by step, the KV
cache, grouped-query attention."""
from __future__ import annotations

import streamlit as st

from i18n import tr
from model.capabilities import GENERATION
from model.families import GeneratingModel
from model.gguf_weights import SMOLLM2_NAME
from model.kv_cache import GenerationTrace, key_vectors_computed, kv_groups, positions_run
from model.llama import MAX_TOKENS
from ui.charts import show_chart
from ui.language import words_for
from ui.presenter import presenting
from ui.llm.specs import CHAT, CHOICE, PROMPT, SAMPLED, SEED, TEMPERATURE, TOP_K
from ui.models import capable_model
from ui.session import WidgetKey, lab_session
from ui.text import MAX_INPUT_CHARS, check_sentence, escape_markdown
from ui.widget_spec import prepare, secondary_number, spec_radio, spec_select_slider, spec_toggle
from runtime.result_cache import memoized
from viz.llm import attention_row_chart, cache_layers_chart, kv_groups_chart, next_token_chart, work_per_step_chart

LLM_ID = SMOLLM2_NAME  # the page's model: an LLM with GENERATION (model/adapters/llama.py)
# A prompt is cut to its first MAX_TOKENS tokens (model.llama, the limit of every page that reads a text with
# SmolLM2), with a message. Per session the KV cache then stays under (512 + 64) positions × 46,080 B = 26.5 MB
# (30 layers × 3 key/value heads × 64 × 2 × 4 B a position); the first step's transient maps, (L, h, T, T) weights
# and scores, are 2 × 30 × 9 × 512² × 4 B = 0.57 GB while it runs, then dropped but for the last query's row.
MAX_NEW_TOKENS = 64  # per generation
QUESTION_STEP = 20  # the predict-then-reveal question: "how many key vectors does step 20 compute?"
LAYER = WidgetKey("llm_layer")  # the layer whose heads the attention row shows (1-based in the slider)
ANSWER = WidgetKey("llm_kv_answer")  # the KV-cache question's radio
TEXT_KEY = "llm_text"  # the generated text's container (CSS class st-key-llm_text: the browser tests read it)
CACHE_KEY = "llm_cache_count"  # the cache metrics' container (st-key-llm_cache_count)


def llm_model() -> GeneratingModel | None:
    """The shared LLM; None (with a message) where it cannot be loaded or cannot generate."""
    return capable_model(LLM_ID, GENERATION, "llm.unavailable", "llm.no_generation")


def token_label(text: str) -> str:
    """A token as the page writes it: quoted, so a leading space or a newline shows."""
    return repr(text)


def typed_prompt_ids(lab: GeneratingModel) -> list[int] | None:
    """The prompt box and the chat-form switch -> the prompt's token ids (at most MAX_TOKENS: a longer prompt is cut,
    with a message), or None (with a message) when there is nothing to run."""
    prepare(PROMPT)
    box, switch = st.columns([4, 1], vertical_alignment="bottom")
    text = box.text_area(tr("llm.prompt"), key=PROMPT.key, height=68, max_chars=MAX_INPUT_CHARS,
                         help=tr("llm.prompt_help", limit=MAX_TOKENS))
    chat = spec_toggle(CHAT, tr("llm.chat"), where=switch, help=tr("llm.chat_help"))
    cleaned, notices = check_sentence(text)  # control characters become spaces; past MAX_INPUT_CHARS it is cut
    if cleaned is None:
        st.info(tr("llm.empty_prompt"))
        return None
    for notice in notices:
        st.info(notice)
    prompt = lab.chat_prompt(cleaned) if chat else cleaned
    ids = lab.encode(prompt)
    if len(ids) > MAX_TOKENS:
        st.info(tr("llm.prompt_cut", tokens=f"{len(ids):,}", limit=MAX_TOKENS))
        ids, prompt = _cut_prompt(lab, cleaned, chat)
    if chat:
        with st.expander(tr("llm.template_shown")):
            st.code(prompt, language=None, wrap_lines=True)  # the template as the model reads it: plain text
    if not ids:  # text the tokenizer reads as nothing
        st.info(tr("llm.empty_prompt"))
        return None
    return ids


def _cut_prompt(lab: GeneratingModel, text: str, chat: bool) -> tuple[list[int], str]:
    """(ids, prompt) of text cut to at most MAX_TOKENS tokens. In the chat form the question is cut, not the
    template, so the model still reads its assistant turn opening; a cut question, decoded and encoded again, can
    come out a token or two longer (a split character), hence the loop."""
    if not chat:
        ids = lab.encode(text)[:MAX_TOKENS]
        return ids, lab.decode(ids)
    question = lab.encode(text)
    keep = len(question)
    while True:
        prompt = lab.chat_prompt(lab.decode(question[:keep]))
        ids = lab.encode(prompt)
        if len(ids) <= MAX_TOKENS or keep == 0:
            return ids[:MAX_TOKENS], prompt
        keep = max(0, keep - (len(ids) - MAX_TOKENS))


def session_trace(ids: list[int]) -> GenerationTrace:
    """This session's generation of this prompt: a new one when the prompt (or the chat form) changed."""
    explorer = lab_session().explorer
    trace = explorer.trace
    if trace is None or trace.prompt_ids != ids:
        trace = explorer.trace = GenerationTrace(list(ids))
    return trace


def _choice_settings(where) -> tuple[float, int | None, int]:
    """(temperature, top-k, seed) of the next step, greedy or sampled, then the sampler's row under it: temperature 0
    is greedy."""
    # the labels in this run's language, looked up later too (AppTest reads a radio's labels outside the run)
    labels = {value: tr(f"llm.choice_{value}") for value in CHOICE.choices()}
    choice = spec_radio(CHOICE, tr("llm.choice"), where=where, horizontal=True, format_func=labels.__getitem__,
                        help=tr("llm.choice_help"))
    if choice != SAMPLED:
        return 0.0, None, 0
    cols = st.columns([2, 2, 1])
    temperature = spec_select_slider(TEMPERATURE, tr("llm.temperature"), where=cols[0],
                                     help=tr("llm.temperature_help"))
    top_k = spec_select_slider(TOP_K, tr("llm.top_k"), where=cols[1], help=tr("llm.top_k_help"))
    seed = secondary_number(SEED, tr("llm.seed"), where=cols[2])
    return float(temperature), int(top_k), int(seed)


def generation_view(lab: GeneratingModel) -> GenerationTrace | None:
    """Part 1 (its header the page's): the prompt, Next token ▸ / Reset, the text so far, the top-5 next tokens and the
    new token's attention row."""
    ids = typed_prompt_ids(lab)
    if ids is None:
        return None
    trace = session_trace(ids)
    # The controls and the text on the left, the next-token chart beside them from the controls' top: projected at
    # 1280 × 720 under a lesson's bar, the chart starts on the first screen (tests/test_browser_projected_stops.py).
    text_column, chart_column = st.columns([1, 1])
    with text_column:
        buttons = st.columns([3, 2, 4], vertical_alignment="center")
        done = trace.finished(lab.stop_ids, MAX_NEW_TOKENS)
        next_clicked = buttons[0].button(tr("llm.next"), key="llm_next", disabled=done,
                                         help=tr("llm.next_help"))
        if buttons[1].button(tr("llm.reset"), key="llm_reset", help=tr("llm.reset_help")):
            trace = lab_session().explorer.trace = GenerationTrace(list(ids))
        temperature, top_k, seed = _choice_settings(buttons[2])
        if next_clicked and not done:
            trace.advance(lab, temperature, top_k, seed)
        if trace.finished(lab.stop_ids, MAX_NEW_TOKENS):
            st.caption(tr("llm.finished_stop" if trace.steps[-1].token_id in lab.stop_ids else "llm.finished_limit",
                          limit=MAX_NEW_TOKENS))
    with text_column.container(key=TEXT_KEY, border=True):
        _show_text(lab, trace)
    if not trace.steps:  # before step 1: what the model would write next, so the first view has the point
        tokens, probabilities, greedy = _first_step_preview(lab, tuple(ids))
        show_chart(next_token_chart(tokens, probabilities, greedy, tr("llm.chart.preview_title"),
                                    words=words_for("llm", "llm_explain")),
                   "llm_next_tokens_before_step1", key="llm_top", where=chart_column)
        chart_column.caption(tr("llm.press_next", tokens=len(ids)))  # a hint, not a notice
        return trace
    last = trace.steps[-1]
    step = len(trace.steps)
    tokens = lab.token_texts(last.top_ids)
    chosen = last.top_ids.index(last.token_id) if last.token_id in last.top_ids else None
    title = tr("llm.chart.next_title", step=step, token=token_label(lab.token_texts([last.token_id])[0]))
    show_chart(next_token_chart(tokens, last.top_probs, chosen, title,
                                words=words_for("llm", "llm_explain")), f"llm_next_tokens_step{step}", key="llm_top",
               where=chart_column)
    if chosen is None:
        chart_column.caption(tr("llm.chosen_outside"))
    _attention_row(lab, trace)
    return trace


@memoized
def _first_step_preview(_lab: GeneratingModel, ids: tuple[int, ...]) -> tuple[list[str], list[float], int | None]:
    """The 5 most likely first tokens after the prompt (their texts, probabilities at temperature 1) and which one
    greedy decoding takes; shared by every session with the same prompt (a class opens the page on the same one).
    _lab is the one shared LLM (not hashed: the page has one)."""
    step, _ = _lab.next_token(list(ids), None)
    greedy = step.top_ids.index(step.token_id) if step.token_id in step.top_ids else None
    return _lab.token_texts(step.top_ids), list(step.top_probs), greedy


def _show_text(lab: GeneratingModel, trace: GenerationTrace) -> None:
    """The prompt, then the generated text in bold (user and model text escaped: never markdown)."""
    new = lab.decode(trace.new_ids)
    shown = escape_markdown(lab.decode(trace.prompt_ids))
    if new.strip():
        lead = " " if new[:1].isspace() else ""
        shown += f"{lead}**{escape_markdown(new.strip())}**"
    st.markdown(shown)
    if trace.steps:
        last = trace.steps[-1]
        st.caption(tr("llm.step_chose", step=len(trace.steps),
                      token=escape_markdown(token_label(lab.token_texts([last.token_id])[0])),
                      tokens=len(trace.ids)))


def _attention_row(lab: GeneratingModel, trace: GenerationTrace) -> None:
    """The last step's query row in one layer's heads: (h, T_k) from the trace's (L, h, T_k)."""
    layers, heads = lab.layout["decoder_self"]
    attention = trace.attention  # (L, h, T_k): the query of the text's last token before the new one
    keys = lab.token_texts(trace.ids[:attention.shape[-1]])
    LAYER.setdefault(layers)  # the last layer first
    layer = st.slider(tr("llm.layer", layers=layers), 1, layers, key=LAYER.key, help=tr("llm.layer_help"))
    groups = [lab.config.kv_head_of(i) for i in range(heads)]
    title = tr("llm.chart.row_title", layer=layer, token=token_label(keys[-1]), keys=len(keys), heads=heads)
    show_chart(attention_row_chart(attention[layer - 1], keys, groups, title, words=words_for("llm", "llm_explain")),
               f"llm_attention_row_step{len(trace.steps)}_L{layer}", key="llm_row")


def kv_cache_view(lab: GeneratingModel, trace: GenerationTrace | None) -> None:
    """Part 2: this step's cache per layer, what was computed and reused, its bytes, a timing, and a question."""
    st.subheader(tr("llm.kv_title"))
    cfg = lab.config
    st.write(tr("llm.kv_text", layers=cfg.num_layers, kv_heads=cfg.num_kv_heads, d_k=cfg.head_dim))
    if trace is not None and trace.steps:
        _cache_now(lab, trace)
    elif trace is not None:
        st.caption(tr("llm.kv_press_next"))
    if not lab_session().lesson.stop_asks:  # a lesson stop asking its own question: one question per stop
        _question(lab, len(trace.prompt_ids) if trace is not None else None)


def _cache_now(lab: GeneratingModel, trace: GenerationTrace) -> None:
    cfg, last, step = lab.config, trace.steps[-1], len(trace.steps)
    cached = trace.cache.length  # positions whose K and V every layer now holds, per key/value head
    keys_now = last.computed_positions * cfg.num_layers * cfg.num_kv_heads
    with st.container(key=CACHE_KEY):
        c = st.columns(4)
        c[0].metric(tr("llm.kv_length"), f"{cached:,}", help=tr("llm.kv_length_help", layers=cfg.num_layers))
        c[1].metric(tr("llm.kv_computed"), f"{last.computed_positions:,}",
                    help=tr("llm.kv_computed_help", keys=f"{keys_now:,}", layers=cfg.num_layers,
                            kv_heads=cfg.num_kv_heads))
        c[2].metric(tr("llm.kv_reused"), f"{last.reused_positions:,}")
        c[3].metric(tr("llm.kv_bytes"), _bytes(trace.cache.nbytes),
                    help=tr("llm.kv_bytes_help", per_token=f"{cfg.cache_bytes_per_token():,}", positions=cached))
    st.write(tr("llm.kv_step", step=step, computed=last.computed_positions, reused=last.reused_positions,
                keys=f"{keys_now:,}", layers=cfg.num_layers, kv_heads=cfg.num_kv_heads, total=cached))
    tokens = lab.token_texts(trace.ids[:cached])
    show_chart(cache_layers_chart(cfg.num_layers, tokens, last.reused_positions,
                                  tr("llm.chart.cache_title", step=step, layers=cfg.num_layers, positions=cached),
                                  words=words_for("llm", "llm_explain")),
               f"llm_kv_cache_step{step}", key="llm_cache_layers")
    prompt = len(trace.prompt_ids)
    with_cache = [key_vectors_computed(cfg, n, prompt, True) for n in range(1, step + 1)]
    without = [key_vectors_computed(cfg, n, prompt, False) for n in range(1, step + 1)]
    show_chart(work_per_step_chart(with_cache, without, tr("llm.chart.work_title", steps=step,
                                                           with_sum=f"{sum(with_cache):,}",
                                                           without_sum=f"{sum(without):,}"),
                                   words=words_for("llm", "llm_explain")),
               f"llm_kv_work_{step}_steps", key="llm_work")
    _timing(lab, trace)


def _bytes(count: int) -> str:
    return f"{count / 2 ** 20:.2f} MiB" if count >= 2 ** 20 else f"{count / 2 ** 10:.1f} KiB"


def _timing(lab: GeneratingModel, trace: GenerationTrace) -> None:
    """The next step's forward pass timed both ways on this server, now, on the live model."""
    if st.button(tr("llm.time_button", step=len(trace.steps) + 1), key="llm_time", help=tr("llm.time_help")):
        with st.spinner(tr("llm.timing")):
            trace.time_next_step(lab)
    timing = trace.timing
    if timing is None or trace.timing_at != len(trace.ids):  # measured before the last Next: no longer this step
        return
    c = st.columns(3)
    c[0].metric(tr("llm.time_with"), f"{timing.with_cache * 1000:.1f} ms")
    c[1].metric(tr("llm.time_without", positions=timing.positions), f"{timing.without_cache * 1000:.1f} ms")
    c[2].metric(tr("llm.time_ratio"), f"{timing.speedup:.1f}×")
    if not presenting():
        st.caption(tr("llm.time_caption"))


def _question(lab: GeneratingModel, prompt: int | None) -> None:
    """Predict, then reveal: how many key vectors does step QUESTION_STEP compute (with the cache)?"""
    cfg = lab.config
    prompt = prompt or 1
    answer = key_vectors_computed(cfg, QUESTION_STEP, prompt, use_cache=True)
    options = sorted({1, cfg.num_kv_heads, cfg.num_layers, answer, cfg.num_layers * cfg.num_heads,
                      key_vectors_computed(cfg, QUESTION_STEP, prompt, use_cache=False)})
    st.markdown(f"**{tr('llm.question', step=QUESTION_STEP)}**")
    guess = st.radio(tr("llm.question_label"), options, index=None, key=ANSWER.key, horizontal=True,
                     format_func=lambda n: f"{n:,}")
    explorer = lab_session().explorer
    if st.button(tr("llm.reveal"), key="llm_reveal", disabled=guess is None and not explorer.kv_revealed):
        explorer.kv_revealed = True
    if not explorer.kv_revealed:
        return
    verdict = "" if guess is None else tr("llm.right" if guess == answer else "llm.wrong")
    st.success(tr("llm.answer", step=QUESTION_STEP, answer=f"{answer:,}", layers=cfg.num_layers,
                  kv_heads=cfg.num_kv_heads, d_k=cfg.head_dim, verdict=verdict,
                  positions=positions_run(QUESTION_STEP, prompt, use_cache=False),
                  without=f"{key_vectors_computed(cfg, QUESTION_STEP, prompt, use_cache=False):,}",
                  heads=cfg.num_heads, full=f"{cfg.num_layers * cfg.num_heads:,}"))


def gqa_view(lab: GeneratingModel, trace: GenerationTrace | None) -> None:
    """Part 3: which query heads share each key/value head, and the cache bytes per token against full heads."""
    st.subheader(tr("llm.gqa_title"))
    cfg = lab.config
    groups = kv_groups(cfg)
    st.write(tr("llm.gqa_text", heads=cfg.num_heads, kv_heads=cfg.num_kv_heads, group=cfg.group_size))
    chart, numbers = st.columns([1, 1])
    show_chart(kv_groups_chart(groups, cfg.num_heads, tr("llm.chart.gqa_title", heads=cfg.num_heads,
                                                          kv_heads=cfg.num_kv_heads),
                                                          words=words_for("llm", "llm_explain")),
               "llm_gqa_groups", key="llm_gqa", where=chart)
    grouped, full = cfg.cache_bytes_per_token(), cfg.cache_bytes_per_token(cfg.num_heads)
    numbers.metric(tr("llm.gqa_bytes", kv_heads=cfg.num_kv_heads), f"{grouped:,} B")
    numbers.metric(tr("llm.gqa_full_bytes", heads=cfg.num_heads), f"{full:,} B",
                   delta=f"{full / grouped:.0f}× {tr('llm.gqa_more')}", delta_color="off")
    numbers.caption(tr("llm.gqa_formula", layers=cfg.num_layers, kv_heads=cfg.num_kv_heads, heads=cfg.num_heads,
                       d_k=cfg.head_dim, grouped=f"{grouped:,}", full=f"{full:,}"))
    if trace is not None and trace.cache is not None:
        positions = trace.cache.length
        numbers.write(tr("llm.gqa_now", positions=positions, grouped=_bytes(grouped * positions),
                         full=_bytes(full * positions)))
