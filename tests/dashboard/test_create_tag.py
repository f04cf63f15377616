"""A new tag from the tag picker, through the routes: "Create tag “…”" where the API offers the
extension (learned once per session), the new tag ticked in the picker drawn again, names the
project has, bad names, a busy service — and, against a deployment without the extension, no
button at all. The API is the ground truth."""

from __future__ import annotations

import html as html_module
import re

import pytest

from service.org import admin, palette
from tests.dashboard.bulk_helpers import (
    api_of,
    bulk_url,
    key,
    keys_in,
    page,
    post,
    tag_names_by_query,
    text_of,
)
from tests.support.dashboard import AuthActions, csrf_token

OPENAPI = "/api/openapi.json"
CREATE_BUTTON = re.compile(
    r'<button type="button" class="button button--link" data-picker-create\s+'
    r'hx-post="(/projects/[^"]+/bulk/tags)"[^>]*>Create tag</button>')


def picker(client, world, action: str = "add", **args) -> str:
    response = client.get(f"/projects/{world.project_id}/bulk/picker",
                          query_string={"action": action, **args},
                          headers={"HX-Request": "true"})
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    return response.get_data(as_text=True)


def create_url(world) -> str:
    return f"/projects/{world.project_id}/bulk/tags"


def create(client, world, name: str, html: str, action: str = "add", **fields):
    return post(client, create_url(world), {"action": action, "name": name, **fields}, html)


def service_tags(app, world) -> dict[str, object]:
    with api_of(app, world) as api:
        return {tag.name: tag for tag in api.iter_tags(world.project_id)}


def ticked_ids(html: str) -> set[int]:
    return {int(value) for value in re.findall(
        r'name="apply_tag" value="(\d+)" checked', html)}


def finder_value(html: str) -> str | None:
    match = re.search(r'data-picker-find value="([^"]*)"', html)
    return html_module.unescape(match.group(1)) if match else None


# --- offered where the API offers it ---------------------------------------------------------


@pytest.mark.parametrize("action", ["add", "replace"])
def test_add_and_replace_pickers_offer_to_create_a_tag(signed_in, shop, action):
    html = picker(signed_in, shop, action)
    match = CREATE_BUTTON.search(html)
    assert match, html
    assert match.group(1) == create_url(shop)
    assert 'data-picker-create-row hidden' in html  # picker.js shows it for a name no tag has
    assert 'hx-target="[data-bulk-feedback]"' in match.group(0)


def test_the_quick_edit_picker_offers_it_too_but_remove_does_not(app, signed_in, shop):
    edit = picker(signed_in, shop, "edit", row=key(app, shop, "running shoes"),
                  had=[shop.tags["brand"]])
    assert CREATE_BUTTON.search(edit)
    remove = picker(signed_in, shop, "remove")
    assert "data-picker-create" not in remove and "Create tag" not in remove


def test_what_the_api_offers_is_asked_once_per_session(app, auth, shop, api_calls):
    auth.sign_in()
    client = auth.client
    api_calls.reset()
    for action in ("add", "replace", "remove", "add", "edit"):
        args = {"row": key(app, shop, "running shoes")} if action == "edit" else {}
        picker(client, shop, action, **args)
    page(client, shop)
    assert api_calls.paths[OPENAPI] == 1
    # An edit empties the caches of tags, not what the deployment offers.
    html = page(client, shop, "sort=query&size=100")
    assert post(client, bulk_url(shop), {
        "action": "add", "apply_tag": str(shop.tags["sale"]), "sort": "query", "size": "100",
        "selected": [keys_in(html)["running shoes"]]}, html).status_code == 200
    picker(client, shop)
    assert api_calls.paths[OPENAPI] == 1
    # A new session asks again.
    auth.sign_out()
    auth.sign_in()
    picker(client, shop)
    assert api_calls.paths[OPENAPI] == 2


# --- creating --------------------------------------------------------------------------------


