"""The package's shape (docs/architecture.md): no import circle, no folder
too large to read, every sub-package saying what it owns, and the
architecture diagrams drawn from the same tables `test_layers.py` enforces.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from pathlib import Path

from tests.test_layers import ALLOWED, INSIDE, SRC

DOC = SRC.parents[1] / "docs" / "architecture.md"

# Modules that may import each other (two, never more); empty today.
KNOWN_PAIRS: set[frozenset[str]] = set()
# More modules than this side by side in one folder is a listing, not a map.
MAX_FLAT_MODULES = 20


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Module -> the flightdeck modules it imports, wherever the import sits
    (in a function, under `if TYPE_CHECKING:`): a circle of type-only
    imports is still a circle a reader has to untangle."""
    files = {_module(path): path for path in SRC.rglob("*.py")}
    edges: dict[str, set[str]] = {}
    for name, path in files.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in files else node.module)
        edges[name] = {target for target in found if target in files} - {name}
    return edges


def _reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, queue = {start}, deque([start])
    while queue:
        for target in edges[queue.popleft()] - seen:
            seen.add(target)
            queue.append(target)
    return seen


def _circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of two or more modules: those a
    module reaches that also reach it back."""
    reach = {name: _reachable(edges, name) for name in edges}
    circles: list[set[str]] = []
    for name in sorted(edges):
        members = {other for other in reach[name] if name in reach[other]}
        if len(members) > 1 and members not in circles:
            circles.append(members)
    return circles


def test_the_circle_finder_finds_circles() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": {"e"}}
    assert _circles(edges) == [{"a", "b", "c"}, {"e", "f"}]


def test_no_import_circle() -> None:
    """No circle of more than two modules anywhere, and no new pair: a
    circle means neither module can be read, tested or moved alone."""
    found = _circles(_graph())
    wrong = [sorted(c) for c in found if len(c) > 2 or frozenset(c) not in KNOWN_PAIRS]
    assert wrong == []


def test_no_folder_holds_too_many_modules_flat() -> None:
    crowded = {
        str(folder.relative_to(SRC.parent)): count
        for folder in [SRC, *(p for p in SRC.rglob("*") if p.is_dir())]
        if (count := len(list(folder.glob("*.py")))) > MAX_FLAT_MODULES
    }
    assert crowded == {}


def test_every_sub_package_says_what_it_owns() -> None:
    """A sub-package's docstring is a paragraph: what it owns, and for the
    split packages what it may import."""
    silent: list[str] = []
    for init in sorted(SRC.glob("*/*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text("utf-8"))) or ""
        name = init.parent.relative_to(SRC).as_posix().replace("/", ".")
        package = name.split(".")[0]
        says_imports = "import" in doc
        if len(doc.split()) < 25 or (package in INSIDE and not says_imports):
            silent.append(name)
    assert silent == []


_EDGE = re.compile(r"^\s*(\w+)(?:\[[^\]]*\])?\s*-->\s*(\w+)(?:\[[^\]]*\])?\s*$")


def _diagrams() -> dict[str, set[tuple[str, str]]]:
    """The architecture doc's checked diagrams: each mermaid block whose
    first comment is `%% checked: layers` or `%% checked: PACKAGE`, as its
    solid edges (`a --> b`). Dotted edges (`-.->`) are commentary."""
    text = DOC.read_text("utf-8")
    found: dict[str, set[tuple[str, str]]] = {}
    for block in re.findall(r"```mermaid\n(.*?)```", text, re.S):
        marker = re.search(r"%% checked: (\S+)", block)
        if marker is None:
            continue
        edges = {m.groups() for line in block.splitlines() if (m := _EDGE.match(line))}
        found[marker.group(1)] = {(a, b) for a, b in edges}
    return found


def test_the_layer_diagram_is_the_layer_table() -> None:
    drawn = _diagrams()["layers"]
    table = {(package, target) for package, targets in ALLOWED.items() for target in targets}
    assert drawn == table


def test_each_split_package_s_diagram_is_its_table() -> None:
    diagrams = _diagrams()
    assert set(INSIDE) <= set(diagrams), "draw each package of INSIDE in docs/architecture.md"
    for package, parts in INSIDE.items():

        def node(part: str, package: str = package) -> str:
            return "top" if part == package else part.split(".", 1)[1]

        table = {(node(part), node(to)) for part, targets in parts.items() for to in targets}
        assert diagrams[package] == table, package
