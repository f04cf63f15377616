"""Fixtures for the client's tests: clients of the live service in either mode."""

from __future__ import annotations

import pytest

from queryapi import Client, Mode
from tests.support.clients import FAST
from tests.support.reference_proxy import WithoutExtensions
from tests.support.servers import LiveServer
from tests.support.world import FOUR_QUERIES


@pytest.fixture
def make_client(live_service, world):
    made = []

    def make(mode=Mode.INTERACTIVE, key=None, url=None, **options):
        client = Client(url or live_service.url, key or world.key, mode, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def client(make_client):
    return make_client()


@pytest.fixture
def background(make_client):
    return make_client(Mode.BACKGROUND, **FAST)


@pytest.fixture
def without_extensions(service_app):
    """The live service behind a proxy that hides every extension (a deployment without
    them)."""
    server = LiveServer(WithoutExtensions(service_app)).start()
    yield server
    server.stop()


@pytest.fixture
def seeded(world):
    """The world with FOUR_QUERIES added (a module of its own rows defines its own)."""
    world.add_queries(FOUR_QUERIES)
    return world


LANGUAGES = ("en", "de", "fr", "es", "nl")


@pytest.fixture
def many_queries(world):
    """2,500 queries in the project, tagged 'sale' one in five."""
    rows = [(f"query number {i:04d}", LANGUAGES[i % 5], "US", ["sale"] if i % 5 == 0 else [])
            for i in range(2500)]
    world.add_queries(rows)
    return rows
