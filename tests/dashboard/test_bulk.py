"""Bulk tag editing through the routes: in-page edits with Undo, select-all with a confirm step
and a background job, refusals as sentences. The API is the ground truth."""

from __future__ import annotations

import re
import threading
import time

import pytest

from queryapi import Client, QueryFilters, TagAssignment
from tests.dashboard.bulk_helpers import (
    api_of,
    bulk_url,
    key,
    keys_in,
    latest,
    page,
    plan_of,
    post,
    record,
    store_of,
    tag_names_by_query,
    tags_of,
    text_of,
    wait_for,
)
from tests.support.dashboard import TOTAL, AuthActions, csrf_token
from tests.support.waiting import wait_until


def tag(world, name: str) -> str:
    return str(world.tags[name])


# --- the picker ------------------------------------------------------------------------------


def test_the_picker_has_a_labelled_checkbox_and_a_coloured_chip_per_tag(signed_in, shop):
    response = signed_in.get(f"/projects/{shop.project_id}/bulk/picker?action=add",
                             headers={"HX-Request": "true"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert '<h2 id="bulk-dialog-title" class="dialog__title">Add tags</h2>' in html
    for name in ("brand", "sale", "question", "local"):
        assert re.search(rf'<input type="checkbox" name="apply_tag" value="{shop.tags[name]}"> '
                         rf'<span class="chip" style="background-color:#[0-9a-f]{{6}};'
                         rf'color:#[0-9a-f]{{6}}">{name}</span></label>', html), name
    assert 'aria-label="Find a tag"' in html
    assert ">Apply</button>" in html and ">Cancel</button>" in html


def test_the_page_has_the_bulk_controls_with_their_names(signed_in, shop):
    html = page(signed_in, shop, "sort=query")
    for name in ("Add tags", "Remove tags", "Replace tags", "Clear selection",
                 f"Select all {TOTAL} matching", "Export CSV"):
        assert f">{name}<" in html, name
    assert 'aria-label="Select all on this page"' in html
    assert 'aria-label="Edit tags of chaussures de course"' in html
    assert '<dialog class="dialog" data-bulk-dialog' in html


# --- in-page edits ---------------------------------------------------------------------------


def test_adding_a_tag_to_selected_rows_rewrites_only_those_and_says_how_many(app, signed_in,
                                                                          shop):
    html = page(signed_in, shop, "sort=query&size=100")
    keys = keys_in(html)
    before = tag_names_by_query(app, shop)
    response = post(signed_in, bulk_url(shop), {
        "action": "add", "apply_tag": tag(shop, "brand"), "sort": "query", "size": "100",
        "selected": [keys["laufschuhe herren"], keys["running shoes"]]}, html)
    assert response.status_code == 200, response.get_data(as_text=True)
    body = response.get_data(as_text=True)
    assert "Added ‘brand’ to 1 query (1 already had it)." in text_of(body)
    # The two rows come back as out-of-band swaps, with their new chips, still selected.
    rows = re.findall(r'<tr id="row-([^"]+)" data-row hx-swap-oob="true"', body)
    assert set(rows) == {record(app, shop, "laufschuhe herren").id,
                         record(app, shop, "running shoes").id}
    assert re.search(r'aria-label="Select laufschuhe herren" data-row-select checked>.*?'
                     r'>brand</span>', body, re.S)
    assert response.headers["HX-Trigger"] == '{"tagdesk:bulkDone": {"keepSelection": true}}'
    # The service has exactly the new sets; nothing else changed.
    after = tag_names_by_query(app, shop)
    assert after[("laufschuhe herren", "de", "DE")] == {"sale", "brand"}
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {("laufschuhe herren", "de", "DE")}

    # Undo: exactly that delta, on exactly that query.
    edit = latest(app, shop)
    assert edit.changed == 1 and edit.untouched == 1 and edit.scope == "rows"
    undo = post(signed_in, f"/projects/{shop.project_id}/edits/{edit.id}/undo",
                {"context": "notice", "shown": ",".join(rows)}, html)
    assert undo.status_code == 200, undo.get_data(as_text=True)
    assert "Undone: ‘brand’ removed again from 1 query." in text_of(undo.get_data(as_text=True))
    assert tag_names_by_query(app, shop) == before
    assert 'hx-swap-oob="true"' in undo.get_data(as_text=True)
    # Undone once: the button is gone, and a second try is refused with a sentence.
    again = post(signed_in, f"/projects/{shop.project_id}/edits/{edit.id}/undo",
                 {"context": "notice"}, html)
    assert again.status_code == 409
    assert "cannot be undone" in again.get_data(as_text=True)


def test_removing_and_replacing_on_selected_rows(app, signed_in, shop):
    html = page(signed_in, shop, "size=100")
    keys = keys_in(html)
    removal = post(signed_in, bulk_url(shop), {
        "size": "100", "action": "remove", "apply_tag": [tag(shop, "sale"), tag(shop, "local")],
        "selected": [keys["cheap running shoes"], keys["laufschuhe damen"],
                     keys["zapatillas running"]]}, html)
    assert "Removed ‘sale’ and ‘local’ from 2 queries (1 didn’t have them)." in text_of(
        removal.get_data(as_text=True))
    assert tags_of(app, shop, "cheap running shoes") == {"brand"}
    assert tags_of(app, shop, "laufschuhe damen") == set()

    html = page(signed_in, shop, "size=100")
    keys = keys_in(html)
    replacing = post(signed_in, bulk_url(shop), {
        "size": "100", "action": "replace", "apply_tag": [tag(shop, "question")],
        "selected": [keys["where to buy running shoes"], keys["chaussures de course"]]}, html)
    assert "Set the tags of 1 query to ‘question’ (1 already had exactly these)." in text_of(
        replacing.get_data(as_text=True))
    assert tags_of(app, shop, "where to buy running shoes") == {"question"}


def test_deltas_apply_to_the_tags_as_they_are_now_not_as_the_page_showed_them(app, signed_in,
                                                                             shop):
    html = page(signed_in, shop, "size=100")  # "laufschuhe herren" shows only "sale"
    keys = keys_in(html)
    # Meanwhile a colleague adds "question" through the API.
    target = record(app, shop, "laufschuhe herren")
    with api_of(app, shop) as api:
        api.set_tags(shop.project_id, [target.assignment((*target.tags, shop.tags["question"]))])
    post(signed_in, bulk_url(shop), {"size": "100", "action": "add",
                                     "apply_tag": tag(shop, "brand"),
                                     "selected": keys["laufschuhe herren"]}, html)
    assert tags_of(app, shop, "laufschuhe herren") == {"sale", "question", "brand"}
    # And a removal leaves the colleague's tag alone too.
    post(signed_in, bulk_url(shop), {"size": "100", "action": "remove",
                                     "apply_tag": tag(shop, "sale"),
                                     "selected": keys["laufschuhe herren"]}, html)
    assert tags_of(app, shop, "laufschuhe herren") == {"question", "brand"}


def test_a_selected_row_that_left_the_view_is_found_by_its_text(app, signed_in, shop, api_calls):
    html = page(signed_in, shop, "tag=sale")
    keys = keys_in(html)
    assert set(keys) == {"cheap running shoes", "laufschuhe herren"}
    # Someone removes "sale" from one of them: it is no longer in the view.
    target = record(app, shop, "laufschuhe herren")
    with api_of(app, shop) as api:
        api.set_tags(shop.project_id, [target.assignment(())])
    api_calls.reset()
    response = post(signed_in, bulk_url(shop), {
        "action": "add", "apply_tag": tag(shop, "local"), "tag": "sale",
        "selected": [keys["cheap running shoes"], keys["laufschuhe herren"]]}, html)
    # The view re-run, one lookup for the row that moved, one write.
    assert dict(api_calls.paths) == {"/api/queries/list": 2,
                                     "/api/queries/many/tags-edit": 1}
    assert "Added ‘local’ to 2 queries." in text_of(response.get_data(as_text=True))
    assert tags_of(app, shop, "laufschuhe herren") == {"local"}
    assert tags_of(app, shop, "cheap running shoes") == {"sale", "brand", "local"}


def test_an_in_page_edit_costs_one_read_and_one_write(app, signed_in, shop, api_calls):
    html = page(signed_in, shop, "size=100")
    keys = keys_in(html)
    api_calls.reset()
    post(signed_in, bulk_url(shop), {"size": "100", "action": "add",
                                     "apply_tag": tag(shop, "local"),
                                     "selected": list(keys.values())[:5]}, html)
    assert dict(api_calls.paths) == {"/api/queries/list": 1, "/api/queries/many/tags-edit": 1}
    # The next view reads the tags afresh (the cache was invalidated by the edit).
    api_calls.reset()
    page(signed_in, shop)
    assert api_calls.paths["/api/queries/list"] == 1
    assert api_calls.paths["/api/tags/list"] == 1
    api_calls.reset()
    page(signed_in, shop)
    # (and the saved views with their counts, read with every whole page)
    assert dict(api_calls.paths) == {"/api/queries/list": 1, "/api/views/list": 1}


# --- refusals are sentences, and nothing is written ------------------------------------------


def test_a_post_without_the_csrf_token_is_rejected(app, signed_in, shop):
    html = page(signed_in, shop, "size=100")
    keys = keys_in(html)
    before = tag_names_by_query(app, shop)
    for token in ("", "not-a-token"):
        response = post(signed_in, bulk_url(shop), {
            "action": "add", "apply_tag": tag(shop, "brand"),
            "selected": list(keys.values())[:3]}, token=token)
        assert response.status_code == 400
        assert "security check expired" in response.get_data(as_text=True)
    for url in (f"/projects/{shop.project_id}/bulk/confirm",
                f"/projects/{shop.project_id}/export"):
        assert post(signed_in, url, {}, token="").status_code == 400
    assert tag_names_by_query(app, shop) == before
    assert latest(app, shop) is None


def test_an_empty_selection_is_a_sentence(signed_in, shop):
    html = page(signed_in, shop, "size=100")
    response = post(signed_in, bulk_url(shop), {"size": "100", "action": "add",
                                                "apply_tag": tag(shop, "brand")}, html)
    assert response.status_code == 400
    assert "No queries are selected." in text_of(response.get_data(as_text=True))
    assert 'role="alert"' in response.get_data(as_text=True)


def test_no_tag_chosen_is_a_sentence(signed_in, shop):
    html = page(signed_in, shop, "size=100")
    response = post(signed_in, bulk_url(shop), {"size": "100", "action": "remove",
                                                "selected": list(keys_in(html).values())[:1]},
                    html)
    assert response.status_code == 400
    assert "Choose at least one tag to remove." in response.get_data(as_text=True)


def test_a_tag_of_another_project_is_refused(app, signed_in, shop):
    foreign = shop.run(lambda s: __import__("service.org.admin", fromlist=["admin"]).create_tag(
        s, shop.other_project_id, "elsewhere", "#123456"))
    html = page(signed_in, shop, "size=100")
    before = tag_names_by_query(app, shop)
    for data in ({"action": "add", "apply_tag": [tag(shop, "brand"), str(foreign)],
                  "selected": list(keys_in(html).values())[:2]},
                 {"action": "add", "apply_tag": str(foreign), "scope": "all"},
                 {"action": "add", "apply_tag": "DROP TABLE", "selected": "x"}):
        response = post(signed_in, bulk_url(shop), data, html)
        assert response.status_code == 400
        assert "is not a tag of this project" in text_of(response.get_data(as_text=True))
    assert tag_names_by_query(app, shop) == before


def test_odd_input_is_refused_politely(signed_in, shop):
    html = page(signed_in, shop, "size=100")
    for data in ({"action": "explode", "apply_tag": tag(shop, "brand")},
                 {"action": "add", "apply_tag": tag(shop, "brand"), "selected": "not json"},
                 {"action": "edit", "apply_tag": tag(shop, "brand"), "row": "[1,2]"}):
        response = post(signed_in, bulk_url(shop), data, html)
        assert response.status_code == 400, data
        assert 'role="alert"' in response.get_data(as_text=True)
    other = post(signed_in, "/projects/nope/bulk", {"action": "add"}, html)
    assert other.status_code == 404


# --- select all matching ---------------------------------------------------------------------


def test_select_all_asks_first_with_the_real_count_and_the_filter_in_words(app, signed_in,
                                                                          shop):
    html = page(signed_in, shop, "q=schuhe&lang=de&country=DE&country=AT")
    response = post(signed_in, bulk_url(shop), {
        "action": "add", "apply_tag": tag(shop, "brand"), "scope": "all", "q": "schuhe",
        "lang": "de", "country": ["DE", "AT"]}, html)
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    assert ("Add ‘brand’ to 2 queries matching language German (de), countries Germany (DE) "
            "or Austria (AT), text “schuhe”?") in text_of(body)
    assert ">Confirm</button>" in body
    assert response.headers["HX-Retarget"] == "[data-bulk-dialog-body]"
    assert latest(app, shop) is None  # nothing runs before Confirm
    # Without filters: the whole project.
    everything = post(signed_in, bulk_url(shop), {"size": "100", "action": "remove", "scope": "all",
                                                  "apply_tag": tag(shop, "sale")}, html)
    assert f"Remove ‘sale’ from {TOTAL} queries in this project?" in text_of(
        everything.get_data(as_text=True))


def test_a_filter_that_matches_nothing_is_a_sentence(app, signed_in, shop):
    html = page(signed_in, shop, "size=100")
    response = post(signed_in, bulk_url(shop), {
        "action": "add", "apply_tag": tag(shop, "brand"), "scope": "all", "q": "no such text"},
        html)
    assert response.status_code == 400
    assert "No queries match these filters" in text_of(response.get_data(as_text=True))
    assert latest(app, shop) is None


def confirm_all(client, world, html, **fields):
    fields.setdefault("scope", "all")
    asked = post(client, bulk_url(world), fields, html)
    assert asked.status_code == 200, asked.get_data(as_text=True)
    return post(client, f"/projects/{world.project_id}/bulk/confirm",
                {"plan": plan_of(asked.get_data(as_text=True))}, html)


def test_select_all_runs_a_job_that_tags_every_match_and_nothing_else(app, signed_in, shop,
                                                                     monkeypatch):
    from dashboard import undo as undo_module

    app.config["BULK_BATCH_SIZE"] = 7  # several batches over the 60 filler queries
    html = page(signed_in, shop, "q=filler")
    before = tag_names_by_query(app, shop)
    # One filler query already has the tag.
    target = record(app, shop, "filler query 010")
    with api_of(app, shop) as api:
        api.set_tags(shop.project_id, [target.assignment((shop.tags["brand"],))])
    started = confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "brand"),
                          q="filler")
    assert started.status_code == 200
    body = started.get_data(as_text=True)
    assert 'hx-swap-oob="afterbegin:#jobs"' in body
    assert "Add ‘brand’ to 60 queries matching text “filler”" in text_of(body)
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "done"
    assert (edit.processed, edit.changed, edit.untouched) == (60, 59, 1)
    assert edit.batches >= 9
    after = tag_names_by_query(app, shop)
    for query_key, names in after.items():
        if query_key[0].startswith("filler"):
            assert names == {"brand"}
        else:
            assert names == before[query_key], query_key
    # The finished panel: the summary and Undo; no more polling.
    status = signed_in.get(f"/projects/{shop.project_id}/jobs/{edit.id}?poll=1",
                           headers={"HX-Request": "true"})
    panel = status.get_data(as_text=True)
    assert "Added ‘brand’ to 59 queries (1 already had it)." in text_of(panel)
    assert ">Undo</button>" in panel and 'hx-trigger="every 1s"' not in panel
    assert status.headers["HX-Trigger"] == '{"tagdesk:resultsStale": true}'

    # Undo, as a job too (an undo of more than INLINE_UNDO_LIMIT changes): only what it
    # changed is reversed, and a later change by someone else stays.
    monkeypatch.setattr(undo_module, "INLINE_UNDO_LIMIT", 10)
    later = record(app, shop, "filler query 020")
    with api_of(app, shop) as api:
        api.set_tags(shop.project_id, [later.assignment((*later.tags, shop.tags["sale"]))])
    undone = post(signed_in, f"/projects/{shop.project_id}/edits/{edit.id}/undo",
                  {"context": "panel"}, html)
    assert undone.status_code == 200
    undo = store_of(app).get(store_of(app).get(edit.id).undone_by)
    wait_for(app, undo.id)
    final = tag_names_by_query(app, shop)
    assert final[("filler query 010", "en", "US")] == {"brand"}  # it had it before the edit
    assert final[("filler query 020", "en", "US")] == {"sale"}
    for query_key, names in final.items():
        if query_key[0].startswith("filler") and query_key[0] not in (
                "filler query 010", "filler query 020"):
            assert names == set(), query_key


