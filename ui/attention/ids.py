"""The attention page's stable ids (links, lesson files and tests use them; only their display is translated).

Streamlit-free, so ui/share.py and the page's spec can read them without importing the page's drawing code.
"""
from __future__ import annotations

from i18n import tr

VIEWS = ("Head", "All heads", "Compare", "Statistics", "Ablation", "Rescale", "Explain", "Find heads",
         "Two texts")  # the page's views
VIEW_KEYS = dict(zip(VIEWS, ("head", "grid", "compare", "statistics", "ablation", "rescale", "explain", "find",
                             "pair")))
# attention kind id -> the tr() key of its name
KINDS = {"encoder_self": "attention.kinds.encoder_self", "decoder_self": "attention.kinds.decoder_self",
         "cross": "attention.kinds.cross"}


def rescale_options(d_k: int) -> list[float]:
    """The Rescale view's multiples of the trained 1/√d_k; √d_k itself (no division at all) sits among them."""
    return [0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, round(d_k ** 0.5, 2), 8.0, 16.0]


def attention_kind_label(kind: str) -> str:
    """An attention kind's name in the reader's language."""
    return tr(KINDS[kind])
