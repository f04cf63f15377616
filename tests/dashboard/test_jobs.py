"""The parts of bulk editing that need no browser: deltas and undo, the walk's place-keeping,
the jobs database (leases, interruptions), the sentences, and where a job finds its key."""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app import create_app
from dashboard import wording
from jobs.deltas import Change, Delta, RowKey, undo_filters
from jobs.store import STOPPED_WORKING, Store
from jobs.walk import position, stable_membership
from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import bulk_url, keys_in, page, post, tags_of, wait_for
from tests.support.dashboard import AuthActions, close_app
from tests.support.databases import REDIS_URL, postgres_database_of_its_own
from tests.support.waiting import wait_until
from weblib.processes import process_owner

tag_sets = st.frozensets(st.integers(1, 12), max_size=8)


class Record:
    def __init__(self, tags):
        self.id, self.query, self.language, self.country, self.tags = "q1", "x", "en", "US", tags


# --- deltas -----------------------------------------------------------------------------------


@given(tag_sets, tag_sets, tag_sets, tag_sets)
@settings(max_examples=300, deadline=None)
def test_undo_reverses_exactly_the_delta_and_keeps_later_changes(tags, add, remove, others):
    remove = remove - add
    delta = Delta(add=add, remove=remove)
    after = delta.apply(tags)
    change = Change.between(Record(tags), tags, after)
    assert set(after) == (tags | add) - remove
    assert set(change.added) == add - tags and set(change.removed) == remove & tags
    # Nobody touched it since: undo gives back exactly what was there.
    assert set(change.undo(after)) == tags
    # Someone else changed other tags since: their change stays.
    others = others - add - remove
    changed_since = set(after) ^ others
    undone = set(change.undo(changed_since))
    assert undone & others == changed_since & others
    assert undone - others == tags - others


@given(tag_sets, tag_sets)
def test_a_delta_is_idempotent_so_a_repeated_batch_changes_nothing(tags, add):
    delta = Delta(add=add)
    once = delta.apply(tags)
    assert delta.apply(once) == once
    assert Delta(replace=add).apply(Delta(replace=add).apply(tags)) == tuple(sorted(add))


def test_deltas_refuse_contradictions():
    with pytest.raises(ValueError):
        Delta(add={1}, remove={1})
    with pytest.raises(ValueError):
        Delta(add={1}, replace={2})
    assert Delta.from_json(Delta(replace=()).to_json()) == Delta(replace=())


def test_row_keys_are_parsed_strictly():
    assert RowKey.parse('["id","q","de","DE"]') == RowKey("id", "q", "de", "DE")
    for bad in ("", "[]", '["a","b","c"]', '["a","b","c",4]', '{"a":1}', "nope",
                '["a","","c","d"]'):
        assert RowKey.parse(bad) is None


def test_a_job_filter_says_which_tags_it_reads_and_an_undo_covers_what_the_edit_changed():
    ids = {"brand": 1, "sale": 2}
    filters = QueryFilters(text="shoe", tag_names=("Brand",))
    named = filters.tags_named(lambda name: ids.get(name.casefold()))
    assert named == {1} and QueryFilters(untagged=True).tags_named(ids.get) is None
    # Only a write of a tag the filter names can move a query in or out of it.
    assert stable_membership(filters, Delta(add={2}), named)
    assert not stable_membership(filters, Delta(remove={1}), named)
    assert not stable_membership(filters, Delta(replace={1}), named)
    assert not stable_membership(QueryFilters(untagged=True), Delta(add={2}), None)
    assert stable_membership(QueryFilters(languages=("de",)), Delta(replace=()), frozenset())
    original = QueryFilters(text="x", languages=("de",), tag_names=("sale",))
    assert undo_filters(original, Delta(add={3})) == QueryFilters("x", ("de",), tag_ids=(3,))
    assert undo_filters(original, Delta(remove={2})) == QueryFilters("x", ("de",))
    # A job keeps its filter as the API's body.
    assert QueryFilters.from_body(original.to_body()) == original


# --- the walk keeps its place -----------------------------------------------------------------


