"""The report of a view (/projects/<id>/report): one row per tag with its queries, the sums
(and weighted figures) of their numbers and its share of the view's clicks, then Untagged
and the whole view; a chart of the shares as inline SVG; the same table as CSV. Read from
the embedded service over HTTP, checked against figures worked out here from the rows, on
SQLite and (TAGDESK_TEST_POSTGRES=1) PostgreSQL."""

from __future__ import annotations

import csv
import io
import re
from html.parser import HTMLParser

import pytest

from service.engine.numbers import BY_NAME
from service.org import admin
from tests.support.dashboard import FILLER, AuthActions
from tests.support.databases import database_for
from tests.support.numbered import add_numbered_queries

# (query, language, country, tags, numbers): "brand" and "sale" share a query.
ROWS = [
    ("running shoes", "en", "US", ["brand"],
     {"clicks": 1200, "impressions": 10000, "position": 2.0, "volume": 5000, "cpc": 1.2,
      "difficulty": 30}),
    ("cheap running shoes", "en", "GB", ["brand", "sale"],
     {"clicks": 500, "impressions": 5000, "position": 4.0, "volume": 3000, "cpc": 2.0,
      "difficulty": 50}),
    ("laufschuhe herren", "de", "DE", ["sale"],
     {"clicks": 300, "impressions": 3000, "position": 6.0, "volume": 1000}),
    ("zapatillas running", "es", "ES", [],
     {"clicks": 200, "impressions": 2000, "position": 10.0, "volume": 1000}),
    ("where to buy running shoes", "en", "US", ["question"], None),
]
ODD_TAGS = {"Größe, \"fit\"": "#9467bd", "=HYPERLINK(1)": "#8c564b"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path, sqlite_template) -> str:
    """Each report on both databases the service runs on."""
    return database_for(request.param, request, tmp_path, sqlite_template)


@pytest.fixture
def shop(world):
    """The world's project with numbered queries (and plain ones, as the other tests have)."""
    world.run(lambda s: world.tags.update(
        {name: admin.create_tag(s, world.project_id, name, color)
         for name, color in ODD_TAGS.items()}))
    add_numbered_queries(world, ROWS)
    add_numbered_queries(world, [("sizes", "en", "US", list(ODD_TAGS), {"clicks": 100}),
                                 *[(f"filler query {i:03d}", "en", "US", [], None)
                                   for i in range(FILLER)]])
    return world


class Table(HTMLParser):
    """The report table's rows, each a list of its cells' texts (header row first)."""

    def __init__(self, html: str):
        super().__init__()
        self.rows: list[list[str]] = []
        self._inside = self._cell = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if tag == "table" and "report-table" in (dict(attrs).get("class") or ""):
            self._inside = True
        elif self._inside and tag == "tr":
            self.rows.append([])
        elif self._inside and tag in ("td", "th") and self.rows:
            self._cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self._inside = False
        elif tag in ("td", "th"):
            self._cell = False

    def handle_data(self, data):
        if self._inside and self._cell:
            self.rows[-1][-1] += data.strip()


def report(client, world, query: str = "", **headers):
    response = client.get(f"/projects/{world.project_id}/report" + (f"?{query}" if query
                                                                    else ""), headers=headers)
    assert response.status_code == 200, response.get_data(as_text=True)
    html = response.get_data(as_text=True)
    return html, Table(html).rows


def by_tag(rows) -> dict[str, list[str]]:
    return {row[0]: row[1:] for row in rows[1:]}


