"""Registry credentials the way `docker login` leaves them.

`$DOCKER_CONFIG/config.json` (default `~/.docker/config.json`): a
`credHelpers` entry for the host wins, then `credsStore`, then `auths`
(`auth`: base64 `user:secret`, or `username`/`password`; an
`identitytoken` is sent as the secret of user `<token>`, as docker does).
A helper is the program `docker-credential-<name>`, asked with `get` and
the host on stdin, its answer bounded. Nothing is found: None (anonymous).
"""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path
from typing import Any

from flightdeck._bounded import read_at_most
from flightdeck._json import read_json

_LIMIT = 1 << 20


def _config() -> dict[str, Any]:
    base = os.environ.get("DOCKER_CONFIG")
    path = Path(base) / "config.json" if base else Path.home() / ".docker" / "config.json"
    try:
        data = read_json(read_at_most(path, _LIMIT).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _helper(name: str, host: str) -> tuple[str, str] | None:
    try:
        done = subprocess.run(
            [f"docker-credential-{name}", "get"],
            input=host.encode(),
            capture_output=True,
            timeout=30,
            check=False,
        )
        answer = read_json(done.stdout[:_LIMIT]) if done.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if not isinstance(answer, dict):
        return None
    user, secret = answer.get("Username"), answer.get("Secret")
    return (user, secret) if isinstance(user, str) and isinstance(secret, str) else None


def docker_credentials(host: str) -> tuple[str, str] | None:
    """(user, secret) for a registry host, or None."""
    config = _config()
    helpers = config.get("credHelpers")
    if isinstance(helpers, dict) and isinstance(helpers.get(host), str):
        return _helper(helpers[host], host)
    auths = config.get("auths")
    entry = auths.get(host) if isinstance(auths, dict) else None
    if isinstance(config.get("credsStore"), str):
        found = _helper(config["credsStore"], host)
        if found is not None or not isinstance(entry, dict):
            return found
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("identitytoken"), str):
        return "<token>", entry["identitytoken"]
    if isinstance(entry.get("auth"), str):
        try:
            user, colon, secret = base64.b64decode(entry["auth"]).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return None
        return (user, secret) if colon else None
    name, password = entry.get("username"), entry.get("password")
    return (name, password) if isinstance(name, str) and isinstance(password, str) else None


__all__ = ["docker_credentials"]
