"""The layers' imports point one way (docs/architecture.md).

Each package may import only the packages listed for it here; the CLI may
import anything. A new dependency between layers is a decision: make it
here and in docs/architecture.md, or move the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "flightdeck"

SHARED = {"config", "audit", "llm", "guard", "_version"}
# Root modules every layer may use: leaves that import nothing of flightdeck.
ROOT_MODULES = {"_version", "_lazy", "_bounded", "_json", "_errors"}
ALLOWED: dict[str, set[str]] = {
    "documents": set(),
    "config": set(),
    "audit": {"config"},
    "llm": {"config"},
    "guard": set(),
    "actions": {"documents"},
    "io": {"documents"},
    "tools": {"documents", "actions", "io"},
    "drivers": {"documents", "actions", "io", "tools"},
    "flightplan": {"documents"},
    "validation": {"documents", "actions", "drivers", "flightplan"},
    "launch": {"documents", "actions", "io", "tools", "drivers", "flightplan"},
    "agent": {"documents", "actions", "io", "tools", "drivers"},
    # A reader of what the others store; its one write is resuming a run
    # through the `flightdeck launch` command, so it imports no runtime.
    "ui": {"flightplan", "agent"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if parts[0] == "flightdeck" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_every_package_has_a_layer() -> None:
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert packages - {"cli"} - set(ALLOWED) == set(), "add the new package to ALLOWED"


def test_imports_point_one_way() -> None:
    wrong: list[str] = []
    for package, allowed in ALLOWED.items():
        permitted = allowed | {package} | (SHARED - {package} if package not in SHARED else set())
        if package in {"documents", "config", "guard"}:
            permitted = allowed | {package}
        permitted |= ROOT_MODULES
        for path in sorted((SRC / package).rglob("*.py")):
            for target in _imports(path) - permitted:
                wrong.append(f"{path.relative_to(SRC)} imports flightdeck.{target}")
    assert wrong == []


# Inside a package split into sub-packages: which of its parts each part may
# import. A part is a sub-package (`launch.image`) or the package's own
# top-level modules and `__init__` (`launch`). A part may always import itself.
INSIDE: dict[str, dict[str, set[str]]] = {
    "flightplan": {
        # The top: the error, read limits and canonical bytes every part
        # shares, loading and the parse cache, and the pipelines that tie the
        # parts together (freeze, the whole freeze, verify, co-sign, render).
        "flightplan": {
            "flightplan.model",
            "flightplan.lint",
            "flightplan.signing",
            "flightplan.store",
            "flightplan.registry",
        },
        # A lock's pinned image reference is parsed by the registry's parser.
        "flightplan.model": {"flightplan", "flightplan.registry"},
        "flightplan.lint": {"flightplan.model"},
        "flightplan.signing": {"flightplan", "flightplan.model"},
        "flightplan.store": {"flightplan", "flightplan.model"},
        "flightplan.registry": {"flightplan"},
        # Publish and install: the artifact, the push, and the install that
        # runs verify (the top) before the store's write.
        "flightplan.publish": {
            "flightplan",
            "flightplan.model",
            "flightplan.store",
            "flightplan.signing",
            "flightplan.registry",
        },
    },
    # The CLI: `cli/_main.py` names each command's module as a string and
    # imports it when the command runs; `flightdeck.cli.main` reads `agent
    # --json-stream` through `chat._agent_stream`. The command groups use the
    # top-level helpers only, never each other.
    "cli": {
        "cli": {"cli.chat"},
        "cli.plan": {"cli"},
        "cli.run": {"cli"},
        "cli.chat": {"cli"},
    },
    "launch": {
        # The top level (launch, setup, dry run, drivers, pins, probes, inputs,
        # and `__init__`'s public names) sits above every part.
        "launch": {
            "launch.core",
            "launch.image",
            "launch.sandbox",
            "launch.compose",
            "launch.steps",
            "launch.engine",
            "launch.temporal",
        },
        "launch.temporal": {"launch.core", "launch.engine"},
        "launch.engine": {"launch.core", "launch.steps", "launch.sandbox"},
        "launch.steps": {"launch.core"},
        "launch.compose": {"launch.core", "launch.image", "launch.sandbox"},
        "launch.sandbox": {"launch.core", "launch.image"},
        "launch.image": {"launch.core"},
        "launch.core": set(),
    },
    "agent": {
        # the JSON Stream Protocol's models and line checks: the vocabulary
        "agent.protocol": set(),
        "agent.tools": set(),
        "agent.mcp": {"agent.tools"},
        # the engine knows no transport and no extension (they register with it)
        "agent.engine": {"agent.protocol", "agent.tools"},
        "agent.stream": {"agent.protocol", "agent.engine", "agent.tools"},
        "agent.extensions": {"agent.protocol", "agent.engine", "agent.tools", "agent.mcp"},
        # the app (`_app`, `_startup`, `__init__`): wires a transport to the engine
        "agent": {
            "agent.protocol",
            "agent.engine",
            "agent.stream",
            "agent.extensions",
            "agent.tools",
        },
        "agent.terminal": {"agent", "agent.protocol", "agent.engine", "agent.extensions"},
        "agent.acp": {
            "agent",
            "agent.protocol",
            "agent.engine",
            "agent.stream",
            "agent.extensions",
            "agent.tools",
        },
    },
}


def _part(package: str, dotted: str) -> str:
    """`flightdeck.launch.image._pull` -> `launch.image`; a top module or the
    package itself -> `launch`."""
    parts = dotted.split(".")[1:]  # drop "flightdeck"
    if len(parts) >= 2 and (SRC / parts[0] / parts[1] / "__init__.py").exists():
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _inner_imports(path: Path, package: str) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            if name.startswith(f"flightdeck.{package}.") or name == f"flightdeck.{package}":
                found.add(_part(package, name))
    return found


def test_every_sub_package_has_its_imports_declared() -> None:
    missing: list[str] = []
    for package, parts in INSIDE.items():
        for child in sorted((SRC / package).iterdir()):
            name = f"{package}.{child.name}"
            if child.is_dir() and (child / "__init__.py").exists() and name not in parts:
                missing.append(name)
    assert missing == [], "declare the sub-package in INSIDE"


def test_sub_packages_import_as_declared() -> None:
    wrong: list[str] = []
    for package, parts in INSIDE.items():
        for path in sorted((SRC / package).rglob("*.py")):
            dotted = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
            part = _part(package, dotted)
            permitted = parts.get(part, set()) | {part}
            for target in sorted(_inner_imports(path, package) - permitted):
                wrong.append(f"{path.relative_to(SRC)} ({part}) imports {target}")
    assert wrong == []
