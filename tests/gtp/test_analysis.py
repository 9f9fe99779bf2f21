"""Analysis output: the analyze options and the Leela-Zero info lines, without a search."""

import pytest

from obook.go.board import BLACK, PASS, WHITE
from obook.go.vertex import parse_vertex
from obook.gtp.analysis import AnalyzeOptions, InfoPrinter, format_info_line, parse_analyze_options
from obook.gtp.protocol import GTPCommandError
from obook.search.result import MoveStats, SearchResult


def stats(vertex, visits, winrate, pv=()):
    return MoveStats(point=parse_vertex(vertex, 9), visits=visits, winrate=winrate, variance=0.0,
                     pv=[parse_vertex(v, 9) for v in pv])


def result(*moves):
    return SearchResult(move=moves[0].point if moves else PASS, resign=False, winrate=0.5, playouts=100,
                        seconds=0.1, moves=list(moves), pv=[])


def test_options():
    assert parse_analyze_options([], BLACK) == AnalyzeOptions(color=BLACK, interval=1.0)
    assert parse_analyze_options(["w"], BLACK) == AnalyzeOptions(color=WHITE, interval=1.0)
    assert parse_analyze_options(["black", "25"], WHITE) == AnalyzeOptions(color=BLACK, interval=0.25)
    assert parse_analyze_options(["50"], WHITE) == AnalyzeOptions(color=WHITE, interval=0.5)
    assert parse_analyze_options(["b", "interval", "10", "MINMOVES", "3", "maxmoves", "5"], WHITE) == \
        AnalyzeOptions(color=BLACK, interval=0.1, min_moves=3, max_moves=5)
    with pytest.raises(GTPCommandError, match="'maxmoves' needs a value"):
        parse_analyze_options(["b", "maxmoves"], BLACK)
    with pytest.raises(GTPCommandError, match="unknown analyze option 'avoid'"):
        parse_analyze_options(["b", "avoid", "b"], BLACK)
    with pytest.raises(GTPCommandError, match="minmoves must be an integer"):
        parse_analyze_options(["minmoves", "few"], BLACK)


def test_info_line_ranks_by_visits_and_keeps_the_move_first_in_its_pv():
    line = format_info_line(result(stats("C3", 10, 0.4), stats("E5", 30, 0.61234, pv=["E5", "D4"]),
                                   stats("G7", 0, 0.9), stats("D4", 10, 0.45, pv=["F6"])), 9)
    assert line == ("info move E5 visits 30 winrate 6123 prior 2500 order 0 pv E5 D4 "
                    "info move D4 visits 10 winrate 4500 prior 2500 order 1 pv D4 F6 "
                    "info move C3 visits 10 winrate 4000 prior 2500 order 2 pv C3")


def test_info_line_bounds():
    moves = (stats("C3", 5, 1.2), stats("E5", 0, -0.1), stats("G7", 0, 0.5))
    assert format_info_line(result(*moves), 9) == "info move C3 visits 5 winrate 10000 prior 3333 order 0 pv C3"
    assert format_info_line(result(*moves), 9, min_moves=2).endswith("info move G7 visits 0 winrate 5000 prior 3333 "
                                                                     "order 1 pv G7")
    assert format_info_line(result(*moves), 9, min_moves=3).endswith("winrate 0 prior 3333 order 2 pv E5")
    assert format_info_line(result(*moves), 9, max_moves=1, min_moves=3).count("info move") == 1
    assert format_info_line(result(), 9) == ""


def test_printer_writes_at_most_once_an_interval_unless_forced():
    written = []
    printer = InfoPrinter(AnalyzeOptions(color=BLACK, interval=3600.0), 9, written.append)
    searched = result(stats("E5", 3, 0.5))
    printer.update(searched)
    printer.update(searched)
    assert written == ["info move E5 visits 3 winrate 5000 prior 10000 order 0 pv E5\n"]
    printer.update(searched, force=True)
    assert len(written) == 2 and printer.printed == 2
    printer.update(result())  # nothing to show: nothing written
    InfoPrinter(AnalyzeOptions(color=BLACK, interval=3600.0), 9, written.append).update(result(), force=True)
    assert len(written) == 2
