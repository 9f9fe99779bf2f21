"""Issue 19 on the embedded build (``obook build`` processes over this machine's PostgreSQL and a
SQLite file): every connection of the build terminated mid-build (item 7) and a poison game
(item 5). Each build ends with exactly its target and ``obook verify`` clean."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.book.test_book_cli import counts, obook

BUILD = ["--size", "5", "--search", "playouts=20", "--seconds-per-move", "0", "--depth", "10"]


def finished(url: str, book: str) -> int:
    try:
        return counts(url, book).get("finished", 0)
    except Exception:  # noqa: BLE001 - the book may not exist yet, or the database may be restarting
        return 0


def test_the_build_survives_its_connections_terminated(postgres_url, compiled_engine):
    target = 16
    obook("db", "upgrade", "--db", postgres_url)
    build = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", postgres_url, "--book", "drop",
                              "--games", str(target), "--workers", "2", "--quiet", *BUILD],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    database = make_url(postgres_url).database
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    drops = 0
    try:
        for threshold in (2, 6, 10):
            deadline = time.time() + 240
            while finished(postgres_url, "drop") < threshold and build.poll() is None and time.time() < deadline:
                time.sleep(0.1)
            with admin.connect() as conn:
                drops += conn.execute(text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                           "WHERE datname = :db AND pid <> pg_backend_pid()"), {"db": database}).scalar()
        out, err = build.communicate(timeout=300)
    finally:
        admin.dispose()
        if build.poll() is None:
            build.kill()
    assert drops >= 3, "the build held no connection when they were terminated"
    assert build.returncode == 0, err[-3000:]
    assert counts(postgres_url, "drop") == {"finished": target}
    verify = obook("verify", "--db", postgres_url, "--book", "drop")
    assert "statistics match the games" in verify.stdout
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT searches, origins, result FROM games")).all()
    finally:
        engine.dispose()
    lost = sum(s - o.count("m") - (1 if (r or "").endswith("+R") else 0) for s, o, r in rows)
    print(f"\n{target} games, {drops} connections terminated in 3 rounds, {lost} searches lost")
    assert 0 <= lost <= 3 * 2  # at most the search of each of the 2 workers at each round


def test_a_poison_game_is_set_aside_and_the_build_ends(tmp_path, compiled_engine):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    target = 3
    result = obook("build", "--db", url, "--book", "p", "--games", str(target), "--workers", "1", "--quiet", *BUILD,
                   check=False, env={**os.environ, "OBOOK_TEST_POISON_GAME": "1", "OBOOK_MAX_GAME_FAILURES": "2"})
    assert result.returncode == 1, result.stderr[-3000:]
    assert "1 game(s) set aside" in result.stderr and "Traceback" not in result.stderr.split("set aside")[-1]
    assert counts(url, "p") == {"finished": target - 1, "set_aside": 1}
    verify = obook("verify", "--db", url, "--book", "p")
    assert "game 1 set aside after 2 failures: PoisonedGame" in verify.stdout
    assert "statistics match the games" in verify.stdout
    again = obook("build", "--db", url, "--book", "p", "--games", str(target), "--workers", "1", "--quiet", *BUILD,
                  check=False)
    assert again.returncode == 1 and counts(url, "p") == {"finished": target - 1, "set_aside": 1}  # ends at once


def test_sigterm_stops_the_build_between_moves_and_it_continues(tmp_path, compiled_engine):
    """SIGTERM to ``obook build`` stops its workers as Ctrl-C does (a flag read between two moves,
    never an exception raised inside database code); the next build completes the target exactly."""
    import signal

    url = f"sqlite:///{tmp_path / 't.db'}"
    target = 2000  # far more than can finish before the signal: 5x5 games at 20 playouts take milliseconds
    args = ["build", "--db", url, "--book", "t", "--games", str(target), "--workers", "2", "--quiet", *BUILD]
    build = subprocess.Popen([sys.executable, "-m", "obook.cli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 240
    while finished(url, "t") < 2 and build.poll() is None and time.time() < deadline:
        time.sleep(0.1)
    build.send_signal(signal.SIGTERM)
    _, err = build.communicate(timeout=120)
    assert build.returncode == 130, err[-3000:]
    assert "Traceback" not in err and "run the same command to continue" in err
    stopped_at = counts(url, "t").get("finished", 0)
    assert 0 < stopped_at < target
    target = stopped_at + 6  # the next build resumes the interrupted games and completes a new target exactly
    args[args.index("--games") + 1] = str(target)
    obook(*args)
    assert counts(url, "t") == {"finished": target}
    assert "statistics match the games" in obook("verify", "--db", url, "--book", "t").stdout
