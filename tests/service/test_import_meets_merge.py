"""An import meeting a merge of a tag its file names, over real HTTP: the merge is made through
the API while the import runs (held at a chosen point: after the first batch is read, or after
the first range of rows is added), and every row that named the merged tag carries the tag it
went into — following a chain of merges — and the report says so; a tag deleted meanwhile is
still reported as deleted. The settings' import job and the importer the command line runs.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py).
"""

from __future__ import annotations

import threading

import pytest

from service.imports import import_jobs, imports
from tests.support.imports import HEADER, Administrator, held_after_the_first_batch

EMAIL = "ann@example.com"
PASSWORD = "correct horse battery staple"
# Rows a batch (and a range of rows added): a file of ten rows has several of each.
BATCH_ROWS = 2
ROWS = [f"row {n:02}" for n in range(10)]


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports"),
            "IMPORT_WAIT_SECONDS": 0, "IMPORT_BATCH_ROWS": BATCH_ROWS}


@pytest.fixture
def admin_http(live_service, world) -> Administrator:
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


def merge(api, tag_id: int, into_id: int) -> None:
    answer = api.post("/api/tags/merge", {"id": tag_id, "intoId": into_id})
    assert answer.status_code == 200, answer.text


def tags_by_query(api) -> dict[str, list[int]]:
    answer = api.queries(limit=1000)
    assert answer.status_code == 200, answer.text
    return {row["query"]: sorted(row["tags"]) for row in answer.json()["results"]}


def file_naming(tags: str) -> str:
    return HEADER + "".join(f"{query},en,US,{tags}\n" for query in ROWS)


def held_after_the_first_range(monkeypatch) -> tuple[threading.Event, threading.Event]:
    """(first_range_in, release): the writer that commits the import's first range of rows
    waits, outside any transaction, before its next range until `release` is set (60 s at
    most); on PostgreSQL the other writer goes on meanwhile."""
    first_range_in, release = threading.Event(), threading.Event()
    insert = imports.Adding._insert
    lock = threading.Lock()

    def held(self, session, load, first, last):
        insert(self, session, load, first, last)
        with lock:
            first_here = not first_range_in.is_set()
            first_range_in.set()
        if first_here:
            release.wait(60)

    monkeypatch.setattr(imports.Adding, "_insert", held)
    return first_range_in, release


def test_rows_naming_a_tag_merged_while_the_file_is_read_carry_the_tag_it_went_into(
        admin_http, api, world, monkeypatch):
    brand, sale = world.tags["brand"], world.tags["sale"]
    first_batch_in, release = held_after_the_first_batch(monkeypatch, import_jobs.JobSink)
    report = admin_http.upload(world.project_id, file_naming("brand"))
    try:
        assert first_batch_in.wait(60)
        merge(api, brand, sale)
    finally:
        release.set()
    progress = admin_http.finished(report)
    page = admin_http.get(report).text
    assert (progress["state"], progress["added"]) == ("finished", len(ROWS)), page
    assert tags_by_query(api) == {query: [sale] for query in ROWS}
    assert ("The tag “brand” was merged into “sale” during the import: its rows were added "
            "with “sale”.") in page, page
    assert "deleted" not in page


def test_rows_added_after_a_merge_between_ranges_carry_the_tag_it_went_into(
        admin_http, api, world, monkeypatch):
    """Half the rows name both tags: those added before the merge had both links and keep
    one; those added after are not given the tag twice."""
    brand, sale = world.tags["brand"], world.tags["sale"]
    first_range_in, release = held_after_the_first_range(monkeypatch)
    content = HEADER + "".join(f"{query},en,US,{'brand;sale' if n % 2 else 'brand'}\n"
                               for n, query in enumerate(ROWS))
    report = admin_http.upload(world.project_id, content)
    try:
        assert first_range_in.wait(60)
        added_before = admin_http.progress(report)["added"]
        merge(api, brand, sale)
    finally:
        release.set()
    progress = admin_http.finished(report)
    page = admin_http.get(report).text
    assert (progress["state"], progress["added"]) == ("finished", len(ROWS)), page
    assert 0 < added_before < len(ROWS)  # some ranges went in after the merge
    assert tags_by_query(api) == {query: [sale] for query in ROWS}
    assert "The tag “brand” was merged into “sale” during the import" in page, page


