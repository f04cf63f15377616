"""Every bulk edit as sentences a person reads: what it will do (the confirm step), what it is
doing (progress), what it did (the summary and the activity log).

Filters are said with the same human names as the filter chips ("German (de)", "Germany (DE)",
tag names, the search text in quotes), so the confirm step reads like the view the person is
looking at: "Add ‘brand’ to 2,431 queries matching language German (de), text “schuhe”".
"""

from __future__ import annotations

from jobs.deltas import Delta
from jobs.edit import Edit
from queryapi import QueryFilters

from . import filter_fields
from .names import joined


def count(number: int, noun: str = "query", plural: str = "queries") -> str:
    return f"{number:,} {noun if number == 1 else plural}"


def quoted(tag_names: list[str]) -> str:
    return joined([f"‘{name}’" for name in tag_names])


def filter_words(filters: QueryFilters) -> str:
    """'language German (de), text “schuhe”' — or '' for no filter at all."""
    return filter_fields.phrase(filters)


def matching(filters: QueryFilters) -> str:
    words = filter_words(filters)
    return f"matching {words}" if words else "in this project"


def _names(edit: Edit, ids) -> list[str]:
    known = {int(key): value for key, value in (edit.tag_names or {}).items()}
    return [known.get(int(tag_id), f"Tag {tag_id}") for tag_id in sorted(ids)]


def _delta(edit: Edit) -> Delta:
    return Delta.from_json(edit.delta or {})


def _it(number_of_tags: int) -> str:
    return "it" if number_of_tags == 1 else "them"


def _target(edit: Edit, number: int) -> str:
    """'2,431 queries matching …', '2 selected queries', '“running shoes”'."""
    if edit.scope == "row":
        return edit.scope_words
    if edit.scope == "rows":
        return count(number, "selected query", "selected queries")
    words = edit.scope_words or "in this project"
    return f"{count(number)} {words}"


# --- before: the confirm step, and a running job's title -----------------------------------


def plan_sentence(delta: Delta, tag_names: dict[int, str], number: int,
                  filters: QueryFilters) -> str:
    """'Add ‘brand’ to 2,431 queries matching language German (de), text “schuhe”'."""
    target = f"{count(number)} {matching(filters)}"
    return _delta_sentence(
        delta, target, lambda ids: [tag_names.get(t, f"Tag {t}") for t in sorted(ids)])


def _delta_sentence(delta: Delta, target: str, names) -> str:
    """A change in words; `names` turns a set of tag ids into their names."""
    if delta.replace is not None:
        if not delta.replace:
            return f"Remove every tag from {target}"
        return f"Set the tags of {target} to exactly {quoted(names(delta.replace))}"
    if delta.add and not delta.remove:
        return f"Add {quoted(names(delta.add))} to {target}"
    if delta.remove and not delta.add:
        return f"Remove {quoted(names(delta.remove))} from {target}"
    return f"Change the tags of {target}"


def task_title(edit: Edit, original: Edit | None = None) -> str:
    """What a job is, as its panel's heading: 'Add ‘brand’ to 2,431 queries matching …'."""
    number = edit.expected or edit.total
    if edit.kind == "tag":
        return f"Created tag “{next(iter((edit.tag_names or {}).values()), '')}”"
    if edit.kind in TAG_CHANGES:
        return tag_change_title(edit)
    if edit.kind == "export":
        return f"Export {count(number)} {edit.scope_words or 'in this project'} as CSV"
    if edit.kind == "undo":
        return "Undo: " + (task_title(original) if original is not None else "an edit")
    if edit.scope == "suggestions":
        name = (edit.scope_filter or {}).get("tagName", "")
        return f"Accept all {number:,} suggestions of ‘{name}’"
    if edit.scope == "suggestion":
        return f"Accept {quoted(_names(edit, _delta(edit).add))} for {edit.scope_words}"
    return _delta_sentence(_delta(edit), _target(edit, number), lambda ids: _names(edit, ids))


