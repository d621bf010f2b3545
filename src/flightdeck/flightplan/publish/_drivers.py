"""The driver code travels: the pinned workspace files as one tar layer.

A version whose code pins name workspace drivers (`root: workspace`) runs
only with exactly those files. Publish packs them from the workspace the
version was frozen in, each checked against its pin first, as a
reproducible tar (names sorted, relative to the workspace root, regular
files of mode 0644, owner 0, time 0): the same pins give the same bytes.
Install accepts the tar only when its members are exactly the pinned files
with the pinned bytes, and stores them under `workspace/` in the version
folder, where launch finds them when no `--workspace` is given. Launch
checks them against the pins again, as for any workspace. Drivers from
installed distributions (`root: library`) do not travel: launch checks
their RECORD digests on the installing machine.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import tarfile
from collections.abc import Sequence
from pathlib import Path

from flightdeck._bounded import MiB
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.model._lock import CodePin

DRIVERS_TYPE = "application/vnd.flightdeck.flightplan.drivers.v1.tar"
DRIVERS_TITLE = "drivers.tar"
DRIVERS_LIMIT = 64 * MiB
WORKSPACE_DIR = "workspace"


def pinned_files(pins: Sequence[CodePin]) -> dict[str, str]:
    """The workspace drivers' files, relative to the workspace root, and
    their pinned digests."""
    out: dict[str, str] = {}
    for pin in pins:
        if pin.root != "workspace":
            continue
        base = posixpath.dirname(pin.location)
        for name, digest in pin.files.items():
            path = posixpath.normpath(posixpath.join(base, name))
            # A file outside the workspace (an installed distribution's
            # RECORD file) is the installing machine's: launch checks it there.
            if not (path.startswith(("../", "/")) or path in ("..", ".")):
                out[path] = digest
    return out


def pack(workspace: Path | None, pins: Sequence[CodePin]) -> bytes | None:
    """The tar of the pinned workspace files, or None when nothing is pinned
    there. Refused when a file is missing or not its pinned bytes."""
    files = pinned_files(pins)
    if not files:
        return None
    if workspace is None or not workspace.is_dir():
        raise FlightPlanError(
            "publish.code_unavailable",
            f"the version pins workspace driver code, but its workspace {workspace} is gone",
            hint="publish from the machine (and workspace) the version was frozen in",
        )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            path = workspace / name
            try:
                data = path.read_bytes() if not path.is_symlink() else b""
            except OSError:
                data = b""
            if "sha256:" + hashlib.sha256(data).hexdigest() != files[name]:
                raise FlightPlanError(
                    "publish.code_changed",
                    f"{path} is not the code the version pinned",
                    hint="the workspace changed since freeze: freeze a new version",
                    where=str(path),
                )
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def unpack(raw: bytes, pins: Sequence[CodePin], where: str) -> dict[str, bytes]:
    """The files of a served tar as `workspace/<name>` -> bytes, refused
    (`install.code_mismatch`) unless they are exactly the pinned files."""
    files = pinned_files(pins)
    out: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for member in tar.getmembers():
                if not member.isreg() or member.name not in files or member.name in out:
                    raise _mismatch(where, f"member {member.name!r} is not a pinned file")
                handle = tar.extractfile(member)
                data = handle.read() if handle is not None else b""
                if "sha256:" + hashlib.sha256(data).hexdigest() != files[member.name]:
                    raise _mismatch(where, f"{member.name} is not the pinned bytes")
                out[member.name] = data
    except (tarfile.TarError, OSError, ValueError) as exc:
        raise _mismatch(where, f"not a tar ({exc})") from None
    missing = sorted(set(files) - set(out))
    if missing:
        raise _mismatch(where, f"pinned files missing: {', '.join(missing)}")
    return {f"{WORKSPACE_DIR}/{name}": data for name, data in out.items()}


def _mismatch(where: str, detail: str) -> FlightPlanError:
    return FlightPlanError(
        "install.code_mismatch",
        f"{where}: the driver code layer is not the code the signed version pins: {detail}",
        hint="the registry serves other driver code than the publisher pinned",
        where=where,
    )


__all__ = ["DRIVERS_LIMIT", "DRIVERS_TITLE", "DRIVERS_TYPE", "WORKSPACE_DIR", "pack", "unpack"]
