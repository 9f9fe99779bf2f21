"""Analysis output: the analyze options and the Leela-Zero info lines, without a search."""

import pytest

from obook.go.board import BLACK, PASS, WHITE
from obook.go.vertex import parse_vertex
from obook.gtp.analysis import (AnalyzeOptions, InfoPrinter, finished_line, format_info_line, format_kata_line,
                                parse_analyze_options)
from obook.gtp.protocol import GTPCommandError
from obook.search.report import ownership_rows
from obook.search.result import MoveStats, SearchResult


def stats(vertex, visits, winrate, pv=(), variance=0.0, prior=None, score=(None, None)):
    return MoveStats(point=parse_vertex(vertex, 9), visits=visits, winrate=winrate, variance=variance,
                     pv=[parse_vertex(v, 9) for v in pv], prior=prior, score_mean=score[0], score_stdev=score[1])


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
    with pytest.raises(GTPCommandError, match="expected: avoid COLOR VERTEX"):
        parse_analyze_options(["b", "avoid", "b"], BLACK)
    with pytest.raises(GTPCommandError, match="unknown analyze option 'ownership'"):
        parse_analyze_options(["b", "ownership", "true"], BLACK)
    with pytest.raises(GTPCommandError, match="minmoves must be an integer"):
        parse_analyze_options(["minmoves", "few"], BLACK)


def test_info_line_ranks_by_visits_and_keeps_the_move_first_in_its_pv():
    line = format_info_line(result(stats("C3", 10, 0.4), stats("E5", 30, 0.61234, pv=["E5", "D4"]),
                                   stats("G7", 0, 0.9), stats("D4", 10, 0.45, pv=["F6"])), 9)
    assert line == ("info move E5 visits 30 winrate 6123 prior 2500 lcb 6123 order 0 pv E5 D4 "
                    "info move D4 visits 10 winrate 4500 prior 2500 lcb 4500 order 1 pv D4 F6 "
                    "info move C3 visits 10 winrate 4000 prior 2500 lcb 4000 order 2 pv C3")


def test_info_line_bounds():
    moves = (stats("C3", 5, 1.2), stats("E5", 0, -0.1), stats("G7", 0, 0.5))
    assert format_info_line(result(*moves), 9) == ("info move C3 visits 5 winrate 10000 prior 3333 lcb 10000 order 0 "
                                                   "pv C3")
    assert format_info_line(result(*moves), 9, min_moves=2).endswith("info move G7 visits 0 winrate 5000 prior 3333 "
                                                                     "lcb 0 order 1 pv G7")
    assert format_info_line(result(*moves), 9, min_moves=3).endswith("winrate 0 prior 3333 lcb 0 order 2 pv E5")
    assert format_info_line(result(*moves), 9, max_moves=1, min_moves=3).count("info move") == 1
    assert format_info_line(result(), 9) == ""


def test_printer_writes_at_most_once_an_interval_unless_forced():
    written = []
    printer = InfoPrinter(AnalyzeOptions(color=BLACK, interval=3600.0), 9, written.append)
    searched = result(stats("E5", 3, 0.5))
    printer.update(searched)
    printer.update(searched)
    assert written == ["info move E5 visits 3 winrate 5000 prior 10000 lcb 5000 order 0 pv E5\n"]
    printer.update(searched, force=True)
    assert len(written) == 2 and printer.printed == 2
    printer.update(result())  # nothing to show: nothing written
    InfoPrinter(AnalyzeOptions(color=BLACK, interval=3600.0), 9, written.append).update(result(), force=True)
    assert len(written) == 2


def test_options_allow_avoid_and_ownership():
    options = parse_analyze_options(["w", "10", "avoid", "w", "E5,d4", "1", "avoid", "b", "C3", "2", "allow", "w",
                                     "E5,F6,pass", "3", "ownership", "true", "pvVisits", "true"], BLACK, 9, kata=True)
    assert options.color == WHITE and options.ownership and options.pv_visits
    assert options.avoid == {parse_vertex("E5", 9), parse_vertex("D4", 9)}  # Black's C3 is not the first move
    assert options.allow == {parse_vertex("E5", 9), parse_vertex("F6", 9), PASS}
    assert [options.permits(parse_vertex(v, 9)) for v in ("E5", "F6", "pass", "G7")] == [False, True, True, False]
    with pytest.raises(GTPCommandError, match="only one allow"):
        parse_analyze_options(["allow", "b", "E5", "1", "allow", "b", "D4", "1"], BLACK, 9)


def test_lcb_and_real_priors():
    moves = (stats("E5", 100, 0.6, variance=0.24, prior=30.0), stats("C3", 1, 1.0, prior=10.0),
             stats("G7", 0, 0.0, prior=0.0))
    line = format_info_line(result(*moves), 9, min_moves=3)
    # lcb: 0.6 - 1.96 * sqrt(0.24 / 100) = 0.504; none below two visits; priors: shares of the prior wins
    assert line == ("info move E5 visits 100 winrate 6000 prior 7500 lcb 5040 order 0 pv E5 "
                    "info move C3 visits 1 winrate 10000 prior 2500 lcb 0 order 1 pv C3 "
                    "info move G7 visits 0 winrate 0 prior 0 lcb 0 order 2 pv G7")


