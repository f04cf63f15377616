"""One deployment for the fault tests, started once: a private PostgreSQL cluster and a private
Redis server (the shared ones on 5432 and 6379 are never touched), the service under gunicorn
on them (data in PostgreSQL, rate-limit counters in Redis), and the dashboard under gunicorn
pointed at it (sessions and the sign-in throttle in Redis). Each test leaves both stores
running again when it ends.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import requests
from sqlalchemy import create_engine

from service import admin, schema
from service import create_app as create_service_app
from service.db import session_scope
from tests.support.world import UNLIMITED

from .processes import Gunicorn
from .stores import PrivatePostgres, PrivateRedis, require_binaries

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
QUERIES = [("running shoes", "en", "US"), ("laufschuhe herren", "de", "DE"),
           ("chaussures de course", "fr", "FR")]


@dataclass
class Deployment:
    postgres: PrivatePostgres
    redis: PrivateRedis
    service: Gunicorn
    dashboard: Gunicorn
    key: str
    project_id: str
    tags: dict[str, int] = field(default_factory=dict)

    def api(self, method: str, path: str, json=None, timeout: float = 15) -> requests.Response:
        return requests.request(method, self.service.url + path, json=json, timeout=timeout,
                                headers={"x-api-key": self.key,
                                         "x-project-id": self.project_id})

    def sign_in(self) -> requests.Session:
        browser = requests.Session()
        page = browser.get(self.dashboard.url + "/signin", timeout=15)
        token = CSRF.search(page.text).group(1)
        answer = browser.post(self.dashboard.url + "/signin", timeout=15,
                              data={"csrf_token": token, "api_key": self.key})
        assert answer.status_code == 200 and "Sign out" in answer.text, answer.text[:500]
        return browser

    def page(self, browser: requests.Session, suffix: str = "queries", htmx: bool = False,
             timeout: float = 15) -> requests.Response:
        headers = {"HX-Request": "true"} if htmx else {}
        return browser.get(f"{self.dashboard.url}/projects/{self.project_id}/{suffix}",
                           headers=headers, timeout=timeout, allow_redirects=False)

    def logs(self) -> str:
        return (f"--- service log ---\n{self.service.output()}\n"
                f"--- dashboard log ---\n{self.dashboard.output()}")


def wait_for(check: Callable[[], bool], seconds: float, what: str) -> float:
    """Poll until `check()` is true; the seconds it took."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > seconds:
            pytest.fail(f"{what} did not happen within {seconds} s")
        time.sleep(0.05)
    return time.monotonic() - started


def _seed(url: str) -> tuple[str, str, dict[str, int]]:
    engine = create_engine(url)
    schema.upgrade(engine)
    engine.dispose()
    app = create_service_app({"DATABASE_URL": url, "REDIS_URL": None})
    with session_scope(app) as session:
        org_id = admin.create_org(session, "Fault org")
        admin.set_limits(session, org_id, *UNLIMITED)
        key = admin.create_key(session, org_id, "tdk")
        project_id = admin.create_project(session, org_id, "Fault project")
        tags = {name: admin.create_tag(session, project_id, name, color)
                for name, color in (("brand", "#1f77b4"), ("sale", "#ff7f0e"))}
        admin.insert_queries(session, project_id, [
            (*admin.normalize_query(*row), [], None) for row in QUERIES])
    app.extensions["tagdesk_engine"].dispose()
    return key, project_id, tags


@pytest.fixture(scope="session")
def deployment(tmp_path_factory):
    require_binaries()
    folder = tmp_path_factory.mktemp("faults")
    postgres, redis = PrivatePostgres(), PrivateRedis()
    started: list = []
    try:
        postgres.init().start()
        redis.start()
        key, project_id, tags = _seed(postgres.url)
        service = Gunicorn("service:create_app()", {
            "TAGDESK_DATABASE_URL": postgres.url,
            "TAGDESK_REDIS_URL": redis.url,
            "TAGDESK_SERVICE_SECRET_KEY": "fault-test-service-secret",
        }, folder / "service.log", "/api/openapi.json")
        started.append(service.launch())
        dashboard = Gunicorn(f"app:create_app({{'INSTANCE_PATH': {str(folder / 'dash')!r}}})", {
            "TAGDESK_API_URL": service.url,
            "TAGDESK_REDIS_URL": redis.url,
            "TAGDESK_SECRET_KEY": "fault-test-dashboard-secret",
        }, folder / "dashboard.log", "/signin")
        started.append(dashboard.launch())
        # Both start at once: the dashboard does not call the service until someone signs in.
        for process in started:
            process.wait_ready()
        yield Deployment(postgres, redis, service, dashboard, key, project_id, tags)
    finally:
        for process in reversed(started):
            process.stop()
        redis.remove()
        postgres.remove()
