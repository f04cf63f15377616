"""How tag names are compared, and which names are refused: one rule for the service (its
unique key, look-ups by name) and the dashboard (a view's tag names matched to the project's).

Two names are the same tag when they look the same to a person: compared after NFKC (so the
composed and decomposed "café", or a full-width "ｂｒａｎｄ", are one name), without characters
that show nothing (zero-width spaces and joiners, the byte order mark, bidi marks) and without
regard to case ("Brand", "brand", "BRAND").

A name may not carry a bidi embedding, override or isolate (U+202A–U+202E, U+2066–U+2069):
they reorder the text shown around them, so a name could read as another.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Shown as nothing: soft hyphen, Mongolian vowel separator, zero-width space, non-joiner and
# joiner, left-to-right and right-to-left marks, the bidi controls below, word joiner and
# invisible operators, byte order mark (zero-width no-break space).
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


@lru_cache(maxsize=65536)  # an import folds the same few names on every row
def fold_tag_name(name: str) -> str:
    """The form two tag names are compared in: equal folds, one tag."""
    visible = _INVISIBLE.sub("", unicodedata.normalize("NFKC", name))
    # Case folding can undo NFKC (it is not closed under it): normalized once more.
    return unicodedata.normalize("NFKC", visible.casefold()).strip()


def usable_name(text: str) -> str:
    """`text` (trimmed, its control characters already cleaned) as a name may hold it: bidi
    controls taken out; "" when nothing visible is left. For a name that is cleaned rather than
    refused: the one given at sign-in, sent with every change as its label."""
    cleaned = _BIDI_CONTROLS.sub("", text).strip()
    return cleaned if tag_name_problem(cleaned) is None else ""


def tag_name_problem(name: str) -> str | None:
    """Why `name` (already trimmed) cannot be a tag's name, as the end of a sentence that
    starts "The name …"; None when it can."""
    if _BIDI_CONTROLS.search(name):
        return ("must not contain characters that change the direction of the text "
                "(U+202A–U+202E, U+2066–U+2069)")
    if not fold_tag_name(name):
        return "must contain a visible character"
    return None
