"""Bulk edits that outlive a request: the jobs database, the walk that writes deltas on
fresh state, undo, exports, and who runs them.

    deltas.py   Delta (add/remove/replace), Change (what an edit did to one query), the
                filter an undo walks (a job's filter is queryapi's QueryFilters, as its body)
    store.py    SQLAlchemy Core tables in the dashboard's database; the per-project lease
    schema.py   the jobs database's Alembic migrations (migrations/), run at start-up
    walk.py     the batch-by-batch walk over a filter (fresh reads, writes, progress)
    rewrite.py  the step every edit shares: new tags from fresh ones, and the write (what
                changes, or whole sets under the lease where the service lacks tags-edit)
    fresh.py    fresh state of a few known rows within a request
    work.py     run_job(job_id, app_config): a plain function any runner can call
    runner.py   JobRunner.submit(job_id): ThreadRunner (in process), InlineRunner (tests)
    rq_runner.py RQRunner: the job's id on a Redis queue (scale-out mode)
    rq_worker.py `flask --app app worker`: the RQ worker that runs queued jobs
    sessions.py the job's org key, from the person's session as the app's session interface
                opens it (never the jobs DB)
    export.py   CSV of a view, page by page

It never imports the dashboard (blueprints/) or the service; it talks to the API only through
queryapi.
"""
