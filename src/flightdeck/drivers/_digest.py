"""The code digest of a driver: what freeze pins and launch re-checks.

A workspace-local driver (`package_manager: local`, or any driver without an
installed distribution behind it) is digested by content: its folder (the
DRIVER.md and everything beside it), the TOOL.md files it implements and its
local package tree. A driver backed by an installed distribution is digested
by the distribution's name, version and the current bytes of every file its
RECORD lists, plus the same manifest files. docs/canonical-bytes.md ("Code
digests") defines the bytes so another implementation can recompute them.

Symbolic links are refused rather than followed: a link can point the pinned
name at content outside the digested tree, or at a different file each time.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from flightdeck.documents import DocumentKind, load_document
from flightdeck.drivers._package import local_path

DIGEST_PREFIX = "sha256:"


class CodeDigestError(Exception):
    """The code cannot be digested (a symlink, a missing package, an
    unreadable file). `path` names the file concerned."""

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path


@dataclass(frozen=True)
class CodeDigest:
    digest: str  # sha256:<hex> over the manifest bytes
    files: Mapping[str, str] = field(default_factory=dict)  # name -> sha256:<hex>
    distribution: str | None = None
    version: str | None = None
    # Every file digested, by resolved path: the driver import reads module
    # files only when they are among these with these bytes. Not in the lock.
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)


# Bounds of one digest: a tree planted with a million files or a sparse
# terabyte would otherwise keep freeze and launch hashing for hours.
MAX_ENTRIES = 100_000  # files and folders in one tree (and rows of a RECORD)
MAX_BYTES = 4 * 1024**3  # bytes hashed for one driver, all files together
_CHUNK = 1024 * 1024


class _Hasher:
    """Hashes the files of one digest within `MAX_BYTES` in all, and keeps
    each file's digest by its resolved path (what the import checks)."""

    def __init__(self) -> None:
        self.left = MAX_BYTES
        self.sources: dict[str, str] = {}

    def digest(self, path: Path) -> str:
        # O_NOFOLLOW: a link swapped in after the walk looked is not followed;
        # O_NONBLOCK: a FIFO put in a file's place does not hang the open.
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        hasher = hashlib.sha256()
        try:
            fd = os.open(path, flags)
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise CodeDigestError(f"{path} is not a regular file", str(path))
                while chunk := handle.read(_CHUNK):
                    self.left -= len(chunk)
                    if self.left < 0:
                        raise CodeDigestError(
                            f"the driver's files hold more than {MAX_BYTES:,} bytes"
                            f" (at {path}); code pins stop there",
                            str(path),
                        )
                    hasher.update(chunk)
        except OSError as exc:
            raise CodeDigestError(f"cannot read {path}: {exc.strerror or exc}", str(path)) from None
        value = DIGEST_PREFIX + hasher.hexdigest()
        self.sources[os.path.realpath(path)] = value
        return value


def _excluded(name: str) -> bool:
    # Byte-code is written by the interpreter itself; it is not what was
    # pinned, and the driver import never reads it (`_source_import`).
    parts = PurePosixPath(name).parts
    return "__pycache__" in parts or name.endswith((".pyc", ".pyo"))


def _walk(root: Path) -> Iterator[Path]:
    """Every regular file under `root`, `__pycache__` folders skipped.

    An explicit stack rather than recursion: a tree nested thousands deep
    is walked (or refused by the entry bound), never a RecursionError. A
    symbolic link anywhere is refused, and so is anything that is neither
    a file nor a folder (a FIFO, a socket, a device)."""
    if root.is_symlink():
        raise CodeDigestError(f"{root} is a symbolic link; code pins refuse links", str(root))
    if root.is_file():
        yield root
        return
    stack, seen = [root], 0
    while stack:
        folder = stack.pop()
        entries = []
        try:
            with os.scandir(folder) as listing:
                for entry in listing:
                    seen += 1
                    if seen > MAX_ENTRIES:
                        raise CodeDigestError(
                            f"{root} holds more than {MAX_ENTRIES:,} files and folders;"
                            " code pins stop there",
                            str(root),
                        )
                    entries.append(entry)
        except OSError as exc:
            raise CodeDigestError(
                f"cannot read {folder}: {exc.strerror or exc}", str(folder)
            ) from None
        for entry in sorted(entries, key=lambda e: e.name):
            path = Path(entry.path)
            if entry.is_symlink():
                raise CodeDigestError(
                    f"{path} is a symbolic link; code pins refuse links", str(path)
                )
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(path)
            elif entry.is_file(follow_symlinks=False):
                yield path
            else:
                raise CodeDigestError(
                    f"{path} is not a regular file (a FIFO, socket or device); code pins refuse it",
                    str(path),
                )


def _name(driver_dir: Path, file: Path) -> str:
    # Lexical, like the DRIVER.md's own relative references (`../../.tools/…`).
    relative = Path(os.path.relpath(file, driver_dir)).as_posix()
    if "\n" in relative or "\r" in relative:
        raise CodeDigestError(f"file name {relative!r} holds a line break", str(file))
    return relative


