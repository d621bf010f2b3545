"""A store, keyring or trust file made enormous by someone who can write it
(the threat model in docs/flightplan.md) is reported with its file's code,
and reading it stops at a limit: `flightdeck verify` runs here with 1 GiB of
address space against 4 GiB (sparse) files, so a reader that took a whole
file would end in a MemoryError traceback instead. A FIFO in a file's place
is refused the same way instead of blocking verify until someone writes."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from flightdeck.config import data_dir
from flightdeck.flightplan import KeyPair, Keyring, freeze_plan
from tests.flightplan._code import FakeCode

FD = str(Path(sys.executable).with_name("flightdeck"))
HUGE = 4 * 1024**3


def _huge(path: Path) -> None:
    path.unlink(missing_ok=True)
    with path.open("wb") as fh:
        fh.truncate(HUGE)  # sparse: no disk is used


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))


def _verify(target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FD, "verify", target, "--format", "json"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
        preexec_fn=_limited,
    )


@pytest.fixture
def version(example_file: Path, keys: KeyPair) -> Path:
    Keyring().trust("github://acme", keys.public_path.read_bytes())
    outcome = freeze_plan(
        example_file, signing_key=keys.private_path, version="1.0.0", code=FakeCode()
    )
    folder = outcome.stored.path
    assert (folder / "code-pins.json").is_file()
    assert _verify(str(folder)).returncode == 0
    return folder


def _cosignature(folder: Path) -> Path:
    # The plan has no co-signer: a file named like one is read all the same.
    return folder / ("SKILL.md." + "0" * 64 + ".sig")


CASES: list[tuple[str, Callable[[Path], Path], str]] = [
    ("signature", lambda f: f / "SKILL.md.sig", "verify.signature_malformed"),
    ("public-key", lambda f: f / "signer.pub.pem", "verify.public_key_invalid"),
    ("lock", lambda f: f / "lock.json", "verify.lock_tampered"),
    ("code-pins", lambda f: f / "code-pins.json", "verify.code_pins_tampered"),
    ("co-signature", _cosignature, "verify.cosignature_invalid"),
    ("keyring", lambda f: data_dir() / "keyring.json", "keyring.unreadable"),
    ("trust-state", lambda f: data_dir() / "trust.json", "trust.unreadable"),
]


@pytest.mark.parametrize(("which", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_enormous_file_is_refused_with_its_code(
    version: Path, which: Callable[[Path], Path], code: str
) -> None:
    target = which(version)
    _huge(target)
    done = _verify(str(version))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == code, error
    tampered = ("verify.lock_tampered", "verify.code_pins_tampered")  # no size in the message
    assert "larger than" in error["message"] or code in tampered


# The four files verify checks with `is_file()` first are reported missing.
FIFO_CODES = {
    "signature": "verify.signature_missing",
    "public-key": "verify.public_key_missing",
    "lock": "verify.lock_missing",
    "code-pins": "verify.code_pins_missing",
}


@pytest.mark.parametrize(
    ("which", "code"),
    [(c[1], FIFO_CODES.get(c[0], c[2])) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_a_fifo_in_a_files_place_is_refused_not_waited_on(
    version: Path, which: Callable[[Path], Path], code: str
) -> None:
    target = which(version)
    target.unlink(missing_ok=True)
    os.mkfifo(target)  # nobody ever writes to it
    done = _verify(str(version))  # a reader blocked in open() would time out here
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout)["error"]["code"] == code
