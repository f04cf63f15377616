"""Embedded mode: the API service inside the dashboard's own server, under /api.

The only module of the dashboard that imports `service`. It

- builds the service app (`service.create_app`, which reads TAGDESK_DATABASE_URL itself);
- on first start, when the database has no organization yet, creates the schema and seeds the
  demo organization, keeping the demo key in `instance/demo-key` and the email and password
  of the demo's settings administrator in `instance/demo-admin` (both mode 600) so that later
  starts can print them and the sign-in page can offer the key. Each database has files of its
  own (their names end in a digest of its address, but the default database's), and a kept
  key is printed and offered only while it answers in the database served;
- routes requests whose path starts with /api/ to the service (`ApiDispatcher`), so browsers,
  curl and other tools reach the API at the dashboard's address;
- gives the dashboard's own client an address that can never deadlock: not the public port
  (a gunicorn sync worker calling itself would wait for itself forever), but a loopback port
  served from a daemon thread of the same process, started on first use and again after a
  fork (each worker gets its own).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import threading
import weakref
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from werkzeug.serving import WSGIRequestHandler, make_server

import service
from service import schema
from service.config import default_database_url
from service.demo import demo
from service.org import keys
from service.store.models import ApiKey, Organization, User
from weblib.private_files import write_private

log = logging.getLogger(__name__)

DEMO_KEY_FILE = "demo-key"
DEMO_ADMIN_FILE = "demo-admin"
SEED_LOCK_FILE = "seed.lock"


class _QuietHandler(WSGIRequestHandler):
    """The internal server's requests are the dashboard's own; they are not logged."""

    def log_request(self, code="-", size="-"):
        pass


class ApiDispatcher:
    """WSGI: paths under /api and /settings (the service's organization settings) go to the
    service, everything else to the dashboard.

    Paths are passed on unchanged (the service's routes include the /api prefix)."""

    def __init__(self, dashboard_wsgi, service_wsgi):
        self.dashboard_wsgi = dashboard_wsgi
        self.service_wsgi = service_wsgi

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path in ("/api", "/settings") or path.startswith(("/api/", "/settings/")):
            return self.service_wsgi(environ, start_response)
        return self.dashboard_wsgi(environ, start_response)


def read_demo_key(path: Path) -> str | None:
    try:
        key = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return key or None


def read_demo_admin(path: Path) -> tuple[str, str] | None:
    """(email, password) of the demo's administrator, as kept in the instance folder."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return (lines[0], lines[1]) if len(lines) >= 2 and lines[0] and lines[1] else None


def demo_file(instance_path: str, name: str, database: str, default_database: str) -> Path:
    """Where the demo's `name` ("demo-key", "demo-admin") of `database` (its address) is kept:
    `name` itself for the default database, else `name` and a digest of the address, so that
    a start against another database never overwrites what the first one printed."""
    if database == default_database:
        return Path(instance_path) / name
    digest = hashlib.sha256(database.encode("utf-8")).hexdigest()[:16]
    return Path(instance_path) / f"{name}.{digest}"


@contextlib.contextmanager
def _file_lock(path: Path):
    """Several gunicorn workers may start at once; one seeds, the others wait."""
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class Embedded:
    def __init__(self, instance_path: str, service_config: dict | None = None):
        self.instance_path = instance_path
        self.service_app = service.create_app(service_config)
        # The settings area links back to the dashboard: this same address.
        self.service_app.config["DASHBOARD_URL"] = "/"
        self._lock = threading.Lock()
        self._server = None
        self._url: str | None = None
        self._pid: int | None = None

    # --- first start ---------------------------------------------------------------------

    @property
    def engine(self):
        return self.service_app.extensions["tagdesk_engine"]

    def kept_file(self, name: str) -> Path:
        """Where this database's demo key or administrator ("demo-key", "demo-admin") is kept."""
        database = self.engine.url.render_as_string(hide_password=True)
        default = default_database_url(self.instance_path)
        return demo_file(self.instance_path, name, database, default)

    def _answers(self, key: str) -> bool:
        """Whether `key` is a key of this database that has not been revoked."""
        with Session(self.engine) as session:
            return session.scalar(select(ApiKey.id).where(
                ApiKey.key_hash == keys.digest(key), ApiKey.revoked_at.is_(None))) is not None

    def prepare(self, demo_queries: int) -> str | None:
        """Create or upgrade the schema; seed the demo on an empty database, with an
        administrator for its settings (also for a demo seeded before there was one). Returns
        the demo key if this instance has one."""
        os.makedirs(self.instance_path, exist_ok=True)
        with _file_lock(Path(self.instance_path) / SEED_LOCK_FILE):
            schema.upgrade(self.engine)
            with self.engine.connect() as connection:
                organizations = connection.scalar(select(func.count()).select_from(Organization))
            if not organizations:
                log.warning("Empty database: creating the demo organization (%d queries)…",
                            demo_queries)
                key = demo.seed(self.service_app, demo_queries)
                write_private(self.kept_file(DEMO_KEY_FILE), key + "\n")
                # The administrator kept is the previous demo's (its database emptied to start
                # over): this demo gets one of its own below.
                self.kept_file(DEMO_ADMIN_FILE).unlink(missing_ok=True)
            key = read_demo_key(self.kept_file(DEMO_KEY_FILE))
            if key and not self._answers(key):
                log.warning("The kept demo key does not answer in this database (revoked, or "
                            "made for another one): it is not offered.")
                key = None
            if key and not self.kept_file(DEMO_ADMIN_FILE).exists():
                administrator = demo.seed_administrator(self.service_app, key)
                if administrator:
                    write_private(self.kept_file(DEMO_ADMIN_FILE),
                                  "\n".join(administrator) + "\n")
        return key

    def has_administrators(self) -> bool:
        """Whether anyone may sign in to the settings yet."""
        with Session(self.engine) as session:
            return session.scalar(select(func.count()).select_from(User)) > 0

    def demo_admin(self) -> tuple[str, str] | None:
        """(email, password) of the demo's administrator, while that account exists."""
        administrator = read_demo_admin(self.kept_file(DEMO_ADMIN_FILE))
        if administrator is None:
            return None
        with Session(self.engine) as session:
            exists = session.scalar(select(User.id).where(User.email == administrator[0]))
        return administrator if exists is not None else None

    # --- the internal address ------------------------------------------------------------

    def internal_url(self) -> str:
        """http://127.0.0.1:<port> of this process's private server for the service."""
        pid = os.getpid()
        if self._pid != pid:
            with self._lock:
                if self._pid != pid:
                    self._start(pid)
        return self._url

    def _start(self, pid: int) -> None:
        server = make_server("127.0.0.1", 0, self.service_app, threaded=True,
                             request_handler=_QuietHandler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                  name="tagdesk-embedded-api", daemon=True)
        thread.start()
        self._server = server
        self._url = f"http://127.0.0.1:{server.server_port}"
        self._pid = pid

    def after_fork_in_child(self) -> None:
        """A forked worker has neither the parent's server thread nor a safe copy of its
        database connections: forget both (the next use starts afresh)."""
        self._lock = threading.Lock()
        self._server = None
        self._url = None
        self._pid = None
        self.engine.dispose(close=False)

    def stop(self) -> None:
        """Shut the internal server down (tests, benchmarks)."""
        with self._lock:
            if self._server is not None and self._pid == os.getpid():
                self._server.shutdown()
                self._server.server_close()
            self._server, self._url, self._pid = None, None, None
        self.engine.dispose()

    def wsgi(self, dashboard_wsgi) -> ApiDispatcher:
        return ApiDispatcher(dashboard_wsgi, self.service_app)


_instances: list = []


def _after_fork() -> None:
    for reference in list(_instances):
        embedded = reference()
        if embedded is not None:
            embedded.after_fork_in_child()


def register_for_fork(embedded: Embedded) -> None:
    if not _instances:
        os.register_at_fork(after_in_child=_after_fork)
    _instances[:] = [r for r in _instances if r() is not None]
    _instances.append(weakref.ref(embedded))
