"""Result rows as pages show them: tag chips drawn once, relative and exact times, and each
row's identity for its checkbox and quick edit."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import NamedTuple

from markupsafe import Markup

from jobs.deltas import row_key_json
from queryapi import Query, Tag, TagSource

from . import names
from .chips import chip_style, valid_color
from .figures import LABELS, number_text

# --- chips -------------------------------------------------------------------------------------


CHIP = Markup('<span class="{classes}"{style}{title}>{name}</span>')
CHIP_LINK = Markup('<a class="{classes}"{style}{title} href="{href}">{name}</a>')
STYLE = Markup(' style="{}"')
TITLE = Markup(' title="{}"')
NOTHING = Markup("")
# A chip whose origin is known (a rule, a person, a time): said on hover (title) and to
# screen readers (hidden words, after the chip: its own text stays the tag's name).
SOURCED_CHIP = Markup('<span class="{classes}"{style} title="{title}">{name}</span>'
                      '<span class="visually-hidden"> ({origin})</span>')


def chip_title(description: str | None, origin: str = "") -> str:
    """What a chip says when hovered or focused (its title, which is also its accessible
    description): the tag's description, then who or which rule added it; "" for neither."""
    return " — ".join(part for part in (description or "", origin) if part)


def chip_html(name: str, color: object, href: str | None = None, small: bool = False,
              description: str | None = None) -> Markup:
    """A tag chip: the tag's colour as background when it is #RRGGBB, else a neutral chip;
    its description, if any, said on hover and focus (chip_title). (Markup.format escapes
    every value it is given.)"""
    return _chip_html(name, valid_color(color), href, small, chip_title(description))


@lru_cache(maxsize=1024)
def _chip_html(name: str, color: str | None, href: str | None, small: bool,
               title: str) -> Markup:
    """Drawn once per tag: Markup.format is slow, and every page shows the same few chips
    (the tag picker draws all of a project's tags on every whole page)."""
    style = chip_style(color)
    classes = "chip" + (" chip--small" if small else "") + ("" if style.background
                                                            else " chip--neutral")
    style_attribute = STYLE.format(style.style) if style.background else NOTHING
    template = CHIP if href is None else CHIP_LINK
    return template.format(classes=classes, style=style_attribute, href=href or "", name=name,
                           title=TITLE.format(title) if title else NOTHING)


# --- rows ----------------------------------------------------------------------------------------


class Row(NamedTuple):
    """A result row as the template shows it (a named tuple: 200 of them are made per page,
    and a frozen dataclass takes several times longer to build)."""

    id: str
    query: str
    language: str
    country: str
    chips: list[Markup]
    updated_iso: str
    updated_relative: str
    updated_exact: str
    # The row's identity as its checkbox sends it back (id, query, language, country), and
    # its tag ids joined by spaces (the quick edit starts from them; joined here: Jinja's
    # `join` filter took 40 % of a 50-row partial's rendering).
    key: str = ""
    had: str = ""
    # (name, label, text) of each number column (text '' where the query does not know it).
    numbers: tuple[tuple[str, str, str], ...] = ()
    # Its suggested tags, best first (where the API suggests tags).
    suggested: tuple[SuggestedTag, ...] = ()