@pytest.mark.parametrize("size", [1000, 100, 7])
def test_each_read_starts_before_k_so_the_place_can_be_checked(size):
    assert position(0, size) == (1, size, False)
    worst_early, worst = size, size
    for k in range(1, 50 * size, max(1, size // 13)):
        page, limit, verifiable = position(k, size)
        offset = (page - 1) * limit
        if verifiable:
            assert offset < k < offset + limit, (k, page, limit)
            assert size // 2 <= limit <= size
            new = offset + limit - k
            if k < size:
                worst_early = min(worst_early, new)
            else:
                worst = min(worst, new)
        else:
            assert offset == k
    assert worst_early >= 1 and worst >= 1
    if size >= 100:
        assert worst_early >= size // 2 - 1 and worst >= size // 2 - 1
    if size == 1000:
        # A walk whose writes leave the filter as it is: each read brings nearly a full batch
        # of new rows (the price of keeping its place is a few per cent more reads).
        k, news = 0, []
        for _ in range(200):
            page, limit, _verifiable = position(k, size)
            news.append((page - 1) * limit + limit - k)
            k = page * limit
        assert min(news) >= 900 and sum(news) / len(news) >= 950


# --- sentences ----------------------------------------------------------------------------------


def test_filters_are_said_with_the_names_of_the_filter_chips():
    filters = QueryFilters(text="schuhe", languages=("de", "fr"), countries=("AT",),
                           tag_names=("sale", "brand"))
    assert wording.filter_words(filters) == (
        "languages German (de) or French (fr), country Austria (AT), tags ‘sale’ or ‘brand’, "
        "text “schuhe”")
    assert wording.plan_sentence(Delta(add={1}), {1: "brand"}, 2431, QueryFilters(
        text="schuhe", languages=("de",))) == (
        "Add ‘brand’ to 2,431 queries matching language German (de), text “schuhe”")
    assert wording.plan_sentence(Delta(replace=()), {}, 1, QueryFilters()) == (
        "Remove every tag from 1 query in this project")
    assert wording.time_left(3) == "a few seconds left"
    assert wording.time_left(42) == "about 40 seconds left"
    assert wording.time_left(600) == "about 10 minutes left"


# --- the jobs database --------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path):
    url = f"sqlite:///{tmp_path}/jobs.sqlite3"
    yield Store.for_url(url)
    Store.forget(url)


def test_the_project_lease_is_exclusive_reentrant_and_expires(store):
    assert store.try_lock("p", "a")
    assert not store.try_lock("p", "b")
    assert store.try_lock("p", "a")  # its holder again (a resumed job)
    assert store.try_lock("q", "b")  # another project
    store.unlock("p", "a")
    assert store.try_lock("p", "b")
    assert not store.try_lock("p", "c", lease=0.0)
    assert store.try_lock("x", "a", lease=0.05)
    # Another holder gets it once its 50 ms have run out: tried again and again (bounded)
    # instead of sleeping past them. A lease that never expired keeps failing this.
    assert wait_until(lambda: store.try_lock("x", "c"), timeout=5)  # expired


def test_a_job_of_a_process_that_is_gone_is_interrupted_and_releases_its_lease(store):
    """Which jobs are dead is the one rule of weblib/job_lifecycle.py (tests/
    test_job_lifecycle.py); the dashboard's own: its sentence, the lease freed at once (not
    only when it expires), Resume offered."""
    alive = store.create(project_id="p", kind="edit", scope="filter", state="running",
                         owner=process_owner(), heartbeat_at=time.time())
    dead = store.create(project_id="p", kind="edit", scope="filter", state="running",
                        owner=f"{os.uname().nodename}:999999999:x", heartbeat_at=time.time())
    assert store.try_lock("p", dead.id)
    assert store.interrupt_dead(stale_seconds=30) == 1
    assert {e.id: e.state for e in store.unfinished("p")} == {
        alive.id: "running", dead.id: "interrupted"}
    assert store.get(dead.id).message == STOPPED_WORKING
    assert store.try_lock("p", "someone")  # the dead job's lease went with it
    assert store.get(dead.id).resumable


def test_a_dashboard_start_reports_jobs_its_predecessor_left_running(app, dashboard_config):
    store = app.extensions["tagdesk_jobs"]
    edit = store.create(project_id="p", kind="edit", scope="filter", state="running",
                        owner=f"{os.uname().nodename}:999999999:gone", heartbeat_at=time.time())
    again = create_app(dashboard_config)
    try:
        assert store.get(edit.id).state == "interrupted"
        assert store.get(edit.id).message == (
            "Tagdesk stopped working on this before it finished (a restart or a lost worker).")
    finally:
        close_app(again)


# --- the key of a background job ---------------------------------------------------------------


def session_key_of(app, session_ref):
    """The org key a job of this app finds for `session_ref` (what `run_job` is handed)."""
    return app.extensions["tagdesk_job_config"]()["SESSIONS"](session_ref)


def test_a_job_reads_the_key_from_the_session_store_and_never_stores_it(app, auth, shop):
    auth.sign_in()
    html = page(auth.client, shop, "q=filler")
    asked = post(auth.client, bulk_url(shop), {"action": "add", "apply_tag": str(
        shop.tags["sale"]), "scope": "all", "q": "filler"}, html)
    assert asked.status_code == 200
    from tests.dashboard.bulk_helpers import plan_of

    post(auth.client, f"/projects/{shop.project_id}/bulk/confirm",
         {"plan": plan_of(asked.get_data(as_text=True))}, html)
    store = app.extensions["tagdesk_jobs"]
    edit = store.for_project(shop.project_id, limit=1)[0]
    assert wait_for(app, edit.id).state == "done"
    assert session_key_of(app, edit.session_ref) == shop.key
    database = app.config["JOBS_DATABASE_URL"].removeprefix("sqlite:///")
    with open(database, "rb") as handle:
        assert shop.key.encode() not in handle.read()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(database + suffix):
            with open(database + suffix, "rb") as handle:
                assert shop.key.encode() not in handle.read()


def test_a_job_whose_person_signed_out_stops_with_a_sentence(app, auth, shop):
    auth.sign_in()
    html = page(auth.client, shop, "q=filler")
    store = app.extensions["tagdesk_jobs"]
    asked = post(auth.client, bulk_url(shop), {"action": "add", "apply_tag": str(
        shop.tags["sale"]), "scope": "all", "q": "filler"}, html)
    from tests.dashboard.bulk_helpers import plan_of

    plan = plan_of(asked.get_data(as_text=True))
    app.extensions["tagdesk_runner"].submit = lambda job_id: None  # it waits in the queue
    post(auth.client, f"/projects/{shop.project_id}/bulk/confirm", {"plan": plan}, html)
    edit = store.for_project(shop.project_id, limit=1)[0]
    auth.sign_out()
    from jobs.work import run_job

    config = app.extensions["tagdesk_runner"]._config()
    assert run_job(edit.id, config) == "interrupted"
    assert "nobody who started or resumed it is signed in" in store.get(edit.id).message
    assert store.get(edit.id).resumable


@pytest.mark.redis
def test_with_redis_the_job_reads_the_key_from_redis(shop, dashboard_config, tmp_path):
    app = create_app({**dashboard_config, "REDIS_URL": REDIS_URL})
    try:
        auth = AuthActions(app.test_client(), shop)
        auth.sign_in()
        html = page(auth.client, shop, "q=filler")
        keys = keys_in(html)
        post(auth.client, bulk_url(shop), {"action": "add", "q": "filler", "apply_tag": str(
            shop.tags["brand"]), "selected": list(keys.values())[:2]}, html)
        edit = app.extensions["tagdesk_jobs"].for_project(shop.project_id, limit=1)[0]
        assert session_key_of(app, edit.session_ref) == shop.key
        assert session_key_of(app, "no-such-session") is None
    finally:
        close_app(app)


@pytest.fixture
def jobs_postgres():
    """A PostgreSQL database of its own for the jobs tables, dropped at the end."""
    with postgres_database_of_its_own("tagdesk_jobs_test_") as url:
        yield url


@pytest.mark.postgres
def test_jobs_run_on_postgresql_too(shop, dashboard_config, jobs_postgres):
    url = jobs_postgres
    app = create_app({**dashboard_config, "JOBS_DATABASE_URL": url, "BULK_BATCH_SIZE": 9})
    try:
        auth = AuthActions(app.test_client(), shop)
        auth.sign_in()
        html = page(auth.client, shop, "q=filler")
        asked = post(auth.client, bulk_url(shop), {"action": "add", "scope": "all",
                                                   "q": "filler", "apply_tag": str(
                                                       shop.tags["local"])}, html)
        from tests.dashboard.bulk_helpers import plan_of

        post(auth.client, f"/projects/{shop.project_id}/bulk/confirm",
             {"plan": plan_of(asked.get_data(as_text=True))}, html)
        edit = app.extensions["tagdesk_jobs"].for_project(shop.project_id, limit=1)[0]
        done = wait_for(app, edit.id)
        assert (done.state, done.changed) == ("done", 60)
        assert tags_of(app, shop, "filler query 059") == {"local"}
    finally:
        close_app(app)
