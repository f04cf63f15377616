"""docs/openapi.yaml in the schemathesis tests: where it is, and what every run checks of a
response (each run adds checks of its own)."""

from __future__ import annotations

from pathlib import Path

from schemathesis import checks

OPENAPI_DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"

# No 5xx, and the status, content type, headers and body the document gives for the operation.
RESPONSE_CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]
