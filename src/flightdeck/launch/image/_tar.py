"""Reading a layer's tar stream with every byte counted and every read bounded.

tarfile parses the headers; this module decides how much it may read. The
layer (decompressed as it streams, never whole in memory) sits behind
`Metered`, which refuses a read or seek past the pull's remaining unpacked
bytes and more than `HEADER_LIMIT` bytes of headers for one member (PAX
records, GNU long names, sparse maps: tarfile reads each of them whole).
It only ever goes forward (tarfile, reading a member's data or skipping
it, never seeks back), so a gzip layer is decompressed once per pass.

Python before 3.11.10 parses PAX records with regular expressions that take
time quadratic in runs of digits (CVE-2024-6232); a PAX header is therefore
screened first: well-formed records only, at most `PAX_LIMIT` bytes, and
runs of digits whose squared lengths add up to at most `PAX_DIGITS`.
"""

from __future__ import annotations

import gzip
import os
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from flightdeck.launch.image._rootfs import Refused

BLOCK = tarfile.BLOCKSIZE
HEADER_LIMIT = 1 << 20
PAX_LIMIT = 64 << 10
PAX_DIGITS = 1 << 15
CHUNK = 1 << 20
_PAX_TYPES = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_LONG_TYPES = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_DIGIT_RUN = re.compile(rb"[0-9]+")


class Metered:
    """A forward-only view of the decompressed layer for tarfile."""

    def __init__(self, raw: IO[bytes], limit: int) -> None:
        self._raw = raw
        self.limit = limit  # bytes of the stream this layer may use
        self._pos = 0  # where tarfile thinks it is
        self._end = 0  # where `raw` is
        self.header = 0  # header bytes read for the current member; -1: data
        self.pax = 0  # the next read is a PAX header of this many bytes

    # tarfile asks for these
    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        target = offset if whence == os.SEEK_SET else self._pos + offset
        if whence not in (os.SEEK_SET, os.SEEK_CUR) or target < self._end:
            raise Refused("unsafe_layer", "the tar stream would be read backwards")
        if target > self.limit:
            raise Refused("too_large", f"the layer unpacks to more than {self.limit:,} bytes")
        self._pos = target
        return target

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            raise Refused("unsafe_layer", "an unbounded read of the tar stream")
        if self._pos + size > self.limit + tarfile.RECORDSIZE:
            raise Refused("too_large", f"the layer unpacks to more than {self.limit:,} bytes")
        if self.header >= 0:
            self.header += size
            if self.header > HEADER_LIMIT:
                raise Refused(
                    "too_large", f"a member's headers take more than {HEADER_LIMIT:,} bytes"
                )
        if self._pos > self._end:
            self._raw.seek(self._pos)  # forward: decompressed and dropped
        out = self._raw.read(size)
        self._end = self._pos = self._pos + len(out)
        if self.pax:
            _screen_pax(out[: self.pax])
            self.pax = 0
        return out

    @property
    def consumed(self) -> int:
        return max(self._pos, self._end)


class _ScreenedInfo(tarfile.TarInfo):
    """tarfile's member class with its documented extension point,
    `_proc_member`, used to look at extended headers before parsing them."""

    def _proc_member(self, tarfile: Any) -> Any:
        if self.type in _PAX_TYPES or self.type in _LONG_TYPES:
            if self.size > PAX_LIMIT:
                raise Refused("too_large", f"a {self.size:,}-byte extended header")
            if self.type in _PAX_TYPES:
                tarfile.fileobj.pax = self.size
        return super()._proc_member(tarfile)  # type: ignore[misc]  # not in typeshed


def _screen_pax(data: bytes) -> None:
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos, pos + 21)
        digits = data[pos:space]
        if space < 0 or not digits.isdigit():
            raise Refused("unsafe_layer", "a malformed PAX header")
        end = pos + int(digits)
        if end <= space + 1 or end > len(data) or data[end - 1] != 0x0A:
            raise Refused("unsafe_layer", "a malformed PAX header")
        if data.find(b"=", space, end) < 0:
            raise Refused("unsafe_layer", "a malformed PAX header")
        pos = end
    cost = sum((m.end() - m.start()) ** 2 for m in _DIGIT_RUN.finditer(data))
    if cost > PAX_DIGITS:
        raise Refused("unsafe_layer", "a PAX header with long runs of digits")


@dataclass
class Layer:
    """One pass over a layer: `members()`, then `chunks(member)` for a
    regular member's data, in stream order."""

    metered: Metered
    tar: tarfile.TarFile

    def members(self) -> Iterator[tarfile.TarInfo]:
        while True:
            self.metered.header = 0
            member = self.tar.next()
            self.metered.header = -1
            if member is None:
                return
            # tarfile keeps every member it read; here they are needed one at a time.
            self.tar.members.clear()  # type: ignore[attr-defined]
            yield member

    def regions(self, member: tarfile.TarInfo) -> list[tuple[int, int]]:
        """The (offset, length) stretches of a regular member's data: the
        whole file, or a sparse map that is sorted, inside the file and
        within the data the archive holds for it."""
        sparse: list[tuple[int, int]] | None = getattr(member, "sparse", None)  # typeshed: int
        if not sparse:
            return [(0, member.size)] if member.size else []
        room, end, regions = self.tar.offset - member.offset_data, 0, []
        for offset, length in sparse:
            if offset < end or length < 0 or offset + length > member.size:
                raise Refused("unsafe_layer", f"{member.name}: a malformed sparse map")
            room -= length
            end = offset + length
            if length:
                regions.append((offset, length))
        if room < 0:
            raise Refused("unsafe_layer", f"{member.name}: the sparse map overruns its data")
        return regions

    def chunks(self, member: tarfile.TarInfo) -> Iterator[tuple[int, bytes]]:
        """(file offset, bytes) for each piece of a regular member's data."""
        self.metered.seek(member.offset_data)
        for offset, length in self.regions(member):
            while length > 0:
                data = self.metered.read(min(CHUNK, length))
                if not data:
                    raise Refused("unsafe_layer", f"{member.name}: the data ends early")
                yield offset, data
                offset += len(data)
                length -= len(data)


def open_layer(blob: Path, compression: str, limit: int, stack: Any) -> Layer:
    """A pass over the layer in `blob`; files are closed by `stack` (an
    ExitStack)."""
    raw: IO[bytes] = stack.enter_context(blob.open("rb"))
    if compression == "gz":
        raw = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))
    metered = Metered(raw, limit)
    tar = stack.enter_context(
        tarfile.open(fileobj=metered, mode="r:", tarinfo=_ScreenedInfo)  # type: ignore[call-overload]  # noqa: SIM115
    )
    return Layer(metered, tar)


__all__ = ["BLOCK", "Layer", "Metered", "open_layer"]
