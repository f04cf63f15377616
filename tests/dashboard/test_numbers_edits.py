"""Ranges of numbers carried by what keeps a filter, through the embedded service over HTTP: a
bulk edit over a view with a range tags exactly the queries in range (the job keeps the
filter's body and reads it back), and a rule made from such a view keeps the range in its
condition."""

from __future__ import annotations

from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import (
    api_of,
    bulk_url,
    latest,
    page,
    plan_of,
    post,
    store_of,
    tag_names_by_query,
    text_of,
    wait_for,
)
from tests.dashboard.test_numbers_page import NUMBERED, numbered  # noqa: F401 (a fixture)

IN_RANGE = {"red boots", "green boots"}  # volume 800 and 5,000


def test_a_bulk_edit_over_a_view_with_a_range_tags_exactly_the_queries_in_range(
        app, signed_in, numbered):  # noqa: F811
    app.config["BULK_BATCH_SIZE"] = 1  # a batch a query: the range is read back each time
    html = page(signed_in, numbered, "volume_min=500&volume_max=5000")
    before = tag_names_by_query(app, numbered)
    asked = post(signed_in, bulk_url(numbered), {
        "action": "add", "apply_tag": str(numbered.tags["local"]), "scope": "all",
        "volume_min": "500", "volume_max": "5000"}, html)
    assert asked.status_code == 200, asked.get_data(as_text=True)[:500]
    assert "2 queries matching volume 500 to 5,000" in text_of(asked.get_data(as_text=True))
    started = post(signed_in, f"/projects/{numbered.project_id}/bulk/confirm",
                   {"plan": plan_of(asked.get_data(as_text=True))}, html)
    assert started.status_code == 200
    edit = wait_for(app, latest(app, numbered).id)
    assert edit.state == "done" and (edit.processed, edit.changed) == (2, 2)
    # The job keeps the filter as the API's body, the range in it.
    assert store_of(app).get(edit.id).scope_filter["metricRanges"] == {
        "volume": {"min": 500, "max": 5000}}
    after = tag_names_by_query(app, numbered)
    for key, names in after.items():
        expected = before[key] | {"local"} if key[0] in IN_RANGE else before[key]
        assert names == expected, key


def test_a_rule_made_from_a_view_with_a_range_keeps_it(app, signed_in, numbered):  # noqa: F811
    html = page(signed_in, numbered)
    response = post(signed_in, f"/projects/{numbered.project_id}/rules", {
        "view": "?volume_min=1000", "pattern": "", "name": "Big ones", "add": "local",
        "step": "save"}, html, htmx=False)
    assert response.status_code == 302, response.get_data(as_text=True)[:500]
    with api_of(app, numbered) as api:
        (rule,) = api.list_rules(numbered.project_id)
    assert rule.condition == QueryFilters(metric_ranges={"volume": (1000, None)})
    wait_for(app, latest(app, numbered).id)
    tagged = {key[0] for key, names in tag_names_by_query(app, numbered).items()
              if "local" in names}
    big = {query for query, _l, _c, _t, numbers in NUMBERED
           if numbers and numbers.get("volume", 0) >= 1000}
    assert big == {"blue boots", "green boots"} and big <= tagged
    listing = signed_in.get(f"/projects/{numbered.project_id}/rules").get_data(as_text=True)
    assert "Volume at least 1,000 → local" in text_of(listing)
