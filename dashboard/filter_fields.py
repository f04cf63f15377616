"""The filters of the queries view: one class a field, and FIELDS, the one list of them.

A field says everything the dashboard does with it: its names in the address (`address`)
and in the API's body (`body`, QueryFilters' fields), how its values are read from the
address and cleaned (`read`, and what is dropped, `ignored`), how it is written back
(`params`), its removable chips (`chips`), its words in a sentence ("matching language German
(de)", `phrase`) and in a rule's summary (`summary`), the API's extension fields it needs and
the filter without them (`extension`, `beyond_reference`, `as_reference`), and its picker:
the template partial that draws it (`picker`), what that template is given
(`picker_context`, from the page's `PickerPage`; `saw`: what the page's rows tell it) and
the counts beside its options (`counts`, painted by static/counts.js). QueryView, chips,
wording, saved views, rules and the queries page read the fields from FIELDS instead of
naming each one.

Values from the address are taken leniently: anything a browser, a colleague or an attacker
can put in a query string gives a valid filter, and what could not be used is named
(`Ignored`) for the page to say.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from flask import has_request_context, request

from queryapi import NUMBER_NAMES, Capabilities, Facets, Query, QueryFilters, Tag
from weblib.tag_names import fold_tag_name
from weblib.text_rules import blank_forbidden

from . import apiclient, names, pickers, suggestions
from .chips import chip_style
from .figures import LABELS, bound_text, count_text
from .names import joined
from .rows import chip_html

MAX_TEXT = 500
MAX_TAG_NAME = 200
MAX_VALUES = 50  # per multi-valued filter
SHOWN_VALUE = 40  # characters of an ignored value quoted back on the page
YES = ("1", "true", "yes", "on")
TAG_MATCHES = ("any", "all")

CODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,34}")


def clean_text(value: str, limit: int) -> str:
    """Characters no text may hold (weblib.text_rules) become spaces; surrounding space goes;
    at most `limit` characters."""
    return blank_forbidden(value).strip()[:limit].strip()


def _unique(values, key=lambda v: v) -> tuple[str, ...]:
    seen, kept = set(), []
    for value in values:
        if value and key(value) not in seen:
            seen.add(key(value))
            kept.append(value)
    return tuple(kept[:MAX_VALUES])


def tag_names(values: list[str]) -> tuple[str, ...]:
    """Tag names of the address: cleaned, each once (as tag names compare)."""
    return _unique((clean_text(v, MAX_TAG_NAME) for v in values), key=str.casefold)


@dataclass(frozen=True)
class Ignored:
    """One value of the address that the view does without: `what` it was, `why`."""

    what: str
    why: str

    def __str__(self) -> str:
        return f"{self.what} ({self.why})"


def quoted(value: str) -> str:
    """A value from the address as the page quotes it back: printable, short, in quotes."""
    text = clean_text(value, 10 * SHOWN_VALUE)
    return f"“{text[:SHOWN_VALUE]}…”" if len(text) > SHOWN_VALUE else f"“{text}”"


# --- chips ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChipTag:
    name: str
    style: str  # '' for a name of no known tag (drawn neutral)


@dataclass(frozen=True)
class FilterChip:
    """One removable filter: `kind` and `text` say it in words ("Tags" "product and price");
    a tag filter also draws its tags, coloured, joined by `joiner`. `remove_qs`: the view's
    address without it."""

    kind: str
    text: str
    remove_qs: str
    tags: tuple[ChipTag, ...] = ()
    joiner: str = ""


def _chip_tags(names_: tuple[str, ...], tags_by_name: Mapping[str, Tag]) -> tuple[ChipTag, ...]:
    found = []
    for name in names_:
        tag = tags_by_name.get(fold_tag_name(name))
        found.append(ChipTag(tag.name if tag else name,
                             chip_style(tag.color if tag else None).style))
    return tuple(found)


# A chip's link: the view's address with these filters instead of its own.
Link = Callable[[QueryFilters], str]


def _numbers(pairs) -> dict[str, str]:
    return {str(value): f"{count:,}" for value, count in pairs}


@dataclass(frozen=True)
class PickerPage:
    """What the queries page knows as it draws its pickers; each field takes what its own
    picker needs."""

    project_id: str
    filters: QueryFilters  # the view's
    tags: list[Tag]  # the project's
    numbers: tuple[str, ...]  # the numbers some query of the project knows
    capabilities: Capabilities


# --- the fields -----------------------------------------------------------------------------

# What a view drops where the API has none of the tag logic, as the page names it.
TAG_LOGIC_UNOFFERED = Ignored("all of, without and untagged",
                              "this service filters by tags only as any of them")


class FilterField:
    """One filter of the queries view; each method is about this field alone."""

    address: tuple[str, ...] = ()  # its GET parameters (none: not in a view's address)
    body: tuple[str, ...] = ()  # its fields of QueryFilters (the API's body)
    picker = ""  # the template partial of its picker ('' when it has none of its own)
    said_last = False  # in a sentence, after the fields chosen from lists
    # The API's extension fields it needs beyond the reference (`beyond_reference`), and
    # what the page says where the deployment lacks one (Capabilities.filter_fields).
    extension: tuple[str, ...] = ()
    unoffered: Ignored | None = None

    def read(self, args) -> dict:
        """Its values of QueryFilters from the address (`args`: a MultiDict). Never raises."""
        return {}

    def ignored(self, args) -> list[Ignored]:
        """What `read` drops from `args`, named (empty values are no request)."""
        return []

    def params(self, filters: QueryFilters) -> list[tuple[str, str]]:
        """Its canonical GET parameters (defaults left out)."""
        return []

    def chips(self, filters: QueryFilters, tags_by_name: Mapping[str, Tag],
              link: Link) -> list[FilterChip]:
        return []

    def phrase(self, filters: QueryFilters) -> str:
        """Its part of 'queries matching language German (de), text “schuhe”', or ''."""
        return ""

    def summary(self, filters: QueryFilters) -> str:
        """Its part of a rule's 'Text contains “günstig” · German (de)', or ''."""
        return ""

    def known(self, project_id: str, filters: QueryFilters) -> tuple[QueryFilters,
                                                                    list[Ignored]]:
        """The filter without its values the project cannot match (a code no standard has and
        no query uses, a name of no tag), and those values, named."""
        return filters, []

    def saw(self, project_id: str, rows: list[Query]) -> None:
        """Keep what a page of the project's queries shows that its picker offers."""

    def picker_context(self, page: PickerPage) -> dict:
        """The values its picker's template draws (whole pages only)."""
        return {}

    def counts(self, facets: Facets, filters: QueryFilters,
               tags: list[Tag]) -> dict[str, dict[str, str]]:
        """The numbers beside its picker's options, by name and value: an option's input's
        (or the data-count-name and data-count-value of the place that shows it)."""
        return {}

    def beyond_reference(self, filters: QueryFilters) -> bool:
        """Whether the filter needs this field's `extension` fields."""
        return False

    def as_reference(self, filters: QueryFilters) -> QueryFilters:
        """The filter as a deployment without the extension can show it."""
        return filters


