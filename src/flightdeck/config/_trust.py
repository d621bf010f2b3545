"""Workspace trust: whether what a workspace's own files name may start.

A workspace's files are whoever wrote the repository's: a cloned project's
`flightdeck.toml` can name MCP server commands (and URLs the agent would
send `${VAR}` secrets to), and its `.drivers/` hold Python code the agent
imports to offer manifest tools. None of that starts, and none of its
settings loosens the user's (`_screen.py`), until the user trusts the
workspace, in one of three ways, decided here and nowhere else:

- `[trust] workspaces = ["/path", ...]` in the user's own `config.toml`
  (`flightdeck config trust PATH` writes it). Only the user's file counts:
  a workspace's `flightdeck.toml` saying it trusts itself is ignored;
- the host says so for this start (`flightdeck agent --trust-workspace`);
- a person answers yes when the terminal chat asks.

Entries name one folder each (no prefixes, no globs): trusting `~/src` does
not trust a repository cloned into it later. Paths are compared after
resolving links, so a link to a trusted folder is that folder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from flightdeck.config._files import ConfigError, _read
from flightdeck.config._paths import config_dir

By = Literal["config", "host", "person", ""]
FLAG = "--trust-workspace"
UNTRUSTED = "workspace.untrusted"


class Trust(msgspec.Struct, frozen=True):
    """The decision for one workspace: `by` says who trusted it ("" when
    no one did); `problem` is a user config that could not be read."""

    trusted: bool
    by: By = ""
    problem: str | None = None


def _canonical(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def _entries(data: dict[str, Any] | None, where: Path) -> list[str]:
    """The `[trust] workspaces` of the user's file. Raises `ConfigError`."""
    section = (data or {}).get("trust", {})
    if not isinstance(section, dict):
        raise ConfigError(where, "[trust] must be a table")
    entries = section.get("workspaces", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) and e for e in entries):
        raise ConfigError(where, "[trust] workspaces must be a list of folder paths")
    return list(entries)


def user_file() -> Path:
    return config_dir() / "config.toml"


def trusted_workspaces() -> list[str]:
    """The folders the user's config trusts, as written. Raises `ConfigError`."""
    path = user_file()
    return _entries(_read(path), path)


def decide_trust(workspace: Path, *, host: bool = False) -> Trust:
    """Whether `workspace`'s own files may start commands and import code.
    `host`: the host that started the agent trusts it (`--trust-workspace`).
    Never raises: an unreadable user config trusts nothing and says why."""
    if host:
        return Trust(True, "host")
    try:
        entries = trusted_workspaces()
    except ConfigError as exc:
        return Trust(False, problem=f"workspace trust not read: {exc}")
    here = _canonical(workspace)
    if any(_canonical(entry) == here for entry in entries):
        return Trust(True, "config")
    return Trust(False)


def trust_notice(workspace: Path, held: Sequence[str], ignored: Sequence[str] = ()) -> str:
    """The `info` line for what an untrusted workspace would have started
    (`held`) and the settings of its files that were ignored (`ignored`,
    `_screen.py`)."""
    settings = f"{'; '.join(ignored)} (yours apply instead)"
    if held:
        told = f"its own files started nothing ({UNTRUSTED}): {'; '.join(held)}."
        if ignored:
            told += f" These settings of its files were ignored: {settings}."
    else:
        told = f"these settings of its own files were ignored ({UNTRUSTED}): {settings}."
    return (
        f"Workspace {workspace} is not trusted, so {told} To trust it: "
        f"`flightdeck config trust {workspace}` (adds it to [trust] workspaces in "
        f"{user_file()}), or start the agent with {FLAG}."
    )


def set_trust(workspace: Path, trusted: bool = True) -> bool:
    """Add `workspace` to (or, `trusted=False`, remove it from) the user's
    `[trust] workspaces`, keeping the file's comments and layout. Returns
    whether the file changed. Raises `ConfigError` for a user config that
    cannot be read or written."""
    import tomlkit  # only for `config trust`: the agent never writes its config
    from filelock import FileLock

    path = user_file()
    here = _canonical(workspace)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(path, f"cannot write: {exc.strerror}", "config.unreadable") from None
    with FileLock(str(path.parent / ".config.toml.lock")):
        current = _read(path)  # tomllib's reading (and errors) first: the one the agent uses
        entries = _entries(current, path)
        kept = [e for e in entries if _canonical(e) != here]
        wanted = [*kept, here] if trusted else kept
        if wanted == entries:
            return False
        try:
            text = path.read_text(encoding="utf-8") if current is not None else ""
            document = tomlkit.parse(text)
        except (OSError, UnicodeDecodeError, tomlkit.exceptions.TOMLKitError) as exc:
            raise ConfigError(path, f"cannot edit: {exc}") from None
        table = document.get("trust")
        if table is None:
            table = tomlkit.table()
            document["trust"] = table
        table["workspaces"] = wanted
        _replace(path, tomlkit.dumps(document))
    return True


def _replace(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path` and rename it over,
    keeping the file's mode (a new file is the user's alone)."""
    import tempfile

    tmp = None
    try:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.", suffix=".toml")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise ConfigError(path, f"cannot write: {exc.strerror}", "config.unreadable") from None
