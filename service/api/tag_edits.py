"""Add and remove tags on many queries (PATCH /api/queries/many/tags-edit, an extension):
each item names a query as set-tags does and says which tags it gains and which it loses;
the tags it has beside those stay as they are when the call commits. A client that edits
tags this way never overwrites what another writer committed after the client read."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field
from sqlalchemy.orm import Session

from ..bodies.errors import BadRequest
from ..bodies.records import tagged_records
from ..bodies.validation import MAX_ITEMS, Code, Int, Strict, Text
from ..engine.tagging import describe_item, item_key, named_messages, write_tags

TagIds = Annotated[list[Int], Field(max_length=MAX_ITEMS)]


class EditTagsItem(Strict):
    query: Text
    language: Code
    country: Code
    add: TagIds = []
    remove: TagIds = []


class EditTagsBody(Strict):
    queries: Annotated[list[EditTagsItem], Field(max_length=MAX_ITEMS)]


def _check_both_ways(items: list[EditTagsItem]) -> None:
    """A tag both added and removed by one item says two things at once: refused."""
    errors = [f"Item {position} ({describe_item(item_key(item))}) both adds and removes "
              f"tag {tag_id}."
              for position, item in enumerate(items)
              for tag_id in sorted(set(item.add) & set(item.remove))]
    if errors:
        raise BadRequest(named_messages(errors))


def edit_tags(session: Session, project_id: str, items: list[EditTagsItem],
              actor: str | None = None) -> list[dict]:
    """Each item's query gains `add` and loses `remove`, all in one transaction; the updated
    records in the order of the items (set-tags' answer)."""
    _check_both_ways(items)
    # Only the tags added must be the project's: one removed that it no longer has (merged
    # away or deleted since the caller read it) is on no query, so removing it is done.
    return tagged_records(write_tags(
        session, project_id, items, lambda item: item.add,
        lambda item, before: (before | set(item.add)) - set(item.remove), actor))
