"""Ed25519 keys, key ids and detached signatures.

Keys are PEM: PKCS#8 (unencrypted) for the private key, SubjectPublicKeyInfo
for the public key. A key id is `sha256:` + hex of SHA-256 of the 32 raw
public-key bytes. Ed25519 signatures are deterministic (RFC 8032), so the
same bytes and key always give the same signature.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from flightdeck.flightplan._errors import FlightPlanError

SIGNING_KEY_ENV = "FLIGHTDECK_SIGNING_KEY"


@dataclass(frozen=True)
class KeyPair:
    private_path: Path
    public_path: Path
    key_id: str


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def public_pem(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def generate_keys(out_dir: Path, name: str = "flightdeck") -> KeyPair:
    """Write `<name>.key` (0600) and `<name>.pub` (PEM) into `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    private = Ed25519PrivateKey.generate()
    private_path, public_path = out_dir / f"{name}.key", out_dir / f"{name}.pub"
    for path in (private_path, public_path):
        if path.exists():
            raise FlightPlanError("keys.exists", f"{path} already exists", hint="choose --out")
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    # Create with 0600 from the start: never a moment where the key is readable.
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    public_path.write_bytes(public_pem(private.public_key()))
    return KeyPair(private_path, public_path, key_id(private.public_key()))


def load_private_key(source: str | Path | None) -> Ed25519PrivateKey:
    """From a PEM file path, or from `FLIGHTDECK_SIGNING_KEY` (a path or the PEM text)."""
    if source is None:
        source = os.environ.get(SIGNING_KEY_ENV)
    if not source:
        raise FlightPlanError(
            "freeze.no_signing_key",
            "no signing key given",
            hint=f"pass --signing-key KEY.pem or set {SIGNING_KEY_ENV}; "
            "create one with 'flightdeck keys generate'",
        )
    text = str(source)
    if text.lstrip().startswith("-----BEGIN"):
        pem = text.encode("utf-8")
    else:
        try:
            pem = Path(text).read_bytes()
        except OSError as exc:
            raise FlightPlanError(
                "freeze.signing_key_unreadable", f"cannot read signing key {text}: {exc}"
            ) from None
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        message = f"not a PEM private key: {exc}"
        raise FlightPlanError("freeze.signing_key_invalid", message) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise FlightPlanError("freeze.signing_key_invalid", "the signing key is not Ed25519")
    return key


def load_public_key(pem: bytes, *, code: str = "keys.invalid_public_key") -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise FlightPlanError(code, f"not a PEM public key: {exc}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise FlightPlanError(code, "the public key is not Ed25519")
    return key


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    return base64.b64encode(key.sign(message)).decode("ascii")


def signature_valid(public: Ed25519PublicKey, message: bytes, signature_b64: str) -> bool:
    try:
        public.verify(base64.b64decode(signature_b64, validate=True), message)
    except (InvalidSignature, ValueError):
        return False
    return True
