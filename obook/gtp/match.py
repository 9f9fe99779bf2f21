"""Matches between two GTP engines, refereed by obook's own rules.

Each engine is an obook search configuration (run as an ``obook gtp`` subprocess) or any GTP
command line, such as GNU Go. The referee keeps the game in a ``Position``: every move an engine
generates is checked there before the opponent hears it, so an illegal move loses the game
(reported with the rule it broke) and no engine's opinion of the score is ever used. A game ends
after two passes, a resignation or a move cap, and is scored by area (``Position.score``). When the
referee's playouts find dead stones on the board after the two passes, the engines first play a
KGS-style clean-up phase (``kgs-genmove_cleanup`` where supported) until two more passes, so that
dead stones are captured rather than counted.

Colours alternate (A takes Black in even-numbered games); every game is saved as SGF. The summary is
A's score (wins plus half the draws) with a Wilson 95% interval, per colour, the average game
length and the engines' thinking time per move. ``parallel`` games run at once, each with its own
pair of engine processes.

An obook engine playing from a book (``book=NAME`` in its spec) is checked before the match: a book
made for another size, komi or engine version would never be used, and is refused. After each game
the referee asks such an engine (``obook-book_stats``) how many book moves it played and at which ply
it left the book; the summary gives the means per engine and every game's figures.
"""

from __future__ import annotations

import json
import queue
import shlex
import shutil
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from obook.book.library import open_book_store, open_keyed_book
from obook.book.player import book_mismatch
from obook.errors import IllegalMoveError, ObookError
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.sgf import save_sgf
from obook.go.vertex import format_vertex, parse_vertex
from obook.gtp.client import GTPClient, GTPError
from obook.playout.ownership import stone_status
from obook.search.config import SearchConfig
from obook.stats import wilson_interval

COLOR_LETTER = {BLACK: "B", WHITE: "W"}
COLOR_WORD = {BLACK: "black", WHITE: "white"}
GAME_PLACEHOLDER = "{game}"


class MatchError(ObookError):
    """A match that cannot be run (an engine that does not start, bad options)."""


@dataclass
class EngineSpec:
    """How to start one side: the label it was given, and the command line."""

    label: str
    argv: list[str]
    config: SearchConfig | None = None  # for obook engines
    book: str | None = None  # the book an obook engine plays from
    book_db: str | None = None  # its store (None: OBOOK_DATABASE_URL)

    @property
    def is_obook(self) -> bool:
        return self.config is not None

    def argv_for(self, index: int) -> list[str]:
        """The command line of game ``index``: ``{game}`` in a GTP command becomes the game's number,
        so that ``gnugo --seed {game}`` plays game i with seed i in every match (two series of the
        same opponent are then paired game by game, and such an engine is started anew each game)."""
        return [arg.replace(GAME_PLACEHOLDER, str(index)) for arg in self.argv]


def parse_engine(text: str, seconds: float | None = None) -> EngineSpec:
    """``obook:SPEC`` or a bare obook spec (``playouts=2000,policy=atari50``) is an obook engine;
    ``gtp:COMMAND`` or anything with a space or a slash is a GTP command line. ``seconds`` (per
    move) is added to obook configurations."""
    raw = text.strip()
    if raw.startswith("gtp:"):
        return _command_engine(raw, raw[4:])
    if raw.startswith("obook:") or raw == "obook":
        spec = raw[6:] if raw.startswith("obook:") else ""
    elif " " in raw or "/" in raw:
        return _command_engine(raw, raw)
    else:
        spec = raw
    spec, book_args = _book_options(spec)
    overrides = {"seconds": seconds} if seconds else {}
    config = SearchConfig.from_spec(spec, **overrides)
    argv = [sys.executable, "-m", "obook.cli", "gtp", "--config", config.to_spec(), *book_args]
    options = dict(zip(book_args[::2], book_args[1::2]))
    return EngineSpec(label=raw, argv=argv, config=config, book=options.get("--book"), book_db=options.get("--book-db"))


BOOK_OPTIONS = {"book": "--book", "book_db": "--book-db", "book_min_games": "--book-min-games",
                "book_soft": "--book-soft", "book_own_moves": "--book-own-moves", "book_warm": "--book-warm",
                "book_choice": "--book-choice"}


def _book_options(spec: str) -> tuple[str, list[str]]:
    """Take ``book=NAME``, ``book_db=URL`` and ``book_min_games=N`` out of an obook spec: they are
    options of ``obook gtp`` (play from a book), not of the search."""
    kept, extra = [], []
    for item in spec.replace(";", ",").split(","):
        key, sep, value = item.strip().partition("=")
        flag = BOOK_OPTIONS.get(key.strip().replace("-", "_"))
        if sep and flag:
            extra += [flag, value.strip()]
        elif item.strip():
            kept.append(item.strip())
    return ",".join(kept), extra


