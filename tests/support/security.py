"""The hostile-input and access tests' helpers: a browser-like HTTP visitor that can come from a
client address of its choosing (any 127.x.y.z reaches a server bound to 127.0.0.1), live
dashboards with their embedded service on loopback, organizations made through the service's
admin layer, and things a signed-in person does.
"""

from __future__ import annotations

import html
import random
import re
import shutil
from dataclasses import dataclass, field

import requests
from requests.adapters import HTTPAdapter

from app import create_app
from service.org import admin
from service.store.db import session_scope
from tests.support.dashboard import EmbeddedService, close_app, csrf_token
from tests.support.servers import LiveServer
from tests.support.world import UNLIMITED

DASHBOARD_COOKIE = "tagdesk_session"
SETTINGS_COOKIE = "tagdesk_settings"
SETTINGS_PASSWORD = "correct horse battery staple"  # noqa: S105 (a test account's)


def random_address() -> str:
    """A loopback client address of its own, so that per-address counters start at zero."""
    pick = random.SystemRandom().randint
    return f"127.{pick(1, 254)}.{pick(0, 255)}.{pick(1, 254)}"


class _SourceAddressAdapter(HTTPAdapter):
    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


class Visitor:
    """A browser-like client of a live server: keeps cookies, does not follow redirects,
    reads CSRF tokens from pages, and connects from its own client address."""

    def __init__(self, base_url: str, address: str | None = None):
        self.base_url = base_url
        self.address = address or random_address()
        self.http = requests.Session()
        adapter = _SourceAddressAdapter(self.address)
        self.http.mount("http://", adapter)

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("allow_redirects", False)
        kwargs.setdefault("timeout", 30)
        return self.http.request(method, self.base_url + path, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def token(self, path: str = "/signin") -> str:
        return csrf_token(self.get(path).text)

    def cookie(self, name: str = DASHBOARD_COOKIE) -> str | None:
        return next((c.value for c in self.http.cookies if c.name == name), None)

    def sign_in(self, key: str, next_url: str | None = None, name: str = "") -> requests.Response:
        params = {"next": next_url} if next_url is not None else None
        data = {"csrf_token": self.token(), "api_key": key, "display_name": name}
        return self.post("/signin", params=params, data=data)

    def settings_sign_in(self, email: str, password: str = SETTINGS_PASSWORD,
                         next_url: str | None = None) -> requests.Response:
        params = {"next": next_url} if next_url is not None else None
        data = {"csrf_token": self.token("/settings/signin"), "email": email,
                "password": password}
        return self.post("/settings/signin", params=params, data=data)


# --- organizations ----------------------------------------------------------------------------


@dataclass
class Org:
    """An organization made through the admin layer: its key, projects by name, tag ids by
    project name and tag name, and the query texts of each project."""

    name: str
    org_id: str
    key: str
    projects: dict[str, str] = field(default_factory=dict)
    tags: dict[str, dict[str, int]] = field(default_factory=dict)
    queries: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    email: str = ""

    @property
    def project_id(self) -> str:
        return next(iter(self.projects.values()))


def make_org(service_app, name: str, projects: dict, tags: dict[str, str],
             email: str | None = None, color_override: dict[str, str] | None = None) -> Org:
    """projects: {project name: [(query, language, country, [tag names]), …]}; every project
    gets the same tags {name: colour}. `color_override` writes colours the admin layer would
    refuse straight into the database (a service that sends hostile colours)."""
    with session_scope(service_app) as session:
        org_id = admin.create_org(session, name)
        key = admin.create_key(session, org_id, "tdk")
        admin.set_limits(session, org_id, *UNLIMITED)
        org = Org(name, org_id, key)
        for project_name in projects:
            project_id = admin.create_project(session, org_id, project_name)
            org.projects[project_name] = project_id
            org.tags[project_name] = {tag: admin.create_tag(session, project_id, tag, color)
                                      for tag, color in tags.items()}
        if email:
            from service.org import accounts

            accounts.create_user(session, org_id, email, SETTINGS_PASSWORD)
            org.email = email
    for project_name, rows in projects.items():
        normalized = [(*admin.normalize_query(q, lang, country),
                       [org.tags[project_name][n] for n in names], None)
                      for q, lang, country, names in rows]
        with session_scope(service_app) as session:
            admin.insert_queries(session, org.projects[project_name], normalized)
        org.queries[project_name] = [(q, lang, country) for q, lang, country, _ in rows]
    if color_override:
        from sqlalchemy import update

        from service.store.models import Tag

        with session_scope(service_app) as session:
            for tag_name, color in color_override.items():
                for project_tags in org.tags.values():
                    session.execute(update(Tag).where(Tag.id == project_tags[tag_name])
                                    .values(color=color))
    return org


# --- a live dashboard with its embedded service -------------------------------------------------


@dataclass
class Site(EmbeddedService):
    url: str
    app: object
    server: LiveServer

    def visitor(self, address: str | None = None) -> Visitor:
        return Visitor(self.url, address)

    def stop(self) -> None:
        self.server.stop()
        close_app(self.app)


def start_site(folder, sqlite_template, **config) -> Site:
    """A dashboard on a live loopback server, its service embedded on a fresh SQLite file
    (no demo: tests make their own organizations)."""
    database = folder / "service.sqlite3"
    shutil.copy(sqlite_template, database)
    service_config = {"TESTING": True, "DATABASE_URL": f"sqlite:///{database}",
                      "REDIS_URL": None, "DEFAULT_LIMITS": UNLIMITED,
                      **config.pop("SERVICE", {})}
    # An organization exists before the dashboard starts, so no demo is seeded.
    import service

    bootstrap = service.create_app(service_config)
    with session_scope(bootstrap) as session:
        admin.create_org(session, "Bystander")
    bootstrap.extensions["tagdesk_engine"].dispose()
    app = create_app({
        "TESTING": True,
        "INSTANCE_PATH": str(folder / "instance"),
        "SECRET_KEY": "security-" + folder.name,
        "SIGNIN_LIMIT": "10000/minute",
        "JOBS_RUNNER": "inline",
        "SERVICE_CONFIG": service_config,
        **config,
    })
    server = LiveServer(app).start()
    return Site(server.url, app, server)


# --- things a signed-in person does, for the tests that need them to exist ----------------------

ROW_KEY = re.compile(r'name="selected" value="([^"]+)"')
UNDO_URL = re.compile(r"/projects/[^/]+/edits/([^/]+)/undo")


def row_keys(visitor: Visitor, project_id: str, query: str = "") -> list[str]:
    """The row identities (checkbox values) a queries page shows."""
    page = visitor.get(f"/projects/{project_id}/queries{query}")
    assert page.status_code == 200, page.status_code
    return [html.unescape(value) for value in ROW_KEY.findall(page.text)]


def tag_rows(visitor: Visitor, project_id: str, tag_id: int, keys: list[str],
             action: str = "add") -> str:
    """An in-page edit of these rows, as the tag picker sends it; returns the edit's id."""
    token = csrf_token(visitor.get(f"/projects/{project_id}/queries").text)
    done = visitor.post(f"/projects/{project_id}/bulk", headers={"HX-Request": "true"}, data={
        "csrf_token": token, "action": action, "apply_tag": str(tag_id), "selected": keys})
    assert done.status_code == 200, done.text[:500]
    return UNDO_URL.search(done.text).group(1)
