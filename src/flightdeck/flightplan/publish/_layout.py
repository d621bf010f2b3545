"""`skills export` / `skills import`: the artifact as an OCI image layout tar.

For a machine without a registry (air-gapped): export writes exactly what
publish would push (the same artifact manifest, its blobs, the image copied
by digest, the driver tree) into an OCI image layout (`oci-layout`,
`index.json` naming each tag with `org.opencontainers.image.ref.name`,
`blobs/sha256/<hex>`), as a reproducible tar (sorted entries, mtime 0).
Import reads it through the same `install`, with the same bounds, digest
checks and verification before anything is stored; only `origin.json` is
left out (there is no registry to pull from: an imported plan's image is
pulled from its own registry; a composed image, which has none, the CLI
stores in the image cache from the tar's blobs).

Both are `OciClient`s: the writer takes publish's pushes (reads of the
plan's source image still go to its registry), the reader answers
install's fetches from the tar, each member read at most its bound.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

from flightdeck._json import read_json
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.publish._artifact import INDEX_TYPE
from flightdeck.flightplan.publish._install import InstallResult, install
from flightdeck.flightplan.publish._publish import LocalImage, PublishResult, publish
from flightdeck.flightplan.registry._images import ImageRef
from flightdeck.flightplan.registry._oci import Fetched, OciClient, sha256
from flightdeck.flightplan.registry._registry_http import RegistryRefused

LAYOUT = "oci-layout.invalid"  # the registry name of a layout (never a host)
REF_NAME = "org.opencontainers.image.ref.name"
_BLOB = re.compile(r"^blobs/sha256/([0-9a-f]{64})$")
INDEX_LIMIT = 1 << 20


class LayoutWriter(OciClient):
    def __init__(self, **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.blobs: dict[str, bytes] = {}
        self.tags: dict[str, tuple[str, str, int]] = {}

    def push_blob(
        self,
        ref: ImageRef,
        digest: str,
        data: bytes | Callable[[], bytes],
        mount_from: str | None = None,
    ) -> bool:
        if digest in self.blobs:
            return False
        body = data if isinstance(data, bytes) else data()
        if sha256(body) != digest:
            raise RegistryRefused("digest_mismatch", f"the bytes to write are not {digest}")
        self.blobs[digest] = body
        return True

    def push_manifest(self, ref: ImageRef, reference: str, body: bytes, media_type: str) -> bool:
        digest = sha256(body)
        self.blobs[digest] = body
        if not reference.startswith("sha256:"):
            self.tags[reference] = (digest, media_type, len(body))
        return True  # a layout needs no referrers index: the subject is in the manifest

    def write(self, path: Path) -> None:
        manifests = [
            {"mediaType": media, "digest": digest, "size": size, "annotations": {REF_NAME: tag}}
            for tag, (digest, media, size) in sorted(self.tags.items())
        ]
        index = {"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": manifests}
        files = {
            "oci-layout": b'{"imageLayoutVersion":"1.0.0"}',
            "index.json": json.dumps(index, sort_keys=True, separators=(",", ":")).encode(),
            **{f"blobs/sha256/{d.removeprefix('sha256:')}": b for d, b in self.blobs.items()},
        }
        temp = path.with_name(f".{path.name}.tmp")
        with tarfile.open(temp, "w", format=tarfile.PAX_FORMAT) as tar:
            for name in sorted(files):
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
                info.uname = info.gname = ""
                tar.addfile(info, io.BytesIO(files[name]))
        temp.replace(path)


def export(
    target: str,
    path: Path,
    *,
    progress: Callable[[str], None] = lambda line: None,
    local_image: LocalImage | None = None,
) -> PublishResult:
    """Write NAME@VERSION's artifact (what publish pushes) as a layout tar;
    a composed image is copied from `local_image`'s layout, as publish does."""
    writer = LayoutWriter()
    try:
        result = publish(
            target, f"{LAYOUT}/flightplans", writer, progress=progress, local_image=local_image
        )
        try:
            writer.write(path)
        except OSError as exc:
            raise FlightPlanError(
                "publish.unwritable", f"cannot write {path}: {exc.strerror or exc}"
            ) from None
    finally:
        writer.close()
    return result


def import_layout(
    path: Path, tag: str = "latest", *, progress: Callable[[str], None] = lambda line: None
) -> InstallResult:
    """Install the version a layout tar names by `tag`, as install does."""
    try:
        reader = LayoutReader(path)
    except (OSError, tarfile.TarError) as exc:
        raise FlightPlanError(
            "install.layout_unreadable", f"{path} is not an OCI image layout tar ({exc})"
        ) from None
    try:
        return install(f"{LAYOUT}/flightplans:{tag}", reader, progress=progress, origin=False)
    finally:
        reader.close()


class LayoutReader(OciClient):
    def __init__(self, path: Path) -> None:
        self._tar = tarfile.open(path, "r:")  # noqa: SIM115 (closed by close())
        super().__init__()
        self._members = {
            m.name: m
            for m in self._tar.getmembers()
            if m.isreg() and (m.name == "index.json" or _BLOB.match(m.name))
        }

    def close(self) -> None:
        self._tar.close()
        super().close()

    def _member(self, name: str, limit: int, what: str) -> bytes:
        member = self._members.get(name)
        if member is None:
            raise RegistryRefused("not_found", f"the layout has no {what}")
        if member.size > limit:
            raise RegistryRefused("too_large", f"{what}: more than {limit:,} bytes")
        handle = self._tar.extractfile(member)
        return handle.read(limit + 1) if handle is not None else b""

    def manifest(self, ref: ImageRef, reference: str, limit: int) -> Fetched:
        digest = reference if reference.startswith("sha256:") else None
        if digest is None:
            try:
                index = read_json(self._member("index.json", INDEX_LIMIT, "index.json"))
                named = [
                    m
                    for m in index["manifests"]
                    if isinstance(m, dict) and m.get("annotations", {}).get(REF_NAME) == reference
                ]
            except (ValueError, KeyError, TypeError, AttributeError):
                raise RegistryRefused(
                    "not_found", "the layout's index.json is unreadable"
                ) from None
            if len(named) != 1 or not isinstance(named[0].get("digest"), str):
                raise RegistryRefused("not_found", f"the layout names no manifest {reference!r}")
            digest = str(named[0]["digest"])
        body = self._member(f"blobs/sha256/{digest.removeprefix('sha256:')}", limit, reference)
        if sha256(body) != digest:
            raise RegistryRefused("digest_mismatch", f"the layout's {digest} is other bytes")
        return Fetched(body, _media_type(body), digest)

    def blob(self, ref: ImageRef, digest: str, size: int, dest: Path | None = None) -> bytes:
        name = f"blobs/sha256/{digest.removeprefix('sha256:')}"
        try:
            body = self._member(name, size, f"blob {digest}")
        except RegistryRefused as exc:
            if exc.code != "too_large":
                raise
            raise RegistryRefused("digest_mismatch", f"the layout's {digest} is larger") from None
        if sha256(body) != digest:
            raise RegistryRefused("digest_mismatch", f"the layout's {digest} is other bytes")
        if dest is not None:
            dest.write_bytes(body)
            return b""
        return body


def _media_type(body: bytes) -> str:
    try:
        media = read_json(body).get("mediaType", "")
    except (ValueError, AttributeError):
        return ""  # install judges the manifest itself
    return media if isinstance(media, str) else ""


__all__ = ["LAYOUT", "LayoutReader", "LayoutWriter", "export", "import_layout"]
