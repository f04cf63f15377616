"""A small world to work in: an organization with a key, two projects and tags (and, when a
test asks, an administrator of its settings), made through the service's admin layer (the
`world` fixture of tests/conftest.py builds one); and a smaller organization, with one
project, for tests and benchmarks that start a service of their own."""

from __future__ import annotations

from dataclasses import dataclass, field
from unittest import mock

from service.org import accounts, admin
from service.store.db import session_scope

# Generous limits so that tests about something else never meet a 429.
UNLIMITED = (100_000, 1_000_000, 10_000_000)

# The hash of each administrator's password, made once per process by the service's own
# hash_password (most tests of the settings begin with an administrator). Every hash is still
# checked at sign-in as it would be.
_ADMINISTRATOR_HASHES: dict[str, str] = {}

TAG_COLORS = {"brand": "#1f77b4", "sale": "#ff7f0e", "question": "#2ca02c", "local": "#d62728"}

# Four queries in two languages, two of them tagged: what the extensions' tests (saved views,
# rules) filter, the `seeded` fixture's rows in tests/service and tests/queryapi.
FOUR_QUERIES = [("laufschuhe", "de", "DE", []), ("schuhe damen", "de", "AT", ["brand"]),
                ("running shoes", "en", "US", ["brand", "sale"]), ("shoe store", "en", "GB", [])]


@dataclass
class SmallOrg:
    org_id: str
    key: str
    project_id: str
    tags: dict[str, int]


def small_org(session, name: str, project: str, tags=("brand", "sale")) -> SmallOrg:
    """An organization with a key and one project with these tags (colours of TAG_COLORS),
    made in `session` through the admin layer."""
    org_id = admin.create_org(session, name)
    key = admin.create_key(session, org_id, "tdk")
    project_id = admin.create_project(session, org_id, project)
    return SmallOrg(org_id, key, project_id, {
        tag: admin.create_tag(session, project_id, tag, TAG_COLORS[tag]) for tag in tags})


@dataclass
class World:
    """An organization with a key, two projects and tags, created through the admin layer."""

    app: object
    org_id: str = ""
    key: str = ""
    project_id: str = ""
    other_project_id: str = ""
    tags: dict[str, int] = field(default_factory=dict)
    user_id: int | None = None  # the settings' administrator, once with_administrator made one

    @classmethod
    def made(cls, app) -> World:
        """The world the `world` fixture of tests/conftest.py gives: Acme with a key, its
        projects "Shop search" (with the tags of TAG_COLORS) and "Help centre"."""
        world = cls(app)

        def make(session):
            world.org_id = admin.create_org(session, "Acme")
            world.key = admin.create_key(session, world.org_id, "tdk")
            world.project_id = admin.create_project(session, world.org_id, "Shop search")
            world.other_project_id = admin.create_project(session, world.org_id, "Help centre")
            for name, color in TAG_COLORS.items():
                world.tags[name] = admin.create_tag(session, world.project_id, name, color)

        world.run(make)
        return world

    def run(self, operation):
        with session_scope(self.app) as session:
            return operation(session)

    def with_administrator(self, email: str, password: str) -> World:
        """This world, with an administrator of its organization's settings (`user_id`)."""
        if password not in _ADMINISTRATOR_HASHES:
            _ADMINISTRATOR_HASHES[password] = accounts.hash_password(password)
        made = _ADMINISTRATOR_HASHES[password]
        hash_password = accounts.hash_password

        def hashed(given: str) -> str:
            return made if given == password else hash_password(given)

        with mock.patch.object(accounts, "hash_password", hashed):
            self.user_id = self.run(
                lambda s: accounts.create_user(s, self.org_id, email, password))
        return self

    def new_org(self, name="Other org") -> tuple[str, str, str]:
        """Another organization: (org id, key, project id)."""
        made = self.run(lambda session: small_org(session, name, "Their project", tags=()))
        return made.org_id, made.key, made.project_id

    def new_key(self, org_id=None, project_id=None) -> str:
        return self.run(lambda s: admin.create_key(s, org_id or self.org_id, "tdk", project_id))

    def add_queries(self, rows, project_id=None) -> int:
        """rows: (query, language, country, [tag names])."""
        normalized = [
            (*admin.normalize_query(q, lang, country), [self.tags[n] for n in names], None)
            for q, lang, country, names in rows
        ]
        return self.run(
            lambda s: admin.insert_queries(s, project_id or self.project_id, normalized))

    def set_limits(self, per_second, per_minute, per_hour, org_id=None):
        self.run(lambda s: admin.set_limits(
            s, org_id or self.org_id, per_second, per_minute, per_hour))