class Text(FilterField):
    """A part of the query's text (the page's search box)."""

    address, body, said_last = ("q",), ("text",), True

    def read(self, args) -> dict:
        return {"text": clean_text(args.get("q") or "", MAX_TEXT)}

    def params(self, filters):
        return [("q", filters.text)] if filters.text else []

    def chips(self, filters, tags_by_name, link):
        if not filters.text:
            return []
        return [FilterChip("Search", f"“{filters.text}”", link(replace(filters, text="")))]

    def phrase(self, filters):
        return f"text “{filters.text}”" if filters.text else ""

    def summary(self, filters):
        return f"Text contains “{filters.text}”" if filters.text else ""


class Pattern(FilterField):
    """A regular expression on the text: a rule's, from the rule form (views have none)."""

    body, said_last = ("pattern",), True

    def phrase(self, filters):
        return f"pattern “{filters.pattern}”" if filters.pattern else ""

    def summary(self, filters):
        return f"Text matches “{filters.pattern}”" if filters.pattern else ""


def _used(project_id: str, filters: QueryFilters) -> bool:
    """Some query of the project matches (one look)."""
    return apiclient.client().list_queries(project_id, filters, page=1,
                                           limit=1).page.total_records > 0


@lru_cache(maxsize=1)
def _country_codes() -> frozenset[str]:
    return frozenset(code for code, _label in names.all_countries())