def test_each_tag_row_sums_the_numbers_of_its_queries_and_its_share_of_the_clicks(
        signed_in, shop):
    html, rows = report(signed_in, shop)

    assert rows[0] == ["Tag", "Queries", "Clicks", "Impressions", "CTR", "Average position",
                       "Volume", "CPC", "Difficulty", "Share of clicks"]
    table = by_tag(rows)
    total_clicks = 1200 + 500 + 300 + 200 + 100
    # brand: position weighted by impressions, CPC and difficulty by volume. Each column's
    # figures to the same decimals (two for a position, one for a difficulty), so that they
    # line up: "50" stood under "37.5", "10.0" under "2.67".
    assert table["brand"] == [
        "2", "1,700", "15,000", "11.3%", "2.67", "8,000",
        "1.50", "37.5", f"{1700 / total_clicks:.1%}"]
    # sale: CPC and difficulty of the one query that has them (and its volume).
    assert table["sale"] == ["2", "800", "8,000", "10.0%", "4.75", "4,000", "2.00", "50.0",
                             f"{800 / total_clicks:.1%}"]
    # question: a query without numbers: sums of nothing are 0, weighted figures unknown.
    assert table["question"] == ["1", "0", "0", "—", "—", "0", "—", "—", "0.0%"]
    assert table["Untagged"] == [f"{1 + FILLER}", "200", "2,000", "10.0%", "10.00", "1,000",
                                 "—", "—", f"{200 / total_clicks:.1%}"]
    # CTR: clicks ÷ impressions of the queries with both ("sizes" has no impressions).
    assert table["All queries in this view"] == [
        f"{6 + FILLER}", "2,300", "20,000", "11.0%", "3.90", "10,000", "1.50", "37.5", "100.0%"]
    # Biggest share first; the tags no query of the view has are not listed.
    assert [row[0] for row in rows[1:]] == ["brand", "sale", "=HYPERLINK(1)",
                                            "Größe, \"fit\"", "question", "Untagged",
                                            "All queries in this view"]
    assert table["=HYPERLINK(1)"][:4] == ["1", "100", "0", "—"]
    assert "local" not in table
    assert "counts in both rows" in html


def test_a_report_asks_the_service_once_and_the_whole_project_not_again(signed_in, shop,
                                                                         api_calls):
    report(signed_in, shop)  # the project's numbers and facets, read once and kept
    api_calls.reset()
    report(signed_in, shop, "by=volume")
    assert api_calls.paths["/api/queries/facets"] == 0
    report(signed_in, shop, "lang=de")
    assert api_calls.paths["/api/queries/facets"] == 1
    assert api_calls.total == 1


def test_the_numbers_are_written_in_the_persons_locale(signed_in, shop):
    _html, rows = report(signed_in, shop, **{"Accept-Language": "de-DE,de;q=0.9"})
    brand = by_tag(rows)["brand"]
    assert brand[1:3] == ["1.700", "15.000"]
    assert brand[4] == "2,67" and brand[6] == "1,50"
    assert brand[-1] == "73,9\xa0%"


def test_cpc_is_in_the_projects_currency_when_it_is_known(signed_in, shop):
    from service.store.models import Project

    def euros(session):
        session.get(Project, shop.project_id).currency = "EUR"

    shop.run(euros)
    _html, rows = report(signed_in, shop)
    assert by_tag(rows)["brand"][6] == "€1.50"
    _html, rows = report(signed_in, shop, **{"Accept-Language": "de"})
    assert by_tag(rows)["brand"][6] == "1,50\xa0€"


def test_the_shares_and_chart_are_by_the_number_chosen_in_the_address(signed_in, shop):
    html, rows = report(signed_in, shop, "by=volume")
    assert rows[0][-1] == "Share of volume"
    table = by_tag(rows)
    assert table["brand"][-1] == "80.0%" and table["sale"][-1] == "40.0%"
    assert re.search(r'<option value="volume" selected>Share of volume</option>', html)
    assert [value for value, _ in re.findall(r'<option value="(\w+)"( selected)?>', html)] == [
        "clicks", "volume", "impressions", "queries"]
    # A choice that is not offered falls back to the first, and the page says so.
    html, rows = report(signed_in, shop, "by=position")
    assert rows[0][-1] == "Share of clicks"
    assert ("Ignored from the address: share of “position” (choose clicks, volume, "
            "impressions or queries).") in html


