"""Do a series' recorded games lie in this store's book? (issue 32)

A match's games (``benchmarks/minimax_book.py``'s JSON lines and SGFs) record where play left the
book (``left_at``: the ply, counted from 1, of the move played from the first position the book
does not hold). Replaying each game through another store's book says whether those games are
games of that book too: every position before that one is in it, and that one is not. A store rebuilt with the same settings
(a lost store, or a build repeated to check that builds are reproducible) passes exactly; another
build, or the same build at another size, does not.

    python benchmarks/book_lines.py sqlite:///b025t2-1000.db:b025t2 --series b025t --checkpoint 1000
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from minimax_book import DEFAULT_OUT, load, replayed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", metavar="URL:BOOK")
    parser.add_argument("--series", required=True, help="the recorded series whose games to replay")
    parser.add_argument("--checkpoint", type=int, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()

    from obook.book.backup import load_nodes
    from obook.book.keys import canonical_view
    from obook.book.library import open_book_store
    from obook.store.books import get_book

    url, name = args.store.rsplit(":", 1)
    store = open_book_store(url)
    with store.read() as conn:
        nodes = load_nodes(conn, get_book(conn, name).id)
    rows = [r for r in load(args.out) if r.get("kind") == "game" and r["book"] == args.series and r.get("left_at") is not None
            and (args.checkpoint is None or r["checkpoint"] == args.checkpoint)]
    if not rows:
        print(f"no recorded game of series {args.series!r} with the ply it left the book", file=sys.stderr)
        return 1
    inside = missing = left_alike = 0
    for r in rows:
        for ply, position, _ in replayed(r, r["left_at"]):
            held = canonical_view(position)[0] in nodes
            if ply < r["left_at"] - 1:
                inside, missing = inside + held, missing + (not held)
            else:
                left_alike += not held
    print(f"{len(rows)} games of {args.series!r} replayed through {name!r} ({url}, {len(nodes)} nodes): "
          f"positions before they left the book: {inside} held, {missing} not; "
          f"games that leave it where they left the recorded book: {left_alike}")
    return 0 if missing == 0 and left_alike == len(rows) else 2


if __name__ == "__main__":
    sys.exit(main())
