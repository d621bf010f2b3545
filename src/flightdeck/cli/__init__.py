"""The `flightdeck` command line: argument parsing and printing only.

Each command group lives in its own module and is imported lazily, so
`flightdeck --version` and `flightdeck agent` start without importing the
whole toolkit. The manifest and workspace commands (`validate`, `inspect`,
`schema`, `lock`, `drivers`, `call`, `config`, `completion`) and the helpers
they share sit here; the Flight Plan commands in `plan/`, the run commands in
`run/`, the agent's in `chat/`. `--version` alone is answered before click
is imported: it is the one command whose whole cost is start-up.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Console entry point. Usage errors exit 2 (click's convention)."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from flightdeck._version import __version__

        # The same line click's version option prints.
        sys.stdout.write(f"flightdeck, version {__version__}\n")
        return
    if args[:1] == ["agent"]:
        # The JSON stream's usual command lines skip click: chat/_agent_stream.py
        from flightdeck.cli.chat._agent_stream import json_stream_flags, run_json_stream

        flags = json_stream_flags(args[1:])
        if flags is not None:
            run_json_stream(flags)
    from flightdeck.cli._main import main as run

    run(args)
