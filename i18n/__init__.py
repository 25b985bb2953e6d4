"""Interface text in English and Korean: `tr("page.key", **values)`.

Every string a person reads lives in i18n/<language>/<file>.toml, one file per page or part, so each language
has one place. The key is "<file>.<table>.<name>", e.g. tr("attention.title"). Values are filled in with
str.format, so a template says which values it shows ({layer}, {head}); user text passed as a value is never
re-interpreted as a template.

Pure Python (no Streamlit). Which language tr() uses comes from a provider function that the UI installs at the
start of each run (ui/run.run_app: the browser session's choice); without one it is English. viz/ never calls
tr(): a chart's words are built here by its caller (ui.language.words_for) and passed in.
"""
from __future__ import annotations

import contextlib
import string
import tomllib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import cache
from pathlib import Path

from i18n.particles import attach_particles

LANGUAGES = {"en": "English", "ko": "한국어"}
DEFAULT_LANGUAGE = "en"
_FOLDER = Path(__file__).resolve().parent
_language_provider: Callable[[], str] = lambda: DEFAULT_LANGUAGE
# Set for code that runs outside the user's script run (a download built on click): per thread/task, never global.
_language_override: ContextVar[str | None] = ContextVar("language_override", default=None)


def _flatten(table: dict, prefix: str) -> dict[str, str]:
    flat = {}
    for name, value in table.items():
        key = f"{prefix}.{name}"
        if isinstance(value, dict):
            flat.update(_flatten(value, key))
        elif isinstance(value, str):
            flat[key] = value
        else:
            raise TypeError(f"{key}: only strings and tables belong in a strings file, not {type(value).__name__}")
    return flat


@cache
def strings(language: str) -> dict[str, str]:
    """Every key of one language, read once per process: {'attention.title': 'Transformer attention', ...}."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; choose one of {sorted(LANGUAGES)}")
    flat: dict[str, str] = {}
    for path in sorted((_FOLDER / language).glob("*.toml")):
        with path.open("rb") as file:
            flat.update(_flatten(tomllib.load(file), path.stem))
    return flat


def placeholders(template: str) -> set[str]:
    """The {names} a template fills in (used by the parity test: both languages must show the same values)."""
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def set_language_provider(provider: Callable[[], str]) -> None:
    """Install the function that says which language the current user reads (ui/run.run_app, first in each run)."""
    global _language_provider
    _language_provider = provider


@contextlib.contextmanager
def using_language(language: str) -> Iterator[None]:
    """Within the block, tr() uses `language` in this thread only (e.g. a CSV built after the script run)."""
    token = _language_override.set(language)
    try:
        yield
    finally:
        _language_override.reset(token)


def current_language() -> str:
    language = _language_override.get() or _language_provider()
    return language if language in LANGUAGES else DEFAULT_LANGUAGE


def translate(language: str, key: str, **values: object) -> str:
    """The text for `key` in `language`, with {values} filled in. An unknown key is a programming error."""
    template = strings(language).get(key)
    if template is None:
        template = strings(DEFAULT_LANGUAGE)[key]  # KeyError names the missing key; the parity test prevents gaps
    text = template.format(**values) if values else template
    return attach_particles(text) if language == "ko" else text


def tr(key: str, **values: object) -> str:
    """The text for `key` in the current user's language."""
    return translate(current_language(), key, **values)
