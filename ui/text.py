"""Safe display of user text: nothing a user typed is interpreted as markdown, HTML or LaTeX."""
from __future__ import annotations

import re

from i18n import tr

# Characters a text box takes: room for model.llama.MAX_TOKENS = 512 tokens of English prose (SmolLM2's tokenizer
# reads 3.7-4.5 characters a token, so 2,000 stopped such a text near 450), and each model then cuts by tokens.
MAX_INPUT_CHARS = 4000
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'])")
# Streamlit's markdown looks for links (http://..., www...., a@b.c) and shortcodes (:smile:, :material/home:) in the
# text once its backslash escapes are read, so a backslash does not stop them. An invisible mark that is printable
# and no word character (COMBINING GRAPHEME JOINER) after every ':' and '@', and between "www" and its '.', does.
_INVISIBLE_BREAK = "\u034f"
_WWW_DOT = re.compile(r"(?i)(?<=www)(?=\\\.)")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Streamlit's markdown could interpret; drop control characters; break the
    text that Streamlit would turn into a link, an emoji or an icon (:smile:, http://, www., a@b.c)."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    text = text.replace(":", ":" + _INVISIBLE_BREAK).replace("@", "@" + _INVISIBLE_BREAK)
    return _WWW_DOT.sub(_INVISIBLE_BREAK, text)


def isolated_markdown(text: str) -> str:
    """A user's text inside a line of Markdown: escaped (escape_markdown) and in a bidi isolate of its own (FSI …
    PDI, added after the escape, which drops every invisible character), so a right-to-left text cannot reorder the
    words and numbers around it."""
    return f"\u2068{escape_markdown(text)}\u2069"


def check_sentence(text: str | None, empty: str = "input.empty") -> tuple[str | None, list[str]]:
    """-> (text to analyse or None, notices). Empty or blank input gives None and the prompt `empty` (a text key:
    a page that is not about a sentence's attention asks in its own words)."""
    notices = []
    text = text or ""
    if len(text) > MAX_INPUT_CHARS:
        notices.append(tr("input.too_long", length=f"{len(text):,}", limit=f"{MAX_INPUT_CHARS:,}"))
        text = text[:MAX_INPUT_CHARS]
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    if not cleaned.strip():
        return None, [tr(empty)]
    return cleaned, notices


def markdown_table(rows: list[dict[str, object]], formats: dict[str, str] | None = None) -> str:
    """rows (one dict a row, the same keys in the same order) as a GitHub-style markdown table, every cell escaped;
    formats: a column's number format ("{:.3f}"), missing values shown as "–". A static table is drawn with the
    page's markdown: no data-grid chunk (1.3 MB of JavaScript) for the browser to fetch, parse and run."""
    formats = formats or {}
    columns = list(rows[0])

    def cell(column: str, value: object) -> str:
        if value is None or (isinstance(value, float) and value != value):  # None or NaN
            return "–"
        shown = formats[column].format(value) if column in formats and isinstance(value, (int, float)) else str(value)
        return escape_markdown(shown)

    numeric = [all(isinstance(row[c], (int, float)) or row[c] is None for row in rows) for c in columns]
    lines = ["| " + " | ".join(escape_markdown(c) for c in columns) + " |",
             "|" + "|".join("---:" if right else "---" for right in numeric) + "|"]
    lines += ["| " + " | ".join(cell(c, row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
