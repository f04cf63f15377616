"""The dashboard in tests: closing an app (its job runner, jobs store, embedded service), the
service it embeds, CSRF tokens from pages, signing in and out of a test client, a counter of
the embedded service's requests, and the sample queries of the `shop` fixture
(tests/dashboard/conftest.py).
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from jobs.store import Store

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')
CSRF_META = re.compile(r'<meta name="csrf-token" content="([^"]+)"')

# Queries of the `world` fixture's "Shop search" project: (query, language, country, tags).
SAMPLE = [
    ("running shoes", "en", "US", ["brand"]),
    ("cheap running shoes", "en", "GB", ["sale", "brand"]),
    ("laufschuhe herren", "de", "DE", ["sale"]),
    ("laufschuhe damen", "de", "AT", ["local"]),
    ("chaussures de course", "fr", "FR", ["question"]),
    ("zapatillas running", "es", "ES", []),
    ("where to buy running shoes", "en", "US", ["question", "local"]),
]
FILLER = 60  # plain queries so that there are several pages
TOTAL = len(SAMPLE) + FILLER  # the queries of the `shop` fixture's project


def close_app(app) -> None:
    runner = app.extensions.get("tagdesk_runner")
    if runner is not None:
        runner.shutdown(wait=True)
    Store.forget(app.config["JOBS_DATABASE_URL"])
    embedded = app.extensions.get("tagdesk_embedded")
    if embedded is not None:
        embedded.stop()
    app.extensions["tagdesk_registry"].close()


class EmbeddedService:
    """For a record of a dashboard app (its `app`) that embeds the service: that service's
    Flask app, as `service_app`."""

    @property
    def service_app(self):
        return self.app.extensions["tagdesk_embedded"].service_app


class ServiceRequests:
    """Counts the requests the embedded service answers (by path)."""

    def __init__(self, service_app):
        self.paths: Counter[str] = Counter()
        inner = service_app.wsgi_app

        def counting(environ, start_response):
            self.paths[environ.get("PATH_INFO", "")] += 1
            return inner(environ, start_response)

        service_app.wsgi_app = counting

    @property
    def total(self) -> int:
        return sum(self.paths.values())

    def reset(self) -> None:
        self.paths.clear()


def csrf_token(html: str) -> str:
    match = CSRF_FIELD.search(html) or CSRF_META.search(html)
    assert match, "no CSRF token in the page"
    return match.group(1)


class AuthActions:
    def __init__(self, client, world):
        self.client = client
        self.world = world

    def token(self, path: str = "/signin") -> str:
        return csrf_token(self.client.get(path).get_data(as_text=True))

    def sign_in(self, key: str | None = None, next_url: str | None = None,
                display_name: str | None = None, **kwargs):
        url = "/signin" + (f"?next={next_url}" if next_url else "")
        data = {"csrf_token": self.token(), "api_key": self.world.key if key is None else key}
        if display_name is not None:
            data["display_name"] = display_name
        return self.client.post(url, data=data, **kwargs)

    def sign_out(self):
        page = self.client.get("/projects").get_data(as_text=True)
        return self.client.post("/signout", data={"csrf_token": csrf_token(page)})


def project_url(world, *, suffix: str = "queries", query: str = "") -> str:
    return f"/projects/{world.project_id}/{suffix}" + (f"?{query}" if query else "")


def row_queries(html: str) -> list[str]:
    """The query texts of the result rows, in order."""
    return re.findall(r'<td class="col-query">([^<]*)</td>', html)


# --- one dashboard for a module of tests that only read ------------------------------------------


@dataclass
class Reading:
    """A dashboard made once for a module: its `app`, the `world` of the `shop` fixture
    (tests/dashboard/conftest.py) and a test `client` signed in with its key."""

    app: object
    world: object  # tests/support/world.py's World
    client: object


@contextmanager
def dashboard_to_read(folder: Path, sqlite_template: Path, jobs_template: Path
                      ) -> Iterator[Reading]:
    """What the `app`, `shop` and `signed_in` fixtures give a test, made the same way once in
    `folder`: for a module whose tests only read (one each took ~0.35 s of CPU to make)."""
    import service
    from app import create_app
    from tests.support.world import UNLIMITED, World

    database = folder / "service.sqlite3"
    shutil.copy(sqlite_template, database)
    service_config = {"TESTING": True, "DATABASE_URL": f"sqlite:///{database}",
                      "REDIS_URL": None, "DEFAULT_LIMITS": UNLIMITED}
    service_app = service.create_app(service_config)
    world = World.made(service_app)
    world.add_queries(SAMPLE)
    world.add_queries([(f"filler query {i:03d}", "en", "US", []) for i in range(FILLER)])
    instance = folder / "instance"
    instance.mkdir()
    shutil.copy(jobs_template, instance / "dashboard.sqlite3")
    app = create_app({"TESTING": True, "INSTANCE_PATH": str(instance),
                      "SECRET_KEY": "dashboard-test-secret", "SERVICE_CONFIG": service_config,
                      "DEMO_QUERIES": 60})
    try:
        client = app.test_client()
        AuthActions(client, world).sign_in()
        yield Reading(app, world, client)
    finally:
        close_app(app)
        service_app.extensions["tagdesk_engine"].dispose()
