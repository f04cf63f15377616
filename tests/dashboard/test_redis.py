"""With TAGDESK_REDIS_URL the session store and the sign-in throttle live in Redis, shared by
every process (TAGDESK_TEST_REDIS=1 runs these)."""

from __future__ import annotations

import pytest

from app import create_app
from tests.support.dashboard import AuthActions, close_app
from tests.support.databases import REDIS_URL

pytestmark = pytest.mark.redis


@pytest.fixture
def redis_apps(shop, dashboard_config, tmp_path):
    import redis

    connection = redis.Redis.from_url(REDIS_URL)
    connection.ping()
    apps = [create_app({**dashboard_config, "REDIS_URL": REDIS_URL,
                        "INSTANCE_PATH": str(tmp_path / f"instance{i}")}) for i in range(2)]
    yield apps, connection
    for app in apps:
        close_app(app)


def test_sessions_live_in_redis_and_sign_out_deletes_them(redis_apps, shop):
    (first, second), connection = redis_apps
    auth = AuthActions(first.test_client(), shop)
    auth.sign_in()
    sid = auth.client.get_cookie("tagdesk_session").value
    stored = connection.get("tagdesk:session:" + sid)
    assert stored and shop.key.encode() in stored
    # Another process (another app) serves the same signed-in session.
    other = second.test_client()
    other.set_cookie("tagdesk_session", sid)
    assert other.get("/projects").status_code == 200
    auth.sign_out()
    assert connection.get("tagdesk:session:" + sid) is None
    assert other.get("/projects").status_code == 302


def test_the_sign_in_throttle_is_shared(redis_apps, shop):
    (first, second), _ = redis_apps
    address = {"REMOTE_ADDR": "10.9.8.7"}
    for app in (first, second) * 5:
        AuthActions(app.test_client(), shop).sign_in("tdk_live_wrong", environ_base=address)
    refused = AuthActions(second.test_client(), shop).sign_in(environ_base=address)
    assert refused.status_code == 429
