"""Settings → a project → Import queries: upload a CSV file, follow the import's progress,
read its report and download the rows it rejected.

Every import runs as a job (service/imports/import_jobs.py) in a thread of this process; the upload
waits a moment for it, so a small file's report is the first page shown, and a large one's
page shows a progress bar (settings.js polls `…/progress`) that survives a reload. The section
of a project's page is the partial settings/_import_form.html (`project` in its context).

A file of another shape has its Columns page first. "Check the file" runs as a job of the same
threads (import_jobs.run_check) and is waited for the same moment, so a small file's result is
on the page that follows; a large one's page shows its progress bar and Cancel until the
result replaces them. Uploads left there are swept after IMPORT_KEEP_HOURS (24) by whoever
looks at imports next (`_looked_at`), at most every SWEEP_SECONDS in a process.

The service accepts request bodies of 1 MiB (config MAX_CONTENT_LENGTH); the upload alone
accepts IMPORT_MAX_BYTES (TAGDESK_IMPORT_MAX_BYTES, 512 MiB by default), and only from a
signed-in session.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import time
from dataclasses import replace
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
from sqlalchemy import event, select
from werkzeug.exceptions import RequestEntityTooLarge

from ..engine import pieces
from ..engine.numbers import BY_NAME as NUMBERS_BY_NAME
from ..engine.numbers import NAMES as NUMBER_NAMES
from ..engine.numbers import NUMBERS
from ..imports import import_jobs, import_sources, imports, language_detection
from ..imports.import_jobs import Chosen, ImportJob
from ..imports.import_sources import Choice
from ..learning import learner
from ..org import audit
from ..store.db import begin_write, get_session
from ..store.models import Project, new_uuid
from . import import_memory, web
from .projects import signed_in_project
from .views import bp, holds_a_session, load_user, signin_required

log = logging.getLogger(__name__)

RECENT_IMPORTS = 5
REJECTED_ON_PAGE = 100
UPLOAD_ENDPOINT = "settings.import_upload"
SWEEP_SECONDS = 600.0  # a process sweeps old uploads at most this often

_runner_lock = threading.Lock()


NO_FILE = "Choose a file to import: CSV, TSV or an Excel workbook."


class ImportForm(FlaskForm):
    file = FileField("File", validators=[FileRequired(NO_FILE)])


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
                    app.extensions["tagdesk_sessionmaker"], _folder(),
                    functools.partial(ended, learner.of_app(app)),
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


def ended(learning: learner.Learner, db, job: ImportJob, project_name: str) -> None:
    """record_end, and once the import has committed, its queries scored against the
    project's suggestions model (service/learning/learner.py)."""
    record_end(db, job, project_name)
    if job.state == import_jobs.FINISHED and job.added:
        project_id = job.project_id
        event.listen(db, "after_commit",
                     lambda _session: learning.after_import(project_id), once=True)


def _stale_seconds() -> float:
    return float(current_app.config.get("IMPORT_STALE_SECONDS") or import_jobs.STALE_SECONDS)


def _looked_at(jobs: list[ImportJob]) -> list[ImportJob]:
    """The jobs, with any whose process is gone marked interrupted first (a check, given
    up); old uploads swept when it is time (and left out)."""
    ids = [job.id for job in jobs]
    swept = _sweep_when_due()
    jobs = [job for job, job_id in zip(jobs, ids, strict=True) if job_id not in swept]
    if any(job.busy for job in jobs):
        import_jobs.interrupt_dead(get_session(), jobs, _folder(), _stale_seconds(),
                                   on_end=record_end)
    return jobs


def _keep_hours() -> float:
    return float(current_app.config.get("IMPORT_KEEP_HOURS") or import_jobs.KEEP_HOURS)


