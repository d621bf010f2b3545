"""Running a Feature's `install.sh` as root over a writable rootfs, offline.

The Features spec runs `install.sh` as root in the image being built. Here
it runs in bubblewrap with the work copy of the rootfs bound writable as
`/`, the Feature's folder read-only at `FEATURE_DIR` (inside a private
`/tmp`, so it leaves nothing in the tree), fresh `/proc` and `/dev`, a
cleared environment (PATH, HOME, the options, the containerEnv of the
Features before it) and every namespace of its own: root inside is mapped
to the user running freeze, with every capability dropped (`--cap-drop
ALL`, no new user namespaces), so it can write the files it owns there and
nothing of the host. Its network namespace is empty; `HTTP(S)_PROXY`
points at the egress relay, whose proxy admits only the hosts the catalog
entry's `network` names (none by default), so a download elsewhere through
the proxy is refused and recorded (`compose.network_refused`) rather than
merely failing. A non-zero exit is `compose.install_failed`
with the end of its output; a run past the timeout is killed
(`compose.install_timeout`).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from flightdeck.guard import EgressProxy, bwrap_privileges
from flightdeck.launch.core._errors import LaunchError
from flightdeck.launch.sandbox._bwrap import SAFE_PATH
from flightdeck.launch.sandbox._relay import Relay

FEATURE_DIR = "/tmp/flightdeck-feature"
# bubblewrap's own mount points: made in the tree when the base lacks them,
# never part of a layer.
MOUNT_POINTS = ("proc", "dev", "tmp")
_TAIL = 600


def install_argv(bwrap: str, rootfs: Path, feature: Path, env: Mapping[str, str]) -> list[str]:
    privileges = list(bwrap_privileges())
    for flag in ("--uid", "--gid"):  # root inside: the Features spec's installer
        if flag in privileges:
            at = privileges.index(flag)
            del privileges[at : at + 2]
    if "--unshare-user" in privileges:
        privileges += ["--uid", "0", "--gid", "0"]
    argv = [bwrap, *privileges, "--die-with-parent", "--new-session", "--clearenv"]
    argv += ["--unshare-all", "--bind", str(rootfs), "/"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += ["--ro-bind", str(feature), FEATURE_DIR, "--chdir", FEATURE_DIR]
    for key, value in {"PATH": SAFE_PATH + ":/usr/sbin:/sbin", "HOME": "/root", **env}.items():
        argv += ["--setenv", key, value]
    script = ["./install.sh"] if os.access(feature / "install.sh", os.X_OK) else []
    return [*argv, "--", *(script or ["/bin/sh", "./install.sh"])]


async def run_install(
    bwrap: str,
    rootfs: Path,
    feature: Path,
    env: Mapping[str, str],
    *,
    what: str,
    timeout: float,
    network: tuple[str, ...] = (),
) -> None:
    try:
        proxy = EgressProxy(frozenset(network))
    except EgressProxy.BadHost as exc:
        raise LaunchError(
            "compose.bad_network",
            f"the catalog entry of {what} names a host the proxy cannot admit exactly: {exc}",
            hint="network entries are host (ports 80 and 443) or host:port",
        ) from None
    url = f"http://127.0.0.1:{EgressProxy.PORT}"
    proxied = {name: url for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")}
    argv = install_argv(bwrap, rootfs, feature, {**env, **proxied})
    with tempfile.TemporaryDirectory(prefix="fd-compose-") as scratch:
        socket_path = Path(scratch) / "egress.sock"
        relay = Relay(socket_path)
        await proxy.start(socket_path)
        try:
            status, output = await _run(relay, argv, timeout, what)
        finally:
            await proxy.close()
    refused = [d for d in proxy.decisions if d.decision != "allowed"]
    if refused:
        tried = ", ".join(sorted({f"{d.method} {d.target}" for d in refused}))
        allowed = f"only {', '.join(network)}" if network else "none"
        raise LaunchError(
            "compose.network_refused",
            f"install.sh of {what} tried the network ({tried}); its catalog entry allows {allowed}",
            hint="a Feature installs what its tarball bundles, or its catalog entry names"
            " the hosts it downloads from (network)",
        )
    if status != 0:
        tail = output.decode("utf-8", "replace").strip()[-_TAIL:]
        raise LaunchError(
            "compose.install_failed",
            f"install.sh of {what} exited with status {status}: {tail}",
            hint="nothing was stored; the install runs as root, offline, over the base's files",
        )


async def _run(relay: Relay, argv: list[str], timeout: float, what: str) -> tuple[int, bytes]:
    try:
        process = await asyncio.create_subprocess_exec(
            *relay.wrap(argv),
            env={"PATH": SAFE_PATH},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            pass_fds=relay.pass_fds,
            umask=0o022,  # the modes install.sh's files get: the same on every machine
        )
    except OSError as exc:
        await relay.stop()
        raise LaunchError("compose.no_sandbox", f"cannot start bubblewrap: {exc}") from None
    try:
        await relay.started()
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except (TimeoutError, LaunchError) as exc:
        process.kill()
        await process.wait()
        if isinstance(exc, LaunchError):
            raise
        raise LaunchError(
            "compose.install_timeout", f"install.sh of {what} ran longer than {timeout:g}s"
        ) from None
    finally:
        await relay.stop()
    return process.returncode or 0, output


__all__ = ["FEATURE_DIR", "MOUNT_POINTS", "install_argv", "run_install"]
