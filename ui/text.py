"""Safe display of user text: nothing a user typed is interpreted as markdown, HTML or LaTeX."""
from __future__ import annotations

import re

from i18n import tr

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
        notices.append(tr("input.too_long", length=f"{len(text):,}", limit=f"{MAX_INPUT_CHARS:,}"))
        text = text[:MAX_INPUT_CHARS]
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text)
    if not cleaned.strip():
        return None, [tr("input.empty")]
    return cleaned, notices
