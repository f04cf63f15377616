"""The Rules page: a rule made from a queries view, previewed, saved (its tags given to what
matches now by a job, named in the activity log), paused, resumed, deleted; refusals in
sentences; none of it against a deployment without the extension."""

from __future__ import annotations

import itertools
import re

from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import (
    api_of,
    keys_in,
    page,
    post,
    store_of,
    tag_names_by_query,
    text_of,
    wait_for,
)
from tests.support.dashboard import AuthActions


def rules_url(world, suffix: str = "") -> str:
    return f"/projects/{world.project_id}/rules{suffix}"


def test_the_queries_page_offers_a_rule_from_its_view(signed_in, shop):
    html = page(signed_in, shop, "lang=de&untagged=1")
    link = re.search(r'href="([^"]+)">Make a rule from this view</a>', html)
    assert link.group(1).replace("&amp;", "&") == rules_url(shop, "/new?lang=de&untagged=1")
    assert re.search(rf'href="{rules_url(shop)}"[^>]*>Rules</a>', html)
    form = signed_in.get(link.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert "German (de) · Untagged" in text_of(form)
    for label in ("Pattern", "Rule name"):
        assert f">{label}</label>" in form
    assert "<legend>Tags to add</legend>" in form
    assert ">Preview</button>" in form and ">Save rule</button>" in form


def test_preview_says_what_the_rule_would_do_before_anything_changes(app, signed_in, shop):
    html = page(signed_in, shop)
    before = tag_names_by_query(app, shop)
    body = post(signed_in, rules_url(shop), {"view": "?lang=de", "pattern": "schuhe|damen",
                                             "name": "Shoes", "add": "local",
                                             "step": "preview"}, html).get_data(as_text=True)
    with api_of(app, shop) as api:
        expected = api.preview_rule(shop.project_id, QueryFilters(
            languages=("de",), pattern="schuhe|damen"), (shop.tags["local"],))
    assert expected.matching == 2 and expected.lacking == 1
    assert "This rule matches 2 queries; 1 of them lacks its tags." in text_of(body)
    assert "laufschuhe herren" in body  # the one that lacks it, shown
    assert tag_names_by_query(app, shop) == before
    with api_of(app, shop) as api:
        assert api.list_rules(shop.project_id) == ()


def test_saving_adds_its_tags_to_every_match_as_a_job_named_in_the_activity(
        app, signed_in, shop):
    html = page(signed_in, shop)
    response = post(signed_in, rules_url(shop), {
        "view": "?q=running", "pattern": "", "name": "Running", "add": ["sale", "local"],
        "step": "save"}, html, htmx=False)
    assert response.status_code == 302 and response.headers["Location"] == rules_url(shop)
    edit = wait_for(app, store_of(app).for_project(shop.project_id, limit=1)[0].id)
    assert edit.state == "done"
    after = tag_names_by_query(app, shop)
    running = {key: tags for key, tags in after.items() if "running" in key[0]}
    assert running and all({"sale", "local"} <= tags for tags in running.values())
    listing = signed_in.get(rules_url(shop)).get_data(as_text=True)
    assert "Saved the rule “Running”." in text_of(listing)
    assert "Text contains “running” → sale and local" in text_of(listing)
    assert f"Matches {len(running)} queries now; {len(running)} of them carry its tags." in \
        text_of(listing)
    activity = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert "matching rule “Running”" in text_of(activity)


def test_refusals_are_sentences_and_keep_what_was_typed(signed_in, shop):
    html = page(signed_in, shop)
    cases = [
        ({"name": "", "add": "sale"}, "Give the rule a name."),
        ({"name": "No tags"}, "Choose at least one tag for the rule to add."),
        ({"name": "Long", "add": "sale", "pattern": "a" * 1001},
         "A pattern can be at most 1,000 characters; this one has 1,001."),
        # The service's sentence, without the API's name of the field ('condition.pattern').
        ({"name": "Broken", "add": "sale", "pattern": "(unclosed"},
         "The pattern is not valid: a “(” has no “)” to close it (at “(unclosed”)."),
    ]
    for (fields, sentence), step in itertools.product(cases, ("save", "preview")):
        response = post(signed_in, rules_url(shop), {"view": "?q=shoes", "step": step,
                                                     **fields}, html)
        body = response.get_data(as_text=True)
        assert sentence in text_of(body), (fields, step, text_of(body)[:300])
        assert "condition." not in text_of(body)
        assert 'role="alert"' in body
        if fields.get("pattern", "").startswith("("):
            assert 'value="(unclosed"' in body


def test_pause_resume_and_delete(app, signed_in, shop):
    with api_of(app, shop) as api:
        rule = api.create_rule(shop.project_id, "Price words", QueryFilters(text="cheap"),
                               (shop.tags["sale"],))
    html = page(signed_in, shop)
    listing = signed_in.get(rules_url(shop)).get_data(as_text=True)
    assert ">Pause<span class=\"visually-hidden\"> Price words</span>" in listing
    post(signed_in, rules_url(shop, f"/{rule.id}/pause"), {"paused": "1"}, html, htmx=False)
    listing = signed_in.get(rules_url(shop)).get_data(as_text=True)
    assert "Paused the rule “Price words”" in text_of(listing)
    assert ">Resume<span class=\"visually-hidden\"> Price words</span>" in listing
    with api_of(app, shop) as api:
        assert api.list_rules(shop.project_id)[0].paused
    post(signed_in, rules_url(shop, f"/{rule.id}/pause"), {"paused": "0"}, html, htmx=False)
    with api_of(app, shop) as api:
        assert not api.list_rules(shop.project_id)[0].paused
    post(signed_in, rules_url(shop, f"/{rule.id}/delete"), {}, html, htmx=False)
    listing = signed_in.get(rules_url(shop)).get_data(as_text=True)
    assert "Deleted the rule “Price words”. The tags it added stay." in text_of(listing)
    with api_of(app, shop) as api:
        assert api.list_rules(shop.project_id) == ()
    assert signed_in.get(rules_url(shop, f"/{rule.id}/edit")).status_code == 404


def test_without_the_extension_there_are_no_rules(external, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    html = page(client, shop)
    assert "Make a rule from this view" not in html and ">Rules</a>" not in html
    assert client.get(rules_url(shop)).status_code == 404
    assert client.get(rules_url(shop, "/new")).status_code == 404


# --- run by the service: save, undo, delete with its tags, undo; where a tag came from -------


def undo(client, world, edit_id: str, html: str):
    return post(client, f"/projects/{world.project_id}/edits/{edit_id}/undo",
                {"context": "activity"}, html)


def test_a_saved_rule_is_applied_by_the_service_and_undone(app, signed_in, shop):
    before = tag_names_by_query(app, shop)
    html = page(signed_in, shop)
    post(signed_in, rules_url(shop), {"view": "?q=running", "pattern": "", "name": "Running",
                                      "add": ["sale"], "step": "save"}, html, htmx=False)
    edit = wait_for(app, store_of(app).for_project(shop.project_id, limit=1)[0].id)
    running = {key for key in before if "running" in key[0]}
    lacking = {key for key in running if "sale" not in before[key]}
    assert (edit.state, edit.scope, edit.changed, edit.untouched) == (
        "done", "rule", len(lacking), len(running) - len(lacking))
    assert edit.scope_filter["since"].endswith("Z")  # the service's time, for the undo
    after = tag_names_by_query(app, shop)
    assert all("sale" in after[key] for key in running)
    assert {key for key in after if after[key] != before[key]} == lacking
    activity = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert (f"Rule “Running” added ‘sale’ to {len(lacking)} queries "
            f"({len(running) - len(lacking)} already had it)") in text_of(activity)
    response = undo(signed_in, shop, edit.id, activity)
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    undone = wait_for(app, store_of(app).for_project(shop.project_id, limit=1)[0].id)
    assert (undone.kind, undone.state, undone.changed) == ("undo", "done", len(lacking))
    assert tag_names_by_query(app, shop) == before
    # The rule stays, and acts on entry still.
    with api_of(app, shop) as api:
        assert [rule.name for rule in api.list_rules(shop.project_id)] == ["Running"]


def test_deleting_a_rule_may_take_back_the_tags_it_added_undoably(app, signed_in, shop):
    before = tag_names_by_query(app, shop)
    with api_of(app, shop) as api:
        rule = api.create_rule(shop.project_id, "Price words", QueryFilters(text="shoes"),
                               (shop.tags["sale"],))
        parts = [api.apply_rule(shop.project_id, rule.id)]
    assert parts[0].cursor is None and parts[0].tagged > 0
    tagged = tag_names_by_query(app, shop)
    listing = signed_in.get(rules_url(shop)).get_data(as_text=True)
    assert "Also remove the tags it added" in text_of(listing)
    post(signed_in, rules_url(shop, f"/{rule.id}/delete"), {"remove_tags": "1"}, listing,
         htmx=False)
    edit = wait_for(app, store_of(app).for_project(shop.project_id, limit=1)[0].id)
    assert (edit.state, edit.scope, edit.changed) == ("done", "rule-removal", parts[0].tagged)
    assert tag_names_by_query(app, shop) == before
    with api_of(app, shop) as api:
        assert api.list_rules(shop.project_id) == ()
    activity = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert (f"Removed the tags the rule “Price words” had added from {parts[0].tagged} "
            "queries; the rule is deleted") in text_of(activity)
    undo(signed_in, shop, edit.id, activity)
    undone = wait_for(app, store_of(app).for_project(shop.project_id, limit=1)[0].id)
    assert (undone.state, undone.changed) == ("done", parts[0].tagged)
    assert tag_names_by_query(app, shop) == tagged
    # The tags are back, the rule is not: the activity says so rather than leave it to guess.
    activity = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert (f"Undone: ‘sale’ added back to {parts[0].tagged} queries; the rule “Price words” "
            "stays deleted (Rules → New rule makes it again)") in text_of(activity)


def test_a_chip_says_who_or_which_rule_added_its_tag_and_when(app, auth, shop):
    auth.sign_in(display_name="Ana Lima")
    client = auth.client
    html = page(client, shop, "q=zapatillas")
    keys = keys_in(html)
    post(client, f"/projects/{shop.project_id}/bulk", {
        "action": "add", "apply_tag": shop.tags["question"],
        "selected": [keys["zapatillas running"]]}, html)
    with api_of(app, shop) as api:
        rule = api.create_rule(shop.project_id, "Boots", QueryFilters(text="zapatillas"),
                               (shop.tags["sale"],))
        api.apply_rule(shop.project_id, rule.id)
    html = page(client, shop, "q=zapatillas")
    by_person = re.search(r'title="(Added by “Ana Lima” \(the caller&#39;s label\) on '
                          r'[^"]+ UTC)">question</span><span '
                          r'class="visually-hidden"> \(\1\)</span>', html)
    assert by_person, html
    assert re.search(r'title="Added by the rule “Boots” on [^"]+ UTC">sale', html)
