"""Materialize declared outputs (seed 003, "Outputs contract versus file-map
transport").

A step result reaches an output as a file-map entry `{path, mimeType,
encoding, content}` (or a list holding exactly one, or one whose path is the
output's publish path / name), as text, or, for plain data, as canonical
JSON. Only `utf-8` is materialized; a mime type that differs from the
declaration fails the output. `publish.target: file` writes under the run's
output directory (confined: no absolute paths, no `..`, no symlinked
escape; atomic: temp file + rename); `none` keeps the content in the run
record.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from flightdeck._json import read_json
from flightdeck.flightplan import Output
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.core._values import canonical_json

_ENTRY_KEYS = {"path", "mimeType", "encoding", "content"}


@dataclass(frozen=True)
class Materialized:
    record: dict[str, Any]  # name, path, mime_type, sha256, bytes, target
    content: str


def _json_mime(mime: str) -> bool:
    return mime == "application/json" or mime.endswith("+json")


def _is_entry(value: Any) -> bool:
    return isinstance(value, dict) and set(value) >= _ENTRY_KEYS


def _pick_entry(output: Output, value: Any) -> dict[str, Any] | None:
    if _is_entry(value):
        return dict(value)
    if isinstance(value, list) and value and all(_is_entry(item) for item in value):
        if len(value) == 1:
            return dict(value[0])
        wanted = {output.publish_path, output.name}
        for item in value:
            if item["path"] in wanted or PurePosixPath(item["path"]).name in wanted:
                return dict(item)
        raise LaunchError(
            "output.ambiguous",
            f"output {output.name!r}: the file-map has {len(value)} entries and none is"
            f" named {output.publish_path or output.name!r}",
        )
    return None


def render(output: Output, value: Any) -> str:
    """The artifact's text, checked against the declared mime and encoding."""
    declared = output.mime_type or "application/octet-stream"
    if output.encoding not in (None, "utf-8"):
        raise LaunchError(
            "output.encoding_unsupported",
            f"output {output.name!r} declares encoding {output.encoding}; v1 materializes"
            " utf-8 only",
        )
    entry = _pick_entry(output, value)
    if entry is not None:
        if entry.get("encoding") != "utf-8":
            raise LaunchError(
                "output.encoding_unsupported",
                f"output {output.name!r}: entry encoding {entry.get('encoding')} is not utf-8",
            )
        if entry.get("mimeType") != declared:
            raise LaunchError(
                "output.mime_mismatch",
                f"output {output.name!r} is declared {declared} but the step produced"
                f" {entry.get('mimeType')}",
            )
        value = entry.get("content")
        if not isinstance(value, str):
            raise LaunchError("output.invalid", f"output {output.name!r}: content is not text")
        return value
    if isinstance(value, str):
        if _json_mime(declared):
            try:
                read_json(value, depth=None)
            except ValueError:
                raise LaunchError(
                    "output.mime_mismatch",
                    f"output {output.name!r} is declared {declared} but the text is not JSON",
                ) from None
        return value
    if not _json_mime(declared):
        raise LaunchError(
            "output.mime_mismatch",
            f"output {output.name!r} is declared {declared} but the step produced JSON data",
        )
    return canonical_json(value).decode("utf-8")


def confined_path(out_dir: Path, relative: str) -> Path:
    """`out_dir/relative`, refusing anything that would land outside it."""
    pure = PurePosixPath(relative)
    if not relative or pure.is_absolute() or ".." in pure.parts or "\\" in relative:
        raise LaunchError(
            "output.path_escape", f"publish path {relative!r} must stay inside the output dir"
        )
    root = out_dir.resolve()
    target = root.joinpath(*pure.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(root) or target.is_symlink():
        raise LaunchError(
            "output.path_escape", f"publish path {relative!r} leaves the output dir via a symlink"
        )
    return target


def write_atomic(target: Path, data: bytes) -> None:
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def materialize(
    output: Output, value: Any, out_dir: Path, limit: int | None = None
) -> Materialized:
    """The output rendered and, for `publish.target: file`, written. Over
    `limit` (the store's, when the journal will keep the content) it is
    `output.too_large` before anything is written."""
    text = render(output, value)
    data = text.encode("utf-8")
    if limit is not None and len(data) > limit:
        from flightdeck.launch.engine._output_store import too_large

        raise too_large(output.name, len(data), limit)
    record: dict[str, Any] = {
        "name": output.name,
        "path": None,
        "mime_type": output.mime_type,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "target": output.publish_target or "none",
    }
    if output.publish_target == "file":
        relative = output.publish_path or output.name
        try:
            target = confined_path(out_dir, relative)
            write_atomic(target, data)
        except OSError as exc:
            raise LaunchError(
                "output.unwritable",
                f"output {output.name!r} cannot be written to {out_dir / relative}: "
                f"{exc.strerror or exc}",
                hint="check --out-dir: the path must be a writable file location",
            ) from None
        record["path"] = str(target)
    return Materialized(record, text)
