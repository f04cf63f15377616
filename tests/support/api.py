"""requests against a live service with a key and project preset."""

from __future__ import annotations

import threading
from collections.abc import Callable

import requests


class Api:
    """requests against a live service with a key and project preset."""

    def __init__(self, base_url: str, key: str | None, project_id: str | None):
        self.base_url = base_url
        self.session = requests.Session()
        self.headers = {}
        if key is not None:
            self.headers["x-api-key"] = key
        if project_id is not None:
            self.headers["x-project-id"] = project_id

    def call(self, method: str, path: str, json=None, headers=None, **kwargs):
        merged = {**self.headers, **(headers or {})}
        return self.session.request(method, self.base_url + path, json=json,
                                    headers=merged, timeout=30, **kwargs)

    def post(self, path: str, body=None, **headers):
        """POST `body` as JSON to `path`, `headers` beside the preset ones."""
        return self.call("POST", path, json=body, headers=headers)

    def queries(self, **body):
        return self.call("POST", "/api/queries/list", json=body)

    def tags(self, **body):
        return self.call("POST", "/api/tags/list", json=body)

    def projects(self, **params):
        return self.call("GET", "/api/projects/list", params=params)

    def set_tags(self, items):
        return self.call("PATCH", "/api/queries/many/tags-only", json={"queries": items})

    def another_session(self) -> Api:
        """An Api of its own (its own connection) with this one's service, key and project."""
        return Api(self.base_url, self.headers.get("x-api-key"),
                   self.headers.get("x-project-id"))


def racing_statuses(api: Api, callers: int,
                    send: Callable[[Api, int], requests.Response]) -> list[int]:
    """`callers` threads, each with an Api of its own like `api`, call `send(caller, index)` at
    the same moment (a barrier); the statuses of their answers, sorted."""
    start = threading.Barrier(callers)
    statuses: list[int] = []

    def race(index: int) -> None:
        caller = api.another_session()
        start.wait()
        statuses.append(send(caller, index).status_code)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return sorted(statuses)


def by_rule(record: dict) -> dict[str, int]:
    """Tag id → the rule that added it, of a query's record (its tagSources, an extension)."""
    return {tag: source["ruleId"] for tag, source in record.get("tagSources", {}).items()
            if "ruleId" in source}
