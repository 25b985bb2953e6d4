"""A TOML writer for the subset lesson files use (the lock has no TOML writer; tomllib only reads): tables, arrays of
tables, inline tables, arrays, texts, whole and finite numbers, true/false. Pure Python, no Streamlit.

What it writes reads back with tomllib as the same data (tests/test_lesson_builder.py round-trips it). A table whose
values are all short enough to stay on one line is written inline (`title = { en = "...", ko = "..." }`, `state`);
a table holding a text of several lines or a nested table of its own gets a header (`[stop.question]`), and a list of
tables is an array of tables (`[[stop]]`), as the shipped lessons are written by hand."""
from __future__ import annotations

import math
import re
from collections.abc import Mapping

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
INLINE_CHARS = 100  # a table with tables or lists inside is written inline up to this length
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _key(key: str) -> str:
    if not isinstance(key, str):
        raise TypeError(f"a TOML key is a text, not {type(key).__name__}")
    return key if _BARE_KEY.fullmatch(key) else _text(key)


def _escaped(text: str, keep_newlines: bool = False) -> str:
    out = []
    for char in text:
        if keep_newlines and char == "\n":
            out.append(char)
        elif char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return "".join(out)


def _text(text: str) -> str:
    """A basic string on one line (every control character escaped)."""
    return f'"{_escaped(text)}"'


def _long_text(text: str) -> str:
    """A multi-line basic string: the newline after the opening quotes is not part of the text; every quote is
    escaped, so no run of three ends it early."""
    return f'"""\n{_escaped(text, keep_newlines=True)}"""'


def _is_table_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, Mapping) for item in value)


def _one_line(value: object) -> bool:
    """Whether the value may be written inline: no text of several lines, and a table only of such values."""
    if isinstance(value, str):
        return "\n" not in value
    if isinstance(value, Mapping):
        return all(_one_line(item) for item in value.values())
    if isinstance(value, list):
        return all(_one_line(item) for item in value)
    return True


def _inline(table: Mapping) -> bool:
    """A table written inline: one of plain values (a text by language, a stop's state), or a short one (a
    question's args); a longer one with tables inside gets its own header."""
    if not _one_line(table):
        return False
    plain = all(not isinstance(v, (Mapping, list)) for v in table.values())
    return plain or len(_value(table)) <= INLINE_CHARS


def _value(value: object) -> str:
    """A value written inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("TOML lesson files hold finite numbers only")
        return repr(value)
    if isinstance(value, str):
        return _long_text(value) if "\n" in value else _text(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"TOML lesson files hold no {type(value).__name__}")


def _table(path: tuple[str, ...], table: Mapping, lines: list[str]) -> None:
    """The table's plain values, then its sub-tables and arrays of tables (TOML wants them after)."""
    headed = {k: v for k, v in table.items() if (isinstance(v, Mapping) and v and not _inline(v)) or _is_table_list(v)}
    for key, value in table.items():
        if key not in headed:
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in headed.items():
        inner = (*path, _key(key))
        if isinstance(value, Mapping):
            lines += ["", f"[{'.'.join(inner)}]"]
            _table(inner, value, lines)
        else:
            for item in value:
                lines += ["", f"[[{'.'.join(inner)}]]"]
                _table(inner, item, lines)


def write_toml(data: Mapping) -> str:
    """The data as TOML text that tomllib reads back as equal data."""
    lines: list[str] = []
    _table((), data, lines)
    return "\n".join(lines).lstrip("\n") + "\n"
