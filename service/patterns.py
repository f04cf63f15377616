"""People's patterns: regular expressions on a query's text in RE2's syntax, matched anywhere
in the text without regard to case. RE2 runs in time linear in the text whatever the pattern
(no backtracking), so a pattern staff write can never stall a request; Python's `re` is never
used on them.

Every caller compiles a pattern here: the API's validation, the count engine and rules.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import re2

MAX_PATTERN = 1000
# Characters that mean something in RE2's syntax outside a class; any other stands for itself.
_SPECIAL = frozenset("\\.+*?()|[]{}^$")
# The characters RE2 (Unicode 15's case folding) takes for others than the engine's folding
# (Python's Unicode) does: ΐ and ΐ, ΰ and ΰ, ﬅ and ﬆ. A literal holding one is run by RE2.
# tests/service/test_patterns.py checks that these are all.
FOLDED_OTHERWISE = frozenset("\u0390\u03b0\u1fd3\u1fe3\ufb05\ufb06")


def _options() -> re2.Options:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False  # a refused pattern is the person's answer, not a log line
    options.never_capture = True  # only whether a text matches counts: no groups to keep
    return options  # max_mem stays RE2's default budget


_OPTIONS = _options()


def compile_pattern(text: str):
    """The compiled pattern (use its `search`), or a ValueError whose message is a sentence."""
    if not isinstance(text, str):
        raise ValueError("A pattern must be a string.")
    if len(text) > MAX_PATTERN:
        raise ValueError(f"A pattern can be at most {MAX_PATTERN:,} characters; "
                         f"this one has {len(text):,}.")
    return _compiled(text)


def matcher(text: str) -> Callable[[str], bool]:
    """Whether a text holds a match of the pattern (ValueError as compile_pattern), through
    the binding's public `search` only (its private RE2 object would be ~5× faster on short
    texts, but is no interface the binding promises to keep)."""
    search = compile_pattern(text).search
    return lambda value: search(value) is not None


@lru_cache(maxsize=256)
def _compiled(text: str):
    try:
        return re2.compile(text, _OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else b""
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        if reason.startswith("pattern too large"):
            raise ValueError("The pattern is too large to run: use fewer or smaller "
                             "repetitions ({n}) and classes.") from None
        # RE2 says what is wrong, then where: "missing ): (abc".
        what, _colon, where = reason.partition(": ")
        at = f" (at “{where}”)" if where else ""
        raise ValueError(f"The pattern is not valid: {RE2_REASONS.get(what, what)}{at}.") \
            from None


# RE2's reasons (re2/regexp.cc, what its error codes say) in words people read; a reason not
# here is said as RE2 says it.
RE2_REASONS = {
    "missing )": "a “(” has no “)” to close it",
    "unexpected )": "a “)” closes no “(”",
    "missing ]": "a “[” has no “]” to close it",
    "bad repetition operator": "two repetition signs follow each other, such as ** or ++",
    "no argument for repetition operator": "a *, + or ? follows nothing it could repeat",
    "invalid repetition size": "a count in { } is over 1,000, or its second number is below "
                               "its first",
    "trailing \\": "it ends with a single backslash (write \\\\ for a backslash)",
    "invalid escape sequence": "a backslash comes before a character that means nothing after "
                               "one (write \\\\ for a backslash)",
    "invalid character class range": "a range in [ ] runs backwards or names no class",
    "invalid character class": "a class in [ ] is not one the pattern language knows",
    "invalid named capture group": "a named group, (?P<name>…), is not written as one",
    "invalid perl operator": "a group that starts with “(?” is not one the pattern language "
                             "knows",
    "invalid UTF-8": "it holds bytes that are not UTF-8 text",
}


def literals(text: str) -> list[str] | None:
    """The alternatives of a pattern that is only literal strings joined by `|` ("günstig|
    billig|pas cher"; `\\.` and other escaped punctuation stand for themselves), or None.
    Such a pattern matches a text exactly when one of them, folded, is in the text, folded:
    the count engine's text search (the fold is Unicode's simple case folding, which is also
    what RE2 ignores; tests/service/test_patterns.py checks every character)."""
    found, current, escaped = [], [], False
    for character in text:
        if escaped:
            if character.isascii() and character.isalnum():
                return None  # \d, \b, \pL, \x41, …: a class or an assertion, not a literal
            current.append(character)
            escaped = False
        elif character == "\\":
            escaped = True
        elif character == "|":
            found.append("".join(current))
            current = []
        elif character in _SPECIAL:
            return None
        else:
            current.append(character)
    found.append("".join(current))
    if escaped or not all(found):
        return None  # a trailing \ is refused by RE2; an empty alternative matches every text
    if any(character in FOLDED_OTHERWISE for literal in found for character in literal):
        return None
    return found


# Escapes that match no space and assert nothing about what is around: digits, word
# characters, non-spaces, and control characters (no text holds one). Not \b and \B: RE2
# decides a word boundary by ASCII letters without regard to case, so the Kelvin sign and
# the long s (whose folds are k and s) make one in a text and none in its folded word.
_WORD_ESCAPES = frozenset("dwSntrfv")
_CLASS_ESCAPES = _WORD_ESCAPES


def within_words(text: str) -> bool:
    r"""Whether every match of the pattern lies within one word of a text (what lies between
    its spaces, as the count engine cuts texts): it can match no space and asserts nothing
    about the text's start or end. Then a text holds a match exactly when one of its words
    does, and the engine matches the project's distinct words instead of its texts. Decided
    on the pattern's syntax, conservatively: `.`, `\s`, `\W`, `\D`, `\p`, `\b`, negated
    and POSIX classes, ranges that span a space, `^`, `$`, flags and any other escape say no.
    (A word is matched folded, as RE2 ignores case: the same characters match; tests/service/
    test_patterns.py proves it for every character.)"""
    at, length = 0, len(text)
    while at < length:
        character = text[at]
        if character in " .^$":
            return False
        if character == "\\":
            following = text[at + 1:at + 2]
            if not following or (following.isalnum() and following not in _WORD_ESCAPES) \
                    or following == " ":
                return False
            at += 2
            continue
        if character == "(" and text[at + 1:at + 2] == "?" and text[at + 2:at + 3] != ":":
            return False
        if character == "[":
            at = _class_end(text, at + 1)
            if at < 0:
                return False
            continue
        at += 1
    return True


def _class_end(text: str, at: int) -> int:
    """Where a class that starts at `at` (after its "[") ends, or -1 when it may hold a space
    (or is negated, POSIX, or not understood)."""
    if text[at:at + 1] == "^" or text[at:at + 1] == "":
        return -1
    first, last = True, None  # `last`: the class's latest single character, for a range
    while at < len(text):
        character = text[at]
        if character == "]" and not first:
            return at + 1
        first = False
        if character == " " or text.startswith("[:", at):
            return -1
        if character == "\\":
            following = text[at + 1:at + 2]
            if not following or following == " " or (following.isalnum()
                                                      and following not in _CLASS_ESCAPES):
                return -1
            last = None if following.isalnum() else following
            at += 2
            continue
        if character == "-" and last is not None and text[at + 1:at + 2] not in ("]", ""):
            end = text[at + 1]
            if end == "\\":
                end = text[at + 2:at + 3]
                if not end or end.isalnum():
                    return -1
                at += 1
            if ord(last) <= ord(" ") <= ord(end):
                return -1
            last = None
            at += 2
            continue
        last = character
        at += 1
    return -1


_QUANTIFIERS = frozenset("?*+{")


def required_literals(text: str) -> list[str] | None:
    """Literal strings of which every match holds one (a prefilter: the texts holding none
    cannot match), or None when none is known. Read from the pattern's start, after a `^`: a
    run of at least two literal characters, or a group of literal alternatives that is not
    optional ("^(wie|was|wo) " → wie, was, wo). A pattern with `|` outside a group says
    nothing. Literals holding a character RE2 folds otherwise than the engine say nothing."""
    body = text[1:] if text.startswith("^") else text
    depth = 0
    for character in _unescaped(body):
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
        elif character == "|" and depth == 0:
            return None
    if body.startswith("("):
        end = body.find(")")
        if end < 0 or "(" in body[1:end] or body[end + 1:end + 2] in _QUANTIFIERS:
            return None
        inner = body[1:end]
        found = literals(inner[2:] if inner.startswith("?:") else inner)
    else:
        run = []
        for index, character in enumerate(body):
            if character in _SPECIAL or character == "\\":
                if body[index:index + 1] in _QUANTIFIERS and run:
                    run.pop()  # the last character is repeated, perhaps not at all
                break
            run.append(character)
        found = ["".join(run)] if run else None
    if not found or any(len(literal) < 2 for literal in found):
        return None
    if any(character in FOLDED_OTHERWISE for literal in found for character in literal):
        return None
    return found


def _unescaped(text: str):
    """The characters of a pattern that are not escaped, outside classes."""
    escaped = in_class = False
    for character in text:
        if escaped:
            escaped = False
        elif character == "\\":
            escaped = True
        elif in_class:
            in_class = character != "]"
        elif character == "[":
            in_class = True
        else:
            yield character