class Codes(FilterField):
    """Language or country codes, any of them (a code picker)."""

    noun, plural, upper, attribute = "", "", False, ""
    row = ""  # a Query's attribute holding the code
    seen_at = 0  # where apiclient.seen_codes keeps the codes seen in the project
    groups, all_label = "", ""  # its picker's option groups (template variable); the last's label

    @property
    def name(self) -> str:
        return self.address[0]

    def label(self, code: str) -> str:
        raise NotImplementedError

    def all_codes(self) -> tuple[tuple[str, str], ...]:
        """(code, label) of every standard code, in the picker's order."""
        raise NotImplementedError

    def standard(self, code: str) -> bool:
        raise NotImplementedError

    def known(self, project_id, filters):
        # The API takes any code, so the data may hold codes no standard has: one look, only
        # for such codes.
        seen = apiclient.seen_codes(project_id)[self.seen_at]
        codes = getattr(filters, self.attribute)
        odd = tuple(code for code in codes if code not in seen and not self.standard(code))
        if not odd or _used(project_id, QueryFilters(**{self.attribute: odd})):
            return filters, []
        return (replace(filters, **{self.attribute: tuple(c for c in codes if c not in odd)}),
                [Ignored(f"{self.noun} {quoted(code)}", f"no such {self.noun} code")
                 for code in odd])

    def saw(self, project_id, rows):
        apiclient.seen_codes(project_id)[self.seen_at].update(
            getattr(query, self.row) for query in rows)

    def picker_context(self, page):
        seen = apiclient.seen_codes(page.project_id)[self.seen_at]
        return {self.groups: pickers.code_groups(
            self.name, getattr(page.filters, self.attribute), seen, self.all_codes(), self.label,
            self.all_label)}

    def read(self, args) -> dict:
        codes = (v.strip() for v in args.getlist(self.name))
        codes = (c.upper() if self.upper else c.lower() for c in codes if CODE.fullmatch(c))
        return {self.attribute: _unique(codes)}

    def ignored(self, args):
        return [Ignored(f"{self.noun} {quoted(value)}", f"not a {self.noun} code")
                for value in args.getlist(self.name)
                if value.strip() and not CODE.fullmatch(value.strip())]

    def params(self, filters):
        return [(self.name, code) for code in getattr(filters, self.attribute)]

    def chips(self, filters, tags_by_name, link):
        codes = getattr(filters, self.attribute)
        return [FilterChip(self.noun.capitalize(), self.label(code), link(replace(
            filters, **{self.attribute: tuple(c for c in codes if c != code)})))
            for code in codes]

    def phrase(self, filters):
        codes = getattr(filters, self.attribute)
        if not codes:
            return ""
        return ((self.noun if len(codes) == 1 else self.plural) + " "
                + joined([self.label(code) for code in codes], "or"))

    def summary(self, filters):
        return joined([self.label(code) for code in getattr(filters, self.attribute)], "or")

    def counts(self, facets, filters, tags):
        return {self.name: _numbers(getattr(facets, self.attribute))}


class Languages(Codes):
    address, body, picker = ("lang",), ("languages",), "filters/languages.html"
    noun, plural, attribute = "language", "languages", "languages"
    row, seen_at, groups, all_label = "language", 0, "language_groups", "All languages"

    def label(self, code):
        return names.language_label(code)

    def all_codes(self):
        return names.all_languages()

    def standard(self, code):
        return names.language_name(code) != code


class Countries(Codes):
    address, body, picker = ("country",), ("countries",), "filters/countries.html"
    noun, plural, upper, attribute = "country", "countries", True, "countries"
    row, seen_at, groups, all_label = "country", 1, "country_groups", "All countries"

    def label(self, code):
        return names.country_label(code)

    def all_codes(self):
        return names.all_countries()

    def standard(self, code):
        return code in _country_codes()


def without_tags(filters: QueryFilters, tags: tuple[str, ...] = (),
                 not_tags: tuple[str, ...] = ()) -> tuple[QueryFilters, list[Ignored]]:
    """The filter without these names of no tag of the project (chosen, excluded), and those
    names, named."""
    ignored = [Ignored(f"tag {quoted(name)}", "no such tag in this project")
               for name in (*tags, *not_tags)]
    if not ignored:
        return filters, []
    return replace(filters, tag_names=tuple(n for n in filters.tag_names if n not in tags),
                   exclude_tag_names=tuple(n for n in filters.exclude_tag_names
                                           if n not in not_tags)), ignored


