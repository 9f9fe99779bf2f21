"""obook's PostgreSQL roles and what each may do: the one home of their SQL (``obook db roles`` and
``obook db grant``).

* ``<prefix>_migrator`` owns the database, its schema and every table: only ``obook db upgrade``
  (Alembic) and the operator's repairs (``obook verify --repair``, ``obook audit --revert``) log in
  as it.
* ``<prefix>_service`` (the API) reads the tables it serves, and writes nothing.
* ``<prefix>_worker`` (grid workers, the driver, ``obook build``) reads and writes the rows of play
  and search; it deletes only its own staging rows (``expansion_results``, applied by
  ``apply_staged``) and its heartbeat (``workers``, ``remove_worker``): never a book, game or node,
  never ``alembic_version``, never the schema.
* ``<prefix>_backup`` (the scheduled ``pg_dump``) reads every table and sequence, nothing more.

Table grants are exact per table (``TABLE_GRANTS``) and default privileges cannot say that (they
give one set to every new table), so ``obook db grant`` is run after every ``obook db upgrade``
(compose's ``migrate`` service does both): a table a migration adds without a rule here makes it
fail, naming the table, and until it is run the service and the workers simply cannot use the new
table (fail closed). Only the backup role has default privileges (SELECT on every new table and
sequence), so that a dump never misses one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Connection, create_engine, text
from sqlalchemy.engine import make_url

from obook.errors import ObookError

KINDS = ("migrator", "service", "worker", "backup")
_R, _RW, _RWD = ("SELECT",), ("SELECT", "INSERT", "UPDATE"), ("SELECT", "INSERT", "UPDATE", "DELETE")
# table: (what the service may do, what a worker may do). The backup role reads every table.
TABLE_GRANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "alembic_version": (_R, _R),  # every command checks the schema's revision
    "books": (_R, _RW),  # the driver and `obook build` create books and count expansions
    "games": (_R, _RW),
    "book_stats": (_R, _RW),
    "game_slices": ((), _RW),
    "workers": (_R, _RWD),  # a worker's heartbeat, removed when it leaves (store.workers.remove_worker)
    "worker_records": ((), _RW),
    "minimax_nodes": (_R, _RW),
    "minimax_edges": (_R, _RW),
    "expansions": (_R, _RW),
    "expansion_results": ((), _RWD),  # staged results, deleted once applied (store.minimax.apply_staged)
}
_PREFIX = re.compile(r"[a-z_][a-z0-9_]{0,40}")


class RoleError(ObookError):
    """The roles cannot be made or granted as asked (a bad name, a missing role, a table with no rule)."""


@dataclass(frozen=True)
class RoleNames:
    prefix: str = "obook"

    def __post_init__(self) -> None:
        if not _PREFIX.fullmatch(self.prefix):
            raise RoleError(f"role prefix {self.prefix!r}: lower-case letters, digits and _, "
                            "not starting with a digit, at most 41 characters")

    @property
    def migrator(self) -> str:
        return f"{self.prefix}_migrator"

    @property
    def service(self) -> str:
        return f"{self.prefix}_service"

    @property
    def worker(self) -> str:
        return f"{self.prefix}_worker"

    @property
    def backup(self) -> str:
        return f"{self.prefix}_backup"

    def all(self) -> dict[str, str]:
        """Each kind (``KINDS``) and its role's name."""
        return {kind: f"{self.prefix}_{kind}" for kind in KINDS}


def _quote(conn: Connection, template: str, *identifiers: str, literal: str | None = None) -> str:
    """``template`` with ``{}`` filled by quoted identifiers, and ``{literal}`` by a quoted string
    (psycopg's quoting: role names and passwords cannot be bind parameters of DDL)."""
    from psycopg import sql  # lazy: psycopg is the postgres extra (SQLite needs no roles)

    parts = {"literal": sql.Literal(literal)} if literal is not None else {}
    return sql.SQL(template).format(*map(sql.Identifier, identifiers), **parts).as_string(
        conn.connection.driver_connection)


def _run(conn: Connection, template: str, *identifiers: str, literal: str | None = None) -> None:
    conn.exec_driver_sql(_quote(conn, template, *identifiers, literal=literal))


def _require_postgresql(url: str) -> None:
    if make_url(url).get_backend_name() != "postgresql":
        raise RoleError("database roles are PostgreSQL's: give a postgresql+psycopg:// URL")


