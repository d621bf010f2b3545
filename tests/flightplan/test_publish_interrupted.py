"""Issue 30: Ctrl-C in the middle of a push or a fetch leaves the registry
and the store consistent: a publish interrupted before its tags leaves
`latest` where it was, an install interrupted mid-fetch stores nothing, and
each finishes when run again."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.flightplan import _oci_server
from tests.flightplan._machines import FLIGHTDECK, Machine, freeze, hello_plan, publisher, trust


def _interrupt(machine: Machine, registry: _oci_server.Registry, *args: str) -> str:
    """Run the command until the registry holds its stalled request, then
    Ctrl-C it; its stderr."""
    env = {**os.environ, "FLIGHTDECK_HOME": str(machine.home)}
    process = subprocess.Popen(
        [str(FLIGHTDECK), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    stall = registry.stall or ""
    while not any(r.startswith(stall) for r in registry.requests):
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    registry.release.set()
    assert process.returncode == 130, err
    assert "Traceback" not in err
    registry.stall = None
    return err


def test_an_interrupted_publish_and_install_leave_nothing_half_done(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    freeze(first, hello_plan(tmp_path / "src"), keys, "1.0.0")
    with _oci_server.serving() as registry:
        repo = f"{registry.address}/acme/plans"
        registry.stall = "PUT /v2/acme/plans/blobs/uploads/"  # the first file's upload
        _interrupt(first, registry, "publish", "hello-plan", "--registry", repo)
        assert not any(ref == "latest" for _, ref in registry.manifests)
        published = first.ok("publish", "hello-plan", "--registry", repo)

        second = Machine(tmp_path / "b")
        trust(second, keys)
        registry.release.clear()
        registry.stall = "GET /v2/acme/plans/blobs/"
        _interrupt(second, registry, "install", repo)
        assert second.stored() == [] and second.trust_state() == ""
        installed = second.ok("install", repo)
        assert installed["digest"] == published["digest"] and installed["created"] is True
