"""Write a SKILL.md back out, and prove it reads back to the same data.

The canonical bytes are defined on the JSON data, not on YAML text, so the
emitted YAML only has to round-trip: parsing it with flightdeck's own loader
must give data with the same JCS encoding (which tells `true` from `1`, unlike
Python's `==`) and the same body. PyYAML's emitter quotes every string a
YAML 1.1 resolver would read as something else, but YAML 1.2's core schema
reads a few plain scalars 1.1 does not (`0o17`, `1e5`, `.5`), so strings that
look like a 1.2 number, boolean or null are double-quoted here as well.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from flightdeck.documents import DocumentKind, parse_document
from flightdeck.flightplan._canonical import jcs, normalise_body
from flightdeck.flightplan._errors import FlightPlanError

_CORE_NON_STRING = re.compile(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE"
    r"|[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+"
    r"|[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


# libyaml's C emitter is ~5x faster than the pure-Python one. The two may
# wrap long lines differently, which changes the YAML text but never the
# data, hence never the content hash or the signature.
_Base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_Base):  # type: ignore[valid-type,misc]
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _CORE_NON_STRING.match(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


def emit_skill(data: Mapping[str, Any], body: str) -> str:
    """`---`, the frontmatter as block YAML in the data's key order, `---`, the body."""
    text = yaml.dump(
        dict(data),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return f"---\n{text}---\n{normalise_body(body)}"


def check_round_trip(text: str, data: Mapping[str, Any], body: str) -> None:
    """Raise `freeze.yaml_round_trip` unless `text` reads back to `data` and `body`."""
    result = parse_document(text, kind=DocumentKind.SKILL)
    document = result.document
    if document is None:
        detail = "; ".join(d.message for d in result.diagnostics) or "unparseable"
        raise FlightPlanError("freeze.yaml_round_trip", f"emitted YAML does not parse: {detail}")
    if jcs(document.data) != jcs(dict(data)) or document.body != normalise_body(body):
        raise FlightPlanError(
            "freeze.yaml_round_trip",
            "the emitted SKILL.md does not read back to the same data",
            hint="please report this with the input file",
        )
