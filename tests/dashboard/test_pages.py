"""Projects and tags pages, security headers, the embedded /api, and the key's secrecy."""

from __future__ import annotations

import logging
import re

from service.org import admin
from tests.support.dashboard import csrf_token, project_url

# --- projects ------------------------------------------------------------------------------------


def test_projects_are_links_named_by_the_project(signed_in, shop):
    html = signed_in.get("/projects").get_data(as_text=True)
    links = re.findall(r'<a class="project-list__link" href="([^"]+)">([^<]+)</a>', html)
    assert links == [(f"/projects/{shop.other_project_id}/queries", "Help centre"),
                     (f"/projects/{shop.project_id}/queries", "Shop search")]


def test_the_last_project_used_is_remembered(signed_in, shop):
    assert signed_in.get("/").headers["Location"] == "/projects"
    signed_in.get(project_url(shop))
    cookie = signed_in.get_cookie("tagdesk_project")
    assert cookie.value == shop.project_id and cookie.http_only
    assert signed_in.get("/").headers["Location"] == project_url(shop)
    html = signed_in.get("/projects").get_data(as_text=True)
    assert re.search(r'>Shop search</a>\s*<span class="badge">Last used</span>', html)


def test_a_single_project_goes_straight_to_it(app, shop):
    org_id, key, project_id = shop.new_org("Solo")
    client = app.test_client()
    token = csrf_token(client.get("/signin").get_data(as_text=True))
    client.post("/signin", data={"csrf_token": token, "api_key": key})
    assert client.get("/").headers["Location"] == f"/projects/{project_id}/queries"
    assert client.get("/projects").headers["Location"] == f"/projects/{project_id}/queries"


# --- tags ----------------------------------------------------------------------------------------


def test_tags_page_shows_every_tag_as_a_chip_linking_to_its_queries(signed_in, shop):
    html = signed_in.get(project_url(shop, suffix="tags")).get_data(as_text=True)
    assert "4 tags" in html
    chips = re.findall(r'<a class="chip" style="background-color:(#[0-9a-f]{6});'
                       r'color:(#000000|#ffffff)" href="([^"]+)">([^<]+)</a>', html)
    assert [(name, color) for color, _, _, name in chips] == [
        ("brand", "#1f77b4"), ("local", "#d62728"), ("question", "#2ca02c"), ("sale", "#ff7f0e")]
    href = dict((name, link) for _, _, link, name in chips)["question"]
    assert href == project_url(shop, query="tag=question")
    assert signed_in.get(href).status_code == 200


def test_tags_name_filter_page_and_partial(signed_in, shop):
    html = signed_in.get(project_url(shop, suffix="tags", query="name=A")).get_data(as_text=True)
    assert "3 of 4 tags" in html  # brand, local, sale
    assert ">question</a>" not in html
    partial = signed_in.get(project_url(shop, suffix="tags", query="name=sal"),
                            headers={"HX-Request": "true"})
    body = partial.get_data(as_text=True)
    assert "<!doctype html>" not in body and "1 of 4 tags" in body
    assert partial.headers["HX-Push-Url"] == project_url(shop, suffix="tags", query="name=sal")
    nothing = signed_in.get(project_url(shop, suffix="tags", query="name=zzz"))
    assert "No tag matches" in nothing.get_data(as_text=True)


def test_tags_page_of_an_unknown_project_is_404(signed_in):
    assert signed_in.get("/projects/00000000-0000-4000-8000-000000000000/tags").status_code == 404


# --- security ------------------------------------------------------------------------------------


def test_security_headers_and_no_inline_script(client, signed_in, shop):
    for path in ("/signin", "/projects", project_url(shop), project_url(shop, suffix="tags"),
                 "/nowhere"):
        response = signed_in.get(path)
        headers = response.headers
        policy = headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy
        assert "unsafe-eval" not in policy
        script_src = re.search(r"script-src ([^;]*)", policy).group(1)
        assert "unsafe-inline" not in script_src
        assert "frame-ancestors 'none'" in policy
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "same-origin"
        html = response.get_data(as_text=True)
        assert all('src="' in tag for tag in re.findall(r"<script[^>]*>", html)), path
        assert not re.search(r"\son[a-z]+\s*=", html), path  # no inline event handlers
        assert "javascript:" not in html


def test_htmx_config_forbids_eval_and_restores_history_from_the_server(client):
    html = client.get("/signin").get_data(as_text=True)
    config = re.search(r'<meta name="htmx-config" content="([^"]+)">', html).group(1)
    config = config.replace("&#34;", '"')
    assert '"allowEval":false' in config
    assert '"historyCacheSize":0' in config
    assert '"refreshOnHistoryMiss":true' in config
    assert '"historyEnabled":false' in config  # static/address.js pushes the address


def test_static_files_are_versioned_and_kept(client):
    html = client.get("/signin").get_data(as_text=True)
    src = re.search(r'<script src="(/static/htmx-2\.0\.\d+\.min\.js\?v=[0-9a-f]{12})"', html)
    assert src
    response = client.get(src.group(1))
    assert response.status_code == 200
    assert "max-age=31536000" in response.headers["Cache-Control"]


def test_the_embedded_service_answers_under_api(client, shop):
    assert client.get("/api/openapi.json").status_code == 200
    response = client.get("/api/projects/list", headers={"x-api-key": shop.key})
    assert response.status_code == 200
    assert {p["name"] for p in response.get_json()["results"]} == {"Shop search", "Help centre"}
    assert client.get("/api/projects/list").status_code == 401  # the service's own answer


def test_the_key_never_appears_in_pages_urls_cookies_or_logs(auth, shop, caplog):
    key = shop.key
    with caplog.at_level(logging.DEBUG):
        responses = [auth.sign_in(follow_redirects=True)]
        client = auth.client
        for path in ("/", "/projects", project_url(shop), project_url(shop, query="q=shoes"),
                     project_url(shop, suffix="tags"), "/no-such-page",
                     "/projects/00000000-0000-4000-8000-000000000000/queries"):
            responses.append(client.get(path, follow_redirects=True))
            responses.append(client.get(path, headers={"HX-Request": "true"}))
        shop.run(lambda s: admin.revoke_key(s, key))
        responses.append(client.get(project_url(shop), follow_redirects=True))
        responses.append(client.get(project_url(shop), headers={"HX-Request": "true"}))
    for response in responses:
        assert key not in response.get_data(as_text=True)
        assert all(key not in value for _, value in response.headers.items())
        assert key not in response.request.url
    assert all(key not in cookie.value for cookie in client._cookies.values())
    assert key not in caplog.text
    assert key[-12:] not in caplog.text