def local_page(app, signed_in, shop) -> str:
    """The page of 'tag=local' once 20 filler queries have only 'local' (through the API): 22
    queries, with the 2 sample queries that have it."""
    fillers = [f"filler query {i:03d}" for i in range(0, 60, 3)]
    with api_of(app, shop) as api:
        records = [r for r in api.iter_queries(shop.project_id) if r.query in fillers]
        api.set_tags(shop.project_id, [r.assignment((shop.tags["local"],)) for r in records])
    return page(signed_in, shop, "tag=local")


def test_removing_the_tag_the_filter_asks_for_from_all_matching(app, signed_in, shop):
    """The walk keeps its place while its own writes empty the filter."""
    app.config["BULK_BATCH_SIZE"] = 2
    html = local_page(app, signed_in, shop)
    confirm_all(signed_in, shop, html, action="remove", apply_tag=tag(shop, "local"),
                tag="local")
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "done", edit.message
    assert (edit.processed, edit.changed) == (22, 22)  # 20 fillers and 2 sample queries
    assert not any("local" in names for names in tag_names_by_query(app, shop).values())


def test_a_removal_that_leaves_some_written_queries_in_the_filter(app, signed_in, shop):
    """'tag=local or sale' loses 'local': the queries with 'sale' too stay in the filter. The
    walk counts only the queries it did not write as still matching, and its next read shows
    where it is: each query is done once and none is missed."""
    app.config["BULK_BATCH_SIZE"] = 3
    fillers = [f"filler query {i:03d}" for i in range(0, 60, 3)]
    with api_of(app, shop) as api:
        records = [r for r in api.iter_queries(shop.project_id) if r.query in fillers]
        api.set_tags(shop.project_id, [r.assignment(
            (shop.tags["local"], shop.tags["sale"]) if n % 2 else (shop.tags["local"],))
            for n, r in enumerate(records)])
        either = QueryFilters(tag_names=("local", "sale"))
        matching = api.list_queries(shop.project_id, either, limit=1).page.total_records
        local = api.list_queries(shop.project_id, QueryFilters(tag_names=("local",)),
                                 limit=1).page.total_records
    html = page(signed_in, shop, "tag=local&tag=sale")
    confirm_all(signed_in, shop, html, action="remove", apply_tag=tag(shop, "local"),
                tag=["local", "sale"])
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "done", edit.message
    assert (edit.processed, edit.changed) == (matching, local)
    names = tag_names_by_query(app, shop)
    assert not any("local" in tags for tags in names.values())
    assert sum("sale" in names[(text, "en", "US")] for text in fillers) == len(fillers) // 2


