"""Issue 33, item 1, end to end on this machine's PostgreSQL: every game records who wrote it (the
first move of each slice of moves, ``game_slices``, and who finished it, ``finished_by``), kept
after the finish; ``obook audit`` lists what one worker wrote between two times and reverts it:
its games abandoned, the statistics recounted so that ``obook verify`` agrees, and the next build
plays new games in their place."""

from __future__ import annotations

import datetime as dt
import re

from tests.book.test_book_cli import counts, obook
from tests.book.test_build_faults import BUILD, sql


def test_audit_lists_and_reverts_what_one_worker_wrote(postgres_url, compiled_engine):
    target = 8
    obook("db", "upgrade", "--db", postgres_url)
    started = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=5)
    obook("build", "--db", postgres_url, "--book", "au", "--games", str(target), "--workers", "2", "--quiet", *BUILD)
    assert counts(postgres_url, "au") == {"finished": target}

    # provenance: every finished game names its finisher; every game's moves start with a slice of a known worker
    by = sql(postgres_url, "SELECT finished_by, count(*) FROM games WHERE status = 'finished' GROUP BY finished_by "
                           "ORDER BY count(*) DESC, finished_by")
    assert None not in [w for w, _ in by] and sum(n for _, n in by) == target
    workers = {w for (w,) in sql(postgres_url, "SELECT id FROM worker_records")}
    assert {w for w, _ in by} <= workers
    first_slices = sql(postgres_url, "SELECT g.id, s.worker_id FROM games g LEFT JOIN game_slices s "
                                     "ON s.game_id = g.id AND s.first_move = 1 WHERE g.n_moves > 0")
    assert len(first_slices) == target and all(w in workers for _, w in first_slices)
    worker, finished = by[0]
    for w in workers:  # worker identity: SITE:HOST:PID:STARTED:ENGINE, the site unset
        assert w.startswith("default:") and w.split(":")[2].isdigit()

    listed = obook("audit", "--db", postgres_url)
    assert worker in listed.stdout and "healthy" in listed.stdout

    window = ("--since", started.isoformat(), "--until", dt.datetime.now(dt.timezone.utc).isoformat())
    shown = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, *window)
    wrote = {gid for (gid,) in sql(postgres_url, "SELECT DISTINCT game_id FROM game_slices WHERE worker_id = :w "
                                                 "UNION SELECT id FROM games WHERE finished_by = :w", w=worker)}
    assert f"{len(wrote)} games" in shown.stdout and f"{finished} finished by it" in shown.stdout, shown.stdout
    empty = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, "--until", started.isoformat())
    assert ": 0 games" in empty.stdout  # nothing before the build

    reverted = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, *window, "--revert")
    assert f"reverted: {len(wrote)} games abandoned" in reverted.stdout, reverted.stdout
    left = target - len(wrote)
    assert counts(postgres_url, "au") == {"finished": left, "abandoned": len(wrote)}
    verify = obook("verify", "--db", postgres_url, "--book", "au")
    assert f"{left} finished games" in verify.stdout and "statistics match the games" in verify.stdout, verify.stdout
    reasons = {r for (r,) in sql(postgres_url, "SELECT failure FROM games WHERE status = 'abandoned'")}
    assert reasons == {f"reverted by obook audit: written by worker {worker}"}

    # the grid (here the embedded build) redoes them: new games in their place
    obook("build", "--db", postgres_url, "--book", "au", "--games", str(target), "--workers", "2", "--quiet", *BUILD)
    assert counts(postgres_url, "au") == {"finished": target, "abandoned": len(wrote)}
    verify = obook("verify", "--db", postgres_url, "--book", "au")
    assert verify.returncode == 0 and "statistics match the games" in verify.stdout
    print(f"\naudit: worker {worker} wrote {len(wrote)} of {target} games ({finished} finished by it); reverted, "
          f"verify clean with {left}, rebuilt to {target}")

    bad = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, "--since", "yesterday", check=False)
    assert bad.returncode == 2 and "is not a time" in bad.stderr and "Traceback" not in bad.stderr
    assert obook("audit", "--db", postgres_url, "--worker", worker, check=False).returncode == 2  # --book needed


