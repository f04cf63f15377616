"""Gunicorn's settings for the service and the dashboard alike: gunicorn reads this file from
the directory it starts in (the repository's root, as docs/deploy.md runs it)."""

import gc

from weblib.collector import collect_young_less_often

# No control socket (gunicornc): the service's and the dashboard's servers on one machine would
# both make it at the same default path ($XDG_RUNTIME_DIR or ~/.gunicorn/gunicorn.ctl), the
# second replacing the first's. They are run by the service manager and its signals.
control_socket_disable = True


def post_worker_init(worker) -> None:
    """The loaded app's objects (modules, SQLAlchemy's and pydantic's, about 135,000) live as
    long as the worker: frozen, the collector's full passes skip them. Unfrozen, a request that
    allocates many objects now and then ran a full pass over them all: 70 ms of 90 in a
    first search of ten million queries, once in four or five such requests. The young
    generation is collected less often (weblib/collector.py)."""
    gc.freeze()
    collect_young_less_often()
