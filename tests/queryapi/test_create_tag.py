"""Client.create_tag and Client.capabilities: against the live service (which offers the
extension), the same service behind a proxy that hides it, and tiny real servers for answers
the service never gives (a lost answer, a 503, a 429). Creating is not safe to repeat, so the
client sends it again only when it certainly did nothing."""

from __future__ import annotations

import pytest

from queryapi import (
    NUMBER_NAMES,
    ApiError,
    Capabilities,
    Client,
    Conflict,
    InvalidRequest,
    Mode,
    NotFound,
    RateLimited,
    Tag,
    TransportError,
    Unavailable,
)
from tests.support.clients import FAST
from tests.support.reference_proxy import EXTENSION_FIELDS, WithoutExtensions
from tests.support.servers import LiveServer

from .servers import Answer, RawServer, TinyServer, closed_port, hang_up_before_answer, routes

KEY = "tdk_live_Y3JlYXRpbmcgYSB0YWcgdGhyb3VnaCB0aGUgY2xpZW50IG9rIG9rIG9r"
PROJECT = "6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d"
CREATE = "/api/tags/create"
OPENAPI = "/api/openapi.json"
DOCUMENT = {"openapi": "3.1.0", "info": {"title": "x", "version": "1"}, "paths": {
    "/api/tags/list": {"post": {"operationId": "listTags"}},
    CREATE: {"post": {"operationId": "createTag", "x-tagdesk-extension": True}}}}
CREATED = {"id": 77, "project": PROJECT, "name": "winter sale", "color": "#0052cc"}


# --- the live service ------------------------------------------------------------------------


def test_the_service_offers_creating_tags_and_the_document_is_read_once(client):
    assert client.capabilities() == Capabilities(create_tag=True, tag_logic=True,
                                                 saved_views=True, rules=True,
                                                 rule_apply=True, tag_editing=True,
                                                 tag_merging=True, tag_edits=True,
                                                 query_versions=True, imports=True,
                                                 common_words=True, suggestions=True,
                                                 filter_fields=EXTENSION_FIELDS,
                                                 numbers=NUMBER_NAMES)
    assert client.capabilities().create_tag
    assert client.stats.requests == 1


def test_create_tag_returns_the_new_tag_which_is_then_listed(client, world):
    tag = client.create_tag(world.project_id, "Winter Sale", "#0052CC")
    assert tag == Tag(tag.id, world.project_id, "Winter Sale", "#0052cc")
    assert tag in list(client.iter_tags(world.project_id))
    picked = client.create_tag(world.project_id, "  spring  ")
    assert picked.name == "spring" and picked.color.startswith("#") and len(picked.color) == 7


def test_a_taken_name_is_a_conflict_with_the_services_sentence(client, world):
    with pytest.raises(Conflict) as caught:
        client.create_tag(world.project_id, "BRAND")
    assert caught.value.status == 409
    assert str(caught.value) == 'A tag named "brand" already exists in this project.'
    assert client.stats.requests == 1  # not sent again


@pytest.mark.parametrize(("name", "color", "sentence"), [
    ("x", "red", "'color': must be # followed by six hexadecimal digits, such as #1f77b4."),
    ("tab\there", None, "'name': must not contain control characters or unpaired surrogates."),
    ("   ", None, "'name': must not be empty or only spaces."),
])
def test_what_the_service_refuses_is_an_invalid_request_in_its_words(
        client, world, name, color, sentence):
    with pytest.raises(InvalidRequest) as caught:
        client.create_tag(world.project_id, name, color)
    assert caught.value.details == [sentence]
    assert str(caught.value) == sentence


def test_names_and_colours_that_are_not_text_are_refused_before_sending(client, world):
    for name, color in ((5, None), (None, None), ("x", 0x1F77B4)):
        with pytest.raises(InvalidRequest):
            client.create_tag(world.project_id, name, color)
    with pytest.raises(InvalidRequest):
        client.create_tag("", "x")
    assert client.stats.requests == 0


def test_another_organizations_project_is_not_found(client, world):
    _org, _key, their_project = world.new_org("Rival")
    with pytest.raises(NotFound):
        client.create_tag(their_project, "planted")


def test_a_rate_limited_create_is_a_rate_limited_error_and_creates_nothing(make_client, world):
    world.set_limits(1000, 1, 100_000)
    client = make_client()
    client.create_tag(world.project_id, "first")
    with pytest.raises(RateLimited) as caught:
        client.create_tag(world.project_id, "second")
    assert caught.value.retry_after > 2  # more than the interactive budget: not waited for
    world.set_limits(1000, 1000, 100_000)
    assert "second" not in {tag.name for tag in make_client().iter_tags(world.project_id)}


# --- a deployment without the extension --------------------------------------------------------


def test_the_service_without_the_extension_offers_nothing_and_answers_not_found(
        without_extensions, world):
    with Client(without_extensions.url, world.key) as client:
        assert client.capabilities() == Capabilities(create_tag=False)
        assert client.stats.requests == 1
        with pytest.raises(NotFound):
            client.create_tag(world.project_id, "nowhere")
        # The reference's endpoints answer as ever.
        assert {tag.name for tag in client.iter_tags(world.project_id)} == {
            "brand", "sale", "question", "local"}