def _sweep_when_due() -> set[str]:
    """Uploads left on their Columns page longer than IMPORT_KEEP_HOURS, and their files,
    removed (import_jobs.sweep): on the first look at imports after this process started,
    then at most every SWEEP_SECONDS. The ids of the jobs removed."""
    app = current_app._get_current_object()
    now = time.monotonic()
    every = float(app.config.get("IMPORT_SWEEP_SECONDS", SWEEP_SECONDS))
    with _runner_lock:
        last = app.extensions.get("tagdesk_imports_swept")
        if last is not None and now - last < every:
            return set()
        app.extensions["tagdesk_imports_swept"] = now
    db = get_session()
    try:
        return set(import_jobs.sweep(db, _folder(), _keep_hours() * 3600))
    except Exception:  # the page is shown all the same; the next sweep tries again
        db.rollback()
        log.exception("old uploads not swept")
        return set()


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


def _to_page(page: str, project: Project, import_id: str):
    """The 303 to an import's page: "settings.import_columns" or "settings.import_report"."""
    return redirect(url_for(page, project_id=project.id, import_id=import_id), 303)


def _job(project_id: str, import_id: str) -> ImportJob:
    _project, job, gone = _job_or_gone(project_id, import_id)
    if gone is not None:
        abort(404)
    return job


def _job_or_gone(project_id: str, import_id: str):
    """(the signed-in person's project, its import, None), or (the project, None, the page of
    an upload that is no longer here — swept, left on its Columns page too long — to return
    instead)."""
    project = signed_in_project(project_id)
    job = get_session().scalar(select(ImportJob).where(
        ImportJob.id == import_id, ImportJob.project_id == project.id))
    found = _looked_at([job] if job is not None else [])
    if found:
        return project, found[0], None
    hours = _keep_hours()
    return project, None, (render_template(
        "settings/error.html", heading="This upload is no longer here", status=404,
        sentence=f"A file that is not imported is removed {hours:g} hours after it was "
                 "uploaded or last checked, and this one has been (or the address is not one "
                 "of an upload). Upload the file again to import it.",
        link_url=url_for("settings.import_page", project_id=project.id),
        link_text="Upload a file"), 404)


def _import_of(view):
    """A page of one import, called as `view(project, job)` (`_job_or_gone`); the page of an
    upload that is no longer here instead, where it is not."""
    @functools.wraps(view)
    def wrapped(project_id: str, import_id: str):
        project, job, gone = _job_or_gone(project_id, import_id)
        if gone is not None:
            return gone
        return view(project, job)

    return wrapped


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
        return _import_page(project, form.file.errors or [NO_FILE], 400)
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
        return _to_page("settings.import_columns", project, import_id)
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
    jobs.wait(import_id, _wait_seconds())
    return _to_page("settings.import_report", project, import_id)


# --- the columns of a file of another shape ------------------------------------------------


PREVIEW_ROWS = 5


# The separators the Columns page offers for the tags (any other text stays possible on the
# command line, and is offered when it is the one chosen).
SEPARATOR_OPTIONS = (("", "Guessed from the file"), (";", "; (semicolon) only"),
                     (",", ", (comma)"), ("|", "| (vertical bar)"))


def separator_options(chosen: str | None) -> list[tuple[str, str]]:
    """The tags separator's options: SEPARATOR_OPTIONS, and the one chosen if it is another."""
    options = list(SEPARATOR_OPTIONS)
    if chosen and chosen not in dict(options):
        options.append((chosen, f"“{chosen}”"))
    return options


def _choice_from_form(form) -> Choice:
    def text(name: str) -> str | None:
        return (form.get(name) or "").strip()[:200] or None

    return Choice(query_column=text("query_column"), language_column=text("language_column"),
                  language=text("language"), country_column=text("country_column"),
                  country=text("country"),
                  tags_columns=tuple(dict.fromkeys(
                      value.strip()[:200] for value in form.getlist("tags_columns")
                      if value.strip())),
                  tags_separator=(form.get("tags_separator") or "")[:5] or None,
                  detect_language=form.get("detect_language") == "1",
                  detect_languages=tuple(value[:5] for value in form.getlist(
                      "detect_languages")[:200]),
                  # A number's select posted empty: no column (one not posted is guessed).
                  numbers=tuple((name, (form.get(f"{name}_column") or "").strip()[:200])
                                for name in NUMBER_NAMES if f"{name}_column" in form))


