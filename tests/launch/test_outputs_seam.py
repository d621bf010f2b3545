"""Outputs materialization and the llm-seam."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flightdeck.flightplan import Output
from flightdeck.launch import LaunchError
from flightdeck.launch.engine._outputs import confined_path, materialize
from flightdeck.llm import ScriptedProvider

from .conftest import Harness, write_plan


def _out(
    name: str = "o.txt",
    mime: str = "text/plain",
    target: str = "file",
    path: str | None = "o.txt",
    encoding: str = "utf-8",
) -> Output:
    return Output(0, name, mime, encoding, target, path)


def test_file_map_entry_is_materialized(tmp_path: Path) -> None:
    """Seed 003: a step returns {path, mimeType, encoding, content} entries."""
    entry = {"path": "o.txt", "mimeType": "text/plain", "encoding": "utf-8", "content": "hi"}
    made = materialize(_out(), [entry], tmp_path)
    assert (tmp_path / "o.txt").read_text() == "hi"
    assert made.record["bytes"] == 2 and made.record["mime_type"] == "text/plain"


def test_mime_mismatch_fails_the_output(tmp_path: Path) -> None:
    """Issue 6: a mime type that differs from the declaration fails the output."""
    entry = {"path": "o.txt", "mimeType": "text/html", "encoding": "utf-8", "content": "hi"}
    with pytest.raises(LaunchError) as caught:
        materialize(_out(), entry, tmp_path)
    assert caught.value.code == "output.mime_mismatch"
    with pytest.raises(LaunchError) as caught:
        materialize(_out(), {"plain": "data"}, tmp_path)
    assert caught.value.code == "output.mime_mismatch"
    with pytest.raises(LaunchError) as caught:
        materialize(_out(mime="application/json"), "not json", tmp_path)
    assert caught.value.code == "output.mime_mismatch"


def test_only_utf8_is_materialized(tmp_path: Path) -> None:
    """Seed 003: v1 implements utf-8 only; base64 is reserved."""
    with pytest.raises(LaunchError) as caught:
        materialize(_out(encoding="base64"), "aGk=", tmp_path)
    assert caught.value.code == "output.encoding_unsupported"
    entry = {"path": "o.txt", "mimeType": "text/plain", "encoding": "base64", "content": "aGk="}
    with pytest.raises(LaunchError) as entry_caught:
        materialize(_out(), entry, tmp_path)
    assert entry_caught.value.code == "output.encoding_unsupported"
    assert not (tmp_path / "o.txt").exists()


def test_plain_data_is_canonical_json(tmp_path: Path) -> None:
    made = materialize(
        _out("d.json", "application/json", path="d.json"), {"b": 1, "a": 2}, tmp_path
    )
    assert (tmp_path / "d.json").read_text() == '{"a":2,"b":1}'
    assert made.content == '{"a":2,"b":1}'


def test_target_none_is_kept_in_the_record(tmp_path: Path) -> None:
    made = materialize(_out(target="none", path=None), "kept", tmp_path)
    assert made.record["path"] is None and made.content == "kept"
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("path", ["../x", "/etc/x", "a/../../x", "", "a\\..\\x"])
def test_publish_path_is_confined(tmp_path: Path, path: str) -> None:
    """Issue 6: publish.target file writes under --out-dir, confined."""
    with pytest.raises(LaunchError) as caught:
        confined_path(tmp_path, path)
    assert caught.value.code == "output.path_escape"


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "out"
    root.mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(LaunchError) as caught:
        confined_path(root, "link/x.txt")
    assert caught.value.code == "output.path_escape" and "symlink" in caught.value.message
    assert list(outside.iterdir()) == []


def test_declared_output_not_produced_fails_naming_it(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: every declared output must be produced or the run fails naming it."""
    plan = write_plan(
        tmp_path,
        inputs=[{"name": "s", "type": "string", "resolution": {"rule": "literal", "default": "x"}}],
        outputs=[
            {
                "name": "never.txt",
                "mimeType": "text/plain",
                "encoding": "utf-8",
                "publish": {"target": "none"},
            }
        ],
        steps=[{"id": "t", "kind": "transform", "bindings": {"s": "inputs.s"}, "outputs": ["o"]}],
    )
    with pytest.raises(LaunchError) as caught:  # refused before anything runs
        harness.run(plan)
    assert caught.value.code == "launch.invalid_plan" and "never.txt" in caught.value.message
    # ... and the runtime itself refuses a run whose materializing step produced nothing
    from flightdeck.flightplan import load_plan
    from flightdeck.launch.engine._audit import AuditRouter
    from flightdeck.launch.engine._conclude import materialize_all
    from flightdeck.launch.engine._scheduler import StepState

    loaded = load_plan(plan).plan
    assert loaded is not None
    with pytest.raises(LaunchError) as caught:
        materialize_all(
            loaded, StepState(), tmp_path, "r", harness.journal, AuditRouter(harness.audit)
        )
    assert caught.value.code == "output.missing" and "never.txt" in caught.value.message


def _seam_plan(tmp_path: Path, **step: Any) -> Path:
    return write_plan(
        tmp_path,
        inputs=[
            {
                "name": "topic",
                "type": "string",
                "resolution": {"rule": "literal", "default": "cats"},
            }
        ],
        outputs=[
            {
                "name": "summary.md",
                "mimeType": "text/markdown",
                "encoding": "utf-8",
                "publish": {"target": "file", "path": "summary.md"},
            }
        ],
        steps=[
            {
                "id": "write",
                "kind": "llm-seam",
                "bindings": {"topic": "inputs.topic"},
                "outputs": ["text"],
                "materializesOutput": "summary.md",
                **step,
            }
        ],
    )


def test_seam_renders_prompt_from_bindings(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: the step's prompt is rendered from its bindings; only llm-seam reaches a model."""
    provider = ScriptedProvider(["# About cats"])
    harness.provider = provider
    result = harness.run(_seam_plan(tmp_path, prompt="Write about {{ topic }}.", model="m1"))
    assert result.status == "completed"
    assert (tmp_path / "out" / "summary.md").read_text() == "# About cats"
    request = provider.requests[0]
    assert request.model == "m1"
    assert request.messages[0].content[0].text == "Write about cats."  # type: ignore[union-attr]
    seam = harness.records("launch.llm_seam")[0]
    assert seam["replayed"] is False and seam["prompt_sha256"].startswith("sha256:")


def test_seam_without_provider_says_how_to_configure(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: with no provider configured the step fails with a message saying how."""
    result = harness.run(_seam_plan(tmp_path))
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "llm.not_configured"
    assert "--llm-provider" in (result.error.hint or "")
    assert "FLIGHTDECK_LLM_PROVIDER" in (result.error.hint or "")


def test_replay_reuses_recorded_seam_outputs(harness: Harness, tmp_path: Path) -> None:
    """Issue 6: --replay RUN_ID reuses the recorded seam outputs of an earlier run."""
    harness.provider = ScriptedProvider(["first answer"])
    plan = _seam_plan(tmp_path)
    first = harness.run(plan)
    harness.provider = ScriptedProvider(["a different answer"])
    replayed = harness.run(plan, replay=first.run_id, out_dir=tmp_path / "again")
    assert replayed.status == "completed" and replayed.run_id != first.run_id
    assert (tmp_path / "again" / "summary.md").read_text() == "first answer"
    assert harness.provider.requests == []  # type: ignore[attr-defined]
    assert harness.records("launch.llm_seam")[-1]["replayed"] is True
    assert harness.records("launch.run")[-1]["replay_of"] == first.run_id
