"""The authorities the egress proxy compares: what a plan declares and what a
sandboxed tool asks for, each reduced to one canonical `host:port` or refused.

Both sides go through the same parser so that a request can only match a
declaration it spells identically after normalisation; anything the parser is
unsure about (userinfo, percent-escapes, a second colon, a zone id, a
non-canonical IPv4 such as `127.1` or `0x7f.0.0.1`) is refused as a whole,
never half-matched. Normalised: upper case, one trailing dot, IPv6 brackets
and spelling, and (declared side only) Unicode names to their IDNA form.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

# A bare declared host admits the default ports of the schemes a tool uses
# through a proxy: http and https.
DEFAULT_PORTS = (80, 443)

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\Z")
_PORT = re.compile(r"[0-9]{1,5}\Z")
# The last label decides whether a name is an IPv4 address to resolvers
# (WHATWG URL and inet_aton alike): all digits, or a hex number.
_NUMERIC = re.compile(r"(?:[0-9]+|0x[0-9a-f]*)\Z")


class BadAuthority(ValueError):
    """An authority the proxy will not interpret; the message says why."""


@dataclass(frozen=True, order=True)
class Endpoint:
    """One canonical `host:port`; `host` may start with `*.` when declared."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def canonical_host(text: str, *, declared: bool = False) -> str:
    """Lower-case ASCII name without its trailing dot, or a canonical IP.

    `declared` allows a Unicode name (converted to IDNA) and a leading `*.`
    (subdomains only); a request must already be ASCII, as clients send it."""
    if not text or any(c.isspace() or ord(c) < 0x21 or ord(c) == 0x7F for c in text):
        raise BadAuthority("empty host or one with spaces or control characters")
    if any(c in text for c in "@%/\\?#"):
        raise BadAuthority("userinfo, percent-escapes and path characters are not allowed")
    if text.startswith("[") or ":" in text:
        inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
        try:
            return str(ipaddress.IPv6Address(inner))
        except ValueError:
            raise BadAuthority("not an IPv6 address in brackets") from None
    if not text.isascii():
        if not declared:
            raise BadAuthority("a non-ASCII host; clients send IDNA (xn--) names")
        try:
            text = text.encode("idna").decode("ascii")
        except UnicodeError:
            raise BadAuthority("a Unicode name with no IDNA form") from None
    name = text.lower()
    name = name[:-1] if name.endswith(".") else name
    wildcard = declared and name.startswith("*.")
    labels = name[2:].split(".") if wildcard else name.split(".")
    if _NUMERIC.match(labels[-1]):
        if wildcard:
            raise BadAuthority("a wildcard over an IP address")
        try:
            return str(ipaddress.IPv4Address(name))
        except ValueError:
            raise BadAuthority("a numeric host that is not a dotted-quad IPv4 address") from None
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise BadAuthority("not a valid host name")
    return name


def parse_port(text: str) -> int:
    if not _PORT.match(text) or not 0 < int(text) < 65536:
        raise BadAuthority("the port must be a number from 1 to 65535")
    return int(text)


def split_authority(text: str) -> tuple[str, str | None]:
    """`host[:port]` → (host, port text or None); brackets stay on the host."""
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise BadAuthority("an unclosed IPv6 bracket")
        rest = text[close + 1 :]
        if rest and not rest.startswith(":"):
            raise BadAuthority("text after the IPv6 bracket")
        return text[: close + 1], (rest[1:] if rest else None)
    host, colon, port = text.partition(":")
    if ":" in port:
        raise BadAuthority("more than one colon outside IPv6 brackets")
    return host, (port if colon else None)


def requested(authority: str, *, default_port: int | None) -> Endpoint:
    """What a tool asked for; `default_port` None means the port is required."""
    host, port = split_authority(authority)
    if port is not None:
        return Endpoint(canonical_host(host), parse_port(port))
    if default_port is None:
        raise BadAuthority("CONNECT needs host:port")
    return Endpoint(canonical_host(host), default_port)


def declared(entry: str) -> tuple[Endpoint, ...]:
    """A plan's `host` (its default ports) or `host:port` (that port only).
    A bare IPv6 address may be written without brackets."""
    if entry.count(":") > 1 and not entry.startswith("["):
        return tuple(Endpoint(canonical_host(entry, declared=True), p) for p in DEFAULT_PORTS)
    host, port = split_authority(entry)
    name = canonical_host(host, declared=True)
    if port is None:
        return tuple(Endpoint(name, p) for p in DEFAULT_PORTS)
    return (Endpoint(name, parse_port(port)),)


def admits(rules: frozenset[Endpoint], asked: Endpoint) -> Endpoint | None:
    """The declared rule that admits `asked`, if any: same port, and the same
    host or a subdomain of a `*.` rule."""
    if asked in rules:
        return asked
    for rule in sorted(rules):
        if (
            rule.port == asked.port
            and rule.host.startswith("*.")
            and asked.host.endswith(rule.host[1:])
        ):
            return rule
    return None


__all__ = [
    "DEFAULT_PORTS",
    "BadAuthority",
    "Endpoint",
    "admits",
    "canonical_host",
    "declared",
    "requested",
]
