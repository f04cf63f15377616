"""`flask --app service <command>`: each creating command prints the new id or key alone on
the last line of standard output; the listing commands print one `id<TAB>name` a line.

ORG, wherever a command takes one, is the organization's id or its name (a name that two
organizations share is refused, with their ids to use instead)."""

from __future__ import annotations

import io
import os
import sys
import tempfile
from dataclasses import replace

import click
from flask import Flask, current_app
from flask.cli import with_appcontext
from sqlalchemy import select

from weblib.collector import collect_young_less_often

from . import schema
from .engine import pieces
from .imports import import_sources, imports, language_detection
from .learning import learner, queue
from .org import accounts, admin, audit
from .store.db import write_scope
from .store.models import Organization, Project


def _engine():
    return current_app.extensions["tagdesk_engine"]


def _run(operation):
    """Run an admin operation in a transaction; AdminError becomes a clean CLI error."""
    try:
        with write_scope(current_app) as session:
            return operation(session)
    except admin.AdminError as error:
        raise click.ClickException(str(error)) from None


@click.command("init-db")
@with_appcontext
def init_db():
    """Create or upgrade the schema."""
    engine = _engine()
    if not schema.upgrade(engine):
        click.echo("Database is up to date.")
        return
    # A migration may have rebuilt a table (0011 does): fresh statistics for the planner, and
    # on PostgreSQL its pages marked all-visible once, not by each page's first reader.
    schema.analyze(engine)
    click.echo("Database is up to date (migrated, statistics refreshed).")


@click.command("create-org")
@with_appcontext
@click.argument("name")
def create_org(name):
    """Create an organization; prints its id."""
    click.echo(_run(lambda s: admin.create_org(s, name)))


def _echo_ids_and_names(model, conditions=lambda session: ()) -> None:
    """Print id<TAB>name of the rows of `model` (Organization, Project) that meet
    `conditions(session)`, one a line, by name."""
    rows = _run(lambda s: s.execute(select(model.id, model.name).where(*conditions(s))
                                    .order_by(model.name, model.id)).all())
    for row_id, name in rows:
        click.echo(f"{row_id}\t{name}")


@click.command("list-orgs")
@with_appcontext
def list_orgs():
    """List the organizations: id<TAB>name, one a line, by name."""
    _echo_ids_and_names(Organization)


@click.command("list-projects")
@with_appcontext
@click.argument("org")
def list_projects(org):
    """List an organization's projects (ORG: its id or name): id<TAB>name, one a line."""
    _echo_ids_and_names(Project, lambda s: [Project.org_id == admin.find_org(s, org)])


@click.command("create-key")
@with_appcontext
@click.argument("org")
@click.option("--project", "project_id", default=None, help="Limit the key to one project.")
@click.option("--name", default="", help="A name to recognise the key by.")
def create_key(org, project_id, name):
    """Create an API key for ORG (its id or name); prints the key (shown this once)."""
    prefix = current_app.config["KEY_PREFIX"]

    def create(session):
        key = admin.create_key(session, admin.find_org(session, org), prefix, project_id, name)
        audit.record(session, audit.key_by_value(session, key), audit.GENERATED)  # by: CLI
        return key

    key = _run(create)
    click.echo("Store this key now; it cannot be shown again.", err=True)
    click.echo(key)


@click.command("revoke-key")
@with_appcontext
@click.argument("key")
def revoke_key(key):
    """Revoke a key: it stops working at once."""
    def revoke(session):
        found = audit.key_by_value(session, key)
        was_active = found is not None and found.revoked_at is None
        admin.revoke_key(session, key)
        if was_active:
            audit.record(session, found, audit.REVOKED)  # by: the command line

    _run(revoke)
    click.echo("Key revoked.")


def _stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


@click.command("create-user")
@with_appcontext
@click.argument("org")
@click.argument("email")
def create_user(org, email):
    """Create a person who may sign in to the settings of ORG (its id or name); prints the
    user id.

    The password is asked for (twice, hidden) at a terminal, or read as the first line of
    standard input otherwise (`... create-user ORG EMAIL < password-file`)."""
    if _stdin_is_terminal():
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    click.echo(_run(lambda s: accounts.create_user(s, admin.find_org(s, org), email, password)))


