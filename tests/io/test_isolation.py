"""AIP-16 security: the body runs under the host's isolation layer (its _workflowFsRoot)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from flightdeck.audit import MemoryAuditSink
from flightdeck.guard import Policy, Refused, active, layers
from flightdeck.io import (
    FileContractError,
    arun_with_file_contract,
    define_io,
    run_with_file_contract,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "in.txt").write_text("hello")
    (root / "docs" / "undeclared.txt").write_text("not staged")
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text("s3cret")
    return path


@pytest.fixture
def no_layer_left() -> Iterator[None]:
    yield
    assert layers() == ()


IO = define_io(
    {
        "inputsFiles": {"src": {"path": "docs/in.txt"}},
        "outputsFiles": {"out": {"path": "out/<runId>.txt"}},
    }
)


def _denials(sink: MemoryAuditSink, run_id: str) -> list[dict[str, Any]]:
    return [r.fields for r in sink.records(run_id=run_id, kind="io.access_denied")]


def test_aip16_body_reads_and_writes_inside_its_fs_root(ws: Path, no_layer_left: None) -> None:
    def body(value: dict[str, Any]) -> str:
        root = Path(value["_workflowFsRoot"])
        (root / "tmp").mkdir()
        (root / "tmp" / "draft").write_text((root / "src").read_text().upper())
        (root / "tmp" / "draft").rename(root / "out")
        return ",".join(sorted(p.name for p in root.iterdir()))

    sink = MemoryAuditSink()
    result = run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="r", audit=sink)
    assert result.output == "out,src,tmp"
    assert (ws / "out" / "r.txt").read_text() == "HELLO"
    assert [r.kind for r in sink.records(run_id="r")] == ["io.stage", "io.sync"]


def test_aip16_a_write_outside_the_fs_root_is_denied_and_fails_the_run(
    ws: Path, secret: Path, no_layer_left: None
) -> None:
    """The refusal raises in the body; a body that lets it through fails the run."""

    def body(value: dict[str, Any]) -> None:
        (Path(value["_workflowFsRoot"]) / "out").write_text("partial")
        secret.write_text("overwritten")

    sink = MemoryAuditSink()
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="w", audit=sink)
    assert info.value.code == "io.body_failed"
    assert isinstance(info.value.__cause__, Refused)
    assert f"open {secret} for writing is outside the isolation layer" in info.value.message
    assert secret.read_text() == "s3cret"
    assert not (ws / "out").exists()  # a failed run syncs nothing
    kinds = [r.kind for r in sink.records(run_id="w")]
    assert kinds == ["io.stage", "io.access_denied", "io.run_failed"]
    assert _denials(sink, "w") == [
        {
            "unit_id": "u",
            "operation": "open",
            "access": "write",
            "path": str(secret),
            "resolved": str(secret.resolve()),
            "detail": f"open {secret} for writing",
        }
    ]


def test_aip16_reads_outside_the_fs_root_are_denied_even_in_the_workspace(
    ws: Path, secret: Path
) -> None:
    """Only the staged copy is readable: not the workspace, not undeclared files."""
    seen: list[str] = []

    def body(value: dict[str, Any]) -> None:
        for path in (secret, ws / "docs" / "undeclared.txt", ws / "docs" / "in.txt"):
            try:
                path.read_text()
            except PermissionError:
                seen.append(path.name)

    sink = MemoryAuditSink()
    run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="r", audit=sink)
    assert seen == ["secret.txt", "undeclared.txt", "in.txt"]
    assert [(d["operation"], d["access"]) for d in _denials(sink, "r")] == [("open", "read")] * 3


def test_aip16_a_symlink_in_the_fs_root_pointing_outside_is_denied(ws: Path, secret: Path) -> None:
    def body(value: dict[str, Any]) -> str:
        link = Path(value["_workflowFsRoot"]) / "link"
        link.symlink_to(secret)  # making the link is a write inside the root...
        try:
            return link.read_text()  # ...following it is a read outside
        except PermissionError as exc:
            return type(exc).__name__

    sink = MemoryAuditSink()
    result = run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="s", audit=sink)
    assert result.output == "Refused"
    [denial] = _denials(sink, "s")
    assert denial["path"].endswith("/link") and denial["resolved"] == str(secret.resolve())


def test_aip16_a_lazily_imported_stdlib_module_still_works_in_the_body(ws: Path) -> None:
    sys.modules.pop("colorsys", None)

    def body(value: dict[str, Any]) -> float:
        import colorsys  # imported for the first time under the isolation layer

        return colorsys.rgb_to_hls(0.0, 0.0, 1.0)[0]

    sink = MemoryAuditSink()
    result = run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="i", audit=sink)
    assert result.output == pytest.approx(2 / 3)
    assert _denials(sink, "i") == []


def test_aip16_subprocesses_from_the_body_are_refused(ws: Path) -> None:
    """A child process is beyond the in-process layer, so it is refused."""

    def body(value: dict[str, Any]) -> None:
        subprocess.run([sys.executable, "-c", "pass"], check=True)

    sink = MemoryAuditSink()
    with pytest.raises(FileContractError) as info:
        run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="p", audit=sink)
    assert isinstance(info.value.__cause__, Refused)
    assert [d["operation"] for d in _denials(sink, "p")] == ["subprocess"]


def test_aip16_concurrent_runs_are_each_confined_to_their_own_root(ws: Path) -> None:
    """Two bodies running at once: each reads its own root, neither the other's."""
    roots: dict[int, Path] = {}
    both_started = threading.Barrier(2, timeout=30)

    def body_for(i: int) -> Any:
        def body(value: dict[str, Any]) -> dict[str, str]:
            roots[i] = Path(value["_workflowFsRoot"])
            both_started.wait()  # both layers are active from here on
            other = roots[1 - i]
            (roots[i] / "out").write_text(f"run {i}")
            try:
                (other / "src").read_text()
                verdict = "read the other root"
            except PermissionError:
                verdict = "refused"
            return {"own": (roots[i] / "src").read_text(), "other": verdict}

        return body

    sink = MemoryAuditSink()

    def one(i: int) -> Any:
        return run_with_file_contract(
            IO, body_for(i), {}, workspace=ws, unit_id="u", run_id=f"c{i}", audit=sink
        )

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, range(2)))
    assert [r.output for r in results] == [{"own": "hello", "other": "refused"}] * 2
    assert [(ws / "out" / f"c{i}.txt").read_text() for i in range(2)] == ["run 0", "run 1"]
    for i in range(2):
        [denial] = _denials(sink, f"c{i}")
        assert denial["path"] == str(roots[1 - i] / "src")


