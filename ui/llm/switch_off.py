"""The LLM page's section "Heads switched off while it writes" (issue 56): the page's prompt continued by the intact model
and by the model with the chosen heads zeroed (model/switch_off.py), aligned token by token with the first divergence
marked, and both models' per-token loss on a repeated random sequence (the induction heads' copy, Olsson et al. 2022).

The heads are picked by hand, or with one click: the top induction heads of the LLM heads page's sequence, or the heads
that write most into the prompt's next token (direct logit attribution, the answer page's last section), each read
from the process's one shared result (classroom/measures). Bounded per student: at most MAX_HEADS heads, STEP_CHOICES
tokens per side (2 × 32 steps with the KV cache at most), the prompt as the generation section cut it (MAX_TOKENS); the
work goes through the page's analysis queue (heavy) and its result is kept for every session (memoized).
"""
from __future__ import annotations

import streamlit as st

from classroom.measures.llm import shared_induction
from classroom.measures.llm_answer import logit_attribution
from i18n import tr
from model.capabilities import ABLATION, RESIDUAL_STREAM
from model.explain.induction import top_heads
from model.explain.kinds import head_label
from model.families import GeneratingModel
from model.kv_cache import GenerationTrace
from model.llama import load_smollm2  # the page's model: the heads page's shared induction result reads it
from model.switch_off import (COPY_LENGTH, COPY_SEED, DECODER_SELF, INDUCTION_LENGTH, INDUCTION_SEED, MAX_HEADS,
                              TOP_HEADS, CopyLosses, Heads, SideBySide, WritesWithHeadsOff, continue_both, copy_losses,
                              top_attributed_heads)
from runtime.analysis_worker import parameters, size
from runtime.result_cache import memoized
from ui.analysis_queue import heavy
from ui.charts import show_chart
from ui.language import words_for
from ui.llm.specs import CHOICE, SAMPLED, SEED, TEMPERATURE, TOP_K
from ui.llm.switch_off_specs import HEADS_OFF, STEPS
from ui.presenter import presenting
from ui.text import escape_markdown
from ui.widget_spec import prepare, spec_select_slider
from viz.switch_off import aligned_tokens_chart, copy_loss_chart

TEXTS_KEY = "llm_off_texts"  # the two continuations' container (CSS class st-key-llm_off_texts: the browser reads it)
COPY_KEY = "llm_off_copy"  # the copy losses' metrics (st-key-llm_off_copy)


def _settings() -> tuple[float, int | None, int]:
    """(temperature, top-k, seed) as the generation section has them: the same choice for both models."""
    if CHOICE.get() != SAMPLED:
        return 0.0, None, 0
    return float(prepare(TEMPERATURE)), int(prepare(TOP_K)), int(prepare(SEED))


@memoized
def _both(model_id: str, prompt: tuple[int, ...], heads: Heads, steps: int, settings: tuple,
          _lab: WritesWithHeadsOff) -> SideBySide:
    temperature, top_k, seed = settings
    return continue_both(_lab, list(prompt), heads, steps, temperature=temperature, top_k=top_k, seed=seed,
                        stop_ids=_lab.stop_ids)


@memoized
def _copy(model_id: str, heads: Heads, _lab: WritesWithHeadsOff) -> CopyLosses:
    return copy_losses(_lab, _lab.config.vocab_size, heads, COPY_LENGTH, COPY_SEED)


def _induction_heads(lab: GeneratingModel) -> Heads | None:
    """The top induction heads of the LLM heads page's first sequence (its own shared result), None past the limit."""
    result = heavy(("llm_induction_scores", lab.model_id, INDUCTION_LENGTH, INDUCTION_SEED),
                   lambda: shared_induction(load_smollm2(), INDUCTION_LENGTH, INDUCTION_SEED)[0],
                   work=size(2 * INDUCTION_LENGTH, parameters(load_smollm2().model)))
    return None if result is None else tuple(sorted((l, h) for l, h, _ in top_heads(result.scores, TOP_HEADS)))


def _attributed_heads(lab: GeneratingModel, prompt: list[int]) -> Heads | None:
    """The heads writing most into the prompt's next token (the answer page's direct logit attribution)."""
    text = lab.decode(prompt)
    result = heavy(("llm_attribution", lab.model_id, text), lambda: logit_attribution(lab, text))
    return None if result is None else top_attributed_heads(result.heads, TOP_HEADS)


def _pick_heads(lab: GeneratingModel, prompt: list[int]) -> Heads:
    """The one-click buttons, then the heads' list (a click fills it before it is drawn); -> the chosen heads."""
    layers, per_layer = lab.layout[DECODER_SELF]
    options = [(layer, head) for layer in range(layers) for head in range(per_layer)]
    buttons = st.container(horizontal=True)  # side by side where they fit, else one under the other
    picked = None
    if buttons.button(tr("llm_switch_off.induction_button", count=TOP_HEADS), key="llm_off_induction",
                         help=tr("llm_switch_off.induction_help", n=INDUCTION_LENGTH, count=TOP_HEADS)):
        picked = _induction_heads(lab)
    if lab.can(RESIDUAL_STREAM) and buttons.button(
            tr("llm_switch_off.attributed_button", count=TOP_HEADS), key="llm_off_attributed",
            help=tr("llm_switch_off.attributed_help")):
        picked = _attributed_heads(lab, prompt)
    offered = set(options)
    kept = [tuple(h) for h in (picked if picked is not None else HEADS_OFF.get() or [])]
    HEADS_OFF.set([h for h in kept if h in offered][:MAX_HEADS])  # a link's heads the model lacks are dropped
    chosen = st.multiselect(tr("llm_switch_off.heads", limit=MAX_HEADS), options, key=HEADS_OFF.key,
                            format_func=lambda h: head_label(*h), max_selections=MAX_HEADS,
                            help=None if presenting() else tr("llm_switch_off.heads_help"))
    return tuple(sorted(tuple(h) for h in chosen))


