"""Issue 32's fixtures: a busybox runner base and Dev Container Features,
built by the test and pushed to the loopback registry as OCI artifacts."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import httpx

from tests.flightplan import _registry

from . import _image

APPLETS = ["sh", "cat", "echo", "test", "mkdir", "cp", "chmod", "ln", "rm", "printf"]
APPLETS += ["wget", "mkfifo", "ls", "id", "touch", "mv"]
FEATURE_MEDIA = "application/vnd.devcontainers.layer.v1+tar"


def runner_layers() -> list[tuple[bytes, bool]]:
    """The runner base: static busybox and its applets in /bin, an empty
    /usr/local/bin, a file one Feature deletes (a whiteout)."""
    return [
        (
            _image.layer(
                [
                    ("bin", "dir", b""),
                    ("bin/busybox", "exec", _image.BUSYBOX.read_bytes()),
                    *[(f"bin/{a}", "link", "busybox") for a in APPLETS],
                    ("usr", "dir", b""),
                    ("usr/local", "dir", b""),
                    ("usr/local/bin", "dir", b""),
                    ("etc", "dir", b""),
                    ("etc/motd", "file", "the runner base\n"),
                ]
            ),
            False,
        )
    ]


def feature_tar(
    feature_id: str,
    version: str,
    install: str,
    files: dict[str, str] | None = None,
    options: dict[str, Any] | None = None,
    extra: list[tarfile.TarInfo] | None = None,
    depends_on: dict[str, Any] | None = None,
    installs_after: list[str] | None = None,
) -> bytes:
    """A Feature's tarball: devcontainer-feature.json, install.sh (0755)
    and bundled files, as `./name` members the way the devcontainer CLI
    packs them."""
    metadata: dict[str, Any] = {"id": feature_id, "version": version, "options": options or {}}
    if depends_on is not None:
        metadata["dependsOn"] = depends_on
    if installs_after is not None:
        metadata["installsAfter"] = installs_after
    members = {
        "devcontainer-feature.json": (json.dumps(metadata).encode(), 0o644),
        "install.sh": (install.encode(), 0o755),
        **{name: (text.encode(), 0o644) for name, text in (files or {}).items()},
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, (body, mode) in members.items():
            info = tarfile.TarInfo(f"./{name}")
            info.size, info.mode, info.mtime = len(body), mode, 0
            tar.addfile(info, io.BytesIO(body))
        for info in extra or []:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.size else None)
    return buffer.getvalue()


def push_feature(address: str, repository: str, tag: str, tarball: bytes) -> str:
    """Push a Feature as the devcontainer CLI publishes one; the manifest digest."""
    base = f"http://{address}"
    with httpx.Client(timeout=20) as client:
        config = b"{}"
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {
                    "mediaType": "application/vnd.devcontainers",
                    "digest": _registry._upload(client, base, repository, config),
                    "size": len(config),
                },
                "layers": [
                    {
                        "mediaType": FEATURE_MEDIA,
                        "digest": _registry._upload(client, base, repository, tarball),
                        "size": len(tarball),
                        "annotations": {"org.opencontainers.image.title": "feature.tgz"},
                    }
                ],
            }
        ).encode()
        put = client.put(
            f"{base}/v2/{repository}/manifests/{tag}",
            content=manifest,
            headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"},
        )
        assert put.status_code == 201, put.text
    return "sha256:" + hashlib.sha256(manifest).hexdigest()


HELLO = """#!/bin/sh
if [ "$1" = --version ]; then echo "hello 1.2.0"; exit 0; fi
echo "hello from 1.2.0" > /flightdeck/out/hello.txt
"""

GREET_INSTALL = """#!/bin/sh
set -e
mkdir -p /usr/local/bin /usr/local/share/greet
cp greet.sh /usr/local/bin/greet
chmod 755 /usr/local/bin/greet
printf '%s\\n' "$GREETING" > /usr/local/share/greet/greeting
rm /etc/motd
"""

GREET = """#!/bin/sh
if [ "$1" = --version ]; then echo "greet 2.0.1"; exit 0; fi
{
  echo "greet 2.0.1 says $(cat /usr/local/share/greet/greeting)"
  hello --version
  for p in "$@"; do if test -e "$p"; then echo "$p seen"; else echo "$p absent"; fi; done
} > /flightdeck/out/report.txt
"""


def hello_feature(install: str | None = None) -> bytes:
    script = install or (
        "#!/bin/sh\nset -e\nmkdir -p /usr/local/bin\ncp hello.sh /usr/local/bin/hello\n"
        "chmod 755 /usr/local/bin/hello\n"
    )
    return feature_tar("hello", "1.2.0", script, {"hello.sh": HELLO})


def greet_feature() -> bytes:
    return feature_tar(
        "greet",
        "2.0.1",
        GREET_INSTALL,
        {"greet.sh": GREET},
        {"greeting": {"type": "string", "default": "hi"}},
    )


def write_catalog(
    path: Path, base: str, entries: dict[str, tuple[str, str, dict[str, str]]]
) -> Path:
    """entries: tool -> (version, feature reference, options)."""
    tools = {
        tool: {
            "programs": [tool],
            "versions": {version: {"feature": ref, **({"options": opts} if opts else {})}},
        }
        for tool, (version, ref, opts) in entries.items()
    }
    path.write_text(json.dumps({"catalogVersion": 1, "runnerBase": base, "tools": tools}))
    return path


def blob_file(registry_dir: Path, data: bytes) -> Path:
    hexdigest = hashlib.sha256(data).hexdigest()
    blobs = registry_dir / "storage" / "docker" / "registry" / "v2" / "blobs" / "sha256"
    return blobs / hexdigest[:2] / hexdigest / "data"
