"""The layer table: every import of the product runs down it, never up (issue 54). One place says which room is above
which; an import from a lower room into a higher one fails here by file and line, imports inside functions and under
`if TYPE_CHECKING:` counted (a circle hides that way: tests/test_import_graph.py). docs/development.md draws it.

A room is a folder or file at the project's top, or one inside ui/: ui/ stands on floors of its own, a room per
feature (like a Flask blueprint) over the ui core, which is every other module of ui/. A file belongs to the most
specific room that holds it (ui/lessons/questions.py to ui/lessons, ui/share.py to the core). A folder of ui/ is a room
of the table or the core's by name (UI_CORE_FOLDERS), so a new one is placed on a floor on purpose. The spec registry
(ui/specs/__init__.py) loads each room's spec modules by listing its folder, not by an import statement: they are the
room's declaration to the core, as a model family's adapter registers itself; the table holds their own imports like
every module's.

Rooms on one floor do not import each other either (classroom and viz know nothing of one another). KNOWN_UPWARD lists
the upward imports of today that are yet to move, each with where it should go: the list only shrinks (an entry that
no longer exists fails too, so it is taken off when its import is).

From runtime/ down, no floor imports Streamlit at all: what only a script run knows (whose turn a job takes, whether
a session is alive) ui/ hands in. Above it, Streamlit is used through its public API (`import streamlit as st`, its
DeltaGenerator type); whatever else of it the product reaches is reached in serving/internals.py alone."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Top to bottom: a room imports only rooms on lower floors (and the libraries).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("app.py", "asgi.py", "serve.py", "app_pages"),  # the entries: what `streamlit run` and serve.py start
    ("ui/run.py",),  # the run's one order: the link, the navigation, the lesson bar, the sidebar, the page, the address
    ("ui/lesson_bar",  # the lesson bar and opening a stop: the guided lesson, and in a class the class's parts
     "ui/lesson_builder"),  # a teacher's own lessons: a view added as a stop, the builder on the Teacher page
    ("ui/live_class",  # the live class: the Teacher page, peer instruction, a student's class question, the watch
     "ui/llm_heads"),  # the LLM heads page: sinks, induction heads, the attention explorer's finder on SmolLM2
    ("ui/lessons", "ui/attention", "ui/llm", "ui/train"),  # the guided lesson's files, questions, claims, measures;
    # the attention explorer; the LLM page; the train page
    ("ui",),  # the ui core: the session, state, language, presenter mode, charts, links, the View, widget specs,
    # errors, the loose pages' views
    ("serving",),  # the server around Streamlit: the gateway, the seat, the class's version route, HAProxy, warm-up
    ("runtime",),  # what a replica's sessions share, Streamlit-free: result store, fair queues, page slots, trainings
    ("classroom", "viz"),  # the class store and lessons; the charts (both Streamlit-free)
    ("model",),  # the models, their analyses and their references
    ("i18n",),  # the words
)
UI_CORE_FOLDERS = ("ui/specs",)  # folders of ui/ that are the core's, not rooms: the spec registry and its modules
STREAMLIT_FREE = LAYERS.index(("runtime",))  # this floor and every one below it
# (importing file, imported module): upward today, and where each goes (issue 54's floor plan).
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _parts(path_or_module: str) -> tuple[str, ...]:
    """'ui/lessons/bar.py', 'ui/lessons' and 'ui.lessons.bar' as ('ui', 'lessons', ...)."""
    name = path_or_module.replace("\\", "/").removesuffix(".py")
    return tuple(name.split("/") if "/" in name else name.split("."))


ROOMS: dict[tuple[str, ...], tuple[str, int]] = {
    _parts(name): (name, index) for index, rooms in enumerate(LAYERS) for name in rooms}


def _room_and_floor(path_or_module: str) -> tuple[str, int] | None:
    """The most specific room of the table that holds a file path or a dotted module, and its floor; None outside."""
    parts = _parts(path_or_module)
    return next((ROOMS[parts[:end]] for end in range(len(parts), 0, -1) if parts[:end] in ROOMS), None)


def floor(path_or_module: str) -> int | None:
    """The floor (0 = top) of a file path or a dotted module; None outside the product (a library)."""
    found = _room_and_floor(path_or_module)
    return None if found is None else found[1]


def room(path_or_module: str) -> str:
    """The table's room of a file path or a dotted module ('ui/lessons', 'ui' for the core); a library's top name."""
    found = _room_and_floor(path_or_module)
    return _parts(path_or_module)[0] if found is None else found[0]


def product_files() -> list[Path]:
    tops = [name for rooms in LAYERS for name in rooms if "/" not in name]
    files = [ROOT / name for name in tops if name.endswith(".py")]
    return files + sorted(path for name in tops if not name.endswith(".py") for path in (ROOT / name).rglob("*.py"))


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """(line, module) of every import in the file, at module level, in functions and under TYPE_CHECKING: `from a
    import b` is a.b when b is a module of the project (`from ui import lessons`); a relative import is resolved
    from `name`, where the file stands in the project (default: where it is)."""
    package = list(_parts(name or path.relative_to(ROOT).as_posix()))[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if module:
                found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}".lstrip(".")) for alias in node.names
                      if _is_module(f"{module}.{alias.name}".lstrip("."))]
    return found


def wrong_way(files: list[Path], names: list[str] | None = None) -> list[tuple[str, int, str]]:
    """(file, line, module) of each import from a floor to a higher one, or to another room of its own floor; `names`:
    where each file stands in the project (default: where it is)."""
    wrong = []
    for path, name in zip(files, names or [path.relative_to(ROOT).as_posix() for path in files], strict=True):
        here = floor(name)
        for line, module in imports_of(path, name):
            there = floor(module)
            if there is None or here is None or room(module) == room(name):
                continue
            if there <= here:
                wrong.append((name, line, module))
    return wrong


def streamlit_imports(files: list[Path], names: list[str] | None = None) -> list[tuple[str, int, str]]:
    """(file, line, module) of each import of Streamlit (its script layer or its internals) from the Streamlit-free
    floors; `names` as in wrong_way."""
    found = []
    for path, name in zip(files, names or [path.relative_to(ROOT).as_posix() for path in files], strict=True):
        here = floor(name)
        if here is not None and here >= STREAMLIT_FREE:
            found += [(name, line, module) for line, module in imports_of(path, name) if room(module) == "streamlit"]
    return found


def test_the_table_finds_an_upward_import_by_file_and_line(tmp_path):
    planted = tmp_path / "planted.py"  # as if it were model/planted.py: a function-level import of the page layer
    planted.write_text("import torch\nfrom model.llama import LlamaModel\ndef f():\n"
                       "    from ui.presenter import presenting\n    import viz.attention\n")
    assert wrong_way([planted], ["model/planted.py"]) == [("model/planted.py", 4, "ui.presenter"),
                                                          ("model/planted.py", 5, "viz.attention")]
    assert wrong_way([planted], ["ui/planted.py"]) == []  # the same imports from the page layer run down
    assert floor("app_pages/attention.py") == 0 and floor("i18n") == len(LAYERS) - 1 and floor("torch") is None


def test_the_table_finds_an_upward_import_between_the_rooms_of_ui(tmp_path):
    planted = tmp_path / "planted.py"  # as if it were in the guided lesson's room: the live class, three ways
    planted.write_text("from typing import TYPE_CHECKING\nfrom ui.state import shared_analysis\nif TYPE_CHECKING:\n"
                       "    from ui.live_class.classroom import teacher_class\ndef f():\n    import ui.lesson_bar.bar\n"
                       "    from ui import live_class\n    from ..attention import view\n")
    assert wrong_way([planted], ["ui/lessons/planted.py"]) == [
        ("ui/lessons/planted.py", 4, "ui.live_class.classroom"), ("ui/lessons/planted.py", 6, "ui.lesson_bar.bar"),
        ("ui/lessons/planted.py", 7, "ui.live_class"), ("ui/lessons/planted.py", 8, "ui.attention"),
        ("ui/lessons/planted.py", 8, "ui.attention.view")]  # the explorer is on the lesson's floor: a sideways import
    assert wrong_way([planted], ["ui/lesson_bar/planted.py"]) == []  # the bar stands above them all
    # the core stands below every room of ui/ (its `..` would climb out of the project), the run's order above them
    assert [module for _, _, module in wrong_way([planted], ["ui/planted.py"])] == [
        "ui.live_class.classroom", "ui.lesson_bar.bar", "ui.live_class"]
    assert wrong_way([planted], ["ui/run.py"]) == []
    assert room("ui/lessons/questions.py") == room("ui.lessons.catalogue") == "ui/lessons"
    assert room("ui/share.py") == room("ui.specs.common") == room("ui") == "ui" and room("ui.run") == "ui/run.py"
    assert floor("ui/run.py") < floor("ui.lesson_bar.bar") < floor("ui.live_class") < floor("ui.lessons") < floor("ui")


def test_every_folder_of_ui_is_a_room_or_the_core_s():
    """A new folder of ui/ joins the table (or the core, by name), so it is placed on a floor on purpose; a room of
    the table that is gone is taken off it."""
    folders = {path.parent.relative_to(ROOT).as_posix() for path in (ROOT / "ui").glob("*/__init__.py")}
    table = {name for rooms in LAYERS for name in rooms if name.startswith("ui/")}
    assert folders - set(UI_CORE_FOLDERS) - table == set(), "a folder of ui/ not on the table (tests/test_layers.py)"
    assert {name for name in table | set(UI_CORE_FOLDERS) if not (ROOT / name).exists()} == set()


def test_every_import_runs_down_the_layer_table():
    files = product_files()
    assert len(files) > 200 and all(floor(path.relative_to(ROOT).as_posix()) is not None for path in files)
    wrong = wrong_way(files)
    new = [f"{name}:{line} imports {module}" for name, line, module in wrong if (name, module) not in KNOWN_UPWARD]
    assert new == [], "imports up the layer table (tests/test_layers.py, docs/development.md):\n" + "\n".join(new)
    moved = set(KNOWN_UPWARD) - {(name, module) for name, _, module in wrong}
    assert not moved, f"no longer imported: take them off KNOWN_UPWARD: {sorted(moved)}"


def test_the_table_finds_a_streamlit_import_below_serving(tmp_path):
    planted = tmp_path / "planted.py"  # as if it were runtime/planted.py: the script run's context, read in a function
    planted.write_text("import threading\ndef f():\n    from streamlit.runtime.scriptrunner import get_script_run_ctx\n")
    assert streamlit_imports([planted], ["runtime/planted.py"]) == [
        ("runtime/planted.py", 3, "streamlit.runtime.scriptrunner")]
    assert streamlit_imports([planted], ["serving/planted.py"]) == []  # serving/ wraps Streamlit's server


def test_nothing_from_runtime_down_imports_streamlit():
    found = [f"{name}:{line} imports {module}" for name, line, module in streamlit_imports(product_files())]
    assert found == [], "Streamlit below serving/ (tests/test_layers.py, docs/development.md):\n" + "\n".join(found)


# Streamlit's public Python API; every other Streamlit module is imported by INTERNALS_DOOR only.
PUBLIC_STREAMLIT = {"streamlit", "streamlit.delta_generator"}
INTERNALS_DOOR = "serving/internals.py"


def streamlit_internals(files: list[Path], names: list[str] | None = None) -> list[tuple[str, int, str]]:
    """(file, line, module) of each import of a Streamlit module outside its public API (`from streamlit import
    runtime` counts as streamlit.runtime) by a file other than INTERNALS_DOOR; `names` as in wrong_way."""
    found = []
    for path, name in zip(files, names or [path.relative_to(ROOT).as_posix() for path in files], strict=True):
        if name == INTERNALS_DOOR:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            modules = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = ([f"streamlit.{alias.name}" for alias in node.names] if node.module == "streamlit"
                           else [node.module])
            found += [(name, node.lineno, module) for module in modules
                      if room(module) == "streamlit" and module not in PUBLIC_STREAMLIT]
    return found


def test_the_door_finds_a_streamlit_internal_reached_elsewhere(tmp_path):
    planted = tmp_path / "planted.py"  # as if it were ui/planted.py: the runtime, once as a module, once by name
    planted.write_text("import streamlit as st\nfrom streamlit.delta_generator import DeltaGenerator\n"
                       "def f():\n    from streamlit import runtime\n    from streamlit.proto.BackMsg_pb2 import BackMsg\n")
    assert streamlit_internals([planted], ["ui/planted.py"]) == [
        ("ui/planted.py", 4, "streamlit.runtime"), ("ui/planted.py", 5, "streamlit.proto.BackMsg_pb2")]
    assert streamlit_internals([planted], [INTERNALS_DOOR]) == []


def test_streamlit_s_internals_are_reached_through_one_door():
    found = [f"{name}:{line} imports {module}" for name, line, module in streamlit_internals(product_files())]
    assert found == [], f"Streamlit's internals outside {INTERNALS_DOOR}:\n" + "\n".join(found)


# Rooms that say nothing in the interface's words: they return values and Phrase (classroom/measures/registry.py), and
# the page words them in the reader's language (issue 54 item 4).
WORDLESS = ("classroom", "model", "viz")


def test_the_domain_writes_no_interface_text():
    files = [path for room_name in WORDLESS for path in (ROOT / room_name).rglob("*.py")]
    assert len(files) > 50
    found = [f"{path.relative_to(ROOT)}:{line} imports {module}" for path in files for line, module in imports_of(path)
             if room(module) == "i18n"]
    assert found == [], "the domain words its own results:\n" + "\n".join(found)


ENTRY_POINTS = {"main"}  # a script's own `main`, one per script that runs as one


def test_each_public_name_is_defined_in_one_module():
    """A reader who meets a name finds one definition of it: no two product modules define the same public top-level
    function or class (a wrapper says what it adds: ui.state.shared_analysis over model/inspect.analyse)."""
    places: dict[str, list[str]] = {}
    for path in product_files():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                places.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    twice = {name: where for name, where in places.items() if len(where) > 1 and name not in ENTRY_POINTS}
    assert not twice, twice
