"""A real PostgreSQL server for the store tests: `initdb` and `pg_ctl` from
PATH or Debian's /usr/lib/postgresql/*/bin, a cluster in a temporary folder
per session on loopback, one fresh database per test. Tests skip, saying
which package is missing, when no server binary can be found (and fail under
FLIGHTDECK_REQUIRE_SYSTEM_PACKAGES=1, tests/conftest.py).

The server refuses to run as root, so as root it runs as the `postgres` (or
`nobody`) user, in a folder that user owns.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

SKIP_REASON = "PostgreSQL server binaries not found (apt-get install postgresql)"
_counter = itertools.count()
# URL -> how to run pg_ctl on its cluster (`restart`).
_CLUSTERS: dict[str, tuple[Path, Path, dict[str, object]]] = {}


def server_bin() -> Path | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _run_as() -> tuple[int, int] | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            entry = pwd.getpwnam(name)
            return entry.pw_uid, entry.pw_gid
    return None


@contextlib.contextmanager
def started_cluster(bindir: Path) -> Iterator[str]:
    """A running cluster; yields the URL of its `postgres` database."""
    root = Path(tempfile.mkdtemp(prefix="fd-pg-"))
    owner = _run_as()
    if owner is not None:
        os.chown(root, *owner)
    data, port = root / "data", _free_port()
    kwargs: dict[str, object] = {"check": True, "capture_output": True}
    if owner is not None:
        kwargs.update(user=owner[0], group=owner[1])
    subprocess.run(
        [bindir / "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8"],
        **kwargs,  # type: ignore[call-overload]
    )
    # Loopback only; fsync off: a test cluster is thrown away, and durability
    # against a machine crash is PostgreSQL's to test, not ours.
    options = f"-p {port} -c listen_addresses=127.0.0.1 -k {root} -c fsync=off"
    subprocess.run(
        [bindir / "pg_ctl", "-D", data, "-o", options, "-l", root / "log", "-w", "start"],
        **kwargs,  # type: ignore[call-overload]
    )
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    _CLUSTERS[url] = (bindir, data, kwargs)
    try:
        yield url
    finally:
        del _CLUSTERS[url]
        subprocess.run(
            [bindir / "pg_ctl", "-D", data, "-m", "immediate", "stop"],
            **{**kwargs, "check": False},  # type: ignore[call-overload]
        )
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(admin_url: str) -> str:
    """A new empty database on the session's server; its URL."""
    import psycopg

    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def restart(url: str) -> None:
    """`pg_ctl restart` (fast: the server ends every session) of the cluster
    `url` is on, waiting until it accepts connections again."""
    admin = url.rsplit("/", 1)[0] + "/postgres"
    bindir, data, kwargs = _CLUSTERS[admin]
    # The log file again: without one the server would keep the pipes
    # `subprocess.run` reads open, and it would never return.
    argv = [bindir / "pg_ctl", "-D", data, "-l", data.parent / "log", "-m", "fast", "-w"]
    subprocess.run([*argv, "restart"], **kwargs)  # type: ignore[call-overload]
