"""The LLM page's branches (section 4): at a token the session's generation wrote, fork into the model's top k
tokens there, or into one branch per temperature with one seed, each branch continued for N tokens; side by side,
with each forked token's probability, the first token where the branches differ marked, and what the fork computed
against what recomputing the prefix per branch would. A branch can be made the generation's text.

A fork runs on a press of Branch ▸ (a press is kept for its request, so a rerun does not ask again), through the
analysis queue (ui/analysis_queue.heavy: the student's turn, the time limit); its result is kept for the server
(runtime/result_cache.py), keyed by the text before the fork and the settings. It reads this session's KV cache for
that text: the prefix is never run again (model/branches.py).
"""
from __future__ import annotations

import streamlit as st

from i18n import tr
from model.branches import Fork, adopt_branch
from model.families import GeneratingModel
from model.kv_cache import GenerationTrace
from model.llama import KVCache
from runtime.analysis_worker import size
from runtime.result_cache import memoized
from ui.analysis_queue import heavy
from ui.llm.branches_specs import (BRANCH_TEMPERATURES, COUNT, MODE, SAMPLED_TEMPERATURE, SAMPLED_TOP_K, SEED,
                                   TEMPERATURES, TOKENS, TOP, TOP_SAMPLED)
from ui.llm.generation import LLM_ID, MAX_NEW_TOKENS, token_label
from ui.presenter import presenting
from ui.session import WidgetKey, lab_session
from ui.text import escape_markdown
from ui.widget_spec import secondary_number, spec_radio, spec_select_slider, spec_slider

AT = WidgetKey("llm_branch_at")  # the generated token the fork replaces (1-based step); in no link, like the text
ASKED = WidgetKey("llm_branch_asked")  # the request Branch ▸ was last pressed on
FORK_KEY = "llm_fork"  # the Branch ▸ button
BRANCHES_KEY = "llm_branches"  # the branches' container (CSS class st-key-llm_branches: the browser tests read it)
MARK = "▸"  # before the first token where the branches differ
NEWLINE = "⏎"  # a marked token that is white space alone
CONTEXT = 4  # tokens of the shared text shown before each branch


@memoized
def fork_of(model_id: str, mode: str, prefix: tuple[int, ...], count: int, tokens: int, seed: int,
            _lab: GeneratingModel, _cache: KVCache) -> Fork:
    """The fork after `prefix` as `mode` asks, on the page's model (model_id: its weights key a kept result); _cache
    (the session's generation's) holds the prefix, so only the prefix's last token is run again, for its next-token
    distribution."""
    ids, cache = list(prefix), _cache
    if mode == TEMPERATURES:
        return _lab.fork_temperatures(ids, len(ids), BRANCH_TEMPERATURES, tokens, cache=cache,
                                      top_k=SAMPLED_TOP_K, seed=seed)
    sampled = mode == TOP_SAMPLED
    return _lab.fork_top(ids, len(ids), count, tokens, cache=cache, temperature=SAMPLED_TEMPERATURE if sampled else 0.0,
                         top_k=SAMPLED_TOP_K if sampled else None, seed=seed if sampled else 0)


def branches_view(lab: GeneratingModel, trace: GenerationTrace | None) -> None:
    """Section 4: the fork's settings, Branch ▸, the branches side by side and what they cost."""
    st.subheader(tr("llm_branches.title"))
    if not presenting():
        st.write(tr("llm_branches.intro"))
    labels = {value: tr(f"llm_branches.mode_{value}") for value in MODE.choices()}
    mode = spec_radio(MODE, tr("llm_branches.mode"), horizontal=True, format_func=labels.__getitem__,
                      help=tr("llm_branches.mode_help", temperatures=" / ".join(map(str, BRANCH_TEMPERATURES)),
                              temperature=SAMPLED_TEMPERATURE, top_k=SAMPLED_TOP_K))
    cols = st.columns([3, 2, 2, 1])  # the settings are drawn before any step too: a link may set them
    count = spec_slider(COUNT, tr("llm_branches.count"), where=cols[1]) if mode != TEMPERATURES \
        else len(BRANCH_TEMPERATURES)
    tokens = spec_select_slider(TOKENS, tr("llm_branches.tokens"), where=cols[2], help=tr("llm_branches.tokens_help"))
    seed = secondary_number(SEED, tr("llm.seed"), where=cols[3]) if mode != TOP else 0
    if trace is None:  # no prompt: the generation section says why
        return
    if trace.steps:
        step = _position(lab, trace, cols[0])
    else:  # before any step: at the prompt's end, the first token the model would write (the prefix run whole)
        step = 1
        cols[0].caption(tr("llm_branches.at_prompt_end"))
    position = len(trace.prompt_ids) + step - 1  # the text before the fork: the prompt and step − 1 new tokens
    prefix = tuple(trace.ids[:position])
    request = (mode, prefix, int(count), int(tokens), int(seed))
    if st.button(tr("llm_branches.fork"), key=FORK_KEY, help=tr("llm_branches.fork_help")):
        ASKED.set(request)
    if ASKED.get() != request:
        return
    fork = heavy(("llm_fork",) + request, lambda: fork_of(LLM_ID, *request, lab, trace.cache),
                 work=size(int(count) * int(tokens), lab.parameter_count))
    if fork is None:
        ASKED.forget()  # past the time limit: asked again by a press only
        return
    _show(lab, trace, fork, mode, step)


