"""One offline registry for every schema; one verdict from the two validators."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flightdeck.documents import _schema_errors, parse_document, validate_data
from flightdeck.io import Err, IODefinitionError, IOHandle, define_io

ROOT = Path(__file__).resolve().parents[2]
AILERON = Path("/work/shared/reference/aileron/weekly-metrics-digest.example.skill.md")
REMOTE = "https://example.com/greet.json"
CALL = (sys.executable, "-m", "flightdeck", "call", "text.stats", "--driver", "textstats-local")
BOM_IMAGE = '    image: "registry.\ufeffexample.com/runner:1.4"\n'

TOOL = """---
name: Greeter
id: greet.hello
description: Says hello to someone by name, for tests of schema references.
version: 1.0.0
inputs:
  $ref: "{ref}"
outputs:
  type: object
---
Body.
"""

# A guard loaded into child processes: any attempt to resolve or connect is
# logged to $FD_NET_LOG and refused.
GUARD = """
import os, socket
def _refuse(*args, **kwargs):
    with open(os.environ["FD_NET_LOG"], "a") as log:
        log.write(repr(args[:2]) + "\\n")
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    attempts: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args[:2])
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    yield attempts
    assert attempts == [], "something tried the network"


def test_remote_ref_in_tool_inputs_is_a_located_diagnostic(no_network: list[Any]) -> None:
    result = parse_document(TOOL.format(ref=REMOTE), path="TOOL.md")
    codes = [(d.code, d.pointer, d.line) for d in result.diagnostics]
    assert ("schema.unresolvable_ref", "/inputs/$ref", 7) in codes
    assert not result.ok


@pytest.mark.parametrize("ref", ["#/$defs/missing", "other.json", "urn:x:y"])
def test_unresolvable_local_or_relative_refs_are_diagnostics(
    no_network: list[Any], ref: str
) -> None:
    result = parse_document(TOOL.format(ref=ref), path="TOOL.md")
    assert "schema.unresolvable_ref" in [d.code for d in result.diagnostics]


def test_local_and_shipped_refs_resolve(no_network: list[Any]) -> None:
    text = TOOL.format(ref="#/$defs/who").replace(
        "outputs:", "  $defs:\n    who: { type: object }\noutputs:"
    )
    assert parse_document(text, path="TOOL.md").ok
    shipped = TOOL.format(ref="https://agentproto.sh/docs/aip-27/REF.schema.json")
    assert parse_document(shipped, path="TOOL.md").ok


def test_define_io_refuses_a_remote_ref(no_network: list[Any]) -> None:
    with pytest.raises(IODefinitionError, match=r"schema\.unresolvable_ref"):
        define_io({"inputs": {"$ref": REMOTE}})


def test_a_remote_ref_at_run_time_is_an_error_value_not_a_fetch(no_network: list[Any]) -> None:
    handle = IOHandle(inputs={"$ref": REMOTE})  # built directly: define_io's check is skipped
    result = handle.validate_input({"name": "x"})
    assert isinstance(result, Err) and "does not resolve offline" in str(result)


def test_flightdeck_call_with_a_remote_ref_never_touches_the_network(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(ROOT / "examples" / "drivers", workspace)
    tool = workspace / ".tools" / "text-stats" / "TOOL.md"
    text = tool.read_text("utf-8")
    start, end = text.index("\ninputs:"), text.index("\noutputs:")
    tool.write_text(text[:start] + f'\ninputs:\n  $ref: "{REMOTE}"' + text[end:], "utf-8")
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(GUARD, "utf-8")
    log = tmp_path / "net.log"
    log.write_text("", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(guard), "FD_NET_LOG": str(log)}
    done = subprocess.run(
        [*CALL, "--workspace", str(workspace), "--input", '{"text": "a b"}'],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 1
    assert "schema.unresolvable_ref" in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
    assert log.read_text("utf-8") == ""


def test_the_guard_itself_sees_a_connection(tmp_path: Path) -> None:
    # The guard must be able to fail: a child that connects is logged.
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(GUARD, "utf-8")
    log = tmp_path / "net.log"
    log.write_text("", "utf-8")
    env = {**os.environ, "PYTHONPATH": str(guard), "FD_NET_LOG": str(log)}
    code = "import socket\ntry: socket.create_connection(('192.0.2.1', 80))\nexcept OSError: pass"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    assert log.read_text("utf-8") != ""


@pytest.mark.skipif(not AILERON.exists(), reason="the shared aileron example is not present")
def test_ecma_whitespace_in_a_pattern_is_one_verdict() -> None:
    text = AILERON.read_text("utf-8")
    bad = text.replace("  environment:\n", "  environment:\n" + BOM_IMAGE, 1)
    good = bad.replace("\ufeff", "")
    result = parse_document(bad, path=AILERON, kind="skill")
    found = [(d.code, d.pointer) for d in result.diagnostics]
    assert ("schema.pattern", "/aileron/environment/image") in found
    assert parse_document(good, path=AILERON, kind="skill").ok


def test_fast_verdict_without_an_explanation_still_gets_a_located_diagnostic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_schema_errors, "schema_diagnostics", lambda name, data: [])
    data = {"schema": "action/v1", "id": "a:b", "description": "x", "risk_level": "nope"}
    diags = validate_data("action", data)
    assert diags and all(d.code == "schema.invalid" for d in diags)
    assert any(d.pointer == "/risk_level" for d in diags)


@pytest.mark.parametrize(
    "value,ok", [("local:./a.md", True), ("ws://docs/a", True), ({"kind": "url"}, True), (3, False)]
)
def test_the_aip27_stand_in_checks_the_outer_shape(value: object, ok: bool) -> None:
    handle = define_io({"inputs": {"$ref": "https://agentproto.sh/docs/aip-27/REF.schema.json"}})
    assert isinstance(handle.validate_input(value), Err) is not ok


def test_define_io_patterns_are_ecma() -> None:
    handle = define_io({"inputs": {"type": "string", "pattern": "^[^\\s]+$"}})
    assert isinstance(handle.validate_input("a\ufeffb"), Err)
    assert not isinstance(handle.validate_input("ab"), Err)


@pytest.mark.parametrize(
    "key", ['"\\x24ref"', '"\\u0024ref"', '"$\\x72ef"', '"\\x24dynamicRef"', "'$ref'"]
)
def test_a_ref_key_written_with_an_escape_or_quotes_is_still_checked(
    no_network: list[Any], key: str
) -> None:
    # The loader skips the walk for refs when the text holds no `$ref`,
    # `$dynamicRef` nor backslash; a key spelt with escapes must still be seen.
    text = TOOL.format(ref="#/$defs/missing").replace("  $ref:", f"  {key}:")
    result = parse_document(text, path="TOOL.md")
    assert "schema.unresolvable_ref" in [d.code for d in result.diagnostics], text


def test_the_ref_shortcut_gives_the_walk_verdict_over_the_corpus() -> None:
    from flightdeck.documents import _load
    from flightdeck.documents._frontmatter import normalise, split

    for path in sorted((ROOT / "tests" / "data" / "corpus").rglob("*.md")):
        result = parse_document(path.read_bytes(), path=path)
        if result.document is None:
            continue
        text = split(normalise(path.read_text("utf-8"))).frontmatter
        document = result.document
        full = _load._ref_diagnostics(document.kind, document.data, "$ref")  # always walks
        assert _load._ref_diagnostics(document.kind, document.data, text) == full, path
