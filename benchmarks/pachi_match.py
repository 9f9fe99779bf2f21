"""obook against Pachi 12.90 (built without its neural networks): the strength anchor of issue 35.

Run by hand, on a quiet machine: ``python benchmarks/pachi_match.py [--seconds 0.25] [--games 100]``
(``scripts/build_pachi.sh`` builds the Pachi binary first). obook plays its default configuration
(plus ``--config``) and Pachi ``pachi -t S threads=1`` (S seconds a move, GTP time settings
ignored), so both sides think the same time on one core each; ``--playouts N`` instead gives both a
fixed budget (obook ``playouts=N``, Pachi ``-t =N``; Pachi's least is 500). With a wall-time
budget Pachi stops a move early (on a quiet machine it spends about 0.1 s a move at 0.25 s and at
1 s alike), so equal budgets are not equal spending: ``--pachi-playouts N`` keeps
obook on ``--seconds`` and gives Pachi ``-t =N`` instead (N what Pachi searches in that time; the
report's seconds a move show both sides' spending); ``--pachi-playouts auto`` finds that N at the start of
the run: ``CALIBRATION_GAMES`` games against obook (not recorded) with Pachi at ``-t =CALIBRATION_PLAYOUTS``,
and N is that count scaled by ``--seconds`` over Pachi's mean seconds a move in them
(a fixed N is equal time only on the day it was measured: 16,000 playouts took 1.06 s a move on
2026-11-29 and 0.76 s on 2026-12-05). A resumed run keeps the N its first games were played with. Colours alternate;
9x9, komi 7.5, Chinese (area) rules. ``obook match``'s referee checks every move and counts
finished games by area after a clean-up phase; GNU Go's ``--score aftermath`` counts the saved SGF
again as a third party (``gnugo_result``; ``--no-gnugo`` skips it), and the report says how often
the two counts disagree on the winner.

Every finished game is appended to ``--out`` (JSON lines: budget, both engines' command lines, the
result, the GNU Go count, the load average when the run began, and ``--run``, a label such as
``smoke`` for runs on a loaded machine), its SGF saved under ``--out``'s name. An interrupted run
continues where it stopped; ``--report`` only prints the table of what is recorded. ``--pachi-options`` adds
Pachi engine options (``resign_threshold=0``: it never resigns).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from obook.gtp.match import EngineSpec, MatchError, MatchSettings, parse_engine, run_match
from obook.stats import game_points, wilson_interval

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PACHI = ROOT / ".cache" / "pachi" / "pachi"
DEFAULT_OUT = Path("docs/pachi-results/pachi.jsonl")
GNUGO = os.environ.get("OBOOK_GNUGO", "/usr/games/gnugo")  # as the tests
SIZE, KOMI = 9, 7.5
PACHI_MIN_PLAYOUTS = 500  # GJ_MINGAMES in Pachi's ownermap.h: -t =N refuses less
CALIBRATION_PLAYOUTS = 20000  # Pachi's playouts a move while its speed is measured
CALIBRATION_GAMES = 4  # games against obook that measure it (about 100 of Pachi's moves)


def pachi_engine(pachi: Path, seconds: float | None, playouts: int | None, options: str = "") -> EngineSpec:
    """Pachi on one thread, Chinese rules, no pondering (its default), with a forced time setting:
    ``-t S`` (S seconds a move: one-period byo-yomi, which Pachi keeps a little under) or ``-t =N``."""
    if playouts is not None and playouts < PACHI_MIN_PLAYOUTS:
        raise MatchError(f"--playouts {playouts}: Pachi plays at least {PACHI_MIN_PLAYOUTS} playouts a move")
    budget = f"={playouts}" if playouts is not None else f"{seconds:g}"
    return parse_engine(f"gtp:{pachi} --rules chinese -t {budget} " + ",".join(filter(None, ["threads=1", options])))


def calibrate_pachi(pachi: Path, obook: EngineSpec, seconds: float, parallel: int, options: str = "",
                    games: int = CALIBRATION_GAMES, start: int = CALIBRATION_PLAYOUTS) -> tuple[int, float]:
    """Pachi's playouts in ``seconds`` a move on this machine now, in the conditions of the match:
    ``games`` games (``parallel`` at once) against ``obook`` with Pachi at ``-t =start``, then
    ``start`` scaled by ``seconds`` over Pachi's mean seconds a move. Self-play would not do: Pachi's
    ``=N`` counts the playouts its tree kept from the last search, and in self-play its tree holds
    both sides' moves (on 2026-12-05, 10,000 playouts took 0.28 s a move there; 20,000 took 0.86 s in
    games against obook). Returns the count (rounded to hundreds) and the seconds a move measured."""
    records = []
    with tempfile.TemporaryDirectory() as scratch:
        run_match(obook, pachi_engine(pachi, None, start, options),
                  MatchSettings(games=games, size=SIZE, komi=KOMI, parallel=parallel, sgf_dir=Path(scratch)),
                  on_game=records.append)
    moves = sum(record.engine_moves["B"] for record in records)
    if not moves:
        raise MatchError("calibrating Pachi failed: it played no move")
    per_move = sum(record.seconds["B"] for record in records) / moves
    return max(PACHI_MIN_PLAYOUTS, int(round(start * seconds / per_move, -2))), per_move


def obook_engine(config: str, seconds: float | None, playouts: int | None) -> EngineSpec:
    budget = f"playouts={playouts}" if playouts is not None else f"seconds={seconds:g}"
    return parse_engine("obook:" + ",".join(filter(None, [config, budget])))


def gnugo_count(sgf: Path, gnugo: str = GNUGO) -> str | None:
    """GNU Go's area count of the game's final position (``--score aftermath``: it plays the game out
    with its own dead-stone judgement before counting), as an SGF result (``B+3.5``)."""
    try:
        done = subprocess.run([gnugo, "--score", "aftermath", "--chinese-rules", "--komi", f"{KOMI:g}",
                               "-l", str(sgf)], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"(Black|White) wins by ([0-9.]+) points", done.stdout)
    if found:
        return f"{found.group(1)[0]}+{float(found.group(2)):g}"
    return "0" if re.search(r"\bjigo\b|draw", done.stdout, re.IGNORECASE) else None


def load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def budget_key(seconds: float | None, playouts: int | None, pachi_playouts: int | str | None = None) -> str:
    """The budget a row is recorded under: ``P600``, ``0.25s``, ``1s-pachiP16000`` (obook by time,
    Pachi by playouts) or ``1s-pachiPauto`` (Pachi's count calibrated at the start of the run, in
    each row's ``pachi_playouts``)."""
    if playouts is not None:
        return f"P{playouts}"
    return f"{seconds:g}s" + (f"-pachiP{pachi_playouts}" if pachi_playouts is not None else "")


def pachi_count(text: str | None) -> int | str | None:
    """``--pachi-playouts``: a playout count, or ``auto``."""
    if text is None or text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--pachi-playouts {text!r}: give a playout count or 'auto'") from None


def play(args: argparse.Namespace) -> None:
    pachi = Path(args.pachi)
    if not os.access(pachi, os.X_OK):
        raise MatchError(f"no Pachi binary at {pachi}: build it with scripts/build_pachi.sh")
    budget = budget_key(args.seconds, args.playouts, args.pachi_playouts)
    budget = budget if args.size == SIZE else f"{budget}-{args.size}x{args.size}"
    recorded = [r for r in load(args.out) if (r["budget"], r["config"], r["run"]) == (budget, args.config, args.run)]
    done = len(recorded)
    if done >= args.games:
        return
    a = obook_engine(args.config, args.seconds, args.playouts)
    pachi_playouts = args.playouts if args.pachi_playouts is None else args.pachi_playouts
    calibration = None
    if pachi_playouts == "auto":
        if recorded:
            pachi_playouts, calibration = recorded[0]["pachi_playouts"], recorded[0]["pachi_calibration"]
        else:
            pachi_playouts, per_move = calibrate_pachi(pachi, a, args.seconds, args.parallel, args.pachi_options)
            calibration = {"playouts": CALIBRATION_PLAYOUTS, "seconds_per_move": round(per_move, 4),
                           "games": CALIBRATION_GAMES, "parallel": args.parallel}
        print(f"Pachi calibrated: {pachi_playouts} playouts a move for {args.seconds:g} s ({calibration})",
              file=sys.stderr, flush=True)
    b = pachi_engine(pachi, args.seconds, pachi_playouts, args.pachi_options)
    sgf_dir = args.out.with_suffix("") / f"{args.run}-{budget}" / f"from-{done:04d}"
    # No GTP time settings: Pachi's -t overrides them, and it refuses a fractional time_settings.
    settings = MatchSettings(games=args.games - done, size=args.size, komi=KOMI, parallel=args.parallel,
                             sgf_dir=sgf_dir, first_game=done)
    load_average = [round(x, 2) for x in os.getloadavg()]
    engine = dataclasses.asdict(a.config)
    print(f"{budget} ({args.run}): {done} games recorded, playing {args.games - done}; load {load_average}",
          file=sys.stderr, flush=True)

    def record(game) -> None:
        check = gnugo_count(Path(game.sgf)) if args.gnugo and game.reason in ("score", "move cap") else None
        row = {"run": args.run, "budget": budget, "seconds": args.seconds if args.playouts is None else None,
               "playouts": args.playouts, "config": args.config, "game": game.index,
               "a_color": game.a_color, "winner": game.winner, "result": game.result, "reason": game.reason,
               "gnugo_result": check, "moves_played": game.moves, "engine_seconds": game.seconds,
               "engine_moves": game.engine_moves, "detail": game.detail, "sgf": game.sgf,
               "load_average": load_average, "obook": a.argv[-1] if a.config else a.label, "obook_config": engine,
               "pachi": b.label[4:], "pachi_playouts": pachi_playouts, "pachi_calibration": calibration}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        print(f"game {row['game'] + 1}: obook {'Black' if game.a_color == 'B' else 'White'}, {game.result} "
              f"({game.reason}; GNU Go: {check or '-'})", file=sys.stderr, flush=True)

    run_match(a, b, settings, on_game=record)


def report(rows: list[dict]) -> list[dict]:
    """obook's score against Pachi for each (run, budget, config), with a Wilson 95% interval, per colour,
    the engines' seconds per move and the games where GNU Go's count names another winner."""
    cells: dict[tuple, list[dict]] = {}
    for row in rows:
        cells.setdefault((row["run"], row["budget"], row["config"]), []).append(row)
    table = []
    for (run, budget, config), games in sorted(cells.items()):
        n = len(games)
        points = sum(game_points(g["winner"]) for g in games)
        low, high = wilson_interval(points, n)

        def colour(letter: str) -> str:
            part = [g for g in games if g["a_color"] == letter]
            return f"{sum(g['winner'] == 'A' for g in part)}/{len(part)}"

        def per_move(role: str) -> float | None:
            moves = sum(g["engine_moves"][role] for g in games)
            return round(sum(g["engine_seconds"][role] for g in games) / moves, 3) if moves else None

        checked = [g for g in games if g.get("gnugo_result")]
        disagree = [g["game"] + 1 for g in checked if g["gnugo_result"][0] != g["result"][0]]
        table.append({
            "run": run, "budget": budget, "config": config, "games": n, "obook_score": round(points / n, 4),
            "ci95": [round(low, 4), round(high, 4)], "obook_black": colour("B"), "obook_white": colour("W"),
            "seconds_per_move": {"obook": per_move("A"), "pachi": per_move("B")},
            "endings": {r: sum(g["reason"] == r for g in games) for r in sorted({g["reason"] for g in games})},
            "gnugo_checked": len(checked), "gnugo_disagrees": disagree,
            "pachi_playouts": sorted({g["pachi_playouts"] for g in games if g.get("pachi_playouts") is not None}),
        })
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=float, default=0.25, help="seconds a move for both (default 0.25)")
    budget.add_argument("--playouts", type=int, default=None, help="fixed playouts a move for both instead")
    parser.add_argument("--pachi-playouts", type=pachi_count, default=None,
                        help="with --seconds: Pachi plays N playouts a move (-t =N) instead of its early-stopping "
                             "clock; 'auto': N calibrated to --seconds at the start of the run")
    parser.add_argument("--games", type=int, default=100, help="games of this run and budget, in all")
    parser.add_argument("--parallel", type=int, default=1, help="games at once (each side uses one core)")
    parser.add_argument("--config", default="", help="obook search options besides the defaults and the budget")
    parser.add_argument("--pachi", default=str(DEFAULT_PACHI), help="the Pachi binary (default .cache/pachi/pachi)")
    parser.add_argument("--pachi-options", default="", help="Pachi engine options besides threads=1 (resign_threshold=0)")
    parser.add_argument("--size", type=int, default=SIZE, help="board size (default 9; another size is its own budget)")
    parser.add_argument("--run", default="figure", help="label of the run, e.g. smoke on a loaded machine")
    parser.add_argument("--no-gnugo", dest="gnugo", action="store_false", help="skip GNU Go's count of each game")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report", action="store_true", help="only print the table of recorded games")
    args = parser.parse_args()
    if args.seconds is not None and args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.pachi_playouts is not None and args.playouts is not None:
        parser.error("--pachi-playouts goes with --seconds (--playouts already fixes both sides)")
    if not args.report:
        try:
            play(args)
        except MatchError as exc:
            print(f"pachi_match: {exc}", file=sys.stderr)
            return 2
    for line in report(load(args.out)):
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
