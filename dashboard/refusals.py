"""The service's refusal of a change, as the rule, tag and bulk forms say it to people."""

from __future__ import annotations

import re

from queryapi import ApiError

# The API names the field of each problem ("'condition.pattern': The pattern is not valid: …");
# where the rest is a sentence of its own, people need only the sentence.
_FIELD = re.compile(r"(?:^|(?<=[.!?…] ))'([\w.\[\]-]+)': (?=[A-Z])")


def refusal(error: ApiError) -> str:
    """The service's words for `error`, without the API's field names before its sentences."""
    return _FIELD.sub("", error.message)


def is_about(error: ApiError, field: str) -> bool:
    """Whether the service refused `field` (its name, at any depth: "pattern" is
    "condition.pattern" too)."""
    return any(named == field or named.endswith("." + field)
               for named in _FIELD.findall(error.message))
