"""How many stored results the dead-stone count of issue 15 changes.

Run by hand: ``python benchmarks/rescore.py BOOK_URL --book NAME``.

Replays every finished self-play game of the book that ended on the board (two passes or the move
cap; not a resignation, not a seeded game), finds its dead stones exactly as the game's end did
(``stone_status`` with the same playouts, policy and seed as ``SelfPlayer.outcome``) and counts it
on the board as it stands (``settle=False``) twice: the old way (the dead stones taken off the
board, a region that then touches both colours nobody's) and the new (``final_area``: each dead
stone its capturer's); and a third time as ``SelfPlayer.outcome`` counts since issue 35 (the game
played on until it is settled, ``final_score``). Prints one JSON summary: games rescored, how many
stored scores each count reproduces (a book built before a fix has the earlier count stored),
scores and winners changed, and with ``--list`` every changed game.
"""

from __future__ import annotations

import argparse
import json
import sys

from sqlalchemy import select

from obook.book.keys import replay
from obook.book.selfplay import OWNERSHIP_PLAYOUTS, move_seed, mutation_config
from obook.go.board import EMPTY
from obook.playout.ownership import area_count, final_area, final_score, stone_status
from obook.store.books import get_book
from obook.store.db import open_store
from obook.store.games import GAMES, game_from_row
from obook.store.models import FINISHED, SELFPLAY

def old_area(position, removed: set[int]) -> tuple[int, int]:
    """The count before issue 15 (``area_without``): the dead stones taken off the board, so a region
    that then touches both colours is nobody's."""
    return area_count(position, {p: (EMPTY if p in removed else int(position.board.color[p]))
                                 for p in position.points()})


def winner(score: float) -> str | None:
    return "B" if score > 0 else "W" if score < 0 else None


def rescore(url: str, name: str) -> dict:
    store = open_store(url)
    with store.read() as conn:
        book = get_book(conn, name)
        rows = [game_from_row(r) for r in conn.execute(
            select(GAMES).where(GAMES.c.book_id == book.id, GAMES.c.status == FINISHED).order_by(GAMES.c.id))]
    policy = mutation_config(book).policy
    summary = {"book": name, "finished": len(rows), "rescored": 0, "resigned_or_seeded": 0,
               "old_reproduces_stored": 0, "new_reproduces_stored": 0, "settled_reproduces_stored": 0,
               "settled_changed": 0, "settled_winner_changed": 0, "with_dead_stones": 0, "score_changed": 0, "winner_changed": 0,
               "at_move_cap": 0, "changed": []}
    for game in rows:
        if game.source != SELFPLAY or game.score is None or (game.result or "").endswith("+R"):
            summary["resigned_or_seeded"] += 1
            continue
        position = replay(book.size, book.komi, book.superko, game.moves)
        status = stone_status(position, OWNERSHIP_PLAYOUTS, policy, seed=move_seed(game.seed, 10**6), settle=False)
        dead = status.dead_points()
        settled = final_score(position, stone_status(position, OWNERSHIP_PLAYOUTS, policy,
                                                     seed=move_seed(game.seed, 10**6)))
        ob, ow = old_area(position, dead)
        nb, nw = final_area(position, dead)
        old, new = ob - ow - book.komi, nb - nw - book.komi
        summary["rescored"] += 1
        summary["old_reproduces_stored"] += old == game.score
        summary["new_reproduces_stored"] += new == game.score
        summary["settled_reproduces_stored"] += settled == game.score
        summary["settled_changed"] += settled != new
        summary["settled_winner_changed"] += winner(settled) != winner(new)
        summary["with_dead_stones"] += bool(dead)
        summary["at_move_cap"] += position.passes < 2
        if old != new:
            summary["score_changed"] += 1
            summary["winner_changed"] += winner(old) != winner(new)
            summary["changed"].append({"game": game.id, "stored": game.result, "old": old, "new": new,
                                       "dead": len(dead)})
    store.dispose()
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the book's store (sqlite:///path or postgresql://...)")
    parser.add_argument("--book", required=True)
    parser.add_argument("--list", action="store_true", help="list every game whose score changes")
    args = parser.parse_args()
    from obook.errors import ObookError

    try:
        summary = rescore(args.url, args.book)
    except ObookError as exc:
        print(f"rescore: {exc}", file=sys.stderr)
        return 2
    if not args.list:
        summary["changed"] = len(summary["changed"])
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