def test_creating_ticks_the_new_tag_with_what_was_ticked_and_it_can_be_applied(
        app, signed_in, shop, api_calls):
    html = page(signed_in, shop, "sort=query&size=100")
    picker(signed_in, shop)
    api_calls.reset()
    response = create(signed_in, shop, "  Winter Sale ", html,
                      apply_tag=[str(shop.tags["brand"])])
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.headers["HX-Retarget"] == "[data-bulk-dialog-body]"
    assert response.headers["HX-Reswap"] == "innerHTML"
    body = response.get_data(as_text=True)
    # One create and one fresh read of the tags; the deployment is not asked again.
    assert api_calls.paths["/api/tags/create"] == 1
    assert api_calls.paths["/api/tags/list"] == 1
    assert api_calls.paths[OPENAPI] == 0

    created = service_tags(app, shop)["Winter Sale"]
    assert created.color in palette.PALETTE
    assert ticked_ids(body) == {created.id, shop.tags["brand"]}
    assert re.search(rf'value="{created.id}" checked> <span class="chip" '
                     rf'style="background-color:{created.color};color:#[0-9a-f]{{6}}">'
                     r'Winter Sale</span>', body)
    assert finder_value(body) == "Winter Sale"
    assert "Created the tag “Winter Sale”. It is ticked, ready to apply." in text_of(body)
    assert '<h2 id="bulk-dialog-title" class="dialog__title">Add tags</h2>' in body

    # The session's tag cache has it: the next picker shows it without asking the API.
    api_calls.reset()
    assert f'value="{created.id}">' in picker(signed_in, shop)
    assert api_calls.paths["/api/tags/list"] == 0

    # Apply it, with what was ticked, to two selected rows.
    keys = keys_in(html)
    applied = post(signed_in, bulk_url(shop), {
        "action": "add", "apply_tag": [str(created.id), str(shop.tags["brand"])],
        "sort": "query", "size": "100",
        "selected": [keys["zapatillas running"], keys["laufschuhe damen"]]},
        html)
    assert applied.status_code == 200, applied.get_data(as_text=True)
    assert ">Winter Sale</span>" in applied.get_data(as_text=True)
    after = tag_names_by_query(app, shop)
    assert after[("zapatillas running", "es", "ES")] == {"Winter Sale", "brand"}
    assert after[("laufschuhe damen", "de", "AT")] == {"Winter Sale", "brand", "local"}


def test_replace_keeps_its_words_and_the_quick_edit_keeps_its_row(app, signed_in, shop):
    html = page(signed_in, shop)
    replaced = create(signed_in, shop, "exact set", html, action="replace")
    assert replaced.status_code == 200
    assert '<h2 id="bulk-dialog-title" class="dialog__title">Replace tags</h2>' in \
        replaced.get_data(as_text=True)

    row = key(app, shop, "where to buy running shoes")
    had = [str(shop.tags["question"]), str(shop.tags["local"])]
    edited = create(signed_in, shop, "for this row", html, action="edit", row=row, had=had,
                    apply_tag=[str(shop.tags["question"])])  # local unticked meanwhile
    body = edited.get_data(as_text=True)
    assert edited.status_code == 200, body
    new = service_tags(app, shop)["for this row"]
    assert "Tags of <strong>where to buy running shoes</strong>" in body
    assert html_module.unescape(re.search(r'name="row" value="([^"]+)"', body).group(1)) == row
    assert sorted(re.findall(r'name="had" value="(\d+)"', body)) == sorted(had)
    assert ticked_ids(body) == {shop.tags["question"], new.id}


@pytest.mark.parametrize("typed", ["BRAND", "brand ", "Bra\u200bnd", "ｂｒａｎｄ"])
def test_a_name_the_project_has_offers_that_tag_instead(app, signed_in, shop, typed):
    html = page(signed_in, shop)
    before = service_tags(app, shop)
    response = create(signed_in, shop, typed, html, apply_tag=[str(shop.tags["sale"])])
    body = response.get_data(as_text=True)
    assert response.status_code == 200, body
    assert ("This project already has a tag named “brand” (names are compared as they read: "
            "capital letters, spaces and invisible characters make no difference), so no new "
            "one was created.") in text_of(body)
    assert re.search(rf'<button type="button" class="button" data-use-tag="{shop.tags["brand"]}">'
                     r'Use “brand”</button>', body)
    assert ticked_ids(body) == {shop.tags["sale"]}  # what was ticked; "brand" is offered
    assert finder_value(body) == "brand"
    assert service_tags(app, shop) == before


def test_a_tag_made_elsewhere_since_the_cache_was_filled_is_found_after_the_409(
        app, signed_in, shop, api_calls):
    html = page(signed_in, shop)
    picker(signed_in, shop)  # the session's tags are cached now
    made = shop.run(lambda s: admin.create_tag(s, shop.project_id, "Made Elsewhere", "#123456"))
    api_calls.reset()
    response = create(signed_in, shop, "made elsewhere", html)
    body = response.get_data(as_text=True)
    assert response.status_code == 200, body
    assert api_calls.paths["/api/tags/create"] == 1  # answered 409
    assert "already has a tag named “Made Elsewhere”" in text_of(body)
    assert f'data-use-tag="{made}">Use “Made Elsewhere”</button>' in body
    assert [name for name in service_tags(app, shop) if name.casefold() == "made elsewhere"] \
        == ["Made Elsewhere"]