@click.command("create-project")
@with_appcontext
@click.argument("org")
@click.argument("name")
def create_project(org, name):
    """Create a project in ORG (its id or name); prints its id."""
    click.echo(_run(lambda s: admin.create_project(s, admin.find_org(s, org), name)))


@click.command("create-tag")
@with_appcontext
@click.argument("project_id")
@click.argument("name")
@click.argument("color")
def create_tag(project_id, name, color):
    """Create a tag (COLOR is #RRGGBB); prints its id."""
    click.echo(_run(lambda s: _create_tag(s, project_id, name, color)))


def _create_tag(session, project_id: str, name: str, color: str) -> int:
    tag_id = admin.create_tag(session, project_id, name, color)
    project = admin.project_by_id(session, project_id)
    audit.record_tag_change(session, project.org_id, "tag.created", name,
                            f"In “{project.name}”, colour {color.lower()}.")
    return tag_id


@click.command("import-queries")
@with_appcontext
@click.argument("project_id")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--query-column", metavar="NAME", help="The column of the queries.")
@click.option("--language-column", metavar="NAME", help="The column of the languages.")
@click.option("--language", metavar="CODE", help="One language for every row.")
@click.option("--country-column", metavar="NAME", help="The column of the countries.")
@click.option("--country", metavar="CODE", help="One country for every row.")
@click.option("--tags-column", metavar="NAME", multiple=True,
              help="A column of tags (repeatable).")
@click.option("--tags-separator", metavar="SEP",
              help="What separates the tags of a cell (';' always does); guessed from the "
                   "file's first rows if not given.")
@click.option("--sheet", metavar="NAME",
              help="The sheet of a workbook (if none: the first whose rows name a query "
                   "column).")
@click.option("--detect-language", is_flag=True,
              help="Detect the language of each query (a file with no language column); "
                   "--language for those it cannot tell.")
@click.option("--detect-languages", metavar="CODES",
              help="The languages to detect among, such as de,fr,en (implies "
                   "--detect-language; if not given: the project's languages so far and "
                   "--language).")
@click.option("--clicks-column", metavar="NAME", help="The column of the clicks.")
@click.option("--impressions-column", metavar="NAME", help="The column of the impressions.")
@click.option("--ctr-column", metavar="NAME", help="The column of the CTR.")
@click.option("--position-column", metavar="NAME", help="The column of the positions.")
@click.option("--volume-column", metavar="NAME", help="The column of the search volumes.")
@click.option("--cpc-column", metavar="NAME",
              help="The column of the CPC (one of Keyword Planner's bids: their midpoint).")
@click.option("--difficulty-column", metavar="NAME",
              help="The column of the keyword difficulty. Each number's column is guessed "
                   "from the header when its option is left out; '' for none.")
@click.option("--keep-numbers", is_flag=True,
              help="Leave the numbers of queries already present as they are.")
