"""A filter job keeps its filter as the API's body (QueryFilters.to_body): the filters jobs
kept before in a shape of their own ({"text", "tag_names", "not_tag_names", …}) are
rewritten, so an interrupted job resumes over the same queries.
"""

import sqlalchemy as sa
from alembic import op

revision = "jobs_0002"
down_revision = "jobs_0001"

edits = sa.table("edits", sa.column("id", sa.String), sa.column("scope", sa.String),
                 sa.column("scope_filter", sa.JSON))

# The former name of each field -> its name in the API's body.
RENAMED = {"text": "query", "languages": "languages", "countries": "countries",
           "tag_ids": "tagIds", "tag_names": "tagNames", "tag_match": "tagMatch",
           "not_tag_names": "excludeTagNames", "untagged": "untagged", "pattern": "pattern"}
DEFAULTS = ("", [], None, False, "any")


def _filter_jobs() -> list:
    return op.get_bind().execute(sa.select(edits.c.id, edits.c.scope_filter)
                                 .where(edits.c.scope == "filter")).all()


def _keep(edit_id: str, scope_filter: dict) -> None:
    op.get_bind().execute(sa.update(edits).where(edits.c.id == edit_id)
                          .values(scope_filter=scope_filter))


def upgrade() -> None:
    for edit_id, kept in _filter_jobs():
        if isinstance(kept, dict) and "text" in kept:  # the former shape always had it
            _keep(edit_id, {RENAMED[name]: value for name, value in kept.items()
                            if name in RENAMED and value not in DEFAULTS})


def downgrade() -> None:
    before = {new: old for old, new in RENAMED.items()}
    for edit_id, kept in _filter_jobs():
        if isinstance(kept, dict) and "text" not in kept:
            old = {"text": "", "languages": [], "countries": [], "tag_names": [],
                   "tag_ids": []}
            old.update({before[name]: value for name, value in kept.items()
                        if name in before})
            _keep(edit_id, old)
