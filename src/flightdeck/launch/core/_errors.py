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

from flightdeck._errors import FlightdeckError


class LaunchError(FlightdeckError):
    fields = ("code", "message", "step", "hint")

    def __init__(
        self,
        code: str,
        message: str,
        *,
        step: str | None = None,
        hint: str | None = None,
        transient: bool = False,
    ) -> None:
        super().__init__(code, message, hint=hint)
        self.step = step
        # A transient failure may be retried when the contract says safeToRetry.
        self.transient = transient

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LaunchError:
        return cls(
            str(data.get("code", "step.failed")),
            str(data.get("message", "")),
            step=data.get("step"),
            hint=data.get("hint"),
        )

    def heading(self) -> str:
        return self.message + (f" (step {self.step})" if self.step else "")
