"""The OpenAPI document (docs/openapi.yaml), served as JSON at /api/openapi.json."""

from functools import cache
from pathlib import Path

import yaml

SPEC = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


@cache
def openapi_document() -> dict:
    return yaml.safe_load(SPEC.read_text(encoding="utf-8"))
