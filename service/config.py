"""Service configuration: defaults, then environment variables, then a test's overrides."""

import os
from pathlib import Path

DEFAULT_LIMITS = (10, 300, 10_000)  # per second, per minute, per hour
MAX_BODY_BYTES = 1024 * 1024
IMPORT_MAX_BYTES = 512 * 1024 * 1024  # the settings area's CSV upload alone


def default_database_url(instance_path: str) -> str:
    """The database used when TAGDESK_DATABASE_URL is not set: a SQLite file in the instance
    folder."""
    return "sqlite:///" + str(Path(instance_path) / "tagdesk.sqlite3")


def load_config(instance_path: str, overrides: dict | None = None) -> dict:
    config = {
        "DATABASE_URL": os.environ.get("TAGDESK_DATABASE_URL")
        or default_database_url(instance_path),
        "REDIS_URL": os.environ.get("TAGDESK_REDIS_URL") or None,
        "KEY_PREFIX": os.environ.get("TAGDESK_KEY_PREFIX") or "tdk",
        "DEFAULT_LIMITS": DEFAULT_LIMITS,
        "MAX_CONTENT_LENGTH": MAX_BODY_BYTES,
        "IMPORT_MAX_BYTES": int(os.environ.get("TAGDESK_IMPORT_MAX_BYTES") or IMPORT_MAX_BYTES),
        # Hours an upload left on its Columns page (not imported) is kept, from its upload or
        # its last check; then its file and its row are removed (service/import_jobs.sweep).
        # Unset: import_jobs.KEEP_HOURS (24).
        "IMPORT_KEEP_HOURS": float(os.environ.get("TAGDESK_IMPORT_KEEP_HOURS") or 0) or None,
        # How often a running import's or check's page asks for its progress, in seconds.
        "IMPORT_PROGRESS_SECONDS": 1.0,
        # Seconds between writes of a key's last_used_at: one write per request would make
        # every read a write; a minute's precision is what people need to spot idle keys.
        "LAST_USED_PRECISION": 60,
        "SECRET_KEY": os.environ.get("TAGDESK_SERVICE_SECRET_KEY") or None,
        # Reverse proxies in front whose X-Forwarded-For/-Proto/-Host are trusted (as the
        # dashboard reads the same variable): client addresses for the rate limit and the
        # sign-in throttle, HTTPS for Secure cookies.
        "TRUSTED_PROXIES": int(os.environ.get("TAGDESK_TRUSTED_PROXIES") or 0),
        # The dashboard's address, for the settings area's "Dashboard" link (none if unset).
        # In embedded mode the dashboard sets it to "/", its own address.
        "DASHBOARD_URL": (os.environ.get("TAGDESK_DASHBOARD_URL") or "").strip() or None,
        # A Redis URL: the suggestions' jobs go on its queue (named SUGGESTIONS_QUEUE_NAME,
        # "tagdesk-suggestions" when unset) for `flask --app service suggestions-worker`;
        # unset, threads of the service's processes run them (service/learning/queue.py).
        "SUGGESTIONS_QUEUE": os.environ.get("TAGDESK_SUGGESTIONS_QUEUE") or None,
        "SUGGESTIONS_QUEUE_NAME": os.environ.get("TAGDESK_SUGGESTIONS_QUEUE_NAME") or None,
    }
    if overrides:
        config.update(overrides)
    return config
