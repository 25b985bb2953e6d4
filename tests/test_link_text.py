"""Text from a link or a file name is shown as text: no link, image, autolink, HTML or shortcode is rendered from
it, and the page fetches nothing from outside the app (ui/text.escape_markdown; ui/lesson_bar's notices)."""
import re

from tests.bad_inputs import load_bad_inputs
from ui.text import escape_markdown

BAD_INPUTS = load_bad_inputs()
# What Streamlit's markdown (remark-gfm, remark-emoji, its icon and directive plugins) finds in a text node, that
# is, once the backslash escapes are read: autolink literals, e-mail addresses, :shortcodes: and :material/icons:.
AUTOLINK = re.compile(r"(?i)(https?://|www\.)[-.\w]|[-.\w+]+@[-\w]+(\.[-\w]+)+")
SHORTCODE = re.compile(r":[\w+-][\w+-]*:|:material/")


def as_text_node(markdown: str) -> str:
    """The text CommonMark reads from markdown that holds no markup: a backslash before punctuation is taken out."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def test_escaped_text_holds_no_autolink_shortcode_or_icon():
    cases = BAD_INPUTS + ["see http://evil.example", "HTTPS://evil.example", "WWW.evil.example", "a@evil.example",
                          ":smile:", ":material/home:", ":+1:", "www.www.evil.example", "<https://evil.example>"]
    for text in cases:
        escaped = escape_markdown(text)
        assert ":material/" not in escaped, escaped  # Streamlit rewrites this in the source, before parsing
        shown = as_text_node(escaped)
        assert not AUTOLINK.search(shown) and not SHORTCODE.search(shown), (text, escaped)
        assert shown.replace("\u034f", "") == "".join(ch if ch.isprintable() else " " for ch in text)