def test_a_stable_edit_keeps_its_place_when_others_move_queries_out_of_the_filter(
        app, signed_in, shop, monkeypatch):
    """Adding a tag cannot change who matches 'tag=local', so the walk reads pages without an
    overlap row; someone outside the dashboard removing 'local' from queries the walk already
    did shifts the offsets, which the page's totalRecords shows: nothing is skipped."""
    app.config["BULK_BATCH_SIZE"] = 4
    html = local_page(app, signed_in, shop)
    real = Client.edit_tags
    job_writes: list[list[str]] = []

    def write_then_someone_else_writes(self, project_id, items):
        result = real(self, project_id, items)
        job_writes.append([item.query for item in items])
        if len(job_writes) == 1:  # after the first batch, outside the dashboard
            without_local = [TagAssignment(item.query, item.language, item.country,
                                           (shop.tags["sale"],)) for item in items[:2]]
            with api_of(app, shop) as outside:
                outside.set_tags(shop.project_id, without_local)
        return result

    monkeypatch.setattr(Client, "edit_tags", write_then_someone_else_writes)
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "sale"), tag="local")
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "done", edit.message
    names = tag_names_by_query(app, shop)
    still_local = [key for key, tags in names.items() if "local" in tags]
    assert len(still_local) >= 19
    assert all("sale" in names[key] for key in still_local)
    assert sum(len(batch) for batch in job_writes) == edit.changed == len(still_local) + 2


