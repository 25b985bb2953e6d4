"""The encoder's two token switches of the attention page ([CLS]/[SEP] hidden, word pieces merged): their specs,
apart from ui/attention/specs.py (which lists them with the page's others) so that the maps and the Explain view, which
that module imports, read them through the specs too."""
from __future__ import annotations

from ui.widget_spec import WidgetSpec, boolean


def _switch(key: str, url: str) -> WidgetSpec:
    return WidgetSpec(key, url, False, ("attention",), options=(False, True), convert=boolean)


HIDE_SPECIAL_SPEC = _switch("bert_hide_special", "hide_special")  # encoders: hide [CLS]/[SEP]
MERGE_WORDS_SPEC = _switch("bert_merge_words", "words")  # encoders: merge subwords into words


def tokens_changed() -> bool:
    """Whether either switch is on: the shown tokens are not the model's own."""
    return bool(HIDE_SPECIAL_SPEC.get()) or bool(MERGE_WORDS_SPEC.get())
