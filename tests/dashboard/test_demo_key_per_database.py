"""The demo key printed at start-up is always one that works for the database being served,
even when one instance folder serves several databases in turn (another SQLite file, or
TAGDESK_DATABASE_URL pointed elsewhere): each database keeps its own demo key and
administrator, and a kept key that no longer answers (revoked, or of another database) is
neither printed nor offered."""

from __future__ import annotations

import requests
from sqlalchemy import update

from app import create_app
from service.store.db import session_scope
from service.store.models import ApiKey
from tests.support.dashboard import close_app
from tests.support.servers import live_servers


def config_for(dashboard_config, tmp_path, name: str) -> dict:
    service = {**dashboard_config["SERVICE_CONFIG"],
               "DATABASE_URL": f"sqlite:///{tmp_path / name}"}
    return {**dashboard_config, "SERVICE_CONFIG": service}


def answers(server, key: str) -> int:
    return requests.get(f"{server.url}/api/projects/list",
                        headers={"x-api-key": key}, timeout=10).status_code


def test_each_database_keeps_a_demo_key_that_works_for_it(dashboard_config, tmp_path):
    first, second = (config_for(dashboard_config, tmp_path, name)
                     for name in ("first.sqlite3", "second.sqlite3"))
    with live_servers(create_app, close_app) as start:
        one = start(first)
        first_key = one.app.config["DEMO_KEY"]
        assert answers(one, first_key) == 200
        two = start(second)  # same instance folder, another database: seeded anew
        second_key = two.app.config["DEMO_KEY"]
        assert second_key != first_key and answers(two, second_key) == 200
        again = start(first)
        assert again.app.config["DEMO_KEY"] == first_key
        assert answers(again, again.app.config["DEMO_KEY"]) == 200
        assert again.app.config["DEMO_ADMIN"] == one.app.config["DEMO_ADMIN"]


def test_a_revoked_demo_key_is_not_printed_or_offered(dashboard_config):
    with live_servers(create_app, close_app) as start:
        first = start(dashboard_config)
        key = first.app.config["DEMO_KEY"]
        with session_scope(first.app.extensions["tagdesk_embedded"].service_app) as session:
            session.execute(update(ApiKey).values(revoked_at=ApiKey.created_at))
        again = start(dashboard_config)
        assert answers(again, key) == 401
        assert again.app.config["DEMO_KEY"] is None
        html = requests.get(f"{again.url}/signin", timeout=10).text
        assert "Use the demo key" not in html
