"""Run llama.cpp's own HTTP server (`llama-server`, as the xllamacpp wheel
embeds it) on loopback with Gemma 3 270M, for the local-model tests.

    python -m tests.local_model._server --model PATH --port-file FILE [--ctx N]

The server picks a free port; its base URL is written to FILE (renamed into
place, so a reader never sees half of it) once it answers. The process then
sleeps until it is killed: killing it is how a test cuts a stream mid-way.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

TEMPLATE = Path(__file__).with_name("gemma_tools.jinja")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--ctx", type=int, default=2048)
    args = parser.parse_args(argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = args.ctx
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    # Jinja templates are what turn on llama.cpp's tool-call parsing; the
    # model file carries no template of its own (llama.cpp would fall back
    # to ChatML, which Gemma answers with echoes).
    params.use_jinja = True
    params.chat_template = TEMPLATE.read_text()
    # Greedy decoding: the same prompt gets the same answer, run after run.
    params.sampling.temp = 0.0
    params.sampling.seed = 7
    server = xllamacpp.Server(params)
    target = Path(args.port_file)
    partial = target.with_suffix(".partial")
    partial.write_text(server.listening_address)
    os.replace(partial, target)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    raise SystemExit(main())
