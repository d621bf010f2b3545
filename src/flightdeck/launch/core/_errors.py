"""The run error: a code, a message, the step it concerns, and a hint.

`LaunchError` covers everything that stops or fails a launch: verification
refusals (`verify.*`, passed through from the flightplan layer), input
problems (`input.*`), step failures (`step.*`, `egress_denied`,
`approval.*`), output problems (`output.*`) and resume problems
(`resume.*`). Messages never carry secret values: the runtime scrubs them
before an error leaves a step.
"""

from __future__ import annotations

from typing import Any


class LaunchError(Exception):
    def __init__(
        self,
        code: str,
        message: str,
        *,
        step: str | None = None,
        hint: str | None = None,
        transient: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.step = step
        self.hint = hint
        # A transient failure may be retried when the contract says safeToRetry.
        self.transient = transient

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "step": self.step, "hint": self.hint}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LaunchError:
        return cls(
            str(data.get("code", "step.failed")),
            str(data.get("message", "")),
            step=data.get("step"),
            hint=data.get("hint"),
        )

    def describe(self) -> str:
        where = f" (step {self.step})" if self.step else ""
        text = f"error: {self.message}{where} [{self.code}]"
        return text + (f"\nhint: {self.hint}" if self.hint else "")

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
