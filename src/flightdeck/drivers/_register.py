"""Registration: `define_driver` / `defineDriver` and `load_driver`.

Order (each step reports every problem it finds, then refuses):
1. schema (driver + SDK specialisation), 2. runnable by this host,
3. manifest checks (install vs package_manager, ranges, templates, extract paths),
4. TOOLs bound (version range, drop_inputs, narrowing against their actions),
5. installed version, 6. import (timed, watched for undeclared I/O),
7. every function_ref resolved (constructor pattern: one client per driver and identity).
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flightdeck.documents import (
    Diagnostic,
    DocumentKind,
    SourceMap,
    load_document,
    locate,
    pointer_join,
    validate_data,
)
from flightdeck.drivers._binding import ToolBinding
from flightdeck.drivers._errors import (
    FUNCTION_REF_UNRESOLVABLE,
    PACKAGE_CODE_UNPINNED,
    DriverError,
    DriverNotRunnable,
    DriverRegistrationError,
    scrub,
)
from flightdeck.drivers._manifest import CompiledManifest, compile_manifest
from flightdeck.drivers._package import (
    ImportReport,
    import_package,
    runnable_problem,
    version_problems,
)
from flightdeck.drivers._refs import RefError, ResolvedRef, call_style, resolve_ref
from flightdeck.drivers._sdk import SdkBinding, SdkDriver
from flightdeck.drivers._source_import import UnpinnedModule
from flightdeck.drivers._tools import binding_problems, load_bound_tool
from flightdeck.guard import Event, Policy, active, host_matches
from flightdeck.tools import ToolHandle

if TYPE_CHECKING:
    from flightdeck.drivers._digest import CodeDigest

_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _snake_keys(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {_CAMEL.sub(r"_\1", k).lower(): v for k, v in fields.items()}


class _Refusal:
    """Collects diagnostics; `check` raises with all of them located, and scrubbed of
    the secrets read so far (a package's constructor may echo its API key)."""

    def __init__(self, file: str | None, positions: SourceMap | None, driver_id: str | None):
        self.file, self.positions, self.driver_id = file, positions, driver_id
        self.secrets: list[str] = []

    def located(self, diags: list[Diagnostic]) -> list[Diagnostic]:
        clean = [replace(d, message=scrub(d.message, self.secrets)) for d in diags]
        return list(locate(clean, self.file, self.positions))

    def check(self, diags: list[Diagnostic]) -> None:
        if any(d.is_error for d in diags):
            raise DriverRegistrationError(self.located(diags), driver_id=self.driver_id)


def _client_factory(compiled: CompiledManifest, secrets: Mapping[str, str]) -> Any:
    cache: dict[tuple[str, str], Any] = {}

    def make(cls: type, identity: str = "default") -> Any:
        key = (f"{cls.__module__}.{cls.__qualname__}", identity)
        if key not in cache:
            options: Any = {}
            if compiled.client_options is not None:
                scope = {"input": {}, "secrets": secrets, "context": {"identity": identity}}
                try:
                    options = compiled.client_options.render(scope)
                except DriverError as exc:
                    raise RefError(cls.__name__, f"client_options: {exc.message}") from None
            cache[key] = cls(**options)
        return cache[key]

    return make


def _bind_tools(
    compiled: CompiledManifest,
    data: Mapping[str, Any],
    driver_dir: Path | None,
    workspace: Path | None,
) -> tuple[dict[int, ToolHandle], list[Diagnostic]]:
    tools: dict[int, ToolHandle] = {}
    diags: list[Diagnostic] = []
    entries = data.get("implements") or []
    seen: dict[str, int] = {}
    for spec in compiled.entries:
        tool, problems = load_bound_tool(spec, driver_dir, workspace)
        diags += problems
        if tool is None:
            continue
        if tool.id in seen:
            diags.append(
                Diagnostic(
                    "duplicate_tool",
                    f"tool {tool.id} is already bound by implements[{seen[tool.id]}]",
                    pointer=pointer_join(spec.pointer, "tool"),
                )
            )
            continue
        seen[tool.id] = spec.index
        diags += binding_problems(spec, tool, entries[spec.index])
        tools[spec.index] = tool
    return tools, diags


def _import(
    data: Mapping[str, Any],
    bases: list[Path],
    refusal: _Refusal,
    checked: Mapping[str, str] | None,
) -> ImportReport:
    try:
        report = import_package(data, bases, checked)
    except UnpinnedModule as exc:
        refusal.check(
            [
                Diagnostic(
                    PACKAGE_CODE_UNPINNED,
                    f"importing {data.get('package')!r} would run code its pin did not check:"
                    f" {exc}",
                    pointer="/package",
                    hint="restore the pinned files, or re-freeze the plan to pin the new code",
                )
            ]
        )
        raise  # unreachable: check raised
    except Exception as exc:  # ImportError or whatever the package raised while importing
        refusal.check(
            [
                Diagnostic(
                    "package_import_failed",
                    f"importing {data.get('package')!r} failed: {type(exc).__name__}: {exc}",
                    pointer="/package",
                )
            ]
        )
        raise  # unreachable: check raised
    refusal.check(_side_effects(data, report.observed, f"importing {data.get('package')!r}"))
    return report


def _side_effects(data: Mapping[str, Any], observed: list[Event], what: str) -> list[Diagnostic]:
    egress = (data.get("network") or {}).get("egress") or []
    return [
        Diagnostic(
            "import_side_effect",
            f"{what} did something undeclared: {item.kind}: {item.detail}",
            pointer="/network" if item.kind in ("network", "dns") else "/package",
            hint="declare network.egress for connections; loading an SDK driver must not "
            "spawn processes or write files",
        )
        for item in undeclared(observed, list(egress))
    ]


def undeclared(observed: list[Event], egress: list[str]) -> list[Event]:
    """What the import did that the manifest did not declare.

    Network use needs `network.egress`; a DNS lookup must name a declared host
    (`*.example.com` matches subdomains). Subprocesses and file writes are never
    declared for an SDK driver: importing must be side-effect free.
    """
    out: list[Event] = []
    for item in observed:
        if item.kind == "network" and egress:
            continue
        if item.kind == "dns" and egress and any(host_matches(item.target, a) for a in egress):
            continue
        out.append(item)
    return out


def _resolve_refs(
    compiled: CompiledManifest, report: ImportReport, make: Any
) -> tuple[dict[int, ResolvedRef], list[Diagnostic]]:
    refs: dict[int, ResolvedRef] = {}
    diags: list[Diagnostic] = []
    for spec in compiled.entries:
        where = pointer_join(spec.pointer, "metadata", "sdk", "function_ref")
        try:
            refs[spec.index] = resolve_ref(report.module, spec.function_ref, make)
        except RefError as exc:
            diags.append(
                Diagnostic(
                    FUNCTION_REF_UNRESOLVABLE,
                    f"function_ref {spec.function_ref!r} does not resolve in "
                    f"{report.module_name}: `{exc.part}` {exc.reason}",
                    pointer=where,
                )
            )
    return refs, diags


def _register(
    data: Mapping[str, Any],
    *,
    path: Path | None,
    positions: SourceMap | None,
    workspace: Path | None,
    environ: Mapping[str, str] | None,
    secrets: Mapping[str, str] | None,
    schema_checked: bool = False,
    code: CodeDigest | None = None,
) -> SdkDriver:
    driver_id = data.get("id") if isinstance(data.get("id"), str) else None
    refusal = _Refusal(str(path) if path else None, positions, driver_id)
    if not schema_checked:
        refusal.check(validate_data(DocumentKind.DRIVER, dict(data)))
    problem = runnable_problem(data)
    if problem is not None:
        raise DriverNotRunnable(refusal.located([problem]), driver_id=driver_id)
    compiled, diags = compile_manifest(data)
    driver_dir = path.parent if path is not None else None
    tools, tool_diags = _bind_tools(compiled, data, driver_dir, workspace)
    refusal.check(diags + tool_diags)
    refusal.check(version_problems(data))
    env = os.environ if environ is None else environ
    held = {n: env[n] for n in compiled.secret_names if n in env}
    held.update(secrets or {})
    refusal.secrets = list(held.values())
    bases = [b for b in (driver_dir, workspace, Path.cwd()) if b is not None]
    report = _import(data, bases, refusal, code.sources if code is not None else None)
    make = _client_factory(compiled, held)
    with active(
        Policy.watch()
    ) as watch:  # constructors (Client(...)) run here: same rules as the import
        refs, ref_diags = _resolve_refs(compiled, report, make)
    refusal.check(ref_diags + _side_effects(data, watch.observed, "building its clients"))
    bindings: dict[str, SdkBinding] = {}
    for spec in compiled.entries:
        tool, ref = tools[spec.index], refs[spec.index]
        function = ref.function
        is_gen = inspect.isasyncgenfunction(function)
        bindings[tool.id] = SdkBinding(
            binding=ToolBinding(
                tool.id,
                tool.io,
                frozenset(spec.drop_inputs),
                spec.streaming or is_gen,
                tool,
                spec.cost_units,
                _timeout(tool.timeout_ms, data.get("timeout_override_ms")),
            ),
            ref=ref,
            args=spec.args,
            style=call_style(function),
            extract=spec.extract,
            # SDKs wrap async methods in sync decorators (openai's required_args): unwrap.
            is_async=inspect.iscoroutinefunction(inspect.unwrap(function)),
            is_asyncgen=is_gen,
            pointer=spec.pointer,
        )
    return SdkDriver(
        id=str(data["id"]),
        name=str(data["name"]),
        version=str(data["version"]),
        data=dict(data),
        bindings=bindings,
        import_report=report,
        path=path,
        policy_tags=tuple(data.get("policy_tags") or ()),
        region=tuple(data.get("region") or ("global",)),
        egress=tuple((data.get("network") or {}).get("egress") or ()),
        notes=[f"{d.code} at {d.pointer}: {d.message}" for d in diags if not d.is_error],
        _secrets=held,
        _make_client=make,
    )


def _timeout(tool_ms: int, override: Any) -> int:
    """AIP-30: timeout_override_ms narrows the contract's ceiling, never widens it."""
    if isinstance(override, int) and not isinstance(override, bool) and override > 0:
        return min(tool_ms, override)
    return tool_ms


_MARKERS = ("flightdeck.toml", "flightdeck.lock", "WORKSPACE.md")


def infer_workspace(driver_file: Path) -> Path | None:
    """`<ws>/.drivers/<id>/DRIVER.md` -> `<ws>`; else the nearest folder with a workspace marker."""
    folder = driver_file.parent
    if folder.parent.name == ".drivers":
        return folder.parent.parent
    for candidate in folder.parents:
        if any((candidate / m).exists() for m in _MARKERS):
            return candidate
    return None


def define_driver(
    definition: Mapping[str, Any] | None = None,
    /,
    *,
    base_dir: str | Path | None = None,
    workspace: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    **fields: Any,
) -> SdkDriver:
    """Register a driver from a definition (manifest field names; camelCase accepted)
    or keywords: `define_driver(kind="sdk", id=..., package=..., implements=[...])`.

    `base_dir` plays the driver folder (TOOL paths, local packages). Secrets are the
    `auth.state.env` variables read from `environ` (default `os.environ`), overridden
    by `secrets`. Raises `DriverRegistrationError` / `DriverNotRunnable`.
    """
    data = _snake_keys({**(definition or {}), **fields})
    folder = Path(base_dir) if base_dir is not None else None
    return _register(
        data,
        path=folder / "DRIVER.md" if folder is not None else None,
        positions=None,
        workspace=Path(workspace) if workspace is not None else None,
        environ=environ,
        secrets=secrets,
    )


defineDriver = define_driver


def load_driver(
    path: str | Path,
    *,
    workspace: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    secrets: Mapping[str, str] | None = None,
    code: CodeDigest | None = None,
) -> SdkDriver:
    """Load and register a DRIVER.md (or its folder). Diagnostics are located at file:line:col.

    `code`: the driver's code digest, just compared with its pin: the
    package is then imported only from the files it digested, with the
    bytes it digested (else `package_code_unpinned`)."""
    file = Path(path)
    if file.is_dir():
        file = file / "DRIVER.md"
    loaded = load_document(file, kind=DocumentKind.DRIVER)
    errors = [d for d in loaded.diagnostics if d.is_error]
    if loaded.document is None or errors:
        data = loaded.document.data if loaded.document is not None else {}
        raise DriverRegistrationError(errors or list(loaded.diagnostics), driver_id=data.get("id"))
    doc = loaded.document
    file = file.resolve()
    return _register(
        doc.data,
        path=file,
        positions=doc.source_map,
        workspace=Path(workspace).resolve() if workspace is not None else infer_workspace(file),
        environ=environ,
        secrets=secrets,
        schema_checked=True,
        code=code,
    )
