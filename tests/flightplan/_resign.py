"""An attacker's re-signer for the tamper suites: edit a stored version and
write every sealed file again, signed with a key the attacker holds, so the
only thing left for verify to catch is *who* signed and *what* it says."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flightdeck.documents import DocumentKind, load_document
from flightdeck.flightplan import KeyPair
from flightdeck.flightplan._canonical import PartDigests, canonical_bytes, jcs, sha256_tag
from flightdeck.flightplan._emit import emit_skill
from flightdeck.flightplan._freeze import make_statement
from flightdeck.flightplan.signing._signing import key_id, load_private_key, public_pem, sign

Edit = Callable[[dict[str, Any]], None]  # changes the frontmatter in place


def resign(folder: Path, keys: KeyPair, edit: Edit, *, body_suffix: str = "") -> None:
    """Apply `edit` to the frontmatter, re-hash, re-sign with `keys` and
    rewrite SKILL.md, lock.json, SKILL.md.sig and signer.pub.pem."""
    document = load_document(folder / "SKILL.md", kind=DocumentKind.SKILL).document
    assert document is not None
    data: dict[str, Any] = json.loads(json.dumps(document.data))
    body = document.body + body_suffix
    edit(data)
    lock = data["aileron"]["lock"]
    lock.pop("contentHash", None)
    message = canonical_bytes(data, body)
    digest = sha256_tag(message)
    lock["contentHash"] = digest
    private = load_private_key(keys.private_path)
    lock_bytes = jcs(lock) + b"\n"
    statement = make_statement(
        str(data.get("name")), lock.get("version"), lock.get("publisher"), digest, lock_bytes
    )
    envelope = {
        "algorithm": "ed25519",
        "contentHash": digest,
        "keyId": key_id(private.public_key()),
        "parts": PartDigests.of(data, body).to_data(),
        "signature": sign(private, message),
        "statement": statement,
        "statementSignature": sign(private, jcs(statement)),
    }
    (folder / "SKILL.md").write_text(emit_skill(data, body), encoding="utf-8")
    (folder / "lock.json").write_bytes(lock_bytes)
    (folder / "SKILL.md.sig").write_bytes(jcs(envelope) + b"\n")
    (folder / "signer.pub.pem").write_bytes(public_pem(private.public_key()))
