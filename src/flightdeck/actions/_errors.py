"""Action errors, as values with codes.

ActionDefinitionError   define_action / load_action refused a definition;
                        `diagnostics` lists every problem (action.invalid_id,
                        action.description_too_long, action.invalid_risk_level,
                        action.unknown_approval_class, ...)
ActionRefError          a reference could not be resolved: code
                        `action_ref_unresolvable` (AIP-39; when the ref
                        finds an ACTION.md that is invalid, the message says
                        so and `at` locates its first problem), or
                        `action_trust_downgrade` under strict resolution;
                        `tried` lists every place looked at
TrustDowngradeWarning   (a Warning) the locked sha256 of a ref changed
"""

from __future__ import annotations

from collections.abc import Sequence

from flightdeck.documents import Diagnostic

UNRESOLVABLE = "action_ref_unresolvable"
TRUST_DOWNGRADE = "action_trust_downgrade"


class ActionDefinitionError(ValueError):
    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(diagnostics)
        lines = [f"{d.code} at {d.pointer or '/'}: {d.message}" for d in self.diagnostics]
        super().__init__("invalid action: " + "; ".join(lines))

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]


class ActionRefError(LookupError):
    def __init__(
        self,
        ref: str,
        message: str,
        tried: Sequence[str] = (),
        *,
        code: str = UNRESOLVABLE,
        at: Diagnostic | None = None,
    ) -> None:
        self.code = code
        self.ref = ref
        self.at = at
        self.reason = message
        self.tried = tuple(tried)
        text = f"{code}: {ref!r}: {message}"
        if self.tried:
            text += "; tried: " + "; ".join(self.tried)
        super().__init__(text)

    @property
    def message(self) -> str:
        return str(self)


class TrustDowngradeWarning(UserWarning):
    """A resolved action's content differs from the sha256 locked in flightdeck.lock."""
