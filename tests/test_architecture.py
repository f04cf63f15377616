"""The layout holds: the import contracts in pyproject.toml (docs/architecture.md), a
dashboard pointed at a remote API loads none of the service, and a filter field's code stays
in its own files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from dashboard import filter_fields
from queryapi import NUMBER_NAMES
from queryapi.records import BODY_NAMES

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_the_import_contracts_are_kept():
    result = subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout


def test_with_a_remote_api_the_dashboard_loads_no_service_module(tmp_path):
    program = (
        "import sys\n"
        "import app\n"
        "app.create_app({'INSTANCE_PATH': sys.argv[1]})\n"
        "print(sorted(name for name in sys.modules\n"
        "             if name.split('.')[0] in ('service', 'embedded')))\n"
    )
    environment = {**os.environ, "TAGDESK_API_URL": "http://127.0.0.1:9/",
                   "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", program, str(tmp_path / "instance")],
                            cwd=ROOT, env=environment, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]", result.stdout


# --- a filter field lives in its own files ------------------------------------------------
#
# One list of filter fields (dashboard/filter_fields.FIELDS): the queries page, its counts and
# its number columns ask each field and name none, so that adding a field touches the files
# docs/architecture.md lists ("Adding a filter field"), not the page's plumbing.

# Modules that serve every field alike. The search box is the page's own (its text is in the
# title), so the field Text is not looked for.
GENERIC = ("blueprints/queries.py", "dashboard/number_columns.py", "dashboard/viewstate.py",
           "static/counts.js", "templates/queries/index.html")
NUMBER_RANGE = re.compile(r"metricRanges|metric_ranges|(?:\}|\b(?:"
                          + "|".join(NUMBER_NAMES) + r"))_(?:min|max)\b")
# The number ranges' homes: the engine (entry_rules re-checks rules with a range when a
# number changes), the body, the client, the field and its picker.
NUMBER_RANGE_HOMES = {"service/engine/entry_rules.py", "service/bodies/validation.py",
                      "queryapi/records.py", "dashboard/filter_fields.py",
                      "templates/filters/numbers.html"}
# `untagged` is the filter field (the count engine, the body, the client, the field and its
# picker) and the facets' count of queries with no tag, which the progress and the report
# show. The picker's script, the chart, the stylesheet and the demo know no field: the
# picker's template declares which choices clear which (data-clears), the report says which
# rows are charted, and its rows that are no tag share one style.
ENGINE = "service/engine/"  # its modules keep the queries with no tag and their sums
UNTAGGED_HOMES = {
    "service/bodies/validation.py", "queryapi/records.py", "dashboard/filter_fields.py",
    "templates/filters/tags.html", "dashboard/facets.py", "templates/partials/progress.html",
    "dashboard/report_table.py"}
MOST_UNTAGGED_FILES = 10  # the engine's modules with the rest


def product_files() -> dict[str, str]:
    """The text of every file of the product: not tests, documents, benchmarks or
    migrations."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {name: (ROOT / name).read_text(errors="replace") for name in listed.split()
            if name.endswith((".py", ".html", ".js", ".css")) and (ROOT / name).is_file()
            and not name.startswith(("tests/", "docs/", "bench/")) and "/migrations/" not in name}


def naming(pattern: re.Pattern) -> set[str]:
    return {name for name, text in product_files().items() if pattern.search(text)}


def field_plumbing() -> re.Pattern:
    """How code reads or writes a filter field: its attribute of the filter
    (`filters.metric_ranges`, `untagged=True`), its address name (`args.get("nottag")`,
    `name="tagmatch"`, `f"{name}_min"`), and the names no other word has, anywhere but in a
    module's name or an address given as an example (`?q=shoe&lang=de`)."""
    forms = [r"\}_(?:min|max)\b"]
    for field in filter_fields.FIELDS:
        if isinstance(field, filter_fields.Text):
            continue
        names = {*field.address, *field.body, *(BODY_NAMES[name] for name in field.body)}
        for name in names:
            forms += [rf"\bfilters\.{name}\b", rf"(?<![\w&?]){name}=(?!=)",
                      rf"""(?:args\.get(?:list)?\(|\bname=)["']{name}["']"""]
            if "_" in name or name != name.lower() or name in ("untagged", "tagmatch", "nottag"):
                forms.append(rf"(?<![\w.]){name}\b")
    return re.compile("|".join(forms))


def test_field_plumbing_is_found_where_it_is():
    plumbing = field_plumbing()
    for line in ('ranges = view.filters.metric_ranges', 'QueryFilters(untagged=True)',
                 'args.getlist("nottag")', '<input name="tagmatch">', 'f"{name}_max"',
                 '{{ number.name }}_min', 'body["excludeTagNames"]'):
        assert plumbing.search(line), line
    for line in ('("country", "Country", True)', 'filter_fields.picker_context(page)',
                 'if a == b', 'self._max = 4', 'from weblib.tag_names import fold_tag_name',
                 "'?q=shoe&lang=de'"):
        assert not plumbing.search(line), line


def test_the_generic_modules_name_no_filter_field():
    plumbing, texts = field_plumbing(), product_files()
    found = {name: plumbing.search(texts[name]).group() for name in GENERIC
             if plumbing.search(texts[name])}
    assert found == {}, f"per-field code in generic modules (filter_fields.py owns it): {found}"


def test_a_number_range_is_named_in_five_files():
    assert naming(NUMBER_RANGE) <= NUMBER_RANGE_HOMES, naming(NUMBER_RANGE) - NUMBER_RANGE_HOMES


def test_untagged_is_named_only_where_it_lives():
    found = {name for name in naming(re.compile("untagged", re.IGNORECASE))
             if not name.startswith(ENGINE)}
    assert found <= UNTAGGED_HOMES, found - UNTAGGED_HOMES
    everywhere = naming(re.compile("untagged", re.IGNORECASE))
    assert len(everywhere) <= MOST_UNTAGGED_FILES, sorted(everywhere)
