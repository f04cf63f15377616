"""The tables of queries, of their tags and of the count engine's bitmaps. Only this package
reads and writes them (an import-linter contract, pyproject.toml): every write keeps the
bitmaps in the same transaction as the rows."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    column,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from ..store.models import Base, Id, new_uuid, utcnow

query_tags = Table(
    "query_tags",
    Base.metadata,
    Column("query_pk", ForeignKey("queries.pk", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
    # The query's updated_at, copied by whoever writes either (this package): a tag's page
    # in time order is a walk of the index below.
    Column("updated_at", DateTime, nullable=False),
    # The rule that added the link as its query entered the project (migration 0028; NULL:
    # anyone else did). No foreign key: rule ids are never given twice.
    Column("rule_id", Integer, nullable=True),
    # When the link was made and who the caller said made it, where known (migration 0029).
    Column("added_at", DateTime, nullable=True),
    Column("added_by", String(100), nullable=True),
    # The file whose tags column named the tag, when an import made the link (migration 0036).
    Column("imported_from", String(255), nullable=True),
    # True when the link is a suggestion someone accepted (suggestions/accept, migration 0039).
    Column("suggested", Boolean, nullable=True),
    # The accepted suggestion's confidence (migration 0043): taken away again, the link gives
    # its suggestion back at it (service/engine/suggestion_links.py).
    Column("suggested_confidence", Float, nullable=True),
    Index("ix_query_tags_tag_time", "tag_id", "updated_at", "query_pk"),
    # The links rules added, by rule (rules/unapply); the others are not in it.
    Index("ix_query_tags_rule", "rule_id", "query_pk",
          sqlite_where=text("rule_id IS NOT NULL"), postgresql_where=text("rule_id IS NOT NULL")),
)


class Query(Base):
    """A search query. `pk` is an internal integer key (small joins, the bitmaps' keys); `id`
    is public."""

    __tablename__ = "queries"
    __table_args__ = (
        UniqueConstraint("project_id", "query", "language", "country", name="uq_queries_key"),
        # The two update-time indexes hold updated_at DESC (migration 0007; on PostgreSQL
        # the first only, which also holds the key: a page's walk in the default order reads
        # it alone, migration 0044).
        Index("ix_queries_updated", "project_id", column("updated_at").desc(), "id",
              postgresql_include=["pk"]),
        Index("ix_queries_project_id", "project_id", "id"),
        Index("ix_queries_project_pk", "project_id", "pk"),
        Index("ix_queries_language_id", "project_id", "language", "id"),
        Index("ix_queries_country_id", "project_id", "country", "id"),
        Index("ix_queries_query_id", "project_id", "query", "id"),
        # Z-to-A sorts walk ix_queries_language_desc_id and ix_queries_country_desc_id
        # (project_id, code DESC, id), made by migration 0010.
        Index("ix_queries_language_country_updated",
              "project_id", "language", "country", "updated_at", "id"),
    )

    pk: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(Id, unique=True, default=new_uuid)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    query: Mapped[str] = mapped_column(Text)
    language: Mapped[str] = mapped_column(String(35))  # stored lower-case
    country: Mapped[str] = mapped_column(String(35))  # stored upper-case
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # Its numbers (service/engine/numbers.py, migration 0037), NULL when unknown: counts as
    # they are, the others in millionths.
    clicks: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    impressions: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    ctr: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    position: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    volume: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    cpc: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    difficulty: Mapped[int | None] = mapped_column(BigInteger, nullable=True)


# A piece of a bitmap (migration 0026): the row keys (`queries.pk`) in one chunk of 2^18
# keys (`chunk`: a key's upper bits) of the project's queries of one kind (service/engine/
# kinds.py) and value — all of them (kind 0, value ""), those whose folded text holds a word
# (1) or a string of one or two characters (2), of a language (3), of a country (4), that
# carry a tag (5, its id), whose number is known (6, the number's name) or has a bit set
# (6, "<name>:<bit>": a bit-sliced index of the stored values, service/engine/numbers.py).
# `stamp` is the project's write that last wrote the piece (projects.engine_stamp), `size`
# how many keys it holds.
pieces = Table(
    "engine_pieces",
    Base.metadata,
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("kind", SmallInteger, primary_key=True),
    Column("value", Text, primary_key=True),
    Column("chunk", Integer, primary_key=True),
    Column("stamp", Integer, nullable=False),
    Column("size", Integer, nullable=False),
    Column("keys", LargeBinary, nullable=False),
    Index("ix_engine_pieces_stamp", "project_id", "stamp"),
)


# The links a rule had added that rules/unapply took away, under the operation's id, until
# rules/restore puts them back or the operation is a week old (migration 0029).
rule_removals = Table(
    "rule_removals",
    Base.metadata,
    Column("operation", String(36), primary_key=True),
    Column("query_pk", Integer, primary_key=True),
    Column("tag_id", Integer, primary_key=True),
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("rule_id", Integer, nullable=False),
    Column("added_at", DateTime, nullable=True),
    Column("removed_at", DateTime, nullable=False),
)


# A tag merged into another (tags/merge, migration 0031), kept until its undo (tags/unmerge)
# or until it is a week old: the tag's row as it was (its id is given back on undo, never to
# another tag), the tag it went into, and the rules and saved views it changed (`named_in`,
# JSON: by kind and id, their tag ids, condition or filter before and after).
tag_merges = Table(
    "tag_merges",
    Base.metadata,
    Column("operation", String(36), primary_key=True),
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("tag_id", Integer, nullable=False),
    Column("into_id", Integer, nullable=False),
    Column("name", String(200), nullable=False),
    Column("name_folded", String(200), nullable=False),
    Column("color", String(7), nullable=False),
    Column("description", String(300), nullable=True),
    Column("named_in", Text, nullable=False),
    Column("merged_at", DateTime, nullable=False),
)

# The links a merge changed: each link of the merged tag as it was (`made` false: its rule,
# time and author), and each link to the other tag the merge made (`made` true).
tag_merge_links = Table(
    "tag_merge_links",
    Base.metadata,
    Column("operation", ForeignKey("tag_merges.operation", ondelete="CASCADE"),
           primary_key=True),
    Column("made", Boolean, primary_key=True),
    Column("query_pk", Integer, primary_key=True),
    Column("from_rule", Integer, nullable=True),
    Column("linked_at", DateTime, nullable=True),
    Column("linked_by", String(100), nullable=True),
    Column("linked_from", String(255), nullable=True),  # migration 0036
    Column("linked_suggested", Boolean, nullable=True),  # migration 0042
)


# Suggested tags (migration 0039, service/engine/suggested.py). Per project, the last model
# learned (service/suggestions/model.py's bytes) and what the status says of it.
suggestion_models = Table(
    "suggestion_models",
    Base.metadata,
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True),
    Column("model", LargeBinary, nullable=True),
    Column("learned_at", DateTime, nullable=True),
    Column("learned_from", Integer, nullable=False, server_default="0"),
    Column("held_back_right", Float, nullable=True),
    Column("default_confidence", Float, nullable=True),  # NULL: none reached the target
    Column("links_at_learning", Integer, nullable=False, server_default="0"),
    # projects.links_written when the model's snapshot was read.
    Column("written_then", Integer, nullable=False, server_default="0"),
    Column("scored_through", Integer, nullable=False, server_default="0"),  # the last pk scored
    Column("asked_at", DateTime, nullable=True),  # the last learning job made
)

# The suggestions' jobs (migration 0041): learning a project's model ("learn"), or scoring
# the queries an import added ("score"), on the lifecycle every background job shares
# (weblib/job_lifecycle.py: its COLUMNS). Ids are UUIDs, never given twice.
suggestion_jobs = Table(
    "suggestion_jobs",
    Base.metadata,
    Column("id", String(36), primary_key=True, default=new_uuid),
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("kind", String(10), nullable=False),
    Column("state", String(20), nullable=False),
    Column("owner", String(200), nullable=True),
    Column("heartbeat_at", DateTime, nullable=True),
    Column("created_at", DateTime, nullable=False, default=utcnow),
    Column("finished_at", DateTime, nullable=True),
    Column("message", Text, nullable=True),
    Index("ix_suggestion_jobs_project", "project_id", "kind", "state"),
)

# Each query's suggested tags at or above suggested.KEPT_FROM, with their confidence; the
# bitmaps of kind `suggested` hold those at or above the model's default confidence.
query_suggestions = Table(
    "query_suggestions",
    Base.metadata,
    Column("query_pk", ForeignKey("queries.pk", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("confidence", Float, nullable=False),
    Index("ix_query_suggestions_tag", "project_id", "tag_id", "confidence"),
)

# Suggestions people rejected: never suggested again, until the tag is merged or deleted.
suggestion_rejections = Table(
    "suggestion_rejections",
    Base.metadata,
    Column("query_pk", ForeignKey("queries.pk", ondelete="CASCADE"), primary_key=True),
    Column("tag_id", ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True),
    Column("project_id", ForeignKey("projects.id", ondelete="CASCADE"), nullable=False),
    Column("rejected_at", DateTime, nullable=False),
    Column("rejected_by", String(100), nullable=True),
    Index("ix_suggestion_rejections_project", "project_id", "tag_id"),
)
