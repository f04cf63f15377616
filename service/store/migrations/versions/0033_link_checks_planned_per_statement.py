"""PostgreSQL: the check of a link statement's queries (migration 0020's statement trigger on
`query_tags`) is planned for the rows each statement has.

PL/pgSQL parses a statement of a function once per session and keeps, in what it parsed, the
size its transition table had then. A session whose first links came in a range of 50,000
(an import) planned every later check for 50,000: a hash join over every row of `queries`,
also for the three links a rule adds (0.5 s a statement at 1M queries; an import into a
project with 20 rules took 1.58× the time of one without). Run with EXECUTE, the two
look-ups of `queries` are parsed and planned for each statement's own rows: a few links are
checked through the primary key, a range's many still with a hash join. The checks, their
locks and their errors are unchanged; SQLite keeps its foreign keys.
"""

from alembic import op

revision = "0033"
down_revision = "0032"

# The queries the statement's links name, locked FOR KEY SHARE as a foreign key's check
# locks them, but those this transaction wrote (an import's new rows), which are counted.
PLANNED_EACH_TIME = """
            EXECUTE 'SELECT 1 FROM queries WHERE pk IN (SELECT query_pk FROM added) '
                    'AND xmin <> $1 ORDER BY pk FOR KEY SHARE' USING mine;
            GET DIAGNOSTICS locked = ROW_COUNT;
            EXECUTE 'SELECT count(*) FROM queries WHERE pk IN (SELECT query_pk FROM added) '
                    'AND xmin = $1' INTO own USING mine;"""
PLANNED_ONCE = """
            PERFORM 1 FROM queries WHERE pk IN (SELECT query_pk FROM added) AND xmin <> mine
            ORDER BY pk FOR KEY SHARE;
            GET DIAGNOSTICS locked = ROW_COUNT;
            SELECT count(*) INTO own FROM queries WHERE pk IN (SELECT query_pk FROM added) """ \
    """AND xmin = mine;"""


def _replace(old: str, new: str) -> None:
    """tagdesk_check_links with its look-ups of `queries` written the other way; the rest of
    its text as it is (a downgrade gives back the very function 0020 made)."""
    bind = op.get_bind()
    definition = bind.exec_driver_sql(
        "SELECT pg_get_functiondef('tagdesk_check_links'::regproc)").scalar_one()
    if definition.count(old) != 1:
        raise RuntimeError(f"Unexpected function: {definition}")
    bind.exec_driver_sql(definition.replace(old, new))


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _replace(PLANNED_ONCE, PLANNED_EACH_TIME)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _replace(PLANNED_EACH_TIME, PLANNED_ONCE)
