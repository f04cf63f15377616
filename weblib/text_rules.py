"""Which characters a text may hold: one rule for every text Tagdesk stores or sends on — the
API's strings (query texts, codes, tag names), the settings area's and the command line's
names, an import's cells, the dashboard's new tag names, the view it keeps in the address and
the name people give at sign-in, and the `next` page of a sign-in.

Refused: the C0 controls (U+0000–U+001F: NUL, tab, line breaks, escape …) and DEL (U+007F),
which no name or search text means to hold, and unpaired surrogates (U+D800–U+DFFF), which are
not characters at all and which not every database can store (PostgreSQL's UTF-8 refuses
them). The C1 controls (U+0080–U+009F) are allowed, as the API allows them (docs/api.md): a
tag whose name holds one must be found by its name everywhere (docs/decisions.md).

Each caller words its own refusal; `forbidden_character` names the character to word it with.
"""

from __future__ import annotations

import re

FORBIDDEN = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")


def forbidden_character(value: str) -> str | None:
    """The first character of `value` no text may hold, or None when there is none."""
    found = FORBIDDEN.search(value)
    return found.group() if found else None


def has_forbidden_character(value: str) -> bool:
    return FORBIDDEN.search(value) is not None


def blank_forbidden(value: str) -> str:
    """`value` with each character no text may hold replaced by a space (for values that are
    cleaned rather than refused: the dashboard's address and a display name)."""
    return FORBIDDEN.sub(" ", value)
