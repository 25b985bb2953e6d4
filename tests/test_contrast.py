"""The colours the app sets, at the contrast WCAG asks (issue 31): the theme (.streamlit/config.toml) keeps text and
captions at 4.5:1 (AA) and presenter mode's colours (ui/sidebar.py) reach 7:1 (AAA) on every background they are
drawn on. The browser tests check the pages themselves with axe-core (tests/test_browser_pages_walk.py); this one
names the colour that broke when someone changes one."""
import tomllib
from pathlib import Path

import pytest

from ui.sidebar import DISABLED_LABEL, FOCUS_RING, PRESENTER_COLOURS

ROOT = Path(__file__).resolve().parents[1]
THEME = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
# Streamlit 1.67's light backgrounds: the page, the sidebar, the tint behind a selected segment (the primary colour's,
# measured by axe on the page) and behind an info alert.
WHITE, SIDEBAR, SELECTED_TINT, INFO_TINT = "#ffffff", "#f8f8f7", "#efe2e3", "#edf5ff"
CAPTION_OPACITY = 0.6  # Streamlit draws captions and help text in the text colour at this opacity


def _luminance(colour: str) -> float:
    channels = [int(colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    """WCAG 2.1's contrast ratio of two sRGB colours (#rrggbb)."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _over(colour: str, background: str, opacity: float) -> str:
    mix = [round(int(colour[i:i + 2], 16) * opacity + int(background[i:i + 2], 16) * (1 - opacity))
           for i in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def test_the_formula_matches_wcags_examples():
    assert contrast("#000000", "#ffffff") == pytest.approx(21)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the lightest grey at AA on white
    assert contrast("#828180", "#ffffff") == pytest.approx(3.88, abs=0.01)  # issue 31's caption before the fix


@pytest.mark.parametrize("background", [WHITE, SIDEBAR])
def test_the_themes_text_and_captions_reach_aa(background):
    assert contrast(THEME["textColor"], background) >= 7
    assert contrast(_over(THEME["textColor"], background, CAPTION_OPACITY), background) >= 4.5
    assert contrast(THEME["primaryColor"], background) >= 4.5
    assert contrast(DISABLED_LABEL, background) >= 4.5
    assert contrast(FOCUS_RING, background) >= 3  # a focus ring is a graphic: 3:1 (WCAG 1.4.11)


def test_the_selected_segment_reaches_aa():
    assert contrast(THEME["primaryColor"], SELECTED_TINT) >= 4.5


@pytest.mark.parametrize("background", [WHITE, SIDEBAR, SELECTED_TINT, INFO_TINT])
def test_presenter_modes_colours_reach_aaa(background):
    for name, colour in PRESENTER_COLOURS.items():
        assert contrast(colour, background) >= 7, (name, colour, background)