class Tags(FilterField):
    """Tags the query carries, any or all of them (`tagmatch`, an extension). Its picker also
    draws the fields that exclude tags and ask for none."""

    address, body = ("tag", "tagmatch"), ("tag_names", "tag_ids", "tag_match")
    picker = "filters/tags.html"
    extension, unoffered = ("tagMatch",), TAG_LOGIC_UNOFFERED

    def read(self, args) -> dict:
        match = (args.get("tagmatch") or "").strip().lower()
        return {"tag_names": tag_names(args.getlist("tag")),
                "tag_match": match if match in TAG_MATCHES else "any"}

    def ignored(self, args):
        match = (args.get("tagmatch") or "").strip()
        if match and match.lower() not in TAG_MATCHES:
            return [Ignored(f"tag match {quoted(match)}", "choose any or all")]
        return []

    def params(self, filters):
        pairs = [("tag", name) for name in filters.tag_names]
        if filters.tag_names and filters.tag_match != "any":
            pairs.append(("tagmatch", filters.tag_match))
        return pairs

    @staticmethod
    def every(filters: QueryFilters) -> bool:
        return filters.tag_match == "all" and len(filters.tag_names) > 1

    def chips(self, filters, tags_by_name, link):
        if not filters.tag_names:
            return []
        # One chip for the chosen tags, which say how they combine ("Tag a or b").
        tags = _chip_tags(filters.tag_names, tags_by_name)
        joiner = "and" if self.every(filters) else "or"
        return [FilterChip("Tags" if self.every(filters) else "Tag",
                           joined([tag.name for tag in tags], joiner),
                           link(replace(filters, tag_names=(), tag_match="any")), tags,
                           joiner)]

    def phrase(self, filters):
        chosen = filters.tag_names
        if not chosen:
            return ""
        return (("tag " if len(chosen) == 1 else "tags ")
                + joined([f"‘{n}’" for n in chosen],
                         "and" if filters.tag_match == "all" else "or"))

    def summary(self, filters):
        chosen = filters.tag_names
        if not chosen:
            return ""
        every = self.every(filters)
        return ("Tags " if every else "Tag ") + joined(chosen, "and" if every else "or")

    def counts(self, facets, filters, tags):
        by_id = {tag.id: tag for tag in tags}
        found = {by_id[tag_id].name: count for tag_id, count in facets.tags if tag_id in by_id}
        # The picker names tags as the address does; one spelled otherwise is counted too.
        for name in filters.tag_names:
            tag = next((tag for tag in tags if fold_tag_name(tag.name) == fold_tag_name(name)),
                       None)
            if tag is not None:
                found[name] = found.get(tag.name, 0)
        return {"tag": _numbers(found.items())}

    def known(self, project_id, filters):
        # The names of tags it excludes too (NotTags): one look at the cached tags, and once
        # more afresh where a name is not among them.
        named = (*filters.tag_names, *filters.exclude_tag_names)
        if not named:
            return filters, []

        def unknown(tags: list[Tag]) -> tuple[str, ...]:
            known = {fold_tag_name(tag.name) for tag in tags}
            return tuple(name for name in named if fold_tag_name(name) not in known)

        missing = unknown(apiclient.tags(project_id))
        if missing:
            missing = unknown(apiclient.tags(project_id, refresh=True))
        return without_tags(filters, tuple(n for n in missing if n in filters.tag_names),
                            tuple(n for n in missing if n in filters.exclude_tag_names))

    def picker_context(self, page):
        # The API's tag logic draws the Untagged and Exclude controls (NotTags, Untagged).
        return {"tag_options": pickers.tag_options(page.tags, page.filters),
                "tag_logic": page.capabilities.tag_logic}

    def beyond_reference(self, filters):
        return self.every(filters)

    def as_reference(self, filters):
        return replace(filters, tag_match="any")


