"""`define_io` (alias `defineIO`): the AIP-16 IO blocks as an immutable handle.

Defining IO does no I/O: schemas are checked in memory and validators are
compiled on first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError, best_match
from referencing.exceptions import Unresolvable

from flightdeck._json import json_copy
from flightdeck.documents import Diagnostic, explaining_validator, pointer_join, ref_problems
from flightdeck.io._errors import IODefinitionError
from flightdeck.io._paths import relative_path_problem, unknown_tokens
from flightdeck.io._result import Err, Ok, ValidationResult

FS_ROOT_KEY = "_workflowFsRoot"
_MODES = ("ro", "rw")


@dataclass(frozen=True)
class FileContractEntry:
    """One `inputsFiles` / `outputsFiles` entry."""

    path: str
    mode: Literal["ro", "rw"] | None = None
    content_type: str | None = None

    def to_dict(self) -> dict[str, str]:
        out = {"path": self.path}
        if self.mode is not None:
            out["mode"] = self.mode
        if self.content_type is not None:
            out["contentType"] = self.content_type
        return out


def _schema_of(value: Any) -> Any:
    """A JSON Schema from a dict, None (no constraint) or a pydantic model class."""
    if value is None:
        return {}
    schema_fn = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(schema_fn):
        return schema_fn()
    return value


def _schema_problems(name: str, schema: Any) -> Iterator[Diagnostic]:
    if not isinstance(schema, (dict, bool)):
        yield Diagnostic(
            "io.invalid_schema",
            f"`{name}` must be a JSON Schema object or a pydantic model class",
            pointer=pointer_join("", name),
        )
        return
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        yield Diagnostic(
            "io.invalid_schema",
            f"`{name}` is not a valid Draft 2020-12 schema: {exc.message}",
            pointer=pointer_join("", name, *exc.path),
        )
        return
    yield from ref_problems(schema, pointer_join("", name), "schema.unresolvable_ref")


def _entry(block: str, key: str, raw: Any, diags: list[Diagnostic]) -> FileContractEntry | None:
    where = pointer_join("", block, key)
    if not key or key in (".", "..") or "/" in key or "\\" in key or "\x00" in key:
        diags.append(
            Diagnostic(
                "io.file_key_invalid",
                f"key {key!r} must be a plain file name: it becomes <fsRoot>/<key>",
                pointer=where,
            )
        )
    if isinstance(raw, FileContractEntry):
        raw = raw.to_dict()
    if not isinstance(raw, Mapping) or not isinstance(raw.get("path"), str):
        diags.append(
            Diagnostic("io.file_entry_invalid", "entry needs a string `path`", pointer=where)
        )
        return None
    extra = set(raw) - {"path", "mode", "contentType", "content_type"}
    if extra:
        diags.append(
            Diagnostic(
                "io.file_entry_invalid",
                f"unknown entry fields: {', '.join(sorted(extra))}",
                pointer=where,
            )
        )
    path, mode = raw["path"], raw.get("mode")
    if mode is not None and mode not in _MODES:
        diags.append(
            Diagnostic(
                "io.file_entry_invalid",
                "`mode` must be ro or rw",
                pointer=pointer_join(where, "mode"),
            )
        )
        mode = None
    problem = relative_path_problem(path)
    if problem is not None:
        diags.append(Diagnostic("io.path_unsafe", problem, pointer=pointer_join(where, "path")))
    for token in unknown_tokens(path):
        diags.append(
            Diagnostic(
                "io.unknown_path_token",
                f"<{token}> is not a path token (use <runId>, <workflowId>, <toolId>, <isoDate>)",
                pointer=pointer_join(where, "path"),
                hint="paths derived from input values must be written through a tool",
            )
        )
    content_type = raw.get("contentType", raw.get("content_type"))
    return FileContractEntry(path, mode, content_type if isinstance(content_type, str) else None)


def _entries(block: str, raw: Any, diags: list[Diagnostic]) -> Mapping[str, FileContractEntry]:
    if raw is None:
        return MappingProxyType({})
    if not isinstance(raw, Mapping):
        diags.append(
            Diagnostic("io.file_entry_invalid", f"`{block}` must be a map", pointer=f"/{block}")
        )
        return MappingProxyType({})
    out: dict[str, FileContractEntry] = {}
    for key, value in raw.items():
        entry = _entry(block, str(key), value, diags)
        if entry is not None:
            out[str(key)] = entry
    return MappingProxyType(out)


def fs_root_admitted(schema: Any) -> bool:
    """Whether an `inputs` schema lets the host inject `_workflowFsRoot: string`.

    Structural check of the top level: the schema must describe an object and
    either declare `_workflowFsRoot` as a string-admitting property or leave
    additional properties open.
    """
    if schema is True or schema == {}:
        return True
    if not isinstance(schema, dict) or schema is False:
        return False
    kind = schema.get("type")
    if kind is not None and kind != "object" and not (isinstance(kind, list) and "object" in kind):
        return False
    props = schema.get("properties") or {}
    if FS_ROOT_KEY in props:
        probe = {FS_ROOT_KEY: "/tmp/fd-probe"}
        sub = {"properties": {FS_ROOT_KEY: props[FS_ROOT_KEY]}, "$defs": schema.get("$defs", {})}
        return _offline_valid(sub, probe)
    closed = (
        schema.get("additionalProperties") is False or schema.get("unevaluatedProperties") is False
    )
    if not closed:
        return True
    patterns = schema.get("patternProperties") or {}
    return any(_offline_valid({"pattern": p}, FS_ROOT_KEY) for p in patterns)


def _offline_valid(schema: Any, value: Any) -> bool:
    try:
        return bool(explaining_validator(schema).is_valid(value))
    except Unresolvable:  # refused by define_io's reference check already
        return False


def _format_error(error: ValidationError) -> str:
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}"


def _check(validator: Any, value: Any) -> ValidationResult:
    try:
        error = best_match(validator.iter_errors(value))
    except Unresolvable as exc:  # the offline registry has no such schema; nothing is fetched
        return Err(f"the schema has a $ref that does not resolve offline: {exc}")
    return Ok(value) if error is None else Err(_format_error(error))


@dataclass(frozen=True)
class IOHandle:
    """The four IO blocks in canonical shape. Never None; file maps default to `{}`."""

    inputs: Any = field(default_factory=dict)
    outputs: Any = field(default_factory=dict)
    inputs_files: Mapping[str, FileContractEntry] = field(
        default_factory=lambda: MappingProxyType({})
    )
    outputs_files: Mapping[str, FileContractEntry] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def inputsFiles(self) -> Mapping[str, FileContractEntry]:
        return self.inputs_files

    @property
    def outputsFiles(self) -> Mapping[str, FileContractEntry]:
        return self.outputs_files

    @property
    def uses_files(self) -> bool:
        return bool(self.inputs_files or self.outputs_files)

    @cached_property
    def _input_validator(self) -> Any:
        return explaining_validator(self.inputs)

    @cached_property
    def _output_validator(self) -> Any:
        return explaining_validator(self.outputs)

    def validate_input(self, value: Any) -> ValidationResult:
        """`inputs` plus the `_workflowFsRoot` rules: present and a string when files are used."""
        if self.uses_files:
            if not isinstance(value, Mapping):
                return Err("input must be an object when the file contract is used")
            root = value.get(FS_ROOT_KEY)
            if not isinstance(root, str) or not root:
                return Err(f"/{FS_ROOT_KEY}: must be the host-injected scratch root path")
        return _check(self._input_validator, value)

    validateInput = validate_input

    def validate_output(self, value: Any) -> ValidationResult:
        return _check(self._output_validator, value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "outputs": self.outputs,
            "inputsFiles": {k: v.to_dict() for k, v in self.inputs_files.items()},
            "outputsFiles": {k: v.to_dict() for k, v in self.outputs_files.items()},
        }


def define_io(
    definition: Mapping[str, Any] | None = None,
    *,
    inputs: Any = None,
    outputs: Any = None,
    inputs_files: Mapping[str, Any] | None = None,
    outputs_files: Mapping[str, Any] | None = None,
) -> IOHandle:
    """Build an `IOHandle` from a definition dict (spec field names) or keywords.

    Raises `IODefinitionError` listing every problem at once.
    """
    if definition is not None:
        inputs = definition.get("inputs", inputs)
        outputs = definition.get("outputs", outputs)
        inputs_files = definition.get("inputsFiles", definition.get("inputs_files", inputs_files))
        outputs_files = definition.get(
            "outputsFiles", definition.get("outputs_files", outputs_files)
        )
    diags: list[Diagnostic] = []
    in_schema, out_schema = _schema_of(inputs), _schema_of(outputs)
    diags += _schema_problems("inputs", in_schema)
    diags += _schema_problems("outputs", out_schema)
    in_files = _entries("inputsFiles", inputs_files, diags)
    out_files = _entries("outputsFiles", outputs_files, diags)
    schema_ok = not any(d.code == "io.invalid_schema" for d in diags)
    if (in_files or out_files) and schema_ok and not fs_root_admitted(in_schema):
        diags.append(
            Diagnostic(
                "io.fs_root_not_admitted",
                f"`inputs` must admit `{FS_ROOT_KEY}` (a string) when a file map is non-empty",
                pointer="/inputs",
                hint=f"add `{FS_ROOT_KEY}: {{type: string}}` to inputs.properties",
            )
        )
    if diags:
        raise IODefinitionError(diags)
    # Deep-copy through JSON so the handle never shares mutable state with the caller.
    return IOHandle(
        inputs=json_copy(in_schema),
        outputs=json_copy(out_schema),
        inputs_files=in_files,
        outputs_files=out_files,
    )


defineIO = define_io
