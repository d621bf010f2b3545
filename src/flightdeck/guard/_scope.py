"""`FileScope`: the directories a guarded body may read and write, judged on real paths."""

from __future__ import annotations

import mimetypes
import os
import sys
import sysconfig
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass

from flightdeck.guard._events import Event, FileAccess

StrPath = str | os.PathLike[str]


def _real(path: StrPath) -> str:
    return os.path.realpath(os.fspath(path))


def interpreter_roots() -> tuple[str, ...]:
    """What the interpreter itself reads while a confined body runs, read-only.

    - the prefixes and the stdlib/site-packages directories: lazy imports,
      `linecache` for tracebacks, encodings, package data files;
    - every `sys.path` entry except '' (the current directory, which is often
      the workspace the body must not read around): modules imported lazily;
    - `mimetypes.knownfiles` and `zoneinfo.TZPATH`: system tables that common
      stdlib calls (`mimetypes.guess_type`, `ZoneInfo`) load on first use and
      that hold nothing private.
    """
    paths = sysconfig.get_paths()
    found: list[StrPath] = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    found += [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    found += [entry for entry in sys.path if entry]
    found += [*mimetypes.knownfiles, *zoneinfo.TZPATH]
    return tuple(dict.fromkeys(_real(p) for p in found))


def _within(path: str, roots: tuple[str, ...]) -> bool:
    for root in roots:
        if path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep):
            return True
    return False


@dataclass(frozen=True)
class FileScope:
    """Files under `writable` may be read and written, files under `readable` read.

    Roots are resolved once; every access is resolved when judged (symlinks,
    `..`), so a link inside a root that points outside leads outside. An access
    whose path cannot be known (a `dir_fd` that cannot be named) is outside.
    """

    writable: tuple[str, ...]
    readable: tuple[str, ...] = ()

    @classmethod
    def of(
        cls, roots_rw: Iterable[StrPath], roots_ro: Iterable[StrPath] = (), *, interpreter: bool
    ) -> FileScope:
        """A scope over `roots_rw` and `roots_ro`; with `interpreter`, plus
        `os.devnull` (it discards writes) and the `interpreter_roots()` that do
        not contain a read-write root."""
        writable = [_real(r) for r in roots_rw]
        readable = [_real(r) for r in roots_ro]
        if interpreter:
            # An interpreter root holding a writable root is left out: a script run
            # from /tmp puts /tmp on sys.path, which would open every scratch root.
            mine = tuple(writable)
            readable.extend(
                r for r in interpreter_roots() if not any(_within(w, (r,)) for w in mine)
            )
            writable.append(_real(os.devnull))
        return cls(tuple(dict.fromkeys(writable)), tuple(dict.fromkeys(readable)))

    def permits(self, access: FileAccess) -> bool:
        real = access.resolved
        if real is None:
            return False
        if _within(real, self.writable):
            return True
        return not access.write and _within(real, self.readable)

    def outside(self, event: Event) -> tuple[FileAccess, ...]:
        """The accesses of `event` this scope refuses (empty: allowed)."""
        return tuple(access for access in event.files if not self.permits(access))
