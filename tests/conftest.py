import os
import shutil
from pathlib import Path

import pytest

GNUGO = os.environ.get("OBOOK_GNUGO", "/usr/games/gnugo")
SHARED = Path(os.environ.get("OBOOK_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")


@pytest.fixture(scope="session")
def gnugo_path():
    if not (Path(GNUGO).exists() or shutil.which(GNUGO)):
        pytest.skip("GNU Go 3.8 is not installed (apt-get install gnugo)")
    return GNUGO


@pytest.fixture(scope="session")
def compiled_engine():
    """The engine compiled into the numba cache before a test starts ``obook build`` processes, so
    that their deadlines measure play, not minutes of a cold compile (the build's own warm-up then
    loads what this one wrote)."""
    from obook.book.selfplay import warm_up

    warm_up()


@pytest.fixture(scope="session")
def shared_dir():
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED


# ---- stores: every store test runs on SQLite and on the PostgreSQL server of this machine -----------

PG_SERVER = os.environ.get("OBOOK_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REQUIRE_SERVICES = os.environ.get("OBOOK_REQUIRE_SERVICES") == "1"  # .ci/run: fail instead of skipping


def _service_missing(what: str, exc: Exception):
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is not reachable: {exc}")
    pytest.skip(f"{what} is not reachable: {exc}")


@pytest.fixture(scope="session")
def postgres_database():
    """A fresh PostgreSQL database for this test session (dropped at the end)."""
    import uuid

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
    name = f"obook_test_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server
        admin.dispose()
        _service_missing(f"PostgreSQL at {PG_SERVER}", exc)
    url = make_url(PG_SERVER).set(database=name).render_as_string(hide_password=False)
    yield url
    from obook.store.db import forget_stores

    forget_stores()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _empty_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_store_url(request, tmp_path):
    """The URL of an empty database (no schema) of each kind."""
    from obook.store.db import forget_stores

    forget_stores()
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'book.db'}"
    else:
        url = request.getfixturevalue("postgres_database")
        _empty_postgres(url)
        yield url
    forget_stores()


@pytest.fixture
def store_url(empty_store_url):
    """An upgraded database of each kind."""
    from obook.store.migrate import upgrade

    upgrade(empty_store_url)
    return empty_store_url


@pytest.fixture
def store(store_url):
    from obook.book.library import open_book_store

    return open_book_store(store_url)


@pytest.fixture
def postgres_url(postgres_database):
    """The session's PostgreSQL database, emptied (no schema)."""
    from obook.store.db import forget_stores

    forget_stores()
    _empty_postgres(postgres_database)
    yield postgres_database
    forget_stores()
