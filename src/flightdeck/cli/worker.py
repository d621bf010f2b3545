"""`flightdeck worker --temporal ADDRESS`: run Flight Plan steps for Temporal runs."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

import click

from flightdeck.cli._render import fail
from flightdeck.cli._temporal import skip_teardown, temporal_missing
from flightdeck.launch import LaunchError


@click.command()
@click.option(
    "--temporal", "address", required=True, metavar="HOST:PORT", help="The Temporal frontend."
)
@click.option("--task-queue", default="flightdeck", show_default=True)
@click.option("--namespace", default="default", show_default=True)
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    help="Where .drivers/ and flightdeck.toml are (default: the current directory).",
)
@click.option("--max-concurrent-steps", type=click.IntRange(1, 1024), default=16, show_default=True)
def worker(
    address: str, task_queue: str, namespace: str, workspace: Path, max_concurrent_steps: int
) -> None:
    """Serve a task queue: walk the graphs of runs launched with --executor
    temporal and run their steps, with this machine's drivers, secrets and
    sandbox. Journal and audit go to this machine's data directory.

    \b
    Examples:
      flightdeck worker --temporal 127.0.0.1:7233
      flightdeck worker --temporal temporal.internal:7233 --task-queue tools
    """
    with skip_teardown():
        _serve(address, task_queue, namespace, workspace, max_concurrent_steps)


def _serve(
    address: str, task_queue: str, namespace: str, workspace: Path, max_concurrent_steps: int
) -> None:
    from flightdeck.launch import configured_runtime

    try:
        from flightdeck.launch import run_worker

        runtime = configured_runtime(workspace.resolve())
        ready = asyncio.Event()

        async def main() -> None:
            serving = asyncio.ensure_future(
                run_worker(
                    address,
                    task_queue,
                    runtime,
                    namespace=namespace,
                    max_concurrent_steps=max_concurrent_steps,
                    ready=ready,
                )
            )
            loop = asyncio.get_running_loop()
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signal.SIGTERM, serving.cancel)
            waiting = asyncio.ensure_future(ready.wait())
            await asyncio.wait({serving, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if ready.is_set():
                click.echo(f"worker ready: {address} queue {task_queue}", err=True)
            with contextlib.suppress(asyncio.CancelledError):
                await serving

        asyncio.run(main())
    except ModuleNotFoundError as exc:
        fail(temporal_missing(exc), "text")
    except LaunchError as exc:
        fail(exc, "text")
    except KeyboardInterrupt:
        raise SystemExit(130) from None
