"""Where launch finds a driver by id: the first `*/DRIVER.md` whose `id` it
is, in `<workspace>/.drivers`, then in each configured driver library folder.
Only the DRIVER.md files are read; nothing is imported. `DriverInvoker`
calls through what it finds; `check_actions` checks a plan against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from flightdeck.documents import DocumentKind, load_document


class DriverIndex:
    def __init__(self, workspace: Path, libraries: Sequence[Path] = ()) -> None:
        self.workspace = workspace
        self.folders = [workspace / ".drivers", *libraries]
        self._paths: dict[str, Path] | None = None
        self._unreadable: list[Path] = []

    def driver_file(self, connector: str) -> Path | None:
        """The DRIVER.md launch would use for `connector` (nothing imported)."""
        return self._index().get(connector)

    def _index(self) -> dict[str, Path]:
        if self._paths is None:
            self._paths = {}
            for folder in self.folders:
                for file in sorted(folder.glob("*/DRIVER.md")) if folder.is_dir() else ():
                    document = load_document(file, kind=DocumentKind.DRIVER).document
                    driver_id = document.data.get("id") if document else None
                    if isinstance(driver_id, str):
                        self._paths.setdefault(driver_id, file)
                    else:
                        self._unreadable.append(file)
        return self._paths
