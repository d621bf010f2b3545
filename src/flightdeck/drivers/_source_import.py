"""Importing a driver's package from its source files, never from bytecode.

Python's import runs `__pycache__/<module>.cpython-311.pyc` instead of the
source when it believes the two agree: a timestamp pyc whose recorded
mtime and size match the source, or an unchecked hash-based pyc without
looking at the source at all. A sourceless `module.pyc` beside the package
is imported too. Code pins digest the sources (bytecode is left out, the
interpreter writes it), so a planted pyc would run code no pin covers.

So the modules of a driver's package are found here (a finder first on
`sys.meta_path`, for the package's names only) and compiled from the
`.py` bytes just read; bytecode is neither read nor written, and
sourceless `.pyc` files are never imported. With `checked` (resolved path
-> `sha256:<hex>`: the files of the code-pin check that has just passed),
every module file must be one of those files with those bytes, so what is
compiled is what the pin checked; anything else is `UnpinnedModule`.

Compiling is what makes this import slow (a large SDK's hundreds of
modules take seconds), so the code compiled from checked bytes is kept in
the data directory (`cache/code/`), named by a digest of the source's
digest, its path and the interpreter's bytecode version, and read back only
from a file that is this user's own and nobody else can write: the same
trust the keyring and the trust state already get. The pin check still reads
and hashes every source file on every import; only `compile` is skipped.

Which names a claim covers: for a workspace-local package (imported as
`flightdeck_local_<id>`), the package and everything under it. For an
installed distribution, the module the driver names and its parents
(each must come from a checked file, or be a namespace folder, which runs
no code), and everything under any package of the distribution loaded
here. A name under a shared namespace that belongs to another distribution
(`google.protobuf` beside a pinned `google.cloud.storage`) is left to the
normal import: other installed packages are not part of the pin.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import marshal
import os
import stat
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

DIGEST_PREFIX = "sha256:"


class UnpinnedModule(ImportError):
    """A module file its code pin did not check, or whose bytes changed since."""


def _check(path: str, raw: bytes | None, checked: Mapping[str, str] | None) -> str:
    """The digest of `raw` (or of the file), after checking it against `checked`."""
    if raw is None:
        with open(path, "rb") as handle:  # an extension module, hashed before it is loaded
            raw = handle.read()
    digest = DIGEST_PREFIX + hashlib.sha256(raw).hexdigest()
    if checked is not None:
        expected = checked.get(os.path.realpath(path))
        if expected is None:
            raise UnpinnedModule(f"{path} is not among the files its code pin checked")
        if expected != digest:
            raise UnpinnedModule(f"{path} changed after its code pin was checked")
    return digest


# Far above any compiled module of a real package; a bigger file is not ours.
_CODE_CACHE_LIMIT = 64 * 1024 * 1024


def _code_cache_dir() -> Path | None:
    from flightdeck.config import data_dir  # not at import: a driver package may import this early

    try:
        return data_dir() / "cache" / "code"
    except (OSError, RuntimeError):  # no home to keep it in: compile every time
        return None


def _cache_key(digest: str, path: str) -> str:
    # The path is part of the code (tracebacks name it); the magic number
    # changes with the bytecode format.
    tag = f"{digest}\0{path}\0{importlib.util.MAGIC_NUMBER.hex()}"
    return hashlib.sha256(tag.encode("utf-8", "surrogatepass")).hexdigest()


def _own(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _cached_code(digest: str, path: str) -> CodeType | None:
    folder = _code_cache_dir()
    if folder is None:
        return None
    entry = folder / _cache_key(digest, path)
    try:
        fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO never blocks
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            info = os.fstat(handle.fileno())
            if not (stat.S_ISREG(info.st_mode) and _own(info) and _own(os.stat(folder))):
                return None  # another user's, or writable by others: not trusted
            if info.st_size > _CODE_CACHE_LIMIT:
                return None
            code = marshal.loads(handle.read())
        except (OSError, ValueError, EOFError, TypeError):
            return None
    return code if isinstance(code, CodeType) and code.co_filename == path else None


def _keep_code(digest: str, path: str, code: CodeType) -> None:
    folder = _code_cache_dir()
    if folder is None:
        return
    with contextlib.suppress(OSError):  # a cache: failing to keep it only costs time
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".code-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(marshal.dumps(code))
            os.replace(temporary, folder / _cache_key(digest, path))
        except OSError:
            os.unlink(temporary)
            raise


class SourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles the `.py` bytes it reads; never touches `__pycache__`."""

    def __init__(self, fullname: str, path: str, checked: Mapping[str, str] | None = None):
        super().__init__(fullname, path)
        self.checked = checked
        self.digest: str | None = None  # of the bytes compiled

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        raw = self.get_data(path)
        self.digest = digest = _check(path, raw, self.checked)
        # The cache is flightdeck's own file work, not the package's: it runs
        # in a fresh context, outside the guard layers that watch the import.
        code = contextvars.Context().run(_cached_code, digest, path)
        if code is None:
            code = compile(raw, path, "exec", dont_inherit=True)
            contextvars.Context().run(_keep_code, digest, path, code)
        return code


