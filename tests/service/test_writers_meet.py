"""Writers against writers, on SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL: every pair of
the writers of a project's links, run at the same moment on the same queries, loses nothing.

The writers are the real ones over real HTTP: the dashboard's jobs (jobs.work.run_job with a
real queryapi Client) for a bulk add, a bulk remove and an Undo; the rules API for a rule's
apply, unapply and restore, a part at a time; the tags API for a merge; an import of a
file with a rule on entry; an import that changes the present queries' numbers into a
rule's range; and suggestions accepted: all of a view's, a part at a time (the dashboard's
Accept all), one row's at a time (its Accept on a row), and one row's then its Undo, as the
dashboard records and undoes it within the request. Each owns tags of its own, so what the
project's links must be at the end is known whatever the order: every link some writer added
and none removed is there, and nothing some writer removed and none added came back (and an
accepted suggestion never stands beside its tag). Small batches and parts (10 rows, 10 links)
make the writers' reads and writes interleave."""

from __future__ import annotations

import io
import itertools
import shutil
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
import pytest
from sqlalchemy import text

from dashboard.edits import SUGGESTION
from dashboard.undo import covering_filters, runs_in_request
from jobs.deltas import Change, Delta, RowKey, undo_filters
from jobs.fresh import by_recency, find_rows
from jobs.rewrite import held_for_write, rewrite, write
from jobs.store import Store, new_id
from jobs.work import run_job
from queryapi import Client, Mode, QueryFilters
from service.engine import accepting, rule_links, suggested
from service.imports import imports
from service.learning.learner import of_app
from service.org import admin
from service.store.db import begin_write, session_scope
from service.suggestions.features import FeatureShape
from service.suggestions.model import Model
from service.suggestions.scoring import Suggestions
from tests.support.api import Api
from tests.support.imports import HEADER
from tests.support.servers import LiveServer

QUERIES = 60
IMPORTED = 20
BATCH = 10
PART = 10
DE = QueryFilters(languages=("de",))


@dataclass
class Setting:
    """The project the pair meets in, and what every writer needs to run and to be judged."""

    app: object
    api: Api
    project_id: str
    key: str
    jobs_url: str
    tags: dict[str, int] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)    # the queries there from the start
    initial: dict[str, set[int]] = field(default_factory=dict)
    edits: dict[str, str] = field(default_factory=dict)  # writer -> its job's id
    rules: dict[str, int] = field(default_factory=dict)
    operation: str = ""
    suggested: list[int] = field(default_factory=list)  # the tags suggest_everywhere gave

    @property
    def store(self) -> Store:
        return Store.for_url(self.jobs_url)

    def job_config(self) -> dict:
        return {"JOBS_DATABASE_URL": self.jobs_url, "SESSIONS": lambda _ref: self.key,
                "API_URL": self.api.base_url, "BULK_BATCH_SIZE": BATCH, "BULK_PIPELINE": True,
                "API_RETRIES": 2, "JOBS_HEARTBEAT_SECONDS": 1}

    def queue(self, **values) -> str:
        return self.store.create(project_id=self.project_id, state="queued",
                                 session_ref="session", actor="Ann", **values).id

    def rule(self, name: str, condition: dict, paused: bool) -> int:
        made = self.api.post("/api/rules/create", {"name": name, "condition": condition,
                                                   "tagIds": [self.tags[name]]})
        assert made.status_code == 201, made.text
        if paused:
            assert self.api.post("/api/rules/pause", {"id": made.json()["id"],
                                                      "paused": True}).status_code == 200
        self.rules[name] = made.json()["id"]
        return made.json()["id"]

    def parts(self, path: str, body: dict, more) -> None:
        """Call `path` until `more(answer)` is false; every part must answer 200."""
        while True:
            answer = self.api.another_session().post(path, body)
            assert answer.status_code == 200, answer.text
            body = more(answer.json(), body)
            if body is None:
                return

    def links(self) -> dict[str, set[int]]:
        page = self.api.queries(limit=1000).json()
        assert page["page"]["totalRecords"] <= 1000
        return {record["query"]: set(record["tags"]) for record in page["results"]}

    def ids(self) -> dict[str, str]:
        """The queries' ids, by text."""
        return {record["query"]: record["id"]
                for record in self.api.queries(limit=1000).json()["results"]}

    def client(self) -> Client:
        """A client as the dashboard's pages hold one (dashboard/apiclient.py)."""
        return Client(self.api.base_url, self.key, Mode.INTERACTIVE, actor="Ann")

    def recorded(self, writer: str) -> dict[str, Change]:
        """What the job of `writer` says it changed, by query text."""
        changes = self.store.changes(self.edits[writer])
        return {change.query: change for change in changes.values()}


