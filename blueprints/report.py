"""The report of a queries view: what each tag is worth — its queries, the sums of their
numbers and its share of the view's clicks (or volume, impressions, queries) — as a table, a
bar chart drawn on the server, and a CSV file. The address is the view's
(`/projects/<id>/report?<the queries page's parameters>&by=clicks`), so a report is shared by
its link.

One `queries/facets` call with `sums` per report (dashboard/report_table.py says how the tags'
counts stay within the view). Where the API sums no numbers there is no report: the queries
page shows no link to it and its address is a 404 with a sentence.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlencode

from flask import Blueprint, Response, render_template, request, url_for
from flask_login import login_required

from dashboard import (
    apiclient,
    errors,
    facets,
    filter_fields,
    number_columns,
    report_format,
    wording,
)
from dashboard.current_project import load_project
from dashboard.filter_fields import Ignored, quoted
from dashboard.report_chart import chart
from dashboard.report_table import (
    DEFAULT_ORDER,
    QUERIES,
    SHARE_COLUMN,
    TAG_COLUMN,
    Order,
    Report,
    build,
    chosen_share,
    facets_filter,
    in_order,
    share_choices,
    table_order,
)
from dashboard.viewstate import QueryView, ignored_sentence
from queryapi import Project, QueryFilters
from weblib.spreadsheet_cells import csv_line, guard_cell
from weblib.tag_lists import join_tag_names

bp = Blueprint("report", __name__)

BY, ORDER = "by", "order"
NO_REPORT = ("This deployment's service does not sum the numbers of queries, so there is no "
             "report: its queries page lists the queries and their tags.")


def offers_report() -> bool:
    """Whether the API sums numbers by tag (facets with `sums`)."""
    found = apiclient.capabilities()
    return found.tag_logic and bool(found.numbers)


@bp.app_context_processor
def report_link() -> dict:
    """Whether the queries page links to the report (asked only where it is drawn)."""
    return {"offers_report": offers_report}


def project_numbers(project_id: str) -> tuple[str, ...]:
    """The numbers the project has (some query knows them, number_columns.py), and CTR where
    clicks and impressions are known: the facets make it of those."""
    names = set(number_columns.project_numbers(project_id).names)
    if {"clicks", "impressions"} <= names:
        names.add("ctr")
    return tuple(name for name in apiclient.capabilities().numbers if name in names)


def _view(project: Project) -> tuple[QueryView, list]:
    """The view of the address as this deployment and project can show it, and what of the
    address it could not use."""
    view, ignored = QueryView.parse(request.args)
    view, unknown = view.offered(apiclient.capabilities().filter_fields)
    filters, not_known = filter_fields.known(project.id, view.filters)
    return view.narrowed(filters).at_page(1), ignored + unknown + not_known


def _report(project: Project, view: QueryView) -> Report:
    """The view's report: the whole project's from the facets the queries page keeps (they
    sum every number), any other view's from a facets call of its own."""
    numbers = project_numbers(project.id)
    by = chosen_share(request.args.get(BY), numbers)
    asked = facets_filter(view.filters)
    found = facets.project_facets(project.id) if asked == QueryFilters() \
        else apiclient.client().facets(project.id, asked, sums=numbers)
    return build(found, view.filters, apiclient.tags(project.id), numbers, by)


def _ignored_choices(report: Report, order: Order) -> list[Ignored]:
    """The address's share or order that the report could not use, named."""
    ignored = []
    asked = (request.args.get(BY) or "").strip()
    if asked and asked != report.by:
        choices = share_choices(report.numbers)
        listed = (", ".join(choices[:-1]) + " or " + choices[-1]) if len(choices) > 1 \
            else choices[0]
        ignored.append(Ignored(f"share of {quoted(asked)}", f"choose {listed}"))
    asked = (request.args.get(ORDER) or "").strip()
    if asked and asked != order.param:
        ignored.append(Ignored(f"order {quoted(asked)}", "order by a column of the table"))
    return ignored


