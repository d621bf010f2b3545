"""The package behind an SDK driver: can this host run it, is the right version
installed, and importing it (timed, watched).

Checks that only read the manifest (`runnable_problem`, `install_problems`,
`range_problems`) are shared with `check_document`, which never imports.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import semantic_version
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion
from packaging.version import Version as Pep440Version

from flightdeck.documents import Diagnostic, pointer_join
from flightdeck.drivers._errors import NOT_RUNNABLE, VERSION_MISMATCH
from flightdeck.drivers._source_import import (
    UnpinnedModule,
    claim,
    loader_for,
    release,
    stale,
)
from flightdeck.guard import Event, Policy, active

PYTHON_MANAGERS = ("pip", "poetry", "local")
# package_manager -> install methods that agree with it (AIP-33: hosts MUST refuse mixes).
INSTALL_METHODS: Mapping[str, frozenset[str]] = {
    "pip": frozenset({"pip", "uv"}),
    "poetry": frozenset({"poetry", "pip", "uv"}),
    "local": frozenset({"vendored", "local"}),
    "npm": frozenset({"npm"}),
    "pnpm": frozenset({"pnpm", "npm"}),
    "yarn": frozenset({"yarn", "npm"}),
    "cargo": frozenset({"cargo"}),
    "go": frozenset({"go"}),
}
_FOREIGN_STYLES = ("esm", "cjs", "rust-crate", "go-module")


def runnable_problem(data: Mapping[str, Any]) -> Diagnostic | None:
    """Why this Python host cannot run the driver, or None."""
    kind = data.get("kind")
    if kind != "sdk":
        return Diagnostic(
            NOT_RUNNABLE,
            f"kind {kind!r} is not runnable by this Python host (it runs kind: sdk)",
            pointer="/kind",
        )
    manager = data.get("package_manager")
    if manager not in PYTHON_MANAGERS:
        return Diagnostic(
            NOT_RUNNABLE,
            f"package_manager {manager!r} is not runnable by this Python host "
            "(it imports pip, poetry and local packages)",
            pointer="/package_manager",
        )
    style = data.get("import_style")
    if style in _FOREIGN_STYLES:
        return Diagnostic(
            NOT_RUNNABLE,
            f"import_style {style!r} is not runnable by this Python host (use python)",
            pointer="/import_style",
        )
    return None


def install_problems(data: Mapping[str, Any]) -> list[Diagnostic]:
    """Install methods that disagree with `package_manager`, and a local driver without a path."""
    manager = data.get("package_manager")
    allowed = INSTALL_METHODS.get(str(manager))
    install = data.get("install")
    entries = install if isinstance(install, list) else []
    out: list[Diagnostic] = []
    for i, entry in enumerate(entries):
        method = entry.get("method") if isinstance(entry, Mapping) else None
        if allowed is not None and isinstance(method, str) and method not in allowed:
            out.append(
                Diagnostic(
                    "install_mismatch",
                    f"install method {method!r} disagrees with package_manager {manager!r}",
                    pointer=pointer_join("/install", i, "method"),
                    hint=f"use one of: {', '.join(sorted(allowed))}",
                )
            )
    if manager == "local" and local_path(data) is None:
        out.append(
            Diagnostic(
                "install_mismatch",
                "a package_manager: local driver needs an install entry "
                "{ method: vendored, path: ./... } naming its folder or file",
                pointer="/install",
            )
        )
    return out


def local_path(data: Mapping[str, Any]) -> str | None:
    for entry in data.get("install") or []:
        if isinstance(entry, Mapping) and entry.get("method") in ("vendored", "local"):
            path = entry.get("path")
            if isinstance(path, str) and path:
                return path
    return None


VersionTest = Callable[[str], bool]


def parse_range(text: str) -> VersionTest:
    """An npm-style range (`^4.50.0`, `>=4.50 <5`; commas read as spaces), else PEP 440.

    Raises ValueError when neither grammar accepts it.
    """
    return _parse_short_range(text) if len(text) <= 256 else _parse_range(text)


@functools.lru_cache(maxsize=1024)  # ranges repeat across drivers; parsing one is ~30 us
def _parse_short_range(text: str) -> VersionTest:
    return _parse_range(text)


def _parse_range(text: str) -> VersionTest:
    try:
        spec = semantic_version.NpmSpec(" ".join(text.replace(",", " ").split()))
    except ValueError:
        try:
            pep = SpecifierSet(text)
        except InvalidSpecifier as exc:
            raise ValueError(f"{text!r} is neither an npm range nor a PEP 440 specifier") from exc
        return lambda found: _pep440_ok(pep, found)
    return lambda found: spec.match(semantic_version.Version.coerce(found))


def _pep440_ok(spec: SpecifierSet, found: str) -> bool:
    try:
        return Pep440Version(found) in spec
    except InvalidVersion:
        return False


def _ranges(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if isinstance(data.get("package_version"), str):
        out.append(("/package_version", data["package_version"]))
    check = data.get("version_check")
    if isinstance(check, Mapping) and isinstance(check.get("range"), str):
        out.append(("/version_check/range", check["range"]))
    return out


def range_problems(data: Mapping[str, Any]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for pointer, text in _ranges(data):
        try:
            parse_range(text)
        except ValueError as exc:
            out.append(Diagnostic("version_range_invalid", str(exc), pointer=pointer))
    return out


def version_problems(data: Mapping[str, Any]) -> list[Diagnostic]:
    """The installed distribution's version against `package_version` and `version_check.range`."""
    if data.get("package_manager") == "local" or not _ranges(data):
        return []
    package = str(data.get("package"))
    try:
        found = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return [
            Diagnostic(
                "package_not_installed",
                f"distribution {package!r} is not installed in this environment",
                pointer="/package",
                hint=f"pip install {package}",
            )
        ]
    out: list[Diagnostic] = []
    for pointer, text in _ranges(data):
        try:
            ok = parse_range(text)(found)
        except ValueError as exc:
            out.append(Diagnostic("version_range_invalid", str(exc), pointer=pointer))
            continue
        if not ok:
            out.append(
                Diagnostic(
                    VERSION_MISMATCH,
                    f"{package} {found} is installed; {pointer.lstrip('/')} wants {text}",
                    pointer=pointer,
                )
            )
    return out


