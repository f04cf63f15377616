"""The Tagdesk dashboard: `flask --app app run`, or `gunicorn 'app:create_app()'`.

With TAGDESK_API_URL unset the API service runs embedded under /api of the same server (on a
SQLite file in the instance folder, or TAGDESK_DATABASE_URL), seeded with demo data on first
start. With TAGDESK_API_URL set the dashboard talks to that deployment instead.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta

import click
from cachelib.file import FileSystemCache
from flask import Flask
from flask_session import Session
from flask_wtf.csrf import CSRFProtect

from blueprints import (
    activity,
    auth,
    bulk,
    colleagues,
    export,
    projects,
    queries,
    report,
    rules,
    tags,
    views,
)
from dashboard import (
    apiclient,
    errors,
    htmx,
    names,
    security,
    sessionstore,
    signin,
    timing,
)
from dashboard.chips import chip_style
from jobs import sessions as job_sessions
from jobs.rq_runner import JOBS_QUEUE, RQRunner
from jobs.rq_worker import worker_command
from jobs.runner import InlineRunner, ThreadRunner
from jobs.store import Store
from weblib import assets
from weblib.private_files import instance_secret
from weblib.request_bodies import guard_request_bodies
from weblib.static_urls import static_url_function

SECRET_KEY_FILE = "secret-key"  # noqa: S105 (a file name, not a secret)
DEMO_QUERIES = 5000

# htmx settings (read from a meta tag: no inline script). History restores always come from
# the server as whole pages; no eval (the CSP forbids it anyway); error answers are swapped
# too, because the dashboard sends each as a sentence aimed at the notice area.
HTMX_CONFIG = json.dumps({
    "historyCacheSize": 0,
    # htmx says which answers change the address; static/address.js makes the one history
    # call, after the new content is painted.
    "historyEnabled": False,
    # No CSS transition waits for htmx's settle step: new content is settled at once.
    "defaultSettleDelay": 0,
    "refreshOnHistoryMiss": True,
    "historyRestoreAsHxRequest": False,
    "allowEval": False,
    "allowScriptTags": False,
    "includeIndicatorStyles": False,
    "selfRequestsOnly": True,
    "responseHandling": [
        {"code": "204", "swap": False},
        {"code": "[23]..", "swap": True},
        {"code": "[45]..", "swap": True, "error": True},
    ],
}, separators=(",", ":"))

csrf = CSRFProtect()
_announced = False


def default_config() -> dict:
    api_url = (os.environ.get("TAGDESK_API_URL") or "").strip().rstrip("/") or None
    return {
        "API_URL": api_url,
        # With API_URL: the address of that service's settings area, for the header's
        # "Settings" link (none if unset). Embedded mode links to its own /settings/.
        "SETTINGS_URL": (os.environ.get("TAGDESK_SETTINGS_URL") or "").strip() or None,
        "REDIS_URL": os.environ.get("TAGDESK_REDIS_URL") or None,
        "SECRET_KEY": os.environ.get("TAGDESK_SECRET_KEY") or None,
        "TRUSTED_PROXIES": int(os.environ.get("TAGDESK_TRUSTED_PROXIES") or 0),
        # Seconds the project and tag lists are reused before they are read again.
        "CACHE_SECONDS": 60,
        "SIGNIN_LIMIT": "10/minute",
        "DEMO_QUERIES": DEMO_QUERIES,
        "API_TIMEOUT": (3.05, 30),
        # A Server-Timing header on every response: time in API calls, time of the dashboard.
        "SERVER_TIMING": False,
        # Embedded mode only: a test's or benchmark's configuration for the service.
        "SERVICE_CONFIG": None,
        # Bulk edits, their jobs and the activity log: the dashboard's own database (unset:
        # SQLite in the instance folder; postgresql+psycopg://… works too).
        "JOBS_DATABASE_URL": os.environ.get("TAGDESK_JOBS_DATABASE_URL") or None,
        # "rq": jobs wait in a Redis queue for `flask --app app worker` processes; "thread":
        # they run in a few threads of the web process; "inline": in the request that starts
        # them (tests, benchmarks). Unset: "rq" when Redis and an API address are configured
        # (the scale-out mode), "thread" otherwise (embedded mode, or no Redis).
        "JOBS_RUNNER": os.environ.get("TAGDESK_JOBS_RUNNER") or None,
        "JOBS_WORKERS": 2,
        # The Redis queue of the RQ workers (deployments sharing one Redis use one each).
        "JOBS_QUEUE": os.environ.get("TAGDESK_JOBS_QUEUE") or JOBS_QUEUE,
        # How often a job's API client tries again when the service cannot be reached
        # (waits of 0, 1, 2, 4, 8 and 16 s: about 31 s of refused connections, 63 s when the
        # service also drops a call; docs/deploy.md) before the job stops as interrupted,
        # resumable.
        "JOBS_API_RETRIES": 6,
        # A running job's heartbeat, and how long a silent one takes to count as stopped.
        "JOBS_HEARTBEAT_SECONDS": 2.0,
        "JOBS_STALE_SECONDS": 30.0,
        # How often a page asks for the progress of a job it shows, while the job runs.
        "JOBS_POLL_SECONDS": 1.0,
        # How often an open queries page asks whether the rows it shows changed under it.
        "COLLEAGUES_POLL_SECONDS": 10.0,
        # Queries read and written per batch of a job (the service's maximum is 1000).
        "BULK_BATCH_SIZE": 1000,
        # Overlap a job's reads with its writes (see jobs/walk.py); queryapi's pacer reserves
        # room for requests in flight, so the two threads share the rate limit safely.
        "BULK_PIPELINE": True,
        # Seconds an in-page edit waits for another edit of the same project to finish.
        "BULK_LOCK_WAIT": 10.0,
        # Views up to this many rows download at once; larger exports run as jobs.
        "EXPORT_STREAM_LIMIT": 5000,
        # Query counts beside projects and tags (dashboard/counts.py): a session reads up to
        # COUNT_BURST of them at once, then one every COUNT_INTERVAL seconds (0: no pacing).
        "COUNT_BURST": 3,
        "COUNT_INTERVAL": 1.0,
        "SESSION_COOKIE_NAME": "tagdesk_session",
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SESSION_COOKIE_SECURE": False,  # and Secure whenever the request came over HTTPS
        "SESSION_PERMANENT": True,
        "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
        # Only changed sessions are written: page views never write the session store.
        "SESSION_REFRESH_EACH_REQUEST": False,
        "SESSION_KEY_PREFIX": "tagdesk:session:",
        "SESSION_SERIALIZATION_FORMAT": "json",
        # Static URLs carry a hash of the file's content (static_url), so they may be kept.
        "SEND_FILE_MAX_AGE_DEFAULT": 365 * 24 * 3600,
    }


def secret_key(instance_path: str) -> str:
    """TAGDESK_SECRET_KEY, or one generated on first start and kept in the instance folder
    (mode 600)."""
    return instance_secret(instance_path, SECRET_KEY_FILE)


def _sessions(app: Flask) -> None:
    if app.config["REDIS_URL"]:
        import redis

        app.config.setdefault("SESSION_TYPE", "redis")
        app.config.setdefault("SESSION_REDIS", redis.Redis.from_url(app.config["REDIS_URL"]))
    else:
        folder = os.path.join(app.instance_path, "sessions")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        os.chmod(folder, 0o700)
        app.config.setdefault("SESSION_TYPE", "cachelib")
        app.config.setdefault("SESSION_CACHELIB", FileSystemCache(
            folder, threshold=20000, mode=0o600))
    Session(app)
    sessionstore.init_app(app, errors.session_store_unavailable)


def _embed(app: Flask):
    """Mount the service under /api and give the client its internal address."""
    from embedded import Embedded, register_for_fork  # only here: it loads the service

    embedded = Embedded(app.instance_path, app.config["SERVICE_CONFIG"])
    register_for_fork(embedded)
    app.config["DEMO_KEY"] = embedded.prepare(app.config["DEMO_QUERIES"])
    app.config["DEMO_ADMIN"] = embedded.demo_admin()
    app.extensions["tagdesk_embedded"] = embedded
    app.wsgi_app = embedded.wsgi(app.wsgi_app)
    return embedded.internal_url


def job_config(app: Flask, base_url) -> dict:
    """What `run_job` needs (no request): where the jobs live, how to read a session's org
    key through the app's session interface, and the API's address (resolved in the process
    that runs the job)."""
    static = {
        "JOBS_DATABASE_URL": app.config["JOBS_DATABASE_URL"],
        "API_TIMEOUT": list(app.config["API_TIMEOUT"]),
        "API_RETRIES": int(app.config["JOBS_API_RETRIES"]),
        "BULK_BATCH_SIZE": app.config["BULK_BATCH_SIZE"],
        "JOBS_HEARTBEAT_SECONDS": app.config["JOBS_HEARTBEAT_SECONDS"],
        "EXPORT_FOLDER": os.path.join(app.instance_path, "exports"),
        "SESSIONS": job_sessions.SessionKeys(app, apiclient.SESSION_KEY),
    }

    def config() -> dict:
        return {**static, "BULK_BATCH_SIZE": app.config["BULK_BATCH_SIZE"],
                "BULK_PIPELINE": app.config["BULK_PIPELINE"], "API_URL": base_url()}

    return config


def runner_kind(config) -> str:
    """JOBS_RUNNER, or the mode's natural one: RQ workers when Redis is shared and the API is
    a deployment of its own; threads of the web process otherwise."""
    if config["JOBS_RUNNER"]:
        return config["JOBS_RUNNER"]
    return "rq" if config["REDIS_URL"] and config["API_URL"] else "thread"


def _jobs(app: Flask, base_url) -> None:
    """The jobs database (migrated to its newest revision), jobs a stopped process left running
    marked interrupted, and the runner."""
    if not app.config["JOBS_DATABASE_URL"]:
        app.config["JOBS_DATABASE_URL"] = "sqlite:///" + os.path.join(
            app.instance_path, "dashboard.sqlite3")
    store = Store.for_url(app.config["JOBS_DATABASE_URL"])
    store.interrupt_dead(float(app.config["JOBS_STALE_SECONDS"]))
    app.extensions["tagdesk_jobs"] = store
    config = job_config(app, base_url)
    app.extensions["tagdesk_job_config"] = config  # what `flask --app app worker` runs with
    kind = runner_kind(app.config)
    if kind == "inline":
        app.extensions["tagdesk_runner"] = InlineRunner(config)
    elif kind == "rq":
        if not app.config["REDIS_URL"]:
            raise RuntimeError("JOBS_RUNNER 'rq' needs TAGDESK_REDIS_URL.")
        app.extensions["tagdesk_runner"] = RQRunner(
            app.config["REDIS_URL"], app.config["JOBS_QUEUE"], app.config["JOBS_DATABASE_URL"])
    else:
        app.extensions["tagdesk_runner"] = ThreadRunner(config, int(app.config["JOBS_WORKERS"]))


def _port_problem(host: str, port: int) -> str | None:
    """Why `flask run` cannot serve on `host:port`, or None when it can. When another program
    holds the port, a browser sent to that address would reach the other program.

    Bound the way werkzeug's server binds it (the same address family and address, with
    SO_REUSEADDR), then released at once: werkzeug binds it for good right after the app is
    created. A Unix socket path is not checked."""
    import errno
    import socket

    from werkzeug.serving import get_sockaddr, select_address_family

    family = select_address_family(host, port)
    if family not in (socket.AF_INET, socket.AF_INET6):
        return None
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(get_sockaddr(host, port, family))
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            return f"port {port} is already in use by another program"
        return f"{host}:{port} cannot be opened ({error.strerror or error})"
    return None


def _free_port_after(host: str, port: int) -> int | None:
    """The first of the next few ports that can be opened, to suggest instead."""
    for candidate in range(port + 1, min(port + 20, 65535) + 1):
        if _port_problem(host, candidate) is None:
            return candidate
    return None


def settings_url(app: Flask) -> str | None:
    """Where the organization settings are: in embedded mode this server's /settings/; with
    TAGDESK_API_URL, TAGDESK_SETTINGS_URL if set (else None: no link)."""
    if app.config.get("API_URL"):
        return app.config.get("SETTINGS_URL") or None
    return "/settings/"


def _announce(app: Flask) -> None:
    """Print where the dashboard, the API and the settings are, how to make an administrator,
    and the demo's key and administrator — once per process, not in tests.

    Under `flask run` the address is known, and it is checked first (`_run_address`). Under
    gunicorn the address is whatever --bind says."""
    global _announced
    if _announced or app.testing:
        return
    _announced = True
    command = click.get_current_context(silent=True)
    if command is not None and command.info_name != "run":
        return  # another command (the jobs worker, routes, shell) serves no pages
    if os.environ.get("FLASK_RUN_FROM_CLI") == "true":
        where = _run_address(command)
        if where is None:
            return
        first = f"Tagdesk dashboard: {where}"
    else:
        where = "/"
        first = f"Tagdesk dashboard: started (process {os.getpid()})"
    print("\n".join([first, *_where_the_rest_is(app, where)]), file=sys.stderr, flush=True)


def _run_address(command: click.Context | None) -> str | None:
    """The address `flask run` serves, or None when this process prints no banner: another
    program holds the port (a sentence says so instead, because the address, and the demo
    key with it, would lead to that program), or this is the reloader's watching process
    (`--debug`: the serving process it starts prints the banner on the socket the watcher
    has bound)."""
    from flask.helpers import get_debug_flag
    from werkzeug.serving import is_running_from_reloader

    given = command.params if command is not None else {}  # `flask run --host/--port`
    host = given.get("host") or os.environ.get("FLASK_RUN_HOST") or "127.0.0.1"
    port = given.get("port") or os.environ.get("FLASK_RUN_PORT") or "5000"
    # In the reloader's serving process the socket is already ours (bound by its parent).
    if not is_running_from_reloader():
        problem = _port_problem(host, int(port)) if str(port).isdigit() else None
        if problem:
            _say_port_taken(problem, host, int(port))
            return None
        reload = given.get("reload")
        if reload is None and command is not None:
            reload = get_debug_flag()
        if reload:
            return None  # the serving process the reloader starts prints it
    return f"http://{host}:{port}/"


def _say_port_taken(problem: str, host: str, port: int) -> None:
    """Why the dashboard cannot start on `port`, and the command that starts it on a free one."""
    other = _free_port_after(host, port)
    host_option = "" if host == "127.0.0.1" else f" --host {host}"
    port_option = f"--port {other}" if other else "--port <another port>"
    advice = ("Stop that program, or start the dashboard on another port"
              if "another program" in problem else "Start it on another port")
    print(f"Tagdesk dashboard: {problem}, so the dashboard cannot start there.\n"
          f"{advice}: uv run flask --app app run{host_option} {port_option}",
          file=sys.stderr, flush=True)


def _where_the_rest_is(app: Flask, where: str) -> list[str]:
    """The banner's lines after the dashboard's: the API and the settings (the embedded
    service's under `where`), the demo's key and administrator, how to make an administrator."""
    if app.config.get("API_URL"):
        lines = [f"API: {app.config['API_URL']}"]
        if settings_url(app):
            lines.append(f"Settings: {settings_url(app)}")
        return lines
    lines = [f"API (embedded): {where}api/", f"Settings: {where}settings/"]
    if app.config.get("DEMO_KEY"):
        lines.append(f"Demo key: {app.config['DEMO_KEY']}")
    if app.config.get("DEMO_ADMIN"):
        email, password = app.config["DEMO_ADMIN"]
        lines.append(f"Demo administrator: {email}, password: {password}")
    embedded = app.extensions["tagdesk_embedded"]
    lines.append(("Another" if embedded.has_administrators() else "First")
                 + " administrator: uv run flask --app service create-user <org> <email>")
    return lines


def create_app(test_config: dict | None = None) -> Flask:
    test_config = dict(test_config or {})
    app = Flask(__name__, instance_relative_config=True,
                instance_path=test_config.pop("INSTANCE_PATH", None))
    os.makedirs(app.instance_path, exist_ok=True)
    app.config.from_mapping(default_config())
    app.config.update(test_config)
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = secret_key(app.instance_path)
    app.config["DEMO_KEY"] = None
    app.config["DEMO_ADMIN"] = None

    if app.config["API_URL"]:
        api_url = app.config["API_URL"]

        def base_url():
            return api_url
    else:
        base_url = _embed(app)

    app.extensions["tagdesk_registry"] = apiclient.Registry(base_url, app.config["API_TIMEOUT"])
    _sessions(app)
    _jobs(app, base_url)
    htmx.init_app(app)
    timing.init_app(app)
    csrf.init_app(app)
    signin.init_app(app)
    app.register_blueprint(auth.bp)
    security.init_app(app)
    errors.init_app(app)
    app.register_blueprint(projects.bp)
    app.register_blueprint(queries.bp)
    app.register_blueprint(colleagues.bp)
    app.register_blueprint(tags.bp)
    app.register_blueprint(views.bp)
    app.register_blueprint(rules.bp)
    bulk.register(app)
    app.register_blueprint(activity.bp)
    app.register_blueprint(export.bp)
    app.register_blueprint(report.bp)
    assets.init_app(app)  # the stylesheet shared with the settings area
    # A body gunicorn cannot decode is a 400, here and (embedded) under /api and /settings.
    guard_request_bodies(app)
    app.cli.add_command(worker_command)

    app.jinja_env.globals.update(
        static_url=static_url_function(app),
        htmx_config=HTMX_CONFIG,
        demo_mode=bool(app.config["DEMO_KEY"]),
        settings_url=settings_url(app),
        chip_style=chip_style,
        language_label=names.language_label,
        country_label=names.country_label,
    )
    app.jinja_env.trim_blocks = True
    app.jinja_env.lstrip_blocks = True
    _announce(app)
    return app
