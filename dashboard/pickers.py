"""The options of the queries page's filter pickers, drawn for the fields that own the pickers
(filter_fields): a code picker's groups of options as HTML, and the tag picker's options.

A whole page lists ~450 options, mostly the same ones view after view: each option and the
long tail of a picker are drawn once and kept (Markup.format is slow).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from markupsafe import Markup

from queryapi import QueryFilters, Tag
from weblib.tag_names import fold_tag_name

from .rows import NOTHING, chip_html

OPTION = Markup('<label class="option" data-option="{key}"><input type="checkbox" '
                'name="{name}" value="{code}"{checked}> {label} '
                '<span class="option__count" data-count></span></label>')
CHECKED = Markup(" checked")


def _options_html(name: str, options, checked: bool) -> Markup:
    return NOTHING.join(_option_html(name, code, label, checked) for code, label in options)


@lru_cache(maxsize=4096)
def _option_html(name: str, code: str, label: str, checked: bool) -> Markup:
    """One option, drawn once."""
    return OPTION.format(key=label.lower(), name=name, code=code,
                         checked=CHECKED if checked else NOTHING, label=label)


@lru_cache(maxsize=64)
def _rest_html(name: str, every: tuple[tuple[str, str], ...], listed: frozenset[str]) -> Markup:
    """The long tail of a picker (every code not chosen or seen): the same for most views of a
    project, so drawn once."""
    return _options_html(name, (pair for pair in every if pair[0] not in listed), False)


def code_groups(name: str, chosen: tuple[str, ...], seen: set[str],
                every: tuple[tuple[str, str], ...], label, all_label: str):
    """(group label, options as HTML): chosen codes first, then those seen in this project,
    then all the others."""
    chosen_set = set(chosen)
    seen_options = sorted(((code, label(code)) for code in seen if code not in chosen_set),
                          key=lambda pair: pair[1].casefold())
    listed = frozenset(chosen_set | seen)
    groups = [
        ("Chosen", _options_html(name, ((c, label(c)) for c in chosen), True)),
        ("In this project", _options_html(name, seen_options, False)),
        (all_label, _rest_html(name, every, listed)),
    ]
    return [(group_label, html) for group_label, html in groups if html]


@dataclass(frozen=True)
class TagOption:
    name: str
    chip: Markup
    checked: bool
    excluded: bool = False
    description: str | None = None


def tag_options(tags: list[Tag], filters: QueryFilters) -> list[TagOption]:
    """Each tag of the project, chosen or excluded as the filter has it, then the names the
    filter chooses that no tag has."""
    chosen = {fold_tag_name(name) for name in filters.tag_names}
    excluded = {fold_tag_name(name) for name in filters.exclude_tag_names}
    options = [TagOption(tag.name, chip_html(tag.name, tag.color, description=tag.description),
                         fold_tag_name(tag.name) in chosen, fold_tag_name(tag.name) in excluded,
                         tag.description)
               for tag in tags]
    known = {fold_tag_name(tag.name) for tag in tags}
    options += [TagOption(name, chip_html(name, None), True)
                for name in filters.tag_names if fold_tag_name(name) not in known]
    return options
