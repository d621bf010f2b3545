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
def skip_teardown(active: bool = True) -> Iterator[None]:
    """End the process without interpreter teardown once the command is done.
    temporalio's Rust core keeps threads that can call into Python while the
    interpreter finalizes, which aborts the process (SIGABRT, "PyGILState_Release:
    thread state must be current", temporalio/sdk-python#300) after the
    command already succeeded. Everything is flushed first; an unexpected
    exception still propagates with its traceback."""
    if not active:
        yield
        return
    code = 0
    try:
        yield
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
