"""An independent verifier written only from docs/canonical-bytes.md.

It imports nothing from flightdeck: PyYAML (made to read the YAML 1.2 core
schema the page names), rfc8785 for JCS, hashlib, base64 and cryptography.
It reproduces every check the page lists for a stored version made by
`flightdeck freeze` (run as a process): the content hash, the signature, the
`lock.json` bytes and digest, the signed statement and its fields, the key id,
the `code-pins.json` bytes against the digest the frontmatter's `metadata`
binds, and each code pin's digest from its `files` and from the files on disk. It
must also refuse: a test flips one byte of each signed part.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import rfc8785
import yaml
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_pem_public_key

from tests.cli._run import run

DEMO = Path(__file__).resolve().parents[2] / "examples" / "flightplans" / "metrics-digest"


class _CoreLoader(yaml.SafeLoader):
    """YAML 1.2 core schema: only true/false are booleans; dates stay strings."""


_CoreLoader.yaml_implicit_resolvers = {
    first: [
        (tag, rx)
        for tag, rx in rules
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")
    ]
    for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


class Refused(Exception):
    pass


def _split(raw: bytes) -> tuple[dict[str, Any], str]:
    text = raw.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[0] != "---":
        raise Refused("no frontmatter")
    end = lines.index("---", 1)
    data = yaml.load("\n".join(lines[1:end]), Loader=_CoreLoader)  # _CoreLoader is a SafeLoader
    return data, "\n".join(lines[end + 1 :])


def _jcs(value: Any) -> bytes:
    return rfc8785.dumps(value)


def _canonical(data: dict[str, Any], body: str) -> bytes:
    stripped = json.loads(json.dumps(data))
    stripped["aileron"]["lock"].pop("contentHash", None)
    return _jcs(stripped) + b"\x00" + body.encode("utf-8")


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _verify_signature(key: Ed25519PublicKey, signature_b64: str, message: bytes) -> None:
    try:
        key.verify(base64.b64decode(signature_b64, validate=True), message)
    except (InvalidSignature, ValueError) as exc:
        raise Refused(f"signature: {exc!r}") from None


def _manifest_digest(files: dict[str, str]) -> str:
    lines = [
        f"{files[name].removeprefix('sha256:')}  {name}\n"
        for name in sorted(files, key=lambda n: n.encode())
    ]
    return _sha("".join(lines).encode("utf-8"))


def verify_version(folder: Path, workspace: Path) -> dict[str, Any]:
    """Every check of docs/canonical-bytes.md; raises Refused."""
    data, body = _split((folder / "SKILL.md").read_bytes())
    lock = data["aileron"]["lock"]
    canonical = _canonical(data, body)
    if _sha(canonical) != lock["contentHash"]:
        raise Refused("content hash")
    envelope_bytes = (folder / "SKILL.md.sig").read_bytes()
    envelope = json.loads(envelope_bytes)
    if _jcs(envelope) + b"\n" != envelope_bytes:
        raise Refused("the envelope is not JCS + LF")
    public = load_pem_public_key((folder / "signer.pub.pem").read_bytes())
    assert isinstance(public, Ed25519PublicKey)
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    if envelope["algorithm"] != "ed25519" or envelope["keyId"] != _sha(raw):
        raise Refused("algorithm or key id")
    if envelope["contentHash"] != lock["contentHash"]:
        raise Refused("envelope content hash")
    _verify_signature(public, envelope["signature"], canonical)
    lock_bytes = (folder / "lock.json").read_bytes()
    if lock_bytes != _jcs(lock) + b"\n":
        raise Refused("lock.json is not the lock inside SKILL.md")
    statement = envelope["statement"]
    _verify_signature(public, envelope["statementSignature"], _jcs(statement))
    expected = {
        "type": "flightdeck/statement/v1",
        "name": data["name"],
        "version": lock.get("version"),
        "publisher": lock.get("publisher"),
        "contentHash": lock["contentHash"],
        "lockDigest": _sha(lock_bytes),
    }
    if {k: statement.get(k) for k in expected} != expected:
        raise Refused("statement fields")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", statement["signedAt"]):
        raise Refused("signedAt")
    pins = lock.get("codePins", [])  # plans frozen before code-pins.json
    bound = data.get("metadata", {}).get("flightdeck-code-pins")
    pins_path = folder / "code-pins.json"
    if bound is None:
        if pins_path.exists():
            raise Refused("code-pins.json is not bound by the plan")
    else:
        if pins or not pins_path.is_file():
            raise Refused("code-pins.json: missing, or pins in the lock too")
        pins_bytes = pins_path.read_bytes()
        if _sha(pins_bytes) != bound:
            raise Refused("code-pins.json digest")
        pins_data = json.loads(pins_bytes)
        if _jcs(pins_data) + b"\n" != pins_bytes:
            raise Refused("code-pins.json is not JCS + LF")
        pins = pins_data["codePins"]
    for pin in pins:
        if _manifest_digest(pin["files"]) != pin["digest"]:
            raise Refused(f"code pin of {pin['driver']}: digest of its files")
        base = (workspace / pin["location"]).parent
        for name, digest in pin["files"].items():
            if _sha((base / name).read_bytes()) != digest:
                raise Refused(f"code pin of {pin['driver']}: {name}")
    return statement


@pytest.fixture
def frozen(tmp_path: Path, fd_home: Path) -> tuple[Path, Path]:
    plan = tmp_path / "plan"
    shutil.copytree(DEMO, plan, ignore=shutil.ignore_patterns("__pycache__"))
    assert run("keys", "generate", "--out", str(tmp_path / "keys"), "--name", "k").returncode == 0
    proc = run(
        "freeze",
        str(plan / "SKILL.md"),
        "--workspace",
        str(plan),
        "--version",
        "1.0.0",
        "--signing-key",
        str(tmp_path / "keys" / "k.key"),
    )
    assert proc.returncode == 0, proc.stderr
    [folder] = (fd_home / "data" / "skills" / "metrics-digest" / "versions").iterdir()
    return folder, plan


def test_a_frozen_version_verifies_from_the_docs_alone(frozen: tuple[Path, Path]) -> None:
    folder, plan = frozen
    statement = verify_version(folder, plan)
    assert statement["name"] == "metrics-digest" and statement["version"] == "1.0.0"
    lock = json.loads((folder / "lock.json").read_text())
    assert "codePins" not in lock  # Aileron's lock is closed
    pins = json.loads((folder / "code-pins.json").read_text())["codePins"]
    assert [pin["driver"] for pin in pins] == ["metrics", "tracker"]
    assert folder.name == lock["contentHash"].removeprefix("sha256:")[:16]


def _flip(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data, old
    path.write_bytes(data.replace(old, new, 1))


@pytest.mark.parametrize(
    ("file", "old", "new", "why"),
    [
        ("SKILL.md", b"# Metrics digest", b"# Metrics digesT", "content hash"),
        ("SKILL.md", b"window_days", b"window_dayz", "content hash"),
        ("lock.json", b'"version":"1.0.0"', b'"version":"9.0.0"', "lock.json"),
        ("SKILL.md.sig", b'"version":"1.0.0"', b'"version":"9.0.0"', "signature"),
        ("SKILL.md.sig", b'"name":"metrics-digest"', b'"name":"metrics-digesT"', "signature"),
        ("code-pins.json", b'"driver":"tracker"', b'"driver":"trackeR"', "code-pins.json"),
        (
            "SKILL.md",
            b"flightdeck-code-pins: sha256:",
            b"flightdeck-code-pins: sha256:0",
            "content",
        ),
    ],
)
def test_the_independent_verifier_refuses_a_changed_byte(
    frozen: tuple[Path, Path], file: str, old: bytes, new: bytes, why: str
) -> None:
    folder, plan = frozen
    _flip(folder / file, old, new)
    with pytest.raises(Refused, match=why):
        verify_version(folder, plan)
    # ... and so does flightdeck, with a code.
    proc = run("verify", str(folder), "--format", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"].startswith("verify.")


def test_the_independent_verifier_sees_changed_driver_code(frozen: tuple[Path, Path]) -> None:
    folder, plan = frozen
    module = plan / "packages" / "localtracker" / "__init__.py"
    module.write_bytes(module.read_bytes() + b"\n")
    with pytest.raises(Refused, match="code pin of tracker"):
        verify_version(folder, plan)
