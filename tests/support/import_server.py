"""A service on a loopback port, in a process of its own (tests/support/imports.py starts it):
`python -m tests.support.import_server DATABASE_URL FOLDER CONFIG_JSON`. It makes an
organization with a project, tags and an administrator, and another organization with a key,
prints them (and its address) as one line of JSON, and serves until it is stopped.

The same service under gunicorn (bench/bench_import_fairness.py --gunicorn): `make_world` makes
the organizations once, and gunicorn's workers each build the app with `served_app()`, from
the same three values in the environment (SERVED)."""

from __future__ import annotations

import json
import logging
import os
import sys

from werkzeug.serving import make_server

from service import create_app
from service.org import accounts, admin
from service.store.db import session_scope
from tests.support.world import UNLIMITED, small_org

EMAIL = "importer@example.com"
PASSWORD = "correct horse battery staple"
SERVED = "TAGDESK_IMPORT_SERVER"  # JSON: [database_url, folder, config]


def _app(database_url: str, folder: str, config: dict):
    return create_app({"TESTING": True, "DATABASE_URL": database_url, "REDIS_URL": None,
                       "DEFAULT_LIMITS": UNLIMITED, "IMPORTS_FOLDER": f"{folder}/imports",
                       **config})


def make_world(app) -> dict:
    """The organization that imports (its administrator's email and password) and the other
    (`other_key`)."""
    with session_scope(app) as session:
        mine = small_org(session, "Importer", "Shop search")
        theirs = small_org(session, "Bystander", "Their project")
        accounts.create_user(session, mine.org_id, EMAIL, PASSWORD)
        admin.create_project(session, theirs.org_id, "Second project")
    return {"project_id": mine.project_id, "tags": mine.tags, "email": EMAIL,
            "password": PASSWORD, "other_key": theirs.key}


def served_app():
    """gunicorn's factory: the app of the values in SERVED."""
    database_url, folder, config = json.loads(os.environ[SERVED])
    return _app(database_url, folder, config)


def main() -> None:
    database_url, folder, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    app = _app(database_url, folder, config)
    world = make_world(app)
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line a request
    server = make_server("127.0.0.1", 0, app, threaded=True)
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}", **world}), flush=True)
    server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()
