"""Analysis output in the Leela-Zero format that Sabaki and Lizzie read: the options of
``[lz-]analyze`` and ``[lz-]genmove_analyze``, and the ``info`` lines streamed while a search runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from obook.go.position import parse_color
from obook.go.vertex import format_vertex
from obook.gtp.arguments import centiseconds_argument, integer_argument, is_number
from obook.gtp.protocol import GTPCommandError
from obook.search.result import SearchResult


@dataclass
class AnalyzeOptions:
    color: int
    interval: float  # seconds between info lines
    min_moves: int = 0
    max_moves: int = 0  # 0: all moves with visits


def parse_analyze_options(args: list[str], to_move: int) -> AnalyzeOptions:
    """``[COLOR] [INTERVAL] [interval N] [minmoves N] [maxmoves N]``, intervals in centiseconds;
    the colour defaults to ``to_move`` and the interval to one second."""
    words = list(args)
    color = to_move
    if words and words[0].lower() in ("b", "w", "black", "white"):
        color = parse_color(words.pop(0))
    interval = 1.0
    if words and is_number(words[0]):
        interval = centiseconds_argument(words.pop(0))
    options = AnalyzeOptions(color=color, interval=interval)
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
        else:
            raise GTPCommandError(f"unknown analyze option {key!r}: known are interval, minmoves, maxmoves")
    return options


class InfoPrinter:
    """Writes Leela-Zero ``info`` lines (one line per update, every candidate on it) at most once
    per interval; the winrate and prior are in ten-thousandths, for the analysed colour."""

    def __init__(self, options: AnalyzeOptions, size: int, write: Callable[[str], None]):
        self.options = options
        self.size = size
        self.write = write
        self.printed = 0
        self.last = 0.0

    def update(self, result: SearchResult, force: bool = False) -> None:
        now = time.perf_counter()
        if not force and self.printed and now - self.last < self.options.interval:
            return
        line = format_info_line(result, self.size, self.options.max_moves, self.options.min_moves)
        if line:
            self.write(line + "\n")
            self.printed += 1
            self.last = now


def format_info_line(result: SearchResult, size: int, max_moves: int = 0, min_moves: int = 0) -> str:
    """``info move D4 visits 120 winrate 5230 prior 125 order 0 pv D4 E5 ...`` for every move
    with visits (at least ``min_moves`` moves, at most ``max_moves`` when positive)."""
    ranked = sorted(result.moves, key=lambda s: (s.visits, s.winrate), reverse=True)
    shown = [s for s in ranked if s.visits > 0]
    if len(shown) < min_moves:
        shown = ranked[:min_moves]
    if max_moves > 0:
        shown = shown[:max_moves]
    prior = round(10000 / max(len(result.moves), 1))
    parts = []
    for order, stats in enumerate(shown):
        move = format_vertex(stats.point, size)
        pv = [format_vertex(p, size) for p in (stats.pv or [stats.point])]
        if not pv or pv[0] != move:
            pv = [move] + pv
        winrate = round(10000 * min(max(stats.winrate, 0.0), 1.0))
        parts.append(f"info move {move} visits {stats.visits} winrate {winrate} prior {prior} "
                     f"order {order} pv {' '.join(pv)}")
    return " ".join(parts)
