"""The deployment as docs/deploy.md runs it: the dashboard (with the service embedded) or the
service alone under gunicorn, on a SQLite file of the test's own with a small organization."""

from __future__ import annotations

import pytest

from tests.faults.processes import Gunicorn


@pytest.fixture
def start_gunicorn(database_url, tmp_path, world):
    """Start `service` or `dashboard` (embedded) under gunicorn: `--workers 2 --threads 4`, the
    deployment's flags, unless the test asks for fewer."""
    world.set_limits(1000, 10_000, 100_000)
    started: list[Gunicorn] = []

    def start(which: str, workers: int = 2, threads: int = 4, **env: str) -> Gunicorn:
        if which == "service":
            target, ready = "service:create_app()", "/api/openapi.json"
        else:
            instance = str(tmp_path / f"instance{len(started)}")
            target, ready = f"app:create_app({{'INSTANCE_PATH': {instance!r}}})", "/signin"
            env.setdefault("TAGDESK_SECRET_KEY", "proxy-test-dashboard-secret")
        server = Gunicorn(target, {"TAGDESK_DATABASE_URL": database_url, **env},
                          tmp_path / f"{which}{len(started)}.log", ready,
                          workers=workers, threads=threads)
        started.append(server)
        return server.start()

    yield start
    for server in started:
        server.stop()

