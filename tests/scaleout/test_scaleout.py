"""More than one process of each, on loopback (tests/scaleout/conftest.py): a session made on
one dashboard works on the other; a job started on one shows its progress on the other and
runs on an RQ worker; a worker killed under a job leaves it interrupted and resumable; the
organization's rate limit is one budget across both service processes; and the service killed
mid-job leaves the job interrupted with exactly what was done, which Resume completes without
applying anything twice.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections import Counter

import pytest
import requests
from sqlalchemy import create_engine, text

from jobs.store import Store
from queryapi import Client, Mode
from tests.dashboard.bulk_helpers import plan_of, text_of
from tests.support.dashboard import csrf_token
from tests.support.scaleout import ALREADY_EVERY, QUERIES, Cluster, Org, ended
from tests.support.waiting import wait_for_job

pytestmark = [pytest.mark.redis, pytest.mark.postgres]

JOB_ID = re.compile(r'id="job-([0-9a-f]{32})"')
DONE = re.compile(r"<span data-done>([\d,]+)</span>")
ALREADY = len(range(0, QUERIES, ALREADY_EVERY))


# --- speaking to the dashboards as a browser with htmx does -------------------------------


def sign_in(dashboard: str, key: str) -> requests.Session:
    browser = requests.Session()
    token = csrf_token(browser.get(dashboard + "/signin", timeout=30).text)
    answer = browser.post(dashboard + "/signin", timeout=30, allow_redirects=False, data={
        "csrf_token": token, "api_key": key, "display_name": "Sam"})
    assert answer.status_code == 303, answer.text[:500]
    return browser


def page(browser: requests.Session, url: str) -> str:
    answer = browser.get(url, timeout=30, allow_redirects=False)
    assert answer.status_code == 200, (url, answer.status_code, answer.text[:300])
    return answer.text


def htmx_post(browser: requests.Session, url: str, token: str, data: dict) -> requests.Response:
    return browser.post(url, data=data, timeout=30, allow_redirects=False,
                        headers={"HX-Request": "true", "X-CSRFToken": token})


def start_job(browser: requests.Session, dashboard: str, org: Org, tag: str,
              action: str = "add") -> str:
    """Select all queries of the project, add (or remove) `tag`, confirm: the new job's id."""
    queries = f"{dashboard}/projects/{org.project_id}/queries"
    token = csrf_token(page(browser, queries))
    asked = htmx_post(browser, f"{dashboard}/projects/{org.project_id}/bulk", token, {
        "action": action, "apply_tag": str(org.tags[tag]), "scope": "all"})
    assert asked.status_code == 200, asked.text[:500]
    assert f"{QUERIES:,} queries" in text_of(asked.text)
    started = htmx_post(browser, f"{dashboard}/projects/{org.project_id}/bulk/confirm", token,
                        {"plan": plan_of(asked.text)})
    assert started.status_code == 200, started.text[:500]
    return JOB_ID.search(started.text).group(1)


def panel(browser: requests.Session, dashboard: str, org: Org, job_id: str) -> str:
    """The job's panel, as its progress poll asks for it."""
    return page(browser, f"{dashboard}/projects/{org.project_id}/jobs/{job_id}")


def resume(browser: requests.Session, dashboard: str, org: Org, job_id: str) -> None:
    token = csrf_token(page(browser, f"{dashboard}/projects/{org.project_id}/queries"))
    resumed = htmx_post(browser, f"{dashboard}/projects/{org.project_id}/jobs/{job_id}/resume",
                        token, {})
    assert resumed.status_code == 200, resumed.text[:500]


# --- the ground truth ---------------------------------------------------------------------


def jobs_store(cluster: Cluster) -> Store:
    return Store(cluster.jobs_database)


def wait_for_progress(store: Store, job_id: str, processed: int) -> None:
    deadline = time.monotonic() + 30
    while store.get(job_id).processed < processed:
        assert time.monotonic() < deadline, store.get(job_id)
        time.sleep(0.02)


def assert_exactly_what_was_done(store: Store, stopped, before: dict, middle: dict) -> set[str]:
    """The interrupted job's record agrees with the service: its confirmed changes are there,
    and so is the batch in flight when it stopped only if that batch's one all-or-nothing
    write got through. Returns the queries changed by then."""
    changed = {q for q in before if before[q][0] != middle[q][0]}
    pending = {c.query for c in (store.pending_changes(stopped.id, stopped.pending_batch)
                                 if stopped.pending_batch else {}).values()}
    confirmed = {c.query for c in store.changes(stopped.id).values()} - pending
    assert len(confirmed) == stopped.changed
    assert confirmed <= changed
    assert changed - confirmed in (set(), pending)
    return changed


