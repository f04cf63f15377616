"""A background job's org key: read from the server-side session store, never from the jobs
database.

A job records the id of the session that started (or resumed) it. Flask-Session keeps that
session's data under `SESSION_KEY_PREFIX + sid`: in files under `instance/sessions/` (cachelib,
the default) or in Redis (TAGDESK_REDIS_URL). This module reads the same place with the same
rules, from plain configuration, so `run_job` works in any process — a thread of a web worker
or an RQ worker — without a request or an app. Signing out deletes the session:
a job that has not started yet then cannot (it is reported as interrupted, and whoever resumes
it lends it their own session).
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

KEY_FIELD = "api_key"  # blueprints.apiclient.SESSION_KEY


def store_config(app) -> dict:
    """The parts of the Flask configuration that say where sessions live."""
    import os

    config = app.config
    return {
        "REDIS_URL": config.get("REDIS_URL"),
        "SESSION_FOLDER": os.path.join(app.instance_path, "sessions"),
        "SESSION_KEY_PREFIX": config.get("SESSION_KEY_PREFIX", "session:"),
        "SESSION_SERIALIZATION_FORMAT": config.get("SESSION_SERIALIZATION_FORMAT", "msgpack"),
    }


def _decode(data: bytes, serialization: str) -> dict | None:
    import msgspec

    decoders = [msgspec.json.Decoder(), msgspec.msgpack.Decoder()]
    if serialization == "msgpack":
        decoders.reverse()
    for decoder in decoders:
        try:
            value = decoder.decode(data)
        except msgspec.DecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


def session_data(config: dict, session_ref: str | None) -> dict | None:
    if not session_ref:
        return None
    store_id = config["SESSION_KEY_PREFIX"] + session_ref
    if config.get("REDIS_URL"):
        import redis

        connection = redis.Redis.from_url(config["REDIS_URL"])
        try:
            raw = connection.get(store_id)
        finally:
            connection.close()
        return None if raw is None else _decode(raw, config["SESSION_SERIALIZATION_FORMAT"])
    from cachelib.file import FileSystemCache

    cache = FileSystemCache(config["SESSION_FOLDER"], threshold=20000, mode=0o600)
    data = cache.get(store_id)
    return data if isinstance(data, dict) else None


def session_key(config: dict, session_ref: str | None) -> str | None:
    """The org key held by that session, or None (signed out, expired)."""
    try:
        data = session_data(config, session_ref)
    except Exception:  # an unreachable store is "no key", said as a sentence by the caller
        log.warning("the session store could not be read for a job", exc_info=False)
        return None
    key = (data or {}).get(KEY_FIELD)
    return key if isinstance(key, str) and key else None
