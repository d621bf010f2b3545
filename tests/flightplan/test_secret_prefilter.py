"""`looks_like_credential` runs its patterns on the long words of a text
only, and a body is first checked whole (`may_hold_credential`): the verdict
and its description must be those of the patterns run on the whole text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from flightdeck.flightplan.lint._secrets import (
    _DIGEST,
    _ENTROPY_BITS,
    _PREFIXES,
    _SHORTEST,
    _TOKEN,
    _entropy,
    looks_like_credential,
    may_hold_credential,
)


def _reference(text: str) -> str | None:
    """The patterns over the whole text, as before the prefilter."""
    if len(text) < _SHORTEST:
        return None
    match = _PREFIXES.search(text)
    if match:
        return f"starts like a known credential ({match.group(0)[:6]}...)"
    for token in _TOKEN.findall(text):
        if _DIGEST.fullmatch(text.strip()):
            continue
        mixed = (
            any(c.isdigit() for c in token)
            and any(c.isupper() for c in token)
            and any(c.islower() for c in token)
        )
        if mixed and _entropy(token) >= _ENTROPY_BITS:
            return f"a {len(token)}-character high-entropy token"
    return None


_PIECES = [
    "sk-",
    "sk-proj-",
    "sk_live_",
    "ghp_",
    "github_pat_",
    "glpat-",
    "AKIA",
    "xoxb-",
    "AIza",
    "eyJ",
    ".",
    "-----BEGIN ",
    "RSA ",
    "PRIVATE KEY-----",
    "sha256:",
    "a1B2c3D4e5F6g7H8",
    "0123456789abcdef",
    "ABCDEFGHIJKLMNOP",
    "Q9w8E7r6",
    "x",
    "_",
    "-",
    "/",
    "=",
    "+",
    " ",
    "\t",
    "\n",
    "\x1f",
    "\u00a0",
    "\u2028",
    "é",
    "(",
    ":",
]
_texts = st.lists(st.sampled_from(_PIECES), max_size=24).map("".join) | st.text(max_size=80)


@given(_texts)
def test_the_verdict_is_that_of_the_whole_text(text: str) -> None:
    assert looks_like_credential(text) == _reference(text)


@given(st.lists(_texts, max_size=6).map("\n".join))
def test_a_body_passed_over_has_no_line_that_looks_like_a_credential(body: str) -> None:
    if not may_hold_credential(body):
        assert not any(_reference(line) for line in body.split("\n"))


def test_known_shapes_in_prose_are_found() -> None:
    token = "ghp_" + "a1B2" * 6
    assert looks_like_credential(f"use {token} here") == _reference(f"use {token} here")
    assert looks_like_credential(f"use {token} here") is not None
    pem = "x -----BEGIN RSA PRIVATE KEY----- y"
    assert looks_like_credential(pem) == "starts like a known credential (-----B...)"
    assert may_hold_credential(pem) and may_hold_credential(f"a\n{token}")
    assert not may_hold_credential("plain prose, short words only\nand a second line")
