"""The columns a project's imports chose, remembered per shape of file, so that each tool's
export opens its Columns page with what was chosen for that tool last time (a Search Console
file after a workbook with a Country column: Search Console's language and country, not the
workbook's columns).

A shape is the file's header, each name folded as the column guesser folds it
(import_sources.folded_name): "Top queries" and "TOP QUERIES" are one shape. Kept in
`projects.import_choice` as JSON, {"shapes": {shape: choice}, "last": choice}, the
MAX_SHAPES used last. A file of a shape not seen yet starts from the last choice, but only
with the columns it has and a value for every row where it has no column of it.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace

from ..imports.import_sources import Choice, folded_name, guess
from ..store.db import begin_write, get_session
from ..store.models import Project

MAX_SHAPES = 30  # the shapes of file a project remembers, the least recently used forgotten


def shape_of(header: list[str]) -> str:
    """The header's shape: its named columns' folded names, in order."""
    return ",".join(folded_name(name) for name in header if name.strip())


def remembered(project: Project, header: list[str]) -> Choice:
    """What a file with this header starts from on its Columns page: the choice made for its
    shape last, or else the last choice made; either kept to the columns the file has
    (`for_header`)."""
    stored = _stored(project)
    same = stored["shapes"].get(shape_of(header))
    return for_header(_choice(same or stored["last"]), header, same_shape=bool(same))


def remember(project: Project, header: list[str], choice: Choice) -> None:
    """Keep the choice made (its sheet aside) for files of this header's shape, and as the
    last one; committed."""
    db = get_session()
    begin_write(db)
    row = db.get(Project, project.id)
    stored = _stored(row)
    fields = asdict(replace(choice, sheet=None))
    fields["tags_columns"] = list(choice.tags_columns)
    shapes = stored["shapes"]
    shapes.pop(shape := shape_of(header), None)  # moved to the end: used last
    shapes[shape] = fields
    while len(shapes) > MAX_SHAPES:
        shapes.pop(next(iter(shapes)))
    row.import_choice = json.dumps({"shapes": shapes, "last": fields}, ensure_ascii=False)
    db.commit()


def for_header(choice: Choice, header: list[str], same_shape: bool = False) -> Choice:
    """The choice without the columns this file does not have (never offered as chosen: the
    guess fills them), named as this file spells them, and without a language or country
    for every row where this file has a column of it (an Ahrefs list after a Search Console
    export: its countries, not the one given for every row)."""
    names = {}
    for name in header:
        names.setdefault(folded_name(name), name)

    def kept(name: str | None) -> str | None:
        return names.get(folded_name(name)) if name else None

    tags_columns = tuple(filter(None, map(kept, choice.tags_columns)))
    # ";" always separates tags: remembered, it would only stop the guess of another; and a
    # separator of no tags column would only stand in the way of the guess for this file's.
    separator = None if choice.tags_separator == ";" or not tags_columns \
        else choice.tags_separator
    # A number's column this file has stays chosen, and "none" for a file of the same shape;
    # the others are guessed.
    numbers = tuple((name, kept(column) if column else "") for name, column in choice.numbers
                    if kept(column) or (not column and same_shape))
    columns = replace(choice, query_column=kept(choice.query_column),
                      language_column=kept(choice.language_column), language=None,
                      country_column=kept(choice.country_column), country=None,
                      tags_columns=tags_columns, tags_separator=separator, sheet=None,
                      numbers=numbers)
    found = guess(header, columns)
    return replace(columns, language=None if found.language_column else choice.language,
                   country=None if found.country_column else choice.country)


def _stored(project: Project) -> dict:
    """{"shapes": {shape: fields}, "last": fields} as kept; a choice kept before shapes were
    (a single choice's fields) is the last one."""
    try:
        data = json.loads(project.import_choice or "{}")
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    if "shapes" not in data:
        return {"shapes": {}, "last": data}
    shapes = data["shapes"] if isinstance(data["shapes"], dict) else {}
    last = data.get("last") if isinstance(data.get("last"), dict) else {}
    return {"shapes": shapes, "last": last}


def _choice(fields: dict) -> Choice:
    try:
        return Choice(**{**fields, "tags_columns": tuple(fields.get("tags_columns", ()))})
    except TypeError:  # fields of another version: nothing remembered
        return Choice()