def ensure_roles(admin_url: str, database: str, names: RoleNames = RoleNames(),
                 passwords: dict[str, str] | None = None) -> list[str]:
    """Create or update the four roles (login, no other power; a password given replaces theirs),
    the database ``database`` owned by the migrator (created when missing), its schema and tables
    handed to the migrator, closed to everyone else but the roles, and the tables granted
    (``grant_tables``). Idempotent. ``admin_url``: a superuser's connection to any database of
    the server. Returns what it did, one line each."""
    _require_postgresql(admin_url)
    passwords = passwords or {}
    done: list[str] = []
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")  # CREATE DATABASE refuses a transaction
    try:
        with admin.connect() as conn:
            for kind, role in names.all().items():
                exists = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first()
                verb = "ALTER" if exists else "CREATE"
                attributes = " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS"
                if passwords.get(kind):
                    _run(conn, verb + " ROLE {}" + attributes + " PASSWORD {literal}", role, literal=passwords[kind])
                else:
                    _run(conn, verb + " ROLE {}" + attributes, role)
                done.append(f"role {role}: {'updated' if exists else 'created'}"
                            + (", password set" if passwords.get(kind) else ""))
            if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :d"), {"d": database}).first():
                _run(conn, "ALTER DATABASE {} OWNER TO {}", database, names.migrator)
                done.append(f"database {database}: owned by {names.migrator}")
            else:
                _run(conn, "CREATE DATABASE {} OWNER {}", database, names.migrator)
                done.append(f"database {database}: created, owned by {names.migrator}")
            _run(conn, "REVOKE ALL ON DATABASE {} FROM PUBLIC", database)
            _run(conn, "GRANT CONNECT ON DATABASE {} TO {}, {}, {}", database, names.service, names.worker, names.backup)
    finally:
        admin.dispose()
    inside = create_engine(make_url(admin_url).set(database=database))
    try:
        with inside.begin() as conn:
            _run(conn, "ALTER SCHEMA public OWNER TO {}", names.migrator)
            _run(conn, "REVOKE ALL ON SCHEMA public FROM PUBLIC")
            _run(conn, "GRANT USAGE ON SCHEMA public TO {}, {}, {}", names.service, names.worker, names.backup)
            moved = 0
            for (table,) in conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                                              "AND tableowner <> :m ORDER BY tablename"), {"m": names.migrator}):
                _run(conn, "ALTER TABLE public.{} OWNER TO {}", table, names.migrator)  # and its sequences
                moved += 1
            if moved:
                done.append(f"{moved} tables handed to {names.migrator}")
            for objects in ("TABLES", "SEQUENCES"):
                _run(conn, f"ALTER DEFAULT PRIVILEGES FOR ROLE {{}} IN SCHEMA public GRANT SELECT ON {objects} TO {{}}",
                     names.migrator, names.backup)
            done.extend(grant_tables(conn, names))
    finally:
        inside.dispose()
    return done


def grant_tables(conn: Connection, names: RoleNames = RoleNames()) -> list[str]:
    """Give the service, worker and backup roles exactly ``TABLE_GRANTS`` on every table of the
    schema (and the worker its sequences' ``nextval``), taking back anything else they held. Run
    by the tables' owner (the migrator) or a superuser, after every migration. A table with no
    rule stops it before it grants anything."""
    roles = names.all()
    present = {r for (r,) in conn.execute(text("SELECT rolname FROM pg_roles WHERE rolname = ANY(:r)"),
                                          {"r": list(roles.values())})}
    missing = [r for r in roles.values() if r not in present]
    if missing:
        raise RoleError(f"no role {', '.join(missing)} on this server: a superuser runs `obook db roles` first")
    listed = conn.execute(text("SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public' "
                               "ORDER BY tablename")).all()
    tables = [t for t, _ in listed]
    me, superuser = conn.execute(text("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")).one()
    if not superuser and any(owner != me for _, owner in listed):
        raise RoleError(f"{me} does not own the tables: run it as {names.migrator} or a superuser")
    unknown = [t for t in tables if t not in TABLE_GRANTS]
    if unknown:
        raise RoleError(f"table(s) {', '.join(unknown)} have no grants in obook/store/roles.py (TABLE_GRANTS): "
                        "say what the service and the workers may do with them")
    for table in tables:
        service, worker = TABLE_GRANTS[table]
        _run(conn, "REVOKE ALL ON public.{} FROM {}, {}, {}", table, names.service, names.worker, names.backup)
        for role, privileges in ((names.service, service), (names.worker, worker), (names.backup, _R)):
            if privileges:
                _run(conn, f"GRANT {', '.join(privileges)} ON public.{{}} TO {{}}", table, role)
    _run(conn, "REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}, {}, {}", names.service, names.worker, names.backup)
    _run(conn, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {}", names.worker)
    _run(conn, "GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO {}", names.backup)
    return [f"{len(tables)} tables granted to {names.service}, {names.worker} and {names.backup}"]


def grant(url: str, names: RoleNames = RoleNames()) -> list[str]:
    """``grant_tables`` on the database of ``url`` (the migrator's, or a superuser's)."""
    _require_postgresql(url)
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            return grant_tables(conn, names)
    finally:
        engine.dispose()
