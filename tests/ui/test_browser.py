"""`flightdeck ui` as a process, and driven in a real browser.

The browser test launches a plan that pauses for approval, opens the URL the
command printed in headless Chromium (Debian's, through Playwright), sees the
pending step, approves it on the run page and watches the run finish without
reloading (server-sent events). Screenshots go to $FLIGHTDECK_TEST_ARTIFACTS
(default: the test's temporary directory).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from ..launch.test_cli_resume import _env, _workspace

FD = str(Path(sys.executable).with_name("flightdeck"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def _serve(env: dict[str, str], *args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    process = subprocess.Popen(
        [FD, "ui", "--no-open", "--port", "0", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.search(r"http://\S+", line)
        assert match, f"no URL printed: {line!r} {process.stderr.read() if process.stderr else ''}"
        yield process, match.group(0)
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def paused(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    ws, plan = _workspace(tmp_path)
    env = _env(ws)
    first = subprocess.run(
        [FD, "launch", str(plan), "--unsigned", "--workspace", str(ws), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert first.returncode == 3, first.stderr
    return ws, env, str(json.loads(first.stdout)["run_id"])


def test_ui_serves_only_with_the_printed_token(
    paused: tuple[Path, dict[str, str], str],
) -> None:
    ws, env, run_id = paused
    with _serve(env, "--workspace", str(ws)) as (process, url):
        assert url.startswith("http://127.0.0.1:")
        base = url.split("/runs")[0]
        assert httpx.get(base + "/runs").status_code == 403
        with httpx.Client(follow_redirects=True) as client:
            page = client.get(url)
            assert page.status_code == 200 and run_id in page.text
        assert process.poll() is None


@pytest.mark.skipif(CHROMIUM is None, reason="needs the system Chromium (apt-get install chromium)")
def test_approve_a_paused_step_in_the_browser_and_watch_the_run_finish(
    paused: tuple[Path, dict[str, str], str], tmp_path: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs playwright (pip)")
    ws, env, run_id = paused
    shots = Path(os.environ.get("FLIGHTDECK_TEST_ARTIFACTS", tmp_path)) / "ui"
    shots.mkdir(parents=True, exist_ok=True)
    with (
        _serve(env, "--workspace", str(ws)) as (_process, url),
        sync_api.sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page()
            problems: list[str] = []  # script errors, CSP refusals, failed loads
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.goto(url)
            row = page.locator(f'tr[data-run="{run_id}"]')
            sync_api.expect(row).to_contain_text("pending-approval")
            page.screenshot(path=shots / "runs.png", full_page=True)
            row.get_by_role("link").click()
            step = page.locator('tr[data-step="write"]')
            sync_api.expect(step).to_have_attribute("data-state", "pending-approval")
            page.screenshot(path=shots / "run-paused.png", full_page=True)
            loads: list[str] = []  # the page is never reloaded: updates come by SSE
            page.on("framenavigated", lambda frame: loads.append(frame.url))
            step.get_by_role("button", name="Approve").click()
            sync_api.expect(page.locator("#run-status")).to_have_text("completed", timeout=60_000)
            sync_api.expect(step).to_have_attribute("data-state", "completed")
            page.screenshot(path=shots / "run-completed.png", full_page=True)
            assert loads == []
            assert problems == []
        finally:
            browser.close()
    assert (ws / "ledger.txt").read_text() == "entry\n"
    shown = subprocess.run(
        [FD, "runs", "show", run_id, "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )
    report = json.loads(shown.stdout)
    assert {"step": "write", "decision": "approved:file"} in report["approvals"]
    decided = [r["fields"] for r in report["audit"] if r["kind"] == "ui.approval"]
    assert decided == [decided[0]] and decided[0]["origin"] == "ui"


def test_a_busy_port_is_a_located_error(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = subprocess.run(
            [FD, "ui", "--no-open", "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 1 and "ui.cannot_bind" in done.stderr
    assert "Traceback" not in done.stderr
