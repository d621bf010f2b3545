"""If the ACP library's receive loop itself fails, the agent says so in one
line with a code and exits 1: no traceback, and no abort in interpreter
teardown while the stdin thread is still reading (the library is made to
fail here, since no frame is known to make it fail)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    from flightdeck.agent.acp._library import import_acp

    import_acp()
    import acp


    async def broken(agent, frames):
        raise RuntimeError("receive loop failed")


    acp.run_agent = broken
    from flightdeck.cli import main

    main(["agent", "--acp"])
    """
)


def test_a_failed_receive_loop_is_one_line_and_exit_1(tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
        env={"FLIGHTDECK_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    stderr = done.stderr.decode()
    assert done.returncode == 1, stderr
    assert "Traceback" not in stderr and "Fatal Python error" not in stderr
    assert "the connection failed: RuntimeError: receive loop failed [acp.internal]" in stderr
