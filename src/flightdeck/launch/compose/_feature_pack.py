"""`catalog add` from a local folder: a Feature packed and pushed (issue 32).

The folder (`devcontainer-feature.json`, `install.sh`, bundled files) is
packed into the Feature's tarball reproducibly: members `./<path>` in
sorted order, time 0, owner 0 and no owner names, mode 0755 for folders
and executables and 0644 for other files, PAX headers only where ustar
cannot hold a name. The same folder gives the same bytes on any machine,
so the same manifest digest. The tarball is pushed as the devcontainer CLI
publishes a Feature (an empty config, one layer of
`application/vnd.devcontainers.layer.v1+tar`), and `_catalog_add` then
fetches it back by digest and checks it as composition will before the
catalog names it.

The folder may come from someone else (a cloned repository), and what is
packed leaves the machine: a link anywhere in it is refused, not followed
(one to `~/.ssh/id_ed25519` would publish the key); so is anything but
folders and regular files (a fifo would block the read); each file is
opened without following a link and checked to be regular after opening
(a file swapped for a link between the walk and the read); the whole is
bounded (`FOLDER_LIMIT` bytes, `MAX_ENTRIES` entries, `MAX_DEPTH` levels)
and read at most one byte past what is left. Each refusal is
`catalog.bad_feature_folder`, located at the entry.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flightdeck._bounded import TooLarge, read_regular_stat
from flightdeck._json import JsonError, read_json
from flightdeck.flightplan import FlightPlanError

FOLDER_LIMIT = 256 << 20
MAX_ENTRIES = 10_000
MAX_DEPTH = 32
METADATA = "devcontainer-feature.json"
METADATA_LIMIT = 1 << 20
FEATURE_MEDIA = "application/vnd.devcontainers.layer.v1+tar"
CONFIG_MEDIA = "application/vnd.devcontainers"
MANIFEST_MEDIA = "application/vnd.oci.image.manifest.v1+json"
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,127}$")


@dataclass(frozen=True)
class PackedFeature:
    tarball: bytes
    feature_id: str
    options: tuple[str, ...]  # the option ids devcontainer-feature.json declares


def _refused(where: Path, why: str) -> FlightPlanError:
    return FlightPlanError(
        "catalog.bad_feature_folder",
        f"{where}: {why}",
        where=str(where),
        hint="a Feature folder holds devcontainer-feature.json, install.sh and bundled"
        " files and folders: no links, devices or fifos",
    )


def pack_feature(folder: Path) -> PackedFeature:
    """The Feature tarball of `folder`, checked; `catalog.bad_feature_folder`."""
    try:
        if not stat.S_ISDIR(folder.lstat().st_mode):
            raise _refused(folder, "is not a folder (a link to one is not followed)")
    except OSError as exc:
        raise _refused(folder, f"cannot be read: {exc.strerror or exc}") from None
    files: dict[str, bytes | None] = {}  # relative path -> bytes, None for a folder
    modes: dict[str, int] = {}
    budget = [FOLDER_LIMIT]
    pending: list[tuple[Path, str, int]] = [(folder, "", 0)]
    while pending:
        current, prefix, depth = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            raise _refused(current, f"cannot be listed: {exc.strerror or exc}") from None
        for entry in entries:
            path, name = Path(entry.path), prefix + entry.name
            if len(files) >= MAX_ENTRIES:
                raise _refused(folder, f"has more than {MAX_ENTRIES:,} entries")
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise _refused(path, "its name is not UTF-8") from None
            if entry.is_symlink():
                raise _refused(path, "is a link (a Feature's files are packed, not followed)")
            if entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_DEPTH:
                    raise _refused(path, f"is nested deeper than {MAX_DEPTH} folders")
                files[name] = None
                pending.append((path, name + "/", depth + 1))
            elif entry.is_file(follow_symlinks=False):
                files[name], modes[name] = _read(path, budget)
            else:
                raise _refused(path, "is not a regular file or folder (a fifo, socket or device)")
    for required in (METADATA, "install.sh"):
        if files.get(required) is None:
            raise _refused(folder / required, "is missing (or is a folder)")
    feature_id, options = _metadata(folder / METADATA, files[METADATA] or b"")
    return PackedFeature(_tar(files, modes), feature_id, options)


def _read(path: Path, budget: list[int]) -> tuple[bytes, int]:
    try:
        data, info = read_regular_stat(path, budget[0], follow_links=False)
    except TooLarge:
        raise _refused(path, f"the folder holds more than {FOLDER_LIMIT >> 20} MiB") from None
    except OSError as exc:
        raise _refused(path, f"cannot be read as a regular file: {exc.strerror or exc}") from None
    budget[0] -= len(data)
    return data, 0o755 if info.st_mode & 0o111 else 0o644


def _metadata(where: Path, raw: bytes) -> tuple[str, tuple[str, ...]]:
    try:
        data = read_json(raw, limit=METADATA_LIMIT)
    except JsonError as exc:
        raise _refused(where, f"is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise _refused(where, "is not a JSON object")
    feature_id = data.get("id")
    if not isinstance(feature_id, str) or not _ID.match(feature_id):
        raise _refused(where, "`id` is not a Feature id (lower-case letters, digits, - _ .)")
    options = data.get("options", {})
    if not isinstance(options, dict) or not all(isinstance(v, dict) for v in options.values()):
        raise _refused(where, "`options` is not an object of option objects")
    container = data.get("containerEnv", {})
    if not isinstance(container, dict) or not all(isinstance(v, str) for v in container.values()):
        raise _refused(where, "`containerEnv` is not an object of strings")
    return feature_id, tuple(sorted(options))


def _tar(files: dict[str, bytes | None], modes: dict[str, int]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(f"./{name}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            data = files[name]
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), modes[name]
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def feature_manifest(packed: PackedFeature, config: bytes) -> bytes:
    """The Feature artifact's manifest as sorted compact JSON (so the same
    tarball gives the same digest)."""
    import hashlib

    def descriptor(media: str, data: bytes) -> dict[str, Any]:
        return {
            "mediaType": media,
            "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data),
        }

    layer = descriptor(FEATURE_MEDIA, packed.tarball)
    layer["annotations"] = {
        "org.opencontainers.image.title": f"devcontainer-feature-{packed.feature_id}.tgz"
    }
    manifest = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA,
        "config": descriptor(CONFIG_MEDIA, config),
        "layers": [layer],
    }
    return json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()


__all__ = ["PackedFeature", "feature_manifest", "pack_feature"]
