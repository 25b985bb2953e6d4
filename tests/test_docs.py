"""The README a newcomer reads and the docs/ pages it links to: the README stays short, every relative link reaches a
file (and a heading) that exists, and every test the security page names exists (issue 39)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SECURITY = ROOT / "docs" / "security.md"
DOC_PAGES = ("classroom.md", "models.md", "deploy.md", "security.md", "development.md")

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
NAMED_TEST = re.compile(r"`((?:tests/)?test_\w+\.py)?(?:::(\w+))?`")


def _prose(markdown: str) -> str:
    """The text a reader follows links in: fenced blocks and inline code left out (a path in backticks is no link)."""
    return CODE_SPAN.sub("", FENCE.sub("", markdown))


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    anchors = set()
    for line in FENCE.sub("", markdown).splitlines():
        if match := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            text = re.sub(r"[^\w\- ]", "", match.group(1).lower().replace("`", ""))
            anchors.add(text.replace(" ", "-"))
    return anchors


def broken_links(page: Path) -> list[str]:
    """Each relative link of `page` whose file, or whose anchor's heading, does not exist."""
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: (not checked offline)
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{page.name}: {target} (no such file)")
        elif anchor and (linked.suffix != ".md" or anchor not in heading_anchors(linked.read_text())):
            broken.append(f"{page.name}: {target} (no such heading)")
    return broken


def defined_tests(file: Path) -> set[str]:
    """The test node names a test file defines, read with ast (nothing imported): `test_x` and `TestY::test_x`."""
    names = set()
    for node in ast.parse(file.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}::{item.name}" for item in node.body
                      if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)}
    return names


def named_tests(markdown: str) -> list[tuple[str, str | None]]:
    """(test file, test name or None) for each `test_x.py`, `test_x.py::test_y` or `::test_y` in backticks; a bare
    `::test_y` belongs to the file named last before it."""
    named, last_file = [], None
    for file, name in NAMED_TEST.findall(markdown):
        if not file and not name:
            continue
        last_file = file.removeprefix("tests/") if file else last_file
        assert last_file, f"`::{name}` before any test file"
        named.append((last_file, name or None))
    return named


def missing_tests(markdown: str) -> list[str]:
    missing = []
    for file, name in named_tests(markdown):
        path = ROOT / "tests" / file
        if not path.exists():
            missing.append(f"tests/{file} (no such file)")
        elif name and name not in defined_tests(path):
            missing.append(f"tests/{file}::{name}")
    return missing


def test_the_readme_is_read_in_five_minutes_and_links_every_docs_page():
    readme = README.read_text()
    assert len(readme.splitlines()) <= 200
    linked = set(LINK.findall(_prose(readme)))
    for page in DOC_PAGES:
        assert f"docs/{page}" in linked, page
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    assert len(images) == 1 and (ROOT / images[0]).exists()


def test_every_relative_link_in_the_readmes_and_docs_reaches_a_file_and_heading():
    pages = [README, ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) > len(DOC_PAGES)
    assert [broken for page in pages for broken in broken_links(page)] == []


def test_every_test_the_security_page_names_exists():
    named = named_tests(SECURITY.read_text())
    assert len(named) >= 40
    assert missing_tests(SECURITY.read_text()) == []


def test_the_checks_catch_a_wrong_link_a_wrong_heading_and_a_wrong_test(tmp_path):
    (tmp_path / "other.md").write_text("# A heading: with `code`, punctuation\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-heading-with-code-punctuation) [file](gone.md) [anchor](other.md#nowhere)\n"
                    "`[not a link](gone.md)` [web](https://example.org/x)\n")
    assert broken_links(page) == ["page.md: gone.md (no such file)", "page.md: other.md#nowhere (no such heading)"]
    assert missing_tests("`test_docs.py::test_every_test_the_security_page_names_exists`, `::test_nowhere`, "
                         "`tests/test_nowhere.py`") == ["tests/test_docs.py::test_nowhere",
                                                        "tests/test_nowhere.py (no such file)"]
