"""PostgreSQL stops (a fast shutdown: every session ended at once) under a running service and
dashboard, then comes back: the service answers 503 with Retry-After on every endpoint, the
dashboard shows its banner that retries by itself, and both recover without a restart, with
every change made before the outage still there and nothing from the outage half-applied."""

from __future__ import annotations

import pytest
import requests

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

BANNER = "The Tagdesk service is temporarily unavailable."


def set_tags_body(deployment, *names):
    return {"queries": [{"query": "running shoes", "language": "en", "country": "US",
                         "tagIds": [deployment.tags[name] for name in names]}]}


def tags_of_running_shoes(deployment) -> list[int]:
    answer = deployment.api("POST", "/api/queries/list", {"query": "running shoes"})
    assert answer.status_code == 200, answer.text
    [record] = answer.json()["results"]
    return sorted(int(tag) for tag in record["tags"])


def endpoints(deployment):
    return [
        ("GET", "/api/projects/list", None),
        ("POST", "/api/queries/list", {}),
        ("POST", "/api/tags/list", {}),
        ("PATCH", "/api/queries/many/tags-only", set_tags_body(deployment, "sale")),
    ]


def test_postgres_stopped_then_back(deployment):
    before = deployment.api("PATCH", "/api/queries/many/tags-only",
                            set_tags_body(deployment, "brand", "sale"))
    assert before.status_code == 200, before.text
    expected_tags = sorted(deployment.tags.values())
    browser = deployment.sign_in()
    assert deployment.page(browser).status_code == 200

    deployment.postgres.stop()
    try:
        # Several rounds: the first meets the pooled connections PostgreSQL just ended, the
        # later ones a server that refuses new connections. Every worker, every endpoint.
        for _ in range(3):
            for method, path, body in endpoints(deployment):
                deployment.assert_service_unavailable(deployment.api(method, path, body),
                                                      method, path)
        # A key cannot be checked either: 503, not 401.
        unknown = requests.get(deployment.service.url + "/api/projects/list", timeout=15,
                               headers={"x-api-key": "tdk_live_" + "x" * 40})
        deployment.assert_service_unavailable(unknown, "an unknown key")

        # The dashboard: its banner, on the whole page and in the notice area of a partial.
        page = deployment.page(browser)
        assert page.status_code == 503, (page.text[:800], deployment.logs())
        assert BANNER in page.text and "Trying again" in page.text
        assert page.headers["Retry-After"] == "30"
        partial = deployment.page(browser, htmx=True)
        assert partial.status_code == 503
        assert BANNER in partial.text and partial.headers["HX-Retarget"] == "#notices"
        # The tags page may still come from the session's short cache; never an error page.
        tags_page = deployment.page(browser, "tags")
        assert tags_page.status_code in (200, 503)
        if tags_page.status_code == 503:
            assert BANNER in tags_page.text
    finally:
        deployment.postgres.start()

    # No restart of either process: the very next requests succeed (stale pooled connections
    # are found by the pre-ping and replaced).
    for method, path, _ in endpoints(deployment)[:3]:
        answer = deployment.api(method, path, {} if method == "POST" else None)
        assert answer.status_code == 200, (method, path, answer.text, deployment.logs())
    page = deployment.page(browser)
    assert page.status_code == 200 and BANNER not in page.text
    assert "running shoes" in page.text

    # Nothing lost, nothing half-applied: the change before the outage is there, the one
    # refused during it is not.
    assert tags_of_running_shoes(deployment) == expected_tags


def test_a_quick_restart_goes_unnoticed(deployment):
    """PostgreSQL restarts while nobody calls: every pooled connection is dead, yet the next
    calls on every worker succeed, because each is tested before use."""
    browser = deployment.sign_in()
    for _ in range(4):  # connections in the pools of both workers
        assert deployment.api("POST", "/api/queries/list", {}).status_code == 200
    deployment.postgres.stop()
    deployment.postgres.start()
    for _ in range(8):
        answer = deployment.api("POST", "/api/queries/list", {})
        assert answer.status_code == 200, (answer.text, deployment.logs())
    assert deployment.page(browser).status_code == 200