class NotTags(FilterField):
    """Tags the query must not carry (an extension; the Exclude beside each tag)."""

    address, body = ("nottag",), ("exclude_tag_names", "exclude_tag_ids")
    extension, unoffered = ("excludeTagNames",), TAG_LOGIC_UNOFFERED

    def read(self, args) -> dict:
        return {"exclude_tag_names": tag_names(args.getlist("nottag"))}

    def params(self, filters):
        return [("nottag", name) for name in filters.exclude_tag_names]

    def chips(self, filters, tags_by_name, link):
        excluded = filters.exclude_tag_names
        chips = []
        for name in excluded:
            tags = _chip_tags((name,), tags_by_name)
            chips.append(FilterChip("Not tag", tags[0].name, link(replace(
                filters, exclude_tag_names=tuple(n for n in excluded if n != name))), tags))
        return chips

    def phrase(self, filters):
        excluded = filters.exclude_tag_names
        return "not tag " + joined([f"‘{n}’" for n in excluded], "or") if excluded else ""

    def summary(self, filters):
        excluded = filters.exclude_tag_names
        return "Not tag " + joined(list(excluded), "or") if excluded else ""

    def beyond_reference(self, filters):
        return bool(filters.exclude_tag_names)

    def as_reference(self, filters):
        return replace(filters, exclude_tag_names=())


class Untagged(FilterField):
    """Queries with no tag (an extension; never together with chosen tags, which win)."""

    address, body = ("untagged",), ("untagged",)
    extension, unoffered = ("untagged",), TAG_LOGIC_UNOFFERED

    def read(self, args) -> dict:
        asked = (args.get("untagged") or "").strip().lower() in YES
        return {"untagged": asked and not tag_names(args.getlist("tag"))}

    def ignored(self, args):
        value = (args.get("untagged") or "").strip()
        if value and value.lower() not in YES + ("0", "false", "no", "off"):
            return [Ignored(f"untagged {quoted(value)}", "use untagged=1")]
        if value.lower() in YES and tag_names(args.getlist("tag")):
            return [Ignored("untagged", "a query with no tag cannot have a chosen tag: the "
                                        "chosen tags are shown")]
        return []

    def params(self, filters):
        return [("untagged", "1")] if filters.untagged else []

    def chips(self, filters, tags_by_name, link):
        if not filters.untagged:
            return []
        return [FilterChip("Untagged", "", link(replace(filters, untagged=False)))]

    def phrase(self, filters):
        return "no tag" if filters.untagged else ""

    def summary(self, filters):
        return "Untagged" if filters.untagged else ""

    def counts(self, facets, filters, tags):
        return {"untagged": _numbers([("1", facets.untagged)])}

    def beyond_reference(self, filters):
        return filters.untagged

    def as_reference(self, filters):
        return replace(filters, untagged=False)


# A bound as the address may write it: 5000, 5,000, 4.5, -1, 1e-05 (at most 30 characters).
NUMBER = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][+-]?\d+)?")
LARGEST = 2 ** 53  # the largest number the service keeps exactly


def read_number(text: str) -> int | float | None:
    """A bound of the address, or None when it is no number (or too large to keep)."""
    text = text.strip().replace("\u00a0", "").replace(" ", "")
    if not text or len(text) > 30 or not NUMBER.fullmatch(text) or not any(
            c.isdigit() for c in text):
        return None
    text = text.replace(",", "")
    value: int | float = float(text) if any(c in text for c in ".eE") else int(text)
    return value if math.isfinite(value) and abs(value) <= LARGEST else None


def read_bound(name: str, text: str) -> tuple[int | float | None, str]:
    """A range's bound of the number `name` as typed, or None and why not ("" when nothing is
    typed). A CTR is typed as the table writes it ("5%", "5 %") or as a share (0.05); over
    100 % it is refused in words, since "5" would be 500 % and match nothing."""
    text = text.strip()
    if not text:
        return None, ""
    percent = name == "ctr" and text.endswith("%")
    value = read_number(text[:-1] if percent else text)
    if value is None:
        return None, "not a number"
    if name == "ctr":
        value = value / 100 if percent else value
        if value > 1:
            return None, "a CTR is at most 100 %" + (
                "" if percent else f": write {text}% for {text} per cent")
    return value, ""


