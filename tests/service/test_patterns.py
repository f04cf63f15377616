"""The `pattern` filter: RE2 without regard to case, its sentences, its linear time, and the
proof behind counting literal alternatives as text searches (RE2's case-insensitive match of
a character is the engine's folding, for every character)."""

from __future__ import annotations

import sys
import time

import pytest
import re2

from service.engine.folding import fold
from service.org import admin
from service.patterns import (
    FOLDED_OTHERWISE,
    compile_pattern,
    literals,
    matcher,
    required_literals,
    within_words,
)


def _characters() -> list[str]:
    return [chr(point) for point in range(sys.maxunicode + 1)
            if not 0xD800 <= point <= 0xDFFF and point != 0]


def _cased(character: str) -> bool:
    return any(changed != character for changed in (
        fold(character), character.lower(), character.upper(), character.title(),
        character.casefold()))


def test_re2_ignores_case_exactly_as_the_engine_folds():
    """Every cased character but those of FOLDED_OTHERWISE matches, in RE2 without regard to
    case, exactly the characters with its fold; and no other character is cased for RE2. So
    a literal without those matches a text in RE2 exactly when its fold is in the text's fold
    (the text search)."""
    everything = _characters()
    cased = [character for character in everything if _cased(character)]
    joined = "".join(cased)
    by_fold: dict[str, set[str]] = {}
    for character in cased:
        by_fold.setdefault(fold(character), set()).add(character)
    otherwise = {character for character in cased
                 if set(compile_pattern(re2.escape(character)).findall(joined))
                 != by_fold[fold(character)]}
    assert otherwise == FOLDED_OTHERWISE
    # One class of every cased character: RE2 adds each one's case variants, all cased too.
    options = re2.Options()
    options.case_sensitive = False
    pattern = re2.compile("[" + "".join(map(re2.escape, cased)) + "]", options)
    assert set(pattern.findall("".join(everything))) == set(cased)


def test_literal_alternatives():
    assert literals("günstig|billig|cheap|pas cher") == ["günstig", "billig", "cheap",
                                                         "pas cher"]
    assert literals(r"100\%|50\_off|a\.b|x\|y") == ["100%", "50_off", "a.b", "x|y"]
    assert literals("schuh") == ["schuh"]
    assert literals("ab|\u0390") is None  # RE2 takes it for U+1FD3 too; the engine does not
    for pattern in ("a|", "|a", "", "a.b", "^a", "a$", "[ab]", "a+", r"\d", r"\bsale", "(a)",
                    "a{2}", "a\\"):
        assert literals(pattern) is None, pattern


def test_compiled_patterns_ignore_case_and_search_anywhere():
    assert compile_pattern("GÜNSTIG").search("sehr günstige Schuhe")
    assert compile_pattern("σοφ").search("ΣΟΦΙΑ")
    assert compile_pattern("^schuh").search("Schuhe kaufen")
    assert not compile_pattern("^kaufen").search("Schuhe kaufen")
    assert not compile_pattern("i").search("İ")  # RE2, like the engine: İ is no capital i


def test_the_matcher_answers_as_search_does():
    texts = ["Schuhe günstig", "ΣΟΦΙΑ", "", "a" * 999 + "!", "İstanbul", "ıslak", "x%y 50_off",
             "größe 42", "\U0001f600 emoji", "ab ab"]
    for pattern in ("^schuh", "g$", "σ.φ", "", "(a+)+$", "i", "ı", "[%_]", r"\d{2}", "^$",
                    r"\bab\b", "(ab) (ab)", ".", "\U0001f600", "İ|ü"):
        found = matcher(pattern)
        for text in texts:
            assert found(text) == (compile_pattern(pattern).search(text) is not None), (
                pattern, text)


