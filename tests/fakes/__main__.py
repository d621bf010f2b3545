"""Run the fake model server as a process, for process-level tests.

    python -m tests.fakes --script script.json --port-file port.txt [--api-key KEY]

The script is a JSON list of turns (the `Turn` fields; tool calls as
`{"name": ..., "input": {...}}`). The port is written atomically to the port
file once the server listens. Runs until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
from pathlib import Path

from tests.fakes._script import load_script
from tests.fakes._server import FakeLLMServer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fakes")
    parser.add_argument("--script", help="JSON list of turns (default: none)")
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key")
    args = parser.parse_args(argv)
    turns = load_script(args.script) if args.script else []
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    with FakeLLMServer(turns, api_key=args.api_key, port=args.port) as server:
        port_file = Path(args.port_file)
        tmp = port_file.with_name(port_file.name + ".tmp")
        tmp.write_text(str(server.port), encoding="utf-8")
        os.replace(tmp, port_file)
        done.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
