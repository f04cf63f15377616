"""The dashboard's script stays small modules bound to their components: few listeners on the
whole document or window (each component listens on its own root element), no module over
250 lines, each a closed function (no state shared through globals but the component
registry), every one loaded with `defer` and a versioned address, none left unloaded."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
MAX_PAGE_LISTENERS = 12
MAX_LINES = 250

COMMENTS = re.compile(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*", re.S)
# A listener on the document or the window; htmx.on / htmx.onLoad listen on the body.
PAGE_LISTENER = re.compile(r"\b(?:document|window)\s*\.\s*addEventListener\s*\("
                           r"|\bhtmx\s*\.\s*on(?:Load)?\s*\(")
GLOBAL = re.compile(r"\bwindow\s*\.\s*(\w+)\s*=(?!=)")
SCRIPT_TAG = re.compile(r"<script\b[^>]*>")


def modules() -> dict[str, str]:
    found = {path.name: path.read_text(encoding="utf-8") for path in sorted(STATIC.glob("*.js"))
             if not path.name.startswith("htmx-")}
    assert len(found) > 5, found.keys()
    return found


def code(source: str) -> str:
    return COMMENTS.sub("", source)


def test_at_most_twelve_listeners_on_the_document_or_window():
    listeners = {name: len(PAGE_LISTENER.findall(code(text)))
                 for name, text in modules().items()}
    assert sum(listeners.values()) <= MAX_PAGE_LISTENERS, listeners


def test_the_listener_count_sees_every_way_of_writing_one():
    sample = ('document.addEventListener("click", f);\n'
              'window .addEventListener("resize", f);\n'
              'htmx.onLoad(bind);\n'
              '/* document.addEventListener("in a comment") */\n'
              '// window.addEventListener("in a comment")\n'
              'root.addEventListener("click", f);\n')
    assert len(PAGE_LISTENER.findall(code(sample))) == 3


def test_no_module_is_over_250_lines():
    lengths = {name: text.count("\n") for name, text in modules().items()}
    assert max(lengths.values()) <= MAX_LINES, lengths


def test_each_module_is_a_closed_function_and_only_the_registry_is_global():
    for name, text in modules().items():
        body = code(text).strip()
        assert body.startswith("(function () {\n  \"use strict\";"), name
        assert body.endswith("})();"), name
        assigned = set(GLOBAL.findall(body))
        assert assigned <= ({"Tagdesk"} if name == "components.js" else set()), (name, assigned)


def test_every_module_is_loaded_deferred_with_a_versioned_address():
    templates = "\n".join(path.read_text(encoding="utf-8")
                          for path in (ROOT / "templates").rglob("*.html"))
    tags = SCRIPT_TAG.findall(templates)
    assert tags and all(" defer" in tag for tag in tags), tags
    for name in modules():
        assert re.search(rf"static_url\('{re.escape(name)}'\)|\"{re.escape(name)}\"",
                         templates), name


def test_the_registry_comes_first_on_every_page(client):
    html = client.get("/signin").get_data(as_text=True)
    sources = re.findall(r'<script src="/static/([\w.-]+)\?v=[0-9a-f]{12}" defer>', html)
    assert sources[0].startswith("htmx-") and sources[1] == "components.js", sources
    assert set(sources[1:]) == set(modules()) - {"colleagues.js"}, sources


def test_the_queries_page_loads_the_colleagues_module_after_the_registry(signed_in, shop):
    html = signed_in.get(f"/projects/{shop.project_id}/queries").get_data(as_text=True)
    sources = re.findall(r'<script src="/static/([\w.-]+)\?v=[0-9a-f]{12}" defer>', html)
    assert sources.index("components.js") < sources.index("colleagues.js"), sources