def test_aip16_concurrent_async_runs_are_each_confined(ws: Path, secret: Path) -> None:
    async def body(value: dict[str, Any]) -> str:
        root = Path(value["_workflowFsRoot"])
        await asyncio.sleep(0)  # let the other run's task interleave
        (root / "out").write_text(await asyncio.to_thread((root / "src").read_text))
        try:
            await asyncio.to_thread(secret.read_text)  # to_thread carries the layer
        except PermissionError:
            return "refused"
        return "read the secret"

    async def main() -> list[Any]:
        sink = MemoryAuditSink()
        return await asyncio.gather(
            *(
                arun_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", audit=sink)
                for _ in range(2)
            )
        )

    results = asyncio.run(main())
    assert [r.output for r in results] == ["refused", "refused"]
    assert sorted(p.read_text() for p in (ws / "out").iterdir()) == ["hello", "hello"]


def test_aip16_an_async_body_in_the_sync_host_is_confined(ws: Path, secret: Path) -> None:
    async def body(value: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        secret.write_text("x")

    with pytest.raises(FileContractError) as info:
        run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", audit=MemoryAuditSink())
    assert isinstance(info.value.__cause__, Refused)
    assert secret.read_text() == "s3cret"


def test_aip16_the_layer_nests_inside_another_guard_layer(
    ws: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host running inside, say, a launch step's contract: every layer must allow."""

    def fake_lookup(host: Any, *args: Any) -> list[Any]:
        sys.audit("socket.getaddrinfo", host, 443, 0, 0, 0)
        return []

    monkeypatch.setattr(socket, "getaddrinfo", fake_lookup)
    step = Policy.allow_hosts(["api.example.com"], owner="egress denied", limit="hosts")
    verdicts: list[str] = []

    def body(value: dict[str, Any]) -> None:
        for attempt in (
            lambda: socket.getaddrinfo("api.example.com", 443),
            lambda: socket.getaddrinfo("exfil.example.net", 443),
            secret.read_text,
        ):
            try:
                attempt()
                verdicts.append("ok")
            except Refused as exc:
                verdicts.append(exc.policy.owner)

    sink = MemoryAuditSink()
    with active(step):
        run_with_file_contract(IO, body, {}, workspace=ws, unit_id="u", run_id="n", audit=sink)
        assert layers() == (step,)  # the body's layer is gone, the step's stays
    assert verdicts == ["ok", "egress denied", "io body u"]
    assert [e.target for e in step.denied] == ["exfil.example.net"]
    assert [d["path"] for d in _denials(sink, "n")] == [str(secret)]
