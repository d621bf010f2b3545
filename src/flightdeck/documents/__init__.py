"""The document layer: frontmatter, YAML, kinds, schemas and diagnostics.

Load a manifest with `load_document(path)`; every problem comes back as a
located `Diagnostic` in the `LoadResult`, never as an exception.
"""

from flightdeck.documents._diagnostics import (
    Diagnostic,
    Severity,
    locate,
    merge_overlapping,
    pointer_join,
)
from flightdeck.documents._document import Document, DocumentKind, LoadResult, SourceMap
from flightdeck.documents._ids import manifest_id
from flightdeck.documents._kinds import is_manifest_name
from flightdeck.documents._load import Limits, load_document, parse_document, validate_data
from flightdeck.documents._offline import explaining_validator, fast_validator, ref_problems
from flightdeck.documents._scan import ScanEntry, scan_paths
from flightdeck.documents._schemas import load_schema, schema_names

__all__ = [
    "Diagnostic",
    "Document",
    "DocumentKind",
    "Limits",
    "LoadResult",
    "ScanEntry",
    "Severity",
    "SourceMap",
    "explaining_validator",
    "fast_validator",
    "is_manifest_name",
    "load_document",
    "load_schema",
    "locate",
    "manifest_id",
    "merge_overlapping",
    "parse_document",
    "pointer_join",
    "ref_problems",
    "scan_paths",
    "schema_names",
    "validate_data",
]