def _command_engine(label: str, command: str) -> EngineSpec:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise MatchError(f"engine command {command!r}: {exc}") from None
    if not argv:
        raise MatchError(f"engine {label!r}: empty command line")
    if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
        raise MatchError(f"engine {label!r}: cannot find the program {argv[0]!r}")
    return EngineSpec(label=label, argv=argv)


def check_books(engines: list[EngineSpec], settings: "MatchSettings") -> None:
    """Refuse an obook engine's book that can never be used in this match (missing, or made for
    another size, komi or engine version)."""
    for role, spec in zip("AB", engines):
        if spec.book is None:
            continue

        try:
            store = open_book_store(spec.book_db)
            book = open_keyed_book(store, spec.book, "play from it")
        except ObookError as exc:
            raise MatchError(f"engine {role} ({spec.label}): {exc}") from None
        problem = book_mismatch(book, settings.size, settings.komi, where="this match")
        if problem is not None:
            raise MatchError(f"engine {role} ({spec.label}): {problem}: the book would never be used")


Opening = tuple[tuple[int, int], ...]  # (colour, point) moves a game starts from


def check_openings(openings: dict[int, Opening], settings: "MatchSettings") -> None:
    """A ``MatchError`` naming the first game whose opening has a negative number or a move the
    rules forbid, before any engine starts."""
    for index, opening in sorted(openings.items()):
        if index < 0:
            raise MatchError(f"game numbers must not be negative (an opening is given for game {index})")
        if not opening:
            continue
        position = Position(size=settings.size, komi=settings.komi, superko=settings.superko)
        for number, (color, point) in enumerate(opening, 1):
            try:
                position.play(point, color)
            except (IllegalMoveError, ValueError) as exc:
                raise MatchError(f"game {index + 1}'s opening: move {number} is illegal: {exc}") from None


@dataclass
class MatchSettings:
    games: int = 2
    size: int = 9
    komi: float = 7.5
    superko: bool = False
    parallel: int = 1
    seconds: float | None = None  # per move, sent to command-line engines as byo-yomi
    max_moves: int = 0  # 0: 3 * size * size
    sgf_dir: Path | None = None
    cleanup_playouts: int = 500  # referee playouts that decide whether a clean-up phase is needed
    first_game: int = 0  # the number of the first game (a series that continues: colours and {game} go on)

    def __post_init__(self) -> None:
        if self.games < 1:
            raise MatchError("--games must be at least 1")
        if self.first_game < 0:
            raise MatchError("the first game's number must not be negative")
        if not 2 <= self.size <= 19:
            raise MatchError(f"--size {self.size} is outside 2..19")
        if self.parallel < 1:
            raise MatchError("--parallel must be at least 1")
        if self.seconds is not None and self.seconds <= 0:
            raise MatchError("--seconds must be positive")
        if self.max_moves <= 0:
            self.max_moves = 3 * self.size * self.size


@dataclass
class GameRecord:
    index: int
    a_color: str  # "B" or "W"
    winner: str | None  # "A", "B" or None for a draw
    result: str  # SGF result: "B+3.5", "W+R", "B+F", "0"
    reason: str  # score, resignation, illegal move, engine error, move cap
    moves: int
    score: float | None = None  # Black's area score minus komi, when scored
    detail: str = ""
    seconds: dict[str, float] = field(default_factory=lambda: {"A": 0.0, "B": 0.0})
    engine_moves: dict[str, int] = field(default_factory=lambda: {"A": 0, "B": 0})
    book: dict[str, dict | None] = field(default_factory=lambda: {"A": None, "B": None})  # engines with a book:
    # {"book_moves": N, "left_at": PLY or None}, from the engine's obook-book_stats
    sgf: str = ""


