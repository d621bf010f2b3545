"""The sandbox Bash (and ripgrep) run in: bubblewrap, and an environment
built from an allow-list.

Inside: the workspace (read-write for Bash, read-only for ripgrep) at its
own path, the system directories read-only with their secrets masked, a
private `/tmp` (also `HOME`), fresh `/proc` and `/dev`, new PID, IPC, UTS
and user namespaces, and the network as configured. Nothing else of the
host is there: not the user's home, not the agent's session files.

No privilege either (`guard.bwrap_privileges`): every capability dropped,
root inside as "nobody" and no new user namespaces where the host allows
user namespaces at all, so an agent started as root cannot remount a
read-only directory writable or unmount the file that masks a secret.

The environment is built, never inherited: only allow-listed names pass, and
the agent's provider credentials are refused even when listed, so a command
cannot print a key the agent holds. This applies with or without bubblewrap.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec

if TYPE_CHECKING:
    from flightdeck.guard import EgressProxy

# The same as `guard.SandboxLayout.SAFE_PATH`; guard is imported on first use
# (the first Bash call, or the probe run beside start-up), not at import.
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"

SandboxMode = Literal["auto", "required", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "required", "off")

# Passed through from the agent's environment when set.
DEFAULT_ENV = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
)
# The agent's own provider credentials: never passed, even when listed.
CREDENTIALS = frozenset(
    {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "OPENAI_API_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_PROFILE",
        "GOOGLE_APPLICATION_CREDENTIALS",
    }
)
# Files under the read-only /etc a command has no business reading; each is
# covered by an empty file or directory when it exists.
MASKED_FILES = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers")
MASKED_DIRS = ("/etc/ssh", "/etc/ssl/private", "/etc/sudoers.d")
SANDBOX_HOME = "/tmp"


class SandboxConfigError(ValueError):
    """`[agent.sandbox]` is malformed (reported as `config_error`)."""


class SandboxSettings(msgspec.Struct, frozen=True):
    mode: SandboxMode = "auto"
    # "allow", "deny", or the hosts reachable through the egress proxy
    network: Literal["allow", "deny"] | tuple[str, ...] = "allow"
    env: tuple[str, ...] = ()

    def bwrap(self) -> str | None:
        """The bubblewrap to use, or None when Bash runs unconfined."""
        if self.mode == "off":
            return None
        from flightdeck.guard import bwrap_path

        return bwrap_path()


def parse_sandbox(value: Any) -> SandboxSettings:
    """`[agent] sandbox = "auto"|"required"|"off"`, or an `[agent.sandbox]`
    table with `mode`, `network` (`allow` | `deny`) and `env` (extra names)."""
    if value is None:
        return SandboxSettings()
    if isinstance(value, str):
        value = {"mode": value}
    if not isinstance(value, Mapping):
        raise SandboxConfigError("[agent] sandbox must be a mode or a table")
    unknown = sorted(set(value) - {"mode", "network", "env"})
    if unknown:
        raise SandboxConfigError(f"[agent.sandbox] has unknown keys: {', '.join(unknown)}")
    mode = value.get("mode", "auto")
    if mode not in SANDBOX_MODES:
        raise SandboxConfigError(f"[agent.sandbox] mode must be one of {', '.join(SANDBOX_MODES)}")
    network = _network(value.get("network", "allow"))
    env = value.get("env", [])
    if not isinstance(env, list) or not all(isinstance(n, str) and n for n in env):
        raise SandboxConfigError("[agent.sandbox] env must be a list of variable names")
    refused = sorted(set(env) & CREDENTIALS)
    if refused:
        raise SandboxConfigError(
            f"[agent.sandbox] env names the agent's credentials ({', '.join(refused)}); "
            "they never reach Bash"
        )
    return SandboxSettings(mode=mode, network=network, env=tuple(env))


def _network(value: Any) -> Literal["allow", "deny"] | tuple[str, ...]:
    if value == "allow" or value == "deny":
        return "allow" if value == "allow" else "deny"
    ok = isinstance(value, list) and all(
        isinstance(h, str) and h and not any(c in h for c in " /:@\t\n") for h in value
    )
    if not ok:
        raise SandboxConfigError(
            '[agent.sandbox] network must be "allow", "deny" or a list of host names'
        )
    return tuple(sorted({h.lower().rstrip(".") for h in value}))


def egress_proxy(hosts: tuple[str, ...]) -> EgressProxy:
    from flightdeck.guard import EgressProxy

    return EgressProxy(frozenset(hosts), any_port=True)  # hosts are named without ports here


def sandbox_state(settings: SandboxSettings) -> tuple[str, str | None]:
    """What `ready.capabilities.sandbox` says (`bubblewrap` | `off`), and the
    one notice to give when Bash will run unconfined (or not at all)."""
    if settings.bwrap() is not None:
        return "bubblewrap", None
    if settings.mode == "off":
        why = "the configuration turned it off ([agent.sandbox] mode = off)"
    else:
        why = "bubblewrap is not installed or cannot create namespaces here"
    if settings.mode == "required":
        return "off", f"Bash is disabled: it requires a sandbox and {why}."
    return "off", (
        f"Bash runs without a sandbox: {why}. Commands can read and write anything "
        "this user can; only the environment is filtered."
    )


def command_env(
    settings: SandboxSettings, environ: Mapping[str, str], *, sandboxed: bool
) -> dict[str, str]:
    """The environment a command gets: allow-listed names only."""
    names = [*DEFAULT_ENV, *settings.env]
    env = {n: environ[n] for n in names if n in environ and n not in CREDENTIALS}
    env.setdefault("PATH", SAFE_PATH)
    if sandboxed:
        env["HOME"] = SANDBOX_HOME
        env["TMPDIR"] = "/tmp"
    elif "HOME" in environ:
        env["HOME"] = environ["HOME"]  # unconfined: the real home is there anyway
    return env


def sandbox_argv(
    bwrap: str,
    workspace: Path,
    command: list[str],
    *,
    env: Mapping[str, str],
    writable: bool,
    network: bool,
    binds: list[tuple[str, str]] | None = None,
    system: tuple[str, ...] | None = None,
) -> list[str]:
    """`system` narrows the read-only system directories (default: all of
    `SandboxLayout.SYSTEM_DIRS`, with the secrets under /etc masked)."""
    from flightdeck.guard import SandboxLayout, bwrap_privileges

    argv = [bwrap, *bwrap_privileges(), "--die-with-parent", "--new-session"]
    argv += ["--unshare-all", "--clearenv"]
    if network:
        argv.append("--share-net")
    for folder in SandboxLayout.SYSTEM_DIRS if system is None else system:
        if os.path.isdir(folder):
            argv += ["--ro-bind", folder, folder]
    for target, link in SandboxLayout.USR_LINKS:
        if os.path.islink(link):
            argv += ["--symlink", target, link]
        elif os.path.isdir(link):
            argv += ["--ro-bind", link, link]
    shown = SandboxLayout.SYSTEM_DIRS if system is None else system
    for name in MASKED_FILES if "/etc" in shown else ():
        if os.path.isfile(name):
            argv += ["--ro-bind", "/dev/null", name]
    for name in MASKED_DIRS if "/etc" in shown else ():
        if os.path.isdir(name):
            argv += ["--tmpfs", name]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    ws = str(workspace)
    argv += ["--bind" if writable else "--ro-bind", ws, ws, "--chdir", ws]
    for source, target in binds or ():
        argv += ["--bind", source, target]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--remount-ro", "/"]  # bubblewrap's own root: last, once every mount point exists
    return [*argv, "--", *command]


__all__ = [
    "CREDENTIALS",
    "DEFAULT_ENV",
    "SandboxConfigError",
    "SandboxMode",
    "SandboxSettings",
    "command_env",
    "egress_proxy",
    "parse_sandbox",
    "sandbox_argv",
    "sandbox_state",
]
