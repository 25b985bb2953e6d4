"""Per-user state has one owner (issue 37): ui/session.py is the only module of ui/, app_pages/ and app.py that names
Streamlit's session state, and a shared widget's key is written once, where its spec is declared; every other module
reads and writes the view through the specs (WidgetSpec.get/set) and the rest through the typed session object."""
from __future__ import annotations

import ast
from pathlib import Path

from serving import warmup
from ui.session import SESSION_KEY, LabSession, WidgetKey, lab_session
from ui.specs import KEPT_ONLY, SPECS
from ui.state import MODEL

ROOT = Path(__file__).resolve().parents[1]
OWNER = ROOT / "ui" / "session.py"
# Where a literal key may stand: an argument of the call that declares the widget (its spec, or its WidgetKey).
DECLARING_CALLS = {"WidgetSpec", "WidgetKey", "seed_spec", "_switch"}


def _app_files() -> list[Path]:
    return sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "app_pages").rglob("*.py"), ROOT / "app.py"])


def test_only_the_session_module_names_the_session_state():
    offending = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                 for path in _app_files() if path != OWNER
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
                 if "session_state" in line]
    assert not offending, "outside ui/session.py:\n" + "\n".join(offending)


def test_only_the_specs_and_the_views_resolution_hold_the_widgets_mapping():
    """widget_values() hands out the session's widget values themselves (issue 54): the specs read and write through it,
    and the view's resolution reads a whole view from it; a page asks a spec instead (its value, its choices, whether it
    is drawn)."""
    allowed = {ROOT / "ui" / name for name in ("session.py", "widget_spec.py", "share.py", "view.py")}
    offending = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in _app_files() if path not in allowed
                 for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                 if isinstance(node, ast.Name) and node.id == "widget_values"]
    assert not offending, "widget_values() outside the specs and the view's resolution:\n" + "\n".join(offending)


def _declared_literals(tree: ast.Module) -> set[int]:
    """ids of the string constants that declare a key: arguments of a declaring call, or the value of a module-level
    constant (NAME = "key", or a tuple of them), which names the key once for its spec or WidgetKey."""
    allowed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in DECLARING_CALLS:
                allowed |= {id(arg) for arg in [*node.args, *(keyword.value for keyword in node.keywords)]}
    for node in tree.body:
        if isinstance(node, ast.Assign) and all(isinstance(target, (ast.Name, ast.Tuple)) for target in node.targets):
            allowed |= {id(value) for value in ast.walk(node.value) if isinstance(value, ast.Constant)}
    return allowed


def test_a_shared_widgets_key_is_written_only_where_it_is_declared():
    """Checked for the keys that are not also a link name: where a key and its link name are the same text (sentence,
    lang, pe_k), the link name is read by that text on purpose (a lesson stop's state, ui.specs.SPECS[name])."""
    keys = ({spec.key for spec in SPECS.values()} | set(KEPT_ONLY)) - set(SPECS)
    offending = []
    for path in _app_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        allowed = _declared_literals(tree)
        offending += [f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and node.value in keys and id(node) not in allowed]
    assert not offending, "a widget key written outside its declaration (use the spec):\n" + "\n".join(offending)


def test_the_warm_up_picks_models_in_the_sidebars_model_widget():
    """serving/warmup.py drives the sidebar's model choice from outside the app (the launcher never imports the app's
    Streamlit modules), so it names the key itself: the MODEL spec's."""
    assert warmup.MODEL_CHOICE == MODEL.key


def test_the_session_object_is_one_key_made_on_first_use_and_widgets_are_read_by_their_key(monkeypatch):
    import streamlit as st

    state: dict = {}
    monkeypatch.setattr(st, "session_state", state)
    session = lab_session()
    assert isinstance(session, LabSession) and list(state) == [SESSION_KEY]
    session.lesson.answers["intro:1"] = "3"
    assert lab_session() is session and lab_session().lesson.answers == {"intro:1": "3"}
    MODEL.set("bahdanau_en-fr")
    WidgetKey("vocab_add").set("cat")
    assert state[MODEL.key] == "bahdanau_en-fr" and MODEL.get() == "bahdanau_en-fr" and MODEL.is_set()
    assert WidgetKey("vocab_add").get() == "cat"
    MODEL.forget()
    assert not MODEL.is_set() and MODEL.get() is None and MODEL.get({MODEL.key: "x"}) == "x"
    monkeypatch.setattr(st, "session_state", {})  # another user's session starts empty
    assert lab_session().lesson.answers == {}


def test_every_fragment_is_guarded_by_one_decorator():
    """A fragment's own rerun skips run_app and its page guard: every fragment of the app is made by
    ui.errors.lab_fragment (ui.share.view_fragment for a view's), never by st.fragment by hand."""
    owner = ROOT / "ui" / "errors.py"
    offending = []
    for path in _app_files():
        if path == owner:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "fragment" and getattr(node.value, "id", "") == "st":
                offending.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offending, "st.fragment outside ui/errors.lab_fragment:\n" + "\n".join(offending)