class _Side:
    """One running engine and what the referee knows about it; once ``stop`` is set, no process is
    started any more (see ``kill``)."""

    def __init__(self, role: str, spec: EngineSpec, stop: threading.Event):
        self.role = role
        self.spec = spec
        self.client: GTPClient | None = None
        self.name = spec.label
        self.cleanup_command = "genmove"
        self.book_stats = False  # the engine answers obook-book_stats (an obook engine with a book)
        self.argv: list[str] = []  # the running process's command line
        self.stop = stop
        self._starting = threading.Lock()

    def start(self, index: int = 0) -> None:
        """Have the engine for game ``index`` running: the one already running unless it died or its
        command line for this game differs (``{game}``)."""
        argv = self.spec.argv_for(index)
        if self.client is not None and self.client.process.poll() is None and argv == self.argv:
            return
        self.close()
        try:
            with self._starting:
                if self.stop.is_set():
                    raise MatchError(f"engine {self.role} ({self.spec.label}): the match was stopped")
                self.client = GTPClient(argv)
                self.argv = argv
            name = self.client.send("name")
            try:
                version = self.client.send("version")
            except GTPError:
                version = ""
            self.name = f"{name} {version}".strip() if name else self.spec.label
            known = self.client.send("known_command kgs-genmove_cleanup").strip().lower()
            self.cleanup_command = "kgs-genmove_cleanup" if known == "true" else "genmove"
            self.book_stats = self.client.send("known_command obook-book_stats").strip().lower() == "true"
        except GTPError as exc:
            self.close()
            raise MatchError(f"engine {self.role} ({self.spec.label}) does not work: {exc}") from None

    def book_play(self, color: int) -> dict | None:
        """How this engine used its book as ``color`` in the game just played (None: no book, or the
        engine no longer answers)."""
        if not self.book_stats or self.client is None or self.client.process.poll() is not None:
            return None
        try:
            stats = json.loads(self.client.send("obook-book_stats"))
            return {"book_moves": int(stats[COLOR_WORD[color]]["book_moves"]),
                    "left_at": stats[COLOR_WORD[color]]["left_at"]}
        except (GTPError, ValueError, KeyError, TypeError):
            return None

    def close(self) -> None:
        if self.client is not None:
            try:
                self.client.close()
            except (GTPError, OSError):
                pass
            self.client = None

    def kill(self) -> None:
        """End the engine's process at once, from any thread: the game using it fails at its next
        exchange. With ``stop`` set first, no process can start after this."""
        with self._starting:
            client = self.client
            if client is not None and client.process.poll() is None:
                client.process.kill()


class _EnginePairs:
    """``count`` pairs of engines (A and B), each lent to one game at a time and kept running for the
    next game; ``kill`` ends them all, ``close`` quits them."""

    def __init__(self, a: EngineSpec, b: EngineSpec, count: int):
        self.stop = threading.Event()
        self.pairs = [(_Side("A", a, self.stop), _Side("B", b, self.stop)) for _ in range(count)]
        self._free: queue.SimpleQueue = queue.SimpleQueue()
        for pair in self.pairs:
            self._free.put(pair)

    def play(self, index: int, settings: MatchSettings, opening: Opening = ()) -> GameRecord:
        pair = self._free.get()
        try:
            return play_game(index, *pair, settings, opening)
        finally:
            self._free.put(pair)

    def kill(self) -> None:
        self.stop.set()
        for pair in self.pairs:
            for side in pair:
                side.kill()

    def close(self) -> None:
        for pair in self.pairs:
            for side in pair:
                side.close()


