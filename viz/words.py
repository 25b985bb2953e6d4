"""The words a chart shows, passed in by its caller: viz/ never picks a language.

A chart builder takes a `Words` (the keyword `words`) and asks it for its text by the i18n key, as the caller would
ask tr(): `words("positional.chart.value")`, `words("attention.chart.layer_head", layer=2, head=1)`. The caller builds
it in the reader's language (ui.language.words_for("positional")) from the i18n tables the chart family reads, so a
builder depends on its arguments only, and a figure cached by (its inputs, the language) holds that language's words.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


def _as_written(text: str) -> str:
    return text


@dataclass(frozen=True)
class Words:
    """One language's templates of some i18n tables ("positional" holds every "positional.…" key).

    Compared and hashed by (language, tables): the templates of a language are read once per process, so two Words
    of the same language and tables show the same text. `finish` is what the language does to a filled-in template
    (Korean picks its particles after the values, i18n.particles); English leaves it as written.
    """
    language: str
    tables: tuple[str, ...]
    templates: Mapping[str, str] = field(compare=False, repr=False)
    finish: Callable[[str], str] = field(default=_as_written, compare=False, repr=False)

    def __call__(self, key: str, **values: object) -> str:
        """The text for `key` with its {values} filled in; a key outside the tables is a programming error."""
        template = self.templates[key]
        return self.finish(template.format(**values) if values else template)
