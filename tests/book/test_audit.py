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

    stats = "SELECT count(*), coalesce(sum(games), 0), coalesce(sum(wins), 0) FROM book_stats"
    stats_before = sql(postgres_url, stats)
    trial = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, *window, "--revert", "--dry-run")
    assert f"would be: {len(wrote)} games abandoned" in trial.stdout and "nothing written" in trial.stdout, trial.stdout
    assert counts(postgres_url, "au") == {"finished": target} and sql(postgres_url, stats) == stats_before
    alone = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, "--dry-run", check=False)
    assert alone.returncode == 2 and "--dry-run goes with --revert" in alone.stderr

    reverted = obook("audit", "--db", postgres_url, "--book", "au", "--worker", worker, *window, "--revert")
    assert f"reverted: {len(wrote)} games abandoned" in reverted.stdout, reverted.stdout
    assert sql(postgres_url, stats) != stats_before
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
    edges_before = sql(postgres_url, "SELECT count(*) FROM minimax_edges")[0][0]
    state = ("SELECT (SELECT count(*) FROM minimax_edges), (SELECT count(*) FROM minimax_nodes), "
             "(SELECT string_agg(id || status, ',' ORDER BY id) FROM expansions), "
             "(SELECT expansions_done FROM books WHERE name = 'mm')")
    before = sql(postgres_url, state)
    # the dry run asks the revert's own rules which worker has an expansion that can go: the other
    # worker's expansions may sit on the tip of every line of the busier one
    trials = {w: obook("audit", "--db", postgres_url, "--book", "mm", "--worker", w, "--revert", "--dry-run",
                       check=False).stdout for w, _ in by}
    assert sql(postgres_url, state) == before, trials  # nothing written
    assert all("would be: " in out and "nothing written" in out for out in trials.values()), trials
    worker = next(w for w, out in trials.items() if not out.split("would be: ")[1].startswith("0 "))
    done = dict(by)[worker]

    reverted = obook("audit", "--db", postgres_url, "--book", "mm", "--worker", worker, "--revert", check=False)
    assert reverted.stdout.split("reverted: ")[1].split(";")[0] == trials[worker].split("would be: ")[1].split(";")[0]
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
