"""Ed25519 keys, key ids and detached signatures.

Keys are PEM: PKCS#8 for the private key (unencrypted, or encrypted with a
passphrase; see _passphrase for its sources), SubjectPublicKeyInfo for the
public key. A key id is `sha256:` + hex of SHA-256 of the 32 raw
public-key bytes. Ed25519 signatures are deterministic (RFC 8032), so the
same bytes and key always give the same signature.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from flightdeck.flightplan._errors import FlightPlanError
from flightdeck.flightplan.signing._passphrase import PASSPHRASE_ENV, Passphrase, resolve_passphrase

SIGNING_KEY_ENV = "FLIGHTDECK_SIGNING_KEY"
# A file name, not a path: `--name ../x` must not write outside --out.
_KEY_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$")


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


def generate_keys(
    out_dir: Path, name: str = "flightdeck", passphrase: bytes | None = None
) -> KeyPair:
    """Write `<name>.key` (0600) and `<name>.pub` (PEM) into `out_dir`; the
    private key is encrypted PKCS#8 when a passphrase is given."""
    if not _KEY_NAME.match(name):
        raise FlightPlanError(
            "keys.invalid_name",
            f"key name {name!r} is not a plain file name",
            hint="letters, digits, '.', '_' and '-', not starting with '.'",
        )
    try:
        return _write_pair(out_dir, name, passphrase)
    except OSError as exc:
        raise FlightPlanError(
            "keys.unwritable", f"cannot write keys into {out_dir}: {exc.strerror or exc}"
        ) from None


def _write_pair(out_dir: Path, name: str, passphrase: bytes | None) -> KeyPair:
    out_dir.mkdir(parents=True, exist_ok=True)
    private = Ed25519PrivateKey.generate()
    private_path, public_path = out_dir / f"{name}.key", out_dir / f"{name}.pub"
    for path in (private_path, public_path):
        if path.exists():
            raise FlightPlanError("keys.exists", f"{path} already exists", hint="choose --out")
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(passphrase)
        if passphrase
        else serialization.NoEncryption(),
    )
    # Create with 0600 from the start: never a moment where the key is readable.
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(pem)
    public_path.write_bytes(public_pem(private.public_key()))
    return KeyPair(private_path, public_path, key_id(private.public_key()))


def load_private_key(source: str | Path | None, passphrase: Passphrase = None) -> Ed25519PrivateKey:
    """From a PEM file path, or from `FLIGHTDECK_SIGNING_KEY` (a path or the PEM
    text). An encrypted key is opened with `passphrase` (bytes, e.g. read from
    a descriptor), else `FLIGHTDECK_KEY_PASSPHRASE`, else what `passphrase`
    returns when it is a callable (the CLI's prompt)."""
    origin = ""
    if source is None:
        source, origin = os.environ.get(SIGNING_KEY_ENV), f" (from {SIGNING_KEY_ENV})"
    if not source:
        raise FlightPlanError(
            "freeze.no_signing_key",
            "no signing key given",
            hint=f"pass --signing-key KEY.pem or set {SIGNING_KEY_ENV}; "
            "create one with 'flightdeck keys generate'",
        )
    text = str(source)
    if text.lstrip().startswith("-----BEGIN"):
        pem, label = text.encode("utf-8"), f"the PEM text in {SIGNING_KEY_ENV}"
    else:
        label = f"signing key {text}{origin}"
        try:
            pem = Path(text).read_bytes()
        except OSError as exc:
            raise FlightPlanError(
                "freeze.signing_key_unreadable", f"cannot read {label}: {exc.strerror or exc}"
            ) from None
    hint = "a PEM Ed25519 private key, as 'flightdeck keys generate' writes"
    password = None
    if b"ENCRYPTED PRIVATE KEY" in pem:
        # Asked for only now: an unencrypted key never triggers a prompt.
        password = resolve_passphrase(passphrase)
        if password is None:
            raise FlightPlanError(
                "freeze.passphrase_needed",
                f"{label} is encrypted and no passphrase was given",
                hint=f"pass --passphrase-fd N, set {PASSPHRASE_ENV}, or run on a terminal "
                "to be asked",
            )
    try:
        key = serialization.load_pem_private_key(pem, password=password)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        # cryptography's own text ("Unable to load PEM file. See https://...")
        # says little to a user; keep only its first sentence.
        reason = str(exc).split(". ")[0]
        if password is not None:
            message = f"{label}: wrong passphrase or damaged key ({reason})"
            raise FlightPlanError("freeze.passphrase_wrong", message) from None
        message = f"{label} is not a PEM private key ({reason})"
        raise FlightPlanError("freeze.signing_key_invalid", message, hint=hint) from None
    if not isinstance(key, Ed25519PrivateKey):
        kind = type(key).__name__.removeprefix("_").replace("PrivateKey", "")
        message = f"{label} is {kind}, not Ed25519"
        raise FlightPlanError("freeze.signing_key_invalid", message, hint=hint) from None
    return key


def load_public_key(pem: bytes, *, code: str = "keys.invalid_public_key") -> Ed25519PublicKey:
    hint = "a PEM Ed25519 public key, like the NAME.pub that 'flightdeck keys generate' writes"
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        reason = str(exc).split(". ")[0]
        raise FlightPlanError(code, f"not a PEM public key ({reason})", hint=hint) from None
    if not isinstance(key, Ed25519PublicKey):
        kind = type(key).__name__.removeprefix("_").replace("PublicKey", "")
        raise FlightPlanError(code, f"the public key is {kind}, not Ed25519", hint=hint)
    return key


def sign(key: Ed25519PrivateKey, message: bytes) -> str:
    return base64.b64encode(key.sign(message)).decode("ascii")


def signature_valid(public: Ed25519PublicKey, message: bytes, signature_b64: str) -> bool:
    try:
        public.verify(base64.b64decode(signature_b64, validate=True), message)
    except (InvalidSignature, ValueError):
        return False
    return True
