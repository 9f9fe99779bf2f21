"""The final count of finished games with dead stones, ours against GNU Go 3.8's.

Run by hand: ``python benchmarks/score_vs_gnugo.py [--games 24] [--sizes 7,9,11,13] [--random-moves 0.3]``,
or ``--random-finish [--eye plain|obook]`` for games of random moves only (drawn from the legal moves
that fill no eye of the mover's, until two passes), which often end unsettled: a string in atari whose liberty is an eye of
its own side, a pending capture.

Each game starts with a share of random legal moves (``--random-moves`` times the number of points,
so that dead stones are left on the board), then GNU Go (``--level``) plays both sides until two
passes. The finished position is scored by GNU Go (``final_score``, ``final_status_list``,
``--chinese-rules``) and by obook: the dead stones found by playouts (``stone_status``) counted for
their capturer (``final_area``), and the old count that took them off (``old``). Prints one JSON line
per game and a summary; with ``--json FILE`` also writes the games (moves included) there. ``ours`` is
the count after playing the game on (``stone_status`` settles the board as GNU Go does), ``board`` the
count of the board as it stands (``board_status``), ``uncertain_ours`` the strings whose fate the
playouts leave open, ``open_ours`` the empty points still open (both say: not settled), ``played_on`` the moves our count played on.

Where the counts differ with the same dead stones, the line says why (``dame``: GNU Go plays the game
on before it counts, ``genmove_conservative`` then the aftermath, both sides filling neutral points
alternately from the side to move, and counts a still-open point that both sides reach for Black;
``seki``: GNU Go counts neither the eyes nor the shared liberties of a group in seki, Chinese counting
gives the eyes to their owner).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from obook.go import board as rules
from obook.go.board import BLACK, EMPTY, PASS, WHITE
from obook.go.position import Position
from obook.gtp.client import GTPClient
from obook.playout.ownership import (
    SEKI,
    area_count,
    area_map,
    board_status,
    board_strings,
    capturers_view,
    eye_of,
    final_area,
    final_score,
    liberties,
    stone_status,
)

GNUGO = "/usr/games/gnugo"
KOMI = 7.5


def play_game(size: int, random_moves: int, level: int, rng: random.Random, gnugo: str = GNUGO,
              finisher: str = "gnugo") -> list[str]:
    """Moves of one game: ``random_moves`` random legal moves, then the ``finisher`` (GNU Go, or
    obook's search with ``finisher`` as its spec, e.g. ``playouts=64``) for both until two passes."""
    position = Position(size=size, komi=KOMI)
    moves: list[str] = []
    for _ in range(random_moves):
        legal = position.legal_vertices()
        if not legal:
            break
        move = rng.choice(legal)
        position.play(move)
        moves.append(move)
    if finisher != "gnugo":
        from obook.search.players import make_player

        player = make_player(f"{finisher},seed={rng.randrange(1, 10**6)}")
        try:
            while position.passes < 2 and len(moves) < 3 * size * size:
                point = player.genmove(position).move  # a resignation plays on: the game ends by passes
                position.play(point)
                moves.append(position.vertex(point))
        finally:
            player.close()
        return moves
    with GTPClient([gnugo, "--mode", "gtp", "--chinese-rules", "--level", str(level),
                    "--never-resign"]) as engine:
        setup(engine, size, moves)
        passes = 0
        color = "white" if len(moves) % 2 else "black"
        while passes < 2 and len(moves) < 3 * size * size:
            move = engine.send(f"genmove {color}").upper()
            move = "pass" if move == "PASS" else move
            position.play(move)
            moves.append(move)
            passes = passes + 1 if move == "pass" else 0
            color = "white" if color == "black" else "black"
    return moves


def random_finish(size: int, rng: random.Random, eye: str = "plain") -> list[str]:
    """Moves of a game of random moves, each drawn from the legal moves that fill no eye of the
    mover's, a pass when there is none, until two passes (positional superko, so that the game
    ends; the moves are legal under simple ko too). A ``plain`` eye is an empty point whose
    neighbours on the board are all the mover's stones (GoGui's and most random players' rule: it
    leaves strings in atari in their own eye, and captures pending, when the game ends); ``obook``
    is ``rules.is_eye``, which also fills a point next to a string of its own in atari."""
    position = Position(size=size, komi=KOMI, superko=True)  # simple ko lets random play cycle on 19x19
    moves: list[str] = []
    w = size + 2
    while not position.is_over:
        color = position.to_move
        board = position.board
        if eye == "obook":
            candidates = [p for p in position.legal_moves() if not rules.is_eye(board, p, color)]
        else:
            candidates = [p for p in position.legal_moves()
                          if any(int(board.color[q]) not in (color, rules.BORDER) for q in (p - w, p - 1, p + 1, p + w))]
        point = rng.choice(candidates) if candidates else PASS
        position.play(point)
        moves.append(position.vertex(point))
    return moves


def setup(engine: GTPClient, size: int, moves: list[str]) -> None:
    engine.send(f"boardsize {size}")
    engine.send("clear_board")
    engine.send(f"komi {KOMI:g}")
    for index, move in enumerate(moves):
        engine.send(f"play {'black' if index % 2 == 0 else 'white'} {move}")


def old_area(position, removed: set[int]) -> tuple[int, int]:
    """The count before issue 15 (``area_without``): the dead stones taken off the board, so a region
    that then touches both colours is nobody's."""
    return area_count(position, {p: (EMPTY if p in removed else int(position.board.color[p]))
                                 for p in position.points()})


def parse_score(text: str) -> float:
    if text == "0":
        return 0.0
    sign = 1.0 if text[0] == "B" else -1.0
    return sign * float(text[2:])


def neutral_points(position: Position, dead: set[int]) -> list[int]:
    """Empty points that ``final_area`` gives to nobody."""
    return [p for p, side in area_map(position, capturers_view(position, dead)).items() if side == EMPTY]


def compare(size: int, moves: list[str], playouts: int, gnugo: str = GNUGO) -> dict:
    """GNU Go's final score and dead stones of the finished game ``moves`` against ours."""
    position = Position.from_moves(moves, size=size, komi=KOMI)
    started = time.perf_counter()
    status = stone_status(position, playouts, seed=1)
    ours = final_score(position, status)
    ours_seconds = time.perf_counter() - started
    as_it_stands = board_status(position, playouts, seed=1)
    ours_dead = sorted(position.vertex(p) for p in status.dead_points())
    started = time.perf_counter()
    with GTPClient([gnugo, "--mode", "gtp", "--chinese-rules", "--level", "10"]) as engine:
        setup(engine, size, moves)
        theirs_score = parse_score(engine.send("final_score"))
        gnugo_seconds = time.perf_counter() - started
        lists = {name: sorted(engine.send(f"final_status_list {name}").split())
                 for name in ("dead", "seki", "dame", "black_territory", "white_territory")}
    black, white = final_area(position, as_it_stands.dead_points())
    ob, ow = old_area(position, as_it_stands.dead_points())
    counted = status.counted or position
    neutral = sorted(counted.vertex(p) for p in neutral_points(counted, status.counted_dead or status.dead_points()))
    seki = sorted(position.vertex(p) for stones in status.stones(SEKI) for p in stones)
    row = {
        "size": size, "moves": len(moves), "gnugo": theirs_score, "ours": ours, "board": black - white - KOMI,
        "old": ob - ow - KOMI, "dead_gnugo": lists["dead"], "dead_ours": ours_dead,
        "same_dead": lists["dead"] == ours_dead,
        "dead_board": sorted(position.vertex(p) for p in as_it_stands.dead_points()),
        "played_on": [counted.vertex(p) for _, p in status.played_on],
        "uncertain_ours": [[counted.vertex(p) for p in stones] for stones in status.uncertain],
        "open_ours": len(status.open_ground),
        "neutral_ours": neutral, "seki_ours": seki, "seki_gnugo": lists["seki"], "dame_gnugo": lists["dame"],
        "seconds_ours": round(ours_seconds, 2), "seconds_gnugo": round(gnugo_seconds, 2),
    }
    row["differ_at_kos"] = bool(set(lists["dead"]) ^ set(ours_dead)) and (set(lists["dead"]) ^ set(ours_dead)) <= ko_stones(position)
    row["why"] = explain(row)
    return row


def ko_stones(position: Position) -> set[str]:
    """Vertices of the strings in atari whose liberty is an eye of their own (whoever moves first
    there decides them: the owner connects, the other side takes a ko), and of the stones next to
    such a liberty."""
    w = position.size + 2
    found = set()
    for color, stones in board_strings(position):
        lib = liberties(position, stones)
        if len(lib) == 1 and eye_of(position, min(lib), color):
            point = min(lib)
            found |= set(stones) | {q for q in (point - w, point - 1, point + 1, point + w)
                                    if int(position.board.color[q]) in (BLACK, WHITE)}
    return {position.vertex(p) for p in found}


def explain(row: dict) -> str:
    diff = row["gnugo"] - row["ours"]
    if diff == 0:
        if row["same_dead"]:
            return "equal"
        return "equal, dead stones differ at kos" if row["differ_at_kos"] else "equal, dead stones differ"
    if row["uncertain_ours"] or row["open_ours"]:
        return "unsettled"
    if row["differ_at_kos"]:
        return "kos"
    if not row["same_dead"]:
        return "dead stones differ"
    if row["seki_ours"] or row["seki_gnugo"]:
        return "seki"
    if abs(diff) <= len(row["neutral_ours"]):
        return "dame"
    return "unexplained"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=24)
    parser.add_argument("--sizes", default="7,9,11,13")
    parser.add_argument("--random-moves", type=float, default=0.3, help="share of the board played at random first")
    parser.add_argument("--level", type=int, default=0, help="GNU Go's level while it finishes the game")
    parser.add_argument("--finisher", default="gnugo",
                        help="who plays the game to its two passes: gnugo, or an obook search spec (playouts=64)")
    parser.add_argument("--random-finish", action="store_true",
                        help="random games to two passes (no eye filled) instead of random openings finished by a player")
    parser.add_argument("--eye", choices=("plain", "obook"), default="plain",
                        help="--random-finish: the eyes random moves never fill (see random_finish)")
    parser.add_argument("--playouts", type=int, default=1000, help="playouts behind our dead stones")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", help="write every game (with its moves) to this file")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for index in range(args.games):
        size = sizes[index % len(sizes)]
        if args.random_finish:
            moves = random_finish(size, rng, args.eye)
        else:
            moves = play_game(size, int(args.random_moves * size * size), args.level, rng, finisher=args.finisher)
        row = compare(size, moves, args.playouts)
        rows.append({**row, "game": moves})
        print(json.dumps({k: v for k, v in row.items()}), flush=True)
    with_dead = [r for r in rows if r["dead_gnugo"] or r["dead_ours"]]
    summary = {
        "games": len(rows),
        "equal_board": sum(r["gnugo"] == r["board"] for r in rows),
        "same_winner_board": sum((r["gnugo"] > 0) == (r["board"] > 0) for r in rows),
        "flagged_unsettled": sum(bool(r["uncertain_ours"] or r["open_ours"]) for r in rows),
        "flagged_unsettled_and_differ": sum(bool(r["uncertain_ours"] or r["open_ours"]) and r["gnugo"] != r["ours"]
                                            for r in rows),
        "seconds_ours": round(sum(r["seconds_ours"] for r in rows), 1),
        "seconds_gnugo": round(sum(r["seconds_gnugo"] for r in rows), 1),
        "with_dead_stones": len(with_dead),
        "same_dead": sum(r["same_dead"] for r in rows),
        "equal_new": sum(r["gnugo"] == r["ours"] for r in rows),
        "equal_old": sum(r["gnugo"] == r["old"] for r in rows),
        "same_winner_new": sum((r["gnugo"] > 0) == (r["ours"] > 0) for r in rows),
        "same_winner_old": sum((r["gnugo"] > 0) == (r["old"] > 0) for r in rows),
        "why": {why: sum(r["why"] == why for r in rows) for why in sorted({r["why"] for r in rows})},
    }
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
