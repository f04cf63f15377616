"""Taking every tag off selected rows is asked first, and the server holds to it: Apply answers
with the question, and only the Confirm it offers (a token signed over the rows and the change)
changes the rows."""

from __future__ import annotations

import html as html_module
import re

from tests.dashboard.bulk_helpers import (
    bulk_url,
    keys_in,
    latest,
    page,
    post,
    tag_names_by_query,
    text_of,
)

HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')
ROWS = ("cheap running shoes", "laufschuhe damen", "running shoes")


def confirm_fields(body: str) -> list[tuple[str, str]]:
    return [(name, html_module.unescape(value)) for name, value in HIDDEN.findall(body)]


def ask(app, signed_in, shop, **fields):
    html = page(signed_in, shop, "size=100")
    keys = keys_in(html)
    before = tag_names_by_query(app, shop)
    data = {"size": "100", "selected": [keys[text] for text in ROWS], **fields}
    asked = post(signed_in, bulk_url(shop), data, html)
    assert asked.status_code == 200, asked.get_data(as_text=True)
    body = asked.get_data(as_text=True)
    assert "Remove every tag from 3 queries?" in text_of(body)
    assert ">Confirm</button>" in body
    assert asked.headers["HX-Retarget"] == "[data-bulk-dialog-body]"
    assert tag_names_by_query(app, shop) == before  # nothing changed yet
    assert latest(app, shop) is None
    return html, body, before


def test_replacing_with_no_tag_asks_first_and_confirm_clears_exactly_those_rows(app,
                                                                              signed_in,
                                                                              shop):
    html, body, before = ask(app, signed_in, shop, action="replace")
    done = post(signed_in, bulk_url(shop), confirm_fields(body), html)
    assert done.status_code == 200, done.get_data(as_text=True)
    after = tag_names_by_query(app, shop)
    for key, names in after.items():
        assert names == (set() if key[0] in ROWS else before[key]), key
    assert latest(app, shop).changed == sum(1 for key in before if key[0] in ROWS
                                            and before[key])


def test_removing_every_tag_of_the_project_asks_first(app, signed_in, shop):
    html, body, _ = ask(app, signed_in, shop, action="remove",
                        apply_tag=[str(tag_id) for tag_id in shop.tags.values()])
    post(signed_in, bulk_url(shop), confirm_fields(body), html)
    after = tag_names_by_query(app, shop)
    assert all(after[key] == set() for key in after if key[0] in ROWS)


def test_a_confirmation_is_for_those_rows_and_that_change_only(app, signed_in, shop):
    html, body, before = ask(app, signed_in, shop, action="replace")
    fields = confirm_fields(body)
    token = dict(fields)["confirmed"]
    keys = keys_in(html)
    for changed in (
            # Another row slipped in.
            [*fields, ("selected", keys["zapatillas running"])],
            # A forged or missing token.
            [(n, "x" if n == "confirmed" else v) for n, v in fields],
            [(n, v) for n, v in fields if n != "confirmed"]):
        again = post(signed_in, bulk_url(shop), changed, html)
        assert again.status_code == 200
        assert "Remove every tag from" in text_of(again.get_data(as_text=True))
        assert tag_names_by_query(app, shop) == before
    # The same token does not make another change go through without a question: a removal of
    # one tag is simply applied.
    one = post(signed_in, bulk_url(shop), {
        "size": "100", "action": "remove", "apply_tag": str(shop.tags["sale"]),
        "selected": [keys[text] for text in ROWS], "confirmed": token}, html)
    assert "Removed ‘sale’" in text_of(one.get_data(as_text=True))


def test_select_all_with_no_tag_asks_with_the_real_count(app, signed_in, shop):
    html = page(signed_in, shop, "q=schuhe")
    before = tag_names_by_query(app, shop)
    asked = post(signed_in, bulk_url(shop), {"action": "replace", "scope": "all",
                                             "q": "schuhe"}, html)
    assert "Remove every tag from" in text_of(asked.get_data(as_text=True))
    assert "matching text “schuhe”?" in text_of(asked.get_data(as_text=True))
    # Confirm without its plan: refused, nothing runs.
    refused = post(signed_in, f"/projects/{shop.project_id}/bulk/confirm", {}, html)
    assert refused.status_code == 400
    assert tag_names_by_query(app, shop) == before
    assert latest(app, shop) is None