def typed_bound(name: str, value: int | float | None) -> str:
    """A bound as its input shows it (read again by read_bound): a CTR as a percentage."""
    if value is None:
        return ""
    return f"{plain_number(round(value * 100, 9))}%" if name == "ctr" else plain_number(value)


def plain_number(value: int | float) -> str:
    """A bound as the address writes it: 100, 4.5."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


# What each number's input takes, where it is not plain.
HINTS = {"ctr": "A percentage or a share: 5% or 0.05.", "position": "1 is the top.",
         "difficulty": "From 0 to 100."}


def said(name: str) -> str:
    """A number's name inside a sentence: 'volume', 'CTR'."""
    label = LABELS[name]
    return label if label.isupper() else label.lower()


class Numbers(FilterField):
    """Ranges of the numbers a query carries (an extension): `volume_min=100&volume_max=5000`,
    inclusive, either side open; the picker offers the numbers the project has."""

    address = tuple(f"{name}_{side}" for name in NUMBER_NAMES for side in ("min", "max"))
    body, picker = ("metric_ranges",), "filters/numbers.html"
    extension = ("metricRanges",)
    unoffered = Ignored("number ranges", "this service keeps no numbers per query")

    @staticmethod
    def _bounds(args, name: str) -> tuple[str, str]:
        return ((args.get(f"{name}_min") or "").strip(), (args.get(f"{name}_max") or "").strip())

    def read(self, args) -> dict:
        ranges = {}
        for name in NUMBER_NAMES:
            least, greatest = (read_bound(name, text)[0] for text in self._bounds(args, name))
            if (least is None and greatest is None) or (
                    least is not None and greatest is not None and least > greatest):
                continue
            ranges[name] = (least, greatest)
        return {"metric_ranges": ranges}

    def ignored(self, args):
        ignored = []
        for name in NUMBER_NAMES:
            texts = self._bounds(args, name)
            bounds = [read_bound(name, text) for text in texts]
            for text, (_value, why), words in zip(texts, bounds, ("at least", "at most"),
                                                  strict=True):
                if why:
                    ignored.append(Ignored(f"{LABELS[name]} {words} {quoted(text)}", why))
            least, greatest = (value for value, _why in bounds)
            if least is not None and greatest is not None and least > greatest:
                ignored.append(Ignored(
                    f"{LABELS[name]} at least {typed_bound(name, least)} and at most "
                    f"{typed_bound(name, greatest)}", "nothing is both: give the smaller number "
                                                 "first"))
        return ignored

    def params(self, filters):
        pairs = []
        for name in NUMBER_NAMES:
            least, greatest = filters.metric_ranges.get(name, (None, None))
            if least is not None:
                pairs.append((f"{name}_min", plain_number(least)))
            if greatest is not None:
                pairs.append((f"{name}_max", plain_number(greatest)))
        return pairs

    @staticmethod
    def words(name: str, bounds) -> str:
        """'at least 100', 'at most 5,000', '100 to 5,000' (in the person's locale)."""
        least, greatest = (None if value is None else bound_text(name, value)
                           for value in bounds)
        if least is None:
            return f"at most {greatest}"
        return f"at least {least}" if greatest is None else f"{least} to {greatest}"

    def _ordered(self, filters):
        return [(name, filters.metric_ranges[name]) for name in NUMBER_NAMES
                if name in filters.metric_ranges]

    def chips(self, filters, tags_by_name, link):
        return [FilterChip(LABELS[name], self.words(name, bounds), link(replace(
            filters, metric_ranges={other: kept for other, kept in filters.metric_ranges.items()
                                    if other != name})))
            for name, bounds in self._ordered(filters)]

    def phrase(self, filters):
        return ", ".join(f"{said(name)} {self.words(name, bounds)}"
                         for name, bounds in self._ordered(filters))

    def summary(self, filters):
        return " · ".join(f"{LABELS[name]} {self.words(name, bounds)}"
                          for name, bounds in self._ordered(filters))

    def counts(self, facets, filters, tags):
        # How many queries of the view know each number (data-count-name="known").
        return {"known": {name: count_text(count)
                          for name, count in facets.metric_counts.items()}}

    def picker_context(self, page):
        """For each number the project has (and each the view filters by), its label, its
        inputs' names and values, and what it takes."""
        ranges = page.filters.metric_ranges
        inputs = []
        for name in NUMBER_NAMES:
            if name not in page.numbers and name not in ranges:
                continue
            least, greatest = ranges.get(name, (None, None))
            inputs.append({"name": name, "label": LABELS[name], "hint": HINTS.get(name, ""),
                           "min": typed_bound(name, least), "max": typed_bound(name, greatest)})
        return {"number_inputs": inputs}

    def beyond_reference(self, filters):
        return bool(filters.metric_ranges)

    def as_reference(self, filters):
        return replace(filters, metric_ranges={})


