"""`flightdeck publish NAME[@VERSION] --registry HOST/REPO` and
`flightdeck install HOST/REPO[:TAG]`"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from flightdeck.cli._passphrase import passphrase_fd_option, passphrase_source
from flightdeck.cli._render import fail
from flightdeck.flightplan import FlightPlanError

_insecure = click.option(
    "--insecure-registry",
    "insecure",
    multiple=True,
    metavar="HOST[:PORT]",
    help="Registry spoken to over plain http (loopback registries always are).",
)
_quiet = click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
_format = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")


def _progress(quiet: bool, fmt: str) -> Callable[[str], None]:
    """Progress on stderr (so `--format json` keeps stdout one document):
    on a terminal one status line rewritten in place, else a line each."""
    if quiet:
        return lambda line: None
    if sys.stderr.isatty():

        def status(line: str) -> None:
            click.echo("\r\033[K" + line.strip()[:120], nl=False, err=True)
            if line.startswith("pushed "):  # the last line of a publish
                click.echo("", err=True)

        return status
    return lambda line: click.echo(line, err=True)


def local_image(pinned: str) -> Path:
    """The verified OCI layout a composed image is kept in on this machine
    (the image cache's folder), for publish and export to copy it from."""
    from flightdeck.launch import ImageCache, LaunchError

    cache = ImageCache()
    try:
        if not (cache.folder(pinned) / "ready.json").is_file():
            raise LaunchError("image.composed_missing", "it is not in this machine's image cache")
        return cache.verify(pinned).folder
    except LaunchError as exc:
        raise FlightPlanError(
            "publish.image_not_local",
            f"the composed image {pinned} cannot be published from here: {exc.message}",
            hint="publish from the machine that froze the plan, or freeze it again here with"
            " the same catalog (or launch it once here: an installed plan's image is pulled)",
        ) from None


@click.command()
@click.argument("target")
@click.option(
    "--registry",
    required=True,
    metavar="HOST/REPO",
    help="The repository to push to, e.g. localhost:5000/acme/plans (tags are set by publish).",
)
@click.option(
    "--signing-key",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="Also sign the name's versions index with this key (the publisher's), so that"
    " installs of `latest` on a fresh machine refuse an older or withheld version.",
)
@passphrase_fd_option
@click.option(
    "--index-expires",
    type=click.IntRange(min=1, max=3650),
    default=30,
    show_default=True,
    metavar="DAYS",
    help="How long the signed versions index is valid.",
)
@_insecure
@_quiet
@_format
def publish(
    target: str,
    registry: str,
    signing_key: Path | None,
    passphrase_fd: int | None,
    index_expires: int,
    insecure: tuple[str, ...],
    quiet: bool,
    fmt: str,
) -> None:
    """Publish a frozen Flight Plan to an OCI registry, verified first.

    TARGET is NAME or NAME@VERSION of the store. The artifact holds the
    signed files as layers; the plan's image is copied into the same
    repository by digest (the artifact's subject). Tags: the version id,
    the semver label when it is a legal tag, and `latest`. Publishing the
    same version again pushes nothing new and gives the same digest.

    \b
    Examples:
      flightdeck publish weekly-metrics-digest --registry localhost:5000/acme/plans
      flightdeck publish weekly-metrics-digest@1.0.0 --registry ghcr.io/acme/plans --format json
    """
    from flightdeck.flightplan.publish._publish import publish as run
    from flightdeck.flightplan.registry._credentials import docker_credentials
    from flightdeck.flightplan.registry._oci import OciClient

    client = OciClient(insecure_hosts=frozenset(insecure), auth=docker_credentials)
    try:
        key = None
        if signing_key is not None:
            from flightdeck.flightplan import load_private_key

            key = load_private_key(signing_key, passphrase_source(passphrase_fd))
        result = run(
            target,
            registry,
            client,
            progress=_progress(quiet, fmt),
            index_key=key,
            index_days=index_expires,
            local_image=local_image,
        )
    except FlightPlanError as exc:
        fail(exc, fmt)
    except KeyboardInterrupt:
        # Tags move last: the registry still names the previous artifact.
        click.echo("interrupted: nothing was tagged; publish again to finish", err=True)
        raise SystemExit(130) from None
    finally:
        client.close()
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    label = f"@{result.version}" if result.version else ""
    click.echo(f"✓ published {result.name}{label} to {result.repository}@{result.digest}")
    click.echo(f"  tags {', '.join(result.tags)}")
    if result.subject:
        click.echo(f"  image {result.subject} (referrers: {result.referrers})")
    if result.index is not None:
        click.echo(f"  versions index #{result.index} signed")


@click.command()
@click.argument("reference", metavar="HOST/REPO[:TAG]")
@_insecure
@_quiet
@_format
def install(reference: str, insecure: tuple[str, ...], quiet: bool, fmt: str) -> None:
    """Install a published Flight Plan into the store, verified before
    anything is written.

    Without a tag, `latest`. The signature, content hash, lock, code pins,
    publisher trust (keyring) and trust state (no rollback, no publisher
    change) are checked on the fetched files first. Installing the same
    version again changes nothing. Launch then pulls the plan's image from
    this registry, by the digest the signed lock pins.

    \b
    Examples:
      flightdeck install localhost:5000/acme/plans
      flightdeck install ghcr.io/acme/plans:1.0.0 --format json
    """
    from flightdeck.flightplan.publish._install import install as run
    from flightdeck.flightplan.registry._credentials import docker_credentials
    from flightdeck.flightplan.registry._oci import OciClient

    client = OciClient(insecure_hosts=frozenset(insecure), auth=docker_credentials)
    try:
        result = run(reference, client, progress=_progress(quiet, fmt))
    except FlightPlanError as exc:
        fail(exc, fmt)
    except KeyboardInterrupt:
        click.echo("interrupted: nothing was stored", err=True)
        raise SystemExit(130) from None
    finally:
        client.close()
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    label = f"@{result.version}" if result.version else ""
    state = "installed" if result.created else "already installed"
    click.echo(f"✓ {state} {result.name}{label} ({result.id}) from {reference}")
    click.echo(f"  publisher {result.publisher or '(none: pinned to the signing key)'}")
    click.echo(f"  at {result.path}")
