"""schemathesis, stateful: sequences of API calls chained by the OpenAPI links of
docs/openapi.yaml (a listed project's queries and tags, a listed query's tags set, the queries
of a listed tag), against the live service over loopback. A bounded run: no 5xx, every
response valid against the document, authentication enforced on every operation.

A run that never followed a link would prove little, so the test also checks that the chain
reached every handler with a success (set-tags on a query the previous call listed included).
It runs on PostgreSQL when TAGDESK_TEST_POSTGRES=1 (the production engine), else on SQLite;
the stateless run (tests/service/test_openapi_conformance.py) covers both.
"""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.specs.openapi.checks import ignored_auth

from tests.support.databases import database_for
from tests.support.openapi import OPENAPI_DOCUMENT, RESPONSE_CHECKS
from tests.support.switches import wanted

# negative_data_rejection is left to the stateless run: here every call carries the key, which
# turns a case meant to lack it into a valid request.
CHECKS = [*RESPONSE_CHECKS, ignored_auth]
# 40 sequences: with the words and suggestions operations in the document, 15 (then 25) no
# longer reached set-tags on a listed query, on either database.
SCENARIOS = settings(max_examples=40, stateful_step_count=10, deadline=None, derandomize=True,
                     database=None,
                     phases=[Phase.generate], suppress_health_check=list(HealthCheck))

schema = schemathesis.openapi.from_path(OPENAPI_DOCUMENT)
LINKS = {path: operation["responses"]["200"]["links"] for path, operation in (
    ("/api/projects/list", schema.raw_schema["paths"]["/api/projects/list"]["get"]),
    ("/api/queries/list", schema.raw_schema["paths"]["/api/queries/list"]["post"]))}
# The set-tags link names a whole item: the body it builds is sent as it is, not merged into a
# generated one (whose other, random items would make every such call a 404).
LINKS["/api/queries/list"]["SetTagsOfListedQuery"]["x-schemathesis"] = {"merge_body": False}
# A listed project's queries are read unfiltered (random filters match nothing, and an empty
# page leaves the set-tags link nothing to follow).
LINKS["/api/projects/list"]["ProjectQueries"].update(
    requestBody={}, **{"x-schemathesis": {"merge_body": False}})


@pytest.fixture
def database_url(request, tmp_path, sqlite_template) -> str:
    kind = "postgres" if wanted("TAGDESK_TEST_POSTGRES") else "sqlite"
    return database_for(kind, request, tmp_path, sqlite_template)


def test_chained_calls_never_fail_and_always_match_the_document(live_service, world):
    world.add_queries([
        ("running shoes", "en", "US", ["brand"]),
        ("laufschuhe", "de", "DE", ["sale", "local"]),
        ('<b>bold</b> & "quoted"', "fr", "FR", []),
    ])
    world.add_queries([("help me", "en", "GB", [])], project_id=world.other_project_id)
    outcomes: Counter[tuple[str, int]] = Counter()

    class Workflow(schema.as_state_machine()):
        def get_call_kwargs(self, case):
            return {"base_url": live_service.url, "headers": {"x-api-key": world.key}}

        def after_call(self, response, case):
            super().after_call(response, case)
            operation = case.operation.definition.raw["operationId"]
            outcomes[(operation, response.status_code)] += 1

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            case.validate_response(response, checks=CHECKS, transport_kwargs=kwargs,
                                   recorder=self.recorder)

    Workflow.run(settings=SCENARIOS)

    assert not [outcome for outcome in outcomes if outcome[1] >= 500], outcomes
    for operation in ("listProjects", "listQueries", "listTags", "setQueryTags"):
        assert outcomes[(operation, 200)] > 0, (operation, outcomes)