# --- after: what it did ------------------------------------------------------------------


def _rule_did(edit: Edit) -> str:
    """'Rule “price words” added ‘price’ to 1,204 queries (12 already had it)'."""
    spec = edit.scope_filter or {}
    rule = f"the rule “{spec.get('ruleName', '')}”"
    delta = _delta(edit)
    if edit.scope == "rule":
        listed = _names(edit, delta.add)
        text = f"Rule “{spec.get('ruleName', '')}” added {quoted(listed)} to {count(edit.changed)}"
        untouched = edit.untouched
        return text + (f" ({untouched:,} already had {_it(len(listed))})" if untouched else "")
    text = f"Removed the tags {rule} had added from {count(edit.changed)}"
    return text + ("; the rule is deleted" if spec.get("deleteRule") and edit.state == "done"
                   else "")


def what_it_did(edit: Edit) -> str:
    """'Added ‘brand’ to 37 queries (3 already had it)' — the exact counts."""
    if edit.scope == "suggestions":
        name = (edit.scope_filter or {}).get("tagName", "")
        return (f"Accepted {edit.changed:,} suggestion{'' if edit.changed == 1 else 's'} of "
                f"‘{name}’")
    if edit.scope == "suggestion":
        return f"Accepted {quoted(_names(edit, _delta(edit).add))} for {edit.scope_words}"
    if edit.scope in ("rule", "rule-removal"):
        return _rule_did(edit)
    delta = _delta(edit)
    changed, untouched = edit.changed, edit.untouched
    if edit.scope == "row":
        parts = []
        if delta.add:
            parts.append(f"added {quoted(_names(edit, delta.add))}")
        if delta.remove:
            parts.append(f"removed {quoted(_names(edit, delta.remove))}")
        if delta.replace is not None:
            parts.append(f"set its tags to {quoted(_names(edit, delta.replace)) or 'none'}")
        if not changed:
            return f"The tags of {edit.scope_words} were already like that; nothing changed"
        text = joined(parts)
        return f"Tags of {edit.scope_words}: {text}"
    target = count(changed)
    if delta.replace is not None:
        if not delta.replace:
            text = f"Removed every tag from {target}"
            return text + (f" ({untouched:,} had none)" if untouched else "")
        text = f"Set the tags of {target} to {quoted(_names(edit, delta.replace))}"
        return text + (f" ({untouched:,} already had exactly these)" if untouched else "")
    if delta.add and not delta.remove:
        listed = _names(edit, delta.add)
        if not changed:
            who = "the query" if untouched == 1 else "all " + count(untouched)
            return f"Nothing to change: {who} already had {quoted(listed)}"
        text = f"Added {quoted(listed)} to {target}"
        return text + (f" ({untouched:,} already had {_it(len(listed))})" if untouched else "")
    if delta.remove and not delta.add:
        listed = _names(edit, delta.remove)
        if not changed:
            who = "the query did not have" if untouched == 1 else \
                f"none of the {count(untouched)} had"
            either = joined([f"‘{name}’" for name in listed], "or")
            return f"Nothing to change: {who} {either}"
        text = f"Removed {quoted(listed)} from {target}"
        return text + (f" ({untouched:,} didn’t have {_it(len(listed))})" if untouched else "")
    return f"Changed the tags of {target}"


def what_undo_did(undo: Edit, original: Edit | None) -> str:
    """'Undone: ‘brand’ removed again from 37 queries' (and how many were left alone because
    they had been changed since)."""
    changed = undo.changed
    if original is None:
        return f"Undone on {count(changed)}"
    delta = _delta(original)
    if delta.replace is not None or (delta.add and delta.remove):
        text = f"Undone: the earlier tags of {count(changed)} are back"
    elif delta.add:
        text = f"Undone: {quoted(_names(original, delta.add))} removed again from {count(changed)}"
    else:
        text = (f"Undone: {quoted(_names(original, delta.remove))} added back to "
                f"{count(changed)}")
    left = max(original.changed - changed, 0)
    if undo.state == "done" and left:
        left_as = "was left as it is" if left == 1 else "were left as they are"
        text += f" ({left:,} had been changed again since and {left_as})"
    spec = original.scope_filter or {}
    if original.scope == "rule-removal" and spec.get("deleteRule"):
        # Undo gives back the tags, not the rule: said, so that nobody waits for it.
        text += (f"; the rule “{spec.get('ruleName', '')}” stays deleted (Rules → New rule "
                 "makes it again)")
    return text


