"""Two "machines" for publish and install tests: each a FLIGHTDECK_HOME of
its own, the installed `flightdeck` run as a process, as users run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.launch.conftest import write_plan

FLIGHTDECK = Path(sys.executable).with_name("flightdeck")
PUBLISHER = "github://acme"


@dataclass
class Machine:
    home: Path

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "FLIGHTDECK_HOME": str(self.home), "DOCKER_CONFIG": str(self.home)}
        return subprocess.run(
            [str(FLIGHTDECK), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=300,
            check=False,
        )

    def json(self, *args: str) -> dict[str, Any]:
        done = self.run(*args, "--format", "json")
        data = json.loads(done.stdout)
        assert isinstance(data, dict), done
        return data

    def ok(self, *args: str) -> dict[str, Any]:
        data = self.json(*args)
        assert data.get("ok") is True, data
        return data

    def refused(self, code: str, *args: str) -> dict[str, Any]:
        done = self.run(*args, "--format", "json")
        assert done.returncode == 1, (done.stdout, done.stderr)
        error = json.loads(done.stdout)["error"]
        assert error["code"] == code, error
        assert "Traceback" not in done.stderr
        return dict(error)

    @property
    def skills(self) -> Path:
        return self.home / "data" / "skills"

    def stored(self) -> list[str]:
        """Every file under the store (nothing written means [])."""
        if not self.skills.exists():
            return []
        return sorted(str(p.relative_to(self.skills)) for p in self.skills.rglob("*"))

    def trust_state(self) -> str:
        path = self.home / "data" / "trust.json"
        return path.read_text() if path.exists() else ""


def hello_plan(folder: Path, *, name: str = "hello-plan", text: str = "world") -> Path:
    """A plan without an image: one identity transform of an input."""
    folder.mkdir(parents=True, exist_ok=True)
    return write_plan(
        folder,
        name=name,
        inputs=[
            {
                "name": "who",
                "type": "string",
                "resolution": {"rule": "literal", "default": text},
            }
        ],
        outputs=[
            {
                "name": "result.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "result.txt"},
            }
        ],
        steps=[
            {
                "id": "s",
                "kind": "transform",
                "transform": "identity",
                "bindings": {"data": "inputs.who"},
                "outputs": ["out"],
                "materializesOutput": "result.txt",
            }
        ],
    )


def publisher(home: Path, keys: Path) -> Machine:
    """A machine with a key pair trusted for the publisher."""
    machine = Machine(home)
    if not (keys / "flightdeck.key").exists():
        assert machine.run("keys", "generate", "--out", str(keys)).returncode == 0
    trust(machine, keys)
    return machine


def trust(machine: Machine, keys: Path) -> None:
    done = machine.run("keyring", "trust", PUBLISHER, "--key", str(keys / "flightdeck.pub"))
    assert done.returncode == 0, done.stderr


def freeze(machine: Machine, source: Path, keys: Path, version: str) -> dict[str, Any]:
    return machine.ok(
        "freeze",
        str(source),
        "--signing-key",
        str(keys / "flightdeck.key"),
        "--version",
        version,
        "--publisher",
        PUBLISHER,
    )
