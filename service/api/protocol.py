"""HTTP behaviour shared by every response of the service, whatever route answers.

- A streamed request body (`Transfer-Encoding: chunked`, no Content-Length) larger than
  MAX_CONTENT_LENGTH is a 413, like a body whose Content-Length says so. Werkzeug stops
  reading such a body quietly at the limit, which would cut it short and use the first
  mebibyte; the service reads one byte past the limit, and that byte means "too large".
- OPTIONS under /api answers JSON, `{"allow": [...]}` with the same `Allow` header.
- `X-Content-Type-Options: nosniff` on every response.
- TAGDESK_TRUSTED_PROXIES: the client's address, scheme and host come from the
  X-Forwarded-For/-Proto/-Host of that many proxies (werkzeug's ProxyFix), unless a ProxyFix
  in front (the dashboard's, when the service is embedded in it) has already applied them.
"""

from __future__ import annotations

import orjson
from flask import Flask, Request, Response, current_app, jsonify, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.utils import cached_property
from werkzeug.wsgi import LimitedStream

from ..access.guard import is_api_path

# Set by ProxyFix on the environ it has rewritten (documented in ProxyFix).
PROXY_FIX_APPLIED = "werkzeug.proxy_fix.orig"


class StreamedBody(LimitedStream):
    """A body of unknown length, read up to one byte past `maximum`: reading that byte
    raises 413 (RequestEntityTooLarge), whether the body is read whole or parsed as a form."""

    def __init__(self, stream, maximum: int):
        super().__init__(stream, maximum + 1, is_max=True)
        self.maximum = maximum

    def readinto(self, buffer) -> int | None:
        size = super().readinto(buffer)
        if self.tell() > self.maximum:
            raise RequestEntityTooLarge()
        return size


class ServiceRequest(Request):
    @cached_property
    def stream(self):
        maximum = self.max_content_length
        if (maximum is not None and self.content_length is None and not self.shallow
                and self.environ.get("wsgi.input_terminated")):
            # The server ends the stream itself (chunked): safe to read to the end.
            return StreamedBody(self.environ["wsgi.input"], maximum)
        return super().stream


class ServiceFlask(Flask):
    request_class = ServiceRequest

    def make_default_options_response(self):
        response = super().make_default_options_response()
        if not is_api_path(request.path):
            return response  # the settings area's pages keep Flask's own answer
        allowed = sorted(response.allow)
        response = jsonify({"allow": allowed})
        response.allow.update(allowed)
        return response


class TrustedProxies:
    """WSGI: ProxyFix for `hops` proxies, applied once (not again behind another ProxyFix)."""

    def __init__(self, wsgi_app, hops: int):
        self.wsgi_app = wsgi_app
        self.fixed = ProxyFix(wsgi_app, x_for=hops, x_proto=hops, x_host=hops)

    def __call__(self, environ, start_response):
        if PROXY_FIX_APPLIED in environ:
            return self.wsgi_app(environ, start_response)
        return self.fixed(environ, start_response)


def json_response(payload) -> Response:
    """`jsonify(payload)`, the same bytes, written by orjson (a tenth of the time for a page of
    records). For the API's own shapes: strings, integers, booleans, None, lists and objects
    with string keys, which both write alike (orjson writes floats differently). Anything
    orjson refuses, and an app that writes indented or ASCII-only JSON, go to jsonify."""
    provider = current_app.json
    indented = provider.compact is False or (provider.compact is None and current_app.debug)
    if indented or provider.ensure_ascii or provider.sort_keys:
        return jsonify(payload)
    try:
        body = orjson.dumps(payload, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return jsonify(payload)
    return current_app.response_class(body, mimetype=provider.mimetype)


def _nosniff(response):
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    return response


def init_app(app: Flask) -> None:
    app.after_request(_nosniff)
    hops = int(app.config.get("TRUSTED_PROXIES") or 0)
    if hops > 0:
        app.wsgi_app = TrustedProxies(app.wsgi_app, hops)