def test_audit_reverts_a_workers_expansions_of_a_minimax_book(postgres_url, compiled_engine):
    from tests.book.test_build_faults import MINIMAX_BUILD

    target = 10
    obook("db", "upgrade", "--db", postgres_url)
    obook("build", "--db", postgres_url, "--book", "mm", "--games", str(target), "--workers", "2", "--quiet",
          *MINIMAX_BUILD)
    by = sql(postgres_url, "SELECT done_by, count(*) FROM expansions WHERE status = 'done' GROUP BY done_by "
                           "ORDER BY count(*) DESC, done_by")
    assert None not in [w for w, _ in by] and sum(n for _, n in by) == target, by
    searched = {w for (w,) in sql(postgres_url, "SELECT DISTINCT searched_by FROM minimax_nodes")}
    assert searched <= {w for w, _ in by}  # every stored search names its worker
    # a worker with an expansion that can go (its child unexpanded, no later one of its node): the
    # other worker's expansions may sit on the tip of every line of the busier one
    worker = sql(postgres_url, "SELECT x.done_by FROM expansions x JOIN minimax_edges e ON e.added_by = x.id "
                               "WHERE x.status = 'done' AND NOT EXISTS (SELECT 1 FROM minimax_edges c WHERE "
                               "c.book_id = e.book_id AND c.parent_key = e.child_key) AND NOT EXISTS (SELECT 1 "
                               "FROM expansions y WHERE y.book_id = x.book_id AND y.position_key = x.position_key "
                               "AND y.generation > x.generation AND y.status = 'done') ORDER BY x.id DESC")[0][0]
    done = dict(by)[worker]
    edges_before = sql(postgres_url, "SELECT count(*) FROM minimax_edges")[0][0]

    reverted = obook("audit", "--db", postgres_url, "--book", "mm", "--worker", worker, "--revert", check=False)
    assert f"{done} expansions" in reverted.stdout, reverted.stdout
    n = int(reverted.stdout.split("reverted: ")[1].split()[0])
    kept = reverted.stdout.count(" kept: ")
    assert n >= 1 and n + kept == done and reverted.returncode == (1 if kept else 0), reverted.stdout
    again = int(re.search(r"(\d+) of them scheduled again", reverted.stdout).group(1))
    pending = sql(postgres_url, "SELECT count(*) FROM expansions WHERE status = 'pending'")[0][0]
    assert 1 <= again <= pending  # the oldest's node stays: scheduled again (a deleted node's expansions go with it)
    assert sql(postgres_url, "SELECT count(*) FROM minimax_edges")[0][0] <= edges_before - n + 1  # a pass adds none
    verify = obook("verify", "--db", postgres_url, "--book", "mm")
    assert verify.returncode == 0 and "every backed-up value matches the stored searches" in verify.stdout, verify.stdout

    obook("build", "--db", postgres_url, "--book", "mm", "--games", str(target), "--workers", "2", "--quiet",
          *MINIMAX_BUILD)
    assert sql(postgres_url, "SELECT count(*) FROM expansions WHERE status = 'done'")[0][0] == target
    assert sql(postgres_url, "SELECT count(*) FROM expansions WHERE done_by = :w", w=worker)[0][0] == done - n
    verify = obook("verify", "--db", postgres_url, "--book", "mm")
    assert verify.returncode == 0 and "every backed-up value matches the stored searches" in verify.stdout, verify.stdout
    print(f"\naudit: worker {worker} did {done} of {target} expansions; {n} reverted ({again} scheduled again, "
          f"{kept} kept: a later expansion of their node or child), verify clean; rebuilt to {target}, verify clean")
