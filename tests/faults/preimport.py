"""gunicorn configuration for the fault tests (`--config python:tests.faults.preimport`): the
master imports the application's modules once, so each worker forks with them loaded and only
builds its own app. On a busy machine two workers then start about as fast as one."""

import app  # noqa: F401  (imports the service's modules too)
