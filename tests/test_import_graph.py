"""Nothing imports in a circle: ui/ modules import in a fresh interpreter, and the graph of imports between the
project's own modules (built with ast) has no cycle, so a new circle fails here by name instead of as a
half-initialised module somewhere at run time.

Imports inside functions count too: a function-level import is how a circle hides (ui.share and
ui.attention.view imported each other that way). So do `if TYPE_CHECKING:` imports: they never run, but a type that
two modules need from each other is a design circle all the same (AttentionMaps once lived in the page module that
drew the Explain view, whose module named it for annotations). A package that imports its modules by listing its
folder (ui.specs) imports each of them."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ui", "runtime", "model", "viz", "i18n", "classroom", "serving")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.Module) -> list[str]:
    """Every name an import statement of the module may import, at module level or inside a function."""
    names, pending = [], [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            pending += list(ast.iter_child_nodes(node))
    return names


def _listed_modules(path: Path, tree: ast.Module, modules: dict[str, Path]) -> list[str]:
    """A package __init__ that imports modules it finds by listing folders (pkgutil.iter_modules): ui.specs reads its
    own folder's modules and each room's spec modules (ui/<room>/specs.py, ui/<room>/*_specs.py)."""
    if path.name != "__init__.py" or "iter_modules" not in ast.unparse(tree):
        return []
    package = _module_name(path)
    rooms = []
    if package == "ui.specs":
        rooms = [_module_name(room) for pattern in ("*/specs.py", "*/*_specs.py")
                 for room in path.parent.parent.glob(pattern)]
    return [name for name in modules if name.rsplit(".", 1)[0] == package and name != package] + rooms


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports."""
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    modules = {_module_name(path): path for path in files}
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = _imports(tree) + _listed_modules(path, tree, modules)
        graph[name] = {module for module in imported if module in modules and module != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None (depth-first search with the path on a stack)."""
    state: dict[str, str] = {}  # "open" while on the path, "done" after

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for child in sorted(graph.get(node, ())):
            if state.get(child) == "open":
                return path[path.index(child):] + [child] if child in path else [node, child]
            if child not in state and (cycle := visit(child, path + [child])):
                return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [start])):
            return cycle
    return None


def test_type_checking_imports_count():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ui.attention.view import X\n")
    assert "ui.attention.view" in _imports(tree)


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_project_graph_is_read_from_the_real_imports():
    graph = import_graph()
    assert "ui.specs" in graph["ui.share"] and "ui.attention.ids" in graph["ui.attention.specs"]
    assert "ui.attention.explain" in graph["ui.attention.view"]  # it draws the Explain view
    assert "ui.attention.maps" in graph["ui.attention.explain"]  # ... which takes the maps from their own module
    assert {"ui.specs.common", "ui.attention.specs", "ui.attention.decoding_specs"} <= graph["ui.specs"]  # listed
    assert "streamlit" not in graph and "streamlit" not in graph["ui.share"]  # only the project's own modules


def test_no_module_imports_in_a_circle():
    assert find_cycle(import_graph()) is None


@pytest.mark.slow
def test_ui_and_the_streamlit_free_modules_import_in_a_fresh_interpreter():
    """Every ui/ module imports; the runtime's modules and ui's Streamlit-free ids do without bringing Streamlit in,
    through any module they import."""
    ui_modules = sorted(_module_name(path) for path in (ROOT / "ui").rglob("*.py"))
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\nprint('ok')"
    result = subprocess.run([sys.executable, "-c", code, *ui_modules], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]
    free = ["ui.attention.ids", "model.foundations.scaling",
            *sorted(_module_name(path) for path in (ROOT / "runtime").rglob("*.py"))]
    without = subprocess.run([sys.executable, "-c", code.replace("'ok'", "'streamlit' in sys.modules"), *free],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert without.stdout.strip() == "False", without.stderr[-2000:]
