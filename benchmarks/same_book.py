"""Do two checkouts build the same book? A structural change must not change what a build stores.

    python benchmarks/same_book.py OLD_CHECKOUT NEW_CHECKOUT [--games 300] [-- BUILD OPTIONS]

Builds one book with each checkout (``obook build``, one worker process: every search is seeded by
what it expands, so one worker builds the same book every time), each imported from its own folder
with this interpreter's packages, into a SQLite file of its own; then compares the stored rows that
make the book: every node's search (root moves, play policy, mean score, seed, spec) and backed-up
figures, every edge with its prior, every expansion (node, generation, move, cost, seed, status);
for a self-play book, every game's moves, origins and result and every statistics row. Prints one
line per table and exits 1 when any differs. The default options build a reach minimax book on 9x9.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile

DEFAULT_OPTIONS = ["--algorithm", "minimax", "--size", "9", "--search", "playouts=300", "--play-playouts", "30",
                   "--seconds-per-move", "0"]
TABLES = {
    "minimax_nodes": "position_key, moves, policy, searched_edges, excluded_prior, play_policy, score_mean, playouts, "
                     "spec, seed, value, lcb, ucb, own_value, own_error, own_visits, best_new",
    "minimax_edges": "parent_key, move, child_key, prior",
    "expansions": "position_key, generation, moves, cost, move, status, seed",
    "games": "moves, origins, status, result, winner, score, seed",
    "book_stats": "position_key, move, games, wins, draws",
}


def build(checkout: str, db: str, games: int, options: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    subprocess.run([sys.executable, "-m", "obook.cli", "build", "--db", f"sqlite:///{db}", "--book", "same",
                    "--games", str(games), "--workers", "1", "--quiet", *options],
                   env=env, cwd=checkout, check=True, stdout=subprocess.DEVNULL)


def rows(db: str, table: str, columns: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        try:
            return sorted(conn.execute(f"SELECT {columns} FROM {table}"), key=repr)
        except sqlite3.OperationalError:  # a column this checkout's schema does not have
            return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--games", type=int, default=300, help="units of work to build (expansions, games)")
    parser.add_argument("options", nargs="*", help="obook build options after --")
    args = parser.parse_args()
    options = args.options or DEFAULT_OPTIONS
    folder = tempfile.mkdtemp(prefix="same-book-")
    dbs = {}
    for label, checkout in (("old", args.old), ("new", args.new)):
        dbs[label] = os.path.join(folder, f"{label}.db")
        build(checkout, dbs[label], args.games, options)
    same = True
    for table, columns in TABLES.items():
        old, new = rows(dbs["old"], table, columns), rows(dbs["new"], table, columns)
        same &= old == new
        print(f"{table:14s} old {len(old):7d} rows  new {len(new):7d} rows  identical: {old == new}")
    print(f"options: {' '.join(options)}, {args.games} units, one worker; books in {folder}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