def _page_tags() -> list[Tag]:
    """The tags of the project whose page this request is for (none outside one)."""
    project_id = (request.view_args or {}).get("project_id") if has_request_context() else None
    return apiclient.tags(project_id) if project_id else []


class Suggested(FilterField):
    """Queries suggested one of these tags (an extension): `suggested=price` in the address,
    by name; the API names them by id, at the project's default confidence."""

    address, body = ("suggested",), ("suggested_tag_ids", "min_confidence")
    extension = ("suggestedTagIds",)
    unoffered = Ignored("suggested tags", "this service suggests no tags")

    @staticmethod
    def _named(args) -> tuple[str, ...]:
        return tag_names(args.getlist("suggested"))

    def read(self, args) -> dict:
        named = self._named(args)
        if not named:
            return {}
        ids = {fold_tag_name(tag.name): tag.id for tag in _page_tags()}
        return {"suggested_tag_ids": tuple(dict.fromkeys(
            ids[fold_tag_name(name)] for name in named if fold_tag_name(name) in ids))}

    def ignored(self, args):
        named = self._named(args)
        known = {fold_tag_name(tag.name) for tag in _page_tags()} if named else set()
        return [Ignored(f"suggested tag {quoted(name)}", "no such tag in this project")
                for name in named if fold_tag_name(name) not in known]

    @staticmethod
    def names(filters: QueryFilters) -> list[str]:
        by_id = {tag.id: tag.name for tag in _page_tags()} if filters.suggested_tag_ids else {}
        return [by_id[tag_id] for tag_id in filters.suggested_tag_ids if tag_id in by_id]

    def params(self, filters):
        return [("suggested", name) for name in self.names(filters)]

    def chips(self, filters, tags_by_name, link):
        named = self.names(filters)
        if not named:
            return []
        return [FilterChip("Suggested", joined(named, "or"),
                           link(replace(filters, suggested_tag_ids=(), min_confidence=None)),
                           _chip_tags(tuple(named), tags_by_name), "or")]

    def phrase(self, filters):
        named = self.names(filters)
        return "suggested " + joined([f"‘{n}’" for n in named], "or") if named else ""

    def summary(self, filters):
        named = self.names(filters)
        return "Suggested " + joined(named, "or") if named else ""

    def counts(self, facets, filters, tags):
        by_id = {tag.id: tag.name for tag in tags}
        return {"suggested": _numbers((by_id[tag_id], count)
                                      for tag_id, count in facets.suggested if tag_id in by_id)}

    def picker_context(self, page):
        if not page.capabilities.suggestions:
            return {"suggested_options": []}
        counts = suggestions.suggested_counts(suggestions.status(page.project_id))
        chosen = set(page.filters.suggested_tag_ids)
        return {"suggested_options": [
            {"name": tag.name, "checked": tag.id in chosen,
             "chip": chip_html(tag.name, tag.color)}
            for tag in page.tags if tag.id in chosen or counts.get(tag.id)]}

    def beyond_reference(self, filters):
        return bool(filters.suggested_tag_ids)

    def as_reference(self, filters):
        return replace(filters, suggested_tag_ids=(), min_confidence=None)


def one_suggested(filters: QueryFilters) -> int | None:
    """The tag a view is filtered by as suggested, when it is exactly one (Accept all)."""
    chosen = filters.suggested_tag_ids
    return chosen[0] if len(chosen) == 1 else None


# Every filter of a queries view, in the address's order (a rule's summary says them in this
# order too).
FIELDS: tuple[FilterField, ...] = (Text(), Pattern(), Languages(), Countries(), Tags(),
                                   NotTags(), Untagged(), Suggested(), Numbers())


# --- the whole filter, field by field ------------------------------------------------------