@dataclass
class ImportReport:
    module: ModuleType
    module_name: str
    seconds: float
    cached: bool
    observed: list[Event] = field(default_factory=list)


def module_name(data: Mapping[str, Any]) -> str:
    """The import name: `entrypoint` when dotted, else the package name with `-` as `_`."""
    entry = data.get("entrypoint")
    if isinstance(entry, str) and re.fullmatch(r"[A-Za-z_][\w.]*", entry):
        return entry
    return str(data.get("package", "")).replace("-", "_")


def _local_target(data: Mapping[str, Any], base_dirs: list[Path]) -> Path | None:
    rel = local_path(data)
    if rel is None:
        return None
    for base in base_dirs:
        candidate = (base / rel).resolve()
        entry = data.get("entrypoint")
        if candidate.is_dir() and isinstance(entry, str) and entry.endswith(".py"):
            candidate = candidate / entry
        elif candidate.is_dir():
            candidate = candidate / "__init__.py"
        if candidate.is_file():
            return candidate
    return None


def import_package(
    data: Mapping[str, Any], base_dirs: list[Path], checked: Mapping[str, str] | None = None
) -> ImportReport:
    """Import the driver's module under a watch. Raises ImportError (with a message) on failure.

    A local package is always imported from source (`_source_import`: no
    bytecode read or written). `checked` (resolved path -> digest, from the
    code-pin check that has just passed) restricts the import to those
    files with those bytes; an installed distribution is then imported that
    way too, else the normal way."""
    if data.get("package_manager") == "local":
        return _import_local(data, base_dirs, checked)
    name = module_name(data)
    if checked is not None:
        parts = name.split(".")
        chain = [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
        held = stale(parts[0], chain, checked)
        if held is not None:
            raise UnpinnedModule(
                f"module {held} was imported in this process before its code pin was checked,"
                " from bytes the pin does not cover (perhaps from bytecode)"
            )
        claim(parts[0], chain, checked, whole=False)
    else:
        release(name.partition(".")[0])
    cached = name in sys.modules
    started = time.perf_counter()
    with active(Policy.watch()) as watch:
        module = importlib.import_module(name)
    return ImportReport(module, name, time.perf_counter() - started, cached, watch.observed)


def _import_local(
    data: Mapping[str, Any], base_dirs: list[Path], checked: Mapping[str, str] | None
) -> ImportReport:
    target = _local_target(data, base_dirs)
    if target is None:
        raise ImportError(f"local package path {local_path(data)!r} not found")
    name = "flightdeck_local_" + re.sub(r"\W", "_", str(data.get("id", "driver")))
    # The whole package is read again from the bytes just checked: nothing
    # of an earlier import of it (other bytes, perhaps) is reused.
    for held in [n for n in sys.modules if n == name or n.startswith(name + ".")]:
        del sys.modules[held]
    claim(name, [name], checked, whole=True)
    spec = importlib.util.spec_from_file_location(
        name,
        target,
        loader=loader_for(name, str(target), checked),
        submodule_search_locations=[str(target.parent)] if target.name == "__init__.py" else None,
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {target}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    started = time.perf_counter()
    try:
        with active(Policy.watch()) as watch:
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)  # never leave a half-initialised module behind
        raise
    return ImportReport(module, name, time.perf_counter() - started, False, watch.observed)