@pytest.mark.parametrize(("pattern", "sentence"), [
    ("a" * 1204, "A pattern can be at most 1,000 characters; this one has 1,204."),
    # RE2's reasons in plain words; the part of the pattern it names, as it names it.
    ("(abc", "The pattern is not valid: a “(” has no “)” to close it (at “(abc”)."),
    ("a)", "The pattern is not valid: a “)” closes no “(” (at “a)”)."),
    ("[ab", "The pattern is not valid: a “[” has no “]” to close it (at “[ab”)."),
    ("a**", "The pattern is not valid: two repetition signs follow each other, such as ** or "
            "++ (at “**”)."),
    ("*a", "The pattern is not valid: a *, + or ? follows nothing it could repeat (at “*”)."),
    ("a{1001}", "The pattern is not valid: a count in { } is over 1,000, or its second number "
                "is below its first (at “{1001}”)."),
    ("\\", "The pattern is not valid: it ends with a single backslash (write \\\\ for a "
           "backslash)."),
    ("\\q", "The pattern is not valid: a backslash comes before a character that means "
            "nothing after one (write \\\\ for a backslash) (at “\\q”)."),
    ("[z-a]", "The pattern is not valid: a range in [ ] runs backwards or names no class "
             "(at “z-a”)."),
    (r"\pL{1000}", "The pattern is too large to run: use fewer or smaller repetitions ({n}) "
                   "and classes."),
])
def test_refused_patterns_say_why_in_a_sentence(pattern, sentence):
    with pytest.raises(ValueError) as refused:
        compile_pattern(pattern)
    assert str(refused.value) == sentence


def test_a_pattern_that_backtracks_elsewhere_runs_in_linear_time():
    text = "a" * 9_999 + "!"
    timings = {}
    for pattern in ("(a+)+$", "abc"):
        compiled = compile_pattern(pattern)
        started = time.perf_counter()
        for _ in range(10):
            assert not compiled.search(text)
        timings[pattern] = (time.perf_counter() - started) / 10
    assert timings["(a+)+$"] < 0.05, timings
    assert timings["(a+)+$"] < 50 * timings["abc"] + 0.005, timings


def test_a_backtracking_pattern_over_http_answers_like_a_plain_one(api, world):
    long_texts = [("a" * 999 + "!" + str(number), "en", "US", [], None)
                  for number in range(200)]
    world.run(lambda s: admin.insert_queries(s, world.project_id, long_texts))
    timings = {}
    for pattern in ("(a+)+$", "abc[0-9]", "(a+)+$"):
        started = time.perf_counter()
        answer = api.call("POST", "/api/queries/facets", json={"pattern": pattern})
        timings[pattern] = time.perf_counter() - started
        assert answer.status_code == 200, answer.text
        assert answer.json()["totalRecords"] == 0
    assert max(timings.values()) < 1, timings


@pytest.mark.parametrize("path", ["/api/queries/list", "/api/queries/facets"])
def test_bad_patterns_are_400_sentences_naming_the_field(api, world, path):
    cases = [
        ("a" * 1204, "'pattern': A pattern can be at most 1,000 characters; this one has 1,204."),
        ("(abc", "'pattern': The pattern is not valid: a “(” has no “)” to close it "
                 "(at “(abc”)."),
        (5, "'pattern': Input should be a valid string."),
        (["a"], "'pattern': Input should be a valid string."),
    ]
    for pattern, sentence in cases:
        answer = api.call("POST", path, json={"pattern": pattern})
        assert answer.status_code == 400, answer.text
        assert answer.json()["message"] == [sentence]


