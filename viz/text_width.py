"""How wide a line of text is drawn, in px, without a browser: a width per character class, in em.

The classes' widths were measured on DejaVu Sans (PIL's ImageFont.getlength at 100 px), the widest of the sans fonts
a Debian browser falls back on for plotly's "Open Sans, verdana, arial, sans-serif": a label judged to fit does fit
in a narrower font. Hangul and CJK characters take a full em (NanumGothic measures 0.94)."""
from __future__ import annotations

import unicodedata

NARROW = frozenset("iljIt.,:;'!|()[]{}fr`\"")  # 0.28-0.41 em
WIDE_LOWER, WIDE_UPPER = frozenset("mw"), frozenset("MW")
EM = {"space": 0.32, "narrow": 0.36, "lower": 0.61, "wide_lower": 0.90, "upper": 0.70, "wide_upper": 0.93,
      "digit": 0.64, "full": 1.0, "other": 0.84}


def char_class(char: str) -> str:
    if char.isspace():
        return "space"
    if char in NARROW:
        return "narrow"
    if char in WIDE_LOWER:
        return "wide_lower"
    if char in WIDE_UPPER:
        return "wide_upper"
    if char.isascii() and char.isdigit():
        return "digit"
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return "full"
    if char.isascii() and char.islower():
        return "lower"
    if char.isascii() and char.isupper():
        return "upper"
    if char.isalpha():  # accented Latin, Greek, Cyrillic: as wide as their plain letters, roughly
        return "upper" if char.isupper() else "lower"
    return "other"  # symbols: <, #, ▁, Ġ, …


def text_width(text: str, font_px: float) -> float:
    """px that `text` takes on one line at `font_px` (a slight overestimate: see the module's note)."""
    return font_px * sum(EM[char_class(char)] for char in text)