def summary(edit: Edit, original: Edit | None = None) -> str:
    """The sentence for a finished, cancelled, interrupted or failed edit."""
    if edit.kind == "tag":
        return "A new tag of this project, made in the tag picker; no query was changed"
    if edit.kind in TAG_CHANGES:
        return tag_change_summary(edit)
    if edit.kind == "export":
        if edit.state == "done":
            return f"Exported {count(edit.processed)} as CSV"
        return f"The export stopped after {count(edit.processed)}"
    did = what_undo_did(edit, original) if edit.kind == "undo" else what_it_did(edit)
    if edit.state == "done":
        return did
    left = max(edit.total - edit.processed, 0)
    reached = f"{edit.processed:,} of {count(edit.total)} done"
    if edit.state == "cancelled":
        return f"Cancelled after {reached}. {did}" + (
            f"; {count(left)} {'was' if left == 1 else 'were'} not reached" if left else "")
    if edit.state == "interrupted":
        return f"Interrupted after {reached}. So far: {did[0].lower() + did[1:]}"
    return f"Stopped after {reached}. So far: {did[0].lower() + did[1:]}"


def time_left(seconds: float | None) -> str:
    if seconds is None:
        return "working out the time left"
    if seconds < 10:
        return "a few seconds left"
    if seconds < 90:
        return f"about {round(seconds / 5) * 5:.0f} seconds left"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"about {minutes} minutes left"
    return f"about {round(seconds / 3600)} hours left"


# --- changes to the tags themselves (the Tags page) ---------------------------------------------

TAG_CHANGES = ("tag-edit", "tag-merge", "tag-unmerge")


def _merge_names(edit: Edit) -> tuple[str, str]:
    names, delta = edit.tag_names or {}, edit.delta or {}
    return (names.get(str(delta.get("merged")), "a tag"),
            names.get(str(delta.get("into")), "another tag"))


def tag_change_title(edit: Edit) -> str:
    """'Edited tag “brand”', 'Merged tag “brand” into “sale”', 'Undid the merge of …'."""
    if edit.kind == "tag-edit":
        return f"Edited tag “{next(iter((edit.tag_names or {}).values()), '')}”"
    merged, into = _merge_names(edit)
    if edit.kind == "tag-merge":
        return f"Merged tag “{merged}” into “{into}”"
    return f"Undid the merge of “{merged}” into “{into}”"


def tag_change_summary(edit: Edit) -> str:
    if edit.kind == "tag-edit":
        said = f"Its name, colour or description, {edit.scope_words}" if edit.scope_words \
            else "Its name, colour or description"
        return said + "; no query was changed"
    merged, into = _merge_names(edit)
    if edit.kind == "tag-merge":
        text = (f"{count(edit.changed)} that had “{merged}” now have “{into}”, and “{merged}” "
                "is gone")
        return text + (" (undone since)" if edit.undone_by else "")
    return f"“{merged}” is back, with its queries as they were ({count(edit.changed)} changed)"


def range_text(view, total: int, shown: int) -> str:
    """The list's count: '1–50 of 1,713 queries' (`view`: its page and size; `shown`: the
    rows on the page)."""
    noun = "query" if total == 1 else "queries"
    if total == 0:
        return "No queries match" if view.has_filters else "No queries"
    if shown == 0:
        return f"{total:,} {noun}"
    first = (view.page - 1) * view.size + 1
    return f"{first:,}–{first + shown - 1:,} of {total:,} {noun}"