@click.option("--create-tags", is_flag=True, help="Create the tags the project lacks.")
@click.option("--dry-run", is_flag=True, help="Check the file; change nothing.")
def import_queries(project_id, file, query_column, language_column, language, country_column,
                   country, tags_column, tags_separator, sheet, detect_language,
                   detect_languages, clicks_column, impressions_column, ctr_column,
                   position_column, volume_column, cpc_column, difficulty_column,
                   keep_numbers, create_tags, dry_run):
    """Import the queries of a CSV or TSV file or an Excel workbook: the import's own shape
    (query,language,country,tags with tags joined by ';'), or any other whose columns are
    guessed from its header or named by the options (Search Console, Keyword Planner,
    Semrush, Ahrefs exports). Prints the count added; rejected rows are listed with their
    line and reason, and the others imported: the exit status is then 1."""
    collect_young_less_often()  # an import's batches die young (weblib/collector.py)
    choice = import_sources.Choice(query_column, language_column, language, country_column,
                                   country, tuple(tags_column), tags_separator, sheet,
                                   detect_language or bool(detect_languages),
                                   tuple((detect_languages or "").split(",")),
                                   tuple((name, column) for name, column in (
                                       ("clicks", clicks_column),
                                       ("impressions", impressions_column),
                                       ("ctr", ctr_column), ("position", position_column),
                                       ("volume", volume_column), ("cpc", cpc_column),
                                       ("difficulty", difficulty_column))
                                       if column is not None))
    if detect_language and not choice.detect_languages:
        in_use = _run(lambda session: pieces.languages(session.connection(), project_id))
        choice = replace(choice, detect_languages=language_detection.default_codes(
            in_use, import_sources.language_code(language or "")))
    with open(file, "rb") as given, tempfile.TemporaryFile("w+", encoding="utf-8",
                                                           newline="") as shaped:
        binary, title_lines, cells = _in_own_shape(given, choice, shaped)
        # The readers of the file's numbers (its bids', then its own shape's, added as read).
        numbers = list(cells.columns) if cells else []
        named = {}
        if create_tags:  # read once more only then: a file of a million rows takes seconds
            text = io.TextIOWrapper(binary, encoding="utf-8-sig", newline="")
            named = import_sources.tags_named(text)
            text.detach()
        counts, missing = _run(lambda session: _import(
            session, project_id, binary, file, named, create_tags, dry_run, title_lines,
            not keep_numbers, numbers, cells.currency if cells else None))
    if not dry_run:
        schema.analyze(_engine())
        if counts.added:  # scored against the project's suggestions model, if it has one
            learner.of_app(current_app).score_new(project_id)
    prefix = "Checked, nothing changed: " if dry_run else ""
    said = imports.summary(counts)
    if dry_run:
        said = said.replace(" added,", " to add,").replace("numbers updated)",
                                                           "numbers to update)")
    click.echo(prefix + said + ".", err=True)
    if changed_tags := imports.tag_changes_sentence(counts):
        click.echo(changed_tags, err=True)
    if missing:
        click.echo(missing, err=True)
    for column in cells.named(numbers) if cells else numbers:
        for sentence in column.sentences():
            click.echo(sentence, err=True)
    if not dry_run and counts.rejected and not counts.added and not counts.present:
        click.echo("Nothing was imported: every row was rejected.", err=True)
    click.echo(counts.added)
    if counts.rejected:
        sys.exit(1)


def _in_own_shape(given, choice, shaped
                  ) -> tuple[io.BufferedIOBase, int, import_sources.NumberCells | None]:
    """The file as the import reads it, its title lines (Shaping.title_lines) and its number
    cells (NumberCells: the columns they come from, the bids read): as it is when it has the
    import's own shape and no column was named; else written in that shape to `shaped` (what
    was read is said, and the separators of its tags cells where they disagree)."""
    if choice == import_sources.Choice() and imports.in_own_shape(given):
        return given, 0, None
    try:
        shaping = import_sources.normalized(given, choice, shaped)
    except imports.NotCsv as error:
        raise click.ClickException(f"Nothing was imported: {error}") from None
    click.echo(import_sources.describe(shaping.choice, shaping.source,
                                       shaping.numbers.described), err=True)
    if separators := shaping.tag_separators.sentence():
        click.echo(separators, err=True)
    if shaping.detection is not None:
        click.echo(shaping.detection.tally.sentence(), err=True)
    shaped.flush()
    return (open(shaped.fileno(), "rb", closefd=False), shaping.title_lines,  # noqa: SIM115
            shaping.numbers)