def switch_off_view(lab: GeneratingModel, trace: GenerationTrace | None) -> None:
    """Part 4: the heads, then the two continuations and the copy losses."""
    st.subheader(tr("llm_switch_off.title"))
    if not (lab.can(ABLATION) and isinstance(lab, WritesWithHeadsOff)):
        st.info(tr("llm_switch_off.cannot", model=lab.model_id))
        return
    if not presenting():
        st.write(tr("llm_switch_off.intro"))
    if trace is None:  # no prompt: the generation section says why
        st.caption(tr("llm_switch_off.no_prompt"))
        return
    prompt = list(trace.prompt_ids)
    # The heads on the left, the copy they break beside them from the section's top (projected at 1280 × 720 under a
    # lesson's bar, the chart starts on the first screen); the two texts written under both.
    controls, copy_column = st.columns([1, 1])
    with controls:
        heads = _pick_heads(lab, prompt)
        steps = int(spec_select_slider(STEPS, tr("llm_switch_off.steps"), help=tr("llm_switch_off.steps_help")))
    if not heads:
        controls.caption(tr("llm_switch_off.no_heads"))
        return
    with copy_column:
        copy = heavy(("llm_switch_off_copy", lab.model_id, heads), lambda: _copy(lab.model_id, heads, lab),
                     work=size(4 * COPY_LENGTH, parameters(load_smollm2().model)))
        if copy is not None:
            _copy_chart(copy)
    if copy is not None:
        _copy_metrics(copy)
    settings = _settings()
    work = size(len(prompt) + 2 * steps, parameters(load_smollm2().model))
    both = heavy(("llm_switch_off", lab.model_id, tuple(prompt), heads, steps, settings),
                 lambda: _both(lab.model_id, tuple(prompt), heads, steps, settings, lab), work=work)
    if both is not None:
        _show_texts(lab, both, settings)


def _show_texts(lab: GeneratingModel, both: SideBySide, settings: tuple) -> None:
    names = ", ".join(head_label(*h) for h in both.heads)
    with st.container(key=TEXTS_KEY):
        left, right = st.columns(2)
        prompt = escape_markdown(lab.decode(both.prompt_ids))
        for where, title, ids in ((left, tr("llm_switch_off.intact"), both.intact_ids),
                                  (right, tr("llm_switch_off.switched", heads=names), both.switched_ids)):
            with where.container(border=True):
                st.markdown(f"**{title}**")
                st.markdown(f"{prompt} **{escape_markdown(lab.decode(ids).strip())}**")
        divergence = both.divergence
        sampled = settings[0] > 0
        if divergence is None:
            st.caption(tr("llm_switch_off.same", tokens=len(both.intact_ids)))
        else:
            st.caption(tr("llm_switch_off.parted", step=divergence + 1,
                          intact=escape_markdown(_token(lab, both.intact_ids, divergence)),
                          switched=escape_markdown(_token(lab, both.switched_ids, divergence))))
        if sampled:
            st.caption(tr("llm_switch_off.same_seed", seed=settings[2], temperature=settings[0]))
    title = tr("llm_switch_off.chart.aligned_title", heads=len(both.heads))
    show_chart(aligned_tokens_chart(lab.token_texts(both.intact_ids), lab.token_texts(both.switched_ids), divergence,
                                    title, words=words_for("llm_switch_off")),
               f"llm_switch_off_aligned_{len(both.heads)}_heads", key="llm_off_aligned")


def _token(lab: GeneratingModel, ids: list[int], index: int) -> str:
    return repr(lab.token_texts([ids[index]])[0]) if index < len(ids) else tr("llm_switch_off.ended")


def _copy_chart(copy: CopyLosses) -> None:
    """The copy's per-token losses (the chart's title names both models' means over the second copy)."""
    intact, switched = copy.second_half(copy.intact), copy.second_half(copy.switched)
    show_chart(copy_loss_chart(copy.intact, copy.switched, copy.period,
                               tr("llm_switch_off.chart.copy_title", n=copy.period, intact=f"{intact:.2f}",
                                  switched=f"{switched:.2f}"), words=words_for("llm_switch_off")),
               f"llm_switch_off_copy_{len(copy.heads)}_heads", key="llm_off_copy_chart")


def _copy_metrics(copy: CopyLosses) -> None:
    """The copy's three metrics in the section's full width (a half column cut their labels)."""
    intact, switched = copy.second_half(copy.intact), copy.second_half(copy.switched)
    st.markdown(f"**{tr('llm_switch_off.copy_title', n=copy.period)}**")
    with st.container(key=COPY_KEY):
        metrics = st.columns(3)
        metrics[0].metric(tr("llm_switch_off.second_intact"), f"{intact:.2f}",
                          help=tr("llm_switch_off.second_help", n=copy.period))
        metrics[1].metric(tr("llm_switch_off.second_switched", heads=len(copy.heads)), f"{switched:.2f}",
                          delta=f"{switched - intact:+.2f}", delta_color="inverse")
        metrics[2].metric(tr("llm_switch_off.first_both"),
                          f"{copy.first_half(copy.intact):.2f} / {copy.first_half(copy.switched):.2f}",
                          help=tr("llm_switch_off.first_help"))
    if not presenting():
        st.caption(tr("llm_switch_off.copy_caption", n=copy.period, seed=COPY_SEED))
