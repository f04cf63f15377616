"""Property-based fuzzing of everything the dashboard reads from a request: the query strings
of the queries page, the tags page, the CSV export, the tag picker, the activity page and a
job's panel; the forms of sign-in (key, display name, `next`), the tag picker's Apply (rows,
tags, the view, select-all), the confirm step, quick edit, undo, cancel and resume, export;
and the htmx headers they look at. Whatever arrives — any text, raw bytes that are not
UTF-8, numbers of any size, JSON of the wrong shape, repeated and unknown fields — the answer
is never a 5xx, never a stack trace.

A real dashboard on a live loopback server, with its real embedded service; bounded runs
(derandomized, so a run is repeatable).
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.dashboard import csrf_token
from tests.support.security import make_org, row_keys, start_site, tag_rows

ROWS = [("running shoes", "en", "US", ["brand"]), ("cheap running shoes", "en", "GB", ["sale"]),
        ("laufschuhe herren", "de", "DE", ["sale", "brand"]), ("chaussures", "fr", "FR", []),
        ("zapatillas", "es", "ES", ["local"]), ("100% wool", "en", "US", [])]
TAGS = {"brand": "#1f77b4", "sale": "#ff7f0e", "local": "#d62728"}


def fuzz(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


# --- what arrives --------------------------------------------------------------------------------

TRICKY = st.sampled_from([
    "", " ", "0", "-1", "1", "2", "25", "50", "200", "201", "999999999", "1000001",
    "99999999999999999999999", "1e3", "0x10", "1.5", " 7 ", "٣", "１", "NaN", "null", "true",
    "[]", "{}", '["a","b","c","d"]', '["x","running shoes","en","US"]', "[1,2,3,4]",
    '[null,"a","b","c"]', '["' + "a" * 3000 + '","b","c","d"]', "<script>alert(1)</script>",
    "\x00", "\x7f", "\u2028", "%", "%%", "%25", "*", "_", "\\", "'", '"', "--", "query",
    "-query", "--query", "updated", "-updated", "language", "-country", "tags", "add", "remove",
    "replace", "edit", "all", "rows", "notice", "panel", "activity", "de", "DE", "en", "brand",
    "Brand", "sale", "é", "🏷️", "x" * 600, "ü" * 5000,
])
TEXT = st.one_of(TRICKY, st.text(max_size=30), st.text(max_size=300))
RAW = st.binary(min_size=1, max_size=24)  # sent percent-encoded as they are: often not UTF-8
VALUE = st.one_of(TEXT, TEXT, RAW)

VIEW_FIELDS = ["q", "lang", "country", "tag", "sort", "page", "size"]
JUNK_FIELDS = ["", "x", "q[]", "page[]", "csrf_token", "next", "_"]


def pairs(names: list[str], max_size: int = 12):
    return st.lists(st.tuples(st.sampled_from(names + JUNK_FIELDS), VALUE), max_size=max_size)


def encode(items) -> str:
    """application/x-www-form-urlencoded, raw bytes kept as they are."""
    def part(value) -> str:
        if isinstance(value, bytes):
            return "".join(f"%{byte:02X}" for byte in value)
        return quote(value, safe="")
    return "&".join(f"{part(name)}={part(value)}" for name, value in items)


HTMX = st.one_of(
    st.just({}),
    st.just({"HX-Request": "true"}),
    st.just({"HX-Request": "true", "HX-History-Restore-Request": "true"}),
    st.fixed_dictionaries({"HX-Request": st.just("true"), "HX-Current-URL": st.text(
        st.characters(min_codepoint=32, max_codepoint=126), max_size=80)}),
    st.fixed_dictionaries({"HX-Request": st.just("true"), "X-Tagdesk-Refresh": st.just("1"),
                           "HX-Boosted": st.just("true")}),
)


# A request line longer than the HTTP server takes is refused before it reaches the dashboard.
VIEWED = (200, 414)


# Real values of the project the strategies mix in (row identities, tag ids, the key), filled
# by the `site` fixture: they take requests past the first checks, deep into the handlers.
site_values: dict[str, list[str]] = {"keys": [], "tag_ids": [], "key": []}


def assert_no_server_error(response, what) -> None:
    assert response.status_code < 500, (what, response.status_code, response.text[:800])
    assert "Traceback" not in response.text, what


# --- the dashboard under test --------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory, sqlite_template):
    site = start_site(tmp_path_factory.mktemp("fuzz"), sqlite_template, EXPORT_STREAM_LIMIT=3)
    site.org = make_org(site.service_app, "Acme", {"Shop search": ROWS, "Help centre": []},
                        TAGS)
    site.visitor_ = site.visitor()
    assert site.visitor_.sign_in(site.org.key, name="Fuzzy").status_code == 303
    site.project = site.org.project_id
    site.keys = row_keys(site.visitor_, site.project)
    site.tag_ids = [str(tag_id) for tag_id in site.org.tags["Shop search"].values()]
    # Two rows without tags (the page's order among equal times is by random id), so the edit
    # changes them and leaves an Undo.
    untagged = [key for key in site.keys if json.loads(key)[1] in ("chaussures", "100% wool")]
    site.edit = tag_rows(site.visitor_, site.project, int(site.tag_ids[0]), untagged)
    site.token = csrf_token(site.visitor_.get(f"/projects/{site.project}/queries").text)
    site.signin_visitor = site.visitor()
    site_values.update(keys=site.keys, tag_ids=site.tag_ids, key=[site.org.key])
    yield site
    site_values.update(keys=[], tag_ids=[], key=[])
    site.stop()


def real_or(values, strategy):
    """Sometimes a real value of the project (so requests reach deep), else anything."""
    return st.one_of(st.sampled_from(values), strategy) if values else strategy


def get(site, path: str, query: list, headers: dict):
    url = path + ("?" + encode(query) if query else "")
    response = site.visitor_.get(url, headers=headers)
    assert_no_server_error(response, ("GET", url, headers))
    return response


def post(site, path: str, form: list, headers: dict, token: bool = True):
    body = encode(([("csrf_token", site.token)] if token else []) + form)
    response = site.visitor_.post(path, data=body.encode("ascii"), headers={
        "Content-Type": "application/x-www-form-urlencoded", **headers})
    assert_no_server_error(response, ("POST", path, body[:500], headers))
    return response


# --- pages and their query strings ---------------------------------------------------------------


@fuzz(150)
@given(query=pairs(VIEW_FIELDS), headers=HTMX)
def test_queries_page(site, query, headers):
    # Any query string is a view (viewstate.py drops or clamps what it cannot use).
    assert get(site, f"/projects/{site.project}/queries", query, headers).status_code in VIEWED


@fuzz(40)
@given(query=pairs(["name", *VIEW_FIELDS]), headers=HTMX)
def test_tags_page(site, query, headers):
    assert get(site, f"/projects/{site.project}/tags", query, headers).status_code in VIEWED


@fuzz(40)
@given(query=pairs(VIEW_FIELDS))
def test_csv_export(site, query):
    assert get(site, f"/projects/{site.project}/export.csv", query, {}).status_code in VIEWED


@fuzz(25)
@given(query=pairs(["page"], 3), headers=HTMX)
def test_activity_page(site, query, headers):
    assert get(site, f"/projects/{site.project}/activity", query, headers).status_code \
        in VIEWED


@st.composite
def picker_query(draw):
    real = site_values["keys"]
    return draw(st.lists(st.one_of(
        st.tuples(st.just("action"), st.one_of(st.sampled_from(["add", "remove", "replace",
                                                                 "edit"]), VALUE)),
        st.tuples(st.just("row"), real_or(real, VALUE)),
        st.tuples(st.just("had"), real_or(site_values["tag_ids"], VALUE)),
    ), max_size=8))


@fuzz(50)
@given(query=picker_query(), headers=HTMX)
def test_tag_picker_and_quick_edit_dialog(site, query, headers):
    get(site, f"/projects/{site.project}/bulk/picker", query, headers)


@fuzz(20)
@given(query=pairs(["poll"], 2), edit=st.one_of(st.just(None), VALUE), headers=HTMX)
def test_job_panel(site, query, edit, headers):
    edit_id = site.edit if edit is None else encode([("", edit)])[1:] or "x"
    get(site, f"/projects/{site.project}/jobs/{edit_id}", query, headers)


# --- forms ---------------------------------------------------------------------------------------


@st.composite
def apply_form(draw):
    fields = st.one_of(
        st.tuples(st.just("action"), st.one_of(st.sampled_from(["add", "remove", "replace",
                                                                 "edit"]), VALUE)),
        st.tuples(st.just("apply_tag"), real_or(site_values["tag_ids"], VALUE)),
        st.tuples(st.just("had"), real_or(site_values["tag_ids"], VALUE)),
        st.tuples(st.just("selected"), real_or(site_values["keys"], VALUE)),
        st.tuples(st.just("row"), real_or(site_values["keys"], VALUE)),
        st.tuples(st.just("scope"), st.one_of(st.just("all"), VALUE)),
        st.tuples(st.sampled_from(VIEW_FIELDS), VALUE),
    )
    return draw(st.lists(fields, max_size=10))


@fuzz(120)
@given(form=apply_form(), headers=HTMX)
def test_tag_picker_apply_quick_edit_and_select_all(site, form, headers):
    post(site, f"/projects/{site.project}/bulk", form, headers)


@fuzz(20)
@given(view=pairs(VIEW_FIELDS, 6), tag=st.sampled_from(["0", "1", "2"]),
       tamper=st.one_of(st.just(None), VALUE))
def test_confirm_step_with_real_and_tampered_plans(site, view, tag, tamper):
    """Select all matching a fuzzed view, then confirm the plan the dialog carries (the job
    runs), or a tampered one."""
    asked = post(site, f"/projects/{site.project}/bulk",
                 [("action", "add"), ("scope", "all"), ("apply_tag", site.tag_ids[int(tag)]),
                  *view], {"HX-Request": "true"})
    plan = json.dumps(asked.text)  # anything, when there was no plan
    if 'name="plan" value="' in asked.text:
        plan = asked.text.split('name="plan" value="')[1].split('"')[0]
    if tamper is not None:
        plan = plan[: len(plan) // 2] + encode([("", tamper)])[1:]
    post(site, f"/projects/{site.project}/bulk/confirm", [("plan", plan)],
         {"HX-Request": "true"})


@fuzz(30)
@given(form=pairs(["context", "shown"], 4), which=st.sampled_from(["undo", "cancel", "resume"]),
       edit=st.one_of(st.just(None), VALUE), headers=HTMX)
def test_undo_cancel_and_resume(site, form, which, edit, headers):
    edit_id = site.edit if edit is None else encode([("", edit)])[1:] or "x"
    kind = "edits" if which == "undo" else "jobs"
    post(site, f"/projects/{site.project}/{kind}/{edit_id}/{which}", form, headers)


@fuzz(20)
@given(form=pairs(VIEW_FIELDS, 8), headers=HTMX)
def test_export_start(site, form, headers):
    post(site, f"/projects/{site.project}/export", form, headers)


@fuzz(60)
@given(form=st.lists(st.one_of(
    st.tuples(st.sampled_from(["api_key", "display_name", "demo"]), VALUE),
    st.tuples(st.just("api_key"), st.sampled_from(["tdk_live_" + "A" * 43, "tdk_live_"])),
    st.tuples(st.just("api_key"), st.builds(lambda: site_values["key"][0]))),
    max_size=6), next_url=st.one_of(st.just(None), VALUE), headers=HTMX)
def test_sign_in_form_and_display_name(site, form, next_url, headers):
    visitor = site.signin_visitor
    token = csrf_token(visitor.get("/signin", allow_redirects=True).text)
    path = "/signin" + ("" if next_url is None else "?" + encode([("next", next_url)]))
    body = encode([("csrf_token", token), *form])
    response = visitor.post(path, data=body.encode("ascii"), headers={
        "Content-Type": "application/x-www-form-urlencoded", **headers})
    assert_no_server_error(response, (path, body[:300]))


def test_oversized_bodies_are_refused_before_they_are_read(site):
    """A body far larger than any form the dashboard sends is a 413 with a sentence — signed
    in or not, on the dashboard's routes and on the settings area's."""
    huge = b"q=" + b"x" * (5 * 1024 * 1024)
    stranger = site.visitor()
    for visitor, path in ((stranger, "/signin"), (stranger, "/settings/signin"),
                          (site.visitor_, f"/projects/{site.project}/bulk"),
                          (site.visitor_, f"/projects/{site.project}/export")):
        response = visitor.post(path, data=huge, headers={
            "Content-Type": "application/x-www-form-urlencoded"})
        assert response.status_code == 413, (path, response.status_code, response.text[:300])
        assert "Too much at once" in response.text
    # The largest real form (Apply on a whole page of long rows) is well within the limit.
    long_rows = [json.dumps([f"{i:032x}", "ü" * 1000, "de", "DE"]) for i in range(200)]
    applied = post(site, f"/projects/{site.project}/bulk",
                   [("action", "add"), ("apply_tag", site.tag_ids[0])]
                   + [("selected", key) for key in long_rows], {"HX-Request": "true"})
    assert applied.status_code != 413
