"""What several test modules assert of the service's answers: a request refused as bad (400
and its error object), another organization's record answered as a missing one, an extension's
marks in the served OpenAPI document."""

from __future__ import annotations

import requests

from tests.support.api import Api


def assert_bad_request(response: requests.Response, message) -> None:
    """The service's answer to a request it refuses as bad: a 400 whose body is its error
    object, `message` the sentences saying why."""
    assert response.status_code == 400, response.text
    assert response.json() == {"statusCode": 400, "error": "Bad Request", "message": message}


def assert_theirs_not_found(api: Api, path: str, body: dict, not_found: str,
                            their_project: str) -> None:
    """Another organization's record, addressed by `api` with `body`, is answered as a missing
    one (404, `not_found`); named with their project instead, the project is not found."""
    response = api.post(path, body)
    assert response.status_code == 404
    assert response.json()["message"] == not_found
    foreign = api.post(path, body, **{"x-project-id": their_project})
    assert foreign.status_code == 404 and foreign.json()["message"] == "Project not found."


def assert_an_extension(served: dict, path: str, operation_id: str, status: str,
                        refusal: str) -> None:
    """The served OpenAPI document marks POST `path` as an extension of the reference API: its
    flag, its operation id, the word in its summary, `status` and `refusal` among its
    responses."""
    operation = served["paths"][path]["post"]
    assert operation["x-tagdesk-extension"] is True
    assert operation["operationId"] == operation_id
    assert "extension" in operation["summary"].lower()
    assert status in operation["responses"] and refusal in operation["responses"]
