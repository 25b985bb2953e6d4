"""Both languages have every string, with the same values shown; code only asks for keys that exist; every page
switches language."""
import re
from pathlib import Path

import pytest

from i18n import LANGUAGES, placeholders, strings, translate
from tests.app_links import APP_PAGES, open_page

ROOT = Path(__file__).resolve().parents[1]
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def test_every_key_exists_in_every_language_with_the_same_placeholders():
    english = strings("en")
    for language in LANGUAGES:
        other = strings(language)
        assert set(other) == set(english), f"{language}: missing {set(english) - set(other)}, " \
                                           f"extra {set(other) - set(english)}"
        for key, template in english.items():
            assert placeholders(other[key]) == placeholders(template), f"{language} {key}: placeholders differ"
            assert other[key].strip(), f"{language} {key} is empty"


def test_korean_strings_are_translated():
    """A Korean string that is a sentence in English must contain Hangul (catches copied, untranslated text)."""
    untranslated = [key for key, text in strings("ko").items()
                    if len(re.findall(r"[A-Za-z]{3,}", strings("en")[key])) >= 3 and not HANGUL.search(text)]
    assert not untranslated, untranslated


def test_code_asks_only_for_keys_that_exist():
    """Every literal key passed to tr()/translate() in the app's code, or to a chart's words() in viz/, is defined
    (dynamic keys are tested by use)."""
    english = strings("en")
    pattern = re.compile(r"""\b(?:tr|words)\(\s*["']([a-z0-9_]+\.[a-z0-9_.]+)["']""")
    missing = {}
    for path in [ROOT / "app.py", *ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("viz/*.py")]:
        for key in pattern.findall(path.read_text(encoding="utf-8")):
            if key not in english:
                missing.setdefault(path.name, []).append(key)
    assert not missing, missing


def test_unknown_key_is_an_error_and_values_are_not_templates():
    with pytest.raises(KeyError):
        translate("en", "no_such.key")
    # A value that looks like a template is shown as it is, never expanded.
    assert "{model}" in translate("en", "sidebar.caption", model="{model}", task="t", device="CPU")


@pytest.mark.slow  # every page opened in both languages: the full suite runs it, make fast leaves it out
@pytest.mark.parametrize("page_name", APP_PAGES)
def test_language_switch_changes_the_page(page_name):
    """The same page in English and Korean: the Korean title is Korean, and the sidebar follows."""
    titles = {}
    for language in LANGUAGES:
        at = open_page(page_name, lang=language, sentence="i am a student")
        titles[language] = at.title[0].value
        assert at.sidebar.text_input[0].label == translate(language, "sidebar.sentence")
    assert titles["en"] != titles["ko"] and HANGUL.search(titles["ko"]), titles


def _glossary() -> list[tuple[str, str, list[str]]]:
    """i18n/ko/GLOSSARY.md's table: (English, the Korean rendering, the renderings not to use as regexes)."""
    rows = []
    for line in (ROOT / "i18n" / "ko" / "GLOSSARY.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        if line.startswith("|") and len(cells) == 4 and cells[0] not in ("English", "---|---|---|---"):
            rows.append((cells[0], cells[1], re.findall(r"`([^`]+)`", cells[2])))
    return rows


def _korean_lesson_texts(node, inside_ko: bool = False):
    """Every string under a `ko` key of a parsed lesson file."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _korean_lesson_texts(value, inside_ko or key == "ko")
    elif isinstance(node, list):
        for value in node:
            yield from _korean_lesson_texts(value, inside_ko)
    elif isinstance(node, str) and inside_ko:
        yield node


def _korean_texts() -> dict[str, str]:
    """where -> Korean text: every key of i18n/ko/*.toml and the Korean of lessons/*.toml."""
    import tomllib

    texts = {f"i18n {key}": text for key, text in strings("ko").items()}
    for path in sorted((ROOT / "lessons").glob("*.toml")):
        lesson = tomllib.loads(path.read_text(encoding="utf-8"))
        texts.update({f"{path.name} #{n}": text for n, text in enumerate(_korean_lesson_texts(lesson))})
    return texts


def test_each_glossary_term_has_one_korean_rendering_everywhere():
    """i18n/ko/GLOSSARY.md: no Korean text uses a rendering of a term other than the glossary's (지도 for an
    attention map, 교차 for cross-attention...), and each rendering of the glossary is used."""
    glossary, texts = _glossary(), _korean_texts()
    assert len(glossary) >= 15 and all(not_to_use for _, _, not_to_use in glossary)
    assert any(where.startswith("intro.toml") for where in texts)  # the lessons' Korean is read too
    everything = "\n".join(texts.values())
    for english, korean, not_to_use in glossary:
        for rendering in korean.split(" / "):
            assert rendering in everything, f"{english}: {rendering} is used nowhere"
        for pattern in not_to_use:
            found = [f"{where}: …{text[max(m.start() - 20, 0):m.end() + 20]}…" for where, text in texts.items()
                     for m in [re.search(pattern, text)] if m]
            assert not found, f"{english} is {korean}, not /{pattern}/: {found}"
