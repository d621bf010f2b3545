"""`flightdeck agent --json-stream` without click (issue 14).

A host spawns this command for every conversation and waits for `ready`;
importing click and building the command group is ~10% of that wait. The
usual command lines (`--json-stream` and options with plain values) are read
here with the standard library; anything else (help, another mode, an
unknown or repeated option, a value that click might read differently)
returns None and goes through click as before. A test checks that every
command line accepted here gives the same values click gives.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, NoReturn

__all__ = ["json_stream_flags", "run_json_stream"]

# option -> the parameter name click passes to `agent`, in click's order.
_VALUES = {
    "--provider": "provider",
    "--model": "model",
    "--max-tokens": "max_tokens",
    "--max-turns": "max_turns",
    "--base-url": "base_url",
    "--system-prompt": "system_prompt",
    "--workspace": "workspace",
    "--session-id": "session_id",
    "--resume": "resume",
}
_INTS = frozenset({"max_tokens", "max_turns"})
_FLAGS = ("provider", "model", "max_tokens", "max_turns", "base_url", "system_prompt")
_FLAGS_AFTER = ("auto_approve", "workspace", "trust_workspace", "session_id", "resume")
_SWITCHES = {"--auto-approve": "auto_approve", "--trust-workspace": "trust_workspace"}


def json_stream_flags(args: list[str]) -> dict[str, Any] | None:
    """The `agent` flags of `flightdeck agent ARGS` when ARGS ask for the JSON
    stream in the plain form read here, else None (click reads them)."""
    flags: dict[str, Any] = dict.fromkeys((*_FLAGS, *_FLAGS_AFTER))
    seen: set[str] = set()
    stream = False
    tokens = iter(args)
    for token in tokens:
        name, eq, inline = token.partition("=")
        if name in seen:
            return None  # click keeps the last one; not worth copying
        seen.add(name)
        if name == "--json-stream" or name in _SWITCHES:
            if eq:
                return None
            if name == "--json-stream":
                stream = True
            else:
                flags[_SWITCHES[name]] = True
            continue
        key = _VALUES.get(name)
        if key is None:
            return None  # --help, --acp, --list-tools, --format, a typo, `--`
        value = inline if eq else next(tokens, None)
        if not value or value.startswith("-"):
            return None  # missing, empty, or one click might take for an option
        if key in _INTS:
            if not (value.isascii() and value.isdigit()):
                return None  # click's own error message for it
            flags[key] = int(value)
        else:
            flags[key] = value
    return flags if stream else None


def run_json_stream(flags: dict[str, Any]) -> NoReturn:
    """Serve the JSON stream on stdin/stdout, then leave the process."""
    # The agent uses no pydantic plugins; looking them up scans every installed
    # distribution's entry points (~6 ms of start-up).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from flightdeck.agent._startup import pause_gc

    pause_gc()  # until `ready` is out and the engine loaded: flightdeck/agent/_startup.py
    try:
        # A plain start writes `ready` before asyncio and the engine are imported.
        from flightdeck.agent.stream._early import early_ready

        early = early_ready(flags, os.environ, sys.stdout.buffer)
        import asyncio

        from flightdeck.agent import run_json_stream as serve

        code = asyncio.run(serve(flags, sys.stdin.buffer, sys.stdout.buffer, early=early))
    except (EOFError, KeyboardInterrupt):
        # What click's standalone mode reports (the other path goes through
        # it): a blank line closing the terminal's ^C echo, then "Aborted!".
        sys.stderr.write("\nAborted!\n")
        sys.exit(1)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        os._exit(1)  # click's code for a closed stdout, and nothing printed
    # The stdin reader thread may still be blocked in read(); finalizing the
    # interpreter around it can abort, so leave directly (all is flushed and
    # every session step is already fsynced).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
