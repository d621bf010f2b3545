"""Co-signatures: more keys vouching for a version already signed.

A key is rotated by co-signing: the new key signs the same canonical bytes
and the same signed statement as the first signer, and its signature sits
beside `SKILL.md.sig` as `SKILL.md.<64 hex of its key id>.sig`, one file
per key, JCS + LF, carrying its own public key:

    {"algorithm":"ed25519","contentHash":…,"keyId":…,"publicKey":PEM,
     "signature":<base64 over the canonical bytes>,
     "statementSignature":<base64 over JCS(statement of SKILL.md.sig)>}

Ed25519 is deterministic, so co-signing twice with one key writes the same
bytes, and adding a co-signature changes no other file of the version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from flightdeck._bounded import read_regular
from flightdeck._json import read_json
from flightdeck.flightplan._canonical import jcs
from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan._limits import STORE_FILE_BYTES
from flightdeck.flightplan.signing._signing import (
    key_id,
    load_public_key,
    public_pem,
    sign,
    signature_valid,
)

_FILE = re.compile(r"^SKILL\.md\.([0-9a-f]{64})\.sig$")
COSIGNATURE_GLOB = "SKILL.md.*.sig"


def cosignature_name(signer: str) -> str:
    """The file name of the co-signature by key id `signer`."""
    return f"SKILL.md.{signer.removeprefix('sha256:')}.sig"


@dataclass(frozen=True)
class CoSignature:
    content_hash: str
    key_id: str
    public_key_pem: str
    signature: str
    statement_signature: str

    def to_bytes(self) -> bytes:
        return (
            jcs(
                {
                    "algorithm": "ed25519",
                    "contentHash": self.content_hash,
                    "keyId": self.key_id,
                    "publicKey": self.public_key_pem,
                    "signature": self.signature,
                    "statementSignature": self.statement_signature,
                }
            )
            + b"\n"
        )


def make_cosignature(
    key: Ed25519PrivateKey, message: bytes, statement: dict[str, Any], digest: str
) -> CoSignature:
    public = key.public_key()
    return CoSignature(
        digest,
        key_id(public),
        public_pem(public).decode("ascii"),
        sign(key, message),
        sign(key, jcs(statement)),
    )


def read_cosigners(
    folder: Path, message: bytes, statement: dict[str, Any], digest: str
) -> list[str]:
    """Key ids of the co-signatures beside `SKILL.md.sig`, each checked over
    the same content and statement. One that does not check out is a changed
    store, refused rather than skipped (`verify.cosignature_invalid`)."""
    out = []
    for path in sorted(folder.glob(COSIGNATURE_GLOB)):
        problem = _problem(path, message, statement, digest)
        if problem:
            raise FlightPlanError(
                "verify.cosignature_invalid",
                f"the co-signature {path.name} {problem}",
                hint="a co-signature file was edited, renamed or copied from another "
                "version; remove it, or have its key co-sign again with 'flightdeck sign'",
                where=str(path),
            )
        match = _FILE.match(path.name)
        assert match is not None  # _problem checked the name
        out.append("sha256:" + match.group(1))
    return out


def _problem(path: Path, message: bytes, statement: dict[str, Any], digest: str) -> str:
    match = _FILE.match(path.name)
    if match is None:
        return "is not named SKILL.md.<64 hex of its key id>.sig"
    try:
        data = read_json(read_regular(path, STORE_FILE_BYTES).decode("utf-8"))
    except (OSError, ValueError) as exc:
        return f"cannot be read ({exc})"
    if not isinstance(data, dict) or data.get("algorithm") != "ed25519":
        return "is not an ed25519 co-signature"
    try:
        public = load_public_key(str(data.get("publicKey", "")).encode("utf-8"))
    except FlightPlanError as exc:
        return f"carries no usable public key ({exc.message})"
    signer = key_id(public)
    if data.get("keyId") != signer or signer != "sha256:" + match.group(1):
        return f"is not by the key it names ({signer})"
    if data.get("contentHash") != digest:
        return f"is for another content hash ({data.get('contentHash')})"
    if not signature_valid(public, message, str(data.get("signature", ""))):
        return "does not verify over this plan's canonical bytes"
    if not signature_valid(public, jcs(statement), str(data.get("statementSignature", ""))):
        return "does not verify over this version's signed statement"
    return ""
