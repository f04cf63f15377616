"""The process environment's proxy settings: honoured, and read once when a client is made."""

from __future__ import annotations

from urllib.parse import urlsplit

import requests

from .servers import Answer, Seen, TinyServer, closed_port

# A host nobody can resolve: only a proxy can reach it.
UNRESOLVABLE = "http://tagdesk-api.invalid"


class ForwardProxy(TinyServer):
    """An HTTP proxy for one upstream: whatever absolute URL it is asked for, it fetches the
    same path from `upstream` and relays the answer."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self._session = requests.Session()
        self._session.trust_env = False
        super().__init__(self._forward)

    def _forward(self, seen: Seen) -> Answer:
        target = urlsplit(seen.path)
        path = target.path + (f"?{target.query}" if target.query else "")
        headers = {k: v for k, v in seen.headers.items()
                   if k in ("x-api-key", "x-project-id", "content-type")}
        answer = self._session.request(seen.method, self.upstream + path, headers=headers,
                                       timeout=30)
        return Answer(answer.status_code, answer.content)


def _no_proxy_settings(monkeypatch) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                 "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_a_proxy_named_in_the_environment_carries_the_calls(monkeypatch, live_service,
                                                            make_client):
    _no_proxy_settings(monkeypatch)
    with ForwardProxy(live_service.url) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        client = make_client(url=UNRESOLVABLE)
        assert {p.name for p in client.all_projects()} == {"Shop search", "Help centre"}
    assert [seen.path.split("?")[0] for seen in proxy.seen] == [UNRESOLVABLE + "/api/projects/list"]


def test_hosts_in_no_proxy_are_reached_directly(monkeypatch, make_client):
    _no_proxy_settings(monkeypatch)
    monkeypatch.setenv("HTTP_PROXY", closed_port())
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert make_client().list_projects().page.total_records == 2


def test_the_environment_is_read_when_the_client_is_made(monkeypatch, make_client):
    # requests would read it on every call; the client reads it once (a quarter of a
    # millisecond a call), so a proxy named afterwards changes nothing for it.
    _no_proxy_settings(monkeypatch)
    client = make_client()
    monkeypatch.setenv("HTTP_PROXY", closed_port())
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", "/nonexistent/ca.pem")
    assert client.list_projects().page.total_records == 2
