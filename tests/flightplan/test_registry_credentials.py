"""Issue 30: registry credentials as `docker login` leaves them
(`$DOCKER_CONFIG/config.json`: `auths`, `credsStore`, `credHelpers`), and a
401 that names `docker login <host>`."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path

import pytest

from tests.flightplan import _oci_server
from tests.flightplan._machines import Machine, freeze, hello_plan, publisher, trust


def _config(machine: Machine, data: dict[str, object]) -> None:
    # Machine.run points DOCKER_CONFIG at its home.
    (machine.home / "config.json").write_text(json.dumps(data))


@pytest.mark.parametrize("bearer", [False, True], ids=["basic", "bearer-token"])
def test_docker_config_auths_are_used(tmp_path: Path, bearer: bool) -> None:
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    freeze(first, hello_plan(tmp_path / "src"), keys, "1.0.0")
    with _oci_server.serving() as registry:
        registry.basic, registry.bearer = "ada:s3cret", bearer
        repo = f"{registry.address}/acme/plans"
        error = first.refused("publish.unauthorized", "publish", "hello-plan", "--registry", repo)
        assert f"docker login {registry.address}" in error["message"]
        auth = base64.b64encode(b"ada:s3cret").decode()
        _config(first, {"auths": {registry.address: {"auth": auth}}})
        first.ok("publish", "hello-plan", "--registry", repo)
        second = Machine(tmp_path / "b")
        trust(second, keys)
        second.refused("install.unauthorized", "install", repo)
        _config(second, {"auths": {registry.address: {"username": "ada", "password": "s3cret"}}})
        assert second.ok("install", repo)["created"] is True


def test_a_credential_helper_is_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper = bin_dir / "docker-credential-fake"
    helper.write_text(
        "#!/bin/sh\nread host\n"
        'echo "$host" > "$(dirname "$0")/asked"\n'
        'echo \'{"ServerURL": "x", "Username": "ada", "Secret": "s3cret"}\'\n'
    )
    helper.chmod(helper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    keys = tmp_path / "keys"
    first = publisher(tmp_path / "a", keys)
    freeze(first, hello_plan(tmp_path / "src"), keys, "1.0.0")
    with _oci_server.serving() as registry:
        registry.basic = "ada:s3cret"
        _config(first, {"credHelpers": {registry.address: "fake"}})
        first.ok("publish", "hello-plan", "--registry", f"{registry.address}/acme/plans")
        assert (bin_dir / "asked").read_text().strip() == registry.address
        (bin_dir / "asked").unlink()
        _config(first, {"credsStore": "fake"})
        first.ok("publish", "hello-plan", "--registry", f"{registry.address}/acme/plans")
        assert (bin_dir / "asked").exists()