# --- the writers: each prepares its part of the project, runs, and says what it owns ---------


def applied(answer: dict, body: dict):
    return None if answer["cursor"] is None else {**body, "cursor": answer["cursor"]}


def unapplied(answer: dict, body: dict):
    return {**body, "operation": answer["operation"]} if answer["more"] else None


def restored(answer: dict, body: dict):
    return body if answer["more"] else None


class Writer:
    tag = ""

    def prepare(self, s: Setting) -> None:
        pass

    def run(self, s: Setting) -> None:
        raise NotImplementedError

    def must_have(self, s: Setting, final: dict[str, set[int]]) -> set[str]:
        """The queries that must carry this writer's tag at the end (the others must not)."""
        raise NotImplementedError


class BulkAdd(Writer):
    tag = "add"

    def prepare(self, s):
        s.edits["add"] = s.queue(kind="edit", scope="filter", scope_filter=DE.to_body(),
                                 delta=Delta(add={s.tags["add"]}).to_json())

    def run(self, s):
        assert run_job(s.edits["add"], s.job_config()) == "done"

    def must_have(self, s, final):
        # Every query there from the start; of those imported meanwhile, those it tagged.
        return set(s.texts) | {query for query, change in s.recorded("add").items()
                               if s.tags["add"] in change.added}


class BulkRemove(Writer):
    tag = "remove"

    def prepare(self, s):
        s.edits["remove"] = s.queue(kind="edit", scope="filter", scope_filter=DE.to_body(),
                                    delta=Delta(remove={s.tags["remove"]}).to_json())

    def run(self, s):
        assert run_job(s.edits["remove"], s.job_config()) == "done"

    def must_have(self, s, final):
        return set()


class Undo(Writer):
    """The Undo of an edit that added "undo" to every query (as the dashboard records an
    in-page edit), run as the dashboard's undo job."""

    tag = "undo"

    def prepare(self, s):
        delta = Delta(add={s.tags["undo"]})
        page = s.api.queries(limit=1000).json()["results"]
        changes = [Change(r["id"], r["query"], r["language"], r["country"], (s.tags["undo"],))
                   for r in page if s.tags["undo"] in r["tags"]]
        done = s.store.record_finished(
            changes, project_id=s.project_id, kind="edit", scope="filter",
            scope_filter=DE.to_body(), delta=delta.to_json(), changed=len(changes),
            actor="Ann")
        s.edits["undo"] = s.queue(kind="undo", scope="filter", undo_of=done.id,
                                  scope_filter=undo_filters(DE, delta).to_body(),
                                  delta=delta.to_json())

    def run(self, s):
        assert run_job(s.edits["undo"], s.job_config()) == "done"

    def must_have(self, s, final):
        return set()


class RuleApply(Writer):
    tag = "apply"

    def prepare(self, s):
        s.rule("apply", {"query": "item"}, paused=True)

    def run(self, s):
        s.parts("/api/rules/apply", {"id": s.rules["apply"], "cursor": 0}, applied)

    def must_have(self, s, final):
        return set(s.texts)


class RuleUnapply(Writer):
    tag = "unapply"

    def prepare(self, s):
        rule_id = s.rule("unapply", {"query": "item"}, paused=True)
        s.parts("/api/rules/apply", {"id": rule_id, "cursor": 0}, applied)

    def run(self, s):
        s.parts("/api/rules/unapply", {"id": s.rules["unapply"]}, unapplied)

    def must_have(self, s, final):
        return set()


class RuleRestore(Writer):
    tag = "restore"

    def prepare(self, s):
        rule_id = s.rule("restore", {"query": "item"}, paused=True)
        s.parts("/api/rules/apply", {"id": rule_id, "cursor": 0}, applied)
        operations = []

        def more(answer, body):
            operations.append(answer["operation"])
            return unapplied(answer, body)

        s.parts("/api/rules/unapply", {"id": rule_id}, more)
        s.operation = operations[0]

    def run(self, s):
        s.parts("/api/rules/restore", {"operation": s.operation}, restored)

    def must_have(self, s, final):
        return set(s.texts)


