"""Rules as people read and write them: a condition in words, the form's fields, and the job
that gives a rule's tags to the queries that match it when it is saved.

A rule's condition is a queries view (its filter fields, dashboard/filter_fields.py)
optionally narrowed by a pattern; the service keeps it as an API filter with tag ids (an API
extension, feature-detected), and applies the rule to every query that enters the project.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from queryapi import QueryFilters, Rule, Tag

from . import filter_fields, wording
from .filter_fields import clean_text
from .saved_views import MAX_NAME, name_problem
from .viewstate import QueryView

MAX_PATTERN = 1000


def condition_words(condition: QueryFilters, tags: list[Tag]) -> str:
    """'Text contains “günstig” · German (de) · Switzerland (CH)' — or 'Every query'."""
    return filter_fields.summary(filter_fields.by_names(condition, tags))


def rule_words(rule: Rule, tags: list[Tag]) -> str:
    """'Text contains “günstig” · German (de) → price'."""
    by_id = {tag.id: tag for tag in tags}
    return (condition_words(rule.condition, tags) + " → "
            + wording.joined([by_id[i].name for i in rule.tag_ids if i in by_id]))


@dataclass(frozen=True)
class RuleForm:
    """What the rule form sent, read leniently: its problems are sentences, nothing raises."""

    name: str
    pattern: str
    view: QueryView
    tag_ids: tuple[int, ...]
    problems: tuple[str, ...]

    def condition(self, tags: list[Tag]) -> QueryFilters:
        """The rule's condition as the API keeps it: the view's filter, its tags by id, and
        the pattern."""
        return replace(filter_fields.by_ids(self.view.filters, tags), pattern=self.pattern)


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
    return QueryView.of(filter_fields.by_names(condition, tags))
