"""Check the file on an upload's Columns page, as a job (service/imports/import_jobs.py: `check`,
`run_check`), and the sweep of uploads left there (`sweep`), through the settings area over
real HTTP (tests/support/imports.py) on a live service in this process.

A check is held after its first batch where a test must see it running (as the browser test
of an import's progress does), so that no test depends on the machine's speed.

Runs on SQLite and, with TAGDESK_TEST_POSTGRES=1, on PostgreSQL (tests/service/conftest.py).
"""

from __future__ import annotations

import io
import os
import socket
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import inspect, select, text

from service.imports import import_jobs, import_sources
from service.imports.import_jobs import Chosen, ImportJob
from service.imports.import_sources import Choice
from service.store.models import utcnow
from tests.service.counters import stored_bitmaps
from tests.service.migrating import engine_of_its_own, migrate, migrated_with_rows
from tests.service.test_imports import dead_pid
from tests.support.imports import Administrator
from tests.support.waiting import wait_until

EMAIL, PASSWORD = "ann@example.com", "correct horse battery staple"
BATCH_ROWS = 50


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports"),
            "IMPORT_BATCH_ROWS": BATCH_ROWS}


@pytest.fixture
def administrator(live_service, world):
    world.with_administrator(EMAIL, PASSWORD)
    return Administrator(live_service.url, EMAIL, PASSWORD)


@pytest.fixture
def folder(tmp_path):
    return tmp_path / "imports"


def keyword_list(rows: int = 300) -> str:
    """A keyword tool's list: queries, countries by name, labels separated by "|" — some
    rows the project has, some naming a tag it lacks, one without a query."""
    lines = ["Keyword;Volume;Country;Labels"]
    for number in range(rows):
        label = "brand" if number % 3 == 0 else ("seasonal|sale" if number % 7 == 0 else "")
        lines.append(f"keyword {number:04d};{number * 10};Germany;{label}")
    lines.append(";10;Germany;")
    return "\n".join(lines) + "\n"


FORM = {"query_column": "Keyword", "language": "German", "country_column": "Country",
        "tags_columns": "Labels", "tags_separator": "|"}
CHOICE = Choice(query_column="Keyword", language="German", country_column="Country",
                tags_columns=("Labels",), tags_separator="|")


def job_of(world, columns: str) -> ImportJob:
    import_id = columns.removesuffix("/columns").rsplit("/", 1)[-1]
    return world.run(lambda s: s.get(ImportJob, import_id))


def database_state(session, project_id: str) -> dict:
    """What a check must not change: the rows, the tags, the project's engine stamp and the
    engine's bitmaps."""
    counts = {table: session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
              for table in ("queries", "query_tags", "tags", "engine_pieces")}
    stamp = session.execute(text("SELECT engine_stamp FROM projects WHERE id = :p"),
                            {"p": project_id}).scalar_one()
    return {"counts": counts, "stamp": stamp, "bitmaps": stored_bitmaps(session)}


def with_rows(world, *texts: str) -> None:
    """The project has these queries already (de, DE), through the importer."""
    from service.imports import imports

    content = "query,language,country,tags\n" + "".join(f"{t},de,DE,\n" for t in texts)
    world.run(lambda s: imports.import_file(s, world.project_id, io.BytesIO(content.encode())))


class Held:
    """Checks held after their first batch (CheckSink.done), until released."""

    def __init__(self, monkeypatch):
        self.first_batch_in = threading.Event()
        self.release = threading.Event()
        done = import_jobs.CheckSink.done
        held = self

        def held_after_the_first_batch(sink, batch, counts):
            done(sink, batch, counts)
            if not held.first_batch_in.is_set():
                held.first_batch_in.set()
                held.release.wait(60)

        monkeypatch.setattr(import_jobs.CheckSink, "done", held_after_the_first_batch)