def _update_numbers(form) -> bool:
    """Whether present queries take the file's numbers: the box, where the form offered it
    (on by default)."""
    return form.get("update_numbers") == "1" if "update_numbers_offered" in form else True


def _detection(project: Project, given: Choice) -> tuple[Choice, list[tuple[str, str]]]:
    """The choice with the languages detected among filled in where none are ticked (the
    project's languages so far, and the language for every row), and the languages the page
    offers to tick."""
    db = get_session()
    in_use = pieces.languages(db.connection(), project.id)
    db.rollback()
    if given.detect_language and not given.detect_languages:
        given = replace(given, detect_languages=language_detection.default_codes(
            in_use, import_sources.language_code(given.language or "")))
    return given, language_detection.offered([*in_use, *given.detect_languages])


@bp.route("/projects/<project_id>/imports/<import_id>/columns", methods=["GET", "POST"])
@signin_required
@_import_of
def import_columns(project: Project, job: ImportJob):
    if job.state not in (import_jobs.CHOOSING, import_jobs.CHECKING):
        return _to_page("settings.import_report", project, job.id)
    path = import_jobs.upload_path(_folder(), job.id)
    posted = request.method == "POST"
    # Shown again: the columns of the check that runs or ran last (or of the import's start).
    stored = None if posted else job.chosen
    create_tags = request.form.get("create_tags") == "1" if posted else \
        bool(stored and stored.create_tags)
    update_numbers = _update_numbers(request.form) if posted else \
        (stored.update_numbers if stored else True)
    header, preview, problems, described, choice = [], [], [], "", Choice()
    preview_numbers: list[dict] = []
    sheets: list[str] = []
    try:
        with open(path, "rb") as binary:
            sheets = import_sources.sheet_names(binary)
            sheet = request.form.get("sheet") if posted else stored and stored.choice.sheet
            sheet = sheet if sheet in sheets else None
            header = import_sources.read_source(binary, Choice(sheet=sheet),
                                                any_header=True).header
    except (imports.NotCsv, OSError) as error:
        problems.append(str(error) if isinstance(error, imports.NotCsv)
                        else "The file is no longer here: upload it again.")
    to_choose: list[str] = []
    detect_offered: list[tuple[str, str]] = []
    if header:
        if posted:
            given = replace(_choice_from_form(request.form), sheet=sheet)
        elif stored is not None:
            given = replace(stored.choice, sheet=sheet)
        else:
            given = replace(import_memory.remembered(project, header), sheet=sheet)
        given, detect_offered = _detection(project, given)
        try:
            with open(path, "rb") as binary:
                shaping = import_sources.Shaping(binary, given, any_header=True)
                preview = shaping.first(PREVIEW_ROWS, numbers=True)
            choice = shaping.choice
            preview_numbers = [{"heading": NUMBERS_BY_NAME[name].label, "class": "col-count"}
                               for name in shaping.numbers.names]
            numbers_read = shaping.numbers.described
            to_choose = shaping.problems
            if not to_choose:
                described = import_sources.describe(choice, shaping.source, numbers_read)
        except imports.NotCsv as error:
            choice = import_sources.guess(header, given)
            problems.append(str(error))
    if posted:
        problems += to_choose
        to_choose = []
    if posted and not problems:
        import_memory.remember(project, header, choice)
        chosen = Chosen(choice, create_tags, update_numbers)
        if request.form.get("action") == "import":
            return _import_chosen(project, job, chosen)
        return _check_started(project, job, chosen)
    status = 422 if posted and problems else 200
    return render_template(
        "settings/import_columns.html", section="projects", project=project, job=job,
        header=[name for name in header if name.strip()],  # the columns with a name
        choice=choice, preview=preview, problems=problems,
        checked=None if posted else job.check_result, progress=progress_text(job),
        progress_every=_progress_every(),
        described=described, to_choose=to_choose, create_tags=create_tags,
        sheets=sheets, separators=separator_options(choice.tags_separator),
        detect_offered=detect_offered, preview_numbers=preview_numbers,
        numbers=[(number.name, number.label, choice.number_column(number.name) or "")
                 for number in NUMBERS],
        update_numbers=update_numbers), status