def test_replacing_tags_on_a_tag_filtered_view(app, signed_in, shop):
    app.config["BULK_BATCH_SIZE"] = 3
    html = page(signed_in, shop, "tag=brand&tag=question")
    confirm_all(signed_in, shop, html, action="replace", apply_tag=tag(shop, "sale"),
                tag=["brand", "question"])
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "done"
    names = tag_names_by_query(app, shop)
    assert names[("running shoes", "en", "US")] == {"sale"}
    assert names[("chaussures de course", "fr", "FR")] == {"sale"}
    assert names[("where to buy running shoes", "en", "US")] == {"sale"}
    assert names[("laufschuhe damen", "de", "AT")] == {"local"}  # not in the filter
    assert edit.changed == 4


def test_cancel_stops_at_the_next_batch_and_reports_exactly_what_was_done(app, signed_in,
                                                                         shop, monkeypatch):
    app.config["BULK_BATCH_SIZE"] = 10
    html = page(signed_in, shop, "q=filler")
    store = store_of(app)
    real = Client.edit_tags
    calls = {"n": 0}

    def edit_tags_then_cancel(self, project_id, items):
        result = real(self, project_id, items)
        calls["n"] += 1
        if calls["n"] == 2:  # the person presses Cancel while batch 2 is written
            edit = latest(app, shop)
            signed_in.post(f"/projects/{shop.project_id}/jobs/{edit.id}/cancel",
                           headers={"HX-Request": "true", "X-CSRFToken": csrf_token(html)})
        return result

    monkeypatch.setattr(Client, "edit_tags", edit_tags_then_cancel)
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "question"),
                q="filler")
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "cancelled"
    done = edit.processed  # two batches (a batch re-reads one row it did, to keep its place)
    assert 10 < done < 30 and edit.changed == done and edit.batches == 2
    tagged = [k for k, v in tag_names_by_query(app, shop).items()
              if k[0].startswith("filler") and "question" in v]
    assert len(tagged) == done
    assert len(store.changes(edit.id)) == done
    panel = signed_in.get(f"/projects/{shop.project_id}/jobs/{edit.id}").get_data(as_text=True)
    assert (f"Cancelled after {done} of 60 queries done. Added ‘question’ to {done} queries; "
            f"{60 - done} queries were not reached.") in text_of(panel)
    assert ">Undo</button>" in panel