def test_the_check_jobs_result_is_the_checks_own_and_nothing_is_written(
        world, administrator, service_app, folder, tmp_path):
    with_rows(world, "keyword 0001", "keyword 0002")
    before = world.run(lambda s: database_state(s, world.project_id))
    columns = administrator.upload(world.project_id, keyword_list(), name="keywords.csv")
    form = {"csrf_token": administrator.csrf(columns), **FORM}

    # The result computed here, by the check itself, with no job around it.
    upload = import_jobs.upload_path(folder, job_of(world, columns).id)
    service_app.config["IMPORT_WAIT_SECONDS"] = 0  # the page that follows shows the job
    for create_tags in (False, True):
        page = administrator.check(columns, {**form, **({"create_tags": "1"} if create_tags
                                                        else {})})
        assert page.status_code == 200
        itself = world.run(lambda s, c=create_tags: import_jobs.check(
            s, world.project_id, upload, tmp_path / "shaped.csv", Chosen(CHOICE, c)))
        stored = job_of(world, columns).check_result
        assert {key: stored[key] for key in itself} == itself
        assert f"Checked, nothing changed: {itself['summary']}" in page.text
        if create_tags:
            assert itself["summary"] == ("298 will be added, 2 already present (2 with their "
                                          "numbers to update), 1 rejected.")
            assert "These tags would be created: seasonal." in page.text
        else:
            assert itself["summary"] == ("270 will be added, 2 already present (2 with their "
                                          "numbers to update), 29 rejected.")
            assert ("Rows name tags this project does not have: seasonal (28). Create them "
                    "first, or import with the tags created.") in page.text
        if create_tags:
            assert itself["rejected"] == ["Line 302: The query is empty."]
        else:  # the first five
            assert itself["rejected"][0] == "Line 9: This project has no tag named “seasonal”."
            assert len(itself["rejected"]) == 5
        assert all(f"<li>{line}</li>" in page.text for line in itself["rejected"])
        assert ">Import queries</button>" in page.text
        # The fields show the columns checked.
        assert 'name="language" value="German"' in page.text
        assert ('id="create-tags" name="create_tags" value="1" checked' in page.text) \
            == create_tags
        assert world.run(lambda s: database_state(s, world.project_id)) == before

    # The import of the same columns reads the file the check wrote, and creates the tag.
    (kept,) = list(folder.glob("*.checked"))
    started = administrator.post(columns, data={**form, "create_tags": "1",
                                                "action": "import"})
    report = started.headers["Location"]
    assert administrator.finished(report)["added"] == 298
    assert not kept.exists()
    assert wait_until(lambda: list(folder.iterdir()) == [], 30), list(folder.iterdir())


def test_a_check_runs_as_a_job_whose_bar_survives_a_reload_and_is_cancelled(
        world, administrator, service_app, folder, monkeypatch):
    service_app.config["IMPORT_WAIT_SECONDS"] = 0
    held = Held(monkeypatch)
    columns = administrator.upload(world.project_id, keyword_list(), name="keywords.csv")
    form = {"csrf_token": administrator.csrf(columns), **FORM}
    try:
        posted = administrator.post(columns, data={**form, "action": "check"})
        assert (posted.status_code, posted.headers["Location"]) == (303, columns)
        assert held.first_batch_in.wait(30)
        for _reload in range(2):
            page = administrator.get(columns).text
            assert '<h2 class="import-progress__title" id="check-progress-label">Checking the ' \
                   'file</h2>' in page
            assert ">Cancel the check</button>" in page and ">Import queries</button>" in page
            assert "Checked, nothing changed" not in page
            assert 'name="language" value="German"' in page
        progress = administrator.progress(columns.removesuffix("/columns"))
        # The file written in the import's own shape (half), its first batch read.
        assert (progress["state"], progress["done"], progress["rows"], progress["rejected"]) \
            == ("checking", False, BATCH_ROWS, 5)
        assert 50 <= progress["percent"] < 99 and progress["bytesRead"] is None
        assert progress["text"] == (f"{progress['percent']}% done: checking the rows "
                                    f"({BATCH_ROWS} so far, 5 rejected).")
        listed = administrator.get(f"/settings/projects/{world.project_id}").text
        assert f"Checking the file, {progress['percent']}%" in listed

        path = columns.removesuffix("/columns") + "/check/cancel"
        cancelled = administrator.post(path, data={"csrf_token": administrator.csrf(columns)})
        assert (cancelled.status_code, cancelled.headers["Location"]) == (303, columns)
    finally:
        held.release.set()
    page = administrator.get(columns).text
    assert "The check was cancelled. Nothing was changed." in page
    assert "<progress" not in page
    # The check stops at its next batch and stores nothing; its file goes.
    job_id = job_of(world, columns).id
    assert wait_until(lambda: [p.name for p in folder.iterdir()] == [f"{job_id}.csv"], 30), \
        list(folder.iterdir())
    job = job_of(world, columns)
    assert (job.state, job.check_result) == (
        "choosing", {"note": "The check was cancelled. Nothing was changed."})


