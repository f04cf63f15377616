"""POST /api/queries/words (an extension): the words and two-word phrases most of a view's
queries contain, each count exact (what the filter `query` of it finds among the view's
queries), against a brute force over the view's texts on random filters."""

import random

import pytest

from service.engine import common_words
from service.engine.folding import fold

WORDS = "/api/queries/words"
NOUNS = ["shoes", "boots", "jacket", "shoe", "socks", "tent", "bag", "schuhe", "stiefel",
         "chaussures", "veste", "sac"]
ADJECTIVES = ["running", "waterproof", "cheap", "warm", "trail", "günstig", "wasserdicht",
              "pas", "cher", "kids", "Damen", "ÜBERGANG"]
STOPPED = {"en": ["for", "the", "with"], "de": ["für", "die", "mit"], "fr": ["pour", "le", "de"]}
COUNTRIES = {"en": "US", "de": "DE", "fr": "FR"}


def generated(count: int, seed: int = 7) -> list[tuple]:
    """Queries of one to five words, stop words and short words among them, some punctuation,
    random tags."""
    chance = random.Random(seed)
    rows, seen = [], set()
    while len(rows) < count:
        language = chance.choice(list(STOPPED))
        words = [chance.choice(ADJECTIVES + STOPPED[language] + ["a", "xl", "2024", "–"])
                 for _ in range(chance.randint(0, 3))] + [chance.choice(NOUNS)]
        if chance.random() < 0.1:
            words[-1] += ","
        text = " ".join(words + ([chance.choice(NOUNS)] if chance.random() < 0.3 else []))
        if (text, language) in seen:
            continue
        seen.add((text, language))
        tags = [tag for tag in ("brand", "sale") if chance.random() < 0.3]
        rows.append((text, language, COUNTRIES[language], tags))
    return rows


def view_texts(api, body) -> list[str]:
    texts, page = [], 1
    while True:
        answer = api.queries(**body, page=page, limit=1000).json()
        texts += [record["query"] for record in answer["results"]]
        if answer["page"]["nextPage"] is None:
            return texts
        page += 1


def words_of(api, body) -> dict:
    response = api.post(WORDS, body)
    assert response.status_code == 200, response.text
    return response.json()


def kept_tokens(text: str, stopped: set[str]) -> list[str]:
    bare = [word.strip("–,") for word in fold(text).split(" ") if word]
    return [word if len(word) > 2 and word not in stopped else "" for word in bare]


def check_exact(answer: dict, texts: list[str], body: dict, limit: int, whole: bool) -> None:
    """Every count is the number of the view's texts holding the text; the lists are in
    order; and (when the whole view was the sample) nothing left out was in more of the
    view's texts as a word or phrase than the last one given."""
    folded = [fold(text) for text in texts]
    assert answer["totalRecords"] == len(texts)
    languages = set(body.get("languages") or STOPPED)
    stopped = set().union(*(common_words.stop_words(language) for language in languages))
    assert {word for language in languages for word in STOPPED[language]} <= stopped
    for name in ("words", "phrases"):
        given = answer[name]
        assert len(given) <= limit
        assert [(-item["count"], item["text"]) for item in given] == sorted(
            (-item["count"], item["text"]) for item in given)
        for item in given:
            assert item["count"] == sum(item["text"] in text for text in folded), item
            assert all(word not in stopped for word in item["text"].split(" "))
            assert len(item["text"].split(" ")) == (1 if name == "words" else 2)
        if not whole or len(given) < limit:
            continue
        shown = {item["text"] for item in given}
        seen: dict[str, int] = {}
        for text in texts:
            tokens = kept_tokens(text, stopped)
            found = set(tokens) if name == "words" else {
                f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)
                if a and b and f"{a} {b}" in fold(text)}
            for token in found - {""}:
                seen[token] = seen.get(token, 0) + 1
        lowest = given[-1]["count"]
        missed = {token: count for token, count in seen.items()
                  if token not in shown and count > lowest}
        assert not missed, (name, given, missed)


@pytest.fixture
def rows(world):
    made = generated(400)
    world.add_queries(made)
    return made


def random_filter(chance: random.Random, world) -> dict:
    body = {}
    if chance.random() < 0.5:
        body["languages"] = chance.sample(sorted(STOPPED), chance.randint(1, 2))
    choice = chance.random()
    if choice < 0.25:
        body["untagged"] = True
    elif choice < 0.5:
        body["tagIds"] = [world.tags["brand"]]
    elif choice < 0.6:
        body["excludeTagIds"] = [world.tags["sale"]]
    if chance.random() < 0.3:
        body["query"] = chance.choice(["sho", "cheap", "e", "boots"])
    return body


