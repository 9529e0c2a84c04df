"""A PostgreSQL ledger's tables made by their owner, and the role armbench runs as let only append
to them (`armbench ledger grant`).

A trial's agent runs as the member: whatever database login armbench has, a trial that gets
hold of it has too. So armbench's own role is not a superuser (no `COPY ... FROM PROGRAM`, no
server files) and owns nothing: the tables are made and owned by an administrator, and the role
may select and insert. Two things it needs beyond that, each held in check:

- eventsourcing's recorder takes `LOCK TABLE ... IN EXCLUSIVE MODE` on the events table before
  it inserts (so notification ids follow commit order), and PostgreSQL lets only a role with the
  table's UPDATE, DELETE or TRUNCATE privilege take that lock. The role gets UPDATE, and a
  trigger of the owner's refuses every UPDATE, DELETE and TRUNCATE of the events and the seal,
  for every role (a non-owner cannot drop or disable it);
- the snapshots table is a cache outside the chain (`engine/snapshots.py`: replaced as a run
  goes, dropped when it ends), so the role may update and delete its rows.
"""

from __future__ import annotations

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from armbench.ledger.errors import Refusal
from armbench.ledger.urls import is_postgres, parse_postgres

__all__ = ["APPEND_ONLY", "grant_writer"]

APPEND_ONLY = ("armbench_events", "armbench_seal", "armbench_quarantine")
"""The tables no row of which is ever changed or removed."""

_TRIGGER_FUNCTION = (
    "CREATE OR REPLACE FUNCTION armbench_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN RAISE EXCEPTION 'armbench''s ledger is append-only: % on % refused', TG_OP, "
    "TG_TABLE_NAME USING ERRCODE = 'insufficient_privilege'; END $$")


def grant_writer(url: str, role: str) -> str:
    """Make the ledger's tables at `url` (as its user, who then owns them; nothing happens to
    tables already there), add the append-only triggers and grant `role` what armbench needs
    and nothing more. The URL as people may see it."""
    if not is_postgres(url):
        raise Refusal(f"expected a postgresql:// URL of the database's owner, found {url!r}: a "
                      "SQLite ledger has no roles.", code="invalid_inputs")
    from armbench.ledger.rows_postgres import PostgresRows

    where = parse_postgres(url)
    PostgresRows(where).close()  # the tables, made as their owner
    name = sql.Identifier(role)
    statements: list[sql.SQL | sql.Composed] = [sql.SQL(_TRIGGER_FUNCTION)]
    for table in map(sql.Identifier, APPEND_ONLY):
        statements += [
            sql.SQL("DROP TRIGGER IF EXISTS armbench_append_only ON {}").format(table),
            sql.SQL("CREATE TRIGGER armbench_append_only BEFORE UPDATE OR DELETE ON {} FOR EACH "
                    "ROW EXECUTE FUNCTION armbench_append_only()").format(table),
            sql.SQL("DROP TRIGGER IF EXISTS armbench_no_truncate ON {}").format(table),
            sql.SQL("CREATE TRIGGER armbench_no_truncate BEFORE TRUNCATE ON {} FOR EACH "
                    "STATEMENT EXECUTE FUNCTION armbench_append_only()").format(table)]
    statements += [
        sql.SQL("REVOKE ALL ON armbench_events, armbench_seal, armbench_snapshots, armbench_quarantine "
                "FROM {}").format(name),
        sql.SQL("GRANT SELECT, INSERT, UPDATE ON armbench_events TO {}").format(name),
        sql.SQL("GRANT SELECT, INSERT ON armbench_seal TO {}").format(name),
        sql.SQL("GRANT SELECT, INSERT ON armbench_quarantine TO {}").format(name),
        sql.SQL("GRANT SELECT, INSERT, UPDATE, DELETE ON armbench_snapshots TO {}").format(name)]
    try:
        with psycopg.connect(make_conninfo("", **where.params), autocommit=False) as conn:
            for statement in statements:
                conn.execute(statement)
            found = conn.execute("SELECT pg_get_serial_sequence('armbench_events', "
                                 "'notification_id')").fetchone()
            if found is not None and found[0]:  # the notification ids' counter, for inserts
                conn.execute(sql.SQL("GRANT USAGE ON SEQUENCE {} TO {}").format(
                    sql.SQL(found[0]), name))
    except psycopg.Error as exc:
        raise Refusal(f"The grants on {where.shown} could not be made: {exc}".strip() + " Run "
                      "this as the database's owner (the user who may create its tables), for "
                      "a role that exists (CREATE ROLE ... LOGIN NOSUPERUSER).",
                      code="ledger_grant_failed") from None
    return where.shown
