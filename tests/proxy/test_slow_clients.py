"""Clients that open requests and never finish them ("slowloris") against the deployment of
docs/deploy.md: the embedded dashboard under gunicorn, `--workers 2 --threads 4`.

Straight at gunicorn, 64 such connections hold its threads (each waits for the rest of its
request), and people's requests go unanswered (10-11 of 12 within 5 s, measured). With nginx
in front (deploy/nginx.conf) they hold only nginx's connections: it passes on whole requests
alone, answers everyone else at once, and closes a connection that has not sent its headers
within client_header_timeout. Unfinished bodies, a byte a second, stay with nginx too.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.support.proxy import SlowClients
from tests.support.waiting import wait_until

pytestmark = pytest.mark.nginx

SLOW = 64           # connections that never finish their headers (and, behind nginx, bodies)
PEOPLE = 12         # ordinary requests sent meanwhile
PATIENCE = 5.0      # seconds each ordinary request waits for its answer
HEADER_TIMEOUT = 10  # deploy/nginx.conf's client_header_timeout


def ordinary_requests(base_url: str, key: str) -> tuple[int, int]:
    """PEOPLE requests at once, half pages, half API calls: (answered, unanswered)."""

    def one(number: int) -> bool:
        try:
            if number % 2:
                answer = requests.get(base_url + "/signin", timeout=(2, PATIENCE))
            else:
                answer = requests.get(base_url + "/api/projects/list", timeout=(2, PATIENCE),
                                      headers={"x-api-key": key})
        except requests.RequestException:
            return False
        assert answer.status_code == 200, (answer.status_code, answer.text[:300])
        return True

    with ThreadPoolExecutor(PEOPLE) as pool:
        outcomes = list(pool.map(one, range(PEOPLE)))
    return sum(outcomes), outcomes.count(False)


def test_slow_clients_do_not_hold_up_anyone_behind_nginx(embedded_behind_nginx, world):
    dashboard, nginx = embedded_behind_nginx
    with SlowClients(nginx.port, SLOW) as slow_headers, \
            SlowClients(nginx.port, SLOW, body=True) as slow_bodies:
        time.sleep(1)  # every slow connection accepted and started
        started = time.monotonic()
        answered, unanswered = ordinary_requests(nginx.url, world.key)
        took = time.monotonic() - started
        print(f"behind nginx, {SLOW} + {SLOW} slow connections: {answered} answered, "
              f"{unanswered} unanswered, in {took:.2f} s")
        assert (answered, unanswered) == (PEOPLE, 0), nginx.log()
        # The unfinished headers are nginx's to end: closed after client_header_timeout. The
        # bodies keep coming, a byte a second, to nginx alone.
        assert wait_until(lambda: slow_headers.dropped == SLOW, HEADER_TIMEOUT + 10, 0.2), \
            f"{slow_headers.dropped} of {SLOW} unfinished headers closed by nginx"
        assert slow_bodies.dropped == 0
    assert "Traceback" not in dashboard.output()


def test_the_same_slow_clients_stop_gunicorn_on_its_own(start_gunicorn, world):
    """Why nginx is there: the same connections straight at gunicorn stop it."""
    dashboard = start_gunicorn("dashboard")
    with SlowClients(dashboard.port, SLOW):
        time.sleep(1)
        answered, unanswered = ordinary_requests(dashboard.url, world.key)
        print(f"straight at gunicorn, {SLOW} slow connections: {answered} answered, "
              f"{unanswered} unanswered within {PATIENCE:.0f} s")
        # A request now and then finds a thread between two of theirs (more often on a busy
        # machine, where the slow clients' bytes come late); most wait in vain.
        assert answered < PEOPLE // 2, f"{answered} of {PEOPLE} answered"
    # Once they are gone, gunicorn serves again.
    assert wait_until(lambda: ordinary_requests(dashboard.url, world.key) == (PEOPLE, 0),
                      30, 0.5)