def test_each_column_sorts_the_tags_and_says_how(signed_in, shop):
    html, rows = report(signed_in, shop)
    # The first order is the chart's: biggest share first, no aria-sort but on the share.
    assert re.findall(r'<th scope="col"[^>]*aria-sort="(\w+)"', html) == ["descending"]
    link = re.search(r'<a class="sort-link" href="([^"]+)">Volume<', html).group(1)
    assert link.replace("&amp;", "&").endswith("/report?by=clicks&order=-volume")

    html, rows = report(signed_in, shop, "by=clicks&order=-volume")
    assert [row[0] for row in rows[1:]] == ["brand", "sale", "=HYPERLINK(1)", "Größe, \"fit\"",
                                            "question", "Untagged", "All queries in this view"]
    assert re.search(r'aria-sort="descending">\s*<a class="sort-link" href="([^"]+)">Volume<',
                     html).group(1).replace("&amp;", "&").endswith("order=volume")
    # Position: best (least) first; a tag whose figure is unknown comes last either way.
    _html, rows = report(signed_in, shop, "order=position")
    assert [row[0] for row in rows[1:3]] == ["brand", "sale"] and rows[-3][0] == "question"
    _html, rows = report(signed_in, shop, "order=-position")
    assert [row[0] for row in rows[1:3]] == ["sale", "brand"]
    assert rows[-3][0] == "question"
    # Names A to Z; the untagged and whole-view rows stay last.
    _html, rows = report(signed_in, shop, "order=tag")
    assert [row[0] for row in rows[1:]] == ["=HYPERLINK(1)", "brand", "Größe, \"fit\"",
                                            "question", "sale", "Untagged",
                                            "All queries in this view"]
    # An order of no column is the chart's.
    html, rows = report(signed_in, shop, "order=-nonsense")
    assert rows[1][0] == "brand"
    assert "order “-nonsense” (order by a column of the table)" in html


def test_the_chart_is_one_image_of_the_shares_biggest_first(signed_in, shop):
    html, _rows = report(signed_in, shop, "by=volume")
    svg = re.search(r"<svg .*?</svg>", html, re.S).group(0)
    assert 'role="img"' in svg and 'aria-labelledby="report-chart-title"' in svg
    assert re.search(r'<title id="report-chart-title">Share of volume by tag', svg)
    assert re.search(r'viewBox="0 0 400 \d+"', svg) and "width=\"100%\"" not in svg
    names = re.findall(r'class="report-chart__name"[^>]*>([^<]*)<', svg)
    assert names[:2] == ["brand", "sale"] and names[-1] == "Untagged" and len(names) == 6
    lengths = [float(w) for w in re.findall(
        r'class="report-chart__bar[^"]*" x="0" y="[\d.]+" width="([\d.]+)"', svg)]
    # brand 80 % of the volume spans the width; sale (40 %) half of it.
    assert lengths[:2] == [400.0, 200.0]
    # The tag's colour fills its bar; the chart comes before the table.
    assert 'fill="#1f77b4"' in svg
    assert html.index("<svg") < html.index('class="data-table report-table"')


def test_the_chart_draws_the_twenty_biggest_tags_and_the_table_every_one(signed_in, shop):
    shop.run(lambda s: shop.tags.update(
        {f"theme {i:02d}": admin.create_tag(s, shop.project_id, f"theme {i:02d}", "#17becf")
         for i in range(20)}))
    add_numbered_queries(shop, [(f"theme query {i:02d}", "en", "US", [f"theme {i:02d}"],
                                 {"clicks": 10 + i}) for i in range(20)])
    html, rows = report(signed_in, shop)
    svg = re.search(r"<svg .*?</svg>", html, re.S).group(0)
    names = re.findall(r'class="report-chart__name"[^>]*>([^<]*)<', svg)
    # The twenty biggest: the four tags of 100 clicks or more, then sixteen themes; the four
    # smallest themes and question (no clicks) are left out.
    assert names[:5] == ["brand", "sale", "=HYPERLINK(1)", "Größe, &#34;fit&#34;", "theme 19"]
    assert names[19:] == ["theme 04", "Untagged"]
    assert len(names) == 21
    assert "The chart shows the 20 biggest tags; the table has the other 5 too." in html
    assert len(rows) == 1 + 25 + 2