def test_a_hostile_name_is_created_as_text_and_shown_escaped(app, signed_in, shop):
    html = page(signed_in, shop)
    name = '<img src=x onerror="alert(1)"> & </label><script>alert(2)</script>'
    response = create(signed_in, shop, name, html)
    body = response.get_data(as_text=True)
    assert response.status_code == 200, body
    assert name in service_tags(app, shop)
    assert "<script>" not in body and "<img" not in body
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in body
    assert finder_value(body) == name


@pytest.mark.parametrize(("name", "sentence"), [
    ("", "Type the new tag's name in “Find a tag” first."),
    ("    ", "Type the new tag's name in “Find a tag” first."),
    ("x" * 201, "A tag's name can have at most 200 characters; this one has 201. Nothing was "
                "created."),
    ("tab\there", "A tag's name cannot contain tabs, line breaks or other control characters. "
                  "Nothing was created."),
])
def test_a_name_that_cannot_be_a_tag_is_a_sentence_in_the_picker(
        app, signed_in, shop, name, sentence):
    html = page(signed_in, shop)
    before = service_tags(app, shop)
    response = create(signed_in, shop, name, html)
    assert response.status_code == 400
    assert "HX-Retarget" not in response.headers  # into the picker's message area
    assert 'role="alert" data-feedback' in response.get_data(as_text=True)
    assert sentence in text_of(response.get_data(as_text=True))
    assert service_tags(app, shop) == before


def test_the_services_refusal_is_passed_on_in_a_sentence(app, signed_in, shop):
    html = page(signed_in, shop)
    response = create(signed_in, shop, "ß" * 150, html)  # 300 characters once case is folded
    assert response.status_code == 400
    assert text_of(response.get_data(as_text=True)).startswith(
        "The service did not accept that name: 'name': must be at most 200 characters")


def test_the_remove_picker_and_unknown_actions_create_nothing(app, signed_in, shop):
    html = page(signed_in, shop)
    for action in ("remove", "", "drop"):
        response = create(signed_in, shop, "sneaky", html, action=action)
        assert response.status_code == 400
        assert "That is not something the tag picker can do." in response.get_data(as_text=True)
    assert "sneaky" not in service_tags(app, shop)


def test_without_the_csrf_token_nothing_is_created(app, signed_in, shop):
    response = post(signed_in, create_url(shop), {"action": "add", "name": "forged"}, token="")
    assert response.status_code == 400
    assert "security check expired" in response.get_data(as_text=True)
    assert "forged" not in service_tags(app, shop)


def test_a_rate_limited_create_is_a_sentence_in_the_picker(app, signed_in, shop):
    html = page(signed_in, shop)
    picker(signed_in, shop)  # projects, tags and what the API offers are cached now
    shop.set_limits(1000, 1, 100_000)  # the minute's budget is spent already
    response = create(signed_in, shop, "too fast", html)
    body = text_of(response.get_data(as_text=True))
    assert response.status_code == 429
    assert "HX-Retarget" not in response.headers
    assert re.search(r"made a lot of requests in a short time, so the tag was not created\. "
                     r"Please try again in \d+ seconds?\.", body), body
    shop.set_limits(1000, 100_000, 1_000_000)
    assert "too fast" not in service_tags(app, shop)


def test_another_organizations_project_is_not_found(app, signed_in, shop):
    html = page(signed_in, shop)
    _org, _key, their_project = shop.new_org("Rival")
    response = post(signed_in, f"/projects/{their_project}/bulk/tags",
                    {"action": "add", "name": "planted"}, html)
    assert response.status_code == 404


# --- a deployment without the extension ------------------------------------------------------


def test_against_a_deployment_without_the_extension_there_is_no_button(
        external, reference_only, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    for action in ("add", "replace", "add"):
        html = picker(client, shop, action)
        assert "data-picker-create" not in html and "Create tag" not in html
        assert 'aria-label="Find a tag"' in html
    assert reference_only.proxy.requests.count(("GET", OPENAPI)) == 1
    # And a forged request is refused with a sentence, nothing sent to the API.
    token = csrf_token(page(client, shop))
    response = post(client, create_url(shop), {"action": "add", "name": "forged"}, token=token)
    assert response.status_code == 404
    assert "This Tagdesk service cannot create tags, so nothing was created." in \
        response.get_data(as_text=True)
    assert ("POST", "/api/tags/create") not in reference_only.proxy.requests
