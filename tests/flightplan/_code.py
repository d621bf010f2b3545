"""A stand-in for launch's code resolver: flightplan tests pin made-up
driver code without a workspace (the pins' bytes are all verify reads)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from flightdeck.flightplan import CodePin


class FakeCode:
    def __init__(self, salt: str = "") -> None:
        self.salt = salt  # another salt: the "same" driver with other code

    @property
    def workspace(self) -> Path:
        return Path("/nonexistent-workspace")

    def pin(self, connector: str, action: str) -> CodePin:
        file = "sha256:" + hashlib.sha256(f"{connector}{self.salt}".encode()).hexdigest()
        return CodePin(
            driver=connector,
            tools=(action,),
            root="workspace",
            location=f".drivers/{connector}/DRIVER.md",
            digest="sha256:" + hashlib.sha256(f"{file}  DRIVER.md\n".encode()).hexdigest(),
            files={"DRIVER.md": file},
        )