def _local_package(data: Mapping[str, Any], bases: list[Path]) -> Path | None:
    """The local package's folder (or single module) the way import resolves it."""
    rel = local_path(data)
    if rel is None:
        return None
    for base in bases:
        candidate = base / rel
        if candidate.is_symlink():
            raise CodeDigestError(f"{candidate} is a symbolic link", str(candidate))
        entry = data.get("entrypoint")
        if candidate.is_dir() and isinstance(entry, str) and entry.endswith(".py"):
            if (candidate / entry).is_file():
                return candidate
        elif (candidate.is_dir() and (candidate / "__init__.py").is_file()) or candidate.is_file():
            return candidate
    return None


def manifest_files(
    driver_file: Path, workspace: Path | None, hasher: _Hasher
) -> tuple[dict[str, str], Any]:
    """The driver's files by name (relative to the DRIVER.md's folder, POSIX
    separators, `..` allowed) with their digests, and its frontmatter data."""
    if driver_file.is_symlink():
        raise CodeDigestError(f"{driver_file} is a symbolic link", str(driver_file))
    document = load_document(driver_file, kind=DocumentKind.DRIVER).document
    if document is None:
        raise CodeDigestError(f"{driver_file} cannot be read as a DRIVER.md", str(driver_file))
    data = document.data
    driver_dir = driver_file.parent
    found: list[Path] = list(_walk(driver_dir))
    for entry in data.get("implements") or []:
        ref = entry.get("tool") if isinstance(entry, dict) else None
        if isinstance(ref, str) and ref.endswith(".md"):
            tool = driver_dir / ref
            if tool.is_symlink() or tool.is_file():
                found.extend(_walk(tool))
    if data.get("package_manager") == "local":
        bases = [driver_dir] + ([workspace] if workspace is not None else [])
        package = _local_package(data, bases)
        if package is None:
            raise CodeDigestError(
                f"the local package {local_path(data)!r} of {driver_file} is not there",
                str(driver_file),
            )
        found.extend(_walk(package))
    files: dict[str, str] = {}
    for file in found:
        name = _name(driver_dir, file)
        if not _excluded(name):
            files[name] = hasher.digest(file)
    return files, data


def manifest_bytes(
    files: Mapping[str, str], distribution: str | None = None, version: str | None = None
) -> bytes:
    """`distribution <name> <version>\\n` (installed only), then one line per
    file, `<hex>  <name>\\n`, sorted by the UTF-8 bytes of the name."""
    head = f"distribution {distribution} {version}\n" if distribution is not None else ""
    lines = [
        f"{files[name].removeprefix(DIGEST_PREFIX)}  {name}\n"
        for name in sorted(files, key=lambda n: n.encode("utf-8"))
    ]
    return (head + "".join(lines)).encode("utf-8")


def digest_of(
    files: Mapping[str, str], distribution: str | None = None, version: str | None = None
) -> str:
    return DIGEST_PREFIX + hashlib.sha256(manifest_bytes(files, distribution, version)).hexdigest()


def distribution_files(name: str, hasher: _Hasher) -> tuple[str, dict[str, str]]:
    """(version, {`dist:<RECORD path>`: digest of the file's current bytes})."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        raise CodeDigestError(f"distribution {name!r} is not installed") from None
    record = dist.read_text("RECORD")
    if record is None:
        raise CodeDigestError(f"distribution {name!r} has no RECORD to pin")
    files: dict[str, str] = {}
    for number, row in enumerate(csv.reader(io.StringIO(record)), 1):
        if number > MAX_ENTRIES:
            raise CodeDigestError(
                f"the RECORD of {name!r} lists more than {MAX_ENTRIES:,} files;"
                " code pins stop there"
            )
        if not row or not row[0] or row[0].endswith("/RECORD") or _excluded(row[0]):
            continue
        located = Path(str(dist.locate_file(row[0])))
        if located.is_symlink():
            raise CodeDigestError(f"{located} is a symbolic link", str(located))
        if located.is_file():  # a file RECORD lists but that is gone is not imported
            files["dist:" + row[0]] = hasher.digest(located)
    return str(dist.version), files


def record_mismatch(name: str) -> str | None:
    """The first file whose bytes differ from the hash its RECORD states.

    RECORD is read the way `distribution_files` reads it (not through
    `Distribution.files`, which fails on a blank row with a TypeError)."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    record = dist.read_text("RECORD") or ""
    for number, row in enumerate(csv.reader(io.StringIO(record)), 1):
        if number > MAX_ENTRIES:
            return None
        if len(row) < 2 or not row[1].startswith("sha256="):
            continue
        located = Path(str(dist.locate_file(row[0])))
        try:
            fd = os.open(located, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                raw = hashlib.file_digest(handle, "sha256").digest()
        except OSError:
            return row[0]
        value = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        if value != row[1].removeprefix("sha256="):
            return row[0]
    return None


def driver_code(driver_file: Path, workspace: Path | None = None) -> CodeDigest:
    """The code digest of the driver whose DRIVER.md is `driver_file`."""
    hasher = _Hasher()
    files, data = manifest_files(driver_file, workspace, hasher)
    if data.get("package_manager") in ("pip", "poetry"):
        package = str(data.get("package", ""))
        version, installed = distribution_files(package, hasher)
        # The lock keeps no per-file list for a distribution (it can hold
        # thousands of files); the manifest files are named on their own.
        return CodeDigest(
            digest_of({**files, **installed}, package, version),
            files,
            distribution=package,
            version=version,
            sources=hasher.sources,
        )
    return CodeDigest(digest_of(files), files, sources=hasher.sources)