class Crash(BaseException):
    """The process dies (not an error the job could record)."""


def test_an_interrupted_job_resumes_and_applies_nothing_twice(app, signed_in, shop,
                                                              monkeypatch):
    """The dashboard dies between a batch's write and its record; Resume finds the batch
    written (its rows already show the change), counts it as done, and goes on."""
    app.config["BULK_BATCH_SIZE"] = 10
    html = page(signed_in, shop, "q=filler")
    store = store_of(app)
    real_commit = type(store).commit_batch
    crashed = {"done": False}

    def commit_or_crash(self, edit_id, batch, counters, replace_changes=None):
        if batch == 3 and not crashed["done"]:
            crashed["done"] = True
            raise Crash()
        return real_commit(self, edit_id, batch, counters, replace_changes)

    monkeypatch.setattr(type(store), "commit_batch", commit_or_crash)
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "sale"), q="filler")
    edit_id = latest(app, shop).id
    runner = app.extensions["tagdesk_runner"]
    with pytest.raises(Crash):
        runner.wait(edit_id, timeout=30)
    half = store.get(edit_id)
    assert half.state == "running" and half.pending_batch == 3
    pending = store.pending_changes(edit_id, 3)
    assert half.processed > 10 and len(pending) > 5
    written = {k: v for k, v in tag_names_by_query(app, shop).items() if "sale" in v
               and k[0].startswith("filler")}
    # Batch 3 reached the service before the crash; the record of it says "pending".
    assert len(written) == half.processed + len(pending)
    updated_at = {r.query: r.updated_at for r in api_of(app, shop).iter_queries(
        shop.project_id)}

    # The next start of the dashboard finds it (its process is gone) and says so; so does
    # the queries page, whose panels are read before it looks for stopped jobs.
    store.update(edit_id, owner="some-host-that-is-gone:1:x", heartbeat_at=time.time() - 3600)
    assert f"Interrupted after {half.processed} of 60 queries done." in text_of(
        page(signed_in, shop, "q=filler"))
    panel = signed_in.get(f"/projects/{shop.project_id}/jobs/{edit_id}").get_data(as_text=True)
    assert f"Interrupted after {half.processed} of 60 queries done." in text_of(panel)
    assert ">Resume</button>" in panel

    resumed = post(signed_in, f"/projects/{shop.project_id}/jobs/{edit_id}/resume", {}, html)
    assert resumed.status_code == 200
    edit = wait_for(app, edit_id)
    assert edit.state == "done"
    assert (edit.processed, edit.changed, edit.untouched) == (60, 60, 0)
    assert len(store.changes(edit_id)) == 60
    after = {r.query: r.updated_at for r in api_of(app, shop).iter_queries(shop.project_id)}
    for query, moment in updated_at.items():
        if query.startswith("filler") and query in {k[0] for k in written}:
            assert after[query] == moment, f"{query} was written twice"
    assert all("sale" in v for k, v in tag_names_by_query(app, shop).items()
               if k[0].startswith("filler"))