def _wait_seconds() -> float:
    return float(current_app.config.get("IMPORT_WAIT_SECONDS", 2.0))


def _progress_every() -> int:
    """How often, in milliseconds, a running import's or check's page asks for its progress:
    IMPORT_PROGRESS_SECONDS (service/config.py)."""
    return max(1, round(1000 * float(current_app.config["IMPORT_PROGRESS_SECONDS"])))


def _check_started(project: Project, job: ImportJob, chosen: Chosen):
    """Check the file as a job (replacing a check that runs), waited for a moment: a small
    file's result is on the Columns page that follows, a large one's progress bar."""
    columns = url_for("settings.import_columns", project_id=project.id, import_id=job.id)
    check_id = import_jobs.start_check(get_session(), job.id, chosen,
                                       import_jobs.process_owner())
    if check_id is None:  # its import started meanwhile
        return redirect(columns, 303)
    jobs = runner()
    jobs.submit_check(job.id, check_id)
    jobs.wait(check_id, _wait_seconds())
    return redirect(columns, 303)


@bp.post("/projects/<project_id>/imports/<import_id>/check/cancel")
@signin_required
@_import_of
def import_check_cancel(project: Project, job: ImportJob):
    import_jobs.cancel_check(get_session(), job.id)
    return _to_page("settings.import_columns", project, job.id)


def _import_chosen(project: Project, job: ImportJob, chosen: Chosen):
    """Queue the import with its columns (replacing a check that runs); the job writes the
    file in the import's own shape, creates the tags if asked, and imports it."""
    if not import_jobs.queue_chosen(get_session(), job.id, chosen, import_jobs.process_owner()):
        return _to_page("settings.import_report", project, job.id)
    return _started(project, job.id)


def progress_text(job: ImportJob) -> str:
    if job.state == import_jobs.QUEUED:
        return "Waiting to start…"
    if job.state == import_jobs.CHECKING:
        if not job.rows:
            return f"{job.percent}% done: reading the file in the columns chosen."
        return (f"{job.percent}% done: checking the rows ({job.rows:,} so far, "
                f"{job.rejected:,} rejected).")
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
@_import_of
def import_report(project: Project, job: ImportJob):
    if job.state in (import_jobs.CHOOSING, import_jobs.CHECKING):
        return _to_page("settings.import_columns", project, job.id)
    rejected = [] if job.active else import_jobs.rejections(get_session(), job.id,
                                                            REJECTED_ON_PAGE)
    return render_template("settings/import_report.html", section="projects", project=project,
                           job=job, rejected=rejected, progress=progress_text(job),
                           progress_every=_progress_every(), shown=REJECTED_ON_PAGE)


@bp.get("/projects/<project_id>/imports/<import_id>/progress")
@signin_required
def import_progress(project_id: str, import_id: str):
    job = _job(project_id, import_id)
    return jsonify({
        "state": job.state, "done": not job.busy, "percent": job.percent,
        # A check keeps its progress as a share of the file's size, not bytes read.
        "bytesRead": None if job.state == import_jobs.CHECKING else job.bytes_read,
        "fileSize": job.file_size, "rows": job.rows,
        "added": job.added, "present": job.present, "rejected": job.rejected,
        "blankLines": job.blank_lines, "taggedByRules": job.tagged_by_rules,
        "text": progress_text(job),
    })


@bp.get("/projects/<project_id>/imports/<import_id>/rejected.csv")
@signin_required
def import_rejected(project_id: str, import_id: str):
    job = _job(project_id, import_id)
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
