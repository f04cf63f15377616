"""The suggestions' jobs on the lifecycle every background job shares (weblib/job_lifecycle.py):
`suggestion_jobs`, a row per job learning a project's model or scoring an import's queries,
in place of the claim `suggestion_models.learning_owner` and `learning_since` held (a claim
held when migrating becomes a running learning job, and back).

The columns leave `suggestion_models` through a batch (SQLite copies the table).
"""

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from service.store.migrations.helpers import project_ref

revision = "0041"
down_revision = "0040"

JOBS = sa.table("suggestion_jobs", sa.column("id"), sa.column("project_id"), sa.column("kind"),
                sa.column("state"), sa.column("owner"), sa.column("heartbeat_at"),
                sa.column("created_at"))
MODELS = sa.table("suggestion_models", sa.column("project_id"), sa.column("learning_owner"),
                  sa.column("learning_since"))


def upgrade() -> None:
    op.create_table(
        "suggestion_jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        project_ref(),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("owner", sa.String(200)),
        sa.Column("heartbeat_at", sa.DateTime),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("finished_at", sa.DateTime),
        sa.Column("message", sa.Text),
    )
    op.create_index("ix_suggestion_jobs_project", "suggestion_jobs",
                    ["project_id", "kind", "state"])
    connection = op.get_bind()
    claims = connection.execute(sa.select(MODELS).where(
        MODELS.c.learning_owner.is_not(None))).all()
    now = datetime.now(UTC).replace(tzinfo=None)
    if claims:
        connection.execute(sa.insert(JOBS), [
            {"id": str(uuid.uuid4()), "project_id": project, "kind": "learn", "state": "running",
             "owner": owner, "heartbeat_at": since, "created_at": since or now}
            for project, owner, since in claims])
    with op.batch_alter_table("suggestion_models") as batch:
        batch.drop_column("learning_owner")
        batch.drop_column("learning_since")


def downgrade() -> None:
    with op.batch_alter_table("suggestion_models") as batch:
        batch.add_column(sa.Column("learning_owner", sa.String(200)))
        batch.add_column(sa.Column("learning_since", sa.DateTime))
    connection = op.get_bind()
    running = connection.execute(sa.select(JOBS.c.project_id, JOBS.c.owner, JOBS.c.created_at)
                                 .where(JOBS.c.kind == "learn", JOBS.c.state == "running")
                                 .order_by(JOBS.c.created_at)).all()
    for project, owner, since in running:  # the newest last: its claim stays
        connection.execute(sa.update(MODELS).where(MODELS.c.project_id == project).values(
            learning_owner=owner, learning_since=since))
    op.drop_index("ix_suggestion_jobs_project", table_name="suggestion_jobs")
    op.drop_table("suggestion_jobs")
