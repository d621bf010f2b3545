"""Passphrase sources: a file descriptor (`--passphrase-fd N`, a real pipe
handed to the process), the environment, and no prompt without a terminal."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from flightdeck.flightplan import (
    FlightPlanError,
    generate_keys,
    load_private_key,
    read_passphrase_fd,
)
from tests.flightplan._plans import example_path

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "flightdeck"


def _run_with_fd(
    args: list[str], secret: bytes | None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run flightdeck with `secret` readable on a pipe whose read end is
    passed as `--passphrase-fd <fd>` (the same number in the child)."""
    base = {k: v for k, v in os.environ.items() if k != "FLIGHTDECK_KEY_PASSPHRASE"}
    if secret is None:
        return subprocess.run(
            [str(BIN), *args],
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            stdin=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
    read, write = os.pipe()
    try:
        os.write(write, secret)
        os.close(write)
        return subprocess.run(
            [str(BIN), *args, "--passphrase-fd", str(read)],
            capture_output=True,
            text=True,
            env={**base, **(env or {})},
            stdin=subprocess.DEVNULL,
            pass_fds=(read,),
            timeout=60,
            check=False,
        )
    finally:
        os.close(read)


def test_keys_generate_and_freeze_read_the_passphrase_from_a_pipe(tmp_path: Path) -> None:
    done = _run_with_fd(["keys", "generate", "--out", str(tmp_path), "--encrypt"], b"pipe phrase\n")
    assert done.returncode == 0, done.stderr
    key = tmp_path / "flightdeck.key"
    assert b"ENCRYPTED PRIVATE KEY" in key.read_bytes()
    # The trailing newline was not part of the passphrase.
    with pytest.raises(FlightPlanError):
        load_private_key(key, b"pipe phrase\n")
    assert load_private_key(key, b"pipe phrase") is not None

    freeze = [
        "freeze",
        str(example_path()),
        "--no-code-pins",
        "--signing-key",
        str(key),
        "--format",
        "json",
    ]
    done = _run_with_fd(freeze, b"wrong")
    assert done.returncode == 1
    assert json.loads(done.stdout)["error"]["code"] == "freeze.passphrase_wrong"
    # The descriptor wins over a wrong passphrase in the environment.
    done = _run_with_fd(freeze, b"pipe phrase", {"FLIGHTDECK_KEY_PASSPHRASE": "wrong"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["created"] is True


def test_without_a_terminal_there_is_no_prompt(tmp_path: Path) -> None:
    # stdin is not a terminal: refusing beats reading the caller's data as a passphrase.
    done = _run_with_fd(["keys", "generate", "--out", str(tmp_path), "--encrypt"], None)
    assert done.returncode == 1 and "keys.passphrase_needed" in done.stderr
    assert not (tmp_path / "flightdeck.key").exists()
    pair = generate_keys(tmp_path / "enc", "enc", b"s3cret")
    done = _run_with_fd(
        ["freeze", str(example_path()), "--no-code-pins", "--signing-key", str(pair.private_path)],
        None,
    )
    assert done.returncode == 1 and "freeze.passphrase_needed" in done.stderr


def test_an_empty_or_closed_descriptor_is_a_located_error(tmp_path: Path) -> None:
    done = _run_with_fd(["keys", "generate", "--out", str(tmp_path), "--encrypt"], b"\n")
    assert done.returncode == 1 and "keys.passphrase_empty" in done.stderr
    read, write = os.pipe()
    os.close(write)
    os.close(read)
    with pytest.raises(FlightPlanError) as caught:
        read_passphrase_fd(read)
    assert caught.value.code == "keys.passphrase_fd_unreadable"
    # A descriptor onto something large is not read without end.
    big = tmp_path / "big"
    big.write_bytes(b"x" * (70 * 1024))
    with pytest.raises(FlightPlanError) as caught:
        read_passphrase_fd(os.open(big, os.O_RDONLY))
    assert caught.value.code == "keys.passphrase_fd_unreadable"


def test_bytes_given_beat_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pair = generate_keys(tmp_path, "enc", b"right")
    monkeypatch.setenv("FLIGHTDECK_KEY_PASSPHRASE", "wrong")
    assert load_private_key(pair.private_path, b"right") is not None
    asked: list[bool] = []

    def prompt() -> bytes:
        asked.append(True)
        return b"right"

    # The environment comes before the prompt; the prompt only when it is unset.
    with pytest.raises(FlightPlanError):
        load_private_key(pair.private_path, prompt)
    assert asked == []
    monkeypatch.delenv("FLIGHTDECK_KEY_PASSPHRASE")
    assert load_private_key(pair.private_path, prompt) is not None and asked == [True]


def _on_a_terminal(args: list[str], answers: list[bytes]) -> tuple[int, str]:
    """Run flightdeck with a pseudo-terminal as stdin/stderr (and no other
    controlling terminal), answering each prompt in turn."""
    import select

    master, slave = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "FLIGHTDECK_KEY_PASSPHRASE"}
    proc = subprocess.Popen(
        [str(BIN), *args],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=slave,
        start_new_session=True,
        env=env,
    )
    os.close(slave)
    seen = b""
    try:
        for answer in answers:
            prompts = seen.count(b": ")
            for _ in range(60):  # a bound, not a timing assertion: never hang the suite
                if seen.count(b": ") != prompts or proc.poll() is not None:
                    break
                ready, _, _ = select.select([master], [], [], 1)
                if ready:
                    try:
                        seen += os.read(master, 1024)
                    except OSError:
                        break
            os.write(master, answer + b"\n")
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
    assert proc.stdout is not None
    return code, proc.stdout.read().decode()


def test_on_a_terminal_the_passphrase_is_prompted_for(tmp_path: Path) -> None:
    code, out = _on_a_terminal(
        ["keys", "generate", "--out", str(tmp_path), "--encrypt"], [b"tty phrase", b"tty phrase"]
    )
    assert code == 0, out
    key = tmp_path / "flightdeck.key"
    assert load_private_key(key, b"tty phrase") is not None
    code, out = _on_a_terminal(
        [
            "freeze",
            str(example_path()),
            "--no-code-pins",
            "--signing-key",
            str(key),
            "--format",
            "json",
        ],
        [b"tty phrase"],
    )
    assert code == 0, out
    assert json.loads(out)["created"] is True
