"""requests against a live service with a key and project preset."""

from __future__ import annotations

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

    def queries(self, **body):
        return self.call("POST", "/api/queries/list", json=body)

    def tags(self, **body):
        return self.call("POST", "/api/tags/list", json=body)

    def projects(self, **params):
        return self.call("GET", "/api/projects/list", params=params)

    def set_tags(self, items):
        return self.call("PATCH", "/api/queries/many/tags-only", json={"queries": items})


def by_rule(record: dict) -> dict[str, int]:
    """Tag id → the rule that added it, of a query's record (its tagSources, an extension)."""
    return {tag: source["ruleId"] for tag, source in record.get("tagSources", {}).items()
            if "ruleId" in source}
