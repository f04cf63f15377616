"""503s, refused and dropped connections, silence; and the key kept out of every trace."""

from __future__ import annotations

import logging
import time
import traceback

import pytest

from queryapi import (
    ApiError,
    AuthError,
    Client,
    InvalidRequest,
    Mode,
    NotFound,
    RateLimited,
    TransportError,
    Unavailable,
)
from tests.support.clients import FAST

from .servers import (
    FlakyProxy,
    RawServer,
    closed_port,
    closes_kept_alive_connection_as_the_next_request_arrives,
    hang_up_before_answer,
    hang_up_mid_body,
    never_answer,
)

KEY = "tdk_live_Q2hhbmdlIG1lIGJlZm9yZSBwcm9kdWN0aW9uIHBsZWFzZQ9f2c"


def assert_no_key(error: BaseException, key: str) -> None:
    texts = [str(error), repr(error), "".join(traceback.format_exception(error))]
    for text in texts:
        assert key not in text
    # nothing chained: requests' exceptions hold the request, headers and all
    assert error.__cause__ is None and error.__context__ is None


# --- 503 ---------------------------------------------------------------------------------


def test_background_rides_out_503s_from_a_proxy(live_service, world, make_client):
    with FlakyProxy(live_service.url, failures=3) as proxy:
        job = make_client(Mode.BACKGROUND, url=proxy.url, **FAST)
        started = time.monotonic()
        projects = job.all_projects()
        elapsed = time.monotonic() - started
    assert {p.id for p in projects} == {world.project_id, world.other_project_id}
    stats = job.stats
    assert stats.unavailable == 3 and stats.requests == 4 and proxy.forwarded == 1
    # 0.05, then doubling: the Retry-After of 30 s gives way to the configured base
    assert stats.slept == pytest.approx(0.05 + 0.1 + 0.2)
    assert elapsed < 2


def test_background_gives_up_after_its_retries(live_service, make_client):
    with FlakyProxy(live_service.url, failures=100, retry_after="30") as proxy:
        job = make_client(Mode.BACKGROUND, url=proxy.url, **FAST)
        with pytest.raises(Unavailable) as caught:
            job.list_projects()
    assert caught.value.retry_after == 30 and caught.value.status == 503
    assert job.stats.unavailable == 4 and job.stats.requests == 4  # 1 + 3 retries


def test_interactive_reports_503_at_once(live_service, make_client):
    with FlakyProxy(live_service.url, failures=1) as proxy:
        page = make_client(url=proxy.url)
        started = time.monotonic()
        with pytest.raises(Unavailable) as caught:
            page.list_projects()
        assert time.monotonic() - started < 1
        assert caught.value.retry_after == 30
        assert str(caught.value) == (
            "The service is temporarily unavailable; retry in 30 seconds.")
        assert page.list_projects().results  # the banner's retry succeeds
    assert page.stats.unavailable == 1 and page.stats.slept == 0


def test_interactive_waits_for_a_503_that_asks_for_a_moment(live_service, make_client):
    with FlakyProxy(live_service.url, failures=1, retry_after="1") as proxy:
        page = make_client(url=proxy.url)
        assert page.list_projects().results
    assert page.stats.slept == 1 and page.stats.requests == 2


# --- transport -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_refused_connection(mode):
    url = closed_port()
    with Client(url, KEY, mode, **FAST) as client:
        with pytest.raises(TransportError) as caught:
            client.list_projects()
        expected_attempts = 2 if mode is Mode.INTERACTIVE else 4
        assert client.stats.requests == expected_attempts
    error = caught.value
    assert error.status is None
    assert str(error) == (f"Could not connect to the service at {url}: the connection was "
                          "refused or the host could not be found.")
    assert_no_key(error, KEY)


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_read_timeout(mode):
    with RawServer(never_answer) as silent, Client(silent.url, KEY, mode, timeout=(1, 0.3),
                                                   **FAST) as client:
        started = time.monotonic()
        with pytest.raises(TransportError) as caught:
            client.list_tags("6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d")
        elapsed = time.monotonic() - started
        attempts = 1 if mode is Mode.INTERACTIVE else 4
        assert client.stats.requests == attempts and silent.accepted == attempts
    assert str(caught.value) == f"The service at {silent.url} did not answer within 0.3 seconds."
    assert 0.3 * attempts <= elapsed < 0.3 * attempts + 1
    assert_no_key(caught.value, KEY)


