"""Which checks beyond the schema run for each document kind.

The higher layers own their checks; this is the one place that wires them
into `validate`. A check takes a loaded document and returns located
diagnostics. Layers are imported here, when a validate run starts, so that
`flightdeck.documents` stays usable on its own.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.documents import Diagnostic, Document, DocumentKind

if TYPE_CHECKING:
    from flightdeck.validation._options import ValidateOptions

Check = Callable[[Document], list[Diagnostic]]
CheckSet = Mapping[DocumentKind, Sequence[Check]]


def default_checks(options: ValidateOptions) -> CheckSet:
    """Narrowing for implementors (TOOL, DRIVER), the SDK driver checks that
    need no import (install methods, templates, dropped inputs), and lint
    for Flight Plans.

    The packages are lazy: each check imports its layer's code the first time
    a document of its kind is checked, so validating one ACTION.md does not
    pay for the driver or Flight Plan machinery."""
    from flightdeck import actions, drivers, flightplan

    contexts: dict[Path | None, actions.CheckContext] = {}

    def context_for(document: Document) -> actions.CheckContext:
        # `--workspace` wins; otherwise each file's own workspace, so refs
        # like `./...` and bare action ids resolve where the file lives.
        root = options.workspace
        if root is None and document.path is not None:
            root = _workspace_of(document.path)
        if root not in contexts:
            contexts[root] = actions.CheckContext(
                workspace=root, libraries=options.libraries, strict=options.strict
            )
        return contexts[root]

    config_problems: dict[Path | None, list[Diagnostic]] = {}

    def config_problem(root: Path | None) -> list[Diagnostic]:
        # Ref resolution reads the workspace's `library.paths`; a broken
        # flightdeck.toml would otherwise be skipped in silence.
        if root is None:
            return []
        if root not in config_problems:
            from flightdeck.config import ConfigError, load_config

            config_problems[root] = []
            try:
                load_config(root)
            except ConfigError as exc:
                hint = "refs were resolved without this file's [library] paths"
                config_problems[root] = [
                    Diagnostic(exc.code, str(exc), file=str(exc.path), hint=hint)
                ]
        return config_problems[root]

    def narrowing(document: Document) -> list[Diagnostic]:
        context = context_for(document)
        return config_problem(context.workspace) + actions.check_document(document, context)

    catalogs: dict[Path | None, tuple[Any, list[Diagnostic]]] = {}

    def catalog_for(document: Document) -> tuple[Any, list[Diagnostic]]:
        """The tools of the catalog file a plan is judged against (freeze's:
        `--catalog`, else its workspace's `[catalog] file`), or None for the
        shipped catalog; a catalog that cannot be read is a diagnostic."""
        root = options.workspace
        if root is None and document.path is not None:
            root = _workspace_of(document.path)
        if root not in catalogs:
            catalogs[root] = _catalog_tools(options.catalog, root)
        return catalogs[root]

    def lint(document: Document) -> list[Diagnostic]:
        known, problems = catalog_for(document)
        return problems + flightplan.lint_document(document, known_tools=known)

    def driver(document: Document) -> list[Diagnostic]:
        return drivers.check_document(document)

    return {
        DocumentKind.TOOL: [narrowing],
        DocumentKind.DRIVER: [narrowing, driver],
        DocumentKind.SKILL: [lint],
    }


def _catalog_tools(named: Path | None, root: Path | None) -> tuple[Any, list[Diagnostic]]:
    from flightdeck.config import ConfigError, load_config
    from flightdeck.flightplan import FlightPlanError, load_feature_catalog

    path = named
    if path is None and root is not None:
        try:  # a broken flightdeck.toml is reported by the narrowing checks
            configured = load_config(root).get("catalog.file")
        except ConfigError:
            configured = None
        if isinstance(configured, str) and configured:
            path = root / configured  # reading a catalog runs nothing: no trust needed
    if path is None:
        return None, []
    try:
        return load_feature_catalog(path).as_tools(), []
    except FlightPlanError as exc:
        hint = "environment.tools were checked against the shipped catalog"
        return None, [Diagnostic(exc.code, exc.message, file=str(path), hint=hint)]


def _workspace_of(path: Path) -> Path | None:
    """`find_workspace(path.resolve().parent)`, cheaper: a file that is not
    a symlink (nor reached through `..`) has its folder's workspace, looked
    up once per folder by name rather than with two `Path`s per file."""
    if ".." in path.parts or os.path.islink(path):
        return _find_workspace(path.resolve().parent)
    return _workspace_in(os.path.abspath(os.path.dirname(path)))


@functools.lru_cache(maxsize=8192)
def _workspace_in(folder: str) -> Path | None:
    # The same lifetime as the caches below it (`_real_folder`, and
    # `find_workspace`'s own): one process, one tree.
    return _find_workspace(Path(_real_folder(folder)))


def _find_workspace(folder: Path) -> Path | None:
    from flightdeck.config import find_workspace  # imported once a check needs it

    return find_workspace(folder)


def _real_parent(path: Path) -> Path:
    """`path.resolve().parent`, cheaper: see `_real_folder`."""
    if ".." in path.parts or os.path.islink(path):  # resolve symlinks before `..`
        return path.resolve().parent
    return Path(_real_folder(os.path.abspath(path.parent)))


@functools.lru_cache(maxsize=8192)
def _real_folder(folder: str) -> str:
    """`os.path.realpath` of an absolute folder, through the cache: a folder
    that is not a symlink is its real parent plus its name, so each file costs
    one `lstat` instead of one per path component."""
    parent, name = os.path.split(folder)
    if not name or parent == folder or name in (".", "..") or os.path.islink(folder):
        return os.path.realpath(folder)
    return os.path.join(_real_folder(parent), name)