class _ExtensionLoader(importlib.machinery.ExtensionFileLoader):
    """An extension module of the package, loaded only after its bytes are checked."""

    def __init__(self, fullname: str, path: str, checked: Mapping[str, str] | None = None):
        super().__init__(fullname, path)
        self.checked = checked
        self.digest: str | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        self.digest = _check(self.path, None, self.checked)
        return super().create_module(spec)


def loader_for(fullname: str, path: str, checked: Mapping[str, str] | None) -> importlib.abc.Loader:
    """The loader of a package's first module: source or extension, never bytecode."""
    if path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        return _ExtensionLoader(fullname, path, checked)
    if path.endswith(tuple(importlib.machinery.SOURCE_SUFFIXES)):
        return SourceLoader(fullname, path, checked)
    raise ImportError(f"{path} is neither Python source nor an extension module")


@dataclass
class _Claim:
    names: frozenset[str]  # exact names that must come from here (the entry and its parents)
    checked: Mapping[str, str] | None
    prefixes: set[str] = field(default_factory=set)  # packages whose whole tree is claimed
    finders: dict[str, importlib.machinery.FileFinder] = field(default_factory=dict)

    def covers(self, fullname: str) -> bool:
        if fullname in self.names:
            return True
        parts = fullname.split(".")
        return any(".".join(parts[:end]) in self.prefixes for end in range(1, len(parts) + 1))

    def finder(self, entry: str) -> importlib.machinery.FileFinder:
        if entry not in self.finders:
            checked = self.checked

            def source(fullname: str, path: str) -> SourceLoader:
                return SourceLoader(fullname, path, checked)

            def extension(fullname: str, path: str) -> _ExtensionLoader:
                return _ExtensionLoader(fullname, path, checked)

            # Extensions before sources, as the normal import orders them; no
            # bytecode loader at all.
            details: Any = (
                (extension, importlib.machinery.EXTENSION_SUFFIXES),
                (source, importlib.machinery.SOURCE_SUFFIXES),
            )
            self.finders[entry] = importlib.machinery.FileFinder(entry, *details)
        return self.finders[entry]


class _SourceFinder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.claims: dict[str, _Claim] = {}  # by top-level name
        self.lock = threading.Lock()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        claim = self.claims.get(fullname.partition(".")[0])
        if claim is None or not claim.covers(fullname):
            return None
        entries = list(path) if path is not None else [e for e in sys.path if isinstance(e, str)]
        portions: list[str] = []
        for entry in entries:
            spec = claim.finder(entry or os.getcwd()).find_spec(fullname)
            if spec is None:
                continue
            if spec.loader is None:  # a folder without __init__: a namespace portion
                portions.extend(spec.submodule_search_locations or ())
                continue
            origin = spec.origin or ""
            if claim.checked is not None and os.path.realpath(origin) not in claim.checked:
                raise UnpinnedModule(
                    f"{fullname} would be imported from {origin}, which its code pin did not check",
                    name=fullname,
                )
            if spec.submodule_search_locations is not None:
                claim.prefixes.add(fullname)
            return spec
        if portions:
            # Built here, not left to the normal import, which would look for
            # a sourceless .pyc of that name too.
            namespace = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            namespace.submodule_search_locations = portions
            return namespace
        raise ModuleNotFoundError(f"No module named {fullname!r} (from source)", name=fullname)


_FINDER = _SourceFinder()


def claim(
    top: str, names: Sequence[str], checked: Mapping[str, str] | None, *, whole: bool
) -> None:
    """Import `names` (and, with `whole`, everything under `top`) from source,
    from the files of `checked` when given. Replaces an earlier claim of `top`."""
    with _FINDER.lock:
        _FINDER.claims[top] = _Claim(frozenset(names), checked, prefixes={top} if whole else set())
        if _FINDER not in sys.meta_path:
            sys.meta_path.insert(0, _FINDER)


def release(top: str) -> None:
    """Leave `top` to the normal import again (an import that promises no pin)."""
    with _FINDER.lock:
        _FINDER.claims.pop(top, None)


def _namespace(module: ModuleType | None) -> bool:
    spec = getattr(module, "__spec__", None)
    return (
        spec is not None
        and spec.origin in (None, "namespace")
        and spec.submodule_search_locations is not None
    )


def stale(top: str, names: Sequence[str], checked: Mapping[str, str]) -> str | None:
    """An already-imported module that did not come from the bytes `checked`
    holds (imported before, perhaps from bytecode), or None. Every module under
    `top` counts, except, when `top` is a namespace shared with other
    distributions, modules from files outside `checked` that are not `names`."""
    shared = _namespace(sys.modules.get(top))
    for name, module in list(sys.modules.items()):
        if (name != top and not name.startswith(top + ".")) or _namespace(module):
            continue
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        expected = checked.get(os.path.realpath(origin)) if isinstance(origin, str) else None
        if expected is None and shared and name not in names:
            continue
        loader = getattr(spec, "loader", None)
        if not isinstance(loader, (SourceLoader, _ExtensionLoader)) or loader.digest != expected:
            return name
    return None
