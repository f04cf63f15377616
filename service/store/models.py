"""The service's tables. Times are naive UTC, truncated to milliseconds (the API's precision)."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, declared_attr, mapped_column, relationship


def utcnow() -> datetime:
    now = datetime.now(UTC).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def new_uuid() -> str:
    return str(uuid.uuid4())


# Project and query ids: strings in Python, native `uuid` on PostgreSQL (migration 0022).
Id = String(36).with_variant(Uuid(as_uuid=False), "postgresql")


UUID_PATTERN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def is_uuid(value: str) -> bool:
    """Whether `value` is an id as the service writes them: the only strings that can match
    a stored project or query id, and the only ones PostgreSQL will compare with one."""
    return UUID_PATTERN.fullmatch(value) is not None


class Base(DeclarativeBase):
    pass


class Organization(Base):
    __tablename__ = "organizations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_uuid)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # Custom agreement limits; NULL means the deployment's defaults.
    limit_per_second: Mapped[int | None] = mapped_column(Integer)
    limit_per_minute: Mapped[int | None] = mapped_column(Integer)
    limit_per_hour: Mapped[int | None] = mapped_column(Integer)


# SQLite: an integer id is never given twice, even after its row is deleted (AUTOINCREMENT,
# migration 0024); PostgreSQL's sequences never give one twice anyway. Whatever still names
# a deleted row by its id (a link, a log line, a browser) never names another one.
NEVER_REUSED = {"sqlite_autoincrement": True}


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (NEVER_REUSED,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    org_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    # A key limited to one project; NULL is an organization-wide key.
    project_id: Mapped[str | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), nullable=True
    )
    name: Mapped[str] = mapped_column(String(200), default="")
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(40))
    last_four: Mapped[str] = mapped_column(String(4))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime)

    organization: Mapped[Organization] = relationship(lazy="joined")


class Project(Base):
    __tablename__ = "projects"

    id: Mapped[str] = mapped_column(Id, primary_key=True, default=new_uuid)
    org_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # The columns its last import read (JSON; service/imports/import_sources.py, migration 0030).
    import_choice: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The currency of its queries' CPC, an ISO 4217 code (migration 0037; NULL: not said).
    currency: Mapped[str | None] = mapped_column(String(3), nullable=True)
    # The count engine's state (service/engine, migration 0026). `changes_outside` moves, by
    # triggers, with every write to the project's queries and links that went around the
    # engine (hand-written SQL); `changes_indexed` is its value when the bitmaps were last
    # built from the rows: they are current while the two are equal.
    changes_outside: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    changes_indexed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The engine's writes: each one's number is the stamp of the pieces it wrote; the
    # number of the last one that added queries; and the epoch, which moves when pieces are
    # dropped (a rebuild, a tag's deletion), so that what a process holds is read again.
    engine_stamp: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    texts_stamp: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    engine_epoch: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Links the engine's writes made or took away, ever (migration 0039): what tells the
    # suggestions' job that enough changed since it learned (service/learning/learner.py).
    links_written: Mapped[int] = mapped_column(Integer, default=0, server_default="0")


class Tag(Base):
    __tablename__ = "tags"
    __table_args__ = (UniqueConstraint("project_id", "name_folded"), NEVER_REUSED)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    # casefold(name): names are unique and matched without regard to case.
    name_folded: Mapped[str] = mapped_column(String(200))
    color: Mapped[str] = mapped_column(String(7))
    # What the tag is for, in a sentence or two (migration 0031; NULL: none).
    description: Mapped[str | None] = mapped_column(String(300), nullable=True)


class NamedInProject:
    """The columns of a named extension of a project (saved views, rules): an id never
    reused, the project, a name unique in it as tag names are compared, and when it was
    created and last changed; the table's own columns stand between the names and the
    times."""

    @declared_attr.directive
    def __table_args__(cls):
        return (UniqueConstraint("project_id", "name_folded"), NEVER_REUSED)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True,
                                    sort_order=-1)
    project_id: Mapped[str] = mapped_column(Id, ForeignKey("projects.id", ondelete="CASCADE"),
                                            sort_order=-1)
    name: Mapped[str] = mapped_column(String(100), sort_order=-1)
    # weblib.tag_names.fold_tag_name(name): names compared as tag names are.
    name_folded: Mapped[str] = mapped_column(String(100), sort_order=-1)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, sort_order=1)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, sort_order=1)


class SavedView(NamedInProject, Base):
    """A named filter of a project's queries (an extension: service/api/saved_views.py), shared by
    everyone of its organization. `filters`, `sort` and `columns` are JSON text, as validated."""

    __tablename__ = "saved_views"

    filters: Mapped[str] = mapped_column(Text)
    sort: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The numbers it shows as columns (JSON list; migration 0038), NULL: the default ones.
    columns: Mapped[str | None] = mapped_column(Text, nullable=True)


class Rule(NamedInProject, Base):
    """Tags that apply themselves (an extension: service/api/rules.py): the queries of a project
    that match `condition` (a queries/facets body, JSON text as validated) get `tag_ids` (a
    JSON list) when they enter the project, and the dashboard tags those there when the rule
    is saved. Rules only add tags. A paused rule does nothing; `paused_reason` says why when
    the service paused it (its last tag deleted)."""

    __tablename__ = "rules"

    condition: Mapped[str] = mapped_column(Text)
    tag_ids: Mapped[str] = mapped_column(Text)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    paused_reason: Mapped[str | None] = mapped_column(Text, nullable=True)


class User(Base):
    """A person of an organization who may sign in to its settings (service/settings)."""

    __tablename__ = "users"
    __table_args__ = (NEVER_REUSED,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    org_id: Mapped[str] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), index=True
    )
    # casefold(email): one account per address, matched without regard to case.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))  # werkzeug: scrypt by default
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

    organization: Mapped[Organization] = relationship(lazy="joined")


class KeyEvent(Base):
    """An API key generated or revoked: by whom (NULL: the command line), when, which key."""

    __tablename__ = "key_events"
    __table_args__ = (Index("ix_key_events_org_at", "org_id", "at", "id"), NEVER_REUSED)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    org_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    action: Mapped[str] = mapped_column(String(20))  # "generated" or "revoked"
    # The key's row may go with its project; what identifies it to people stays here.
    key_id: Mapped[int | None] = mapped_column(
        ForeignKey("api_keys.id", ondelete="SET NULL"), nullable=True
    )
    key_prefix: Mapped[str] = mapped_column(String(40))
    key_last_four: Mapped[str] = mapped_column(String(4))
    key_name: Mapped[str] = mapped_column(String(200), default="")
    # The generate form's one-time token: a resubmitted form (a reload) makes no second key.
    form_token: Mapped[str | None] = mapped_column(String(64), unique=True, nullable=True)
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    # Who, as they were known then (NULL: the command line); kept when the person is removed.
    actor_email: Mapped[str | None] = mapped_column(String(320), nullable=True)

    user: Mapped[User | None] = relationship(lazy="joined")


class OrgEvent(Base):
    """A change other than a key's, made in the settings area, on the command line or through
    the API: a project, tag, rule, import or person. `subject` names what changed, `detail`
    says more; a change through the API keeps the key's name and ends and the person its
    caller named (X-Tagdesk-Actor)."""

    __tablename__ = "org_events"
    __table_args__ = (Index("ix_org_events_org_at", "org_id", "at", "id"), NEVER_REUSED)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    org_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"))
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    actor_email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    action: Mapped[str] = mapped_column(String(40))
    subject: Mapped[str] = mapped_column(String(300), default="")
    detail: Mapped[str] = mapped_column(String(500), default="")
    at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    key_prefix: Mapped[str | None] = mapped_column(String(40), nullable=True)
    key_last_four: Mapped[str | None] = mapped_column(String(4), nullable=True)
    key_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    actor_name: Mapped[str | None] = mapped_column(String(100), nullable=True)


class PasswordLink(Base):
    """A one-time link that lets a new administrator choose their own password. Only the
    SHA-256 of its token is kept; it works once (`used_at`), and not after `expires_at`."""

    __tablename__ = "password_links"
    __table_args__ = (NEVER_REUSED,)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    used_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    user: Mapped[User] = relationship(lazy="joined")


class SettingsSession(Base):
    """A signed-in browser of the settings area (migration 0024). The browser's cookie carries
    a random secret; only its SHA-256 is kept. Signing out deletes the row; removing the person
    deletes all of theirs (cascade), and so does a new password (but the one that set it)."""

    __tablename__ = "settings_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