def read(args) -> tuple[QueryFilters, list[Ignored]]:
    """The filter of an address, and what of it could not be used. Never raises."""
    values: dict = {}
    ignored: list[Ignored] = []
    for field in FIELDS:
        values.update(field.read(args))
        ignored += field.ignored(args)
    return QueryFilters(**values), ignored


def params(filters: QueryFilters) -> list[tuple[str, str]]:
    return [pair for field in FIELDS for pair in field.params(filters)]


def chips(filters: QueryFilters, tags_by_name: Mapping[str, Tag], link: Link) -> list[FilterChip]:
    return [chip for field in FIELDS for chip in field.chips(filters, tags_by_name, link)]


def phrase(filters: QueryFilters) -> str:
    """'language German (de), text “schuhe”' — or '' for no filter at all."""
    ordered = sorted(FIELDS, key=lambda field: field.said_last)
    return ", ".join(part for part in (field.phrase(filters) for field in ordered) if part)


def summary(filters: QueryFilters) -> str:
    """'Text contains “günstig” · German (de) · Switzerland (CH)' — or 'Every query'."""
    return " · ".join(part for part in (field.summary(filters) for field in FIELDS)
                      if part) or "Every query"


def counts(facets: Facets, filters: QueryFilters, tags: list[Tag]) -> dict:
    found: dict = {}
    for field in FIELDS:
        found.update(field.counts(facets, filters, tags))
    return found


def offered(filters: QueryFilters,
            extensions: frozenset[str]) -> tuple[QueryFilters, list[Ignored]]:
    """The filter as this deployment can show it (`extensions`: the filter fields it marks
    as extensions, Capabilities.filter_fields), and what it could not, named once each."""
    dropped = [field for field in FIELDS if field.beyond_reference(filters)
               and not set(field.extension) <= extensions]
    for field in dropped:
        filters = field.as_reference(filters)
    return filters, list(dict.fromkeys(field.unoffered for field in dropped
                                       if field.unoffered is not None))


def picker_templates() -> list[str]:
    """The template partials of the pickers, in order."""
    return [field.picker for field in FIELDS if field.picker]


def known(project_id: str, filters: QueryFilters) -> tuple[QueryFilters, list[Ignored]]:
    """The filter without the values the project cannot match, and those values, named."""
    ignored: list[Ignored] = []
    for field in FIELDS:
        filters, unknown = field.known(project_id, filters)
        ignored += unknown
    return filters, ignored


def saw(project_id: str, rows: list[Query]) -> None:
    """Let each field keep what a page of the project's queries shows."""
    for field in FIELDS:
        field.saw(project_id, rows)


def picker_context(page: PickerPage) -> dict:
    """What the pickers' templates draw, every field's."""
    found: dict = {}
    for field in FIELDS:
        found.update(field.picker_context(page))
    return found


# --- tags by id (as the API keeps saved views and rules) and by name (as the address has) --


def by_ids(filters: QueryFilters, tags: list[Tag]) -> QueryFilters:
    """The filter with its tags named by id (a name of no tag is left out)."""
    ids = {fold_tag_name(tag.name): tag.id for tag in tags}

    def found(named) -> tuple[int, ...]:
        return tuple(ids[fold_tag_name(n)] for n in named if fold_tag_name(n) in ids)

    chosen = found(filters.tag_names)
    return replace(filters, tag_names=(), exclude_tag_names=(),
                   tag_ids=(*filters.tag_ids, *chosen),
                   exclude_tag_ids=(*filters.exclude_tag_ids,
                                    *found(filters.exclude_tag_names)),
                   tag_match=filters.tag_match if len(filters.tag_names) > 1 else "any")


def by_names(filters: QueryFilters, tags: list[Tag]) -> QueryFilters:
    """The filter with its tags named by today's names (a tag deleted since is left out), as
    a view's address names them."""
    known = {tag.id: tag.name for tag in tags}
    chosen = tuple(known[i] for i in filters.tag_ids if i in known)
    return replace(filters, tag_ids=(), exclude_tag_ids=(), tag_names=chosen,
                   exclude_tag_names=tuple(known[i] for i in filters.exclude_tag_ids
                                           if i in known),
                   tag_match=filters.tag_match if len(chosen) > 1 else "any",
                   untagged=filters.untagged and not chosen)
