"""The Tags page's Edit and Merge (with Undo) through the routes, against the embedded service:
what the API holds afterwards is the ground truth; descriptions in the pickers and on chips;
the activity log; and, against a deployment without the extensions, no Edit or Merge at all."""

from __future__ import annotations

import re

from dashboard.viewstate import QueryView
from queryapi import QueryFilters
from tests.dashboard.bulk_helpers import api_of, page, post, tag_names_by_query, text_of
from tests.support.dashboard import AuthActions, csrf_token

DESCRIPTION = "Queries that name one of our brands."


def tags_page(client, world) -> str:
    response = client.get(f"/projects/{world.project_id}/tags")
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    return response.get_data(as_text=True)


def edit_url(world, tag_id: int) -> str:
    return f"/projects/{world.project_id}/tags/{tag_id}/edit"


def merge_url(world, tag_id: int) -> str:
    return f"/projects/{world.project_id}/tags/{tag_id}/merge"


def submit(client, url: str, data: dict, html: str):
    return post(client, url, data, html, htmx=False)


def service_tags(app, world) -> dict:
    with api_of(app, world) as api:
        return {tag.name: tag for tag in api.iter_tags(world.project_id)}


def counts(app, world) -> dict[int, int]:
    with api_of(app, world) as api:
        return dict(api.facets(world.project_id).tags)


def edit(client, world, tag_id: int, **values):
    form = client.get(edit_url(world, tag_id)).get_data(as_text=True)
    return submit(client, edit_url(world, tag_id), values, form)


def test_each_tag_offers_edit_and_merge_named_after_it(signed_in, shop):
    html = tags_page(signed_in, shop)
    for name, tag_id in shop.tags.items():
        assert (f'href="{edit_url(shop, tag_id)}">Edit<span class="visually-hidden"> {name}'
                '</span></a>') in html
        assert (f'href="{merge_url(shop, tag_id)}">Merge<span class="visually-hidden"> {name}'
                '</span></a>') in html


def test_edit_saves_name_colour_and_description_shown_in_pickers_and_chips(
        app, signed_in, shop):
    brand = shop.tags["brand"]
    form = signed_in.get(edit_url(shop, brand)).get_data(as_text=True)
    assert 'value="brand"' in form and ">Description</label>" in form
    response = submit(signed_in, edit_url(shop, brand), {
        "name": "Brand", "color": "0B5394", "description": f"  {DESCRIPTION} "}, form)
    assert response.status_code == 302
    tag = service_tags(app, shop)["Brand"]
    assert (tag.id, tag.color, tag.description) == (brand, "#0b5394", DESCRIPTION)
    listed = tags_page(signed_in, shop)
    assert "Saved the tag “Brand”." in text_of(listed)
    assert f'title="{DESCRIPTION}"' in listed  # the chip says it on hover and focus
    # The bulk picker: the checkbox keeps the tag's name, the description is its secondary text.
    picker = signed_in.get(f"/projects/{shop.project_id}/bulk/picker",
                           query_string={"action": "add"}, headers={"HX-Request": "true"})
    body = picker.get_data(as_text=True)
    assert re.search(rf'value="{brand}" aria-label="Brand" aria-describedby="apply-tag-about-'
                     rf'{brand}">.*?<span class="option__description" id="apply-tag-about-'
                     rf'{brand}">{DESCRIPTION}</span>', body)
    # The queries page's filter picker and its rows' chips.
    view = QueryView(QueryFilters(tag_names=("Brand",)))
    queries = page(signed_in, shop, view.query_string().lstrip("?"))
    assert re.search(rf'aria-label="Brand" aria-describedby="(tag-about-\d+)">.*?'
                     rf'<span class="option__description" id="\1">{DESCRIPTION}</span>',
                     queries)
    assert re.search(rf'<span class="chip chip--small"[^>]* title="{DESCRIPTION}[^"]*">Brand'
                     r'</span>', queries)
    # The rule form's tags to add.
    rule_form = signed_in.get(f"/projects/{shop.project_id}/rules/new").get_data(as_text=True)
    assert re.search(rf'aria-label="Brand" aria-describedby="rule-tag-about-{brand}">.*?'
                     rf'<span class="option__description" id="rule-tag-about-{brand}">'
                     rf'{DESCRIPTION}</span>', rule_form)
    # Taken away again: no description anywhere.
    assert edit(signed_in, shop, brand, name="Brand", color="#0b5394",
                description="").status_code == 302
    assert service_tags(app, shop)["Brand"].description is None
    assert DESCRIPTION not in tags_page(signed_in, shop)