def test_in_page_edits_at_the_same_time_do_not_erase_each_other(app, shop, monkeypatch):
    """Two people add different tags to the same row at the same moment: the per-project
    lease makes one read-modify-write wait for the other."""
    people = [AuthActions(app.test_client(), shop) for _ in range(2)]
    pages = []
    for person in people:
        person.sign_in()
        pages.append(page(person.client, shop, "size=100"))
    store = store_of(app)
    real = Client.list_queries
    reads: list[int] = []  # one entry per fresh read, in the order they ended
    other_came = threading.Event()

    def read_then_hold(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        reads.append(threading.get_ident())
        if len(reads) > 1:
            return result
        # The first edit to read keeps what it read (and the lease, if there is one) until the
        # other edit has either registered as waiting for the lease or read the same row itself.
        # With the lease only the first can happen, and the second read comes after the first
        # write; without it the second read comes before the first write: the lost update this
        # test must catch. The order no longer depends on how the threads are scheduled.
        if wait_until(lambda: store.waiters(shop.project_id) > 0 or len(reads) > 1):
            other_came.set()
        return result

    monkeypatch.setattr(Client, "list_queries", read_then_hold)
    target = keys_in(pages[0])["zapatillas running"]
    answers = []

    def edit(person, html, tag_name):
        answers.append(post(person.client, bulk_url(shop), {
            "size": "100", "action": "add", "apply_tag": tag(shop, tag_name),
            "selected": target}, html))

    threads = [threading.Thread(target=edit, args=(p, h, n))
               for p, h, n in zip(people, pages, ("brand", "sale"), strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert other_came.is_set(), "the second edit neither waited for the lease nor read"
    assert [a.status_code for a in answers] == [200, 200]
    assert tags_of(app, shop, "zapatillas running") == {"brand", "sale"}


# --- the row's quick edit --------------------------------------------------------------------


def test_a_rows_quick_edit_adds_and_removes_on_that_row_alone(app, signed_in, shop):
    row = record(app, shop, "where to buy running shoes")  # question, local
    picker = signed_in.get(f"/projects/{shop.project_id}/bulk/picker", query_string={
        "action": "edit", "row": key(app, shop, row.query),
        "had": [shop.tags["question"], shop.tags["local"]]}).get_data(as_text=True)
    assert "Tags of <strong>where to buy running shoes</strong>" in picker
    assert f'value="{shop.tags["question"]}" checked' in picker
    assert f'value="{shop.tags["brand"]}">' in picker
    html = page(signed_in, shop, "size=100")
    before = tag_names_by_query(app, shop)
    response = post(signed_in, bulk_url(shop), {
        "size": "100", "action": "edit", "row": key(app, shop, row.query),
        "had": [tag(shop, "question"), tag(shop, "local")],
        "apply_tag": [tag(shop, "question"), tag(shop, "brand")],
        # A selection on the page does not come into it.
        "selected": list(keys_in(html).values())[:3]}, html)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert ("Tags of “where to buy running shoes”: added ‘brand’ and removed ‘local’."
            in text_of(response.get_data(as_text=True)))
    after = tag_names_by_query(app, shop)
    assert after[("where to buy running shoes", "en", "US")] == {"question", "brand"}
    assert {k for k in after if after[k] != before[k]} == {
        ("where to buy running shoes", "en", "US")}
    nothing = post(signed_in, bulk_url(shop), {
        "action": "edit", "row": key(app, shop, row.query), "had": tag(shop, "brand"),
        "apply_tag": tag(shop, "brand")}, html)
    assert nothing.status_code == 422
    assert "Nothing to change" in nothing.get_data(as_text=True)


# --- the activity page -----------------------------------------------------------------------


def test_the_activity_page_lists_each_edit_with_who_and_offers_undo(app, auth, shop):
    auth.sign_in(display_name="  Ana\x00 Lima ")
    client = auth.client
    html = page(client, shop, "size=100")
    assert "Ana  Lima" in html  # shown in the header (control characters become spaces)
    keys = keys_in(html)
    post(client, bulk_url(shop), {"size": "100", "action": "add",
                                  "apply_tag": tag(shop, "question"),
                                  "selected": [keys["zapatillas running"]]}, html)
    activity = client.get(f"/projects/{shop.project_id}/activity")
    assert activity.status_code == 200
    text = text_of(activity.get_data(as_text=True))
    assert "Add ‘question’ to 1 selected query" in text
    assert "Added ‘question’ to 1 query." in text
    # The person first, the key's ending as a detail (the whole masked key in its tooltip).
    assert f"Ana Lima key …{shop.key[-4:]}" in text
    assert f'title="The API key used: tdk_live_…{shop.key[-4:]}"' in activity.get_data(
        as_text=True)
    assert 'aria-label="Undo: Add ‘question’ to 1 selected query"' in activity.get_data(
        as_text=True)
    edit = latest(app, shop)
    undone = post(client, f"/projects/{shop.project_id}/edits/{edit.id}/undo",
                  {"context": "activity"}, html)
    # Answered in place (no reload, which would lose the focus): the undo's row first, with
    # its status to focus, and the undone edit's row drawn again without its Undo.
    assert "HX-Refresh" not in undone.headers
    answer = undone.get_data(as_text=True)
    assert "Undone: ‘question’ removed again from 1 query." in text_of(answer)
    assert 'hx-swap-oob="afterbegin:.activity-table tbody"' in answer
    assert f'id="activity-{edit.id}" hx-swap-oob="outerHTML"' in answer
    assert "autofocus" in answer
    assert 'aria-label="Undo: Add ‘question’ to 1 selected query"' not in answer
    again = text_of(client.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True))
    assert "Undone: ‘question’ removed again from 1 query." in again
    assert "Undone" in again
    assert tags_of(app, shop, "zapatillas running") == set()


def test_jobs_and_activity_of_a_project_are_not_reachable_from_another_org(app, auth, shop):
    auth.sign_in()
    html = page(auth.client, shop, "size=100")
    post(auth.client, bulk_url(shop), {"size": "100", "action": "add",
                                       "apply_tag": tag(shop, "question"),
                                       "selected": list(keys_in(html).values())[:1]}, html)
    edit = latest(app, shop)
    _org, other_key, other_project = shop.new_org()
    stranger = app.test_client()
    AuthActions(stranger, shop).sign_in(key=other_key)
    for path in (f"/projects/{shop.project_id}/activity",
                 f"/projects/{shop.project_id}/jobs/{edit.id}",
                 f"/projects/{other_project}/jobs/{edit.id}"):
        assert stranger.get(path).status_code == 404, path


# --- export ----------------------------------------------------------------------------------


def test_a_small_view_downloads_as_csv_streamed(app, signed_in, shop):
    html = page(signed_in, shop, "lang=de")
    started = post(signed_in, f"/projects/{shop.project_id}/export",
                   {"lang": "de", "sort": "-updated"}, html)
    assert started.headers["HX-Redirect"] == f"/projects/{shop.project_id}/export.csv?lang=de"
    response = signed_in.get(started.headers["HX-Redirect"])
    assert response.status_code == 200
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"].startswith(
        'attachment; filename="shop-search-queries-')
    lines = response.get_data(as_text=True).splitlines()
    # A column for each number the service keeps (empty: these queries know none).
    assert lines[0] == ("query,language,country,tags,updated,"
                        "clicks,impressions,ctr,position,volume,cpc,difficulty")
    rows = [line.split(",") for line in lines[1:]]
    assert [row[:4] for row in rows] == [  # sorted by query (a sort by "updated" could move
        ["laufschuhe damen", "de", "AT", "local"],  # rows meanwhile)
        ["laufschuhe herren", "de", "DE", "sale"],
    ]
    assert all(row[5:] == [""] * 7 for row in rows)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", rows[0][4])


def test_a_large_export_runs_as_a_job_with_a_download(app, signed_in, shop):
    app.config["EXPORT_STREAM_LIMIT"] = 10
    html = page(signed_in, shop, "size=100")
    started = post(signed_in, f"/projects/{shop.project_id}/export", {"sort": "query"}, html)
    body = started.get_data(as_text=True)
    assert "Exporting 67 queries in the background" in text_of(body)
    edit = wait_for(app, latest(app, shop).id)
    assert edit.state == "done" and edit.processed == TOTAL
    panel = signed_in.get(f"/projects/{shop.project_id}/jobs/{edit.id}").get_data(as_text=True)
    assert "Exported 67 queries as CSV." in text_of(panel)
    link = re.search(r'href="([^"]+/download)"', panel).group(1)
    download = signed_in.get(link)
    assert download.status_code == 200
    lines = download.get_data(as_text=True).splitlines()
    assert len(lines) == TOTAL + 1
    assert lines[1].startswith("chaussures de course,fr,FR,question,")
    # A cell with a semicolon is quoted: a spreadsheet whose separator is ";" keeps it whole.
    assert 'cheap running shoes,en,GB,"brand; sale",' in download.get_data(as_text=True)


def test_csv_cells_that_look_like_formulas_are_neutralised():
    from jobs.export import export_sort
    from weblib.spreadsheet_cells import guard_cell

    assert guard_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert guard_cell("-shoes") == "'-shoes"
    assert guard_cell("shoes") == "shoes"
    assert guard_cell("brand; =sale") == "brand;' =sale"
    assert export_sort([("updatedAt", "DESC")]) == [("query", "ASC")]
    assert export_sort([("country", "DESC")]) == [("country", "DESC")]


def test_a_pipelined_job_reads_ahead_and_gives_the_same_result(app, signed_in, shop):
    app.config.update(BULK_BATCH_SIZE=6, BULK_PIPELINE=True)
    html = page(signed_in, shop, "q=filler")
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "local"), q="filler")
    edit = wait_for(app, latest(app, shop).id)
    assert (edit.state, edit.processed, edit.changed) == ("done", 60, 60)
    assert len(store_of(app).changes(edit.id)) == 60
    names = tag_names_by_query(app, shop)
    assert all(v == {"local"} for k, v in names.items() if k[0].startswith("filler"))


