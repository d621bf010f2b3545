"""Bad input never produces a traceback: every command, run as a process.

Each case runs `flightdeck` the way a user would, with one bad input (a
missing, binary or non-UTF-8 file, a folder where a file belongs, a broken
link, malformed JSON, a wrong kind of manifest, a damaged FLIGHTDECK_HOME, an
invalid key, an unknown id, an out-of-range number), and checks the exit
status (1 refused or invalid, 2 usage error), that no "Traceback" is printed
and that the message names the problem by its code.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from flightdeck.flightplan import generate_keys
from flightdeck.launch import Journal
from tests.cli._run import FLIGHTDECK

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

Damage = Callable[[Path], None]


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`flightdeck ARGS` with stdin closed (the agent must not wait for a host)."""
    return subprocess.run(
        [str(FLIGHTDECK), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    exit_code: int
    expect: tuple[str, ...]  # each must appear in stdout + stderr
    damage: Damage | None = None  # breaks FLIGHTDECK_HOME before the run
    env: dict[str, str] = field(default_factory=dict)
    json_error: str | None = None  # stdout is JSON whose error code is this


# --- a damaged FLIGHTDECK_HOME ----------------------------------------------


def _home_is_a_file(home: Path) -> None:
    shutil.rmtree(home)
    home.write_text("not a folder\n")


def _home_is_a_broken_link(home: Path) -> None:
    shutil.rmtree(home)
    home.symlink_to(home.parent / "nowhere" / "home")


def _data_is_a_file(home: Path) -> None:
    home.mkdir(exist_ok=True)
    (home / "data").write_text("not a folder\n")


def _garbage(name: str) -> Damage:
    def damage(home: Path) -> None:
        (home / "data").mkdir(parents=True, exist_ok=True)
        (home / "data" / name).write_bytes(b"\x00garbage, not SQLite\xff" * 300)

    return damage


def _keyring(text: str) -> Damage:
    def damage(home: Path) -> None:
        (home / "data").mkdir(parents=True, exist_ok=True)
        (home / "data" / "keyring.json").write_text(text)

    return damage


def _deep_config_toml(home: Path) -> None:
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text("a = " + "[" * 100_000)


def _deep_journal_row(home: Path) -> None:
    journal = Journal(home / "data" / "runs.sqlite3")
    journal.create_run(
        "run-deep",
        plan_name="p",
        plan_path="p/SKILL.md",
        content_hash=None,
        launch_time="2026-01-01T00:00:00Z",
        inputs={},
        options={},
    )
    journal.close()
    with sqlite3.connect(home / "data" / "runs.sqlite3") as conn:
        conn.execute("UPDATE runs SET inputs = ?", ("[" * 100_000,))
    conn.close()


def _versions_is_a_file(home: Path) -> None:
    folder = home / "data" / "skills" / "weekly"
    folder.mkdir(parents=True)
    (folder / "versions").write_text("not a folder\n")


def _bad_config_toml(home: Path) -> None:
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text("x = = [\n")


# --- fixtures: one folder of bad inputs, shared by every case ---------------


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bad-inputs")
    (root / "adir").mkdir()
    (root / "binary.md").write_bytes(bytes(range(256)) * 4)
    (root / "badutf8.md").write_bytes(b"---\nname: caf\xe9\n---\n")
    (root / "bad.json").write_text("{not json")
    # JSON and TOML nested past the decoders' recursion limit (a RecursionError)
    (root / "deep.json").write_text("[" * 100_000)
    (root / "deep-approvals.json").write_text('{"*": ' + "[" * 100_000)
    (root / "garbage.key").write_text("garbage\n")
    (root / "broken_link").symlink_to(root / "nowhere" / "target")
    for kind in ("TOOL", "ACTION"):
        src = {"TOOL": "drivers/.tools/text-stats", "ACTION": "workspace/.actions/notes-append"}
        shutil.copy(EXAMPLES / src[kind] / f"{kind}.md", root / f"{kind}.md")
    (root / "empty").mkdir()
    (root / "empty" / "SKILL.md").write_text("")
    shutil.copytree(EXAMPLES / "flightplans" / "metrics-digest", root / "plan")
    shutil.copytree(EXAMPLES / "drivers", root / "ws")
    (root / "ws" / ".drivers" / "broken").mkdir()
    (root / "ws" / ".drivers" / "broken" / "DRIVER.md").write_bytes(bytes(range(256)))
    (root / "badws").mkdir()
    (root / "badws" / "flightdeck.toml").write_text("this is = = not toml [\n")
    (root / "badws" / ".tools" / "t").mkdir(parents=True)
    shutil.copy(root / "TOOL.md", root / "badws" / ".tools" / "t" / "TOOL.md")
    generate_keys(root / "keys")
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (root / "rsa.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    (root / "rsa.pub").write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return root


SIGNED = ("--signing-key", "keys/flightdeck.key")
PLAN = ("plan/SKILL.md", "--unsigned", "--workspace", "plan")

CASES = [
    # validate / schema
    Case("validate-max-bytes-negative", ("validate", "--max-bytes", "-1", "TOOL.md"), 2,
         ("--max-bytes",)),
    Case("validate-max-depth-zero", ("validate", "--max-depth", "0", "TOOL.md"), 2,
         ("--max-depth",)),
    Case("validate-invalid-workspace-toml", ("validate", "badws"), 1,
         ("flightdeck.toml", "config.invalid")),
    Case("inspect-invalid-workspace-toml", ("inspect", "badws/.tools/t"), 1,
         ("flightdeck.toml", "config.invalid")),
    Case("validate-folder-without-manifests", ("validate", "adir"), 0, ("no manifests found",)),
    Case("schema-unknown", ("schema", "nope"), 2, ("unknown schema",)),
    # lock
    Case("lock-check-without-lock", ("lock", "check", "--workspace", "adir"), 1,
         ("lock.missing", "flightdeck lock create")),
    Case("lock-create-missing-workspace", ("lock", "create", "--workspace", "nope"), 2,
         ("--workspace",)),
    Case("lock-create-invalid-workspace-toml", ("lock", "create", "--workspace", "badws"), 1,
         ("config.invalid", "flightdeck.toml")),
    # inspect / lint / graph
    Case("lint-directory", ("lint", "adir"), 1, ("document.unreadable",)),
    Case("graph-tool-md", ("graph", "TOOL.md"), 1,
         ("not a valid Flight Plan", "schema.unknown_field")),
    Case("graph-action-md", ("graph", "ACTION.md"), 1, ("not a valid Flight Plan",)),
    Case("graph-empty", ("graph", "empty/SKILL.md"), 1, ("document.no_frontmatter",)),
    Case("graph-binary", ("graph", "binary.md"), 1, ("document.binary",)),
    Case("graph-out-in-missing-folder",
         ("graph", "plan/SKILL.md", "--out", "nowhere/plan.mmd"), 1, ("graph.unwritable",)),
    # freeze
    Case("freeze-tool-md", ("freeze", "TOOL.md", *SIGNED), 1, ("freeze.invalid_plan",)),
    Case("freeze-rsa-key", ("freeze", "plan/SKILL.md", "--signing-key", "rsa.pem"), 1,
         ("RSA, not Ed25519", "freeze.signing_key_invalid")),
    Case("freeze-garbage-key", ("freeze", "plan/SKILL.md", "--signing-key", "garbage.key"), 1,
         ("not a PEM private key", "freeze.signing_key_invalid")),
    Case("freeze-env-key-missing-path", ("freeze", "plan/SKILL.md"), 1,
         ("FLIGHTDECK_SIGNING_KEY", "freeze.signing_key_unreadable"),
         env={"FLIGHTDECK_SIGNING_KEY": "no/such/key.pem"}),
    Case("freeze-publisher-not-url",
         ("freeze", "plan/SKILL.md", *SIGNED, "--publisher", "notaurl"), 1,
         ("freeze.invalid_publisher",)),
    Case("freeze-version-not-semver",
         ("freeze", "plan/SKILL.md", *SIGNED, "--version", "v1!"), 1,
         ("freeze.invalid_version",)),
    # freeze reads the keyring's revocations before it signs.
    Case("freeze-data-dir-is-a-file",
         ("freeze", "plan/SKILL.md", *SIGNED, "--workspace", "plan"), 1,
         ("keyring.unreadable",), damage=_data_is_a_file),
    Case("freeze-json-tool-md", ("freeze", "TOOL.md", *SIGNED, "--format", "json"), 1,
         (), json_error="freeze.invalid_plan"),
    # verify / skills
    Case("verify-unknown-name", ("verify", "nosuch"), 1, ("store.not_found",)),
    Case("verify-empty-version", ("verify", "weekly@"), 1, ("store.invalid_version",)),
    Case("verify-malformed-version", ("verify", "weekly@@!!"), 1, ("store.invalid_version",)),
    Case("verify-empty-target", ("verify", ""), 1, ("verify.no_target",)),
    Case("verify-broken-link", ("verify", "broken_link"), 1,
         ("broken symbolic link", "verify.not_found")),
    Case("skills-list-versions-is-a-file", ("skills", "list"), 0, ("no frozen skills",),
         damage=_versions_is_a_file),
    # keys / keyring
    Case("keys-out-under-a-file", ("keys", "generate", "--out", "TOOL.md/keys"), 1,
         ("keys.unwritable",)),
    Case("keys-name-with-path", ("keys", "generate", "--out", "k", "--name", "../evil"), 1,
         ("keys.invalid_name",)),
    Case("keyring-trust-rsa", ("keyring", "trust", "github://acme", "--key", "rsa.pub"), 1,
         ("RSA, not Ed25519", "keyring.invalid_key")),
    Case("keyring-trust-garbage", ("keyring", "trust", "github://acme", "--key", "garbage.key"),
         1, ("not a PEM public key", "keyring.invalid_key")),
    Case("keyring-untrust-rsa", ("keyring", "untrust", "github://acme", "--key", "rsa.pub"), 1,
         ("keyring.invalid_key",)),
    Case("keyring-list-wrong-shape", ("keyring", "list"), 1, ("keyring.unreadable",),
         damage=_keyring("[1, 2, 3]")),
    Case("keyring-trust-data-dir-is-a-file",
         ("keyring", "trust", "github://acme", "--key", "keys/flightdeck.pub"), 1,
         ("keyring.unreadable",), damage=_data_is_a_file),
    # call
    Case("call-input-malformed-json", ("call", "text.stats", "--workspace", "ws", "--input",
         "{bad"), 2, ("--input", "not JSON")),
    Case("call-input-missing-file", ("call", "text.stats", "--workspace", "ws", "--input",
         "@missing.json"), 2, ("cannot read missing.json",)),
    Case("call-input-directory", ("call", "text.stats", "--workspace", "ws", "--input",
         "@adir"), 2, ("cannot read adir",)),
    Case("call-input-binary", ("call", "text.stats", "--workspace", "ws", "--input",
         "@binary.md"), 2, ("binary.md is not UTF-8",)),
    Case("call-input-at-alone", ("call", "text.stats", "--workspace", "ws", "--input", "@"),
         2, ("must be followed by a file name",)),
    Case("call-action-md", ("call", "ACTION.md", "--workspace", "ws"), 1,
         ("no_driver", "not a file")),
    Case("call-unknown-tool", ("call", "no.such", "--workspace", "ws"), 1,
         ("call.unknown_tool", "no tool no.such")),
    # drivers
    Case("drivers-show-binary-manifest", ("drivers", "show", "broken", "--workspace", "ws"), 1,
         ("document.binary",)),
    Case("drivers-list-binary-manifest", ("drivers", "list", "--workspace", "ws"), 0,
         ("document.binary",)),
    Case("drivers-show-unknown-json",
         ("drivers", "show", "nodriver", "--workspace", "ws", "--format", "json"), 1, (),
         json_error="no_driver"),
    # launch
    Case("launch-tool-md", ("launch", "TOOL.md", "--unsigned"), 1, ("launch.invalid_plan",)),
    Case("launch-empty-version", ("launch", "weekly@"), 1, ("store.invalid_version",)),
    Case("launch-max-parallel-zero", ("launch", *PLAN, "--max-parallel", "0"), 2,
         ("--max-parallel",)),
    Case("launch-input-not-pair", ("launch", *PLAN, "--input", "novalue"), 2,
         ("expected KEY=VALUE",)),
    Case("launch-out-dir-under-a-file", ("launch", *PLAN, "--out-dir", "TOOL.md/out"), 2,
         ("--out-dir", "cannot create")),
    Case("launch-invalid-workspace-toml", ("launch", "plan/SKILL.md", "--unsigned",
         "--workspace", "badws"), 1, ("config.invalid",)),
    Case("launch-home-is-a-file", ("launch", *PLAN), 1, ("config.toml", "cannot read"),
         damage=_home_is_a_file),
    Case("launch-journal-garbage", ("launch", *PLAN), 1, ("runs.sqlite3", "journal.unusable"),
         damage=_garbage("runs.sqlite3")),
    Case("launch-audit-garbage", ("launch", *PLAN), 1, ("audit.sqlite3", "audit.store_corrupt"),
         damage=_garbage("audit.sqlite3")),
    Case("launch-json-journal-garbage", ("launch", *PLAN, "--format", "json"), 1, (),
         damage=_garbage("runs.sqlite3"), json_error="journal.unusable"),
    # runs
    Case("runs-list-journal-garbage", ("runs", "list"), 1, ("journal.unusable",),
         damage=_garbage("runs.sqlite3")),
    Case("runs-show-data-dir-is-a-file", ("runs", "show", "run-x"), 1, ("journal.unusable",),
         damage=_data_is_a_file),
    Case("runs-show-unknown-json", ("runs", "show", "run-nope", "--format", "json"), 1, (),
         json_error="runs.unknown"),
    Case("runs-show-id-not-utf8", ("runs", "show", "run-\udcff"), 2, ("not valid UTF-8",)),
    # a path that never ends: read up to the limit, never to the end
    Case("validate-dev-zero", ("validate", "/dev/zero"), 1, ("document.too_large",)),
    Case("call-input-dev-zero", ("call", "text.stats", "--workspace", "ws", "--input",
         "@/dev/zero"), 2, ("larger than", "--input")),
    Case("launch-approvals-dev-zero", ("launch", *PLAN, "--approvals", "/dev/zero"), 1,
         ("approval.file_invalid", "larger than")),
    # nested past the decoders' recursion limit
    Case("call-input-nested-too-deep", ("call", "text.stats", "--workspace", "ws", "--input",
         "@deep.json"), 2, ("nested too deep", "--input")),
    Case("launch-approvals-nested-too-deep", ("launch", *PLAN, "--approvals",
         "deep-approvals.json"), 1, ("approval.file_invalid", "nested too deep")),
    Case("launch-accept-nested-too-deep", ("launch", "--resume", "run-x", "--accept",
         "s=" + "[" * 100_000), 2, ("--accept",)),
    Case("config-toml-nested-too-deep", ("config", "show"), 1,
         ("config.toml", "nested too deep"), damage=_deep_config_toml),
    Case("runs-show-journal-row-nested-too-deep", ("runs", "show", "run-deep"), 1,
         ("journal.corrupt",), damage=_deep_journal_row),
    Case("runs-list-journal-row-nested-too-deep", ("runs", "list"), 1,
         ("journal.corrupt",), damage=_deep_journal_row),
    # agent: setup failures are protocol `error` events on stdout
    Case("agent-no-api-key", ("agent", "--json-stream"), 1,
         ('"type":"error"', "config_error", "ANTHROPIC_API_KEY")),
    # an unknown but valid id starts fresh (issue 13); an invalid one cannot
    Case("agent-resume-unknown", ("agent", "--json-stream", "--resume", "../nosuch"), 1,
         ('"type":"error"', "invalid session id"), env={"ANTHROPIC_API_KEY": "x"}),
    Case("agent-workspace-is-a-file", ("agent", "--json-stream", "--workspace", "TOOL.md"), 1,
         ('"type":"error"', "not a directory"), env={"ANTHROPIC_API_KEY": "x"}),
    Case("agent-home-is-a-file", ("agent", "--json-stream"), 1,
         ('"type":"error"', "cannot read"), damage=_home_is_a_file,
         env={"ANTHROPIC_API_KEY": "x"}),
    Case("agent-config-toml-invalid", ("agent", "--json-stream"), 1,
         ('"type":"error"', "config.toml"), damage=_bad_config_toml,
         env={"ANTHROPIC_API_KEY": "x"}),
    Case("agent-data-dir-is-a-file", ("agent", "--json-stream"), 1,
         ('"type":"error"', "session store"), damage=_data_is_a_file,
         env={"ANTHROPIC_API_KEY": "x"}),
    Case("agent-resume-id-not-utf8", ("agent", "--json-stream", "--resume", "\udcff"), 1,
         ('"type":"error"', "invalid session id"), env={"ANTHROPIC_API_KEY": "x"}),
    Case("launch-resume-id-not-utf8", ("launch", "--resume", "\udcff"), 2,
         ("not valid UTF-8",)),
    # sessions
    Case("agent-home-is-a-broken-link", ("agent", "--json-stream"), 1,
         ('"type":"error"', "session store"), damage=_home_is_a_broken_link,
         env={"ANTHROPIC_API_KEY": "x"}),
    Case("sessions-rm-latest-without-sessions", ("sessions", "rm", "latest"), 1,
         ("no sessions yet",)),
    Case("sessions-show-unknown", ("sessions", "show", "nosuch"), 1, ("not found",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_input_is_reported_without_traceback(case: Case, fx: Path, fd_home: Path) -> None:
    if case.damage is not None:
        case.damage(fd_home)
    proc = run(*case.argv, cwd=fx, env=case.env)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    assert proc.returncode == case.exit_code, output
    for text in case.expect:
        assert text in output, output
    if case.json_error is not None:
        assert json.loads(proc.stdout)["error"]["code"] == case.json_error, output


def test_keys_name_with_path_writes_nothing_outside_out(fx: Path) -> None:
    """`keys generate --name ../x` must not write a key outside --out."""
    proc = run("keys", "generate", "--out", "k2", "--name", "../outside", cwd=fx)
    assert proc.returncode == 1 and "keys.invalid_name" in proc.stderr
    assert not (fx / "outside.key").exists() and not (fx / "outside.pub").exists()


def test_runs_show_with_a_damaged_audit_store_names_the_file(fx: Path, fd_home: Path) -> None:
    """A run in the journal, the audit store beside it garbage: an error value."""
    journal = Journal(fd_home / "data" / "runs.sqlite3")
    journal.create_run(
        "run-1",
        plan_name="p",
        plan_path="p/SKILL.md",
        content_hash=None,
        launch_time="2026-01-01T00:00:00Z",
        inputs={},
        options={},
    )
    journal.close()
    _garbage("audit.sqlite3")(fd_home)
    proc = run("runs", "show", "run-1", cwd=fx)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert "audit.sqlite3" in proc.stderr and "audit.store_corrupt" in proc.stderr


def test_launch_input_beyond_safe_integer_is_an_input_error(fx: Path) -> None:
    """Inputs are recorded as canonical JSON: an integer past 2^53-1 is refused
    at resolution, before any step runs, not in the middle of the run."""
    proc = run(
        "launch", *PLAN, "--approve", "all", "--input", "window_days=99999999999999999999999",
        cwd=fx, env={"FLIGHTDECK_SECRET_TRACKER": "x"},
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    assert proc.returncode == 1, output
    assert "input.invalid" in output and "window_days" in output


def test_launch_output_that_cannot_be_written_fails_the_run_by_name(fx: Path) -> None:
    """A declared output whose file cannot be written fails the run with
    `output.unwritable` naming it (here: a folder sits where the file goes)."""
    out = fx / "blocked-out"
    (out / "digest.csv").mkdir(parents=True)
    proc = run(
        "launch", *PLAN, "--approve", "all", "--out-dir", str(out),
        cwd=fx, env={"FLIGHTDECK_SECRET_TRACKER": "x"},
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    assert proc.returncode == 1, output
    assert "output.unwritable" in output and "digest.csv" in output
