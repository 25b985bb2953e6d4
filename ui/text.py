"""Safe display of user text: nothing a user typed is interpreted as markdown, HTML or LaTeX."""
from __future__ import annotations

import re

MAX_INPUT_CHARS = 2000
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every character Streamlit's markdown could interpret; drop control characters."""
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def check_sentence(text: str | None) -> tuple[str | None, list[str]]:
    """-> (text to analyse or None, notices). Empty or blank input gives None and a prompt."""
    notices = []
    text = text or ""
    if len(text) > MAX_INPUT_CHARS:
        notices.append(f"The text was {len(text):,} characters long; only the first {MAX_INPUT_CHARS:,} are used.")
        text = text[:MAX_INPUT_CHARS]
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    if not cleaned.strip():
        return None, ["Type a sentence (or pick an example) to see its attention."]
    return cleaned, notices
