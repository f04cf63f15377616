"""Static URLs that carry a hash of the file's content: a changed file gets a new URL, so
browsers may keep static files for long (SEND_FILE_MAX_AGE_DEFAULT)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from flask import Flask, url_for


def static_url_function(app: Flask) -> Callable[..., str]:
    """`static_url(filename, endpoint="static")` for `app`'s templates: the URL of one of the
    app's static files, or of a blueprint's ("<blueprint>.static"), with `v=<hash>`. Hashes are
    read once (again on every call in debug mode, when files change under a running app)."""
    versions: dict[tuple[str, str], str] = {}

    def static_url(filename: str, endpoint: str = "static") -> str:
        version = versions.get((endpoint, filename))
        if version is None or app.debug:
            data = Path(_static_folder(app, endpoint), filename).read_bytes()
            version = versions[endpoint, filename] = hashlib.sha256(data).hexdigest()[:12]
        return url_for(endpoint, filename=filename, v=version)

    return static_url


def _static_folder(app: Flask, endpoint: str) -> str:
    if endpoint == "static":
        folder = app.static_folder
    else:
        blueprint, _, view = endpoint.rpartition(".")
        if view != "static" or blueprint not in app.blueprints:
            raise ValueError(f"not a static endpoint: {endpoint!r}")
        folder = app.blueprints[blueprint].static_folder
    if folder is None:
        raise ValueError(f"{endpoint!r} has no static folder")
    return folder