def test_counts_are_exact_and_the_first_ones_found_on_random_filters(api, world, rows):
    chance = random.Random(11)
    for _ in range(12):
        body = random_filter(chance, world)
        limit = chance.choice([3, 5, 20])
        answer = words_of(api, {**body, "limit": limit})
        check_exact(answer, view_texts(api, body), body, limit, whole=True)


def test_a_view_larger_than_the_sample_still_counts_exactly(api, world, rows, monkeypatch):
    monkeypatch.setattr(common_words, "SAMPLED", 50)
    for body in ({}, {"untagged": True}, {"languages": ["de"]}):
        answer = words_of(api, {**body, "limit": 10})
        assert answer["words"] and answer["phrases"]
        check_exact(answer, view_texts(api, body), body, 10, whole=False)


def test_stop_words_of_the_views_languages_are_left_out_and_twenty_by_default(api, world):
    world.add_queries([("the best shoes for the trail", "en", "US", []),
                       ("die besten schuhe für den trail", "de", "DE", []),
                       ("the", "de", "DE", [])])
    answer = words_of(api, {})
    texts = [item["text"] for item in answer["words"]]
    assert "the" not in texts and "for" not in texts and "für" not in texts
    assert {"best", "shoes", "trail", "besten", "schuhe"} <= set(texts)
    # English stop words are words of a German view all the same.
    german = [item["text"] for item in words_of(api, {"languages": ["de"]})["words"]]
    assert "the" in german and "die" not in german
    assert {"text": "best shoes", "count": 1} in answer["phrases"]
    many = [(f"word{number} thing{number}", "en", "US", []) for number in range(30)]
    world.add_queries(many)
    assert len(words_of(api, {})["words"]) == 20


def test_an_empty_view_has_no_words(api, world, rows):
    assert words_of(api, {"query": "nothing like this"}) == {
        "totalRecords": 0, "words": [], "phrases": []}


@pytest.mark.parametrize(("body", "message"), [
    ({"limit": 0}, "'limit': Input should be greater than or equal to 1."),
    ({"limit": 51}, "'limit': Input should be less than or equal to 50."),
    ({"limit": "5"}, "'limit': Input should be a valid integer."),
    ({"sort": []}, "Unknown field 'sort'."),
    ({"untagged": True, "tagIds": [1]}, "'untagged': queries with no tag cannot also have one "
                                        "of 'tagIds' or 'tagNames'; send one or the other."),
])
def test_bad_bodies_are_a_400_with_a_sentence(api, rows, body, message):
    response = api.post(WORDS, body)
    assert response.status_code == 400, response.text
    assert response.json()["message"] == [message]


def test_another_organizations_project_is_not_found(api, world, rows):
    _org, _key, other_project = world.new_org()
    response = api.post(WORDS, {}, **{"x-project-id": other_project})
    assert response.status_code == 404, response.text
    assert response.json()["message"] == "Project not found."


def test_is_in_the_openapi_document_as_an_extension(api):
    document = api.call("GET", "/api/openapi.json").json()
    assert document["paths"][WORDS]["post"]["x-tagdesk-extension"] is True


def test_a_write_is_seen_by_the_next_call(api, world):
    world.add_queries([("alpine boots", "en", "US", []), ("alpine tent", "en", "US", [])])
    before = words_of(api, {"untagged": True})
    assert {"text": "alpine", "count": 2} in before["words"]
    tagged = api.set_tags([{"query": "alpine tent", "language": "en", "country": "US",
                            "tagIds": [world.tags["brand"]]}])
    assert tagged.status_code == 200, tagged.text
    after = words_of(api, {"untagged": True})
    assert {"text": "alpine", "count": 1} in after["words"]
    assert "tent" not in {item["text"] for item in after["words"]}


def test_after_a_write_a_large_views_counts_are_exact_again(api, world, rows, monkeypatch):
    monkeypatch.setattr(common_words, "SAMPLED", 50)
    body = {"untagged": True}
    words_of(api, {**body, "limit": 10})
    for text, language, country, _tags in rows[:3]:
        tagged = api.set_tags([{"query": text, "language": language, "country": country,
                                "tagIds": [world.tags["sale"]]}])
        assert tagged.status_code == 200, tagged.text
        check_exact(words_of(api, {**body, "limit": 10}), view_texts(api, body), body, 10,
                    whole=False)
