"""Tune a search constant with a sequential test (issue 35, item 4), as fishtest tests chess engines.

Engine A is the default search with ``--test`` options, engine B the default with ``--base``
options, both at the same ``--budget`` (``playouts=2000`` keeps the test independent of the
machine's load; ``seconds=0.25`` is the equal-time test a change that costs speed needs). Games
are played in colour-swapped pairs (game 2i: A is Black, 2i+1: A is White); after every finished
game the log-likelihood ratio of H1 "A is ``--elo1`` logistic Elo stronger" against H0 "A is
``--elo0`` stronger" is computed from the complete pairs' pentanomial counts (``obook.stats.sprt_llr``), and
the test stops when it leaves Wald's bounds for ``--alpha``/``--beta`` (not before ``--min-pairs``
pairs), or at ``--max-games``.

    python benchmarks/sprt.py --test policy=heavy-ladder --budget playouts=2000 --elo0 0 --elo1 15

Every game is appended to ``--out`` (JSON lines with both engines' full configuration, the game's
SGF saved under ``--out``'s name), so an interrupted test continues where it stopped; ``--report``
prints each recorded test's state. Each test is identified by its ``--test``, ``--base``, ``--budget``,
``--size`` and ``--komi``; its bounds may be changed between runs (the LLR is recomputed from the games),
its engines may not (a default that changed since is refused: name the options).
Every game records the H0 and H1 it was played under, and a test is judged by those unless
``--elo0``/``--elo1`` are given.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from obook.errors import ObookError
from obook.gtp.match import MatchSettings, parse_engine, run_match
from obook.search.config import SearchConfig
from obook.stats import game_points, pentanomial, sprt_bounds, sprt_llr, wilson_interval

DEFAULT_OUT = Path("docs/sprt-results/sprt.jsonl")


@dataclasses.dataclass(frozen=True)
class TestSpec:
    test: str
    base: str
    budget: str
    size: int = 9
    komi: float = 7.5

    @property
    def name(self) -> str:
        board = "" if (self.size, self.komi) == (9, 7.5) else f" ({self.size}x{self.size}, komi {self.komi:g})"
        return f"{self.test or 'default'} vs {self.base or 'default'} at {self.budget}{board}"

    def engine(self, options: str) -> str:
        return "obook:" + ",".join(filter(None, [options, self.budget]))

    def rows(self, out: Path) -> list[dict]:
        return [r for r in load(out) if key(r) == dataclasses.astuple(self)]


def load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def key(row: dict) -> tuple:
    return row["test"], row["base"], row["budget"], row.get("size", 9), row.get("komi", 7.5)


def pair_scores(rows: list[dict]) -> list[float]:
    """The mean score of every pair whose two games (numbers 2i and 2i+1) are both recorded."""
    by_number = {r["game"]: r for r in rows}
    return [(game_points(by_number[n]["winner"]) + game_points(by_number[n + 1]["winner"])) / 2
            for n in sorted(by_number) if n % 2 == 0 and n + 1 in by_number]


@dataclasses.dataclass
class TestState:
    games: int
    score: float
    interval: tuple[float, float]
    counts: list[int]
    llr: float
    elo: tuple[float, float]  # H0 and H1, logistic Elo
    bounds: tuple[float, float]

    pairs_needed: int = 0

    @property
    def verdict(self) -> str | None:
        low, high = self.bounds
        if sum(self.counts) < self.pairs_needed:
            return None
        return "H1 (accept)" if self.llr >= high else "H0 (reject)" if self.llr <= low else None


DEFAULT_ELO = (0.0, 15.0)


def hypotheses(rows: list[dict], args: argparse.Namespace) -> tuple[float, float]:
    """The test's H0 and H1 in Elo: those given on the command line, else those its last game was
    played under (so that ``--report`` judges each test by its own bounds), else ``DEFAULT_ELO``."""
    recorded = next((r for r in reversed(rows) if "elo0" in r), None)
    elo0 = args.elo0 if args.elo0 is not None else recorded["elo0"] if recorded else DEFAULT_ELO[0]
    elo1 = args.elo1 if args.elo1 is not None else recorded["elo1"] if recorded else DEFAULT_ELO[1]
    if elo1 <= elo0:
        raise ObookError(f"H1 ({elo1:g} Elo) must be greater than H0 ({elo0:g} Elo)")
    return elo0, elo1


def state(rows: list[dict], args: argparse.Namespace) -> TestState:
    won = sum(game_points(r["winner"]) for r in rows)
    counts = pentanomial(pair_scores(rows))
    elo0, elo1 = hypotheses(rows, args)
    return TestState(games=len(rows), score=won / len(rows) if rows else 0.0, interval=wilson_interval(won, len(rows)),
                     counts=counts, llr=sprt_llr(counts, elo0, elo1), elo=(elo0, elo1),
                     bounds=sprt_bounds(args.alpha, args.beta), pairs_needed=args.min_pairs)


def run_test(spec: TestSpec, args: argparse.Namespace) -> TestState:
    rows = spec.rows(args.out)
    current = state(rows, args)
    if current.verdict or len(rows) >= args.max_games:
        return current
    first = max((r["game"] for r in rows), default=-1) + 1
    first += first % 2  # a pair starts on an even number, with A as Black
    a, b = parse_engine(spec.engine(spec.test)), parse_engine(spec.engine(spec.base))
    engines = {"A": dataclasses.asdict(a.config), "B": dataclasses.asdict(b.config)}
    if rows:
        check_same_engines(spec, rows[-1]["engines"], engines)
    sgf_dir = args.out.with_suffix("") / _folder(spec) / f"from-{first:05d}"
    settings = MatchSettings(games=args.max_games - len(rows), size=args.size, komi=args.komi, parallel=args.parallel,
                             sgf_dir=sgf_dir, first_game=first)
    print(f"{spec.name}: {len(rows)} games recorded, LLR {current.llr:.2f} in {_bounds(current)}; playing on",
          file=sys.stderr, flush=True)

    def record(game) -> bool:
        row = {"test": spec.test, "base": spec.base, "budget": spec.budget, "size": spec.size, "komi": spec.komi,
               "game": game.index,
               "a_color": game.a_color, "winner": game.winner, "result": game.result, "reason": game.reason,
               "moves_played": game.moves, "seconds": game.seconds, "sgf": game.sgf, "engines": engines,
               "elo0": current.elo[0], "elo1": current.elo[1]}
        with args.out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        rows.append(row)
        now = state(rows, args)
        print(f"  {now.games} games, {now.score:.1%}, LLR {now.llr:.2f}", file=sys.stderr, flush=True)
        return now.verdict is not None

    args.out.parent.mkdir(parents=True, exist_ok=True)
    run_match(a, b, settings, on_game=record)
    return state(rows, args)


def check_same_engines(spec: TestSpec, recorded: dict, now: dict) -> None:
    """Refuse to add games to a test whose recorded games had other engines: a default that changed
    since (``--test expand_threshold=4`` against the defaults, once 4 is the default) would otherwise
    mix two different tests under one name. Fields that only one side records (an option added since)
    are not compared."""
    changed = [f"{side}'s {field} {recorded[side][field]!r} -> {now[side][field]!r}"
               for side in ("A", "B") for field in sorted(set(recorded[side]) & set(now[side]))
               if recorded[side][field] != now[side][field]]
    if changed:
        raise ObookError(f"{spec.name}: its recorded games were played by other engines ({'; '.join(changed)}); "
                         "a default changed since: name the options explicitly (--test/--base) to start a new test")


def _folder(spec: TestSpec) -> str:
    text = f"{spec.test}--{spec.base}--{spec.budget}--{spec.size}-{spec.komi:g}"
    return "".join(c if c.isalnum() or c in "=._-" else "_" for c in text)


def _bounds(s: TestState) -> str:
    return f"[{s.bounds[0]:.2f}, {s.bounds[1]:.2f}] (H0 {s.elo[0]:g} Elo, H1 {s.elo[1]:g})"


def describe(spec: TestSpec, s: TestState) -> str:
    low, high = s.interval
    return (f"{spec.name}: {s.games} games, A {s.score:.1%} [{low:.1%}, {high:.1%}], pairs {s.counts}, "
            f"LLR {s.llr:.2f} in {_bounds(s)}: {s.verdict or 'undecided'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--test", default="", help="search options of engine A (over the defaults)")
    parser.add_argument("--base", default="", help="search options of engine B (default: the defaults)")
    parser.add_argument("--budget", default="playouts=2000", help="both engines' budget: playouts=N or seconds=T")
    parser.add_argument("--elo0", type=float, default=None,
                        help="H0: A's logistic Elo gain (default: the test's recorded H0, else 0)")
    parser.add_argument("--elo1", type=float, default=None,
                        help="H1: A's logistic Elo gain (default: the test's recorded H1, else 15)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.05)
    parser.add_argument("--max-games", type=int, default=2000)
    parser.add_argument("--min-pairs", type=int, default=10,
                        help="pairs before the test may stop (the variance of a few pairs is no estimate)")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report", action="store_true", help="print every recorded test and stop")
    args = parser.parse_args()
    if args.elo0 is not None and args.elo1 is not None and args.elo1 <= args.elo0:
        parser.error("--elo1 must be greater than --elo0")
    if args.report:
        for recorded in sorted({key(r) for r in load(args.out)}):
            spec = TestSpec(*recorded)
            try:
                print(describe(spec, state(spec.rows(args.out), args)))
            except ObookError as exc:
                parser.error(f"{spec.name}: {exc}")
        return 0
    for options in (args.test, args.base, args.budget):
        try:
            SearchConfig.from_spec(options)  # a misspelt option is an error before any game
        except ObookError as exc:
            parser.error(str(exc))
    spec = TestSpec(args.test, args.base, args.budget, args.size, args.komi)
    try:
        print(describe(spec, run_test(spec, args)))
    except ObookError as exc:
        parser.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
