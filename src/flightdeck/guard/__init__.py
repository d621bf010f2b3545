"""The process guard: one PEP 578 audit hook for every in-process policy.

    from flightdeck.guard import Policy, Refused, active
    policy = Policy.allow_hosts(["api.example.com"], owner="driver acme", limit="network.egress")
    with active(policy):
        call_the_package()          # a lookup of evil.example.net raises Refused here
    if policy.denied: ...           # ...and is remembered even if the package swallowed it

Audit hooks cannot be removed, so `install()` adds ONE hook, lazily, the first
time a layer is entered. The hook reads one `ContextVar` holding the tuple of
active `Policy` layers; outside any guard the tuple is empty and the hook
returns after that single read. The variable follows the context: the thread
or task that entered the layer, tasks it creates, and `asyncio.to_thread`
(which copies the context). Threads started by other means do not inherit it,
and neither do `loop.run_in_executor` jobs (asyncio's own name lookups).

Each audit event that matters becomes an `Event` (kinds `dns`, `network`,
`subprocess`, `file_write`, `file_read`, `bytecode`); file events list the
paths they touch as `FileAccess`es. A `Policy` can:

- record events (`Policy.watch()`: importing a driver package, judged later);
- allow only some hosts (`hosts`): a lookup must name an allowed host
  (`*.example.com` = subdomains); a connect/sendto names an IP, allowed when it
  is listed, was resolved (with the guard off) from an allowed name looked up
  under the layer, or is an address of an allowed exact name (checked on
  demand, for lookups the guard could not see); unix sockets are not egress.
  `names_only` (a driver's AIP-30 `network.egress`) checks names only: any IP
  passes while some host is allowed, since base URLs and proxies point SDKs at
  addresses that cannot be attributed to a declared host;
- refuse subprocesses (`subprocess=False`), any write (`writes=False`), or
  opening listed `files` at all;
- confine files to a `FileScope` (`Policy.confine_files(roots_rw, roots_ro)`):
  every path an event touches (open, remove, rename, mkdir, rmdir, symlink,
  link, chmod, chown, utime, truncate, xattrs, listdir/scandir/fwalk, rmtree,
  sqlite3.connect; a relative path joined to its `dir_fd` or the current
  directory) is resolved to its real path (symlinks followed, except the final
  link of calls that act on the link itself) and must lie under a read-write
  root, or under a read-only root for reads. The interpreter's own files stay
  readable (`interpreter_roots()`); subprocesses are refused by default. The
  import system's `__pycache__` traffic (kind `bytecode`) is judged by scopes
  only. This is best effort: C code (extensions, `ctypes`) opens files without
  audit events, `os.stat` and friends raise none, and threads started by
  `threading` do not carry the layer. Real isolation is a sandbox's job.

Per-call layers: `policy.stamper()` returns a maker of layers with the
policy's rules (copied once) and records of their own, made on first use, so
a call that does nothing guarded makes none (`refused_any()` asks without
making them). A driver stamps its `network.egress` layer per call.

Nesting: layers stack (a driver's `network.egress` inside a launch step's
trust contract). Every event is offered to every layer and is allowed only if
EVERY layer allows it, so an inner layer can narrow but never widen what an
outer layer allows. Every refusing layer appends the event to its `denied`
list; the innermost refusing layer's `Refused` (a `PermissionError`) is raised,
worded "{owner}: {event} is outside {limit}". Recording layers keep events
whatever the verdict. Hosts contacted and addresses learned are noted only
for allowed events.

Real isolation is bubblewrap's: `bwrap_path()` finds one that works here,
for the launch layer's tool steps and the agent's Bash alike,
`bwrap_privileges()` gives the arguments that leave its sandbox no
privilege (every capability dropped, a user namespace where the host has
them, root inside as an unprivileged uid), and `EgressProxy` lets such a
sandbox reach only the hosts it is allowed.
"""

from __future__ import annotations

import typing as _typing

from flightdeck._lazy import LazyNames as _LazyNames

if _typing.TYPE_CHECKING:
    from flightdeck.guard._bwrap import SandboxLayout, bwrap_path, bwrap_privileges
    from flightdeck.guard._egress import EgressProxy
    from flightdeck.guard._events import Event, FileAccess
    from flightdeck.guard._hook import Layers, active, enter, install, layers, leave
    from flightdeck.guard._policy import Policy, Refused, host_matches
    from flightdeck.guard._scope import FileScope, interpreter_roots

# Where each name lives, imported on first use (PEP 562): the agent's start-up
# asks only `bwrap_path`, and the hook, policies and egress proxy are not
# needed until a layer is entered or a sandbox is built.
_HOMES = {
    "SandboxLayout": "_bwrap",
    "bwrap_path": "_bwrap",
    "bwrap_privileges": "_bwrap",
    "EgressProxy": "_egress",
    "Event": "_events",
    "FileAccess": "_events",
    "Layers": "_hook",
    "active": "_hook",
    "enter": "_hook",
    "install": "_hook",
    "layers": "_hook",
    "leave": "_hook",
    "Policy": "_policy",
    "Refused": "_policy",
    "host_matches": "_policy",
    "FileScope": "_scope",
    "interpreter_roots": "_scope",
}


_LAZY = _LazyNames(__name__, {name: f"{__name__}.{home}" for name, home in _HOMES.items()})


def __getattr__(name: str) -> _typing.Any:
    return _LAZY.load(name)


def __dir__() -> list[str]:
    return _LAZY.names()


__all__ = [
    "EgressProxy",
    "Event",
    "FileAccess",
    "FileScope",
    "Layers",
    "Policy",
    "Refused",
    "SandboxLayout",
    "active",
    "bwrap_path",
    "bwrap_privileges",
    "enter",
    "host_matches",
    "install",
    "interpreter_roots",
    "layers",
    "leave",
]
