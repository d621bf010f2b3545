"""What the Temporal commands (`worker`, `launch --executor temporal`,
`runs approve`) share: the error for a missing extra, and the exit."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

from flightdeck.launch import LaunchError

INSTALL_HINT = "install the temporal extra: pip install 'flightdeck[temporal]'"


def temporal_missing(exc: ModuleNotFoundError) -> LaunchError:
    """The located error for a Temporal path without the `temporal` extra."""
    return LaunchError(
        "temporal.not_installed", f"the Temporal executor needs {exc.name}", hint=INSTALL_HINT
    )


@contextlib.contextmanager
def skip_teardown() -> Iterator[None]:
    """Once a command that used Temporal is done, end the process without
    interpreter teardown. temporalio's Rust core keeps threads that can still
    be releasing the GIL when the interpreter finalizes right after the last
    RPC, which aborts the process (SIGABRT, "PyGILState_Release: thread state
    must be current", temporalio/sdk-python#300) after the command succeeded.
    Everything is flushed first; a command that never imported temporalio
    exits normally, and an unexpected exception propagates with its
    traceback."""
    code = 0
    try:
        yield
    except SystemExit as exc:
        if "temporalio" not in sys.modules:
            raise
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    else:
        if "temporalio" not in sys.modules:
            return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