def test_a_long_name_is_cut_in_the_chart_and_whole_in_the_table(signed_in, shop):
    name = "winter running shoes for wide feet with extra cushioning"
    shop.run(lambda s: shop.tags.update({name: admin.create_tag(s, shop.project_id, name,
                                                               "#17becf")}))
    add_numbered_queries(shop, [("wide winter shoes", "en", "US", [name], {"clicks": 5000})])
    html, rows = report(signed_in, shop)
    assert rows[1][0] == name
    svg = re.search(r"<svg .*?</svg>", html, re.S).group(0)
    assert re.findall(r'class="report-chart__name"[^>]*>([^<]*)<', svg)[0] == (
        "winter running shoes for wide feet…")


def test_a_view_reports_its_own_queries(signed_in, shop):
    _html, rows = report(signed_in, shop, "lang=de")
    assert [row[0] for row in rows[1:]] == ["sale", "Untagged", "All queries in this view"]
    assert by_tag(rows)["sale"][:2] == ["1", "300"]

    # One tag chosen: every other tag's row is its queries within that tag.
    _html, rows = report(signed_in, shop, "tag=brand")
    table = by_tag(rows)
    assert table["brand"][:2] == ["2", "1,700"] and table["sale"][:2] == ["1", "500"]
    assert table["Untagged"][:2] == ["0", "0"]
    assert table["All queries in this view"][:2] == ["2", "1,700"]

    # A range of a number: only the queries that have it within.
    _html, rows = report(signed_in, shop, "volume_min=3000")
    table = by_tag(rows)
    assert table["brand"][:2] == ["2", "1,700"] and table["sale"][:2] == ["1", "500"]
    assert table["Untagged"][:2] == ["0", "0"]
    assert table["All queries in this view"][:2] == ["2", "1,700"]

    # A tag excluded has no row; the others count without its queries.
    _html, rows = report(signed_in, shop, "nottag=sale")
    table = by_tag(rows)
    assert "sale" not in table and table["brand"][:2] == ["1", "1,200"]
    assert table["Untagged"][:2] == [f"{1 + FILLER}", "200"]


def test_a_tag_made_since_the_tags_were_read_is_reported_not_dropped(signed_in, shop):
    report(signed_in, shop)  # the project's tags, read and kept by the dashboard
    shop.run(lambda s: shop.tags.update(new=admin.create_tag(s, shop.project_id, "new",
                                                             "#17becf")))
    add_numbered_queries(shop, [("new running shoes", "en", "US", ["new"], {"clicks": 7})])

    html, rows = report(signed_in, shop, "tag=new")
    assert "no such tag" not in html
    assert by_tag(rows)["All queries in this view"][:2] == ["1", "7"]


def test_any_of_several_tags_reports_those_tags_and_says_so(signed_in, shop):
    html, rows = report(signed_in, shop, "tag=brand&tag=question")
    assert [row[0] for row in rows[1:]] == ["brand", "question", "Untagged",
                                            "All queries in this view"]
    assert by_tag(rows)["All queries in this view"][:2] == ["3", "1,700"]
    assert "only those tags have rows" in html


def test_a_project_without_numbers_reports_its_queries_by_tag(signed_in, shop):
    def plain_project(session):
        tag = admin.create_tag(session, shop.other_project_id, "faq", "#2ca02c")
        admin.insert_queries(session, shop.other_project_id, [
            (*admin.normalize_query(text, "en", "US"), tags, None)
            for text, tags in (("how to return", [tag]), ("opening hours", [tag]),
                               ("contact", []))])

    shop.run(plain_project)
    response = signed_in.get(f"/projects/{shop.other_project_id}/report")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    rows = Table(html).rows
    assert rows == [["Tag", "Queries", "Share of queries"], ["faq", "2", "66.7%"],
                    ["Untagged", "1", "33.3%"], ["All queries in this view", "3", "100.0%"]]
    assert '<option value="queries" selected>Share of queries</option>' in html


