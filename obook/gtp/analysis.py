"""Analysis output as the GUIs read it: the options of ``[lz-]analyze``, ``kata-analyze`` and
``[lz-]genmove_analyze``, and the ``info`` lines streamed while a search runs.

Two dialects. Leela Zero's (``lz-analyze``; Sabaki, Lizzie): win rate, prior and lcb in
ten-thousandths. KataGo's (``kata-analyze``; Lizzie, Sabaki, KaTrain): the same as fractions, with
``scoreMean``/``scoreStdev``/``scoreLead`` per move and, on request, ``ownership`` (one value per
point in [-1, 1], top row first, left to right) at the end of the line. Every figure is for the
colour analysed (KataGo's default SIDETOMOVE), which is how Sabaki and Lizzie flip them.

The figures of each move (visits, win rate, prior, lcb, the search's scores) are
``obook.search.report.kata_move_infos``'s, which the JSON analysis engine (``obook analysis``)
writes too, so the two KataGo dialects cannot drift apart; its docstring says where they come from.
The ownership is that of playouts from the position
(``obook.playout.ownership``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from obook.go.position import parse_color
from obook.gtp.arguments import centiseconds_argument, integer_argument, is_number, vertex_argument
from obook.gtp.protocol import GTPCommandError
from obook.search.report import kata_move_infos, ranked_moves, root_scores, root_winrate
from obook.search.result import MoveStats, SearchResult


@dataclass
class AnalyzeOptions:
    color: int
    interval: float  # seconds between info lines
    min_moves: int = 0
    max_moves: int = 0  # 0: all moves with visits
    ownership: bool = False  # kata-analyze: append the ownership of every point
    root_info: bool = False  # kata-analyze: append the root's figures (``rootInfo``)
    pv_visits: bool = False  # kata-analyze: each move's ``pvVisits`` after its pv (where the search kept them)
    allow: set[int] | None = None  # only these first moves of ``color`` (None: any)
    avoid: set[int] = field(default_factory=set)  # never these first moves of ``color``

    def permits(self, point: int) -> bool:
        return point not in self.avoid and (self.allow is None or point in self.allow)


def parse_analyze_options(args: list[str], to_move: int, size: int = 19, kata: bool = False) -> AnalyzeOptions:
    """``[COLOR] [INTERVAL] [interval N] [minmoves N] [maxmoves N] [avoid|allow COLOR VERTICES UNTILDEPTH]``
    and, for ``kata-analyze``, ``[ownership true|false]``; intervals in centiseconds, VERTICES
    comma-separated. The colour defaults to ``to_move`` and the interval to one second.

    ``avoid``/``allow`` restrict the first move of the colour analysed (UNTILDEPTH at least 1);
    a restriction for the other colour, whose first move is deeper in the search, is accepted and
    has no effect."""
    words = list(args)
    color = to_move
    if words and words[0].lower() in ("b", "w", "black", "white"):
        color = parse_color(words.pop(0))
    interval = 1.0
    if words and is_number(words[0]):
        interval = centiseconds_argument(words.pop(0))
    options = AnalyzeOptions(color=color, interval=interval)
    known = "interval, minmoves, maxmoves, avoid, allow" + (", ownership, rootInfo, pvVisits" if kata else "")
    while words:
        key = words.pop(0).lower()
        if not words:
            raise GTPCommandError(f"analyze option {key!r} needs a value")
        value = words.pop(0)
        if key == "interval":
            options.interval = centiseconds_argument(value)
        elif key == "minmoves":
            options.min_moves = integer_argument(value, "minmoves")
        elif key == "maxmoves":
            options.max_moves = integer_argument(value, "maxmoves")
        elif key in ("avoid", "allow"):
            if len(words) < 2:
                raise GTPCommandError(f"expected: {key} COLOR VERTEX[,VERTEX...] UNTILDEPTH")
            who = parse_color(value)
            points = {vertex_argument(v, size) for v in words.pop(0).split(",") if v}
            depth = integer_argument(words.pop(0), f"{key} depth")
            if depth < 1:
                raise GTPCommandError(f"{key} depth must be at least 1, not {depth}")
            if who != color:
                continue
            if key == "avoid":
                options.avoid |= points
            elif options.allow is not None:
                raise GTPCommandError("only one allow option is accepted")
            else:
                options.allow = points
        elif key == "ownership" and kata:
            if value.lower() not in ("true", "false"):
                raise GTPCommandError(f"ownership must be true or false, not {value!r}")
            options.ownership = value.lower() == "true"
        elif key == "rootinfo" and kata:
            if value.lower() not in ("true", "false"):
                raise GTPCommandError(f"rootInfo must be true or false, not {value!r}")
            options.root_info = value.lower() == "true"
        elif key == "pvvisits" and kata:
            if value.lower() not in ("true", "false"):
                raise GTPCommandError(f"pvVisits must be true or false, not {value!r}")
            options.pv_visits = value.lower() == "true"
        elif kata and key in ("ownershipstdev", "movesownership", "pvedgevisits"):
            if value.lower() not in ("true", "false"):
                raise GTPCommandError(f"{key} must be true or false, not {value!r}")
            if value.lower() == "true":  # asked for, and obook cannot give it: said, not silently left out
                raise GTPCommandError(f"{key} is not available: obook keeps neither ownership by move nor its "
                                      f"spread, nor visits by edge; known are {known}")
        else:
            raise GTPCommandError(f"unknown analyze option {key!r}: known are {known}")
    return options


def shown_moves(result: SearchResult, options: AnalyzeOptions) -> list[MoveStats]:
    """The moves an info line lists, best first: those with visits (at least ``min_moves``, at
    most ``max_moves`` when positive), none that ``allow``/``avoid`` exclude."""
    ranked = [s for s in ranked_moves(result) if options.permits(s.point)]
    shown = [s for s in ranked if s.visits > 0]
    if len(shown) < options.min_moves:
        shown = ranked[:options.min_moves]
    if options.max_moves > 0:
        shown = shown[:options.max_moves]
    return shown


def format_info_line(result: SearchResult, size: int, max_moves: int = 0, min_moves: int = 0,
                     options: AnalyzeOptions | None = None) -> str:
    """Leela Zero: ``info move D4 visits 120 winrate 5230 prior 125 lcb 4980 order 0 pv D4 E5 ...``
    for every move shown (``shown_moves``)."""
    if options is None:
        options = AnalyzeOptions(color=0, interval=0.0, min_moves=min_moves, max_moves=max_moves)
    parts = []
    for info in kata_move_infos(result, shown_moves(result, options), size):
        parts.append(f"info move {info['move']} visits {info['visits']} winrate {round(10000 * info['winrate'])} "
                     f"prior {round(10000 * info['prior'])} lcb {round(10000 * info['lcb'])} "
                     f"order {info['order']} pv {' '.join(info['pv'])}")
    return " ".join(parts)


def _scores(info: dict) -> str:
    if "scoreMean" not in info:
        return ""
    return f"scoreMean {info['scoreMean']:.2f} scoreStdev {info['scoreStdev']:.2f} scoreLead {info['scoreLead']:.2f} "


def format_kata_line(result: SearchResult, size: int, options: AnalyzeOptions,
                     ownership: list[float] | None = None) -> str:
    """KataGo: ``info move D4 visits 120 winrate 0.523 scoreMean 1.5 scoreStdev 9.8 scoreLead 1.5
    prior 0.0125 lcb 0.498 order 0 pv D4 E5 ...`` for every move shown, then ``ownership`` and one
    value per point (top row first) when given. The scores are the search's (module docstring),
    for the colour analysed: the player to move of the search."""
    parts = []
    for info in kata_move_infos(result, shown_moves(result, options), size, pv_visits=options.pv_visits):
        pv_visits = " pvVisits " + " ".join(map(str, info["pvVisits"])) if "pvVisits" in info else ""
        parts.append(f"info move {info['move']} visits {info['visits']} winrate {info['winrate']:.6f} "
                     f"{_scores(info)}prior {info['prior']:.6f} lcb {info['lcb']:.6f} "
                     f"order {info['order']} pv {' '.join(info['pv'])}{pv_visits}")
    if not parts:
        return ""
    line = " ".join(parts)
    if options.root_info:
        mean, stdev = root_scores(result.moves)
        visits = max(int(result.playouts), sum(s.visits for s in result.moves))
        line += f" rootInfo visits {visits} winrate {root_winrate(result):.6f}"
        if mean is not None:
            line += f" scoreMean {mean:.2f} scoreStdev {stdev:.2f} scoreLead {mean:.2f}"
    if ownership is not None:
        line += " ownership " + " ".join(f"{v:.4f}" for v in ownership)
    return line


def finished_line(winrate: float, score: float, kata: bool, ownership: list[float] | None = None) -> str:
    """The one line for a finished game (two passes): pass, with the count as it stands."""
    if kata:
        line = (f"info move pass visits 1 winrate {winrate:.6f} scoreMean {score:.2f} scoreStdev 0.00 "
                f"scoreLead {score:.2f} prior 1.000000 lcb {winrate:.6f} order 0 pv pass")
        if ownership is not None:
            line += " ownership " + " ".join(f"{v:.4f}" for v in ownership)
        return line
    rate = round(10000 * winrate)
    return f"info move pass visits 1 winrate {rate} prior 10000 lcb {rate} order 0 pv pass"


class InfoPrinter:
    """Writes ``info`` lines (one line per update, every candidate on it) at most once per
    interval; ``format`` turns a search result into a line ('' when there is nothing to show)."""

    def __init__(self, options: AnalyzeOptions, size: int, write: Callable[[str], None],
                 format: Callable[[SearchResult], str] | None = None):
        self.options = options
        self.size = size
        self.write = write
        self.format = format or (lambda result: format_info_line(result, size, options=options))
        self.printed = 0
        self.last = 0.0

    def update(self, result: SearchResult, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and self.printed and now - self.last < self.options.interval:
            return
        line = self.format(result)
        if line:
            self.write(line + "\n")
            self.printed += 1
            self.last = now


__all__ = ["AnalyzeOptions", "InfoPrinter", "finished_line", "format_info_line", "format_kata_line",
           "parse_analyze_options"]
