"""The user's secret store and the scrubber that keeps secrets out of records.

A credential is bound by the trust contract's `credential.kind` and
`identityLabel` (never a value in the plan). Lookup order for connector `c`
and label `l`:

1. environment `FLIGHTDECK_SECRET_<C>_<L>`, then `FLIGHTDECK_SECRET_<C>`
   (upper-cased, every non-alphanumeric character turned into `_`);
2. the secrets file (default `config_dir()/secrets.toml`, which must be mode
   0600): key `"c/l"`, then `"c"`, under a `[secrets]` table.

The binding reference recorded in audit is `secret://<c>[/<l>]`, never the
value. A `Credential` also carries the contract's declared `kind`,
`placement` and `identityLabel` (drivers see those, never the value, as
`context.credential`). Every value handed out is remembered by the run's
`Scrubber`, which replaces it in anything written to the journal, audit, outputs or errors.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flightdeck.config import config_dir
from flightdeck.launch.core._errors import LaunchError

SECRETS_FILE = "secrets.toml"
REDACTED = "[REDACTED]"
# The documented secret name an SDK driver receives the bound credential
# under (`${secrets.FLIGHTDECK_CREDENTIAL}`, declared in `auth.state.env`).
CREDENTIAL_SECRET = "FLIGHTDECK_CREDENTIAL"


def _env_part(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", text).upper()


@dataclass(frozen=True)
class Credential:
    """A resolved credential: its reference (safe to record) and its value."""

    reference: str
    value: str = field(repr=False)
    kind: str
    placement: str | None = None
    identity_label: str | None = None


class SecretStore:
    def __init__(self, env: Mapping[str, str] | None = None, path: Path | None = None) -> None:
        self._env = os.environ if env is None else env
        self.path = path if path is not None else config_dir() / SECRETS_FILE
        self._file: dict[str, str] | None = None

    def lookup(
        self, connector: str, kind: str, label: str | None, placement: str | None = None
    ) -> Credential:
        """The credential for `connector` (and `label`), or `LaunchError
        ("credential.missing")` naming the label and every place looked in."""
        reference = f"secret://{connector}" + (f"/{label}" if label else "")
        names = [f"FLIGHTDECK_SECRET_{_env_part(connector)}"]
        keys = [connector]
        if label:
            names.insert(0, f"{names[0]}_{_env_part(label)}")
            keys.insert(0, f"{connector}/{label}")
        for name in names:
            if self._env.get(name):
                return Credential(reference, self._env[name], kind, placement, label)
        stored = self._read_file()
        for key in keys:
            if stored.get(key):
                return Credential(reference, stored[key], kind, placement, label)
        who = f"identity label {label!r}" if label else "no identity label"
        looked = ", ".join(f"${name}" for name in names)
        looked += (
            " and " + ", ".join(repr(key) for key in keys) + f" under [secrets] in {self.path}"
        )
        raise LaunchError(
            "credential.missing",
            f"no {kind} credential for connector {connector} ({who}, {reference}); looked in"
            f" {looked}",
            hint=f"set {names[0]} or add {keys[0]!r} under [secrets] in {self.path} (mode 0600)",
        )

    def _read_file(self) -> dict[str, str]:
        if self._file is not None:
            return self._file
        try:
            info = self.path.stat()
        except FileNotFoundError:
            self._file = {}
            return self._file
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise LaunchError(
                "credential.file_permissions",
                f"{self.path} is readable by others (mode {stat.S_IMODE(info.st_mode):04o})",
                hint=f"chmod 600 {self.path}",
            )
        try:
            data = tomllib.loads(self.path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
            raise LaunchError("credential.file_invalid", f"{self.path}: {exc}") from None
        table = data.get("secrets", {})
        self._file = {k: v for k, v in table.items() if isinstance(v, str)}
        return self._file


class Scrubber:
    """Replaces every secret value it has seen with `[REDACTED]`."""

    def __init__(self) -> None:
        self._values: set[str] = set()

    def add(self, value: str) -> None:
        if value:
            self._values.add(value)

    def __bool__(self) -> bool:
        return bool(self._values)

    def text(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        return text

    def data(self, value: Any) -> Any:
        """A copy of plain JSON data with secrets replaced in keys and strings."""
        if not self._values:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.data(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.data(v) for k, v in value.items()}
        return value