@pytest.mark.parametrize("then", ["another check", "the import"])
def test_a_check_started_later_or_the_import_replaces_a_running_check(
        world, administrator, service_app, folder, monkeypatch, then):
    service_app.config["IMPORT_WAIT_SECONDS"] = 0
    with_rows(world, "keyword 0001")
    held = Held(monkeypatch)
    columns = administrator.upload(world.project_id, keyword_list(), name="keywords.csv")
    form = {"csrf_token": administrator.csrf(columns), **FORM}
    report = columns.removesuffix("/columns")
    try:
        # The first check: every row's language is English, so nothing is present.
        administrator.post(columns, data={**form, "language": "en", "action": "check"})
        assert held.first_batch_in.wait(30)
        if then == "another check":
            page = administrator.check(columns, form)  # German: keyword 0001 is present
            # Its Volume column would give keyword 0001 a volume.
            assert ("271 will be added, 1 already present (1 with its numbers to update), "
                    "29 rejected.") in page.text
        else:
            started = administrator.post(columns, data={**form, "action": "import"})
            assert started.headers["Location"] == report
            assert administrator.finished(report)["state"] == "finished"
    finally:
        held.release.set()
    # The first check stops at its next batch, stores nothing, and its file goes.
    left = [".checked", ".csv"] if then == "another check" else []
    assert wait_until(lambda: sorted(p.suffix for p in folder.iterdir()) == left, 30), \
        list(folder.iterdir())
    job = job_of(world, columns)
    if then == "another check":
        assert job.state == "choosing"
        assert job.check_result["summary"] == "271 will be added, 1 already present (1 " \
                                              "with its numbers to update), 29 rejected."
        assert Chosen.from_json(job.check_result["chosen"]).choice.language == "German"
    else:
        assert (job.state, job.added, job.present, job.rejected) == ("finished", 271, 1, 29)
        assert list(folder.iterdir()) == []


def test_a_check_whose_process_died_is_given_up_and_the_upload_kept(world, administrator,
                                                                    folder):
    columns = administrator.upload(world.project_id, keyword_list(5), name="keywords.csv")
    job_id = job_of(world, columns).id

    def dead(session):
        job = session.get(ImportJob, job_id)
        job.state, job.check_id = "checking", "e" * 36
        job.owner, job.heartbeat_at = f"{socket.gethostname()}:{dead_pid()}:abc", utcnow()
        job.choice = Chosen(CHOICE).to_json()

    world.run(dead)
    page = administrator.get(columns).text
    assert "The check of the file stopped before it ended" in page
    assert "<progress" not in page and 'name="language" value="German"' in page
    assert job_of(world, columns).state == "choosing"
    assert import_jobs.upload_path(folder, job_id).exists()


def test_a_replaced_check_stops_while_it_writes_the_file_in_its_own_shape(
        world, service_app, folder, tmp_path):
    """Its progress is told every PROGRESS_ROWS rows written: a check replaced meanwhile stops
    there, and the job is the later check's, untouched."""
    rows = import_sources.PROGRESS_ROWS + 100
    content = keyword_list(rows).encode()
    import_jobs.save_upload(io.BytesIO(content), folder, "a" * 36)
    world.run(lambda s: import_jobs.create(
        s, world.org_id, world.project_id, None, EMAIL, "keywords.csv", len(content), "a" * 36,
        import_jobs.process_owner(), "choosing"))
    owner = import_jobs.process_owner()
    first = world.run(lambda s: import_jobs.start_check(s, "a" * 36, Chosen(CHOICE), owner))
    later = world.run(lambda s: import_jobs.start_check(s, "a" * 36, Chosen(CHOICE), owner))
    sessions = service_app.extensions["tagdesk_sessionmaker"]
    shaped = tmp_path / "shaped.csv"
    with pytest.raises(import_jobs.Stopped):
        world.run(lambda s: import_jobs.check(
            s, world.project_id, import_jobs.upload_path(folder, "a" * 36), shaped,
            Chosen(CHOICE), import_jobs.CheckProgress(sessions, "a" * 36, first, len(content))))
    with open(shaped, encoding="utf-8") as written:  # stopped at its first telling
        assert sum(1 for _ in written) == import_sources.PROGRESS_ROWS + 1
    job = world.run(lambda s: s.get(ImportJob, "a" * 36))
    assert (job.state, job.check_id, job.bytes_read, job.checked) == ("checking", later, 0, None)


