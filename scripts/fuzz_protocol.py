"""Send N malformed protocol lines to a real `flightdeck agent --json-stream`
and report what came back: `make fuzz-protocol` (10,000 lines by default).

Passes when every line got exactly one `protocol_error`, nothing else was
written, the process still answered a valid command afterwards, exited 0 at
end of input and wrote no traceback. Not part of `make test` (a deterministic
slice of the same generator is, in tests/agent_ext/test_protocol_fuzz.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.agent_ext._fuzz_lines import malformed_lines  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    lines = list(malformed_lines(args.lines, seed=args.seed))
    exe = str(ROOT / ".venv" / "bin" / "flightdeck")
    with tempfile.TemporaryDirectory() as ws:
        env = {**os.environ, "ANTHROPIC_API_KEY": "fuzz", "FLIGHTDECK_HOME": ws}
        cmd = [exe, "agent", "--json-stream", "--workspace", ws, "--base-url", "http://127.0.0.1:9"]
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        data = b"\n".join(lines) + b"\n" + b'{"type":"stop"}\n'
        out, err = proc.communicate(data, timeout=600)
        seconds = time.perf_counter() - start
    events = [json.loads(line) for line in out.splitlines()]
    errors = [e for e in events if e["type"] == "error"]
    protocol = [e for e in errors if e["error"]["code"] == "protocol_error"]
    other = [e["type"] for e in events if e["type"] not in ("ready", "error")]
    report = {
        "lines": len(lines),
        "bytes": sum(len(line) for line in lines),
        "protocol_errors": len(protocol),
        "other_errors": len(errors) - len(protocol),
        "other_events": other,
        "exit_code": proc.returncode,
        "traceback": "Traceback" in err.decode(errors="replace"),
        "seconds": round(seconds, 2),
    }
    print(json.dumps(report, indent=2))
    ok = (
        report["protocol_errors"] == len(lines)
        and not report["other_errors"]
        and not other
        and proc.returncode == 0
        and not report["traceback"]
    )
    print("fuzz-protocol:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
