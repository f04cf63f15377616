"""The one rule of the characters a text may hold (weblib/text_rules.py): exactly the C0
controls, DEL and unpaired surrogates are refused, and every caller — the API, an import, the
command line, the dashboard's new tag names and its address — applies that rule and no other.
Through HTTP: tests/service/test_bad_input.py, tests/service/test_settings_projects.py,
tests/dashboard/test_create_tag.py, tests/dashboard/test_url_values.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from blueprints.bulk import Refusal, new_tag_name
from dashboard.viewstate import clean_text
from service.bodies import validation
from service.imports import imports
from service.org import admin
from weblib.text_rules import blank_forbidden, forbidden_character, has_forbidden_character

ROOT = Path(__file__).resolve().parents[2]
REFUSED = [*map(chr, range(0x20)), "\x7f", "\ud800", "\udbff", "\udc00", "\udfff"]
ALLOWED = [" ", "~", "\x80", "\x85", "\x9b", "\x9f", "\xa0", "é", "\u200b", "\ud7ff", "\ue000",
           "\U0001f600"]


def test_exactly_the_c0_controls_del_and_surrogates_are_refused():
    refused = [chr(code) for code in range(0x110000) if has_forbidden_character(chr(code))]
    assert refused == [*map(chr, range(0x20)), "\x7f", *map(chr, range(0xD800, 0xE000))]


def test_the_first_refused_character_is_named_and_each_can_be_blanked():
    assert forbidden_character("a\x85b\tc\x00") == "\t"
    assert forbidden_character("a\x85b") is None
    assert blank_forbidden("a\tb\x7fc\ud800d\x85e") == "a b c d\x85e"


def callers():
    """Each caller of the rule: a function that refuses `text` (or blanks it)."""
    def api(text):
        with pytest.raises(ValueError):
            validation._printable(text)

    def command_line(text):
        with pytest.raises(admin.AdminError, match="control characters"):
            admin.normalize_query(f"a{text}b", "en", "US")

    def an_import(text):
        assert imports._problem(f"a{text}b", "query", imports._TEXT, validation.MAX_STRING)

    def new_tag(text):
        with pytest.raises(Refusal):
            new_tag_name(f"a{text}b")

    def address(text):
        assert clean_text(f"a{text}b", 10) == "a b"

    return [api, command_line, an_import, new_tag, address]


@pytest.mark.parametrize("character", REFUSED, ids=lambda c: f"U+{ord(c):04X}")
@pytest.mark.parametrize("caller", callers(), ids=lambda f: f.__name__)
def test_every_caller_refuses_what_the_rule_refuses(caller, character):
    caller(character)


@pytest.mark.parametrize("character", ALLOWED, ids=lambda c: f"U+{ord(c):04X}")
def test_every_caller_takes_what_the_rule_allows(character):
    text = f"a{character}b"
    assert validation._printable(text) == text
    assert admin.normalize_query(text, "en", "US")[0] == text
    assert imports._problem(text, "query", imports._TEXT, validation.MAX_STRING) is None
    assert new_tag_name(text) == text
    assert clean_text(text, 10) == text


def test_no_module_keeps_a_rule_of_its_own():
    """A character class of C0 controls appears in weblib/text_rules.py only."""
    own = re.compile(r"\\x00-\\x1f|\\x7f|ord\(\w+\) (< 32|== 127)")
    found = [str(path.relative_to(ROOT))
             for folder in ("service", "dashboard", "blueprints", "jobs", "weblib", "queryapi")
             for path in (ROOT / folder).rglob("*.py")
             if own.search(path.read_text(encoding="utf-8"))]
    assert found == ["weblib/text_rules.py"]
