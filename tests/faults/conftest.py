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

from service import create_app as create_service_app
from service import schema
from service.org import admin
from service.store.db import session_scope
from tests.support.world import UNLIMITED, small_org

from .processes import Gunicorn
from .stores import PrivatePostgres, PrivateRedis, require_binaries

CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
# What the service answers while its database or its rate-limit store is out of reach.
SERVICE_UNAVAILABLE = {
    "statusCode": 503,
    "message": "Service temporarily unavailable. Retry in 30 seconds.",
    "error": "Service Unavailable",
}
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

    def assert_service_unavailable(self, answer: requests.Response, *what) -> None:
        """`answer` is the service's 503 of an outage (`what`: the request, for the message)."""
        assert answer.status_code == 503, (*what, answer.text, self.logs())
        assert answer.headers["Retry-After"] == "30"
        assert answer.headers["Content-Type"] == "application/json"
        assert answer.json() == SERVICE_UNAVAILABLE

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
    app = create_service_app({"DATABASE_URL": url, "REDIS_URL": None})
    schema.upgrade(app.extensions["tagdesk_engine"])
    with session_scope(app) as session:
        org = small_org(session, "Fault org", "Fault project")
        admin.set_limits(session, org.org_id, *UNLIMITED)
        admin.insert_queries(session, org.project_id, [
            (*admin.normalize_query(*row), [], None) for row in QUERIES])
    app.extensions["tagdesk_engine"].dispose()
    return org.key, org.project_id, org.tags


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