def api_state(cluster: Cluster, org: Org) -> dict[str, tuple[set[str], str]]:
    """{query: (tag names, updatedAt)} through the API (paced: it shares the org's budget)."""
    with Client(cluster.api_url, org.key, Mode.BACKGROUND) as api:
        names = {tag.id: tag.name for tag in api.iter_tags(org.project_id)}
        return {q.query: ({names[t] for t in q.tags}, q.updated_at)
                for q in api.iter_queries(org.project_id)}


def jobs_done_by_workers(cluster: Cluster) -> int:
    from rq import Queue, Worker

    queue = Queue(cluster.queue, connection=cluster.redis())
    return sum(worker.successful_job_count for worker in Worker.all(queue=queue))


# --- sessions -------------------------------------------------------------------------------


def test_a_session_made_on_one_dashboard_works_on_the_other(cluster):
    first, second = cluster.dashboard_urls
    org = cluster.orgs["jobs"]
    browser = sign_in(first, org.key)
    sid = browser.cookies.get("tagdesk_session")
    assert sid and org.key not in sid
    stored = cluster.redis().get(cluster.session_prefix + sid)
    assert stored is not None and org.key.encode() in stored  # server-side, in Redis

    projects = page(browser, second + "/projects")
    assert "Progress project" in projects and "Fault project" in projects
    assert org.key not in projects

    # Signing out on the second ends the session on the first too.
    token = csrf_token(projects)
    assert htmx_post(browser, second + "/signout", token, {}).status_code in (200, 303)
    assert cluster.redis().get(cluster.session_prefix + sid) is None
    answer = browser.get(first + "/projects", timeout=30, allow_redirects=False)
    assert answer.status_code == 302 and "/signin" in answer.headers["Location"]


# --- jobs -----------------------------------------------------------------------------------


def test_a_job_started_on_one_dashboard_shows_progress_on_the_other_and_runs_on_a_worker(
        cluster):
    first, second = cluster.dashboard_urls
    org = cluster.orgs["jobs"]
    browser = sign_in(first, org.key)
    page(browser, f"{second}/projects/{org.project_id}/queries")  # the second knows the project
    done_before = jobs_done_by_workers(cluster)
    store = jobs_store(cluster)
    try:
        job_id = start_job(browser, first, org, "sale")

        # The second dashboard shows the job moving, batch after batch.
        seen: list[int] = []
        queued_message = None
        while True:
            html = panel(browser, second, org, job_id)
            if "data-job-summary" in html:
                break
            if queued_message is None:  # read while it runs (a finished one leaves no trace)
                queued_message = rq_queued_message(cluster, job_id)
            match = DONE.search(html)
            if match:
                seen.append(int(match.group(1).replace(",", "")))
            time.sleep(0.05)
        moving = [n for n in seen if 0 < n < QUERIES]
        assert len(set(moving)) >= 2, seen
        assert seen == sorted(seen)
        assert f"Added ‘sale’ to {QUERIES:,} queries." in text_of(html)

        edit = store.get(job_id)
        assert (edit.state, edit.processed, edit.changed) == ("done", QUERIES, QUERIES)
        # It ran on the RQ worker, which got the job's id and nothing else.
        assert jobs_done_by_workers(cluster) == done_before + 1
        assert queued_message == (job_id,)
        # The key is in no job row either (the job read it from the session in Redis).
        engine = create_engine(cluster.jobs_database)
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT * FROM edits")).all()
        engine.dispose()
        assert rows and org.key not in repr(rows)
    finally:
        store.engine.dispose()
    assert all(names == {"sale"} for names, _ in api_state(cluster, org).values())


def rq_queued_message(cluster: Cluster, job_id: str) -> tuple | None:
    """The arguments of the RQ job running `job_id`, if it is still in RQ's registry."""
    from rq import Queue
    from rq.registry import StartedJobRegistry

    queue = Queue(cluster.queue, connection=cluster.redis())
    for rq_id in StartedJobRegistry(queue=queue).get_job_ids():
        job = queue.fetch_job(rq_id)
        if job is not None and rq_id.startswith(job_id):
            return tuple(job.args)
    return None


