"""The influence section of the page "How an LLM finds its answer" (app_pages/llm_answer.py): each token of the lens's
prompt and its influence on one of the model's five most likely next tokens by three methods, gradient × input,
occlusion and attention rollout (model/explain/influence.py), side by side, with their rank agreement and a notice
when they name different most influential tokens.

The answer's candidates are the lens's own last cell (the model's top five next tokens, already computed for the
lens). The result is kept for the whole server (runtime/result_cache.py, keyed by the model, the prompt and the
answer); occlusion runs T shorter prompts, so the work grows with T²: prompts are bounded at
INFLUENCE_MAX_TOKENS, and a long one goes to the analysis worker at once (runtime/analysis_worker.py, by its size).
"""
from __future__ import annotations

import math

from streamlit.delta_generator import DeltaGenerator

from i18n import tr
from model.explain.influence import METHODS, MIN_TOKENS, PromptInfluence, prompt_influence
from model.families import ResidualModel
from runtime.analysis_worker import size
from runtime.result_cache import memoized
from ui.analysis_queue import heavy
from ui.charts import shared_figure, show_chart
from ui.language import words_for
from ui.llm.answer import LLM_ID, LensView
from ui.llm.influence_specs import INFLUENCE_RANK
from ui.presenter import presenting
from ui.screen import page_width
from ui.text import escape_markdown
from ui.widget_spec import spec_select
from viz.attention import html_escaped
from viz.influence import influence_bars

# The longest prompt whose influence is computed: occlusion runs T(T−1)/2 positions, which grows with T² (bench/
# influence.py times it against one forward).
INFLUENCE_MAX_TOKENS = 32


@memoized
def influence_of(model_id: str, text: str, token_id: int, _lab: ResidualModel) -> PromptInfluence:
    """The three methods' influence of each token of `text` on log p(token_id) after it, cached for the server."""
    return prompt_influence(_lab, text, token_id)


def method_names() -> dict[str, str]:
    """{method: its name on screen}."""
    return {method: tr(f"llm_influence.method.{method}") for method in METHODS}


def show_influence(where: DeltaGenerator, lab: ResidualModel, text: str | None,
                   lens: LensView | None) -> PromptInfluence | None:
    """The answer picker, the three methods' chart, their agreement and the disagreement notice, for the lens's
    prompt `text` and its lens; a message instead when the lens has no prompt to read or it is out of bounds."""
    if text is None or lens is None:
        where.info(tr("llm_influence.needs_prompt", limit=INFLUENCE_MAX_TOKENS))
        return None
    length = len(lens.lens.ids)
    if not MIN_TOKENS <= length <= INFLUENCE_MAX_TOKENS:
        where.info(tr("llm_influence.out_of_bounds", tokens=length, low=MIN_TOKENS, limit=INFLUENCE_MAX_TOKENS))
        return None
    candidates = [int(i) for i in lens.lens.top_ids[-1, -1]]  # the model's next tokens, most likely first
    texts, probs = list(lens.top_tokens[-1, -1]), lens.lens.top_probs[-1, -1]
    options = {rank: tr("llm_influence.answer_option", rank=rank, token=repr(texts[rank - 1]),
                        prob=f"{probs[rank - 1]:.1%}") for rank in INFLUENCE_RANK.choices()}  # worded in this run
    rank = spec_select(INFLUENCE_RANK, tr("llm_influence.answer_label"), where=where,
                       help=tr("llm_influence.answer_help"), format_func=options.__getitem__)
    token_id, token = candidates[rank - 1], str(texts[rank - 1])
    key = ("llm_influence", LLM_ID, text, token_id)
    result = heavy(key, lambda: influence_of(LLM_ID, text, token_id, lab), where=where,
                   work=size(length * length, lab.parameter_count))
    if result is None:
        return None
    names, words = method_names(), words_for("llm_influence")
    show_chart(shared_figure(key + ("bars",), lambda: influence_bars(
                   result.tokens, result.gradient, result.occlusion, result.rollout,
                   tr("llm_influence.chart.title", token=html_escaped(repr(token))), words=words)),
               "llm_prompt_influence", key="llm_influence_bars", where=where, width=page_width())
    columns = where.columns(3)
    for column, ((first, second), rho) in zip(columns, result.agreement().items()):
        column.metric(tr("llm_influence.agreement", first=names[first], second=names[second]),
                      "—" if math.isnan(rho) else f"{rho:+.2f}", help=tr("llm_influence.agreement_help"))
    tops = result.most_influential()
    if result.disagree():
        where.warning(tr("llm_influence.disagree", **{method: escape_markdown(repr(result.tokens[position]))
                                                      for method, position in tops.items()}),
                      icon=":material/call_split:")
    else:
        where.success(tr("llm_influence.agree", token=escape_markdown(repr(result.tokens[tops["gradient"]]))))
    if not presenting():
        where.write(tr("llm_influence.text"))
    return result