def play_game(index: int, a: _Side, b: _Side, settings: MatchSettings, opening: Opening = ()) -> GameRecord:
    """Play game ``index`` (A is Black when ``index`` is even) from the moves ``opening`` and save it
    as SGF. The opening's moves are played on the referee's board and sent to both engines; the game
    goes on from there (the player to move after them may be either engine)."""
    a_black = index % 2 == 0
    sides = {BLACK: a if a_black else b, WHITE: b if a_black else a}
    record = GameRecord(index=index, a_color="B" if a_black else "W", winner=None, result="", reason="", moves=0)
    position = Position(size=settings.size, komi=settings.komi, superko=settings.superko)
    comments: dict[int, str] = {}

    def forfeit(side: _Side, reason: str, detail: str) -> None:
        winner_color = WHITE if side is sides[BLACK] else BLACK
        record.winner = "A" if sides[winner_color] is a else "B"
        record.result = f"{COLOR_LETTER[winner_color]}+F"
        record.reason, record.detail = reason, f"{side.role} ({side.name}): {detail}"

    for side in (a, b):
        try:
            side.start(index)
            side.client.send(f"boardsize {settings.size}")
            side.client.send("clear_board")
            side.client.send(f"komi {settings.komi:g}")
            if settings.seconds and not side.spec.is_obook:
                side.client.send(f"time_settings 0 {settings.seconds:g} 1")
        except GTPError as exc:
            forfeit(side, "engine error", f"setup failed: {exc}")
            side.close()
            return _finish(record, position, a, b, sides, settings, comments)
    for color, point in opening:  # legal: run_match checked it (check_openings)
        position.play(point, color)
        vertex = format_vertex(point, settings.size)
        for side in (a, b):
            try:
                side.client.send(f"play {COLOR_LETTER[color].lower()} {vertex}")
            except GTPError as exc:
                forfeit(side, "engine error", f"rejected the opening's move {vertex}: {exc}")
                side.close()
                return _finish(record, position, a, b, sides, settings, comments)

    cleanup = False
    passes = 0
    while True:
        if len(position.moves) >= settings.max_moves:
            _score(record, position, sides, a, "move cap")
            break
        color = position.to_move
        side = sides[color]
        other = sides[3 - color]
        command = side.cleanup_command if cleanup else "genmove"
        started = time.perf_counter()
        try:
            answer = side.client.send(f"{command} {COLOR_LETTER[color].lower()}")
        except GTPError as exc:
            forfeit(side, "engine error", str(exc))
            side.close()
            break
        record.seconds[side.role] += time.perf_counter() - started
        record.engine_moves[side.role] += 1
        word = answer.strip().lower()
        if word == "resign":
            winner_color = 3 - color
            record.winner = "A" if sides[winner_color] is a else "B"
            record.result = f"{COLOR_LETTER[winner_color]}+R"
            record.reason = "resignation"
            break
        try:
            point = parse_vertex(word, settings.size)
            position.play(point, color)
        except IllegalMoveError as exc:
            comments[len(position.moves)] = f"{side.role} played {answer.strip()!r}: {exc}"
            forfeit(side, "illegal move", f"{answer.strip()!r}: {exc}")
            break
        try:
            other.client.send(f"play {COLOR_LETTER[color].lower()} {format_vertex(point, settings.size)}")
        except GTPError as exc:
            forfeit(other, "engine error", f"rejected the legal move {format_vertex(point, settings.size)}: {exc}")
            other.close()
            break
        passes = passes + 1 if point == PASS else 0
        if passes >= 2:
            if not cleanup:
                dead = stone_status(position, settings.cleanup_playouts).dead_points()
                if dead:
                    cleanup, passes = True, 0
                    comments[len(position.moves)] = "clean-up phase: capture the dead stones"
                    continue
            _score(record, position, sides, a, "score")
            break
    for color, side in sides.items():
        record.book[side.role] = side.book_play(color)
    return _finish(record, position, a, b, sides, settings, comments)


def _score(record: GameRecord, position: Position, sides: dict, a: _Side, reason: str) -> None:
    score = position.score()
    record.score = score
    record.result = position.result()
    record.reason = reason
    if score == 0:
        record.winner = None
    else:
        winner_color = BLACK if score > 0 else WHITE
        record.winner = "A" if sides[winner_color] is a else "B"


def _finish(record: GameRecord, position: Position, a: _Side, b: _Side, sides: dict, settings: MatchSettings,
            comments: dict[int, str]) -> GameRecord:
    record.moves = len(position.moves)
    if settings.sgf_dir is not None:
        path = settings.sgf_dir / f"game-{record.index + 1:04d}.sgf"
        summary = f"obook match game {record.index + 1}: A = {a.spec.label}, B = {b.spec.label}; {record.reason}"
        if record.detail:
            summary += f" ({record.detail})"
        save_sgf(path, position, black=sides[BLACK].name, white=sides[WHITE].name, result=record.result or None,
                 comments=comments, game_comment=summary, event="obook match")
        record.sgf = str(path)
    return record


@dataclass
class MatchSummary:
    a: str
    b: str
    games: int
    a_wins: int
    b_wins: int
    draws: int
    a_score: float  # wins + draws / 2, as a fraction of the games
    ci95: tuple[float, float]
    a_as_black: dict
    a_as_white: dict
    average_moves: float
    seconds_per_move: dict
    reasons: dict
    forfeits: list
    sgf_dir: str | None
    wall_seconds: float
    book: dict = field(default_factory=lambda: {"A": None, "B": None})  # see book_summary

    def to_dict(self) -> dict:
        data = asdict(self)
        data["ci95"] = list(self.ci95)
        return data


