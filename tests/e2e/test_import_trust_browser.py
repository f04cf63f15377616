"""A file with a blank line and a Tags column whose cells use ";" and "|" in turn, imported
through the settings' Columns page in a browser, at a laptop's width (1280 px) and a phone's
(390 px): the Check says the blank line once and counts the separators, the separator is
chosen in its list, the report says the blank line once; the next file of that shape opens
with what was chosen for it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from service.org import accounts
from tests.e2e.test_settings_import_browser import EMAIL, PASSWORD, import_file, sign_in
from tests.support.e2e import csp_errors

pytestmark = pytest.mark.browser

MIXED = ('Keyword,Tags\nlaufschuhe,price; cargo\n\nturnschuhe,price;brand\n'
         'stiefel,"""a; b""; c"\nsandalen,price | cargo\n')
SEPARATORS = "Tags cells use “;” in 3 rows and “|” in 1 row: choose the separator."


@pytest.fixture
def service_config(service_config, tmp_path):
    return {**service_config, "IMPORTS_FOLDER": str(tmp_path / "imports")}


@pytest.fixture
def site(live_service, world):
    world.run(lambda s: accounts.create_user(s, world.org_id, EMAIL, PASSWORD))
    live_service.world = world
    return live_service


def upload(page, site, path) -> None:
    page.goto(f"{site.url}/settings/projects/{site.world.project_id}")
    import_file(page, path)
    expect(page.get_by_role("heading", name=f"Columns of “{path.name}”", level=1)) \
        .to_be_visible()


def check(page) -> None:
    page.get_by_role("button", name="Check the file", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text("Checked, nothing changed")


@pytest.mark.parametrize(("device", "width"), [("page", 1280), ("phone", 390)])
def test_blank_lines_and_separators_are_said_and_chosen(device, width, request, site,
                                                        tmp_path):
    page = request.getfixturevalue(device)
    sign_in(page, site, f"/settings/projects/{site.world.project_id}")
    path = tmp_path / "tags.csv"
    path.write_text(MIXED, encoding="utf-8")
    upload(page, site, path)
    page.get_by_label("Language for every row", exact=True).fill("de")
    page.get_by_label("Country for every row", exact=True).fill("DE")
    page.get_by_label("Create tags that do not exist yet").check()
    check(page)
    status = page.get_by_role("status")
    expect(status).to_contain_text(
        "4 will be added, 0 already present, 0 rejected, 1 blank line passed over.")
    expect(status).to_contain_text(SEPARATORS)
    page.get_by_label("Tags separator", exact=True).select_option("|")
    check(page)
    expect(page.get_by_role("status")).not_to_contain_text("Tags cells use")
    page.get_by_role("button", name="Import queries", exact=True).click()
    expect(page.get_by_role("status")).to_contain_text(
        "The import is finished: 4 added, 0 already present, 0 rejected, 1 blank line "
        "passed over.")
    # The next file of this shape opens with what was chosen for it.
    upload(page, site, path)
    expect(page.get_by_label("Tags separator", exact=True)).to_have_value("|")
    expect(page.get_by_label("Language for every row", exact=True)).to_have_value("de")
    expect(page.get_by_label("Country for every row", exact=True)).to_have_value("DE")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert csp_errors(page) == []
