"""A slice of the malicious-layer fuzzer (bench/fuzz/images.py) in the tests:
200 layers of links, hard links, whiteouts, deep and long paths, huge and
sparse members, flipped bytes. `make fuzz` runs 10,000 and also checks the
cost per entry; here only what must never happen: a write outside the
rootfs, an exception other than the unpacker's own, a hang."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FUZZER = Path(__file__).resolve().parents[2] / "bench" / "fuzz" / "images.py"


@pytest.mark.skipif(
    os.geteuid() == 0 and shutil.which("bwrap") is None,
    reason="as root the fuzzer runs in bubblewrap: apt-get install -y bubblewrap",
)
def test_two_hundred_malicious_layers_stay_inside_the_rootfs() -> None:
    done = subprocess.run(
        [sys.executable, str(FUZZER), "-n", "200", "--seed", "7", "--no-cost"],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["layers"] >= 200
    assert (summary["writes_outside"], summary["tracebacks"], summary["hangs"]) == (0, 0, 0)
    # The slice reaches both sides: layers that unpack and layers refused.
    assert summary["outcomes"].get("unpacked", 0) > 0
    assert summary["outcomes"].get("image.unsafe_layer", 0) > 0