def test_an_rq_worker_killed_mid_job_leaves_it_interrupted_and_resumable(cluster):
    """Runs after the test above: every query of the project has ‘sale’; this job removes it."""
    first, second = cluster.dashboard_urls
    org = cluster.orgs["jobs"]
    before = api_state(cluster, org)
    assert all(names == {"sale"} for names, _ in before.values())
    browser = sign_in(first, org.key)
    store = jobs_store(cluster)
    try:
        job_id = start_job(browser, first, org, "sale", action="remove")
        wait_for_progress(store, job_id, 300)
        # The job runs in a process its worker forked for it (in a session of its own, so it
        # would finish the job alone): both die, as with their machine.
        host, pid, _token = store.get(job_id).owner.split(":")
        assert host == socket.gethostname()
        cluster.worker_of(int(pid)).kill()
        assert ended(int(pid))

        # Any dashboard notices the job's process is gone (or, failing that, silent) and says so.
        deadline = time.monotonic() + 45
        while "data-job-summary" not in (html := panel(browser, second, org, job_id)):
            assert time.monotonic() < deadline, html
            time.sleep(0.05)
        stopped = store.get(job_id)
        assert stopped.state == "interrupted" and stopped.resumable
        assert f"Interrupted after {stopped.processed:,} of {QUERIES:,} queries done." \
            in text_of(html)
        middle = api_state(cluster, org)
        done_then = assert_exactly_what_was_done(store, stopped, before, middle)

        resume(browser, first, org, job_id)  # the other worker takes it
        final = wait_for_job(store, job_id, ("done", "interrupted", "failed"), timeout=45)
        assert final.state == "done", final.message
        assert (final.processed, final.changed) == (QUERIES, QUERIES)
        assert len(store.changes(job_id)) == QUERIES
    finally:
        store.engine.dispose()
    after = api_state(cluster, org)
    assert all(names == set() for names, _ in after.values())
    assert [q for q in done_then if after[q][1] != middle[q][1]] == []


# --- rate limits ----------------------------------------------------------------------------


def test_the_rate_limit_is_one_budget_across_both_service_processes(cluster):
    """10 a minute for the organization: 30 requests, alternately to each process, get 10
    answers and 20 refusals — not 10 from each."""
    org = cluster.orgs["budget"]
    answers = []
    for i in range(30):
        base = cluster.service_urls[i % 2]
        answers.append(requests.get(base + "/api/projects/list", timeout=30,
                                    headers={"x-api-key": org.key}))
    assert [a.status_code for a in answers] == [200] * 10 + [429] * 20
    assert [int(a.headers["X-RateLimit-Remaining"]) for a in answers[:10]] == list(
        range(9, -1, -1))
    assert all(int(a.headers["Retry-After"]) >= 1 for a in answers[10:])


def test_the_shared_budget_holds_when_both_processes_are_hit_at_once(cluster):
    org = cluster.orgs["race"]
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(6)

    def spend(base: str) -> None:
        with requests.Session() as http:
            start.wait()
            for _ in range(5):
                status = http.get(base + "/api/projects/list", timeout=30,
                                  headers={"x-api-key": org.key}).status_code
                with lock:
                    statuses[status] += 1

    threads = [threading.Thread(target=spend, args=(cluster.service_urls[i % 2],))
               for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert statuses == Counter({200: 10, 429: 20})


# --- the service killed mid-job -------------------------------------------------------------


def test_the_service_killed_mid_job_leaves_it_interrupted_and_resume_applies_nothing_twice(
        cluster):
    first, second = cluster.dashboard_urls
    org = cluster.orgs["fault"]
    before = api_state(cluster, org)
    assert sum("brand" in names for names, _ in before.values()) == ALREADY
    browser = sign_in(first, org.key)
    store = jobs_store(cluster)
    try:
        job_id = start_job(browser, first, org, "brand")
        wait_for_progress(store, job_id, 300)
        for process in cluster.services:  # every service process, with no time to clean up
            process.kill()
        stopped = wait_for_job(store, job_id, ("interrupted",), timeout=45)
        assert 300 <= stopped.processed < QUERIES
        assert stopped.message.startswith("It stopped: ") and cluster.api_url in stopped.message
        cluster.restart_services()
        middle = api_state(cluster, org)
        done_then = assert_exactly_what_was_done(store, stopped, before, middle)

        # The other dashboard reports it so, and resumes it there.
        shown = text_of(panel(browser, second, org, job_id))
        assert f"Interrupted after {stopped.processed:,} of {QUERIES:,} queries done." in shown
        assert "Resume" in shown
        resume(browser, second, org, job_id)
        final = wait_for_job(store, job_id, ("done", "interrupted", "failed"), timeout=45)
        assert final.state == "done", final.message
        assert (final.processed, final.changed, final.untouched) == (
            QUERIES, QUERIES - ALREADY, ALREADY)
        assert len(store.changes(job_id)) == QUERIES - ALREADY
        assert f"Added ‘brand’ to {QUERIES - ALREADY:,} queries ({ALREADY} already had it)." \
            in text_of(panel(browser, second, org, job_id))
    finally:
        store.engine.dispose()

    after = api_state(cluster, org)
    assert {q: names for q, (names, _) in after.items()} == {
        q: names | {"brand"} for q, (names, _) in before.items()}
    # Nothing applied twice: what was done by the interruption was not written again, and
    # what had the tag from the start was never written at all.
    assert [q for q in done_then if after[q][1] != middle[q][1]] == []
    assert [q for q, (names, at) in before.items() if "brand" in names
            and after[q][1] != at] == []
