"""Settings → a project → Import queries: upload a CSV file, follow the import's progress,
read its report and download the rows it rejected.

Every import runs as a job (service/import_jobs.py) in a thread of this process; the upload
waits a moment for it, so a small file's report is the first page shown, and a large one's
page shows a progress bar (settings.js polls `…/progress`) that survives a reload. The section
of a project's page is the partial settings/_import_form.html (`project` in its context).

The service accepts request bodies of 1 MiB (config MAX_CONTENT_LENGTH); the upload alone
accepts IMPORT_MAX_BYTES (TAGDESK_IMPORT_MAX_BYTES, 512 MiB by default), and only from a
signed-in session.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from dataclasses import asdict, replace
from pathlib import Path

from flask import (
    Response,
    abort,
    current_app,
    g,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from sqlalchemy import select, update
from werkzeug.exceptions import RequestEntityTooLarge

from .. import import_jobs, import_sources, imports
from ..db import begin_write, get_session
from ..import_jobs import ImportJob
from ..import_sources import Choice
from ..models import Project, new_uuid, utcnow
from . import audit, web
from .projects import signed_in_project
from .views import bp, holds_a_session, load_user, signin_required

log = logging.getLogger(__name__)

RECENT_IMPORTS = 5
REJECTED_ON_PAGE = 100
UPLOAD_ENDPOINT = "settings.import_upload"

_runner_lock = threading.Lock()


class ImportForm(FlaskForm):
    file = FileField("CSV file", validators=[FileRequired("Choose a CSV file to import.")])


# --- the job runner of this app ------------------------------------------------------------


def _folder() -> Path:
    return Path(current_app.config.get("IMPORTS_FOLDER")
                or Path(current_app.instance_path) / "imports")


def runner() -> import_jobs.Runner:
    """This app's import runner, made on first use."""
    app = current_app._get_current_object()
    found = app.extensions.get("tagdesk_imports")
    if found is None:
        with _runner_lock:
            found = app.extensions.get("tagdesk_imports")
            if found is None:
                found = app.extensions["tagdesk_imports"] = import_jobs.Runner(
                    app.extensions["tagdesk_sessionmaker"], _folder(), record_end,
                    int(app.config.get("IMPORT_WORKERS") or 2),
                    int(app.config.get("IMPORT_BATCH_ROWS") or imports.BATCH_ROWS),
                    _stale_seconds())
    return found


def record_end(db, job: ImportJob, project_name: str) -> None:
    """The activity log's entry for an import that ended, in the transaction that ends it."""
    if job.state == import_jobs.FINISHED:
        note = f" {job.message}" if job.message else ""  # tags deleted meanwhile
        audit.record_change(db, job.org_id, "import.finished", project_name,
                            f"{job.file_name}: {job.summary}.{note}", job.user_id)
    else:
        audit.record_change(db, job.org_id, "import.failed", project_name,
                            f"{job.file_name}: {job.message}", job.user_id)


def _stale_seconds() -> float:
    return float(current_app.config.get("IMPORT_STALE_SECONDS") or import_jobs.STALE_SECONDS)


def _looked_at(jobs: list[ImportJob]) -> list[ImportJob]:
    """The jobs, with any whose process is gone marked interrupted first."""
    if any(job.active for job in jobs):
        import_jobs.interrupt_dead(get_session(), jobs, _folder(), _stale_seconds(),
                                   on_end=record_end)
    return jobs


# --- the size of the upload ----------------------------------------------------------------


@bp.url_value_preprocessor
def _allow_a_large_upload(endpoint, _values) -> None:
    """The upload route alone takes a large body, and only from a signed-in session. This runs
    before every before_request function — the CSRF check, which reads the form, included."""
    if (endpoint == UPLOAD_ENDPOINT and request.method == "POST"
            and holds_a_session()):
        request.max_content_length = current_app.config["IMPORT_MAX_BYTES"]


@bp.errorhandler(RequestEntityTooLarge)
def _too_large(error):
    if request.endpoint != UPLOAD_ENDPOINT or request.max_content_length is None \
            or request.max_content_length < current_app.config["IMPORT_MAX_BYTES"]:
        return web.error_page(413, error)
    if "user" not in g:
        load_user()
    size = human_size(current_app.config["IMPORT_MAX_BYTES"])
    return render_template(
        "settings/error.html", heading="That file is too large", status=413,
        sentence=f"An import takes files of up to {size}. Split the file into smaller files "
                 "and import each of them."), 413