def _params(view: QueryView, report: Report, order: Order) -> list[tuple[str, str]]:
    """The report's address: the view's, what the shares are of, and the table's order
    (left out when it is the chart's)."""
    return [*view.params(), (BY, report.by),
            *([(ORDER, order.param)] if order != DEFAULT_ORDER else [])]


def _address(endpoint: str, project: Project, params: list[tuple[str, str]]) -> str:
    return url_for(endpoint, project_id=project.id) + "?" + urlencode(params)


def _columns(report: Report, order: Order, project: Project, view: QueryView,
             share_label: str) -> list[dict]:
    """The table's header cells: each a link to the table in its order (or the other way
    round when it is in it already), with its aria-sort."""
    named = [(TAG_COLUMN, "Tag"), (QUERIES, "Queries"),
             *((name, report_format.label(name)) for name in report.numbers),
             (SHARE_COLUMN, share_label)]
    return [{"key": key, "label": label, "numeric": key != TAG_COLUMN,
             "aria_sort": order.aria_sort(key),
             "url": _address("report.index", project,
                             _params(view, report, order.clicked(key)))}
            for key, label in named]


def _opened(project_id: str):
    """What the page and its CSV read from the address: (project, view, what of the address
    was ignored, the report, the table's order); None where the service sums no numbers."""
    project = load_project(project_id)
    if not offers_report():
        return None
    view, ignored = _view(project)
    report = _report(project, view)
    return project, view, ignored, report, table_order(request.args.get(ORDER), report.numbers)


@bp.get("/projects/<project_id>/report")
@login_required
def index(project_id: str):
    opened = _opened(project_id)
    if opened is None:
        return errors.page(404, NO_REPORT)
    project, view, ignored, report, order = opened
    text = report_format.Formatter(report_format.person_locale(), report.currency)
    share_label = report_format.share_label(report.by)
    return render_template(
        "report.html", project=project, section="queries", view=view, report=report,
        table=in_order(report, order), columns=_columns(report, order, project, view,
                                                        share_label),
        text=text, chart=chart(report, text.share), share_label=share_label,
        chart_title=f"{share_label} by tag, biggest first (the table below has the figures)",
        how=report_format.how_words(report.numbers),
        choices=[(choice, report_format.share_label(choice))
                 for choice in share_choices(report.numbers)],
        hidden_params=[pair for pair in _params(view, report, order) if pair[0] != BY],
        matching=wording.matching(view.filters),
        ignored_text=ignored_sentence(ignored + _ignored_choices(report, order)),
        csv_url=_address("report.download", project, _params(view, report, order)),
        queries_url=url_for("queries.index", project_id=project.id) + view.query_string(),
        page_title=f"Report · {project.name} · Tagdesk")


@bp.get("/projects/<project_id>/report.csv")
@login_required
def download(project_id: str):
    """The report's table as CSV: tag, queries, each number, share."""
    opened = _opened(project_id)
    if opened is None:
        return errors.page(404, NO_REPORT)
    project, _view_shown, _ignored, report, order = opened
    body = "".join(csv_lines(in_order(report, order)))
    stamp = f"{datetime.now(UTC):%Y-%m-%d}"
    return Response(body, mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{report_format.slug(project.name)}'
                               f'-report-{stamp}.csv"'})


def csv_lines(report: Report):
    """The header, then a line per row: tag names quoted as the export quotes them, every
    text cell guarded against formulas (weblib/spreadsheet_cells.py), figures as numbers."""
    share = "share of queries" if report.by == QUERIES else f"share of {report.by}"
    yield csv_line(("tag", "queries", *report.numbers, f"{share} (%)"))
    for row in report.rows:
        name = join_tag_names([row.label]) if row.tag else row.label
        figures = (report_format.plain(row.figures[number]) for number in report.numbers)
        ratio = report.share(row)
        yield csv_line((guard_cell(name), row.queries, *figures,
                        "" if ratio is None else report_format.plain(round(ratio * 100, 2))))


__all__ = ["bp", "csv_lines", "offers_report"]