def summarise(a: EngineSpec, b: EngineSpec, records: list[GameRecord], settings: MatchSettings, wall: float) -> MatchSummary:
    a_wins = sum(r.winner == "A" for r in records)
    b_wins = sum(r.winner == "B" for r in records)
    draws = len(records) - a_wins - b_wins
    points = a_wins + 0.5 * draws
    n = len(records)

    def by_color(letter: str) -> dict:
        games = [r for r in records if r.a_color == letter]
        wins = sum(r.winner == "A" for r in games)
        drawn = sum(r.winner is None for r in games)
        return {"games": len(games), "wins": wins, "draws": drawn,
                "score": round((wins + 0.5 * drawn) / len(games), 4) if games else None}

    reasons: dict[str, int] = {}
    for r in records:
        reasons[r.reason] = reasons.get(r.reason, 0) + 1
    per_move = {}
    for role in ("A", "B"):
        moves = sum(r.engine_moves[role] for r in records)
        per_move[role] = round(sum(r.seconds[role] for r in records) / moves, 4) if moves else None
    forfeits = [{"game": r.index + 1, "reason": r.reason, "detail": r.detail, "sgf": r.sgf}
                for r in records if r.result.endswith("+F")]
    low, high = wilson_interval(points, n)
    book = {role: book_summary(spec, role, records) for role, spec in (("A", a), ("B", b))}
    return MatchSummary(
        a=a.label, b=b.label, games=n, a_wins=a_wins, b_wins=b_wins, draws=draws,
        a_score=round(points / n, 4) if n else 0.0, ci95=(round(low, 4), round(high, 4)),
        a_as_black=by_color("B"), a_as_white=by_color("W"),
        average_moves=round(sum(r.moves for r in records) / n, 2) if n else 0.0,
        seconds_per_move=per_move, reasons=reasons, forfeits=forfeits,
        sgf_dir=str(settings.sgf_dir) if settings.sgf_dir else None, wall_seconds=round(wall, 2), book=book,
    )


def book_summary(spec: EngineSpec, role: str, records: list[GameRecord]) -> dict | None:
    """How engine ``role`` used its book over the match (None: it has no book): the means over the
    games it reported (book moves a game; the ply it left the book at, over the games where it left),
    how many games it never left the book, and every game's figures."""
    if spec.book is None:
        return None
    games = []
    for r in records:
        play = r.book[role]
        if play is not None:
            own = r.a_color if role == "A" else ("W" if r.a_color == "B" else "B")
            games.append({"game": r.index + 1, "color": own, **play})
    left = [g["left_at"] for g in games if g["left_at"] is not None]
    return {
        "book": spec.book,
        "games": len(games),
        "mean_book_moves": round(sum(g["book_moves"] for g in games) / len(games), 3) if games else None,
        "mean_left_at": round(sum(left) / len(left), 3) if left else None,
        "never_left": len(games) - len(left),
        "per_game": games,
    }


def run_match(
    a: EngineSpec,
    b: EngineSpec,
    settings: MatchSettings,
    on_game: Callable[[GameRecord], bool | None] | None = None,
    openings: dict[int, Opening] | None = None,
) -> tuple[MatchSummary, list[GameRecord]]:
    """Play ``settings.games`` games, ``settings.parallel`` at a time (each game borrows one of
    ``parallel`` pairs of engine processes); ``on_game`` hears of every finished game, in the order
    they finish, and ends the match by returning True (a sequential test that has decided): the
    games not begun are cancelled; those begun finish, and are reported and counted.
    With ``openings`` the games are its keys instead (game numbers, which set the colours and
    ``{game}``), each played on from its moves: a recorded game's position, replayed with the
    same opponent seed (``benchmarks/resign_oracle.py``).
    An interruption (Ctrl-C) or a failed game cancels the games not begun and kills the engines,
    which ends the games being played."""
    check_books([a, b], settings)
    if openings is None:
        openings = {index: () for index in range(settings.first_game, settings.first_game + settings.games)}
    check_openings(openings, settings)
    if settings.sgf_dir is not None:
        try:
            settings.sgf_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MatchError(f"cannot create {settings.sgf_dir}: {exc.strerror or exc}") from None
    workers = max(1, min(settings.parallel, len(openings)))
    engines = _EnginePairs(a, b, workers)
    started = time.perf_counter()
    records: list[GameRecord] = []
    games: list[Future] = []
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="match") as pool:
            try:
                games += [pool.submit(engines.play, index, settings, openings[index]) for index in sorted(openings)]
                for game in as_completed(games):
                    if game.cancelled():
                        continue
                    records.append(_game_record(game))
                    if on_game is not None and on_game(records[-1]) is True:
                        for rest in games:
                            rest.cancel()
            except BaseException:
                for game in games:
                    game.cancel()
                engines.kill()
                raise
    finally:
        engines.close()
    records.sort(key=lambda r: r.index)
    return summarise(a, b, records, settings, time.perf_counter() - started), records


def _game_record(game: Future) -> GameRecord:
    """The finished game's record; a game that failed stops the match with a ``MatchError``
    (or the ``ObookError`` it raised)."""
    try:
        return game.result()
    except ObookError:
        raise
    except BaseException as exc:
        raise MatchError(f"the match stopped: {type(exc).__name__}: {exc}") from exc
