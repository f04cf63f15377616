"""Redis fails under a running service (rate-limit counters) and dashboard (sessions, sign-in
throttle): a clear answer instead of an error page, nothing of the service's data lost, and
recovery without a restart when Redis is back.

Two faults, because they behave differently:
- stopped, then started again: connections are refused at once, and the new Redis is empty
  (no persistence, as in the private server here and in many deployments), so sessions made
  before the outage are gone: people sign in again, and rate-limit windows start afresh;
- paused (SIGSTOP), then resumed: Redis hangs, every call waits for the client's socket timeout;
  afterwards Redis has everything it had, so the session made before still works.
"""

from __future__ import annotations

import threading
import time

import pytest
import requests

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

DASHBOARD_UNAVAILABLE = "Tagdesk cannot reach its session store"
REDIS_SOCKET_TIMEOUT = 5.0  # redis-py's default, which Tagdesk keeps


def assert_every_read_unavailable(deployment, timeout: float = 15) -> None:
    for method, path, body in (("GET", "/api/projects/list", None),
                               ("POST", "/api/queries/list", {}),
                               ("POST", "/api/tags/list", {})):
        deployment.assert_service_unavailable(
            deployment.api(method, path, body, timeout=timeout), method, path)


def assert_dashboard_unavailable(answer: requests.Response, deployment) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.text[:800], deployment.logs())
    assert DASHBOARD_UNAVAILABLE in answer.text
    assert "Traceback" not in answer.text and "redis" not in answer.text.lower()
    assert int(answer.headers["Retry-After"]) > 0


def test_redis_stopped_then_started_empty(deployment):
    browser = deployment.sign_in()
    assert deployment.page(browser).status_code == 200
    tagged = deployment.api("PATCH", "/api/queries/many/tags-only", {"queries": [
        {"query": "laufschuhe herren", "language": "de", "country": "DE",
         "tagIds": [deployment.tags["sale"]]}]})
    assert tagged.status_code == 200

    deployment.redis.stop()
    try:
        # The service cannot count requests, so it refuses them rather than serve unlimited.
        assert_every_read_unavailable(deployment)
        # The dashboard cannot tell who is signed in: a sentence, for pages and partials.
        assert_dashboard_unavailable(deployment.page(browser), deployment)
        assert_dashboard_unavailable(deployment.page(browser, htmx=True), deployment)
        assert_dashboard_unavailable(deployment.page(browser, "tags"), deployment)
        # Someone arriving now: the sign-in page says the same, and signing in does not fail
        # with an error page either.
        newcomer = requests.Session()
        assert_dashboard_unavailable(
            newcomer.get(deployment.dashboard.url + "/signin", timeout=15), deployment)
        assert_dashboard_unavailable(newcomer.post(
            deployment.dashboard.url + "/signin", data={"api_key": deployment.key},
            timeout=15, allow_redirects=False), deployment)
    finally:
        deployment.redis.start()

    # Service: back at once, with fresh rate-limit windows; the data was never in Redis.
    answer = deployment.api("POST", "/api/queries/list", {"query": "laufschuhe"})
    assert answer.status_code == 200, (answer.text, deployment.logs())
    assert answer.json()["results"][0]["tags"] == [deployment.tags["sale"]]
    # Dashboard: the old session went with the empty Redis: back to sign-in, no error.
    page = deployment.page(browser)
    assert page.status_code == 302 and "/signin" in page.headers["Location"]
    again = deployment.sign_in()
    assert deployment.page(again).status_code == 200


def test_redis_paused_then_resumed(deployment):
    browser = deployment.sign_in()
    assert deployment.page(browser).status_code == 200

    deployment.redis.pause()
    answers: dict[str, requests.Response] = {}
    try:
        # Both at once: each waits for its Redis client's socket timeout.
        def dashboard_page():
            answers["dashboard"] = deployment.page(browser, timeout=30)

        waiting = threading.Thread(target=dashboard_page)
        waiting.start()
        started = time.monotonic()
        answer = deployment.api("GET", "/api/projects/list", timeout=30)
        waited = time.monotonic() - started
        waiting.join(30)
        # One wait for Redis (redis-py's 5 s socket timeout), not one per Redis call.
        assert waited < 2 * REDIS_SOCKET_TIMEOUT, waited
        deployment.assert_service_unavailable(answer)
        assert_dashboard_unavailable(answers["dashboard"], deployment)
    finally:
        deployment.redis.resume()

    # Redis kept everything: the same session works, without signing in again.
    page = deployment.page(browser)
    assert page.status_code == 200, (page.status_code, deployment.logs())
    assert "laufschuhe herren" in page.text
    assert deployment.api("GET", "/api/projects/list").status_code == 200
