"""The code pins of a frozen plan, in their own signed file.

Aileron's `lock` is a closed object, so pins written inside it made every
pinned plan invalid for Aileron. They live in `code-pins.json` beside the
SKILL.md instead, and the SHA-256 of that file's bytes is written into the
frontmatter's `metadata` map (agentskills.io's open string map, the only
place the closed root admits a new value). The content hash, the content
signature, every co-signature and the signed statement cover the
frontmatter, so every signature covers the pins; and two freezes of the
same plan with other driver code get two content hashes, as before.

Plans frozen earlier keep their pins in `aileron.lock.codePins`; verify
still reads them there (and refuses a plan that has both).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from flightdeck._bounded import TooLarge, read_regular
from flightdeck._json import read_json
from flightdeck.flightplan._canonical import jcs, sha256_tag
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._limits import PLAN_FILE_BYTES
from flightdeck.flightplan.model._lock import CodePin

CODE_PINS_FILE = "code-pins.json"
METADATA_KEY = "flightdeck-code-pins"  # in the frontmatter's `metadata` map


def pins_file_bytes(pins: Sequence[CodePin]) -> bytes:
    """JCS of `{"codePins": [...]}` + LF: what freeze stores."""
    return jcs({"codePins": [pin.to_data() for pin in pins]}) + b"\n"


def bind_pins(data: dict[str, Any], pins_bytes: bytes | None) -> None:
    """Write (or, without pins, remove) the pins digest in `metadata`.

    Freeze owns this key the way it owns `aileron.lock`: a value in the
    source (a re-frozen plan) is replaced, never trusted."""
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop(METADATA_KEY, None)
        if not metadata:
            del data["metadata"]
    if pins_bytes is None:
        return
    if "metadata" not in data:
        # Before the aileron block, where a hand-written map would sit (the
        # key order changes no hash: JCS sorts; it only reads better).
        items = list(data.items())
        data.clear()
        for key, value in items:
            if key == "aileron":
                data["metadata"] = {}
            data[key] = value
        data.setdefault("metadata", {})
    data["metadata"][METADATA_KEY] = sha256_tag(pins_bytes)


def read_pins_file(
    folder: Path, data: Mapping[str, Any], in_lock: Sequence[CodePin]
) -> tuple[CodePin, ...]:
    """The verified pins of the version in `folder` whose (already verified)
    frontmatter is `data`: from `code-pins.json` when the frontmatter binds
    one, else the older in-lock `in_lock`. Raises a located `verify.*` error."""
    metadata = data.get("metadata")
    declared = metadata.get(METADATA_KEY) if isinstance(metadata, Mapping) else None
    path = folder / CODE_PINS_FILE
    where = str(path)
    if declared is None:
        if path.exists() or path.is_symlink():
            raise FlightPlanError(
                "verify.code_pins_unsigned",
                f"{path} is not bound by the signed plan (its metadata names no '{METADATA_KEY}')",
                hint="the file was added to the stored version; remove it or re-freeze",
                where=where,
            )
        return tuple(in_lock)
    if in_lock:
        raise FlightPlanError(
            "verify.code_pins_tampered",
            "the plan pins code both in aileron.lock.codePins and in " + CODE_PINS_FILE,
            hint="no freeze writes both; re-freeze from the source",
            where=where,
        )
    if path.is_symlink() or not path.is_file():
        raise FlightPlanError(
            "verify.code_pins_missing",
            f"no {CODE_PINS_FILE} at {path}, though the signed plan pins code ({declared})",
            hint="a stored version is immutable: the file was removed; re-freeze from the source",
            where=where,
        )
    try:
        raw = read_regular(path, PLAN_FILE_BYTES)
    except TooLarge:
        raw = b""  # not what freeze wrote: tampered, below
    except OSError as exc:
        raise FlightPlanError(
            "verify.code_pins_missing", f"cannot read {path}: {exc}", where=where
        ) from None
    pins = _parse(raw) if sha256_tag(raw) == declared else None
    if pins is None:
        raise FlightPlanError(
            "verify.code_pins_tampered",
            f"{path} is not the code pins the plan was signed with",
            hint="the file was edited or taken from another version; re-freeze from the source",
            where=where,
        )
    return pins


def _parse(raw: bytes) -> tuple[CodePin, ...] | None:
    # The digest matched, so these bytes are what freeze wrote; the checks
    # only keep a signer's odd file from becoming a traceback.
    try:
        value = read_json(raw.decode("utf-8"))
    except ValueError:
        return None
    items = value.get("codePins") if isinstance(value, dict) else None
    if not isinstance(items, list):
        return None
    pins = [CodePin.read(item) for item in items]
    return tuple(pin for pin in pins if pin is not None) if None not in pins else None
