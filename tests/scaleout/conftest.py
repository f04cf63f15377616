"""The scale-out topology on loopback, started once for the module: two service processes and
two dashboard processes under gunicorn, two RQ workers, all sharing Redis and PostgreSQL.

- PostgreSQL: two databases of this run's own (the service's data; the dashboard's jobs and
  activity), dropped at the end.
- Redis: a database number of its own (not the suite's 0, so address-keyed throttles of other
  tests never meet ours) and names carrying this run's token (session keys, the job queue,
  the workers), deleted at the end — several runs may share the Redis at once.
- The two service processes listen together on one address (SO_REUSEPORT: the kernel spreads
  connections over both), which the dashboards and the workers use, and each also on a port of
  its own, so a test can send a request to the process it chooses.

Every process is started in a session of its own, so a test can SIGKILL one with everything it
started (gunicorn's master and workers) and start it again.
"""

from __future__ import annotations

import os
import secrets
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import create_engine

from service import schema
from tests.support.databases import REDIS_URL
from tests.support.ports import free_port
from tests.support.scaleout import (
    REDIS_DB,
    ROOT,
    Cluster,
    Org,
    Process,
    answers,
    create_database,
    drop_database,
    forget_in_redis,
    gunicorn,
    job_ids,
    redis_url_with_db,
    seed,
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    import redis

    token = secrets.token_hex(4)
    folder = tmp_path_factory.mktemp("scaleout")
    redis_url = redis_url_with_db(REDIS_URL, REDIS_DB)
    redis.Redis.from_url(redis_url).ping()
    names = [f"tagdesk_scaleout_{token}", f"tagdesk_scaleout_jobs_{token}"]
    processes: list[Process] = []
    orgs: dict[str, Org] = {}
    try:
        with ThreadPoolExecutor(2) as pool:
            service_database, jobs_database = pool.map(create_database, names)
        engine = create_engine(service_database)
        schema.upgrade(engine)
        engine.dispose()
        orgs = seed(service_database)

        shared, own = free_port(), [free_port(), free_port()]
        service_env = {**os.environ, "PYTHONPATH": str(ROOT),
                       "TAGDESK_DATABASE_URL": service_database, "TAGDESK_REDIS_URL": redis_url}
        services = [Process(f"service{i + 1}", gunicorn(
            [shared, port], "service:create_app()", ["--reuse-port"]), service_env, folder)
            for i, port in enumerate(own)]

        api_url = f"http://127.0.0.1:{shared}"
        session_prefix = f"tagdesk-{token}:session:"
        queue = f"tagdesk-{token}-jobs"
        # The dashboards' and the worker's settings: the TAGDESK_* environment a deployment
        # sets, plus what keeps this run apart from others and a job slow enough to watch.
        dashboard_env = {**os.environ, "PYTHONPATH": str(ROOT),
                         "TAGDESK_API_URL": api_url, "TAGDESK_REDIS_URL": redis_url,
                         "TAGDESK_JOBS_DATABASE_URL": jobs_database,
                         "TAGDESK_SECRET_KEY": secrets.token_hex(32)}
        dashboard_env.pop("TAGDESK_JOBS_RUNNER", None)
        factory = "app:create_app({!r})".format({
            "INSTANCE_PATH": str(folder / "instance"), "SESSION_KEY_PREFIX": session_prefix,
            "JOBS_QUEUE": queue, "BULK_BATCH_SIZE": 100, "SIGNIN_LIMIT": "1000/minute",
            # The fault tests: a job meeting a dead service gives up after one quick retry;
            # one whose process died unseen is reported after 10 s of silence.
            "JOBS_API_RETRIES": 1, "JOBS_STALE_SECONDS": 10.0,
        })
        dashboard_ports = [free_port(), free_port()]
        dashboards = [Process(f"dashboard{i + 1}", gunicorn([port], factory), dashboard_env,
                              folder) for i, port in enumerate(dashboard_ports)]
        worker_names = [f"tagdesk-{token}-worker{i + 1}" for i in range(2)]
        workers = [Process(name.rsplit("-", 1)[1], [
            sys.executable, "-m", "flask", "--app", factory, "worker", "--name", name],
            dashboard_env, folder) for name in worker_names]
        processes = [*services, *dashboards, *workers]
        for process in processes:
            process.start()

        service_urls = [f"http://127.0.0.1:{port}" for port in own]
        dashboard_urls = [f"http://127.0.0.1:{port}" for port in dashboard_ports]
        for process, url in zip(services, service_urls, strict=True):
            process.wait_until(lambda url=url: answers(url + "/api/openapi.json"), "start")
        for process, url in zip(dashboards, dashboard_urls, strict=True):
            process.wait_until(lambda url=url: answers(url + "/signin"), "start")
        connection = redis.Redis.from_url(redis_url)
        for worker, name in zip(workers, worker_names, strict=True):
            worker.wait_until(lambda name=name: connection.exists(f"rq:worker:{name}"),
                              "register")

        yield Cluster(token, redis_url, service_database, jobs_database, api_url, service_urls,
                      dashboard_urls, services, dashboards, workers, session_prefix, queue,
                      orgs)
    finally:
        # Nothing of theirs outlives the run (the workers' registrations and the queue are
        # among the keys deleted below), and a warm shutdown would wait for idle connections.
        for process in processes:
            process.kill()
        marks = [token, *(org.id for org in orgs.values()), *job_ids(names[1])]
        with ThreadPoolExecutor(2) as pool:  # each waits for a checkpoint: side by side
            list(pool.map(drop_database, names))
        forget_in_redis(redis_url, marks)
