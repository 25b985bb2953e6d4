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
    """Every literal key passed to tr()/translate() in the app's code is defined (dynamic keys are tested by use)."""
    english = strings("en")
    pattern = re.compile(r"""\btr\(\s*["']([a-z0-9_]+\.[a-z0-9_.]+)["']""")
    missing = {}
    for path in [ROOT / "app.py", *ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/*.py"), *ROOT.glob("viz/*.py")]:
        for key in pattern.findall(path.read_text(encoding="utf-8")):
            if key not in english:
                missing.setdefault(path.name, []).append(key)
    assert not missing, missing


def test_unknown_key_is_an_error_and_values_are_not_templates():
    with pytest.raises(KeyError):
        translate("en", "no_such.key")
    # A value that looks like a template is shown as it is, never expanded.
    assert "{model}" in translate("en", "sidebar.caption", model="{model}", task="t", device="CPU")


@pytest.mark.parametrize("page", APP_PAGES)
def test_language_switch_changes_the_page(page):
    """The same page in English and Korean: the Korean title is Korean, and the sidebar follows."""
    titles = {}
    for language in LANGUAGES:
        at = open_page(page, lang=language, sentence="i am a student")
        titles[language] = at.title[0].value
        assert at.sidebar.text_input[0].label == translate(language, "sidebar.sentence")
    assert titles["en"] != titles["ko"] and HANGUL.search(titles["ko"]), titles
