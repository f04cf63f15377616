"""The deployment as docs/deploy.md runs it: the dashboard (with the service embedded) or the
service alone under gunicorn, on a SQLite file of the test's own with a small organization —
and, for the tests marked `nginx`, nginx with deploy/nginx.conf in front."""

from __future__ import annotations

import pytest

from tests.faults.processes import Gunicorn
from tests.support.proxy import Nginx


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


@pytest.fixture
def behind_nginx(start_gunicorn, tmp_path):
    """Start the embedded dashboard as deployed (trusting one proxy) with nginx in front: both
    upstreams of deploy/nginx.conf are the dashboard's address."""
    started: list[Nginx] = []

    def start(workers: int = 2) -> tuple[Gunicorn, Nginx]:
        dashboard = start_gunicorn("dashboard", workers=workers, TAGDESK_TRUSTED_PROXIES="1")
        nginx = Nginx(tmp_path / f"nginx{len(started)}", dashboard.port, dashboard.port)
        started.append(nginx)
        return dashboard, nginx.start()

    yield start
    for nginx in started:
        nginx.stop()


@pytest.fixture
def embedded_behind_nginx(behind_nginx) -> tuple[Gunicorn, Nginx]:
    """The dashboard as deployed (`--workers 2 --threads 4`) behind nginx."""
    return behind_nginx()
