"""What can be checked and compiled from an SDK DRIVER.md without importing anything:
install/package-manager agreement, version range syntax, `args_template` and
`client_options` templates, `result_extract` paths, and `${secrets.X}`
references against `auth.state.env`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flightdeck.documents import Diagnostic, Severity, pointer_join
from flightdeck.drivers._errors import TEMPLATE_ERROR
from flightdeck.drivers._extract import Extractor, compile_extract
from flightdeck.drivers._package import install_problems, range_problems
from flightdeck.drivers._template import ArgsTemplate, Node, compile_args, compile_value

CLIENT_OPTIONS_POINTER = "/metadata/sdk/client_options"


@dataclass(frozen=True)
class EntrySpec:
    """One `implements[]` entry, compiled."""

    index: int
    pointer: str
    tool: str
    version: str
    function_ref: str
    args: ArgsTemplate | None
    extract: Extractor
    streaming: bool
    drop_inputs: tuple[str, ...]
    cost_units: float | None


@dataclass(frozen=True)
class CompiledManifest:
    entries: tuple[EntrySpec, ...]
    client_options: Node | None
    secret_names: tuple[str, ...]


def secret_names(data: Mapping[str, Any]) -> tuple[str, ...]:
    auth = data.get("auth")
    state = auth.get("state") if isinstance(auth, Mapping) else None
    env = state.get("env") if isinstance(state, Mapping) else None
    return tuple(str(n) for n in env) if isinstance(env, list) else ()


def _cost(entry: Mapping[str, Any], data: Mapping[str, Any]) -> float | None:
    for source in (entry, data):
        cost = source.get("cost_override")
        if isinstance(cost, Mapping) and isinstance(cost.get("cost_units_per_call"), (int, float)):
            return float(cost["cost_units_per_call"])
    return None


def _entry(
    i: int, entry: Mapping[str, Any], data: Mapping[str, Any], diags: list[Diagnostic]
) -> EntrySpec | None:
    where = pointer_join("/implements", i)
    meta = entry.get("metadata")
    sdk = meta.get("sdk") if isinstance(meta, Mapping) else None
    if not isinstance(sdk, Mapping) or not isinstance(sdk.get("function_ref"), str):
        return None  # the schema reports it
    sdk_at = pointer_join(where, "metadata", "sdk")
    template = sdk.get("args_template")
    args = (
        compile_args(template, pointer_join(sdk_at, "args_template"), diags)
        if isinstance(template, Mapping)
        else None
    )
    extract = compile_extract(
        sdk.get("result_extract") if isinstance(sdk.get("result_extract"), str) else None,
        pointer_join(sdk_at, "result_extract"),
        diags,
    )
    streaming = isinstance(sdk.get("streaming"), Mapping) or isinstance(
        data.get("streaming"), Mapping
    )
    narrowing = entry.get("schema_narrowing")
    drops = narrowing.get("drop_inputs") if isinstance(narrowing, Mapping) else None
    return EntrySpec(
        index=i,
        pointer=where,
        tool=str(entry.get("tool", "")),
        version=str(entry.get("version", "*")),
        function_ref=str(sdk["function_ref"]),
        args=args,
        extract=extract,
        streaming=streaming,
        drop_inputs=tuple(str(d) for d in drops) if isinstance(drops, list) else (),
        cost_units=_cost(entry, data),
    )


def _secret_refs(node: Node | ArgsTemplate | None, declared: tuple[str, ...]) -> list[Diagnostic]:
    if node is None:
        return []
    out: list[Diagnostic] = []
    for ref in node.refs():
        if ref.root == "secrets" and ref.path and ref.path[0] not in declared:
            out.append(
                Diagnostic(
                    TEMPLATE_ERROR,
                    f"`{ref.text}` is not declared in auth.state.env",
                    pointer=node.pointer,
                    hint="list the variable under auth.state.env so the host resolves it",
                )
            )
    return out


def compile_manifest(data: Mapping[str, Any]) -> tuple[CompiledManifest, list[Diagnostic]]:
    """Compile an SDK driver's frontmatter; every problem is returned, none raised."""
    diags: list[Diagnostic] = install_problems(data) + range_problems(data)
    declared = secret_names(data)
    entries: list[EntrySpec] = []
    implements = data.get("implements")
    for i, entry in enumerate(implements if isinstance(implements, list) else []):
        if isinstance(entry, Mapping):
            if "mapping" in entry:
                diags.append(
                    Diagnostic(
                        "mapping_ignored",
                        "an SDK driver shapes arguments with metadata.sdk.args_template; "
                        "`mapping` is not applied",
                        Severity.WARNING,
                        pointer=pointer_join("/implements", i, "mapping"),
                        hint="write the rename as args_template: { sdk_name: '${input.x}' }",
                    )
                )
            spec = _entry(i, entry, data, diags)
            if spec is not None:
                entries.append(spec)
                diags += _secret_refs(spec.args, declared)
    options: Node | None = None
    meta = data.get("metadata")
    sdk = meta.get("sdk") if isinstance(meta, Mapping) else None
    if isinstance(sdk, Mapping) and "client_options" in sdk:
        raw = sdk["client_options"]
        if isinstance(raw, Mapping):
            options = compile_value(raw, CLIENT_OPTIONS_POINTER, diags)
            diags += _secret_refs(options, declared)
        else:
            diags.append(
                Diagnostic(
                    "client_options_invalid",
                    "metadata.sdk.client_options must be a map of constructor arguments",
                    pointer=CLIENT_OPTIONS_POINTER,
                )
            )
    return CompiledManifest(tuple(entries), options, declared), diags