def test_an_in_page_edit_writes_at_once_beside_a_running_job(app, signed_in, shop,
                                                              monkeypatch):
    """Where the service edits tags in place, neither takes the project's lease: the edit
    neither waits for the job nor stops it, and each keeps what the other wrote."""
    app.config["BULK_BATCH_SIZE"] = 5
    store = store_of(app)
    real = Client.edit_tags
    test_thread = threading.current_thread()
    under_way, edit_wrote = threading.Event(), threading.Event()
    waits: list[bool] = []

    def write(self, project_id, items):
        if threading.current_thread() is test_thread:
            edit_wrote.set()
        elif under_way.is_set():
            waits.append(edit_wrote.wait(30))  # the job's next batch waits for the edit
        else:
            under_way.set()
        return real(self, project_id, items)

    monkeypatch.setattr(Client, "edit_tags", write)
    html = page(signed_in, shop, "q=filler")
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "question"), q="filler")
    edit_id = latest(app, shop).id
    try:
        assert under_way.wait(30), "the job did not start writing"
        assert store.waiters(shop.project_id) == 0
        response = post(signed_in, bulk_url(shop), {
            "size": "100", "action": "add", "apply_tag": tag(shop, "brand"),
            "selected": keys_in(page(signed_in, shop, "size=100"))["filler query 059"]}, html)
        assert response.status_code == 200, response.get_data(as_text=True)
        assert store.get(edit_id).state == "running"
    finally:
        edit_wrote.set()
    assert wait_for(app, edit_id).state == "done"
    assert all(waits) and waits
    assert tags_of(app, shop, "filler query 059") == {"question", "brand"}
    assert all("question" in v for k, v in tag_names_by_query(app, shop).items()
               if k[0].startswith("filler"))