class SuggestedTag(NamedTuple):
    """A tag suggested to a row: its id and name, its colour (#rrggbb, or '' for none), its
    confidence in words."""

    tag_id: int
    name: str
    color: str
    words: str


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def time_attribute(moment: datetime) -> str:
    """A row's time as its <time datetime> holds it: the API's `updatedAt`, to the millisecond
    (static/colleagues.js sends it back to ask whether the row changed)."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def exact_time(moment: datetime) -> str:
    """'4 Mar 2026, 05:06:07 UTC' — what strftime's '%b %Y, %H:%M:%S' gives in the C locale,
    built without strftime (ten times slower, and a row's title needs one per row)."""
    return (f"{moment.day} {MONTHS[moment.month - 1]} {moment.year}, "
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} UTC")


UNITS = (("year", 365 * 86400), ("month", 30 * 86400), ("week", 7 * 86400),
         ("day", 86400), ("hour", 3600), ("minute", 60))


def relative_time(moment: datetime, now: datetime) -> str:
    """'3 days ago' (Babel's rule: the largest unit of which there is at least 0.85)."""
    seconds = (now - moment).total_seconds()
    if abs(seconds) < 45:
        return "just now"
    for unit, size in UNITS:
        amount = abs(seconds) / size
        if amount >= 0.85:
            whole = max(1, round(amount))
            text = f"{whole} {unit}" + ("" if whole == 1 else "s")
            return f"{text} ago" if seconds > 0 else f"in {text}"
    return "just now"


def tag_origin(source: TagSource, rule_names: dict[int, str]) -> str:
    """Who or which rule added a tag, and when, as far as the service knows: 'Added by the
    rule “price words” on 4 Mar 2026, 05:06:07 UTC', 'Added by the import of Queries.csv on
    …', 'Added by “Ann” (the caller's label) on …', 'Added on …'; an accepted suggestion:
    'Suggested, accepted by Ana on …'."""
    when = f" on {exact_time(source.added_at)}" if source.added_at else ""
    if source.suggested:
        return f"Suggested, accepted{f' by {source.added_by}' if source.added_by else ''}{when}"
    if source.imported_from is not None:
        who = f" by the import of {source.imported_from}"
    elif source.rule_id is not None:
        rule_name = rule_names.get(source.rule_id)
        who = f" by the rule “{rule_name}”" if rule_name else " by a rule since deleted"
    else:
        # Whatever the API caller sent as X-Tagdesk-Actor: said to be a label, not a person
        # the service knows.
        who = f" by “{source.added_by}” (the caller's label)" if source.added_by else ""
    return f"Added{who}{when}" if who or when else ""


def added_by_machine(source: TagSource) -> str:
    """"rule" or "import" for a tag no person added (its chip is marked), else ""."""
    if source.imported_from is not None:
        return "import"
    return "rule" if source.rule_id is not None else ""


def sourced_chip_html(name: str, color: object, origin: str, machine: str = "",
                      description: str | None = None) -> Markup:
    """The chip of a tag whose origin is known: said on hover (title, after the tag's
    description: chip_title) and to screen readers (hidden words, read with the chip). A chip
    a rule or an import added (`machine`: added_by_machine) carries a mark (chip--by-rule,
    chip--by-import: drawn by the stylesheet, so the chip's text stays the tag's name)."""
    style = chip_style(valid_color(color))
    classes = "chip chip--small" + ("" if style.background else " chip--neutral") + (
        f" chip--by-{machine}" if machine else "")
    return SOURCED_CHIP.format(classes=classes, name=name, origin=origin,
                               title=chip_title(description, origin),
                               style=STYLE.format(style.style) if style.background else NOTHING)


def suggested_tags(query: Query, tags_by_id: dict[int, Tag]) -> tuple[SuggestedTag, ...]:
    found = []
    for suggestion in query.suggestions:
        tag = tags_by_id.get(suggestion.tag_id)
        if tag is None or suggestion.tag_id in query.tags:
            continue
        percent = round(suggestion.confidence * 100)
        strength = ("very likely" if suggestion.confidence >= 0.9
                    else "likely" if suggestion.confidence >= 0.7 else "possible")
        found.append(SuggestedTag(tag.id, tag.name, valid_color(tag.color) or "",
                                  f"Suggested: {strength}, {percent} % confident"))
    return tuple(found)


def rows_for(results: tuple[Query, ...], tags_by_id: dict[int, Tag],
             rule_names: dict[int, str] | None = None, columns: tuple[str, ...] = (),
             currency: str | None = None) -> list[Row]:
    """`rule_names`: by rule id, for the chips whose origin the service knows (None: none is
    said); `columns`: the numbers shown (CPC in `currency`)."""
    now = datetime.now(UTC)
    chips: dict[int, Markup] = {}
    rows = []
    for query in results:
        row_chips = []
        sources = {source.tag_id: source for source in query.tag_sources} \
            if query.tag_sources and rule_names is not None else {}
        for tag_id in query.tags:
            source = sources.get(tag_id)
            origin = tag_origin(source, rule_names) if source is not None else ""
            if origin and tag_id in tags_by_id:
                tag = tags_by_id[tag_id]
                row_chips.append(sourced_chip_html(tag.name, tag.color, origin,
                                                   added_by_machine(source),
                                                   tag.description))
                continue
            chip = chips.get(tag_id)
            if chip is None:
                tag = tags_by_id.get(tag_id)
                chip = (chip_html(tag.name, tag.color, small=True,
                                  description=tag.description) if tag is not None
                        else chip_html(f"Tag {tag_id}", None, small=True))
                chips[tag_id] = chip
            row_chips.append(chip)
        updated = query.updated_at
        rows.append(Row(
            id=query.id,
            query=query.query,
            language=names.language_label(query.language),
            country=names.country_label(query.country),
            chips=row_chips,
            updated_iso=time_attribute(updated),
            updated_relative=relative_time(updated, now),
            updated_exact=exact_time(updated),
            key=row_key_json(query),
            had=" ".join(map(str, query.tags)),
            numbers=tuple((name, LABELS[name],
                           number_text(name, query.metrics.get(name), currency))
                          for name in columns),
            suggested=suggested_tags(query, tags_by_id) if query.suggestions else (),
        ))
    return rows
