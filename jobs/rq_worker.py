"""`flask --app app worker`: an RQ worker that runs the dashboard's background jobs.

It loads the dashboard's configuration exactly as a dashboard process does (the same
TAGDESK_* settings: Redis, the jobs database, the API's address, the instance folder), and
takes job ids from the queue that `RQRunner` fills. RQ forks a fresh process for each job, so
one job's crash cannot take the worker with it; run as many workers as jobs should run at once.

Stopping: SIGTERM lets the job in hand finish first (RQ's warm shutdown); a second SIGTERM, or
SIGKILL, stops it at once — the job is then shown interrupted, with exactly what was done,
and Resume queues it again.
"""

from __future__ import annotations

from collections.abc import Callable

import click
from flask import current_app
from flask.cli import with_appcontext

from .work import run_job

# Set by the command before the work loop starts; every forked job process inherits it.
_job_config: Callable[[], dict] | None = None


def perform(job_id: str) -> str | None:
    """What the queue's messages call (by this import path)."""
    if _job_config is None:
        raise RuntimeError("Tagdesk jobs run on workers started with `flask --app app worker`.")
    return run_job(job_id, _job_config())


def work(job_config: Callable[[], dict], redis_url: str, queue_name: str, *,
         burst: bool = False, name: str | None = None) -> None:
    global _job_config
    import redis
    from rq import Queue, Worker

    _job_config = job_config
    connection = redis.Redis.from_url(redis_url)
    queue = Queue(queue_name, connection=connection)
    Worker([queue], connection=connection, name=name).work(burst=burst)


@click.command("worker")
@click.option("--burst", is_flag=True, help="Stop once the queue is empty.")
@click.option("--name", default=None, help="The worker's name in RQ (default: random).")
@with_appcontext
def worker_command(burst: bool, name: str | None) -> None:
    """Run background jobs from the Redis queue (scale-out mode)."""
    config = current_app.config
    if config["JOBS_RUNNER"] not in (None, "", "rq") or not config["REDIS_URL"] \
            or not config["API_URL"]:
        raise click.UsageError(
            "The worker runs jobs queued in Redis: set TAGDESK_REDIS_URL and TAGDESK_API_URL "
            "(as for the dashboards). Without them the dashboard runs its jobs itself.")
    click.echo(f"Tagdesk worker: queue {config['JOBS_QUEUE']!r}, API {config['API_URL']}",
               err=True)
    work(current_app.extensions["tagdesk_job_config"], config["REDIS_URL"],
         config["JOBS_QUEUE"], burst=burst, name=name)
