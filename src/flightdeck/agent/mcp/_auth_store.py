"""Where an HTTP MCP server's OAuth state is kept between starts.

One JSON file per server URL under `<data dir>/mcp-auth/` (the file name is a
hash of the URL, so no URL text reaches the file system's names), mode 0600
in a 0700 folder, replaced atomically. It holds the dynamic client
registration, the tokens, when the access token expires (an absolute time:
the SDK's `expires_in` is relative to the answer it came in) and the
loopback port the registration's redirect URI names (an authorization
server compares redirect URIs exactly, so later sign-ins must reuse it).
A damaged file is treated as absent: the next sign-in overwrites it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from flightdeck._json import read_json

if TYPE_CHECKING:
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

log = logging.getLogger("flightdeck.agent.mcp")
M = TypeVar("M", bound=BaseModel)


def auth_dir() -> Path:
    from flightdeck.config import data_dir

    return data_dir() / "mcp-auth"


def token_path(server_url: str) -> Path:
    digest = hashlib.sha256(server_url.encode("utf-8")).hexdigest()[:32]
    return auth_dir() / f"{digest}.json"


class TokenFile:
    """The SDK's `TokenStorage` over one file."""

    def __init__(self, server_url: str, path: Path | None = None) -> None:
        self.server_url = server_url
        self.path = path or token_path(server_url)
        self._data: dict[str, Any] = self._read()

    # ---- what the flow needs beyond the SDK's storage ------------------------

    @property
    def expires_at(self) -> float | None:
        value = self._data.get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    @property
    def redirect_port(self) -> int | None:
        value = self._data.get("redirect_port")
        return value if isinstance(value, int) and 0 < value < 65536 else None

    def remember_port(self, port: int) -> None:
        """Kept with the registration it was registered with (written with it)."""
        self._data["redirect_port"] = port

    # ---- the SDK's TokenStorage ----------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        return _model(OAuthToken, self._data.get("tokens"))

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._data["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
        expires = tokens.expires_in
        self._data["expires_at"] = time.time() + float(expires) if expires is not None else None
        self._write()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        return _model(OAuthClientInformationFull, self._data.get("client_info"))

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._data["client_info"] = client_info.model_dump(mode="json", exclude_none=True)
        self._data.pop("tokens", None)  # tokens belong to the registration that got them
        self._data.pop("expires_at", None)
        self._write()

    # ---- the file ----------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            data = read_json(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable MCP sign-in file %s: %s", self.path, exc)
            return {}
        if not isinstance(data, dict) or data.get("server_url") != self.server_url:
            return {}  # another URL's (a hash collision) or not ours
        return data

    def _write(self) -> None:
        try:
            self._replace()
        except OSError as exc:
            from flightdeck.agent.mcp._auth_callback import SignInError

            raise SignInError(
                "mcp.auth_store",
                f"cannot keep the MCP sign-in in {self.path}: {exc.strerror or exc}",
                "check that the data directory (FLIGHTDECK_HOME) is a writable folder",
            ) from None

    def _replace(self) -> None:
        self._data["server_url"] = self.server_url
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        # mkstemp creates the file 0600: the secret is never readable by others,
        # not even for the moment before a chmod.
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self._data, handle, sort_keys=True)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _model(model: type[M], raw: Any) -> M | None:
    if not isinstance(raw, dict):
        return None
    try:
        return model.model_validate(raw)
    except ValueError:
        return None