# --- uploads left on their Columns page --------------------------------------------------------


def an_upload(world, folder, import_id: str, state: str, age: timedelta,
              suffixes: tuple[str, ...] = ("",)) -> list[Path]:
    """A job of this process in `state`, uploaded `age` ago, with its files that old: its
    upload, and a file beside it for each other suffix (".x.checked": a check's)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    then = time.time() - age.total_seconds()
    paths = [folder / f"{import_id}.csv{suffix}" for suffix in suffixes]
    for path in paths:
        path.write_bytes(b"Keyword\nboots\n")
        os.utime(path, (then, then))

    def make(session):
        job = import_jobs.create(session, world.org_id, world.project_id, None, EMAIL,
                                 "keywords.csv", 14, import_id, import_jobs.process_owner(),
                                 state)
        job.created_at = utcnow() - age

    world.run(make)
    return paths


def test_the_sweep_removes_old_uploads_rows_and_files_and_leaves_the_others(world, folder):
    day = timedelta(hours=25)
    old = an_upload(world, folder, "a" * 36, "choosing", day, ("", ".x.checked"))
    fresh = an_upload(world, folder, "b" * 36, "choosing", timedelta(hours=1))
    running = an_upload(world, folder, "c" * 36, "running", day)
    # Files whose job is gone (its project deleted): one as old, one just written.
    orphan, young_orphan = folder / ("d" * 36 + ".csv"), folder / ("f" * 36 + ".csv")
    orphan.write_bytes(b"x")
    young_orphan.write_bytes(b"x")
    os.utime(orphan, (time.time() - day.total_seconds(),) * 2)

    gone = world.run(lambda s: import_jobs.sweep(s, folder, 24 * 3600))
    assert gone == ["a" * 36]
    left = world.run(lambda s: sorted(s.scalars(select(ImportJob.id))))
    assert left == ["b" * 36, "c" * 36]
    assert not any(path.exists() for path in [*old, orphan])
    assert all(path.exists() for path in [*fresh, *running, young_orphan])


def test_a_swept_uploads_page_says_so_with_a_link_to_upload_again(world, administrator,
                                                                  service_app, folder):
    service_app.config.update(IMPORT_KEEP_HOURS=2, IMPORT_SWEEP_SECONDS=0)
    columns = administrator.upload(world.project_id, keyword_list(5), name="keywords.csv")
    kept = administrator.upload(world.project_id, keyword_list(5), name="fresh.csv")
    job_id = job_of(world, columns).id

    def three_hours_ago(session):
        session.get(ImportJob, job_id).created_at = utcnow() - timedelta(hours=3)

    world.run(three_hours_ago)
    for address in (columns, columns.removesuffix("/columns")):
        page = administrator.get(address)
        assert page.status_code == 404
        assert "<h1>This upload is no longer here</h1>" in page.text
        assert ("A file that is not imported is removed 2 hours after it was uploaded or last "
                "checked") in page.text
        assert (f'<a class="button button--primary" href="/settings/projects/'
                f'{world.project_id}/imports">Upload a file</a>') in page.text
    assert not import_jobs.upload_path(folder, job_id).exists()
    assert administrator.get(kept).status_code == 200
    listed = administrator.get(f"/settings/projects/{world.project_id}").text
    assert "fresh.csv" in listed and ">keywords.csv<" not in listed


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_migration_0032_adds_the_columns_of_a_check_and_takes_them_away(kind, tmp_path):
    with engine_of_its_own(kind, tmp_path, "tagdesk_test_import_checks_") as engine:
        migrated_with_rows(engine, "0031", [("shoes", "en", "US")])
        migrate(engine, "0032")
        columns = {c["name"] for c in inspect(engine).get_columns("imports")}
        assert {"choice", "check_id", "checked"} <= columns
        migrate(engine, "0031", down=True)
        columns = {c["name"] for c in inspect(engine).get_columns("imports")}
        assert not {"choice", "check_id", "checked"} & columns
        migrate(engine, "head")