def _position(lab: GeneratingModel, trace: GenerationTrace, where) -> int:
    """The generated token to fork at (1-based step), named by its step and text."""
    texts = lab.token_texts(trace.new_ids)
    steps = list(range(1, len(texts) + 1))
    if AT.get() not in steps:
        AT.set(1)
    if len(steps) == 1:
        where.caption(tr("llm_branches.at_only", token=escape_markdown(token_label(texts[0]))))
        return 1
    return where.select_slider(tr("llm_branches.at"), steps, key=AT.key, help=tr("llm_branches.at_help"),
                               format_func=lambda n: f"{n}: {token_label(texts[n - 1])}")


def _cut(tokens: list[int], stop_ids: tuple[int, ...]) -> list[int]:
    """A branch's tokens up to and including its first stop token."""
    for i, token in enumerate(tokens):
        if token in stop_ids:
            return tokens[:i + 1]
    return tokens


def _branch_text(lab: GeneratingModel, context: list[int], tokens: list[int], differ: int | None) -> str:
    """The shared text's last CONTEXT tokens after "…", then the branch, escaped; its token where the branches first
    differ bold after MARK."""
    shown = "…" + escape_markdown(lab.decode(context))
    if differ is None or differ >= len(tokens):
        return shown + escape_markdown(lab.decode(tokens))
    same, marked, rest = (lab.decode(part) for part in (tokens[:differ], tokens[differ:differ + 1],
                                                        tokens[differ + 1:]))
    lead = " " if marked[:1].isspace() else ""
    word = escape_markdown(marked.strip()) or NEWLINE  # a token of white space alone: a newline, mostly
    # the mark before the bold, not in it: "**" between a letter and a symbol would open nothing (CommonMark's
    # flanking rule), while after the mark, a symbol, it opens whatever follows
    return f"{shown}{escape_markdown(same)}{lead}{MARK}**{word}**{escape_markdown(rest)}"


def _show(lab: GeneratingModel, trace: GenerationTrace, fork: Fork, mode: str, step: int) -> None:
    """The branches side by side, the first difference, what the fork computed, and Make this the text."""
    differ = fork.first_difference()
    with st.container(key=BRANCHES_KEY):
        columns = st.columns(len(fork.branches))
        for number, (branch, column) in enumerate(zip(fork.branches, columns), 1):
            tokens = _cut(branch.token_ids, lab.stop_ids)
            with column.container(border=True):
                first = escape_markdown(token_label(lab.token_texts(tokens[:1])[0]))
                heading = ("llm_branches.branch_temperature" if mode == TEMPERATURES else "llm_branches.branch_top")
                st.markdown(tr(heading, number=number, token=first, prob=f"{branch.first_prob:.1%}",
                               temperature=branch.temperature))
                st.markdown(_branch_text(lab, fork.prefix_ids[-CONTEXT:], tokens, differ))
                if st.button(tr("llm_branches.make_main"), key=f"llm_branch_main_{number}",
                             help=tr("llm_branches.make_main_help")):
                    _make_main(lab, trace, fork, number - 1, step)
    if differ is None:
        st.caption(tr("llm_branches.no_difference"))
    else:
        st.caption(tr("llm_branches.first_difference", token=differ + 1, position=fork.position + differ + 1,
                      mark=MARK))
    _cost(fork)


def _cost(fork: Fork) -> None:
    """Positions this fork computed against recomputing the prefix for every branch, and its wall time."""
    metrics = st.columns(4)
    metrics[0].metric(tr("llm_branches.computed"), f"{fork.computed:,}",
                      help=tr("llm_branches.computed_help", prefix=fork.prefix_computed,
                              branches=len(fork.branches), later=fork.branch_computed))
    metrics[1].metric(tr("llm_branches.reused"), f"{fork.prefix_reused:,}")
    metrics[2].metric(tr("llm_branches.recompute"), f"{fork.recompute_positions:,}",
                      help=tr("llm_branches.recompute_help", prefix=fork.position, branches=len(fork.branches)))
    metrics[3].metric(tr("llm_branches.seconds"), f"{fork.seconds * 1000:,.0f} ms")
    if not presenting():
        st.caption(tr("llm_branches.cost_caption", passes=fork.forward_passes, branches=len(fork.branches),
                      ratio=f"{fork.recompute_positions / max(fork.computed, 1):.1f}"))


def _make_main(lab: GeneratingModel, trace: GenerationTrace, fork: Fork, index: int, step: int) -> None:
    """The generation takes the branch: its text up to the fork, then the branch's tokens (at most the page's
    MAX_NEW_TOKENS new tokens in all); the page reruns on it."""
    kept = step - 1
    tokens = _cut(fork.branches[index].token_ids, lab.stop_ids)[:MAX_NEW_TOKENS - kept]
    lab_session().explorer.trace = adopt_branch(trace, lab, fork, index, len(tokens))
    ASKED.forget()
    st.rerun()
