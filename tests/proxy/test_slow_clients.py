"""Clients that open requests and never finish them ("slowloris") against the deployment of
docs/deploy.md: the embedded dashboard under gunicorn, `--workers 2 --threads 4`.

Straight at gunicorn, 64 such connections hold its threads (each waits for the rest of its
request), and people's requests go unanswered (10-11 of 12 within 5 s, measured). With nginx
in front (deploy/nginx.conf) they hold only nginx's connections: it passes on whole requests
alone, answers everyone else at once, and closes a connection that has not sent its headers
within client_header_timeout (here 3 s in place of the committed 10 s, so as not to wait them
out). Unfinished bodies, a byte a second, stay with nginx too.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from tests.support.proxy import Nginx, SlowClients, committed_setting
from tests.support.waiting import wait_until

pytestmark = pytest.mark.nginx

SLOW = 64           # connections that never finish their headers (and, behind nginx, bodies)
PEOPLE = 12         # ordinary requests sent meanwhile
PATIENCE = 5.0      # seconds each ordinary request waits for its answer
COMMITTED_HEADER_TIMEOUT = 10  # deploy/nginx.conf's client_header_timeout, at most
HEADER_TIMEOUT = 3  # the same directive's value in the test's nginx: not 10 s to wait out


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


@pytest.fixture
def quick_nginx(start_gunicorn, tmp_path):
    """The dashboard as deployed (`--workers 2 --threads 4`, trusting one proxy) behind nginx
    with deploy/nginx.conf, but for its client_header_timeout: HEADER_TIMEOUT."""
    dashboard = start_gunicorn("dashboard", TAGDESK_TRUSTED_PROXIES="1")
    nginx = Nginx(tmp_path / "nginx", dashboard.port, dashboard.port,
                  settings={"client_header_timeout": f"{HEADER_TIMEOUT}s"})
    yield dashboard, nginx.start()
    nginx.stop()


def test_slow_clients_do_not_hold_up_anyone_behind_nginx(quick_nginx, world):
    # The deployment's timeout is the committed file's; the test's nginx closes unfinished
    # headers sooner, by the same directive.
    assert committed_setting("client_header_timeout") == f"{COMMITTED_HEADER_TIMEOUT}s"
    dashboard, nginx = quick_nginx
    opened = time.monotonic()
    with SlowClients(nginx.port, SLOW, interval=0.25) as slow_headers, \
            SlowClients(nginx.port, SLOW, body=True) as slow_bodies:
        time.sleep(1)  # every slow connection accepted and started
        started = time.monotonic()
        answered, unanswered = ordinary_requests(nginx.url, world.key)
        took = time.monotonic() - started
        print(f"behind nginx, {SLOW} + {SLOW} slow connections: {answered} answered, "
              f"{unanswered} unanswered, in {took:.2f} s")
        assert (answered, unanswered) == (PEOPLE, 0), nginx.log()
        # …while every unfinished header was still open: none can have been closed before
        # client_header_timeout.
        assert time.monotonic() - opened < HEADER_TIMEOUT, "too slow to prove anything"
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
