"""Reading a file that someone else may have made enormous, or endless.

A store, keyring or trust file can be written by an attacker (the threat
model in docs/flightplan.md), and a path a user names may be a device or a
pipe that never ends (`/dev/zero`), whose size says 0. Reading such a file
whole ends in memory exhaustion, not in an error. `read_at_most` reads at
most one byte past a limit and refuses what goes on, as an `OSError`, so
every reader's existing "cannot read" branch gives its own code.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # not typing's: this module stays import-cheap
if TYPE_CHECKING:
    from pathlib import Path

MiB = 1024 * 1024


class TooLarge(OSError):
    """The file goes on past `limit` bytes (its size, or what reading it gave)."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
        self.limit = limit

    def __str__(self) -> str:  # read after a path by the callers' messages
        return f"larger than {self.limit:,} bytes"


def read_at_most(path: Path, limit: int) -> bytes:
    """The bytes of `path`, or `TooLarge` once more than `limit` would be read.

    Other failures are the `OSError`s of opening and reading the file."""
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(path, limit)
    return data


def read_regular(path: Path, limit: int) -> bytes:
    """`read_at_most` for a file that must be a regular file (the store, the
    keyring, the trust state): a FIFO put in its place would block the
    reader in `open` until someone writes to it, so it is opened without
    blocking and anything but a regular file is refused (`OSError`)."""
    return read_regular_stat(path, limit)[0]


def read_regular_stat(
    path: Path, limit: int, *, follow_links: bool = True
) -> tuple[bytes, os.stat_result]:
    """`read_regular`, with the status of the file read (its mode, its size);
    `follow_links=False` refuses a link in the last place of the path (a
    folder or cache someone else may have written)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    fd = os.open(path, flags if follow_links else flags | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(path, limit)
    return data, info


__all__ = ["MiB", "TooLarge", "read_at_most", "read_regular", "read_regular_stat"]