class Import(Writer):
    """A file of new queries, imported a few rows a transaction, each tagged on entry by the
    active rule "import" that matches it."""

    tag = "import"

    def prepare(self, s):
        s.rule("import", {"query": "fresh"}, paused=False)

    def run(self, s):
        rows = "".join(f"fresh {i:03d},de,DE,\n" for i in range(IMPORTED)).encode()
        with session_scope(s.app) as session:
            counts = imports.import_file(session, s.project_id, io.BytesIO(
                HEADER.encode() + rows), batch_rows=5)
        assert counts.added == IMPORTED

    def must_have(self, s, final):
        return {query for query in final if query.startswith("fresh")}


class Renumber(Writer):
    """A file of the queries already there with a volume, imported a few rows a transaction:
    their numbers change into the range of the active rule "renumbered", which tags them."""

    tag = "renumbered"

    def prepare(self, s):
        s.rule("renumbered", {"metricRanges": {"volume": {"min": 1000}}}, paused=False)

    def run(self, s):
        rows = [(*admin.normalize_query(text, "de", "DE"), [], None, {"volume": 5000})
                for text in s.texts]
        with session_scope(s.app) as session:
            assert imports.add_rows(session, s.project_id, [rows], batch_rows=5) == 0

    def must_have(self, s, final):
        return set(s.texts)


class Merge(Writer):
    """"merged" (on every other query) merged into "into" (on every fifth)."""

    tag = "into"

    def run(self, s):
        answer = s.api.another_session().post(
            "/api/tags/merge", {"id": s.tags["merged"], "intoId": s.tags["into"]})
        assert answer.status_code == 200, answer.text

    def must_have(self, s, final):
        return {query for query in s.texts if s.tags["merged"] in s.initial[query]
                or s.tags["into"] in s.initial[query]}


def suggest_everywhere(s: Setting, tag_id: int) -> None:
    """Every query there is suggested the tag (and those this setting was suggested before)
    at 0.9 (a model's default confidence 0.6), as the suggestions' job writes them
    (service/engine/suggested.py), in place of the suggestions there were."""
    s.suggested.append(tag_id)
    tag_ids = np.array(s.suggested, dtype=np.int64)
    model = Model(shape=FeatureShape(), columns=np.zeros(0, dtype=np.int64),
                  idf=np.zeros(0, dtype=np.float32), unseen_idf=1.0,
                  weights=np.zeros((0, len(tag_ids)), dtype=np.float32),
                  bias=np.zeros(len(tag_ids), dtype=np.float32), calibration=(1.0, 0.0),
                  tag_ids=tag_ids, tag_query_counts=np.zeros(len(tag_ids), dtype=np.int64),
                  learned_from=0, held_back=0, held_back_right=1.0, default_confidence=0.6)
    of_app(s.app).wait(60)  # a learning the writers' preparations started, ended first
    with session_scope(s.app) as session:
        keys = np.array(sorted(session.execute(text(
            "SELECT pk FROM queries WHERE project_id = :p"), {"p": s.project_id}).scalars()),
            dtype=np.int64)
        begin_write(session)
        suggested.ensure(session.connection(), s.project_id)
        read = suggested.links(session.connection(), s.project_id)
        scored = Suggestions(np.repeat(keys, len(tag_ids)), np.tile(tag_ids, len(keys)),
                             np.full(len(keys) * len(tag_ids), 0.9, dtype=np.float32))
        now = datetime.now(UTC).replace(tzinfo=None)
        suggested.write_part(session.connection(), s.project_id, scored, read.written, 0,
                             int(keys.max()))
        suggested.replace(session.connection(), s.project_id, model, read, now, int(keys.max()))
        # As if its job had just run: none learns again during the test (the interval).
        session.execute(text("UPDATE suggestion_models SET asked_at = :now "
                             "WHERE project_id = :p"), {"now": now, "p": s.project_id})


class Accept(Writer):
    """Suggestions of "accept" accepted by the view of every query suggested it, a part at a
    time (suggestions/accept)."""

    tag = "accept"

    def prepare(self, s):
        suggest_everywhere(s, s.tags["accept"])

    def run(self, s):
        s.parts("/api/suggestions/accept", {"tagId": s.tags["accept"], "cursor": 0,
                                            "filters": {"suggestedTagIds": [s.tags["accept"]]}},
                applied)

    def must_have(self, s, final):
        # A suggestion never stands beside its tag, whoever wrote the link.
        both = s.api.post("/api/queries/list", {"suggestedTagIds": [s.tags["accept"]],
                                                "tagIds": [s.tags["accept"]], "limit": 1})
        assert both.json()["page"]["totalRecords"] == 0
        return set(s.texts)


