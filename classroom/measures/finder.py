"""The head finder's measure (issue 41): which head a lesson stop's finder ranks first, on the model the stop shows
(any model with heads: the attention page's "Find heads" view), so a class can be asked which head it would pick
before the ranking is revealed."""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from classroom.measures.registry import STOP_MODEL, HeadValues, MeasureError, Phrase, StopView, measure
from model.explain.head_finder import default_kind, token_index
from model.families import LabModel

FINDER_VIEW = ("sentence", "find_q", "find_k")  # with the model: the text and the two tokens the finder reads


@measure("finder_head", answers="head", model=STOP_MODEL, reads=FINDER_VIEW)
def finder_head(lab: LabModel, view: StopView, args: Mapping) -> HeadValues:
    """The head with the most weight from the stop's query token to its key token (the first token spelled so), in
    the model's first kind of heads: the finder's first bar."""
    sentence, query, key = (str(view.get(name) or "") for name in FINDER_VIEW)
    if not (sentence and query and key):
        raise MeasureError(Phrase.of("lessons.needs_finder_tokens"))
    analysed = lab.analyse(sentence)
    try:
        maps = analysed.maps[default_kind(analysed, lab.layout)]
        rows, columns = token_index(maps.query_tokens, query), token_index(maps.key_tokens, key)
    except ValueError as error:  # no heads, or a token the text lacks (named with the text's tokens)
        raise MeasureError(str(error)) from None
    return HeadValues(np.asarray(maps.weights[:, :, rows, columns], dtype=np.float32), False, "lessons.measured_weight")
