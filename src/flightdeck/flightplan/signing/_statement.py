"""The signed statement inside `SKILL.md.sig`.

The content signature covers the frozen SKILL.md (and so the lock inside it).
The statement signature covers what the store index used to say unsigned:
the name, version label, publisher, content hash, the SHA-256 of the
`lock.json` bytes and the signing time. verify takes all of them from here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from flightdeck.flightplan._canonical import CanonicalError, jcs, sha256_tag
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._freeze import STATEMENT_TYPE
from flightdeck.flightplan.model._lock import Lock
from flightdeck.flightplan.signing._signing import signature_valid


def check_statement(
    envelope: dict[str, Any],
    public: Ed25519PublicKey,
    name: str | None,
    lock: Lock,
    digest: str,
    lock_json: bytes,
    folder: Path,
) -> None:
    statement = envelope.get("statement")
    where = str(folder / "SKILL.md.sig")
    if not isinstance(statement, dict) or statement.get("type") != STATEMENT_TYPE:
        raise FlightPlanError(
            "verify.statement_missing",
            "the signature envelope carries no signed statement (an older freeze format, "
            "or one removed)",
            hint="re-freeze the plan from its source with this flightdeck",
            where=where,
        )
    try:
        signed = jcs(statement)
    except CanonicalError:  # a value no freeze writes (a lone surrogate): no signature covers it
        signed = b""
    if not signed or not signature_valid(
        public, signed, str(envelope.get("statementSignature", ""))
    ):
        raise FlightPlanError(
            "verify.signature_invalid",
            "the statement signature does not verify with the signer's public key",
            hint="the statement was edited, or signed by another key",
            where=where,
        )
    expected = {
        "name": name,
        "version": lock.version,
        "publisher": lock.publisher,
        "contentHash": digest,
        "lockDigest": sha256_tag(lock_json),
    }
    wrong = [
        f"{k} {statement.get(k)!r} is not {v!r}"
        for k, v in expected.items()
        if statement.get(k) != v
    ]
    if wrong or not isinstance(statement.get("signedAt"), str):
        raise FlightPlanError(
            "verify.statement_mismatch",
            "the signed statement does not describe this plan: "
            + ("; ".join(wrong) or "no signedAt"),
            hint="the signature belongs to another plan or version; re-freeze from the source",
            where=where,
        )