def test_an_empty_view_says_so_and_offers_no_file(signed_in, shop):
    html, rows = report(signed_in, shop, "q=nothing+like+this")
    assert rows == [] and "nothing to report" in html and "Download CSV" not in html


def test_the_csv_is_the_table_quoted_and_guarded_as_the_export(signed_in, shop):
    html, _rows = report(signed_in, shop, "lang=en&by=volume")
    link = re.search(r'href="([^"]*report\.csv[^"]*)"', html).group(1).replace("&amp;", "&")
    assert "lang=en" in link and "by=volume" in link
    response = signed_in.get(link)
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert 'attachment; filename="shop-search-report-' in response.headers[
        "Content-Disposition"]
    text = response.get_data().decode("utf-8")
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == ["tag", "queries", "clicks", "impressions", "ctr", "position",
                        "volume", "cpc", "difficulty", "share of volume (%)"]
    rows = {line[0]: line[1:] for line in lines[1:]}
    assert rows["brand"] == ["2", "1700", "15000", "0.113333", "2.666667", "8000", "1.5",
                             "37.5", "100"]
    assert rows["sale"] == ["1", "500", "5000", "0.1", "4", "3000", "2", "50", "37.5"]
    # Names the import would split are quoted as the export quotes them; formulas guarded.
    assert rows['"Größe, ""fit"""'][:2] == ["1", "100"]
    assert rows["'=HYPERLINK(1)"][:2] == ["1", "100"]
    assert rows["Untagged"][0] == str(FILLER)
    assert rows["All queries in this view"][:2] == [str(4 + FILLER), "1800"]


def test_the_queries_page_links_to_the_report_of_its_view(signed_in, shop):
    html = signed_in.get(f"/projects/{shop.project_id}/queries?lang=de&tag=sale"
                         ).get_data(as_text=True)
    link = re.search(r'<a class="button button--quiet results__report" href="([^"]+)">Report</a>',
                     html)
    assert link and link.group(1).replace("&amp;", "&") == (
        f"/projects/{shop.project_id}/report?lang=de&tag=sale")


