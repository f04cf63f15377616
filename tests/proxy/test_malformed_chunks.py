"""A chunked body whose chunk size is not hexadecimal is the client's error: 400 from both apps
under gunicorn, on the sign-in pages (no one signed in) and the API, with nothing but a line
in gunicorn's log — no traceback. Gunicorn raises its own parse error from `wsgi.input`, which
Werkzeug does not count as a broken body; weblib/request_bodies.py turns it into a 400.
"""

from __future__ import annotations

import pytest

from tests.support.proxy import raw_request, status_of

BAD_CHUNK = b"zz\r\nabc\r\n0\r\n\r\n"
FORM = "application/x-www-form-urlencoded"
JSON = "application/json"


def bad_chunked(path: str, content_type: str, *extra: str) -> bytes:
    headers = [f"POST {path} HTTP/1.1", "Host: tagdesk.example.com",
               f"Content-Type: {content_type}", "Transfer-Encoding: chunked",
               "Connection: close", *extra]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + BAD_CHUNK


def routes(world) -> list[tuple[str, bytes]]:
    return [("/signin", bad_chunked("/signin", FORM)),
            ("/settings/signin", bad_chunked("/settings/signin", FORM)),
            # Everything the API checks before it reads the body is in order.
            ("/api/queries/list", bad_chunked("/api/queries/list", JSON,
                                              f"x-api-key: {world.key}",
                                              f"x-project-id: {world.project_id}"))]


def assert_no_traceback(log: str) -> None:
    assert "Traceback" not in log and "unhandled error" not in log, log[-3000:]


@pytest.mark.parametrize("which", ["service", "dashboard"])
def test_a_bad_chunk_size_is_400_under_gunicorn(start_gunicorn, world, which):
    server = start_gunicorn(which, workers=1)
    for path, request in routes(world):
        if which == "service" and path == "/signin":
            continue  # the dashboard's page: the service has no such route
        answer = raw_request(server.port, request)
        assert status_of(answer) == 400, (path, answer[:500], server.output())
        if path.startswith("/api/"):
            assert b'"statusCode":400' in answer and b"header" not in answer, answer[-500:]
    assert_no_traceback(server.output())


@pytest.mark.nginx
def test_a_bad_chunk_size_is_400_through_nginx(embedded_behind_nginx, world):
    dashboard, nginx = embedded_behind_nginx
    for path, request in routes(world):
        answer = raw_request(nginx.port, request)
        assert status_of(answer) == 400, (path, answer[:500], nginx.log())
    assert_no_traceback(dashboard.output())


class BrokenInput:
    """A server's `wsgi.input` that raises an error of the server's own (no OSError)."""

    class Undecodable(Exception):
        pass

    def read(self, *args):
        raise self.Undecodable("the server could not decode the body")

    readline = read


@pytest.mark.parametrize("path", ["/settings/signin", "/api/queries/list"])
def test_whatever_the_servers_input_raises_is_a_400(service_app, world, path):
    answer = service_app.test_client().post(path, headers={
        "Content-Type": JSON if path.startswith("/api/") else FORM,
        "x-api-key": world.key, "x-project-id": world.project_id,
    }, environ_overrides={"wsgi.input": BrokenInput(), "wsgi.input_terminated": True})
    assert answer.status_code == 400, answer.get_data(as_text=True)[:300]