def _import(session, project_id, binary, file, named, create_tags, dry_run, title_lines,
            update_numbers=True, numbers=None, currency=None):
    class Report(imports.Sink):
        def __init__(self):
            self.missing = imports.MissingTags(imports.project_tags(session, project_id))

        def done(self, batch, counts):
            self.missing.add(batch.rejected)
            for row in batch.rejected:
                click.echo(imports.rejected_line(row), err=True)

    if admin.project_by_id(session, project_id) is None:
        raise admin.AdminError(f"No project {project_id}.")
    lacking = import_sources.lacking_tags(session, project_id, named)
    if lacking:
        if dry_run:
            click.echo("Would create the tags " + ", ".join(lacking) + ".", err=True)
        else:
            made = import_sources.create_missing_tags(
                session, project_id, named, audit.ByImport(os.path.basename(file)))
            session.commit()
            click.echo("Created the tags " + ", ".join(made) + ".", err=True)
    report = Report()
    try:
        if dry_run:
            counts = imports.check_only(session, project_id, binary,
                                        lacking if create_tags else (), report,
                                        title_lines=title_lines,
                                        update_numbers=update_numbers, numbers=numbers)
        else:
            counts = imports.import_file(session, project_id, binary, report,
                                         title_lines=title_lines,
                                         file_name=os.path.basename(file),
                                         update_numbers=update_numbers, numbers=numbers)
    except imports.NotCsv as error:
        raise admin.AdminError(f"Nothing was imported: {error}") from None
    if not dry_run:
        if import_sources.keep_currency(session, project_id, currency):
            session.commit()
            click.echo(f"The project's CPC is in {currency}, as the file says.", err=True)
        project = admin.project_by_id(session, project_id)
        audit.record_change(session, project.org_id, "import.finished", project.name,
                            " ".join(filter(None, [
                                f"{os.path.basename(file)}: {imports.summary(counts)}.",
                                imports.tag_changes_sentence(counts)])))
    return counts, report.missing.sentence()


@click.command("set-limits")
@with_appcontext
@click.argument("org")
@click.argument("per_second", type=click.IntRange(min=1))
@click.argument("per_minute", type=click.IntRange(min=1))
@click.argument("per_hour", type=click.IntRange(min=1))
def set_limits(org, per_second, per_minute, per_hour):
    """Set the custom rate limits of ORG (its id or name)."""
    _run(lambda s: admin.set_limits(s, admin.find_org(s, org), per_second, per_minute,
                                    per_hour))
    click.echo(f"Limits set: {per_second}/s, {per_minute}/min, {per_hour}/h.")


@click.command("seed-demo")
@with_appcontext
@click.option("--queries", "count", default=5000, show_default=True,
              type=click.IntRange(min=0, max=5_000_000), help="Queries in the first project.")
def seed_demo(count):
    """Create the demo organization with projects, tags, queries and an administrator; prints
    the administrator's email and password (on standard error) and the demo key."""
    from .demo import demo

    schema.upgrade(_engine())
    key = demo.seed(current_app, count, progress=lambda m: click.echo(m, err=True))
    administrator = demo.seed_administrator(current_app, key)
    if administrator:
        email, password = administrator
        click.echo(f"Demo administrator (settings): {email}, password: {password}", err=True)
    click.echo(key)


@click.command("suggestions-worker")
@click.option("--burst", is_flag=True, help="Stop once the queue is empty.")
@click.option("--name", default=None, help="The worker's name in RQ (default: random).")
@with_appcontext
def suggestions_worker(burst: bool, name: str | None) -> None:
    """Learn and score suggestions from the Redis queue (TAGDESK_SUGGESTIONS_QUEUE)."""
    config = current_app.config
    if not config.get("SUGGESTIONS_QUEUE"):
        raise click.UsageError(
            "The worker runs the suggestions' jobs queued in Redis: set "
            "TAGDESK_SUGGESTIONS_QUEUE (as for the service). Without it the service runs "
            "them itself.")
    collect_young_less_often()
    learning = learner.of_app(current_app)
    click.echo(f"Tagdesk suggestions worker: queue {learning.queue.name!r}", err=True)
    queue.work(learning.run_job, _engine(), config["SUGGESTIONS_QUEUE"], learning.queue.name,
               burst=burst, name=name)


def register(app: Flask) -> None:
    for command in (init_db, create_org, list_orgs, list_projects, create_key, revoke_key,
                    create_user, create_project, create_tag, import_queries, set_limits,
                    seed_demo, suggestions_worker):
        app.cli.add_command(command)