def suggested_to(s: Setting, tag_id: int) -> set[str]:
    """The queries there from the start that are suggested the tag: those the filter finds
    (the engine's bitmaps), which must be those whose own suggestions name it (the rows)."""
    found = s.api.post("/api/queries/list", {"suggestedTagIds": [tag_id], "limit": 1000})
    every = s.api.post("/api/queries/list", {"limit": 1000, "include": ["suggestions"]})
    by_filter = {record["query"] for record in found.json()["results"]}
    by_rows = {record["query"] for record in every.json()["results"]
               if any(made["tagId"] == tag_id for made in record.get("suggestions", ()))}
    assert by_filter & set(s.texts) == by_rows & set(s.texts)
    return by_filter & set(s.texts)


class AcceptOne(Writer):
    """Every other row's suggestion of "one" accepted, a row at a time, as the dashboard's
    Accept on a row (key a) does it (blueprints/queries.py accept_suggestion):
    suggestions/accept with that one query's id, through the dashboard's client. The other
    rows keep theirs."""

    tag = "one"

    def prepare(self, s):
        suggest_everywhere(s, s.tags["one"])

    def chosen(self, s) -> list[str]:
        return s.texts[1::2]

    def run(self, s):
        ids = s.ids()
        with s.client() as client:
            for query in self.chosen(s):
                done = client.accept_suggestions(s.project_id, s.tags["one"],
                                                 query_ids=[ids[query]])
                assert done.tagged == 1, (query, done)
                assert [item.query for item in done.queries] == [query]

    def must_have(self, s, final):
        assert suggested_to(s, s.tags["one"]) == set(s.texts) - set(self.chosen(s))
        return set(self.chosen(s))


class AcceptUndo(Writer):
    """Every third row's suggestion of "undone" accepted and then undone, as the dashboard's
    Accept on a row (a) and its Undo (z) do it: the accept recorded as an edit of that row
    (dashboard/edits.py record_accepted), its Undo within the request
    (dashboard/undo.py undo_in_request: the row read afresh by a filter that covers it,
    tags-edit taking the tag away). The accept took the row's suggestion away (a link made
    takes it, service/engine/suggestion_links.py) and the Undo gives it back: every row ends
    suggested "undone", none rejected."""

    tag = "undone"

    def prepare(self, s):
        suggest_everywhere(s, s.tags["undone"])

    def chosen(self, s) -> list[str]:
        return s.texts[::3]

    def run(self, s):
        tag_id, ids, store = s.tags["undone"], s.ids(), s.store
        with s.client() as client:
            for query in self.chosen(s):
                done = client.accept_suggestions(s.project_id, tag_id, query_ids=[ids[query]])
                assert done.tagged == 1, (query, done)
                item = done.queries[0]
                edit = store.record_finished(
                    [Change(ids[query], item.query, item.language, item.country, (tag_id,))],
                    project_id=s.project_id, kind="edit", scope=SUGGESTION,
                    delta=Delta(add=frozenset({tag_id})).to_json(), expected=1, total=1,
                    processed=1, changed=1, untouched=0, actor="Ann")
                assert runs_in_request(edit)
                assert self.undo(s, client, store, edit) == [Change(
                    ids[query], query, "de", "DE", (), (tag_id,))]

    @staticmethod
    def undo(s: Setting, client: Client, store: Store, edit) -> list[Change]:
        """dashboard/undo.py undo_edit and undo_in_request, without their request."""
        undo_id = new_id()
        assert store.mark_undone(edit.id, undo_id)
        changes = list(store.changes(edit.id).values())
        keys = [RowKey(c.query_id, c.query, c.language, c.country) for c in changes]
        by_id = {change.query_id: change for change in changes}
        with held_for_write(store, client, s.project_id, undo_id, 10):
            first = by_recency(client, s.project_id, covering_filters(edit, changes))
            found, gone = find_rows(client, s.project_id, keys, first, first_covers=True)
            step = rewrite(found.values(), lambda record: by_id[record.id].undo(record.tags))
            write(client, s.project_id, step)
        assert gone == []
        store.record_finished(
            step.changes, id=undo_id, project_id=s.project_id, kind="undo", scope=edit.scope,
            delta=edit.delta, undo_of=edit.id, expected=edit.changed, total=len(found),
            processed=len(found), changed=len(step.changes), untouched=step.untouched,
            actor="Ann")
        return step.changes

    def must_have(self, s, final):
        tag_id = s.tags["undone"]
        assert suggested_to(s, tag_id) == set(s.texts)
        with session_scope(s.app) as session:
            assert session.execute(text(
                "SELECT count(*) FROM suggestion_rejections WHERE project_id = :p "
                "AND tag_id = :t"), {"p": s.project_id, "t": tag_id}).scalar_one() == 0
        return set()


