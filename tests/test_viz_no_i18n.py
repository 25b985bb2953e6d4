"""viz/ holds no language: no module of it imports i18n or calls tr(), every chart's words come from its caller
(viz/words.Words, built by ui.language.words_for), and nothing chooses a language when it is imported."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from i18n import LANGUAGES, strings, translate, using_language
from ui.language import words_for

ROOT = Path(__file__).resolve().parents[1]
VIZ = sorted((ROOT / "viz").glob("*.py"))


def _language_uses(path: Path) -> list[str]:
    """Each import of i18n and each call of tr() or translate() in a module, as 'line: what'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] == "i18n"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "i18n":
            found.append(f"{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in ("tr", "translate", "current_language"):
                found.append(f"{node.lineno}: {name}()")
    return found


def test_no_viz_module_imports_i18n_or_calls_tr():
    uses = {path.name: found for path in VIZ if (found := _language_uses(path))}
    assert not uses, uses


def test_the_check_sees_a_tr_call_and_an_i18n_import(tmp_path):
    """The check above can fail: a builder that asks tr() for its words is caught, by line."""
    module = tmp_path / "chart.py"
    module.write_text("from i18n import tr\n\ndef title():\n    return tr('attention.chart.weight')\n")
    assert _language_uses(module) == ["1: from i18n import ...", "4: tr()"]


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_words_say_what_tr_says(language):
    """A builder's words are tr()'s, Korean particles included, for every key of the tables asked for."""
    with using_language(language):
        words = words_for("attention", "llm_explain")
    keys = [key for key in strings(language) if key.startswith(("attention.", "llm_explain."))]
    assert keys and all(words(key) == translate(language, key) for key in keys)
    assert words("attention.chart.layer_head", layer=8, head=2) == translate(language, "attention.chart.layer_head",
                                                                             layer=8, head=2)
    with pytest.raises(KeyError):  # a key outside its tables is a programming error, as tr()'s unknown key is
        words("positional.chart.value")


def test_words_compare_by_language_and_tables():
    """Words are part of a figure's inputs: equal for one language, different across languages."""
    with using_language("ko"):
        korean = words_for("positional")
    assert words_for("positional") == words_for("positional") != korean
    assert hash(words_for("positional")) == hash(words_for("positional"))


@pytest.mark.slow
def test_importing_the_app_sets_no_language():
    """Importing every ui/ module installs no language provider: run_app does, at the start of each run."""
    code = ("import importlib, pathlib, i18n\n"
            "default = i18n._language_provider\n"
            "for path in sorted(pathlib.Path('ui').rglob('*.py')):\n"
            "    importlib.import_module('.'.join(path.with_suffix('').parts).removesuffix('.__init__'))\n"
            "assert i18n._language_provider is default, i18n._language_provider\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
