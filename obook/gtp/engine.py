"""obook as a GTP engine (Go Text Protocol 2, with the GoGui, KGS and Leela-Zero/Sabaki extensions):
the command table and its handlers.

One ``GTPEngine`` holds the game (a ``Position``), the clock and a search player. The protocol
(``handle(line)`` for one command line, ``run(lines, out)`` for a session, ``# interrupt``) is
``obook.gtp.protocol``; arguments are read by ``obook.gtp.arguments``; analysis lines are written by
``obook.gtp.analysis``.

Every command checks all of its arguments before it changes anything, so a malformed or illegal
command answers ``? message`` and leaves the game exactly as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import TextIO

from obook import __version__
from obook.errors import ObookError
from obook.go import board as rules
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.sgf import game_to_sgf, read_sgf
from obook.go.vertex import format_vertex, point_of
from obook.gtp.analysis import (
    InfoPrinter,
    finished_line,
    format_kata_line,
    parse_analyze_options,
)
from obook.gtp.arguments import (
    color_argument,
    expect_arguments,
    fixed_handicap_points,
    integer_argument,
    seconds_argument,
    vertex_argument,
)
from obook.gtp.clock import GameClock, TimeSettings
from obook.gtp.protocol import GTPCommandError, GTPProtocol, Streamed, format_header
from obook.playout.ownership import area_map, capturers_view, estimate_ownership, final_score, liberties, stone_status
from obook.search.config import SearchConfig
from obook.search.player import ROOT_MOVES, CancelToken
from obook.search.players import make_player
from obook.search.report import ownership_rows
from obook.search.result import SearchResult

PROTOCOL_VERSION = "2"
ENGINE_NAME = "obook"
COLOR_WORDS = {BLACK: "black", WHITE: "white"}
MAX_BOARD_SIZE = 19


class GTPEngine(GTPProtocol):
    """The state behind one GTP session; see the module docstring."""

    def __init__(
        self,
        config: SearchConfig | str | None = None,
        size: int = 9,
        komi: float = 7.5,
        superko: bool = False,
        log: TextIO | None = None,
        ownership_playouts: int = 1000,
        player=None,
    ):
        super().__init__(log if log is not None else sys.stderr)
        self.config = config if isinstance(config, SearchConfig) else SearchConfig.from_spec(config)
        self.superko = superko
        self.position = Position(size=size, komi=komi, superko=superko)
        self.clock = GameClock()
        self.ownership_playouts = ownership_playouts
        self.player = player if player is not None else _make_player(self.config)
        self.book = player.opening_book() if player is not None else None
        self._book_notice: str | None = None
        self._status_cache: tuple[tuple, object] | None = None
        self.commands = {
            "protocol_version": lambda args: PROTOCOL_VERSION,
            "name": lambda args: ENGINE_NAME,
            "version": self.cmd_version,
            "known_command": self.cmd_known_command,
            "list_commands": lambda args: "\n".join(self.commands),
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "komi": self.cmd_komi,
            "play": self.cmd_play,
            "genmove": lambda args: self.cmd_genmove(args),
            "reg_genmove": lambda args: self.cmd_genmove(args, play=False),
            "kgs-genmove_cleanup": lambda args: self.cmd_genmove(args, cleanup=True),
            "undo": self.cmd_undo,
            "showboard": self.cmd_showboard,
            "final_score": self.cmd_final_score,
            "final_status_list": self.cmd_final_status_list,
            "time_settings": self.cmd_time_settings,
            "kgs-time_settings": self.cmd_kgs_time_settings,
            "time_left": self.cmd_time_left,
            "loadsgf": self.cmd_loadsgf,
            "printsgf": self.cmd_printsgf,
            "fixed_handicap": lambda args: self.cmd_handicap(args, "fixed"),
            "place_free_handicap": lambda args: self.cmd_handicap(args, "free"),
            "set_free_handicap": self.cmd_set_free_handicap,
            "analyze": self.cmd_analyze,
            "lz-analyze": self.cmd_analyze,
            "kata-analyze": lambda args: self.cmd_analyze(args, kata=True),
            "genmove_analyze": self.cmd_genmove_analyze,
            "lz-genmove_analyze": self.cmd_genmove_analyze,
            "kata-genmove_analyze": lambda args: self.cmd_genmove_analyze(args, kata=True),
            "gogui-analyze_commands": self.cmd_gogui_analyze_commands,
            "gogui-interrupt": lambda args: "",
            "obook-ownership": self.cmd_ownership,
            "kata-get-param": self.cmd_kata_get_param,
            "kata-set-param": self.cmd_kata_set_param,
        }
        if self.book is not None:
            self.commands["obook-book_stats"] = self.cmd_book_stats
            self._check_book()

    def cmd_version(self, args: list[str]) -> str:
        """The version, and the book in use (GoGui and Sabaki show it beside the name)."""
        if self.book is None:
            return __version__
        book = self.book.book
        return f"{__version__} with book {book.name!r} ({book.size}x{book.size} komi {book.komi:g})"

    def close(self) -> None:
        if self.book is not None:
            self._say(self.book.game_summary())
        self.player.close()

    def _say(self, line: str | None) -> None:
        if line:
            print(line, file=self.log, flush=True)

    # ---- administrative commands ----------------------------------------------------------------

    def cmd_known_command(self, args: list[str]) -> str:
        expect_arguments(args, 1, "known_command NAME")
        return "true" if args[0] in self.commands else "false"

    def cmd_quit(self, args: list[str]) -> str:
        self.quit_requested = True
        return ""

    def cmd_boardsize(self, args: list[str]) -> str:
        expect_arguments(args, 1, "boardsize SIZE")
        size = integer_argument(args[0], "board size")
        if not rules.MIN_SIZE <= size <= MAX_BOARD_SIZE:
            raise GTPCommandError(f"unacceptable size {size}: obook plays {rules.MIN_SIZE} to {MAX_BOARD_SIZE}")
        self._new_game(Position(size=size, komi=self.position.komi, superko=self.superko))
        self._check_book()
        return ""

    def cmd_clear_board(self, args: list[str]) -> str:
        self._new_game(Position(size=self.position.size, komi=self.position.komi, superko=self.superko))
        return ""

    def _new_game(self, position: Position) -> None:
        self.position = position
        self.player.new_game()
        self._begin_book_game()
        self.clock.reset()

    def cmd_kata_get_param(self, args: list[str]) -> str:
        """KataGo's ``kata-get-param``: the move budget under KataGo's names (``maxVisits``,
        ``maxPlayouts``: playouts a move; ``maxTime``: seconds a move, 0 when playouts count), or any
        option of obook's search by its own name (``exploration``, ``rave``, ...)."""
        expect_arguments(args, 1, "kata-get-param NAME")
        name = args[0]
        if name in KATA_BUDGET:
            return _format_param(getattr(self.config, KATA_BUDGET[name]))
        if name in SEARCH_FIELDS:
            return _format_param(getattr(self.config, name))
        raise GTPCommandError(f"unknown parameter {name!r}: {', '.join(KATA_BUDGET)} or a search option "
                              f"({', '.join(sorted(SEARCH_FIELDS))})")

    def cmd_kata_set_param(self, args: list[str]) -> str:
        """KataGo's ``kata-set-param``: the move budget may change within a session (``maxVisits``,
        ``maxPlayouts``: playouts a move; ``maxTime``: seconds a move); the search's other options are
        the player's own, made at the start (``obook gtp --config``), and are refused by name."""
        expect_arguments(args, 2, "kata-set-param NAME VALUE")
        name, value = args
        if name in ("maxVisits", "maxPlayouts"):
            playouts = integer_argument(value, name)
            if playouts < 1:
                raise GTPCommandError(f"{name} must be at least 1, not {playouts}")
            self.config = self.config.replace(playouts=playouts, seconds=0.0)
        elif name == "maxTime":
            try:
                seconds = float(value)
            except ValueError:
                raise GTPCommandError(f"maxTime not a number: {value!r}") from None
            if not 0 < seconds <= 3600:
                raise GTPCommandError(f"maxTime must be in (0, 3600] seconds, not {value}")
            self.config = self.config.replace(seconds=seconds)
        elif name in SEARCH_FIELDS:
            raise GTPCommandError(f"{name} is fixed for the session (start obook gtp with --config \"{name}=...\"); "
                                  f"settable: {', '.join(KATA_BUDGET)}")
        else:
            raise GTPCommandError(f"unknown parameter {name!r}: settable are {', '.join(KATA_BUDGET)}")
        return ""

    def cmd_komi(self, args: list[str]) -> str:
        expect_arguments(args, 1, "komi VALUE")
        try:
            komi = float(args[0])
        except ValueError:
            raise GTPCommandError(f"komi not a float: {args[0]!r}") from None
        if math.isnan(komi) or abs(komi) > 1000:
            raise GTPCommandError(f"komi out of range: {args[0]!r}")
        self.position.komi = komi
        self._check_book()
        return ""

    # ---- moves ----------------------------------------------------------------------------------

    def cmd_play(self, args: list[str]) -> str:
        expect_arguments(args, 2, "play COLOR VERTEX")
        color = color_argument(args[0])
        point = vertex_argument(args[1], self.position.size)
        self.position.play(point, color)
        return ""

    def cmd_undo(self, args: list[str]) -> str:
        expect_arguments(args, 0, "undo")
        if not self.position.moves:
            raise GTPCommandError("cannot undo: no moves have been played")
        self.position.undo()
        return ""

    def cmd_genmove(self, args: list[str], play: bool = True, cleanup: bool = False) -> str:
        expect_arguments(args, 1, "genmove COLOR")
        color = color_argument(args[0])
        if cleanup:
            capture = self._cleanup_move(color)
            if capture is not None:
                return self._answer_move(color, None, play=play, forced=capture)
        result = self._search(color)
        return self._answer_move(color, result, play=play, cleanup=cleanup)

    def _answer_move(self, color: int, result: SearchResult | None, play: bool, cleanup: bool = False,
                     forced: int | None = None) -> str:
        move = forced if forced is not None else self._chosen_move(color, result, cleanup)
        if move is None:
            return "resign"
        if play:
            if self.book is not None:
                self._say(self.book.record_move(color, len(self.position.moves) + 1, result))
            self.position.play(move, color)
        return format_vertex(move, self.position.size)

    def _chosen_move(self, color: int, result: SearchResult | None, cleanup: bool) -> int | None:
        """The search's move (None: resign), made safe: never an illegal move, and no resignation
        in KGS's cleanup phase (the game is already over; only dead stones are being removed), where
        a lost position still plays its best move: passing there would let the opponent capture
        every stone it can reach."""
        if result is None:
            return PASS
        if result.resign and not cleanup:
            return None
        move = result.move
        if move != PASS and not self.position.is_legal(move, color):
            print(f"obook gtp: the search chose the illegal move {move}; using the next best", file=self.log, flush=True)
            move = self._best_legal(color, result)
        return move

    def _best_legal(self, color: int, result: SearchResult) -> int:
        board = self.position.board
        ranked = sorted(result.moves, key=lambda s: (s.visits, s.winrate), reverse=True)
        for stats in ranked:
            p = stats.point
            if p == PASS:
                return PASS
            if self.position.is_legal(p, color) and not rules.is_true_eye(board, p, color):
                return p
        return PASS

    def _cleanup_move(self, color: int) -> int | None:
        """For KGS's cleanup phase, where dead stones must be captured before the game is scored:
        a liberty of the opponent's dead string with fewest liberties, where ``color`` can play
        without filling its own eye or putting its own stones in atari (unless it captures)."""
        status = self._stone_status()
        dead = [stones for c, stones, s in status.strings if c != color and s == "dead"]
        board = self.position.board
        for stones in sorted(dead, key=lambda st: len(liberties(self.position, st))):
            for point in sorted(liberties(self.position, stones)):
                if not self.position.is_legal(point, color) or rules.is_eye(board, point, color):
                    continue
                trial = self.position.copy()
                captured = trial.play(point, color)
                if captured or rules.real_liberties(trial.board, trial.board.root[point]) >= 2:
                    return point
        return None

    def _position_for(self, color: int) -> Position:
        """The game with ``color`` to move (a copy when GTP asks for a move out of turn)."""
        return self.position.with_to_move(color)

    @contextlib.contextmanager
    def _tree_guard(self, position: Position):
        """A search for the side not to move gets a fresh tree and leaves none behind: a player
        that reuses its tree knows the game by its moves, which do not say who is to move."""
        off_turn = position is not self.position
        if off_turn:
            self.player.new_game()
        try:
            yield
        finally:
            if off_turn:
                self.player.new_game()

    def _search(self, color: int, on_progress=None, progress_interval: float = 0.5) -> SearchResult | None:
        """Search for ``color`` with the clock's time (or the configuration's budget); GoGui's
        ``# interrupt`` ends it early with the best move found so far."""
        position = self._position_for(color)
        budget = self.clock.move_budget(self.config, color, position)
        started = time.perf_counter()
        with self._tree_guard(position):
            result = self.player.genmove(position, seconds=budget.seconds, playouts=budget.playouts,
                                         on_progress=on_progress, progress_interval=min(progress_interval, 0.1),
                                         cancel=CancelToken(self._interrupt))
        elapsed = time.perf_counter() - started
        self.clock.spend(color, elapsed)
        if result is not None:
            self._log_search(color, result, elapsed)
        return result

    def _log_search(self, color: int, result: SearchResult, elapsed: float) -> None:
        vertex = "resign" if result.resign else format_vertex(result.move, self.position.size)
        pv = " ".join(format_vertex(p, self.position.size) for p in result.pv[:8])
        rate = result.playouts / elapsed if elapsed > 0 else 0.0
        print(f"obook: {COLOR_WORDS[color]} {vertex} winrate {100 * result.winrate:.1f}% "
              f"playouts {result.playouts} in {elapsed:.2f} s ({rate:,.0f}/s) pv {pv}", file=self.log, flush=True)

    # ---- board display and scoring --------------------------------------------------------------

    def cmd_showboard(self, args: list[str]) -> str:
        p = self.position
        board = p.board
        lines = p.to_ascii().split("\n")
        lines.append(f"{COLOR_WORDS[p.to_move]} to move, move {len(p.moves)}, komi {p.komi:g}, "
                     f"captured: black {int(board.scalars[rules.CAPTURED_BLACK])} "
                     f"white {int(board.scalars[rules.CAPTURED_WHITE])}")
        return "\n" + "\n".join(lines)

    def _stone_status(self):
        key = (self.position.size, tuple(self.position.moves), tuple(self.position.setup_black),
               tuple(self.position.setup_white), self.position.komi)
        if self._status_cache is None or self._status_cache[0] != key:
            status = stone_status(self.position, self.ownership_playouts, self.config.policy)
            self._status_cache = (key, status)
        return self._status_cache[1]

    def cmd_final_score(self, args: list[str]) -> str:
        """The count after playing the game on until it is settled (``stone_status``); the log names
        the moves played on and the strings whose fate is still open, so that a count that is a
        guess does not pass for a sure one."""
        status = self._stone_status()
        score = final_score(self.position, status)
        size = self.position.size
        if status.played_on:
            moves = " ".join(f"{COLOR_WORDS[c][0].upper()} {format_vertex(p, size)}" for c, p in status.played_on)
            print(f"obook gtp: final_score: the game played on before the count: {moves}", file=self.log, flush=True)
        if status.uncertain or status.open_ground:
            strings = "; ".join(" ".join(format_vertex(p, size) for p in stones) for stones in status.uncertain)
            why = [f"the fate of {strings} is open (its colour owns it in 25-75% of the playouts)"] if strings else []
            if status.open_ground:
                why.append(f"{len(status.open_ground)} empty points are nobody's yet")
            print(f"obook gtp: final_score: the board is not settled, so the count is a guess: {'; '.join(why)}",
                  file=self.log, flush=True)
        return f"B+{score:g}" if score > 0 else f"W+{-score:g}" if score < 0 else "0"

    def cmd_final_status_list(self, args: list[str]) -> str:
        expect_arguments(args, 1, "final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GTPCommandError(f"invalid status {args[0]!r}: expected alive, dead or seki")
        strings = self._stone_status().stones(status)
        size = self.position.size
        return "\n".join(" ".join(format_vertex(p, size) for p in stones) for stones in strings)

    def cmd_ownership(self, args: list[str]) -> str:
        """GoGui ``dboard``: Black's ownership of every point, top row first."""
        ownership = self._stone_status().ownership
        size = self.position.size
        rows = []
        for row in range(size - 1, -1, -1):
            rows.append(" ".join(f"{ownership[point_of(col, row, size)]:.2f}" for col in range(size)))
        return "\n" + "\n".join(rows)

    # ---- time -----------------------------------------------------------------------------------

    def cmd_time_settings(self, args: list[str]) -> str:
        expect_arguments(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        main, byo = seconds_argument(args[0]), seconds_argument(args[1])
        stones = integer_argument(args[2], "byo-yomi stones")
        self.clock.set_settings(TimeSettings.from_gtp(main, byo, stones))
        return ""

    def cmd_kgs_time_settings(self, args: list[str]) -> str:
        self.clock.set_settings(TimeSettings.from_kgs(args))
        return ""

    def cmd_time_left(self, args: list[str]) -> str:
        expect_arguments(args, 3, "time_left COLOR TIME STONES")
        color = color_argument(args[0])
        seconds = seconds_argument(args[1])
        stones = integer_argument(args[2], "stones")
        self.clock.time_left(color, seconds, stones)
        return ""

    # ---- SGF ------------------------------------------------------------------------------------

    def cmd_loadsgf(self, args: list[str]) -> str:
        if len(args) not in (1, 2):
            raise GTPCommandError("expected: loadsgf FILENAME [MOVE_NUMBER]")
        moves = None
        if len(args) == 2:
            number = integer_argument(args[1], "move number")
            if number < 1:
                raise GTPCommandError(f"invalid move number {number}: moves are numbered from 1")
            moves = number - 1  # the position before move MOVE_NUMBER
        record = read_sgf(args[0], moves=moves, superko=self.superko, default_komi=self.position.komi)
        self.position = record.position
        self.player.new_game()
        self._begin_book_game()
        self._check_book()
        return COLOR_WORDS[self.position.to_move]

    def cmd_printsgf(self, args: list[str]) -> str:
        if len(args) > 1:
            raise GTPCommandError("expected: printsgf [FILENAME]")
        text = game_to_sgf(self.position)
        if args:
            try:
                Path(args[0]).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise GTPCommandError(f"cannot write {args[0]}: {exc.strerror or exc}") from None
            return ""
        return "\n" + text.strip()

    # ---- handicap -------------------------------------------------------------------------------

    def cmd_handicap(self, args: list[str], kind: str) -> str:
        expect_arguments(args, 1, f"{'fixed' if kind == 'fixed' else 'place_free'}_handicap NUMBER_OF_STONES")
        count = integer_argument(args[0], "number of stones")
        self._require_empty_board()
        points = fixed_handicap_points(self.position.size, count)
        self.position.place_handicap(points)
        self.player.new_game()
        return " ".join(format_vertex(p, self.position.size) for p in points)

    def cmd_set_free_handicap(self, args: list[str]) -> str:
        size = self.position.size
        if len(args) < 2:
            raise GTPCommandError("set_free_handicap needs at least two vertices")
        if len(args) >= size * size:
            raise GTPCommandError(f"too many handicap stones for a {size}x{size} board")
        self._require_empty_board()
        points = [vertex_argument(word, size) for word in args]
        if PASS in points:
            raise GTPCommandError("a handicap stone cannot be a pass")
        if len(set(points)) != len(points):
            raise GTPCommandError("handicap stones must be on distinct points")
        self.position.place_handicap(points)
        self.player.new_game()
        return ""

    def _require_empty_board(self) -> None:
        p = self.position
        if p.moves or p.setup_black or p.setup_white:
            raise GTPCommandError("board not empty")

    # ---- the book ---------------------------------------------------------------------------------

    def _check_book(self) -> None:
        """One stderr line when the book cannot be used in this game (its size, komi or engine version
        differ), and one when it can again; nothing while nothing changes."""
        if self.book is None:
            return
        problem = self.book.mismatch(self.position.size, self.position.komi)
        if problem is not None and problem != self._book_notice:
            self._say(f"{problem}: the book will not be used")
        elif problem is None and self._book_notice is not None:
            book = self.book.book
            self._say(f"book {book.name!r} ({book.size}x{book.size} komi {book.komi:g}) will be used")
        self._book_notice = problem

    def _begin_book_game(self) -> None:
        if self.book is not None:
            self._say(self.book.begin_game())

    def cmd_book_stats(self, args: list[str]) -> str:
        """``obook-book_stats``: this game's use of the book, one JSON line:
        ``{"book": NAME, "black": {"book_moves": N, "left_at": PLY|null}, "white": {...}}``."""
        expect_arguments(args, 0, "obook-book_stats")
        game = self.book.game
        return json.dumps({"book": self.book.book.name, "black": game[BLACK].to_dict(),
                           "white": game[WHITE].to_dict()})

    # ---- analysis -------------------------------------------------------------------------------

    def cmd_analyze(self, args: list[str], kata: bool = False) -> Streamed:
        """``[lz-]analyze`` and ``kata-analyze`` (``obook.gtp.analysis`` has the options and the
        formats): info lines every INTERVAL centiseconds until the next command arrives (Sabaki
        stops it by sending one, GoGui by ``# interrupt``). In a finished game (two passes) there
        is nothing to search: one line, pass with the count as it stands, and the answer ends."""
        size = self.position.size
        options = parse_analyze_options(args, self.position.to_move, size, kata=kata)
        position = self._position_for(options.color)
        self._stream(format_header(self._ident))
        if position.passes >= 2:
            self._stream(self._finished_line(position, options, kata) + "\n")
            return Streamed("\n")
        printer = InfoPrinter(options, size, self._stream, self._kata_line(position, options) if kata else None)

        cancel = CancelToken()

        def progress(result: SearchResult) -> None:
            printer.update(result)
            if self._input_waiting() or self._interrupt.is_set():
                cancel.cancel()

        extra = {}
        # A player that can keeps allow/avoid out of its root too; the others' lines leave them out.
        if (options.allow is not None or options.avoid) and ROOT_MOVES in self.player.root_controls:
            extra[ROOT_MOVES] = options.permits
        with self._tree_guard(position):
            result = self.player.genmove(position, seconds=24 * 3600.0, playouts=None, on_progress=progress,
                                         progress_interval=min(options.interval, 0.1), cancel=cancel, **extra)
        if extra:
            self.player.new_game()  # the restricted root must not serve the next genmove
        if not cancel.cancelled or not printer.printed:
            printer.update(result, force=True)
        return Streamed("\n")

    def _finished_line(self, position: Position, options, kata: bool) -> str:
        score = position.score() if options.color == BLACK else -position.score()
        winrate = 1.0 if score > 0 else 0.0 if score < 0 else 0.5
        ownership = None
        if kata and options.ownership:
            area = area_map(position, capturers_view(position, set()))
            black = {p: 1.0 if c == BLACK else -1.0 if c == WHITE else 0.0 for p, c in area.items()}
            ownership = ownership_rows(black, position.size, options.color)
        return finished_line(winrate, score, kata, ownership)

    def _kata_line(self, position: Position, options):
        """``kata-analyze``'s info line for searches of ``position``: the search's scores of each
        move, and with ``ownership true`` the ownership of playouts from the position."""
        size = position.size
        ownership = None
        if options.ownership:
            ownership = ownership_rows(estimate_ownership(position, self.ownership_playouts, self.config.policy),
                                       size, options.color)
        return lambda result: format_kata_line(result, size, options, ownership)

    def cmd_genmove_analyze(self, args: list[str], kata: bool = False) -> Streamed:
        """``[lz-]genmove_analyze [COLOR] [INTERVAL] ...``: a genmove that streams info lines and
        ends with ``play VERTEX``; ``kata-genmove_analyze`` takes ``kata-analyze``'s options and
        prints its lines (KataGo's extension)."""
        options = parse_analyze_options(args, self.position.to_move, self.position.size, kata=kata)
        color = options.color
        self._stream(format_header(self._ident))
        line = self._kata_line(self._position_for(color), options) if kata else None
        printer = InfoPrinter(options, self.position.size, self._stream, line)
        result = self._search(color, on_progress=printer.update, progress_interval=options.interval)
        if result is not None:
            printer.update(result, force=True)
        answer = self._answer_move(color, result, play=True)
        return Streamed(f"play {answer}\n\n")

    def cmd_gogui_analyze_commands(self, args: list[str]) -> str:
        return "\n".join([
            "dboard/Ownership/obook-ownership",
            "plist/Dead Stones/final_status_list dead",
            "plist/Seki Stones/final_status_list seki",
            "string/Final Score/final_score",
        ])


KATA_BUDGET = {"maxVisits": "playouts", "maxPlayouts": "playouts", "maxTime": "seconds"}  # KataGo's name -> obook's
SEARCH_FIELDS = frozenset(f.name for f in dataclasses.fields(SearchConfig))


def _format_param(value) -> str:
    return str(value).lower() if isinstance(value, bool) else f"{value:g}" if isinstance(value, float) else str(value)


def _make_player(config: SearchConfig):
    try:
        return make_player(config)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("obook."):
            raise ObookError(
                f"search algorithm {config.algorithm!r} is not available in this build ({exc.name} is missing); "
                f"try --config algorithm=flat"
            ) from None
        raise
