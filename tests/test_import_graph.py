"""Nothing imports in a circle: ui/ modules import in a fresh interpreter, and the graph of imports between the
project's own modules (built with ast) has no cycle, so a new circle fails here by name instead of as a
half-initialised module somewhere at run time.

Imports inside functions count too: a function-level import is how a circle hides (ui.share and
ui.attention_view imported each other that way). Only `if TYPE_CHECKING:` blocks, which never run, are left out."""
import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ui", "model", "viz", "i18n", "classroom", "serving")


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
        elif isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            pending += node.orelse  # the annotations-only branch never runs
        else:
            pending += list(ast.iter_child_nodes(node))
    return names


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports."""
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    modules = {_module_name(path): path for path in files}
    return {name: {imported for imported in _imports(ast.parse(path.read_text(encoding="utf-8")))
                   if imported in modules and imported != name}
            for name, path in modules.items()}


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


def test_the_cycle_finder_finds_a_circle_and_only_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_project_graph_is_read_from_the_real_imports():
    graph = import_graph()
    assert "ui.specs" in graph["ui.share"] and "ui.attention_ids" in graph["ui.specs.attention"]
    assert "ui.explain_view" in graph["ui.attention_view"]  # it draws the Explain view
    assert "ui.attention_view" not in graph["ui.explain_view"]  # ... which names AttentionMaps for annotations only
    assert "streamlit" not in graph and "streamlit" not in graph["ui.share"]  # only the project's own modules


def test_no_module_imports_in_a_circle():
    assert find_cycle(import_graph()) is None


def test_ui_and_its_streamlit_free_ids_import_in_a_fresh_interpreter():
    ui_modules = sorted(_module_name(path) for path in (ROOT / "ui").glob("*.py"))
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\nprint('ok')"
    result = subprocess.run([sys.executable, "-c", code, *ui_modules], cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-2000:]
    ids = subprocess.run([sys.executable, "-c", "import sys, ui.attention_ids, model.foundations.scaling; "
                          "print('streamlit' in sys.modules)"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ids.stdout.strip() == "False", ids.stderr[-2000:]