def test_edit_refuses_with_sentences_and_changes_nothing(app, signed_in, shop):
    brand = shop.tags["brand"]
    before = service_tags(app, shop)
    long = edit(signed_in, shop, brand, name="brand", color="#1f77b4", description="x" * 301)
    assert long.status_code == 422
    assert "A description can have at most 300 characters; this one has 301." in \
        text_of(long.get_data(as_text=True))
    control = edit(signed_in, shop, brand, name="brand", color="#1f77b4",
                   description="two\tparts")
    assert "The description cannot contain tabs, line breaks or other control characters." \
        in text_of(control.get_data(as_text=True))
    taken = edit(signed_in, shop, brand, name="SA\u200bLE", color="#1f77b4", description="")
    assert taken.status_code == 409
    assert "This project already has a tag named “sale”" in text_of(
        taken.get_data(as_text=True))
    # It offers to merge the tag into the one of that name: the merge page, that tag chosen.
    offer = re.search(r'<a href="([^"]+)">Merge “brand” into “sale”</a>',
                      taken.get_data(as_text=True))
    merge_page = signed_in.get(offer.group(1).replace("&amp;", "&")).get_data(as_text=True)
    assert re.search(rf'value="{shop.tags["sale"]}" checked', merge_page)
    assert service_tags(app, shop) == before


def invalid_fields(html: str) -> dict[str, str]:
    """Each field marked invalid (its id) and the text of the error its aria-describedby
    names."""
    found = {}
    for tag in re.findall(r"<(?:input|textarea)[^>]*>", html):
        if 'aria-invalid="true"' not in tag:
            continue
        field = re.search(r'id="([^"]+)"', tag).group(1)
        described = re.search(r'aria-describedby="([^"]+)"', tag).group(1).split()
        errors = [re.search(rf'<p class="field__error" id="{name}">(.*?)</p>', html, re.S)
                  for name in described]
        found[field] = " ".join(error.group(1) for error in errors if error)
    return found


def test_a_refused_field_is_marked_with_its_own_sentence(signed_in, shop):
    """Beside the sentences above the form, each field refused says why under itself, and
    screen readers hear it with the field (aria-invalid, aria-describedby)."""
    brand = shop.tags["brand"]
    both = edit(signed_in, shop, brand, name="", color="blue", description="fine")
    assert invalid_fields(both.get_data(as_text=True)) == {
        "tag-edit-name": "Give the tag a name.",
        "tag-edit-colour": "The colour is # followed by six hexadecimal digits, such as "
                           "#1f77b4."}
    long = edit(signed_in, shop, brand, name="brand", color="#1f77b4", description="x" * 301)
    assert invalid_fields(long.get_data(as_text=True)) == {
        "tag-edit-description": "A description can have at most 300 characters; this one "
                                "has 301."}
    taken = edit(signed_in, shop, brand, name="SALE", color="#1f77b4", description="")
    assert list(invalid_fields(taken.get_data(as_text=True))) == ["tag-edit-name"]