def human_size(count: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            value = count / size
            return f"{value:.0f} {unit}" if value == int(value) or value >= 10 \
                else f"{value:.1f} {unit}"
    return f"{count} bytes"


# --- pages ---------------------------------------------------------------------------------


def _job(project: Project, import_id: str) -> ImportJob:
    job = get_session().scalar(select(ImportJob).where(
        ImportJob.id == import_id, ImportJob.project_id == project.id))
    if job is None:
        abort(404)
    return _looked_at([job])[0]


@bp.app_template_global("import_section")
def import_section(project: Project) -> dict:
    """What the partial settings/_import_form.html shows for a project: its last imports."""
    jobs = _looked_at(import_jobs.recent(get_session(), project.id, RECENT_IMPORTS))
    return {"imports": jobs, "max_size": human_size(current_app.config["IMPORT_MAX_BYTES"])}


def _import_page(project: Project, errors: list[str] | None = None, status: int = 200):
    return render_template("settings/import.html", section="projects", project=project,
                           import_errors=errors or []), status


@bp.get("/projects/<project_id>/imports")
@signin_required
def import_page(project_id: str):
    return _import_page(signed_in_project(project_id))


@bp.post("/projects/<project_id>/imports")
@signin_required
def import_upload(project_id: str):
    project = signed_in_project(project_id)
    form = ImportForm()
    if not form.validate():
        return _import_page(project, form.file.errors or ["Choose a CSV file to import."], 400)
    upload = form.file.data
    import_id = new_uuid()
    folder = _folder()
    try:
        size = import_jobs.save_upload(upload.stream, folder, import_id)
    except OSError:
        log.exception("could not keep an upload in %s", folder)
        return _import_page(project, ["The file could not be kept on the server for its "
                                      "import. Please try again in a little while."], 503)
    path = import_jobs.upload_path(folder, import_id)
    own_shape = _own_shape(path)
    db = get_session()
    try:
        begin_write(db)
        import_jobs.create(db, g.user.org_id, project.id, g.user.id, g.user.email,
                           upload.filename, size, import_id, import_jobs.process_owner(),
                           import_jobs.QUEUED if own_shape else import_jobs.CHOOSING)
        db.commit()
    except BaseException:
        db.rollback()
        path.unlink(missing_ok=True)
        raise
    if not own_shape:  # its columns are chosen first (import_columns)
        return redirect(url_for("settings.import_columns", project_id=project.id,
                                import_id=import_id), 303)
    return _started(project, import_id)


def _own_shape(path: Path) -> bool:
    """Whether the file goes straight to its import: it has the import's own shape, or it
    cannot be read at all (its import then fails with the sentence that says why). A file
    of any other shape has its columns chosen first."""
    with open(path, "rb") as binary:
        if imports.in_own_shape(binary):
            return True
        if import_sources.sheet_names(binary):
            return False  # a workbook: its sheet is chosen with its columns
        try:
            import_sources.read_source(binary, any_header=True)
        except imports.NotCsv:
            return True
        return False


def _started(project: Project, import_id: str):
    jobs = runner()
    jobs.submit(import_id)
    # A small file is imported while the person waits: its report is the next page.
    jobs.wait(import_id, float(current_app.config.get("IMPORT_WAIT_SECONDS", 2.0)))
    return redirect(url_for("settings.import_report", project_id=project.id,
                            import_id=import_id), 303)


# --- the columns of a file of another shape ------------------------------------------------


PREVIEW_ROWS = 5


def _remembered(project: Project) -> Choice:
    try:
        fields = json.loads(project.import_choice or "{}")
        return Choice(**{**fields, "tags_columns": tuple(fields.get("tags_columns", ()))})
    except (TypeError, ValueError):
        return Choice()


def _for_header(choice: Choice, header: list[str]) -> Choice:
    """The remembered choice without the columns this file does not have, and without a
    language or country for every row where this file has a column of it (an Ahrefs list
    after a Search Console export: its countries, not the one given for every row)."""
    names = {import_sources.folded_name(name) for name in header}

    def kept(name: str | None) -> str | None:
        return name if name and import_sources.folded_name(name) in names else None

    # ";" always separates tags: remembered, it would only stop the guess of another.
    separator = None if choice.tags_separator == ";" else choice.tags_separator
    columns = replace(choice, query_column=kept(choice.query_column),
                      language_column=kept(choice.language_column), language=None,
                      country_column=kept(choice.country_column), country=None,
                      tags_columns=tuple(n for n in choice.tags_columns if kept(n)),
                      tags_separator=separator, sheet=None)
    found = import_sources.guess(header, columns)
    return replace(columns, language=None if found.language_column else choice.language,
                   country=None if found.country_column else choice.country)


def _choice_from_form(form) -> Choice:
    def text(name: str) -> str | None:
        return (form.get(name) or "").strip()[:200] or None

    return Choice(query_column=text("query_column"), language_column=text("language_column"),
                  language=text("language"), country_column=text("country_column"),
                  country=text("country"),
                  tags_columns=tuple(dict.fromkeys(
                      value.strip()[:200] for value in form.getlist("tags_columns")
                      if value.strip())),
                  tags_separator=(form.get("tags_separator") or "")[:5] or None)


@bp.route("/projects/<project_id>/imports/<import_id>/columns", methods=["GET", "POST"])
@signin_required
def import_columns(project_id: str, import_id: str):
    project = signed_in_project(project_id)
    job = _job(project, import_id)
    if job.state != import_jobs.CHOOSING:
        return redirect(url_for("settings.import_report", project_id=project.id,
                                import_id=job.id), 303)
    path = import_jobs.upload_path(_folder(), job.id)
    posted = request.method == "POST"
    create_tags = posted and request.form.get("create_tags") == "1"
    header, preview, problems, checked, described, choice = [], [], [], None, "", Choice()
    sheets: list[str] = []
    try:
        with open(path, "rb") as binary:
            sheets = import_sources.sheet_names(binary)
            sheet = request.form.get("sheet") if posted else None
            sheet = sheet if sheet in sheets else None
            header = import_sources.read_source(binary, Choice(sheet=sheet),
                                                any_header=True).header
    except (imports.NotCsv, OSError) as error:
        problems.append(str(error) if isinstance(error, imports.NotCsv)
                        else "The file is no longer here: upload it again.")
    to_choose: list[str] = []
    if header:
        given = replace(_choice_from_form(request.form) if posted else _for_header(
            _remembered(project), header), sheet=sheet)
        try:
            with open(path, "rb") as binary:
                shaping = import_sources.Shaping(binary, given, any_header=True)
                preview = shaping.first(PREVIEW_ROWS)
            choice = shaping.choice
            to_choose = shaping.problems
            if not to_choose:
                described = import_sources.describe(choice, shaping.source)
        except imports.NotCsv as error:
            choice = import_sources.guess(header, given)
            problems.append(str(error))
    if posted:
        problems += to_choose
        to_choose = []
    if posted and not problems:
        _remember(project, choice)
        if request.form.get("action") == "import":
            return _import_chosen(project, job, path, choice, create_tags)
        checked = _check(project, path, choice, create_tags)
    status = 422 if posted and problems else 200
    return render_template(
        "settings/import_columns.html", section="projects", project=project, job=job,
        header=[name for name in header if name.strip()],  # the columns with a name
        choice=choice, preview=preview, problems=problems, checked=checked,
        described=described, to_choose=to_choose, create_tags=create_tags,
        sheets=sheets), status


def _remember(project: Project, choice: Choice) -> None:
    db = get_session()
    begin_write(db)
    fields = asdict(replace(choice, sheet=None))
    fields["tags_columns"] = list(choice.tags_columns)
    db.get(Project, project.id).import_choice = json.dumps(fields, ensure_ascii=False)
    db.commit()


def _shaped(path: Path, choice: Choice) -> Path:
    """The file written in the import's own shape, beside it."""
    shaped = path.with_name(path.name + ".checked")
    with open(path, "rb") as binary, open(shaped, "w", encoding="utf-8", newline="") as out:
        import_sources.Shaping(binary, choice).write(out)
    return shaped


def _check(project: Project, path: Path, choice: Choice, create_tags: bool) -> dict:
    """What importing the file would do, as sentences; nothing is changed."""
    db = get_session()
    shaped = _shaped(path, choice)
    try:
        with open(shaped, encoding="utf-8", newline="") as text:
            named = import_sources.tags_named(text)
        lacking = import_sources.lacking_tags(db, project.id, named)
        missing = imports.MissingTags(imports.project_tags(db, project.id))
        first: list[str] = []

        class Sink(imports.Sink):
            def done(self, batch, counts):
                missing.add(batch.rejected)
                first.extend(imports.rejected_line(row)
                             for row in batch.rejected[:REJECTED_SHOWN - len(first)])

        with open(shaped, "rb") as binary:
            counts = imports.check_only(db, project.id, binary,
                                        lacking if create_tags else (), Sink())
    finally:
        shaped.unlink(missing_ok=True)
    return {"summary": (f"{counts.added:,} will be added, {counts.present:,} already present, "
                        f"{counts.rejected:,} rejected."),
            "created": lacking if create_tags else [], "missing": missing.sentence(),
            "rejected": first}


REJECTED_SHOWN = 5


def _import_chosen(project: Project, job: ImportJob, path: Path, choice: Choice,
                   create_tags: bool):
    shaped = _shaped(path, choice)
    os.replace(shaped, path)
    db = get_session()
    if create_tags:
        with open(path, encoding="utf-8", newline="") as text:
            named = import_sources.tags_named(text)
        begin_write(db)
        import_sources.create_missing_tags(db, project.id, named)
        db.commit()
    begin_write(db)
    db.execute(update(ImportJob).where(ImportJob.id == job.id,
                                       ImportJob.state == import_jobs.CHOOSING)
               .values(state=import_jobs.QUEUED, owner=import_jobs.process_owner(),
                       file_size=path.stat().st_size, created_at=utcnow()))
    db.commit()
    return _started(project, job.id)


def progress_text(job: ImportJob) -> str:
    if job.state == import_jobs.QUEUED:
        return "Waiting to start…"
    # One figure of how far it is (the percentage); the rest are counts, never a second
    # fraction that could disagree with it.
    if job.active and job.reading:
        return (f"{job.percent}% done: reading the file ({job.rows:,} rows so far, "
                f"{job.rejected:,} rejected).")
    if job.active:
        return f"{job.percent}% done: adding the rows ({job.summary} so far)."
    return f"{job.summary}."


@bp.get("/projects/<project_id>/imports/<import_id>")
@signin_required
def import_report(project_id: str, import_id: str):
    project = signed_in_project(project_id)
    job = _job(project, import_id)
    if job.state == import_jobs.CHOOSING:
        return redirect(url_for("settings.import_columns", project_id=project.id,
                                import_id=job.id), 303)
    rejected = [] if job.active else import_jobs.rejections(get_session(), job.id,
                                                            REJECTED_ON_PAGE)
    return render_template("settings/import_report.html", section="projects", project=project,
                           job=job, rejected=rejected, progress=progress_text(job),
                           shown=REJECTED_ON_PAGE)


@bp.get("/projects/<project_id>/imports/<import_id>/progress")
@signin_required
def import_progress(project_id: str, import_id: str):
    job = _job(signed_in_project(project_id), import_id)
    return jsonify({
        "state": job.state, "done": not job.active, "percent": job.percent,
        "bytesRead": job.bytes_read, "fileSize": job.file_size, "rows": job.rows,
        "added": job.added, "present": job.present, "rejected": job.rejected,
        "taggedByRules": job.tagged_by_rules, "text": progress_text(job),
    })


@bp.get("/projects/<project_id>/imports/<import_id>/rejected.csv")
@signin_required
def import_rejected(project_id: str, import_id: str):
    job = _job(signed_in_project(project_id), import_id)
    sessions = current_app.extensions["tagdesk_sessionmaker"]

    def lines():
        db = sessions()
        try:
            yield from imports.rejected_csv(import_jobs.all_rejections(db, job.id))
        finally:
            db.close()

    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", job.file_name.rsplit(".", 1)[0]).strip("-.")
    response = Response(lines(), mimetype="text/csv")
    response.headers["Content-Disposition"] = (
        f'attachment; filename="rejected-rows-{stem or "import"}.csv"')
    return response
