"""The real service with its database out of reach: every call is 503 with Retry-After: 30."""

from __future__ import annotations

import time

import pytest

from queryapi import Mode, Unavailable
from tests.support.clients import FAST

KEY = "tdk_live_bm90IGEgcmVhbCBrZXkgYnV0IGxvbmcgZW5vdWdoIHRvIGxvb2s1234"


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config,
            "DATABASE_URL": f"sqlite:///{tmp_path}/no/such/directory/tagdesk.sqlite3"}


@pytest.fixture
def client_of(live_service):
    from queryapi import Client

    made = []

    def make(mode, **options):
        made.append(Client(live_service.url, KEY, mode, **options))
        return made[-1]

    yield make
    for client in made:
        client.close()


def test_interactive_raises_unavailable_with_the_wait(client_of):
    page = client_of(Mode.INTERACTIVE)
    started = time.monotonic()
    with pytest.raises(Unavailable) as caught:
        page.list_projects()
    assert time.monotonic() - started < 1
    assert caught.value.status == 503 and caught.value.retry_after == 30
    assert page.stats.unavailable == 1 and page.stats.slept == 0


def test_background_retries_with_backoff_then_gives_up(client_of):
    job = client_of(Mode.BACKGROUND, **FAST)
    with pytest.raises(Unavailable) as caught:
        job.list_tags("6f0d8a5e-3c1b-4b5e-9d7a-2f1e0c9b8a7d")
    assert caught.value.retry_after == 30
    stats = job.stats
    assert stats.requests == 4 and stats.unavailable == 4
    assert stats.slept == pytest.approx(0.05 + 0.1 + 0.2)
