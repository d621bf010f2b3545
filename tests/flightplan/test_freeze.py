"""Freeze: order of checks, lock contents, reproducibility, the store."""

from __future__ import annotations

import os
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from flightdeck.documents import DocumentKind, load_document, parse_document
from flightdeck.flightplan import (
    FlightPlanError,
    KeyPair,
    Lock,
    SkillStore,
    content_hash,
    freeze_plan,
    verify_plan,
)
from flightdeck.flightplan._emit import emit_skill
from tests.flightplan._code import FakeCode
from tests.flightplan._plans import example_body, example_data

PINNED = "registry.example.com/base@sha256:" + "ab" * 32


class _Resolver:
    def __init__(self, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def resolve(self, ref: str) -> str | None:
        self.asked.append(ref)
        return self.answer


def _write(tmp_path: Path, data: dict[str, Any], name: str = "SKILL.md") -> Path:
    path = tmp_path / "src" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(emit_skill(data, example_body()), encoding="utf-8")
    return path


def _with_tool_step(image: str | None = None) -> dict[str, Any]:
    data = example_data()
    if image:
        data["aileron"]["environment"]["image"] = image
    data["aileron"]["steps"].insert(
        2,
        {
            "id": "archive",
            "kind": "tool",
            "command": ["aws", "s3", "cp", "digest.csv", "s3://bucket/"],
            "bindings": {"csv": "steps.render_csv.csv"},
            "outputs": ["receipt"],
            "trustContract": {
                "credential": {"kind": "aws-sigv4", "placement": "signing"},
                "hosts": ["s3.amazonaws.com", "bucket.s3.amazonaws.com"],
                "effect": "write",
                "idempotency": {"safeToRetry": True},
                "audit": {"fields": ["network-target", "result"]},
            },
        },
    )
    return data


def test_freeze_writes_lock_hash_and_store_files(example_file: Path, keys: KeyPair) -> None:
    outcome = freeze_plan(
        example_file,
        signing_key=keys.private_path,
        publisher="github://acme/digests",
        version="1.0.0",
    )
    assert outcome.created
    folder = outcome.stored.path
    assert folder == SkillStore().root / "weekly-metrics-digest" / "versions" / folder.name
    assert folder.name == outcome.frozen.content_hash[7:23]
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["SKILL.md", "SKILL.md.sig", "lock.json", "meta.json", "signer.pub.pem"]
    document = parse_document((folder / "SKILL.md").read_text()).document
    assert document is not None
    lock = document.data["aileron"]["lock"]
    assert lock["publisher"] == "github://acme/digests"
    assert lock["version"] == "1.0.0"
    assert lock["resolvedCapabilitySet"] == ["aws-cli@2.22.4"]  # Aileron's string form
    assert lock["contentHash"] == content_hash(document.data, document.body)
    assert document.body == example_body()


def test_seed003_freeze_resolves_image_and_seals_tool_step_trust(
    tmp_path: Path, keys: KeyPair
) -> None:
    resolver = _Resolver(PINNED)
    path = _write(tmp_path, _with_tool_step(image="registry.example.com/base:1.2"))
    outcome = freeze_plan(path, signing_key=keys.private_path, resolver=resolver)
    lock = outcome.frozen.lock
    assert resolver.asked == ["registry.example.com/base:1.2"]
    # Aileron's form: the bare digest; the name is the one `ref` gives.
    assert lock["resolvedImages"] == [
        {"ref": "registry.example.com/base:1.2", "digest": "sha256:" + "ab" * 32}
    ]
    assert lock["stepTrust"] == {
        "archive": {"hosts": ["s3.amazonaws.com", "bucket.s3.amazonaws.com"]}
    }
    verified = verify_plan(outcome.stored.path)
    assert [image.pinned for image in verified.lock.resolved_images] == [PINNED]
    assert verified.lock.step_trust == {"archive": ("s3.amazonaws.com", "bucket.s3.amazonaws.com")}


def test_pinned_image_is_kept_without_a_resolver(tmp_path: Path, keys: KeyPair) -> None:
    path = _write(tmp_path, _with_tool_step(image=PINNED))
    outcome = freeze_plan(path, signing_key=keys.private_path)
    assert outcome.frozen.lock["resolvedImages"] == [{"ref": PINNED, "digest": PINNED[-71:]}]


def test_resolver_without_digest_is_a_hard_error(tmp_path: Path, keys: KeyPair) -> None:
    path = _write(tmp_path, _with_tool_step(image="registry.example.com/base:1.2"))
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(path, signing_key=keys.private_path, resolver=_Resolver(None))
    assert caught.value.code == "freeze.image_unresolved"
    assert not SkillStore().list()


def test_lint_error_stops_freeze_before_resolution(tmp_path: Path, keys: KeyPair) -> None:
    data = _with_tool_step(image="registry.example.com/base:1.2")
    data["aileron"]["steps"][0]["args"]["as_of"] = "inputs.nope"
    resolver = _Resolver(PINNED)
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(_write(tmp_path, data), signing_key=keys.private_path, resolver=resolver)
    assert caught.value.code == "freeze.invalid_plan"
    assert [d.code for d in caught.value.diagnostics] == ["flightplan.unknown_input"]
    assert caught.value.diagnostics[0].line is not None
    assert resolver.asked == []


def test_freeze_is_reproducible_byte_for_byte(
    example_file: Path, keys: KeyPair, tmp_path: Path
) -> None:
    """Same input and key give identical files (Ed25519 is deterministic)."""
    a = freeze_plan(example_file, signing_key=keys.private_path, store=SkillStore(tmp_path / "a"))
    b = freeze_plan(example_file, signing_key=keys.private_path, store=SkillStore(tmp_path / "b"))
    for name in ("SKILL.md", "SKILL.md.sig", "lock.json", "signer.pub.pem"):
        assert (a.stored.path / name).read_bytes() == (b.stored.path / name).read_bytes()


def test_refreezing_identical_content_is_a_noop(example_file: Path, keys: KeyPair) -> None:
    first = freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    before = {p.name: p.stat().st_mtime_ns for p in first.stored.path.iterdir()}
    again = freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    assert not again.created
    assert again.stored.path == first.stored.path
    assert {p.name: p.stat().st_mtime_ns for p in again.stored.path.iterdir()} == before
    assert len(SkillStore().list()) == 1


def test_refreezing_identical_content_later_is_still_a_noop(
    example_file: Path, keys: KeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The signed statement carries its signing time: a re-freeze in another
    # second signs new bytes, and that must still be the stored version
    # (the first signature kept), not a version conflict.
    import flightdeck.flightplan._freeze as freeze_module

    monkeypatch.setattr(freeze_module, "signing_time", lambda: "2026-01-01T00:00:00Z")
    first = freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    signature = (first.stored.path / "SKILL.md.sig").read_bytes()
    monkeypatch.setattr(freeze_module, "signing_time", lambda: "2026-01-02T00:00:00Z")
    again = freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    assert not again.created and again.stored.path == first.stored.path
    assert (first.stored.path / "SKILL.md.sig").read_bytes() == signature


def test_different_content_under_an_existing_version_is_refused(
    tmp_path: Path, example_file: Path, keys: KeyPair
) -> None:
    freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    data = example_data()
    data["description"] = "A changed description."
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(_write(tmp_path, data), signing_key=keys.private_path, version="1.0.0")
    assert caught.value.code == "store.version_conflict"
    outcome = freeze_plan(_write(tmp_path, data), signing_key=keys.private_path, version="1.1.0")
    assert outcome.created


def test_same_content_signed_by_another_key_is_refused(
    example_file: Path, keys: KeyPair, other_keys: KeyPair
) -> None:
    freeze_plan(example_file, signing_key=keys.private_path)
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(example_file, signing_key=other_keys.private_path)
    assert caught.value.code == "store.version_conflict"


def test_store_leaves_no_temporary_directories(example_file: Path, keys: KeyPair) -> None:
    outcome = freeze_plan(example_file, signing_key=keys.private_path)
    siblings = [p.name for p in outcome.stored.path.parent.iterdir()]
    assert siblings == [outcome.stored.path.name]


def test_signing_key_from_environment_as_path_or_pem(
    example_file: Path, keys: KeyPair, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FLIGHTDECK_SIGNING_KEY", str(keys.private_path))
    a = freeze_plan(example_file, store=SkillStore(tmp_path / "a"))
    monkeypatch.setenv("FLIGHTDECK_SIGNING_KEY", keys.private_path.read_text())
    b = freeze_plan(example_file, store=SkillStore(tmp_path / "b"))
    assert a.frozen.signature == b.frozen.signature


def test_missing_signing_key_is_an_error(example_file: Path) -> None:
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(example_file)
    assert caught.value.code == "freeze.no_signing_key"


def test_private_key_file_is_0600(keys: KeyPair) -> None:
    assert os.stat(keys.private_path).st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("option", "value", "code"),
    [
        ("publisher", "gitlab://acme", "freeze.invalid_publisher"),
        ("publisher", "github://", "freeze.invalid_publisher"),
        ("version", "1.0", "freeze.invalid_version"),
        ("version", "v1.0.0", "freeze.invalid_version"),
    ],
)
def test_bad_publisher_or_version_is_refused(
    example_file: Path, keys: KeyPair, option: str, value: str, code: str
) -> None:
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(example_file, signing_key=keys.private_path, **{option: value})
    assert caught.value.code == code


def test_instruction_only_skill_cannot_be_frozen(tmp_path: Path, keys: KeyPair) -> None:
    data = {"name": "plain", "description": "No aileron block."}
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(_write(tmp_path, data), signing_key=keys.private_path)
    assert caught.value.code == "freeze.not_a_flight_plan"


def test_refreezing_a_frozen_plan_replaces_its_lock(example_file: Path, keys: KeyPair) -> None:
    first = freeze_plan(example_file, signing_key=keys.private_path, version="1.0.0")
    again = freeze_plan(first.stored.skill_path, signing_key=keys.private_path, version="1.0.0")
    assert again.frozen.content_hash == first.frozen.content_hash
    assert not again.created


def test_yaml_that_looks_typed_round_trips(tmp_path: Path, keys: KeyPair) -> None:
    data = example_data()
    data["aileron"]["inputs"][0]["description"] = "on"
    data["aileron"]["inputs"][1]["description"] = "2026-01-01"
    data["aileron"]["inputs"][2]["description"] = "1.0"
    data["license"] = "yes: no # not a comment"
    typed = {"n": 10**15, "f": 0.1, "t": True, "z": None, "u": "ünï\tcode", "d": "0o17", "x": ".5"}
    data["metadata"] = {"a": "true", "b": "2026-01-01", "c": "007", "d": "0o17", "e": "1e5"}
    data["aileron"]["inputs"].append(
        {"name": "opts", "type": "object", "resolution": {"rule": "literal", "default": typed}}
    )
    source = tmp_path / "typed.md"
    source.write_text(_yaml_text(data))
    outcome = freeze_plan(source, signing_key=keys.private_path)
    document = parse_document(outcome.stored.skill_path.read_text()).document
    assert document is not None
    assert document.data["metadata"] == data["metadata"]
    assert document.data["aileron"]["inputs"][3]["resolution"]["default"] == typed
    assert document.data["aileron"]["inputs"][0]["description"] == "on"


def _yaml_text(data: dict[str, Any]) -> str:
    import json

    # JSON is YAML: an input whose strings are unambiguous whatever the emitter.
    return f"---\n{json.dumps(data, indent=1)}\n---\n{example_body()}"


def test_skills_store_finds_by_label_hash_prefix_and_latest(
    tmp_path: Path, example_file: Path, keys: KeyPair
) -> None:
    one = freeze_plan(example_file, signing_key=keys.private_path, version="1.2.0")
    data = example_data()
    data["description"] = "Second version."
    two = freeze_plan(_write(tmp_path, data), signing_key=keys.private_path, version="1.10.0")
    store = SkillStore()
    assert store.find("weekly-metrics-digest").path == two.stored.path
    assert store.find("weekly-metrics-digest", "1.2.0").path == one.stored.path
    prefix = one.frozen.content_hash[7:15]
    assert store.find("weekly-metrics-digest", prefix).path == one.stored.path
    with pytest.raises(FlightPlanError) as caught:
        store.find("weekly-metrics-digest", "9.9.9")
    assert caught.value.code == "store.not_found"
    # list() orders by freeze time, then hash: two freezes in one second may come either
    # way, so check the content (the old `== [...] or len == 2` only ever checked the length).
    listed = store.list()
    assert len(listed) == 2 and {e.version for e in listed} == {"1.2.0", "1.10.0"}
    assert {e.path for e in listed} == {one.stored.path, two.stored.path}


def test_freeze_refuses_a_tool_version_the_catalog_lacks(tmp_path: Path, keys: KeyPair) -> None:
    """gh@2.19.1 validates (seed 003) but no catalog gh matches it: freeze says so."""
    data = example_data()
    data["aileron"]["environment"]["tools"] = ["gh@2.19.1"]
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(_write(tmp_path, data), signing_key=keys.private_path)
    assert caught.value.code == "freeze.tool_unresolved"
    assert "2.62.0" in (caught.value.hint or "")


def test_lock_reads_capabilities_as_strings_and_as_the_older_objects() -> None:
    from flightdeck.flightplan import Lock

    lock = Lock.read(
        {
            "resolvedCapabilitySet": [
                "aws-cli@2.22.4",
                {"name": "jq", "requested": "1.x", "version": "1.7.1"},
                "no-version",
            ],
            "resolvedImages": [
                {"ref": "base", "digest": "sha256:" + "a" * 64, "localTag": "aileron/t:1"}
            ],
        }
    )
    assert lock is not None
    assert [(c.name, c.version) for c in lock.resolved_capability_set] == [
        ("aws-cli", "2.22.4"),
        ("jq", "1.7.1"),
    ]
    assert lock.resolved_images[0].local_tag == "aileron/t:1"
    assert lock.to_data()["resolvedCapabilitySet"] == ["aws-cli@2.22.4", "jq@1.7.1"]
    assert lock.to_data()["resolvedImages"][0]["localTag"] == "aileron/t:1"


CD, EF = "sha256:" + "cd" * 32, "sha256:" + "ef" * 32


@pytest.mark.parametrize(
    ("ref", "digest", "pinned"),
    [
        # Aileron's bare digest: the repository comes from ref (tag dropped).
        ("registry.example.com/base:1.2", "sha256:" + "ab" * 32, PINNED),
        (
            "localhost:5000/t/base:1",
            "sha256:" + "cd" * 32,
            "localhost:5000/t/base@sha256:" + "cd" * 32,
        ),
        (
            "alpine",
            "sha256:" + "ef" * 32,
            "registry-1.docker.io/library/alpine@sha256:" + "ef" * 32,
        ),
        (PINNED, PINNED[-71:], PINNED),
        # Locks frozen before: the digest already is the pinned reference.
        ("registry.example.com/base:1.2", PINNED, PINNED),
    ],
)
def test_the_pinned_image_launch_pulls(ref: str, digest: str, pinned: str) -> None:
    lock = Lock.read({"resolvedImages": [{"ref": ref, "digest": digest}]})
    assert lock is not None and lock.resolved_images[0].pinned == pinned


def test_freeze_owns_the_code_pins_binding_in_metadata(tmp_path: Path, keys: KeyPair) -> None:
    """A binding in the source (a re-frozen plan) is replaced, never trusted."""
    data = example_data()
    data["metadata"] = {"owner": "ops", "flightdeck-code-pins": "sha256:" + "0" * 64}
    path = _write(tmp_path, data)
    unpinned = freeze_plan(path, signing_key=keys.private_path)
    frozen = load_document(unpinned.stored.path / "SKILL.md", kind=DocumentKind.SKILL).document
    assert frozen is not None and frozen.data["metadata"] == {"owner": "ops"}
    assert not (unpinned.stored.path / "code-pins.json").exists()
    verify_plan(unpinned.stored.path)
    pinned = freeze_plan(path, signing_key=keys.private_path, code=FakeCode())
    raw = (pinned.stored.path / "code-pins.json").read_bytes()
    frozen = load_document(pinned.stored.path / "SKILL.md", kind=DocumentKind.SKILL).document
    assert frozen is not None
    assert frozen.data["metadata"]["flightdeck-code-pins"] == "sha256:" + sha256(raw).hexdigest()
    assert pinned.stored.path != unpinned.stored.path  # the pins are under the content hash
    assert len(verify_plan(pinned.stored.path).lock.code_pins) == 2
    # a map that only held the binding goes away with it: no `metadata: {}`
    data["metadata"] = {"flightdeck-code-pins": "sha256:" + "0" * 64}
    bare = freeze_plan(_write(tmp_path, data), signing_key=keys.private_path)
    frozen = load_document(bare.stored.path / "SKILL.md", kind=DocumentKind.SKILL).document
    assert frozen is not None and "metadata" not in frozen.data


def _with_integer(value: int) -> dict[str, Any]:
    data = example_data()
    default = {"ok": 1, "big": value}
    data["aileron"]["inputs"].append(
        {"name": "opts", "type": "object", "resolution": {"rule": "literal", "default": default}}
    )
    return data


@pytest.mark.parametrize("value", [2**53 - 1, -(2**53) + 1])
def test_integers_within_ijson_range_freeze_and_verify(
    tmp_path: Path, keys: KeyPair, value: int
) -> None:
    """docs/canonical-bytes.md: integers within +-(2^53 - 1) are canonical."""
    source = tmp_path / "big.md"
    source.write_text(_yaml_text(_with_integer(value)))
    outcome = freeze_plan(source, signing_key=keys.private_path)
    verify_plan(outcome.stored.skill_path)
    document = parse_document(outcome.stored.skill_path.read_text()).document
    assert document is not None
    assert document.data["aileron"]["inputs"][-1]["resolution"]["default"]["big"] == value


@pytest.mark.parametrize("value", [2**53, -(2**53), 2**60])
def test_integers_from_2_53_on_are_refused_where_they_are(
    tmp_path: Path, keys: KeyPair, value: int
) -> None:
    """docs/canonical-bytes.md: 2^53 and beyond are refused (I-JSON), with the
    value's place in the file, and nothing is stored."""
    source = tmp_path / "big.md"
    text = _yaml_text(_with_integer(value))
    source.write_text(text)
    with pytest.raises(FlightPlanError) as caught:
        freeze_plan(source, signing_key=keys.private_path)
    assert caught.value.code == "freeze.not_canonicalizable"
    assert "/aileron/inputs/3/resolution/default/big" in caught.value.message
    lines = text.splitlines()
    line = next(n for n, x in enumerate(lines, 1) if '"big"' in x)
    column = lines[line - 1].index('"big"') + 1
    assert caught.value.where == f"{source}:{line}:{column}"
    assert SkillStore().list() == []
