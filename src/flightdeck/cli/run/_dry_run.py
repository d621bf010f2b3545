"""Rendering of `launch --dry-run`."""

from __future__ import annotations

import asyncio
import json
from typing import Any, NoReturn

import click

from flightdeck.launch import LaunchOptions, Runtime, dry_run


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def show_dry_run(
    target: str | None, options: LaunchOptions, runtime: Runtime, fmt: str
) -> NoReturn:
    """Print what would run; exit 0 when a launch would start cleanly, 1 when
    the report lists problems. Refusals raise LaunchError like a launch."""
    report = asyncio.run(dry_run(target, options, runtime))
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
        raise SystemExit(0 if report.ok else 1)
    label = f"@{report.version}" if report.version else ""
    trust = f"signed by {report.signer}" if report.signed else "UNSIGNED"
    if report.publisher:
        trust += f" for {report.publisher}"
    click.echo(f"dry run of {report.plan}{label} ({report.content_hash}, {trust})")
    click.echo(f"  code: {report.code.get('warning') or 'pinned, unchanged'}")
    if report.image:
        click.echo(f"  image: {report.image['pinned']}")
        if report.image.get("features"):
            click.echo(f"    composed from {report.image['composed_from']}")
        for feature in report.image.get("features", ()):
            click.echo(f"    {feature['tool']}@{feature['version']}: {feature['feature']}")
    click.echo("inputs:")
    for name, value in report.inputs.items():
        click.echo(f"  {name} = {_value(value)}")
    click.echo("steps:")
    for step in report.steps:
        after = f" after {', '.join(step['after'])}" if step.get("after") else ""
        click.echo(f"  {step['id']} ({step['kind']}){after}")
        if "action_ref" in step:
            driver = step.get("driver", "no driver found")
            click.echo(f"    {step['action_ref']} via {driver}; effect {step['effect']}")
            credential = step["credential"]
            if credential.get("kind") != "none":
                state = "found" if credential.get("found") else "MISSING"
                click.echo(f"    credential {credential['kind']}: {state}")
            click.echo(f"    approval: {step['approval']}")
        if "command" in step:
            click.echo(f"    $ {' '.join(step['command'])}")
            click.echo(f"    in {step['environment']}; network: {step['network']}")
    if report.problems:
        click.echo(click.style(f"{len(report.problems)} problem(s):", fg="red", bold=True))
        for problem in report.problems:
            click.echo(f"  {problem['code']}: {problem['message']}")
        raise SystemExit(1)
    click.echo(click.style("nothing ran; a launch would start", fg="green"))
    raise SystemExit(0)


__all__ = ["show_dry_run"]