def test_merge_then_undo_from_the_tags_page_with_exact_counts(app, signed_in, shop):
    brand, sale = shop.tags["brand"], shop.tags["sale"]
    counts_before, names_before = counts(app, shop), tag_names_by_query(app, shop)
    form = signed_in.get(merge_url(shop, brand)).get_data(as_text=True)
    assert "<legend>Merge into</legend>" in form
    assert f'value="{brand}"' not in form  # not into itself
    refused = submit(signed_in, merge_url(shop, brand), {}, form)
    assert refused.status_code == 422
    assert "Choose the tag to merge it into." in text_of(refused.get_data(as_text=True))

    merged = submit(signed_in, merge_url(shop, brand), {"into": str(sale)}, form)
    assert merged.status_code == 302
    after = tag_names_by_query(app, shop)
    assert after[("running shoes", "en", "US")] == {"sale"}
    assert "brand" not in service_tags(app, shop)
    assert counts(app, shop)[sale] == 3 and brand not in counts(app, shop)
    html = tags_page(signed_in, shop)
    assert "Merged “brand” into “sale”: 2 queries changed." in text_of(html)
    assert ">Undo</button>" in html
    assert "Merged “brand”" not in text_of(tags_page(signed_in, shop))  # said once

    edit_id = re.search(r'name="edit" value="([0-9a-f]+)"', html).group(1)
    undone = submit(signed_in, f"/projects/{shop.project_id}/tags/unmerge", {"edit": edit_id},
                    html)
    assert undone.status_code == 302
    assert counts(app, shop) == counts_before
    assert tag_names_by_query(app, shop) == names_before
    assert service_tags(app, shop)["brand"].id == brand
    assert "Undone: “brand” is back with its queries as they were (2 queries changed)." in \
        text_of(tags_page(signed_in, shop))
    # The activity log keeps both, and the merge no longer offers Undo.
    activity = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert "Merged tag “brand” into “sale”" in activity
    assert "Undid the merge of “brand” into “sale”" in activity
    assert "(undone since)" in text_of(activity)
    assert 'aria-label="Undo: Merged tag' not in activity
    again = submit(signed_in, f"/projects/{shop.project_id}/tags/unmerge", {"edit": edit_id},
                   html)
    assert again.status_code == 302
    assert "was undone already" in text_of(tags_page(signed_in, shop))


def test_undo_of_a_merge_a_later_merge_depends_on_says_which_to_undo_first(
        app, signed_in, shop):
    """brand → sale here, then sale → question through the API: the first merge's Undo is
    refused with the service's sentence, and nothing changes; undone in reverse order, the
    queries are as they were."""
    brand, sale, question = shop.tags["brand"], shop.tags["sale"], shop.tags["question"]
    names_before = tag_names_by_query(app, shop)
    form = signed_in.get(merge_url(shop, brand)).get_data(as_text=True)
    submit(signed_in, merge_url(shop, brand), {"into": str(sale)}, form)
    html = tags_page(signed_in, shop)
    edit_id = re.search(r'name="edit" value="([0-9a-f]+)"', html).group(1)
    with api_of(app, shop) as api:
        later = api.merge_tag(shop.project_id, sale, question)
    merged = tag_names_by_query(app, shop)

    refused = submit(signed_in, f"/projects/{shop.project_id}/tags/unmerge", {"edit": edit_id},
                     html)
    assert refused.status_code == 302
    assert ("The merge of “brand” was not undone: “sale” was merged into “question” after "
            "this merge. Undo the merge of “sale” into “question” first.") in \
        text_of(tags_page(signed_in, shop))
    assert tag_names_by_query(app, shop) == merged
    with api_of(app, shop) as api:
        api.unmerge_tag(shop.project_id, later.operation)
    submit(signed_in, f"/projects/{shop.project_id}/tags/unmerge", {"edit": edit_id}, html)
    assert tag_names_by_query(app, shop) == names_before


def test_a_merge_can_be_undone_from_the_activity_log(app, signed_in, shop):
    brand, local = shop.tags["brand"], shop.tags["local"]
    form = signed_in.get(merge_url(shop, brand)).get_data(as_text=True)
    submit(signed_in, merge_url(shop, brand), {"into": str(local)}, form)
    activity = signed_in.get(f"/projects/{shop.project_id}/activity").get_data(as_text=True)
    assert 'aria-label="Undo: Merged tag “brand” into “local”">Undo</button>' in activity
    edit_id = re.search(r'name="edit" value="([0-9a-f]+)"', activity).group(1)
    submit(signed_in, f"/projects/{shop.project_id}/tags/unmerge", {"edit": edit_id}, activity)
    assert service_tags(app, shop)["brand"].id == brand


def test_without_the_extensions_there_is_no_edit_or_merge(external, reference_only, shop):
    client = external.test_client()
    AuthActions(client, shop).sign_in()
    html = tags_page(client, shop)
    assert ">Edit<" not in html and ">Merge<" not in html
    assert client.get(edit_url(shop, shop.tags["brand"])).status_code == 404
    token = csrf_token(html)
    response = post(client, merge_url(shop, shop.tags["brand"]),
                    {"into": str(shop.tags["sale"])}, token=token, htmx=False)
    assert response.status_code == 404
    assert not any(path.startswith("/api/tags/merge") or path.startswith("/api/tags/update")
                   for _method, path in reference_only.proxy.requests)
