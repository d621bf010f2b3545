"""Which of a version's signatures counts.

A version may carry several valid signatures (the first signer's and
co-signatures). It is accepted when at least one is by a key that is
trusted for its publisher (or, without a publisher, pinned for its name in
the keyring, or given with `--key`) and is not revoked. A revoked key never
counts. No hint here names a key that arrived with the artifact: the key a
user trusts must come from its owner.
"""

from __future__ import annotations

from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.signing._keyring import Keyring
from flightdeck.flightplan.signing._signing import key_id, load_public_key
from flightdeck.flightplan.signing._trust import TrustState


def pinned_key(state: TrustState, name: str) -> str | None:
    """The key id the trust state pinned `name` to, for a plan without a publisher."""
    record = state.get(name)
    if record is None or not record.owner.startswith("key:"):
        return None
    return record.owner.removeprefix("key:")


def carry_pin(
    state: TrustState,
    plan: str,
    *,
    publisher: str | None,
    pinned: str | None,
    signers: list[str],
    accepted: str,
) -> None:
    """Key rotation for a plan without a publisher: its trust-state owner is
    a key. When the pinned key itself signed this version beside the accepted
    (new) key, the pin moves to the new key, so later versions signed by the
    new key alone are not `verify.publisher_changed`. Without that signature
    nothing moves: a version by another key alone stays refused."""
    if publisher is None and pinned is not None and pinned != accepted and pinned in signers:
        state.move_owner(plan, f"key:{pinned}", f"key:{accepted}")


def accept_signer(
    signers: list[str],
    *,
    publisher: str | None,
    plan: str,
    key: bytes | None,
    keyring: Keyring,
    pinned: str | None = None,
) -> str:
    """The key id of a counting signature, or the refusal. `signers` are the
    key ids of the valid signatures, the first signer's first. Preferring the
    key the trust state pinned keeps a rotated plan's owner stable."""
    revoked = keyring.revoked()
    candidates = signers
    if key is not None:
        expected = key_id(load_public_key(key, code="verify.key_invalid"))
        if expected not in signers:
            raise FlightPlanError(
                "verify.key_mismatch",
                f"the plan is signed by {', '.join(signers)}, not by the key you gave ({expected})",
                hint="get the publisher's key from the publisher, never from beside the plan",
            )
        candidates = [expected]
    if publisher is not None:
        trusted = {k.key_id for k in keyring.trusted_for(publisher)}
    elif key is not None:
        trusted = set(candidates)  # the user named the key: it vouches for this plan
    else:
        trusted = {k.key_id for k in keyring.pinned_for(plan)}
    counting = [s for s in candidates if s in trusted and s not in revoked]
    if counting:
        return pinned if pinned in counting else counting[0]
    if all(s in revoked for s in candidates):
        reasons = "; ".join(
            f"{s} revoked {revoked[s].revoked_at}"
            + (f" ({revoked[s].reason})" if revoked[s].reason else "")
            for s in candidates
        )
        raise FlightPlanError(
            "verify.key_revoked",
            f"every signature on {plan} is by a revoked key: {reasons}",
            hint="ask the publisher for a version signed (or co-signed) by a current key",
        )
    if publisher is not None:
        raise FlightPlanError(
            "verify.publisher_untrusted",
            f"the plan is published as {publisher} but none of its signing keys "
            f"({', '.join(candidates)}) is trusted for it"
            + (" and unrevoked" if any(s in revoked for s in candidates) else ""),
            hint=f"obtain {publisher}'s public key from the publisher itself (not the "
            f"signer.pub.pem or a .sig beside the plan) and run: flightdeck keyring trust "
            f"{publisher} --key THEIR_KEY.pem",
        )
    raise FlightPlanError(
        "verify.key_unpinned",
        f"{plan} has no publisher and none of its signing keys ({', '.join(candidates)}) "
        "is pinned for the name in the keyring"
        + (" and unrevoked" if any(s in revoked for s in candidates) else ""),
        hint="obtain the signer's public key from whoever froze the plan (not the "
        f"signer.pub.pem or a .sig beside it) and run: flightdeck keyring trust --plan {plan} "
        "--key THEIR_KEY.pem, or pass --key THEIR_KEY.pem",
    )
