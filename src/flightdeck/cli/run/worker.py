"""`flightdeck worker --temporal ADDRESS`: run Flight Plan steps for Temporal runs."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from datetime import timedelta
from pathlib import Path

import click

from flightdeck.cli._render import fail
from flightdeck.cli.run._temporal import skip_teardown, temporal_missing
from flightdeck.launch import LaunchError


@click.command()
@click.option(
    "--temporal",
    "address",
    metavar="HOST:PORT",
    help="The Temporal frontend (default [temporal] address).",
)
@click.option("--task-queue", help="The queue to serve (default [temporal] task_queue).")
@click.option("--namespace", help="Default [temporal] namespace, else `default`.")
@click.option(
    "--workspace",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    help="Where .drivers/ and flightdeck.toml are (default: the current directory).",
)
@click.option("--max-concurrent-steps", type=click.IntRange(1, 1024), default=16, show_default=True)
@click.option(
    "--sticky-timeout",
    type=click.FloatRange(1, 86400),
    metavar="SECONDS",
    help="How long a run's next task waits for this worker, which holds the run cached,"
    " before any worker takes it (default [temporal] sticky_timeout, else 10).",
)
def worker(
    address: str | None,
    task_queue: str | None,
    namespace: str | None,
    workspace: Path,
    max_concurrent_steps: int,
    sticky_timeout: float | None,
) -> None:
    """Serve a task queue: walk the graphs of runs launched with --executor
    temporal and run their steps, with this machine's drivers, secrets and
    sandbox. Journal and audit go to this machine's data directory.

    \b
    Examples:
      flightdeck worker --temporal 127.0.0.1:7233
      flightdeck worker --temporal temporal.internal:7233 --task-queue tools
    """
    from flightdeck.launch import configured_temporal

    try:
        temporal = configured_temporal(
            workspace.resolve(),
            # A worker always goes to the address: an untrusted workspace's
            # own is refused, not dropped.
            executor="temporal",
            address=address,
            task_queue=task_queue,
            namespace=namespace,
            sticky_timeout=sticky_timeout,
        )
    except LaunchError as exc:
        fail(exc, "text")
    if not temporal.address:
        raise click.UsageError("name the Temporal frontend: --temporal HOST:PORT")
    with skip_teardown():
        _serve(
            temporal.address,
            temporal.task_queue,
            temporal.namespace,
            workspace,
            max_concurrent_steps,
            timedelta(seconds=temporal.sticky_timeout),
        )


def _serve(
    address: str,
    task_queue: str,
    namespace: str,
    workspace: Path,
    max_concurrent_steps: int,
    sticky_timeout: timedelta,
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
                    sticky_timeout=sticky_timeout,
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