def test_pattern_in_words(api, world):
    world.run(lambda s: admin.insert_queries(s, world.project_id, [
        ("Schuhe günstig", "de", "DE", [world.tags["brand"]], None),
        ("cheap shoes", "en", "US", [], None), ("chaussures pas cher", "fr", "FR", [], None),
        ("ΣΟΦΙΑ", "el", "GR", [], None), ("100% sale", "en", "US", [], None)]))

    def listed(**body) -> list[str]:
        answer = api.queries(**body, sort=[{"field": "query"}])
        assert answer.status_code == 200, answer.text
        return sorted(row["query"] for row in answer.json()["results"])

    assert listed(pattern="GÜNSTIG|billig|cheap|pas cher") == [
        "Schuhe günstig", "chaussures pas cher", "cheap shoes"]
    assert listed(pattern="^(cheap|schuhe)\\b", languages=["de"]) == ["Schuhe günstig"]
    assert listed(pattern="σοφ") == ["ΣΟΦΙΑ"]
    assert listed(pattern=r"\d+%") == ["100% sale"]
    assert listed(pattern="s$", tagIds=[world.tags["brand"]]) == []
    facets = api.call("POST", "/api/queries/facets", json={"pattern": "e$", "languages": ["en"]})
    assert facets.json()["totalRecords"] == 1
    assert {item["value"]: item["count"] for item in facets.json()["languages"]} == {
        "en": 1, "de": 0, "fr": 0, "el": 0}


@pytest.mark.parametrize("pattern, within", [
    ("schuh", True), ("günstig|billig", True), (r"\d{2,}", True), ("[a-z]+ung", True),
    ("(?:ab|cd)e", True), ("[!-~]x", True), (r"[a\-z]", True), ("[]a]", True),
    (r"\.com", True), (r"[\!-~]", True), (r"\bnike\b", False), (r"\Bk", False),
    ("sch.h", False), ("^wie", False), ("kaufen$", False), ("[^a]", False), ("a b", False),
    (r"a\sb", False), (r"\W", False), (r"\D", False), ("(?i)a", False), ("[ -~]", False),
    ("[[:alpha:]]", False), (r"\pL", False), (r"\x20", False), (r"a\ b", False),
    (r"[\ ]", False), (r"\Aa", False), (r"a\z", False), (r"\Qa b\E", False)])
def test_what_lies_within_a_word_is_told_by_the_syntax(pattern, within):
    assert within_words(pattern) is within


def test_a_pattern_within_words_finds_exactly_what_it_finds_in_the_texts(api, world):
    """Counted from the project's folded distinct words: the same queries RE2 finds in their
    texts, the Kelvin sign and the long s (whose folds are k and s) included."""
    texts = ["\u212aelvin scale", "kelvin", "ſale now", "sale now", "Größe 42", "x-large",
             "café  au lait", "CAFÉS", "e-mail", "100% sale", "a_b", "nike air", "NIKE"]
    world.add_queries([(text, "en", "US", []) for text in texts])
    for pattern in (r"k\w+", "[a-z]ale", r"s\w+", "[k]elvin", r"\w{5}", r"\d+%", "x-l",
                    "caf[eé]s?", "[ſ]", "gr[öo]", r"_\w", r"[j-l]\S"):
        assert within_words(pattern), pattern
        answer = api.queries(pattern=pattern, limit=100)
        assert answer.status_code == 200, answer.text
        found = sorted(row["query"] for row in answer.json()["results"])
        assert found == sorted(t for t in texts if compile_pattern(pattern).search(t)), pattern


@pytest.mark.parametrize("pattern, required", [
    ("^(wie|was|wo) ", ["wie", "was", "wo"]), ("schuh.*kaufen", ["schuh"]),
    ("abc+", ["ab"]), ("^kaufen\\b", ["kaufen"]), ("(?:gün|bil)stig", ["gün", "bil"]),
    ("ab\\.cd", ["ab"]), ("^(a|bc)x", None), ("(ab)?c", None), ("ab*c", None),
    ("a|bc", None), ("(wie|was)|x", None), ("[ab]cd", None), ("\\d+ euro", None),
    ("(?i)ab", None), ("(wie|w(a)s)", None), ("x(ab)", None), ("ΐx|y", None)])
def test_what_every_match_must_hold_is_told_by_the_syntax(pattern, required):
    assert required_literals(pattern) == required
    if required:  # never a text that matches without one of them
        for text in ("wie geht", "was", "schuh kaufen", "abcc", "kaufen jetzt", "günstig",
                     "ab.cd", "WIE GEHT", "Schuhe zum Kaufen"):
            if compile_pattern(pattern).search(text):
                assert any(literal in fold(text) for literal in required), (pattern, text)