WRITERS = {writer.__name__: writer for writer in (
    BulkAdd, BulkRemove, Undo, RuleApply, RuleUnapply, RuleRestore, Import, Renumber, Merge,
    Accept, AcceptOne, AcceptUndo)}
PAIRS = list(itertools.combinations(WRITERS, 2))
TAGS = ("add", "remove", "undo", "apply", "unapply", "restore", "import", "renumbered",
        "merged", "into", "kept", "accept", "one", "undone")


def initial_tags(index: int) -> list[str]:
    names = ["remove", "undo"]
    if index % 2 == 0:
        names.append("merged")
    if index % 5 == 0:
        names.append("into")
    if index % 3 == 0:
        names.append("kept")
    return names


@pytest.fixture
def setting(service_app, world, tmp_path, monkeypatch, jobs_template) -> Setting:
    monkeypatch.setattr(rule_links, "PART", PART)
    monkeypatch.setattr(accepting, "PART", PART)
    server = LiveServer(service_app).start()
    shutil.copy(jobs_template, tmp_path / "jobs.sqlite3")  # the jobs' tables, migrated

    def made(session):
        tags = {name: admin.create_tag(session, world.project_id, name, "#1f77b4")
                for name in TAGS}
        rows = [(*admin.normalize_query(f"item {i:03d}", "de", "DE"),
                 [tags[name] for name in initial_tags(i)], None) for i in range(QUERIES)]
        admin.insert_queries(session, world.project_id, rows)
        return tags

    s = Setting(service_app, Api(server.url, world.key, world.project_id), world.project_id,
                world.key, f"sqlite:///{tmp_path / 'jobs.sqlite3'}", world.run(made))
    s.texts = [f"item {i:03d}" for i in range(QUERIES)]
    yield s
    server.stop()


def run_together(s: Setting, writers: list[Writer]) -> None:
    """Both writers at the same moment, each in a thread; the first failure is the test's."""
    start = threading.Barrier(len(writers))
    failures: list[BaseException] = []

    def run(writer: Writer) -> None:
        start.wait()
        try:
            writer.run(s)
        except BaseException as error:  # noqa: BLE001 — handed to the test below
            failures.append(error)

    threads = [threading.Thread(target=run, args=(writer,)) for writer in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    if failures:
        raise failures[0]


@pytest.mark.parametrize(("first", "second"), PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_two_writers_at_once_lose_nothing_the_other_wrote(setting, first, second):
    s = setting
    writers = [WRITERS[first](), WRITERS[second]()]
    for writer in writers:
        writer.prepare(s)
    s.initial = s.links()
    run_together(s, writers)

    final = s.links()
    assert set(s.texts) <= set(final)
    owned = {s.tags[writer.tag]: writer.must_have(s, final) for writer in writers}
    if any(isinstance(writer, Merge) for writer in writers):
        owned[s.tags["merged"]] = set()  # the tag is gone
    lost, back = [], []
    for tag_id in s.tags.values():
        wanted = owned.get(tag_id)
        if wanted is None:  # nobody in this pair writes it: as it was
            wanted = {query for query in s.texts if tag_id in s.initial[query]}
        for query, tags in final.items():
            if query in wanted and tag_id not in tags:
                lost.append((query, tag_id))
            elif query not in wanted and tag_id in tags:
                back.append((query, tag_id))
    assert not lost, f"{len(lost)} links lost, such as {lost[:5]}"
    assert not back, f"{len(back)} links back, such as {back[:5]}"


def test_a_rule_applied_between_a_jobs_read_and_its_write_keeps_its_links(setting,
                                                                          monkeypatch):
    """The interleaving the pairs above meet by chance, forced: a rule applied to every query
    after a bulk add's job read its first page, before it wrote it."""
    s = setting
    rule, add = RuleApply(), BulkAdd()
    rule.prepare(s)
    add.prepare(s)
    applied_first: list[bool] = []

    def after_the_rule(write):
        def written(self, project_id, items):
            if not applied_first:
                applied_first.append(True)
                rule.run(s)
            return write(self, project_id, items)
        return written

    for name in ("edit_tags", "set_tags"):
        monkeypatch.setattr(Client, name, after_the_rule(getattr(Client, name)))
    add.run(s)
    final = s.links()
    assert applied_first
    assert [query for query in s.texts if s.tags["apply"] not in final[query]] == []
    assert [query for query in s.texts if s.tags["add"] not in final[query]] == []
