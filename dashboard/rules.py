"""Rules as people read and write them: a condition in words, the form's fields, and the job
that gives a rule's tags to the queries that match it when it is saved.

A rule's condition is a queries view (text, languages, countries, tag logic, untagged)
optionally narrowed by a pattern; the service keeps it as an API filter with tag ids (an API
extension, feature-detected), and applies the rule to every query that enters the project.
"""

from __future__ import annotations

from dataclasses import dataclass

from queryapi import QueryFilters, Rule, Tag

from . import names, wording
from .saved_views import MAX_NAME, filters_of, name_problem
from .viewstate import MAX_TEXT, QueryView, clean_text

MAX_PATTERN = 1000


def _tag_names(ids, tags_by_id: dict[int, Tag]) -> list[str]:
    return [tags_by_id[i].name for i in ids if i in tags_by_id]


def condition_words(condition: QueryFilters, tags_by_id: dict[int, Tag]) -> str:
    """'Text contains “günstig” · German (de) · Switzerland (CH)' — or 'Every query'."""
    parts = []
    if condition.text:
        parts.append(f"Text contains “{condition.text}”")
    if condition.pattern:
        parts.append(f"Text matches “{condition.pattern}”")
    if condition.languages:
        parts.append(wording.joined([names.language_label(c) for c in condition.languages],
                                    "or"))
    if condition.countries:
        parts.append(wording.joined([names.country_label(c) for c in condition.countries],
                                    "or"))
    chosen = _tag_names(condition.tag_ids, tags_by_id)
    if chosen:
        every = condition.tag_match == "all" and len(chosen) > 1
        parts.append(("Tags " if every else "Tag ")
                     + wording.joined(chosen, "and" if every else "or"))
    excluded = _tag_names(condition.exclude_tag_ids, tags_by_id)
    if excluded:
        parts.append("Not tag " + wording.joined(excluded, "or"))
    if condition.untagged:
        parts.append("Untagged")
    return " · ".join(parts) or "Every query"


def rule_words(rule: Rule, tags_by_id: dict[int, Tag]) -> str:
    """'Text contains “günstig” · German (de) → price'."""
    return (condition_words(rule.condition, tags_by_id) + " → "
            + wording.joined(_tag_names(rule.tag_ids, tags_by_id)))


@dataclass(frozen=True)
class RuleForm:
    """What the rule form sent, read leniently: its problems are sentences, nothing raises."""

    name: str
    pattern: str
    view: QueryView
    tag_ids: tuple[int, ...]
    problems: tuple[str, ...]

    def condition(self, tags: list[Tag]) -> QueryFilters:
        base = filters_of(self.view, tags)
        return QueryFilters(text=base.text, languages=base.languages,
                            countries=base.countries, tag_ids=base.tag_ids,
                            tag_match=base.tag_match, exclude_tag_ids=base.exclude_tag_ids,
                            untagged=base.untagged, pattern=self.pattern)


def read_form(form, view: QueryView, tags: list[Tag]) -> RuleForm:
    name = clean_text(form.get("name") or "", 10 * MAX_NAME)
    pattern = (form.get("pattern") or "").strip()
    by_name = {tag.name: tag.id for tag in tags}
    tag_ids = tuple(dict.fromkeys(by_name[n] for n in form.getlist("add") if n in by_name))
    problems = []
    problem = name_problem(name, "rule")
    if problem:
        problems.append(problem)
    if len(pattern) > MAX_PATTERN:
        problems.append(f"A pattern can be at most {MAX_PATTERN:,} characters; this one has "
                        f"{len(pattern):,}.")
    if not tag_ids:
        problems.append("Choose at least one tag for the rule to add.")
    return RuleForm(name, pattern, view, tag_ids, tuple(problems))


def view_of_condition(condition: QueryFilters, tags: list[Tag]) -> QueryView:
    """The queries view of a rule's condition, without its pattern (views have none)."""
    by_id = {tag.id: tag.name for tag in tags}
    chosen = tuple(by_id[i] for i in condition.tag_ids if i in by_id)
    return QueryView(text=condition.text[:MAX_TEXT], languages=tuple(condition.languages),
                     countries=tuple(condition.countries), tags=chosen,
                     tag_match=condition.tag_match if len(chosen) > 1 else "any",
                     not_tags=tuple(by_id[i] for i in condition.exclude_tag_ids if i in by_id),
                     untagged=condition.untagged and not chosen)