def test_kata_line_format_with_scores_and_ownership():
    options = AnalyzeOptions(color=WHITE, interval=1.0, avoid={parse_vertex("C3", 9)})
    moves = (stats("E5", 100, 0.6, pv=["E5", "D4"], variance=0.24, prior=30.0, score=(2.5, 11.25)),
             stats("C3", 50, 0.7, prior=10.0, score=(1.0, 3.0)))
    line = format_kata_line(result(*moves), 9, options, ownership=[0.5] * 80 + [-1.0])
    head, _, ownership = line.partition(" ownership ")
    assert head == ("info move E5 visits 100 winrate 0.600000 scoreMean 2.50 scoreStdev 11.25 scoreLead 2.50 "
                    "prior 0.750000 lcb 0.503980 order 0 pv E5 D4")
    assert ownership.split() == ["0.5000"] * 80 + ["-1.0000"]
    assert format_kata_line(result(stats("C3", 5, 0.5)), 9, options) == ""


def test_kata_line_leaves_out_the_scores_of_a_move_without_one():
    options = AnalyzeOptions(color=BLACK, interval=1.0)
    line = format_kata_line(result(stats("E5", 3, 1.0, prior=1.0), stats("C3", 2, 0.5, prior=1.0, score=(-4.0, 0.0))),
                            9, options)
    assert line == ("info move E5 visits 3 winrate 1.000000 prior 0.500000 lcb 1.000000 order 0 pv E5 "
                    "info move C3 visits 2 winrate 0.500000 scoreMean -4.00 scoreStdev 0.00 scoreLead -4.00 "
                    "prior 0.500000 lcb 0.500000 order 1 pv C3")
    assert finished_line(0.0, -7.5, kata=False) == "info move pass visits 1 winrate 0 prior 10000 lcb 0 order 0 pv pass"


def test_ownership_rows_are_top_row_first_for_the_colour_analysed():
    from obook.go.vertex import point_of

    black = {point_of(col, row, 3): float(10 * row + col) / 100 for row in range(3) for col in range(3)}
    assert ownership_rows(black, 3, BLACK) == [0.2, 0.21, 0.22, 0.1, 0.11, 0.12, 0.0, 0.01, 0.02]
    assert ownership_rows(black, 3, WHITE)[:2] == [-0.2, -0.21]


def test_kata_root_info_is_honoured_and_what_obook_cannot_give_is_refused():
    """``rootInfo true`` appends the root's visits, win rate and scores (before the ownership); the
    keys whose figures obook's search does not keep (``ownershipStdev``, ...) are
    refused when asked for, not silently left out (issue 34), and accepted as ``false``."""
    options = parse_analyze_options(["b", "rootInfo", "true", "ownership", "true"], BLACK, 9, kata=True)
    assert options.root_info and options.ownership
    moves = (stats("E5", 300, 0.6, score=(2.0, 4.0)), stats("C3", 100, 0.2, score=(-2.0, 4.0)))
    line = format_kata_line(result(*moves), 9, options, ownership=[0.0] * 81)
    root = line.split(" rootInfo ")[1].split(" ownership ")[0]
    # visits 400; win rate (300 x 0.6 + 100 x 0.2) / 400; score mean 1.0, spread sqrt(16 + 4 - 1)
    assert root == "visits 400 winrate 0.500000 scoreMean 1.00 scoreStdev 4.36 scoreLead 1.00"
    assert " rootInfo " not in format_kata_line(result(*moves), 9, parse_analyze_options([], BLACK, 9, kata=True))
    for key in ("ownershipStdev", "movesOwnership", "pvEdgeVisits"):
        with pytest.raises(GTPCommandError, match="not available"):
            parse_analyze_options([key, "true"], BLACK, 9, kata=True)
        assert parse_analyze_options([key, "false"], BLACK, 9, kata=True).color == BLACK


def test_kata_pv_visits_are_the_searchs_visits_along_each_pv():
    """``pvVisits true``: after each move's pv, the visits of each of its nodes, from the tree (the
    first is the move's own visits, then non-increasing down the most visited children)."""
    from obook.go.position import Position
    from obook.search.players import make_player

    player = make_player("playouts=400,seed=3")
    searched = player.genmove(Position(size=9, komi=7.5), playouts=400)
    options = parse_analyze_options(["b", "pvVisits", "true"], BLACK, 9, kata=True)
    line = format_kata_line(searched, 9, options)
    infos = line.split("info move ")[1:]
    assert infos
    for info in infos:
        pv = info.split(" pv ")[1].split(" pvVisits ")[0].split()
        visits = [int(v) for v in info.split(" pvVisits ")[1].split()]
        assert len(visits) == len(pv) and visits[0] == int(info.split(" visits ")[1].split()[0])
        assert all(a >= b for a, b in zip(visits, visits[1:]))
    assert " pvVisits " not in format_kata_line(searched, 9, parse_analyze_options(["b"], BLACK, 9, kata=True))
