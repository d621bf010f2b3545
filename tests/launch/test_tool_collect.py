"""What a tool step leaves in its collect folder is read without recursion.

A tool controls its output tree. Nested 1,500 deep, the old collector's
`os.walk` raised RecursionError out of the step, and the temporary folder's
own clean-up (which recurses too) left `/tmp/fd-tool-*` behind. Now the
step fails with `tool.output_too_deep` and the folder is gone.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from flightdeck.launch import StepSettings
from flightdeck.launch.sandbox._tool_step import COLLECT_DEPTH

from .conftest import Harness
from .test_tool_step import _tool_plan, needs_bwrap

NEST = """
import os
fd = os.open('/flightdeck/out', os.O_RDONLY)
for _ in range({depth}):
    os.mkdir('d', dir_fd=fd)
    inner = os.open('d', os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = inner
with open(os.open('leaf.txt', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), 'w') as f:
    f.write('deep')
with open('/flightdeck/out/report.txt', 'w') as f:
    f.write('top')
os.symlink('/etc', '/flightdeck/out/etc-link')
# a name the clean-up itself uses for the folders it lifts
os.makedirs('/flightdeck/out/.fd-rm-1/y/z')
"""


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.parametrize("sandbox", [pytest.param(True, marks=needs_bwrap), False])
def test_output_nested_past_the_limit_is_refused_and_cleaned_up(
    harness: Harness, tmp_path: Path, scratch: Path, sandbox: bool
) -> None:
    plan = _tool_plan(tmp_path, ["python3", "-c", NEST.format(depth=1500)])
    result = harness.run(plan, settings=StepSettings(no_sandbox=not sandbox))
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "tool.output_too_deep", result.error
    assert list(scratch.iterdir()) == []


def test_output_as_deep_as_allowed_is_collected(
    harness: Harness, tmp_path: Path, scratch: Path
) -> None:
    plan = _tool_plan(tmp_path, ["python3", "-c", NEST.format(depth=COLLECT_DEPTH)])
    result = harness.run(plan, settings=StepSettings(no_sandbox=True))
    assert result.status == "completed", result.error
    assert (tmp_path / "out" / "report.txt").read_text() == "top"
    record = harness.records("launch.tool_network")[-1]
    assert record["skipped"] == ["etc-link"]  # a link to a folder is listed, not entered
    assert list(scratch.iterdir()) == []
