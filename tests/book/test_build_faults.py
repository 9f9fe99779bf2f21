"""Issue 19 on the embedded build (``obook build`` processes over this machine's PostgreSQL and a
SQLite file): every connection of the build terminated mid-build (item 7), a poison game
(item 5) and a process frozen past its lease (a zombie writer). Each build ends with exactly its target and ``obook verify`` clean."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.book.test_book_cli import counts, obook

BUILD = ["--algorithm", "mvbm", "--size", "5", "--search", "playouts=20", "--seconds-per-move", "0", "--depth", "10"]


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


def expansion_counts(url: str, book: str) -> dict[str, int]:
    """{status: expansions} of ``book``; {} while the book or the database is not there."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            return dict(conn.execute(text("SELECT e.status, count(*) FROM expansions e JOIN books b ON b.id = e.book_id "
                                          "WHERE b.name = :book GROUP BY e.status"), {"book": book}).all())
    except Exception:  # noqa: BLE001 - not created yet, or the database is restarting
        return {}
    finally:
        engine.dispose()


MINIMAX_BUILD = ["--algorithm", "minimax", "--size", "5", "--komi", "0.5", "--search", "playouts=50",
                 "--play-playouts", "5", "--seconds-per-move", "0"]


@pytest.mark.parametrize("unit", ["game", "expansion"])
def test_a_poison_unit_is_set_aside_and_the_build_ends(tmp_path, compiled_engine, unit):
    """A unit whose work always raises (a game's move, an expansion's search) is tried
    OBOOK_MAX_GAME_FAILURES times, set aside with its reason, not replaced; the build ends with
    status 1 naming it, and ``obook verify`` lists it."""
    url = f"sqlite:///{tmp_path / 'p.db'}"
    target, poison = 3, (1 if unit == "game" else 2)  # expansion 2: after the root's, so the book can go on
    options = BUILD if unit == "game" else MINIMAX_BUILD
    tally = counts if unit == "game" else expansion_counts
    done = "finished" if unit == "game" else "done"
    result = obook("build", "--db", url, "--book", "p", "--games", str(target), "--workers", "1", "--quiet", *options,
                   check=False, env={**os.environ, "OBOOK_TEST_POISON_UNIT": f"{unit}:{poison}",
                                     "OBOOK_MAX_GAME_FAILURES": "2"})
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"1 {unit}(s) set aside" in result.stderr and "Traceback" not in result.stderr.split("set aside")[-1]
    assert f"{unit} {poison} set aside after 2 failures: PoisonedUnit" in result.stderr
    ended = tally(url, "p")
    if unit == "game":
        assert ended == {done: target - 1, "set_aside": 1}
    else:  # the node set aside was the only one left to expand: the book ends short of its target
        assert ended["set_aside"] == 1 and 1 <= ended[done] <= target - 1 and set(ended) == {done, "set_aside"}
    verify = obook("verify", "--db", url, "--book", "p")
    assert verify.returncode == 0, verify.stdout  # what was counted is right
    assert f"{unit} {poison} set aside after 2 failures: PoisonedUnit" in verify.stdout
    again = obook("build", "--db", url, "--book", "p", "--games", str(target), "--workers", "1", "--quiet", *options,
                  check=False)
    assert again.returncode == 1 and tally(url, "p") == ended  # ends at once

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


def wait_for(predicate, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def sql(url: str, query: str, **params):
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text(query), params).all()
    finally:
        engine.dispose()


def frozen_pid(path) -> int | None:
    try:
        return int(path.read_text())
    except (FileNotFoundError, ValueError):
        return None


@pytest.mark.parametrize("point", ["after_append:3", "before_finish_commit:2"])
def test_a_build_process_frozen_past_its_lease_is_a_zombie_whose_writes_are_refused(postgres_url, compiled_engine,
                                                                                      tmp_path, point):
    """One of the build's two processes stops itself (SIGSTOP) at ``point``: after storing a move,
    or inside its finish transaction (holding the game's row and statistics rows). The other goes
    on playing while it is frozen (the server ends the frozen session's transaction after
    ``OBOOK_DB_IDLE_TRANSACTION_TIMEOUT``), takes its game once the lease expired and finishes it;
    resumed (SIGCONT), the zombie's next write is refused and the build ends with exactly its
    target, verify clean, the frozen game counted once."""
    target = 14
    obook("db", "upgrade", "--db", postgres_url)
    stop_file = tmp_path / "frozen.pid"
    env = {**os.environ, "OBOOK_TEST_STOP_AT": f"{point}:{stop_file}", "OBOOK_LEASE_SECONDS": "3",
           "OBOOK_DB_IDLE_TRANSACTION_TIMEOUT": "3"}
    build = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", postgres_url, "--book", "z",
                              "--games", str(target), "--workers", "2", "--quiet", *BUILD],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    pid = None
    try:
        pid = wait_for(lambda: frozen_pid(stop_file), 240, "a build process to stop itself")
        wait_for(lambda: os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] == "T",
                 10, "the process to be stopped")
        ((owner, game_id),) = sql(postgres_url, "SELECT id, game_id FROM workers WHERE pid = :pid", pid=pid)
        frozen_at = time.time()
        finished_before = finished(postgres_url, "z")
        taken = wait_for(lambda: sql(postgres_url, "SELECT status, lease_owner FROM games WHERE id = :g "
                                                   "AND (lease_owner IS NULL OR lease_owner <> :o)",
                                     g=game_id, o=owner), 120, "another process to take the frozen game")
        wait_for(lambda: finished(postgres_url, "z") > finished_before + 1, 120, "games finished while frozen")
        print(f"\nfrozen at {point} for {time.time() - frozen_at:.1f} s; its game {game_id} then {taken[0]}")
        os.kill(pid, signal.SIGCONT)
        pid = None
        out, err = build.communicate(timeout=300)
    finally:
        if pid is not None:
            os.kill(pid, signal.SIGCONT)
        if build.poll() is None:
            build.kill()
    assert build.returncode == 0, err[-3000:]
    assert counts(postgres_url, "z") == {"finished": target}
    assert "statistics match the games" in obook("verify", "--db", postgres_url, "--book", "z").stdout
    if point.startswith("after_append"):  # it wakes up between two moves: its next write is refused
        # refused at its next write: counting its next search, or (when the last append prepared the
        # next move) storing it
        refused = (f"game {game_id}: lease lost before the search", f"game {game_id}: changed by another player")
        assert any(message in err for message in refused), err[-3000:]
    else:  # it wakes up inside the finish its server ended: the commit fails, the game is someone else's
        assert "store error" in err, err[-3000:]
    rows = sql(postgres_url, "SELECT searches, origins, result FROM games")
    repeated = sum(s - o.count("m") - (1 if (r or "").endswith("+R") else 0) for s, o, r in rows)
    assert 0 <= repeated <= 1
