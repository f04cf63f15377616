"""The real service as a deployment of the Query & Tag API without Tagdesk's extensions would
be: WSGI around the service's own app, answering the reference's endpoints unchanged, the
extensions' paths as unknown (404), and the OpenAPI document without the operations and the
request fields marked `x-tagdesk-extension` — or, with `document=False`, no document at
all."""

from __future__ import annotations

import json

from werkzeug.wrappers import Request, Response

NOT_FOUND = {"statusCode": 404, "message": "Not found.", "error": "Not Found"}
OPENAPI = "/api/openapi.json"
# The fields of queries/list's filter the service marks as extensions.
EXTENSION_FIELDS = frozenset({"tagMatch", "excludeTagIds", "excludeTagNames", "untagged",
                              "pattern", "metricRanges", "include", "suggestedTagIds",
                              "minConfidence"})


def extension_paths(document: dict) -> set[str]:
    return {path for path, methods in document.get("paths", {}).items()
            if any(isinstance(operation, dict) and operation.get("x-tagdesk-extension")
                   for operation in methods.values())}


class WithoutExtensions:
    def __init__(self, service_app, document: bool = True):
        self.service_app = service_app
        self.document = document
        with service_app.test_client() as client:
            self.hidden = extension_paths(client.get(OPENAPI).get_json())
        assert self.hidden, "the service has no extension to hide"
        self.requests: list[tuple[str, str]] = []

    def __call__(self, environ, start_response):
        request = Request(environ)
        self.requests.append((request.method, request.path))
        if request.path in self.hidden or (request.path == OPENAPI and not self.document):
            response = Response(json.dumps(NOT_FOUND), 404, mimetype="application/json")
            return response(environ, start_response)
        if request.path == OPENAPI:
            answer = Response.from_app(self.service_app, environ)
            if answer.status_code == 200:
                document = json.loads(answer.get_data())
                for path in self.hidden:
                    document["paths"].pop(path, None)
                for schema in document.get("components", {}).get("schemas", {}).values():
                    fields = schema.get("properties", {})
                    for name in [name for name, field in fields.items()
                                 if isinstance(field, dict) and field.get("x-tagdesk-extension")]:
                        del fields[name]
                answer.set_data(json.dumps(document))
            return answer(environ, start_response)
        return self.service_app(environ, start_response)