@pytest.mark.parametrize("behaviour", [hang_up_mid_body, hang_up_before_answer])
@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_dropped_connection(behaviour, mode):
    with RawServer(behaviour) as rude, Client(rude.url, KEY, mode, **FAST) as client:
        with pytest.raises(TransportError) as caught:
            client.list_projects()
        if mode is Mode.BACKGROUND:
            assert client.stats.requests == 4 and rude.accepted == 4
        elif behaviour is hang_up_before_answer:
            # Interactive: once more at once, on a new connection, then the error.
            assert client.stats.requests == 2 and rude.accepted == 2
        else:
            assert client.stats.requests == 1
    assert "was dropped before the answer was complete" in str(caught.value)
    assert_no_key(caught.value, KEY)


@pytest.mark.parametrize("mode", [Mode.INTERACTIVE, Mode.BACKGROUND])
def test_a_kept_alive_connection_closed_as_it_is_reused_costs_nothing(mode):
    """The service ends an idle kept-alive connection just as the next request goes out
    (clicks about its keep-alive time apart): the request is sent again on a new connection
    at once, and the person sees their page, not "the service cannot be reached"."""
    with RawServer(closes_kept_alive_connection_as_the_next_request_arrives()) as server, \
            Client(server.url, KEY, mode, **FAST) as client:
        project = "6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d"
        assert client.list_tags(project).results == ()
        started = time.monotonic()
        assert client.list_tags(project).results == ()
        assert time.monotonic() - started < 0.5
        assert server.accepted == 2


# --- the key -------------------------------------------------------------------------------


def test_the_key_never_shows(live_service, world, make_client, caplog):
    caplog.set_level(logging.DEBUG)
    for name in ("urllib3", "queryapi", "werkzeug"):
        caplog.set_level(logging.DEBUG, logger=name)
    key = world.key
    client = make_client(Mode.BACKGROUND, **FAST)
    assert key not in repr(client) and key not in str(vars(client))
    assert key not in repr(client._transport.session.auth)

    errors: list[ApiError] = []
    client.list_projects()
    for call in (lambda: client.list_queries("nope"),
                 lambda: client.list_queries("00000000-0000-4000-8000-000000000000"),
                 lambda: make_client(key=key[:-1] + "x").list_projects()):
        with pytest.raises(ApiError) as caught:
            call()
        errors.append(caught.value)
    assert [type(e) for e in errors] == [InvalidRequest, NotFound, AuthError]
    # The requests above already count against the new one-per-minute limit.
    world.set_limits(1000, 1, 100_000)
    page = make_client()
    with pytest.raises(RateLimited) as caught:
        page.list_projects()
    errors.append(caught.value)
    with pytest.raises(TransportError) as caught:
        Client(closed_port(), key, Mode.BACKGROUND, **FAST).list_projects()
    errors.append(caught.value)
    with RawServer(hang_up_mid_body) as rude, pytest.raises(TransportError) as caught:
        Client(rude.url, key, timeout=(1, 1)).list_projects()
    errors.append(caught.value)

    for error in errors:
        assert_no_key(error, key)
    assert caplog.records, "the debug logs were captured"
    assert any(r.name.startswith("urllib3") for r in caplog.records)
    assert key not in caplog.text
    assert all(key not in r.getMessage() for r in caplog.records)


def test_masking_of_other_key_shapes():
    from queryapi import mask

    assert mask("tdk_live_abcdefghijklmnopqrstuvwxyz9f2c") == "tdk_live_…9f2c"
    assert mask("sk-abcdefghijklmnopqrstuvwxyz1234") == "…1234"
    assert mask("tdk_live_short") == "tdk_live_…"  # too short to show any of it
    assert mask("tiny") == "…"