def test_an_in_page_edit_waits_for_one_batch_of_a_running_job_not_all_of_it(external, shop,
                                                                          monkeypatch):
    """Against a service with set-tags only, writes are whole tag sets: a job holds the
    project's lease and hands it over between batches."""
    app = external
    signed_in = app.test_client()
    AuthActions(signed_in, shop).sign_in()
    app.config["BULK_BATCH_SIZE"] = 5  # a dozen batches or so over the 60 filler queries
    store = store_of(app)
    real = Client.set_tags
    test_thread = threading.current_thread()  # the test client runs the in-page edit here
    job_batches: list[int] = []  # one entry per batch the job writes
    batches_before_edit: list[int] = []
    under_way, edit_wrote, looked = threading.Event(), threading.Event(), threading.Event()
    waits: list[bool] = []

    def write(self, project_id, items):
        if threading.current_thread() is test_thread:
            batches_before_edit.append(len(job_batches))
            edit_wrote.set()
            return real(self, project_id, items)
        job_batches.append(len(items))
        if len(job_batches) == 1:
            under_way.set()  # the job holds the project's lease from before its first read
        elif not edit_wrote.is_set():
            # The job's later batches wait until the in-page edit has registered as waiting
            # for the lease: the job cannot finish before the edit asks for the lease. (If the
            # job did not hand the lease over, it would now run to its end before the edit.)
            waits.append(wait_until(lambda: store.waiters(shop.project_id) > 0))
        else:
            # Once the edit has written, the job's next batches wait until the test has looked
            # at the job: it cannot have finished in the meantime, however fast it runs.
            waits.append(looked.wait(30))
        return real(self, project_id, items)

    monkeypatch.setattr(Client, "set_tags", write)
    html = page(signed_in, shop, "q=filler")
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "question"), q="filler")
    edit_id = latest(app, shop).id
    try:
        assert under_way.wait(30), "the job did not start writing"
        response = post(signed_in, bulk_url(shop), {
            "size": "100", "action": "add", "apply_tag": tag(shop, "brand"),
            "selected": keys_in(page(signed_in, shop, "size=100"))["zapatillas running"]}, html)
        assert response.status_code == 200, response.get_data(as_text=True)
        during = store.get(edit_id)
    finally:
        looked.set()
    assert during.state == "running" and during.processed < 60, during  # not the whole job
    assert wait_for(app, edit_id).state == "done"
    # The edit wrote once, between two of the job's batches, with more of the job to come.
    assert len(batches_before_edit) == 1, batches_before_edit
    assert 1 <= batches_before_edit[0] < len(job_batches), (batches_before_edit, job_batches)
    assert all(waits), "a batch of the job gave up waiting: the edit never asked for the lease"
    assert tags_of(app, shop, "zapatillas running") == {"brand"}
    assert all("question" in v for k, v in tag_names_by_query(app, shop).items()
               if k[0].startswith("filler"))


def test_an_undo_that_cannot_get_the_lease_changes_nothing_and_can_be_tried_again(external,
                                                                                  shop):
    """Against a service with set-tags only, an undo holds the project's lease from its read
    to its write: while someone else holds it past BULK_LOCK_WAIT, Undo is a sentence (409),
    nothing is written, and the edit stays undoable."""
    app = external
    app.config["BULK_LOCK_WAIT"] = 0.2
    signed_in = app.test_client()
    AuthActions(signed_in, shop).sign_in()
    html = page(signed_in, shop, "size=100")
    post(signed_in, bulk_url(shop), {"size": "100", "action": "add",
                                     "apply_tag": tag(shop, "local"),
                                     "selected": keys_in(html)["running shoes"]}, html)
    edit = latest(app, shop)
    assert edit.changed == 1
    edited = tag_names_by_query(app, shop)
    store = store_of(app)
    assert store.try_lock(shop.project_id, "someone else", lease=60)
    url = f"/projects/{shop.project_id}/edits/{edit.id}/undo"
    busy = post(signed_in, url, {"context": "notice"}, html)
    assert busy.status_code == 409
    assert "Someone else is saving changes to this project right now. Nothing was changed" \
        in text_of(busy.get_data(as_text=True))
    assert tag_names_by_query(app, shop) == edited
    assert store.get(edit.id).undoable and latest(app, shop).id == edit.id

    store.unlock(shop.project_id, "someone else")
    undone = post(signed_in, url, {"context": "notice"}, html)
    assert undone.status_code == 200, undone.get_data(as_text=True)
    assert "local" not in tags_of(app, shop, "running shoes")


def test_undo_of_a_select_all_edit_within_the_request(app, signed_in, shop):
    html = page(signed_in, shop, "q=filler")
    before = tag_names_by_query(app, shop)
    confirm_all(signed_in, shop, html, action="add", apply_tag=tag(shop, "sale"), q="filler")
    edit = wait_for(app, latest(app, shop).id)
    assert edit.changed == 60
    # Someone else adds "brand" to one of them meanwhile: it stays.
    target = record(app, shop, "filler query 042")
    with api_of(app, shop) as api:
        api.set_tags(shop.project_id, [target.assignment((*target.tags, shop.tags["brand"]))])
    undone = post(signed_in, f"/projects/{shop.project_id}/edits/{edit.id}/undo",
                  {"context": "panel"}, html)
    body = undone.get_data(as_text=True)
    assert undone.status_code == 200
    assert "Undone: ‘sale’ removed again from 60 queries." in text_of(body)
    assert 'hx-trigger="every 1s"' not in body  # done within the request
    after = tag_names_by_query(app, shop)
    assert after[("filler query 042", "en", "US")] == {"brand"}
    assert {k: v for k, v in after.items() if k[0] != "filler query 042"} == {
        k: v for k, v in before.items() if k[0] != "filler query 042"}
