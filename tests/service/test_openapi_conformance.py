"""schemathesis against docs/openapi.yaml and the service: no 5xx, every response valid.

A bounded run of schemathesis's three phases for every operation of the document: the
document's examples, the coverage cases (boundary values, and negative data that must be
rejected) and fuzzing, positive and negative, as its pytest integration runs them. Most cases
get a real project id so that they reach the handlers instead of stopping at a 404.

The cases are built inside the test, for one operation at a time, in the process that runs it:
built at collection (``schema.parametrize()``), the coverage cases of the bulk operation alone
cost every xdist worker over ten seconds of CPU before any test ran. Each operation's explicit
cases are built once: all of them run on SQLite, as the pytest integration ran them; on
PostgreSQL, every positive case and one negative case of each violation of each field
(one_case_per_violation).
"""

from functools import cache

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from schemathesis import checks
from schemathesis.generation import GenerationMode

from tests.support.openapi import OPENAPI_DOCUMENT, RESPONSE_CHECKS

CHECKS = [*RESPONSE_CHECKS, checks.negative_data_rejection]
schema = schemathesis.openapi.from_path(OPENAPI_DOCUMENT)
# Reading the document's operations is cheap; generating their cases is not.
OPERATIONS = {result.ok().label: result.ok() for result in schema.get_all_operations()}
# Fuzzing: 10 random cases an operation on each database (SQLite had 25, ~6 s of CPU more
# a run), positive and negative, every check run on each. They add random combinations to
# what the explicit cases already reach: the document's examples, and the coverage cases,
# which give every operation its boundary values and each violation of each field.
FUZZING = settings(max_examples=10, deadline=None, derandomize=True, database=None,
                   suppress_health_check=list(HealthCheck))


@pytest.fixture
def seeded(world):
    world.add_queries([("running shoes", "en", "US", ["brand"]),
                       ("laufschuhe", "de", "DE", ["sale", "local"])])
    return world


def first_case(strategy):
    """The first case a strategy gives, drawn by Hypothesis as the pytest integration does."""
    cases = []

    @given(case=strategy)
    @settings(max_examples=1, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    def draw(case):
        cases.append(case)

    draw()
    return cases[0]


@cache
def document_examples(operation) -> list:
    """A case from each of the operation's examples in the document."""
    return [first_case(strategy) for strategy in operation.get_strategies_from_examples()]


@cache
def coverage_cases(operation) -> list:
    generation = schema.config.generation_for(operation=operation, phase="coverage")
    return list(schema.iter_coverage_cases(operation, generation_modes=list(generation.modes),
                                           generation_config=generation))


@cache
def one_case_per_violation(operation) -> list:
    """The coverage cases for PostgreSQL: every positive case (boundary values reach the
    database), and of the negative ones, the first of each violation of each field (such as
    "tagIds -> Array with invalid items: Incorrect type"), not each of its wrong values
    (0, false, null, "AAA"…). The service rejects those in its request validation, the same
    code on both databases, and every one of them runs on SQLite; one value per violation
    still finds a field whose bad value would reach PostgreSQL unchecked."""
    seen, kept = set(), []
    for case in coverage_cases(operation):
        if case.meta.generation.mode == GenerationMode.NEGATIVE:
            scenario = case.meta.phase.data
            violation = (scenario.scenario, scenario.parameter_location, scenario.parameter,
                         scenario.description)
            if violation in seen:
                continue
            seen.add(violation)
        kept.append(case)
    return kept


COVERAGE = {"sqlite": coverage_cases, "postgresql": one_case_per_violation}


def fuzzing_strategy(operation):
    generation = schema.config.generation_for(operation=operation, phase="fuzzing")
    return st.one_of([operation.as_strategy(generation_mode=mode) for mode in generation.modes])


@pytest.mark.parametrize("label", list(OPERATIONS))
def test_service_conforms_to_its_openapi_document(label, seeded, monkeypatch):
    operation = OPERATIONS[label]
    # The cases go to the service's WSGI app in this process (schemathesis's WSGI
    # transport): the app the live server served from a thread of this process, the same
    # requests and answers, without a loopback HTTP round trip for each case. The document
    # as served over HTTP: the test after this one.
    monkeypatch.setattr(schema, "app", seeded.app)

    def check(case):
        headers = dict(case.headers or {})
        if "x-project-id" in headers and hash(str(case.body)) % 5:
            headers["x-project-id"] = seeded.project_id
        case.headers = headers
        response = case.call(headers={"x-api-key": seeded.key}, app=seeded.app)
        case.validate_response(response, checks=CHECKS)

    dialect = seeded.app.extensions["tagdesk_engine"].dialect.name
    run = given(case=fuzzing_strategy(operation))(check)
    # Explicit examples run before any fuzzing: the document's first, then the coverage cases.
    for case in reversed([*document_examples(operation), *COVERAGE[dialect](operation)]):
        run = example(case=case)(run)
    FUZZING(run)()


def test_openapi_document_is_served(live_service):
    served = requests.get(live_service.url + "/api/openapi.json", timeout=10)
    assert served.status_code == 200
    assert served.json()["openapi"].startswith("3.1")
    assert set(served.json()["paths"]) >= {"/api/projects/list", "/api/queries/list",
                                          "/api/queries/many/tags-only", "/api/tags/list"}
