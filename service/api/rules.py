"""Rules (an extension of the reference API, POST /api/rules/…): tags that apply themselves. A
rule of a project is a condition (a queries/facets body) and tags to add. Rules only add tags,
and act at two moments only: when saved (the dashboard tags what the condition matches, by
queries/list and set-tags) and when queries enter the project (imports: service/engine/
entry_rules.py). A tag taken off by hand is never put back behind anyone's back.

A rule keeps its condition as it was sent, validated, without empty fields (as saved views
keep their filters): tags named in it are resolved whenever it is counted or applied.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, Field, StrictBool
from sqlalchemy import select
from sqlalchemy.orm import Session

from weblib.tag_names import fold_tag_name

from ..bodies.errors import BadRequest, Conflict
from ..bodies.records import query_records, timestamp
from ..bodies.validation import MAX_ID, Int, QueryFilterBody, Strict, ViewName
from ..engine import rule_counts, rule_links
from ..engine.counting import FilterOf
from ..engine.held import Held
from ..org import audit
from ..store.db import begin_write, retried
from ..store.models import Project, Rule, Tag, utcnow
from . import query_filters
from .named_items import NamedItems, lock_project

MAX_RULES = 100  # per project
OPERATION = r"^[0-9a-f]{32}$"
MAX_RULE_TAGS = 100

ITEMS = NamedItems(Rule, "rule")


def _tag_list(value: list[int]) -> list[int]:
    if not value:
        raise ValueError("must name at least one tag")
    return list(dict.fromkeys(value))  # each tag once, in the order sent


TagIds = Annotated[list[Int], Field(max_length=MAX_RULE_TAGS), AfterValidator(_tag_list)]


class RuleListBody(Strict):
    """The list takes no field."""


class RulePreviewBody(Strict):
    condition: QueryFilterBody
    tagIds: TagIds  # noqa: N815


class CreateRuleBody(RulePreviewBody):
    name: ViewName


class RuleIdBody(Strict):
    id: Int


class UpdateRuleBody(RuleIdBody):
    # Absent: kept. The defaults are never validated, so a `null` is a 400.
    name: ViewName = None
    condition: QueryFilterBody = None
    tagIds: TagIds = None  # noqa: N815


class PauseRuleBody(RuleIdBody):
    paused: StrictBool


def _timestamp(value: str) -> datetime:
    try:
        return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        raise ValueError("must be a time as the API gives them, like "
                         "2026-11-28T09:30:00.000Z") from None


def _time_text(value: str) -> str:
    _timestamp(value)
    return value


class ApplyRuleBody(RuleIdBody):
    cursor: Int = Field(0, ge=0)  # where the previous part stopped (a query key)


class UnapplyRuleBody(RuleIdBody):
    # Only the links it added since then (the undo of an apply); absent: all of them.
    since: Annotated[str, Field(max_length=40), AfterValidator(_time_text)] = None
    operation: Annotated[str, Field(pattern=OPERATION)] = None  # carrying one on


class RestoreRuleBody(Strict):
    operation: Annotated[str, Field(pattern=OPERATION)]


def _no_suggestions(body: QueryFilterBody) -> None:
    """A rule acts on entry, before any suggestion is made: its condition names none."""
    if body.suggestedTagIds is not None or body.minConfidence is not None:
        raise BadRequest(["'condition': a rule cannot match by suggestions "
                          "('suggestedTagIds', 'minConfidence'); they change with each "
                          "learning."])


def _condition_text(body: QueryFilterBody) -> str:
    """The condition as stored: its fields as sent, without those that filter nothing."""
    fields = {name: value for name, value in body.model_dump(exclude_defaults=True).items()
              if value not in (None, "", [])}
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":"))


def _condition_of(rule: Rule) -> FilterOf:
    return query_filters.stored(rule.condition)


def _record(rule: Rule, matching: int, carrying: int) -> dict:
    return {
        "id": rule.id,
        "project": rule.project_id,
        "name": rule.name,
        "condition": json.loads(rule.condition),
        "tagIds": json.loads(rule.tag_ids),
        "paused": rule.paused,
        "pausedReason": rule.paused_reason,
        "matching": matching,
        "carrying": carrying,
        "createdAt": timestamp(rule.created_at),
        "updatedAt": timestamp(rule.updated_at),
    }


def _records(session: Session, project_id: str, rules: list[Rule], store: Held) -> list[dict]:
    counted = rule_counts.counts(session, project_id, [
        (_condition_of(rule), json.loads(rule.tag_ids)) for rule in rules], store)
    return [_record(rule, *numbers) for rule, numbers in zip(rules, counted, strict=True)]


def _check_tags(session: Session, project_id: str, tag_ids: list[int]) -> None:
    """A 400 naming the ids that are not tags of the project (another project's alike)."""
    storable = [tag_id for tag_id in tag_ids if 1 <= tag_id <= MAX_ID]
    known = set(session.scalars(select(Tag.id).where(
        Tag.project_id == project_id, Tag.id.in_(storable)))) if storable else set()
    unknown = [str(tag_id) for tag_id in tag_ids if tag_id not in known]
    if unknown:
        session.rollback()
        if len(unknown) == 1:
            raise BadRequest([f"'tagIds': {unknown[0]} is not a tag of this project."])
        raise BadRequest([f"'tagIds': {', '.join(unknown)} are not tags of this project."])


def _logged(session: Session, org_id: str, action: str, rule: Rule) -> None:
    project = session.scalar(select(Project.name).where(Project.id == rule.project_id))
    audit.record_change(session, org_id, action, rule.name, f"In “{project}”, through the API.")


def list_rules(session: Session, project_id: str, store: Held) -> list[dict]:
    rules = session.scalars(select(Rule).where(Rule.project_id == project_id)).all()
    rules = sorted(rules, key=lambda rule: (rule.name_folded, rule.id))
    return _records(session, project_id, rules, store)


def preview(session: Session, project_id: str, body: RulePreviewBody, store: Held) -> dict:
    _no_suggestions(body.condition)
    _check_tags(session, project_id, body.tagIds)
    matching, lacking, rows, tags = rule_counts.preview(session, project_id,
                                                        query_filters.filter_of(body.condition),
                                                        body.tagIds, store)
    return {"matching": matching, "lacking": lacking, "sample": query_records(rows, tags)}


def create_rule(session: Session, project_id: str, body: CreateRuleBody, store: Held) -> dict:
    _no_suggestions(body.condition)
    condition = _condition_text(body.condition)
    query_filters.check(session, project_id, body.condition)  # queries/facets' 400s, first
    folded = fold_tag_name(body.name)
    org_id = lock_project(session, project_id)
    _check_tags(session, project_id, body.tagIds)
    ITEMS.make_room(session, project_id, folded, MAX_RULES,
                    f"This project has {MAX_RULES} rules, as many as a project may have; "
                    "delete one before adding another.")
    now = utcnow()
    rule = Rule(project_id=project_id, name=body.name, name_folded=folded, condition=condition,
                tag_ids=json.dumps(body.tagIds), paused=False, paused_reason=None,
                created_at=now, updated_at=now)
    session.add(rule)
    session.flush()
    _logged(session, org_id, "rule.created", rule)
    ITEMS.committed(session, rule)
    return _records(session, project_id, [rule], store)[0]


def update_rule(session: Session, project_id: str, body: UpdateRuleBody, store: Held) -> dict:
    given = body.model_fields_set - {"id"}
    if body.condition is not None:
        _no_suggestions(body.condition)
        query_filters.check(session, project_id, body.condition)  # a 400 before any change
    org_id = lock_project(session, project_id)
    rule = ITEMS.one(session, project_id, body.id)
    if body.tagIds is not None:
        _check_tags(session, project_id, body.tagIds)
        rule.tag_ids = json.dumps(body.tagIds)
        if rule.paused_reason is not None:  # it has tags again: what paused it is over
            rule.paused, rule.paused_reason = False, None
    if body.name is not None:
        ITEMS.rename(session, rule, body.name)
    if body.condition is not None:
        rule.condition = _condition_text(body.condition)
    if given:
        rule.updated_at = utcnow()
        _logged(session, org_id, "rule.changed", rule)
    ITEMS.committed(session, rule)
    return _records(session, project_id, [rule], store)[0]


def pause_rule(session: Session, project_id: str, body: PauseRuleBody, store: Held) -> dict:
    org_id = lock_project(session, project_id)
    rule = ITEMS.one(session, project_id, body.id)
    if body.paused != rule.paused:
        if not body.paused and not json.loads(rule.tag_ids):
            session.rollback()
            raise BadRequest(["'paused': this rule adds no tag (its last tag was deleted); "
                              "give it a tag with rules/update, which also resumes it."])
        rule.paused, rule.paused_reason = body.paused, None
        rule.updated_at = utcnow()
        _logged(session, org_id, "rule.paused" if body.paused else "rule.resumed", rule)
    ITEMS.committed(session, rule)
    return _records(session, project_id, [rule], store)[0]


def delete_rule(session: Session, project_id: str, body: RuleIdBody) -> dict:
    org_id = lock_project(session, project_id)
    rule = ITEMS.one(session, project_id, body.id)
    _logged(session, org_id, "rule.deleted", rule)
    session.delete(rule)
    session.commit()
    return {"deleted": body.id}


def _count(number: int) -> str:
    return f"{number:,} {'query' if number == 1 else 'queries'}"


TAG_GONE = ("A tag of this rule was deleted or merged into another while the rule was applied, "
            "so this part was not. The queries tagged before it keep their tags "
            "(rules/unapply with since undoes them); apply the rule again to carry on with its "
            "tags as they are now.")


def apply_rule(session: Session, project_id: str, body: ApplyRuleBody, store: Held) -> dict:
    """The next part of the rule's current matches gets its tags (service/engine/
    rule_links.py); paused or not, as the person saving it asks. A 409 when one of its tags
    went (deleted, merged) between reading the rule and holding its tags: nothing of the part
    is written, the parts before stay."""

    def write() -> dict:
        begin_write(session)
        rule = ITEMS.one(session, project_id, body.id)
        try:
            done = rule_links.apply_part(session, project_id, rule.id,
                                         json.loads(rule.tag_ids),
                                         _condition_of(rule),
                                         body.cursor, store)
        except rule_links.TagGone:
            session.rollback()
            raise Conflict(TAG_GONE) from None
        if not body.cursor:
            org_id = session.scalar(select(Project.org_id).where(Project.id == project_id))
            audit.record_change(session, org_id, "rule.applied", rule.name,
                                f"To the {_count(done['matching'])} it matched, through the "
                                "API.")
        session.commit()
        return {**done, "appliedAt": timestamp(done["appliedAt"])}

    return retried(session, write)


def unapply_rule(session: Session, project_id: str, body: UnapplyRuleBody) -> dict:
    """The next part of the links the rule added is taken away, kept for restore."""

    def write() -> dict:
        begin_write(session)
        rule = ITEMS.one(session, project_id, body.id)
        operation = body.operation or uuid.uuid4().hex
        since = _timestamp(body.since) if body.since else None
        done = rule_links.unapply_part(session, project_id, rule.id, since, operation)
        if body.operation is None:
            org_id = session.scalar(select(Project.org_id).where(Project.id == project_id))
            audit.record_change(session, org_id, "rule.unapplied", rule.name,
                                "The tags it had added" + (" since " + body.since if since
                                                           else "") + ", through the API.")
        session.commit()
        return done

    return retried(session, write)


def restore_rule(session: Session, project_id: str, body: RestoreRuleBody) -> dict:
    """The next part of an unapply's links is put back (an operation of another project
    restores nothing)."""

    def write() -> dict:
        begin_write(session)
        done = rule_links.restore_part(session, project_id, body.operation)
        session.commit()
        return done

    return retried(session, write)