def test_without_the_extension_there_is_no_link_and_no_report(external, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    queries = client.get(f"/projects/{shop.project_id}/queries")
    assert queries.status_code == 200
    assert "results__report" not in queries.get_data(as_text=True)
    for path in ("report", "report.csv"):
        response = client.get(f"/projects/{shop.project_id}/{path}")
        assert response.status_code == 404
        assert "does not sum the numbers of queries" in response.get_data(as_text=True)


# --- against brute force -----------------------------------------------------------------

RANDOM_TAGS = ("alpha", "beta", "gamma", "delta")
RANDOM_VIEWS = ["", "lang=de", "tag=alpha", "tag=alpha&tag=beta&tagmatch=all",
                "tag=alpha&tag=beta", "nottag=beta", "untagged=1", "volume_min=500",
                "lang=en&nottag=alpha&volume_max=2000", "tag=gamma&lang=fr&clicks_min=10"]


def random_queries(rng):
    """(text, language, tags, numbers) of 120 queries, each number known four times in
    five."""
    made = []
    for i in range(120):
        numbers = {name: value for name, value in (
            ("clicks", rng.randint(0, 300)), ("impressions", rng.randint(1, 5000)),
            ("position", round(rng.uniform(1, 40), 2)), ("volume", rng.randint(1, 9000)),
            ("cpc", round(rng.uniform(0, 5), 2)), ("difficulty", rng.randint(0, 100)))
            if rng.random() < .8}
        made.append((f"random query {i:03d}", rng.choice(("de", "en", "fr")),
                     [tag for tag in RANDOM_TAGS if rng.random() < .3], numbers))
    return made


def args_of(view: str) -> dict[str, list[str]]:
    args: dict[str, list[str]] = {}
    for pair in filter(None, view.split("&")):
        name, value = pair.split("=")
        args.setdefault(name, []).append(value)
    return args


def matches(query, view: str) -> bool:
    _text, language, tags, numbers = query
    args = args_of(view)
    chosen = args.get("tag", [])
    if "lang" in args and language not in args["lang"]:
        return False
    if chosen and not (all if args.get("tagmatch") == ["all"] else any)(
            t in tags for t in chosen):
        return False
    if any(t in tags for t in args.get("nottag", [])) or ("untagged" in args and tags):
        return False
    for name, values in args.items():
        if name.endswith(("_min", "_max")):
            number, bound = name.rsplit("_", 1)
            value = numbers.get(number)
            if value is None or (value < float(values[0]) if bound == "min"
                                 else value > float(values[0])):
                return False
    return True


def figures_of(queries) -> dict:
    def both(name, weight):
        pairs = [(q[3][name], q[3][weight]) for q in queries
                 if name in q[3] and weight in q[3]]
        total = sum(w for _, w in pairs)
        return sum(v * w for v, w in pairs) / total if pairs and total else None

    def summed(name):
        return sum(q[3].get(name, 0) for q in queries)

    known = [q[3] for q in queries if "clicks" in q[3] and "impressions" in q[3]]
    impressions = sum(n["impressions"] for n in known)
    return {"queries": len(queries), "clicks": summed("clicks"),
            "impressions": summed("impressions"),
            "ctr": sum(n["clicks"] for n in known) / impressions if impressions else None,
            "position": both("position", "impressions"), "volume": summed("volume"),
            "cpc": both("cpc", "volume"), "difficulty": both("difficulty", "volume")}


def test_every_row_is_exact_against_brute_force_over_views(signed_in, shop):
    import random

    project = shop.other_project_id
    tags = shop.run(lambda s: {name: admin.create_tag(s, project, name, "#17becf")
                               for name in RANDOM_TAGS})
    queries = random_queries(random.Random(48))
    shop.run(lambda s: admin.insert_queries(s, project, [
        (*admin.normalize_query(text, language, "US"), [tags[t] for t in names], None,
         {name: BY_NAME[name].stored(value) for name, value in numbers.items()})
        for text, language, names, numbers in queries]))
    columns = ("queries", "clicks", "impressions", "ctr", "position", "volume", "cpc",
               "difficulty")
    for view in RANDOM_VIEWS:
        response = signed_in.get(f"/projects/{project}/report.csv?{view}")
        assert response.status_code == 200, view
        lines = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
        assert tuple(lines[0][1:-1]) == columns
        found = {line[0]: line[1:-1] for line in lines[1:]}
        in_view = [q for q in queries if matches(q, view)]
        args = args_of(view)
        chosen = args.get("tag", [])
        # "any of" several tags: those tags' rows only; else every tag not excluded.
        listed = chosen if len(chosen) > 1 and "tagmatch" not in args else [
            t for t in RANDOM_TAGS if t not in args.get("nottag", [])]
        expected = {tag: figures_of([q for q in in_view if tag in q[2]]) for tag in listed}
        expected = {tag: row for tag, row in expected.items() if row["queries"]}
        expected["Untagged"] = figures_of([] if chosen else [q for q in in_view if not q[2]])
        expected["All queries in this view"] = figures_of(in_view)
        assert set(found) == set(expected), view
        for name, row in expected.items():
            for column, cell in zip(columns, found[name], strict=True):
                want = row[column]
                if want is None or column in ("queries", "clicks", "impressions", "volume"):
                    assert cell == ("" if want is None else str(want)), (view, name, column)
                else:
                    assert float(cell) == pytest.approx(want, abs=1e-6), (view, name, column)