def test_undoing_the_merges_after_the_import_gives_every_row_the_tags_its_line_named(
        admin_http, api, world, monkeypatch):
    """brand → sale between ranges, then sale → question after the import: undone last
    first, each row carries exactly the tags its line named, whether it went in before the
    merges or after."""
    brand, sale, question = (world.tags[name] for name in ("brand", "sale", "question"))
    first_range_in, release = held_after_the_first_range(monkeypatch)
    named = {query: ("brand;sale", "brand", "sale", "")[n % 4] for n, query in enumerate(ROWS)}
    report = admin_http.upload(world.project_id, HEADER + "".join(
        f"{query},en,US,{tags}\n" for query, tags in named.items()))
    try:
        assert first_range_in.wait(60)
        first = api.post("/api/tags/merge", {"id": brand, "intoId": sale}).json()["operation"]
    finally:
        release.set()
    assert admin_http.finished(report)["added"] == len(ROWS)
    second = api.post("/api/tags/merge", {"id": sale, "intoId": question}).json()["operation"]
    for operation in (second, first):
        undone = api.post("/api/tags/unmerge", {"operation": operation})
        assert undone.status_code == 200, undone.text
    ids = {"brand": brand, "sale": sale}
    assert tags_by_query(api) == {
        query: sorted(ids[name] for name in tags.split(";") if name)
        for query, tags in named.items()}


def test_a_chain_of_merges_is_followed_and_a_deleted_tag_still_said(
        admin_http, api, world, monkeypatch):
    """brand → sale, then sale → question: rows naming brand or sale carry question; rows
    naming local, deleted meanwhile, go in without it, as the report says."""
    brand, sale, question, local = (world.tags[name]
                                    for name in ("brand", "sale", "question", "local"))
    first_batch_in, release = held_after_the_first_batch(monkeypatch, import_jobs.JobSink)
    content = HEADER + "".join(
        f"{query},en,US,{('brand', 'sale', 'local;brand')[n % 3]}\n"
        for n, query in enumerate(ROWS))
    report = admin_http.upload(world.project_id, content)
    try:
        assert first_batch_in.wait(60)
        merge(api, brand, sale)
        merge(api, sale, question)
        assert admin_http.delete_tag(world.project_id, local).status_code == 303
    finally:
        release.set()
    progress = admin_http.finished(report)
    page = admin_http.get(report).text
    assert (progress["state"], progress["added"]) == ("finished", len(ROWS)), page
    assert tags_by_query(api) == {query: [question] for query in ROWS}
    assert "The tag “brand” was merged into “question” during the import" in page, page
    assert "The tag “sale” was merged into “question” during the import" in page, page
    assert ("The tag “local” was deleted during the import: its rows were added without "
            "it.") in page, page


def test_the_command_line_import_follows_a_merge_made_while_it_reads(
        flask_cli, api, world, tmp_path, monkeypatch):
    """The command line's importer, its reader slowed after its first batch until a merge is
    made through the API."""
    brand, sale = world.tags["brand"], world.tags["sale"]
    read_batches = imports.read_batches

    def merged_after_the_first_batch(*args, **kwargs):
        for number, batch in enumerate(read_batches(*args, **kwargs)):
            yield batch
            if number == 0:
                merge(api, brand, sale)

    monkeypatch.setattr(imports, "read_batches", merged_after_the_first_batch)
    path = tmp_path / "queries.csv"
    path.write_text(file_naming("brand"))
    result = flask_cli("import-queries", world.project_id, path)
    assert result.exit_code == 0, result.output
    assert tags_by_query(api) == {query: [sale] for query in ROWS}
    assert ("The tag “brand” was merged into “sale” during the import: its rows were added "
            "with “sale”.") in result.output
