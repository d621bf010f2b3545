"""A tool that runs through the ACP client but presents itself as the disk
tool it stands for: same name, category, description, schema and summary,
so the model and the approval policy see one tool whichever way it runs."""

from __future__ import annotations

from typing import Any

from flightdeck.agent.tools import Tool


class StandIn:
    def __init__(self, disk: Tool) -> None:
        self.disk = disk
        self.name = disk.name
        self.category = disk.category
        self.description = disk.description

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.disk.input_schema

    def summary(self, args: dict[str, Any]) -> str:
        return self.disk.summary(args)