def test_without_a_document_nothing_is_offered_and_that_is_remembered(service_app, world):
    proxy = WithoutExtensions(service_app, document=False)
    server = LiveServer(proxy).start()
    try:
        with Client(server.url, world.key) as client:
            for _ in range(3):
                assert client.capabilities() == Capabilities()
            assert proxy.requests.count(("GET", OPENAPI)) == 1
    finally:
        server.stop()


@pytest.mark.parametrize("document", [
    {"openapi": "3.1.0", "paths": {CREATE: {"post": {"operationId": "createTag"}}}},
    {"openapi": "3.1.0", "paths": {CREATE: {"get": {"x-tagdesk-extension": True}}}},
    {"openapi": "3.1.0", "paths": {"/api/tags/list": {"post": {"x-tagdesk-extension": True}}}},
    {"openapi": "3.1.0", "paths": {CREATE: {"post": {"x-tagdesk-extension": "yes"}}}},
    {"openapi": "3.1.0", "paths": []},
    {"openapi": "3.1.0"},
    ["not", "a", "document"],
    "a string",
])
def test_only_a_marked_post_operation_counts_as_offered(document):
    with (TinyServer(routes({("GET", OPENAPI): lambda s: Answer(200, document)})) as server,
          Client(server.url, KEY) as client):
        assert client.capabilities() == Capabilities(create_tag=False)


@pytest.mark.parametrize("status", [401, 403, 404, 405, 410])
def test_a_document_refused_with_a_4xx_offers_nothing(status):
    body = {"statusCode": status, "message": "No.", "error": "No"}
    with (TinyServer(routes({("GET", OPENAPI): lambda s: Answer(status, body)})) as server,
          Client(server.url, KEY) as client):
        assert client.capabilities() == Capabilities(create_tag=False)
        assert client.capabilities() == Capabilities(create_tag=False)
        assert len(server.seen) == 1


@pytest.mark.parametrize(("answer", "error"), [
    (Answer(503, {"statusCode": 503}, {"Retry-After": "30"}), Unavailable),
    (Answer(429, {"statusCode": 429}, {"Retry-After": "30"}), RateLimited),
    (Answer(500, {"statusCode": 500}), ApiError),
    (Answer(200, b"<html>hello</html>", {"Content-Type": "text/html"}), TransportError),
])
def test_a_busy_or_odd_service_raises_and_is_asked_again_next_time(answer, error):
    answers = iter([answer, Answer(200, DOCUMENT)])
    with (TinyServer(routes({("GET", OPENAPI): lambda s: next(answers)})) as server,
          Client(server.url, KEY) as client):
        with pytest.raises(error):
            client.capabilities()
        assert client.capabilities() == Capabilities(create_tag=True)
        assert len(server.seen) == 2


# --- not safe to repeat ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_a_lost_answer_is_not_sent_again(mode):
    with (RawServer(hang_up_before_answer) as server,
          Client(server.url, KEY, mode, **FAST) as client):
        with pytest.raises(TransportError):
            client.create_tag(PROJECT, "once")
        assert server.accepted == 1
        # A call that is safe to repeat, on the same client, is repeated as ever.
        with pytest.raises(TransportError):
            client.list_tags(PROJECT)
        assert server.accepted > 2


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_a_503_is_not_waited_out_and_sent_again(mode):
    unavailable = Answer(503, {"statusCode": 503, "message": "Busy.", "error": "x"},
                         {"Retry-After": "0"})
    with (TinyServer(routes({("POST", CREATE): lambda s: unavailable})) as server,
          Client(server.url, KEY, mode, **FAST) as client):
        with pytest.raises(Unavailable):
            client.create_tag(PROJECT, "once")
        assert len(server.seen) == 1


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_a_429_did_nothing_so_it_is_sent_again_after_the_wait(mode):
    answers = iter([Answer(429, {"statusCode": 429}, {"Retry-After": "0"}),
                    Answer(201, CREATED)])
    with (TinyServer(routes({("POST", CREATE): lambda s: next(answers)})) as server,
          Client(server.url, KEY, mode, **FAST) as client):
        assert client.create_tag(PROJECT, "winter sale") == Tag(77, PROJECT, "winter sale",
                                                               "#0052cc")
        assert len(server.seen) == 2
        sent = server.seen[-1]
        assert sent.body == {"name": "winter sale"}
        assert sent.headers["x-project-id"] == PROJECT
        assert sent.headers["x-api-key"] == KEY
        assert sent.headers["content-type"] == "application/json"


def test_a_connection_that_could_not_be_opened_is_tried_again():
    with Client(closed_port(), KEY) as client:
        with pytest.raises(TransportError):
            client.create_tag(PROJECT, "never sent")
        assert client.stats.requests == 2


def test_an_answer_that_is_not_a_tag_is_a_readable_error():
    with (TinyServer(routes({("POST", CREATE): lambda s: Answer(201, {"id": "x"})})) as server,
          Client(server.url, KEY) as client, pytest.raises(ApiError) as caught):
        client.create_tag(PROJECT, "odd")
    assert str(caught.value).startswith(
        f"The service's answer to POST {CREATE} could not be read:")
