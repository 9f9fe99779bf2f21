"""The minimax (search-valued) book, issue 16: backed-up bounds, expansion costs and the play rule
(pure), then expansions on SQLite and PostgreSQL: excluded book moves, symmetries, a duplicate
delivery, a lost lease, a dead worker's expansion taken over, verify and repair, the CLI build."""

from __future__ import annotations

import dataclasses

import math
import re
import os
import signal
import subprocess
import sys
import time

import pytest

from obook.book.minimax import (CONSTANTS, Bounds, MinimaxConstants, Node, RootMove, back_up, book_move,
                                expansion_costs, own_bounds, reach_candidates)
from obook.go.board import PASS

FLOOR = MinimaxConstants(error_floor=0.0, z=2.0)


def node(key, moves, root_moves, edges=None, excluded_prior=0.0, play=None, score=None):
    return Node(key=key, moves=moves, root_moves=[RootMove(*m) for m in root_moves],
                searched_edges=len(edges or {}), excluded_prior=excluded_prior, edges=dict(edges or {}),
                play_policy=list(play or []), score_mean=score)


# ---- pure ------------------------------------------------------------------------------------------


def test_own_value_is_the_best_move_outside_the_book():
    n = node(1, "", [(10, 900, 0.6), (11, 100, 0.5)], edges={10: (2, 0.9)})
    assert n.best_new().move == 11
    own = own_bounds(n, FLOOR)
    assert own.value == 0.5
    error = math.sqrt(0.25 / 100)
    assert own.lcb == pytest.approx(0.5 - 2 * error) and own.ucb == pytest.approx(0.5 + 2 * error)
    everything = node(1, "", [(10, 900, 0.6)], edges={10: (2, 0.9)})
    assert own_bounds(everything, FLOOR) == Bounds(0.0, 0.0, 0.0)


def test_a_lookup_parses_the_root_moves_only_up_to_the_best_new_one():
    from obook.book.minimax import node_from_row, stored_best_new
    from obook.store.minimax import NodeRow

    row = NodeRow(key=1, moves="", policy="10:900:0.6 11:100:0.5 12:50:0.4", searched_edges=1, excluded_prior=0.0,
                  play_policy="", value=0.6, lcb=0.5, ucb=0.7, edges={10: (2, 0.9)})
    assert stored_best_new(row) == node_from_row(row).best_new() == RootMove(11, 100, 0.5)
    row.policy += " not-read"
    assert stored_best_new(row) == RootMove(11, 100, 0.5)
    row.policy, row.edges = "10:900:0.6 11:100:0.5", {10: (2, 0.9), 11: (3, 0.1)}
    assert stored_best_new(row) is None and node_from_row(row).best_new() is None


def test_values_are_backed_up_by_negamax_with_bounds_over_a_dag():
    # root -> a (move 1), root -> b (move 2); a and b both lead to the transposition t
    nodes = {
        0: node(0, "", [(1, 500, 0.5), (2, 400, 0.5), (3, 100, 0.30)], edges={1: (10, 0.5), 2: (11, 0.4)}),
        10: node(10, "A", [(5, 1000, 0.45), (6, 100, 0.2)], edges={5: (20, 0.9)}),
        11: node(11, "B", [(5, 1000, 0.40), (7, 100, 0.1)], edges={5: (20, 0.9)}),
        20: node(20, "A C", [(8, 10000, 0.7)]),
    }
    values = back_up(nodes, FLOOR)
    assert values[20].value == pytest.approx(0.7)
    # a: max(own 0.2, 1 - 0.7) = 0.3; b: max(own 0.1, 0.3) = 0.3
    assert values[10].value == pytest.approx(0.3) and values[11].value == pytest.approx(0.3)
    # root: max(own 0.30, 1 - 0.3, 1 - 0.3) = 0.7
    assert values[0].value == pytest.approx(0.7)
    t = values[20]
    assert values[10].lcb == pytest.approx(max(own_bounds(nodes[10], FLOOR).lcb, 1 - t.ucb))
    assert values[10].ucb == pytest.approx(max(own_bounds(nodes[10], FLOOR).ucb, 1 - t.lcb))
    assert values[0].lcb <= values[0].value <= values[0].ucb


def test_the_score_is_backed_up_along_the_line_of_the_value():
    """Issue 32 item 6: a node's backed-up score (Black's) is its best child's backed-up score where
    the value comes from that child, its own search's mean where its own best move outside the
    book gives the value; of lines of equal value, the best score for the player to move."""
    nodes = {
        0: node(0, "", [(1, 500, 0.5), (3, 100, 0.30)], edges={1: (10, 0.5), 2: (11, 0.4)}, score=1.0),
        10: node(10, "A", [(5, 1000, 0.45), (6, 100, 0.2)], edges={5: (20, 0.9)}, score=-1.0),
        11: node(11, "B", [(7, 1000, 0.9)], score=-6.0),  # White to move: its own search wins 0.9
        20: node(20, "A C", [(8, 10000, 0.7)], score=4.5),  # Black to move
    }
    values = back_up(nodes, FLOOR)
    assert values[20].score == 4.5  # a leaf: its own search's
    assert values[10].value == pytest.approx(0.3) and values[10].score == 4.5  # from its child 20
    assert values[11].value == pytest.approx(0.9) and values[11].score == -6.0  # from its own search
    # root (Black): max(own 0.30, 1 - 0.3 via A, 1 - 0.9 via B) = 0.7, the line through A: Black +4.5
    assert values[0].value == pytest.approx(0.7) and values[0].score == 4.5

    # two book moves of equal value: the better score for the player to move, in either order
    for order in ([1, 2], [2, 1]):
        children = {1: (31, 0.5), 2: (32, 0.5)}
        tie = {30: node(30, "A", [(9, 100, 0.1)], edges={m: children[m] for m in order}, score=0.0),  # White
               31: node(31, "A B", [(4, 100, 0.6)], score=-2.5), 32: node(32, "A C", [(4, 100, 0.6)], score=3.5)}
        assert back_up(tie, FLOOR)[30].score == -2.5, "White to move takes Black's lower score"
    # no score on the line of the value: none backed up, not another line's
    unscored = {0: node(0, "", [(3, 100, 0.2)], edges={1: (1, 0.5)}, score=2.0), 1: node(1, "A", [(4, 100, 0.4)])}
    assert back_up(unscored, FLOOR)[0].value == pytest.approx(0.6) and back_up(unscored, FLOOR)[0].score is None


def test_a_cycle_and_a_missing_child_do_not_break_the_back_up():
    nodes = {1: node(1, "", [(3, 100, 0.5)], edges={2: (2, 0.5), 4: (99, 0.1)}),
             2: node(2, "A", [(7, 100, 0.6)], edges={3: (1, 0.5)})}
    values = back_up(nodes, FLOOR)
    assert set(values) == {1, 2}
    assert values[1].value == pytest.approx(0.5)  # own 0.5 vs 1 - value(2) = 1 - 0.6 (2 sees no child: cycle cut)


def test_the_book_plays_its_best_child_unless_the_own_value_is_clearly_better():
    child_good = {2: Bounds(0.2, 0.15, 0.25)}  # mover gets 0.8 [0.75, 0.85]
    n = node(1, "", [(5, 10000, 0.6), (6, 10000, 0.5)], edges={5: (2, 0.6)})
    assert book_move(n, child_good, FLOOR).move == 5
    child_poor = {2: Bounds(0.6, 0.55, 0.65)}  # mover gets 0.4 [0.35, 0.45] < own 0.5 [0.49, 0.51]
    assert book_move(n, child_poor, FLOOR) is None
    # a book move a little below the own value, within the own value's error, stays the book's move
    noisy = node(1, "", [(5, 10000, 0.6), (6, 100, 0.5)], edges={5: (2, 0.6)})  # own 0.5 [0.4, 0.6]
    child_close = {2: Bounds(0.54, 0.44, 0.64)}  # mover gets 0.46, lower bound 0.36 < own lcb 0.4
    assert book_move(noisy, child_close, FLOOR).move == 5
    two = node(1, "", [(5, 10000, 0.6), (6, 10000, 0.3)], edges={5: (2, 0.6), 7: (3, 0.1)})
    # the best value wins, though the other's lower bound is higher
    values = {2: Bounds(0.3, 0.1, 0.5), 3: Bounds(0.35, 0.3, 0.4)}
    assert book_move(two, values, FLOOR).move == 5
    assert book_move(node(3, "", [(5, 100, 0.5)]), {}, FLOOR) is None


def test_the_search_choice_plays_the_move_the_deep_searches_visited_most():
    """``searched_edge``: the largest prior (a share of a deep search's visits) wins, whatever the
    backed-up values say; a best move outside the book with a larger share leaves the book."""
    from obook.book.minimax import edge_views, searched_edge

    n = node(1, "", [(6, 100, 0.5)], edges={5: (2, 0.7), 7: (3, 0.05)}, excluded_prior=0.75)
    values = {2: Bounds(0.5, 0.45, 0.55), 3: Bounds(0.2, 0.0, 0.4)}  # the mover: 5 gets 0.5, 7 gets 0.8
    edges = edge_views(n, values)
    assert book_move(n, values, FLOOR).move == 7  # the best value: a move the search barely visited
    assert searched_edge(edges, own_prior=0.25).move == 5
    assert searched_edge(edges, own_prior=0.8) is None  # the move outside the book was visited more
    assert searched_edge([], own_prior=0.0) is None
    tied = edge_views(node(1, "", [], edges={5: (2, 0.3), 7: (3, 0.3)}), values)
    assert searched_edge(tied, own_prior=0.0).move == 7  # equal shares: the better value


def test_a_stored_nodes_own_prior_is_its_share_of_the_last_search():
    from obook.book.minimax import node_from_row, stored_best_new, stored_own_prior
    from obook.store.minimax import NodeRow

    row = NodeRow(key=1, moves="", policy="11:300:0.5 12:100:0.4", searched_edges=1, excluded_prior=0.6,
                  play_policy="", value=0.6, lcb=0.5, ucb=0.7, edges={10: (2, 0.6)})
    best = stored_best_new(row)
    assert stored_own_prior(row, best) == pytest.approx(node_from_row(row).prior(11)) == pytest.approx(0.4 * 0.75)
    assert stored_own_prior(row, None) == 0.0


def test_symmetric_copies_are_one_move_ranked_by_the_most_visited_copy():
    from obook.book.expansion import merge_symmetric

    # the empty board: E5 (60) alone with 3,576 visits; E4 (37) as 4 copies of 1,150
    moves = merge_symmetric([(60, 3576, 0.4765)] + [(37, 1150, 0.46 + i * 0.001) for i in range(4)]
                            + [(12, 0, 0.0)])
    assert [m.move for m in moves] == [60, 37]
    assert moves[1].visits == 4600 and moves[1].winrate == pytest.approx(0.4615)
    assert moves[0] == RootMove(60, 3576, 0.4765)


def test_reach_candidates_cover_the_opponents_likely_replies_and_the_players_own_move():
    # root (Black to move) -> book move 1 -> a (White to move: the opponent of a Black book player)
    nodes = {
        0: node(0, "", [(1, 900, 0.6), (2, 100, 0.4)], edges={1: (10, 0.9)}, play=[(2, 0.7), (1, 0.3)]),
        10: node(10, "A", [(5, 900, 0.45), (6, 100, 0.3)], play=[(6, 0.6), (5, 0.3), (7, 0.1)]),
    }
    values = back_up(nodes, FLOOR)
    found = {(key, move): cost for cost, key, move in reach_candidates(nodes, 0, values, FLOOR)}
    # Black plays the book move 1 at the root; White's replies at a in proportion to the play policy
    assert found[(10, 6)] == pytest.approx(-math.log(0.6))
    assert found[(10, 7)] == pytest.approx(-math.log(0.1))
    # White as the book player: Black's likely 2 at the root is not in the book (reach 0.7)
    assert found[(0, 2)] == pytest.approx(-math.log(0.7))
    # a's own best move outside the book (5) for a White book player reached through Black's 1 (0.3)
    assert found[(10, 5)] == pytest.approx(min(-math.log(0.3), -math.log(0.3)))
    order = [(key, move) for _, key, move in reach_candidates(nodes, 0, values, FLOOR)]
    assert order[0] == (0, 2)
    assert order.index((10, 7)) == len(order) - 1
    deep = MinimaxConstants(error_floor=0.0, max_depth=1)
    assert {key for _, key, _ in reach_candidates(nodes, 0, back_up(nodes, deep), deep)} == {0}


def test_a_reply_temperature_below_one_makes_the_opponents_likeliest_replies_likelier():
    from obook.book.minimax import tempered

    policy = [(6, 0.4), (5, 0.2), (7, 0.1)]
    assert tempered(policy, 1.0) == policy
    squared = dict(tempered(policy, 0.5))  # 0.16, 0.04, 0.01 over 0.21
    assert squared == pytest.approx({6: 0.16 / 0.21, 5: 0.04 / 0.21, 7: 0.01 / 0.21})
    assert sum(squared.values()) == pytest.approx(1.0)
    flatter = dict(tempered(policy, 2.0))
    assert flatter[6] / flatter[7] == pytest.approx((0.4 / 0.1) ** 0.5)
    # the reach rule reads the tempered policy: White's reply 6 at node 10 now costs -log(0.36 / 0.46)
    nodes = {
        0: node(0, "", [(1, 900, 0.6), (2, 100, 0.4)], edges={1: (10, 0.9)}, play=[(2, 0.7), (1, 0.3)]),
        10: node(10, "A", [(5, 900, 0.45), (6, 100, 0.3)], play=[(6, 0.6), (5, 0.3), (7, 0.1)]),
    }
    assert nodes[10].likely_moves(0.5)[0] == (6, pytest.approx(0.36 / 0.46))
    cold = dataclasses.replace(FLOOR, reply_temperature=0.5)
    found = {(key, move): cost for cost, key, move in reach_candidates(nodes, 0, back_up(nodes, cold), cold)}
    assert found[(10, 6)] == pytest.approx(-math.log(0.36 / 0.46))
    assert found[(10, 7)] == pytest.approx(-math.log(0.01 / 0.46))
    assert found[(0, 2)] == pytest.approx(-math.log(0.49 / 0.58))


def test_expansion_costs_follow_the_path_gap_and_prior():
    nodes = {
        0: node(0, "", [(1, 600, 0.55), (2, 300, 0.5), (3, 100, 0.4)], edges={1: (10, 0.6), 2: (11, 0.3)}),
        10: node(10, "A", [(5, 900, 0.45), (6, 100, 0.3)]),
        11: node(11, "B", [(5, 900, 0.60), (6, 100, 0.3)]),
    }
    values = back_up(nodes, CONSTANTS)
    costs = expansion_costs(nodes, 0, values, CONSTANTS)
    order = [key for _, key in costs]
    assert set(order) == {0, 10, 11}
    by_key = {key: cost for cost, key in costs}
    # child 11's move (B) is worse for the root's mover (1 - 0.60 < 1 - 0.45) and less likely: dearer
    assert by_key[11] > by_key[10]
    deep = MinimaxConstants(max_depth=1)
    assert [key for _, key in expansion_costs(nodes, 0, back_up(nodes, deep), deep)] == [0]
    passing = {0: node(0, "", [(PASS, 100, 0.5)])}
    assert expansion_costs(passing, 0, back_up(passing)) == []


# ---- in the store ------------------------------------------------------------------------------------


SMALL = "playouts=300"


def minimax_book(store, name="mm", size=5, search=SMALL, **settings):
    from obook.book.library import BookSettings, ensure_book

    settings.setdefault("expansion", "cost")
    return ensure_book(store, name, BookSettings(size=size, komi=0.5, algorithm="minimax", search=search,
                                                 seconds_per_move=0, **settings))


def take(expander):
    """The next expansion for ``expander``, as the worker loop finds it: a pending one, else the
    next one scheduled (``BookKind.top_up``)."""
    from obook.book.kinds import book_kind

    held = expander.claim()
    if held is None:
        book_kind(expander.book).top_up(expander.store, expander.book, 10**9)
        held = expander.claim()
    return held.job if held is not None else None


def expand(store, book, count, owner=None):
    from obook.book.expansion import Expander

    expander = Expander(store, book, owner=owner, lease_seconds=60)
    for _ in range(count):
        job = take(expander)
        assert job is not None
        assert expander.expand(job)
    return expander


def unit_counts(conn, book):
    from obook.book.kinds import book_kind

    return book_kind(book).counts(conn, book)


def test_expansions_grow_a_book_that_verifies(store, compiled_engine):
    from obook.book.expansion import root_key
    from obook.book.verification import verify_minimax
    from obook.book.backup import load_nodes

    book = minimax_book(store)
    expand(store, book, 6)
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
        counts = unit_counts(conn, book)
    assert counts.done == 6 and not counts.open
    root = nodes[root_key(book)]
    assert len(nodes) == 1 + sum(len(n.edges) for n in nodes.values())  # a tree so far: one node per edge
    assert sum(len(n.edges) for n in nodes.values()) == 6
    for n in nodes.values():
        assert n.root_moves, "every node was searched"
        searched = n.root_moves
        # a search made with book moves excluded never lists them (moves added later came from it)
        assert len({m.move for m in searched}) == len(searched)
    assert root.edges, "the root was expanded"
    result = verify_minimax(store, book)
    assert result.clean, result.differences[:3]
    assert result.nodes == len(nodes)


def test_a_reach_book_adds_the_likely_replies_it_schedules(store, compiled_engine):
    from obook.book.expansion import Expander, root_key
    from obook.book.verification import verify_minimax
    from obook.book.backup import load_nodes

    book = minimax_book(store, name="reach", expansion="reach", play_playouts=30)
    assert (book.expansion, book.play_playouts) == ("reach", 30)
    expander = Expander(store, book, lease_seconds=60)
    added = []
    for _ in range(6):
        job = take(expander)
        with store.read() as conn:
            before = load_nodes(conn, book.id)
        expander.expand(job)
        with store.read() as conn:
            after = load_nodes(conn, book.id)
        if job.key in before:
            assert job.move is not None, "a reach book names the move of every expansion but the first"
            assert set(after[job.key].edges) - set(before[job.key].edges) == {job.move}
            added.append(job)
    nodes = after
    assert all(n.play_policy for n in nodes.values()), "every node has its play-budget policy"
    for n in nodes.values():
        assert sum(share for _, share in n.play_policy) == pytest.approx(1.0, abs=0.05)
    root = nodes[root_key(book)]
    # the root's best move for Black, and the likeliest Black first moves for a White book player
    likely = {m for m, _ in root.likely_moves()[:2]}
    assert likely & set(root.edges)
    assert any(nodes[job.key].depth % 2 == 1 for job in added), "the opponent's replies were added"
    assert verify_minimax(store, book).clean


def test_lookups_show_each_book_moves_visits_and_mean_score(store, compiled_engine):
    from obook.book.library import lookup
    from obook.store.minimax import read_node

    book = minimax_book(store, name="scored", expansion="reach", play_playouts=30)
    expand(store, book, 4)
    found = lookup(store, book, "")
    assert found.candidates
    for c in found.candidates:
        assert c.visits > 0 and c.score_mean is not None
    first = found.candidates[0]
    after = lookup(store, book, first.vertex)  # White to move: the stored score is Black's
    with store.read() as conn:
        child = read_node(conn, book.id, after.position.canonical()[0])
    assert child.score_mean is not None and -5 * 5 <= child.score_mean <= 5 * 5
    assert first.score_mean == pytest.approx(child.score_mean)  # Black made the move: Black's score
    for c in after.candidates:  # White's moves: White's score, the stored one turned around
        with store.read() as conn:
            grandchild = read_node(conn, book.id, lookup(store, book, f"{first.vertex} {c.vertex}").position.canonical()[0])
        assert c.score_mean == pytest.approx(-grandchild.score_mean)


def test_lookups_show_each_book_moves_backed_up_score(store, compiled_engine):
    """Issue 32 item 6: every way a lookup is shown (the answer, ``obook lookup``'s text and JSON,
    KataGo's move infos) gives each book move the score the back-up stored for the position it
    reaches (Black's, turned to the mover's side), and the position the score of its value's line."""
    from obook.book.kinds import book_kind
    from obook.book.library import lookup
    from obook.book.lookup import score_as_result
    from obook.store.minimax import read_node

    book = minimax_book(store, name="backed", expansion="reach", play_playouts=30)
    expand(store, book, 5)
    kind = book_kind(book)
    # the root, and a White position: its book moves' scores are White's, the stored Black's negated
    for line in ("", lookup(store, book, "").candidates[0].vertex):
        found = lookup(store, book, line)
        black = found.position.to_move == 1
        sign = 1 if black else -1
        assert found.candidates
        with store.read() as conn:
            stored = read_node(conn, book.id, found.position.canonical()[0])
        assert stored.backed_up_score is not None and found.backed_up_score == sign * stored.backed_up_score
        from_lines = [c.backed_up_score for c in found.candidates if c.value == found.value]
        if found.own_value != found.value:
            assert found.backed_up_score in from_lines, "the score of the line the value comes from"
        text = "\n".join(kind.describe_lookup(found))
        doc = kind.document(found)
        infos, root = kind.move_infos(found, book.size)
        assert f"score {score_as_result(found.backed_up_score, black)};" in text
        assert doc["backed_up_score"] == pytest.approx(found.backed_up_score, abs=1e-3)
        assert root["scoreLead"] == found.backed_up_score
        for c, shown in zip(found.candidates, doc["candidates"]):
            reached = lookup(store, book, f"{line} {c.vertex}".strip()).position.canonical()[0]
            with store.read() as conn:
                child = read_node(conn, book.id, reached)
            assert child.backed_up_score is not None and c.backed_up_score == sign * child.backed_up_score
            result = score_as_result(c.backed_up_score, black)
            if abs(child.backed_up_score) >= 0.05:  # Black's stored score, as a result whoever moves
                assert result == ("B+" if child.backed_up_score > 0 else "W+") + f"{abs(child.backed_up_score):.1f}"
            assert shown["move"] == c.vertex and shown["backed_up_result"] == result
            assert shown["backed_up_score"] == pytest.approx(c.backed_up_score, abs=1e-3)
            assert re.search(rf"^\s+{c.vertex} .* {re.escape(result)} ", text, re.M)
            (info,) = [i for i in infos if i["move"] == c.vertex]
            assert info["scoreLead"] == info["scoreMean"] == c.backed_up_score


def test_verify_finds_and_repairs_a_wrong_or_missing_backed_up_score(store, compiled_engine):
    """A stored backed-up score that is not the back-up's is a difference ``obook verify`` reports
    and ``--repair`` rewrites; so is one missing (a book backed up before migration 0018)."""
    from sqlalchemy import update

    from obook.book.expansion import root_key
    from obook.book.verification import verify_minimax
    from obook.store.db import to_signed
    from obook.store.minimax import NODES

    book = minimax_book(store, name="scores")
    expand(store, book, 3)
    assert verify_minimax(store, book).clean
    root = root_key(book)
    with store.write() as conn:
        conn.execute(update(NODES).where(NODES.c.book_id == book.id, NODES.c.position_key == to_signed(root))
                     .values(backed_up_score=NODES.c.backed_up_score + 0.5))
    broken = verify_minimax(store, book)
    assert not broken.clean and [key for key, _, _ in broken.differences] == [root]
    (_, computed, stored), = broken.differences
    assert stored.backed_up_score == computed.backed_up_score + 0.5 and stored.value == computed.value
    lines, sound = broken.report(False)
    assert not sound and f"node {root:016x}" in "\n".join(lines)
    with store.write() as conn:
        conn.execute(update(NODES).where(NODES.c.book_id == book.id).values(backed_up_score=None))
    old = verify_minimax(store, book, repair=True)
    assert len(old.differences) == old.nodes == old.scores_missing() and old.repaired
    assert f"{old.nodes} of the nodes that differ only lack their backed-up score" in "\n".join(old.report(True)[0])
    assert broken.scores_missing() == 0
    assert verify_minimax(store, book).clean


def test_a_nodes_mean_score_is_its_own_searchs(store, compiled_engine):
    """Issue 32 item 6: a node keeps the mean final score of the S-playout search that valued it
    (Black's view), not of separate random playouts: the same search, replayed with the expansion's
    seed, gives the stored score."""
    from obook.book.backup import load_nodes
    from obook.book.selfplay import move_seed, mutation_config
    from obook.go.position import Position
    from obook.search.players import make_player

    book = minimax_book(store, name="own-score")
    expand(store, book, 1)
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
    (child,) = [n for n in nodes.values() if n.moves]
    player = make_player(mutation_config(book))
    player.new_game()
    player.reseed(move_seed(get_expansion_row(store, 1).seed, 1))  # the first expansion's child search
    after = Position.from_moves(child.moves, size=5, komi=0.5)
    result = player.genmove(after)
    with store.read() as conn:
        from obook.store.minimax import read_node

        stored = read_node(conn, book.id, child.key).score_mean
    assert after.to_move == 2 and stored == pytest.approx(-result.score_mean)  # White to move: Black's is minus


def test_two_builds_with_the_same_settings_search_alike_unless_salted(store, compiled_engine):
    from obook.book.backup import load_nodes
    from obook.book.expansion import root_key

    books = [minimax_book(store, name=name, expansion="reach", play_playouts=30, seed_salt=salt)
             for name, salt in (("one", 0), ("two", 0), ("salted", 1))]
    for book in books:
        expand(store, book, 3)
    with store.read() as conn:
        one, two, salted = (load_nodes(conn, book.id) for book in books)
    assert set(one) == set(two)
    assert {k: (n.root_moves, n.play_policy, n.edges) for k, n in one.items()} == {
        k: (n.root_moves, n.play_policy, n.edges) for k, n in two.items()}
    root = root_key(books[0])
    assert salted[root].root_moves != one[root].root_moves  # a seed salt: the same settings, other searches


def test_a_reach_books_opponent_model_averages_its_population(store, compiled_engine):
    """Issue 32 item 4: each engine of the population searches a new node once at its own budget
    and configuration; the node's play policy is their mean visit shares."""
    from obook.book.backup import load_nodes
    from obook.book.expansion import opponent_configs
    from obook.book.library import BookSettings
    from obook.errors import ObookError

    book = minimax_book(store, name="population", expansion="reach", play_playouts=30,
                        opponents=" playouts=20 ; playouts=60,policy=light ;")
    assert book.opponents == "playouts=20;playouts=60,policy=light"
    first, second = opponent_configs(book)
    assert (first.playouts, first.policy, second.playouts, second.policy) == (20, "heavy-moggy", 60, "light")
    assert first.rave_k == second.rave_k == 3000 and first.seconds == 0  # the book's search otherwise
    expander = expand(store, book, 2)
    assert [p.config for p in expander.play_players] == [first, second]
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
    policies = [n.play_policy for n in nodes.values() if n.play_policy]
    assert policies and all(abs(sum(share for _, share in p) - 1) < 0.05 for p in policies)
    plain = minimax_book(store, name="plain", expansion="reach", play_playouts=30)
    assert [c.playouts for c in opponent_configs(plain)] == [30]
    with pytest.raises(ObookError, match="opponent 'playouts=0'"):
        BookSettings(size=5, algorithm="minimax", opponents="playouts=10;playouts=0").validated()
    with pytest.raises(ObookError, match="grown by reach"):
        BookSettings(size=5, algorithm="minimax", expansion="cost", opponents="playouts=10").validated()


def test_a_research_excludes_the_book_moves(store, compiled_engine):
    from obook.book.expansion import Expander
    from obook.book.backup import load_nodes

    book = minimax_book(store, search="playouts=200")
    expander = Expander(store, book, lease_seconds=60, constants=MinimaxConstants(reuse_min_visits=10**9))
    for _ in range(12):  # until some node has been expanded twice (the cheapest is usually the root)
        expander.expand(take(expander))
        with store.read() as conn:
            nodes = load_nodes(conn, book.id)
        if any(len(n.edges) >= 2 for n in nodes.values()):
            break
    researched = [n for n in nodes.values() if n.searched_edges > 0]
    assert researched, "with reuse off, a node expanded twice is searched again"
    for n in researched:
        assert len(n.edges) == n.searched_edges + 1
        excluded = set(n.edges) - {n.root_moves[0].move}
        assert not excluded & {m.move for m in n.root_moves}, "the search played a book move"


def test_symmetric_moves_are_one_book_move(store, compiled_engine):
    from obook.book.library import lookup

    book = minimax_book(store)
    expand(store, book, 4)
    found = lookup(store, book, "")
    assert found.in_book
    first = found.candidates[0].vertex
    letters = "ABCDE"
    column, row = letters.index(first[0]), int(first[1:]) - 1
    mirrored = f"{letters[4 - column]}{row + 1}"
    a = lookup(store, book, first)
    b = lookup(store, book, mirrored)
    assert a.value is not None and b.value == pytest.approx(a.value)
    assert [c.value for c in a.candidates] == [c.value for c in b.candidates]


def test_a_duplicate_or_late_delivery_writes_nothing(store, compiled_engine):
    from obook.book.expansion import Expander
    from obook.book.verification import verify_minimax
    from obook.store.leases import LeaseLost
    from obook.book.backup import load_nodes
    from obook.store import jobs
    from obook.store.minimax import get_expansion

    book = minimax_book(store)
    first = Expander(store, book, owner="host:1:first", lease_seconds=60)
    job = take(first)
    first.expand(job)
    with store.read() as conn:
        before = load_nodes(conn, book.id)
    with pytest.raises(LeaseLost):
        first.expand(get_expansion_row(store, job.id))  # delivered again after it was done
    with store.read() as conn:
        after = load_nodes(conn, book.id)
    assert {k: (n.edges, n.root_moves) for k, n in after.items()} == {k: (n.edges, n.root_moves)
                                                                      for k, n in before.items()}
    # a worker whose lease expired and was taken: its result is not stored
    slow = Expander(store, book, owner="host:2:slow", lease_seconds=0.05)
    job = take(slow)
    time.sleep(0.3)
    with store.write() as conn:
        taken = get_expansion(conn, jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, "host:3:other", 60))
    assert taken is not None and taken.id == job.id and taken.attempts == 2
    with pytest.raises(LeaseLost):
        slow.expand(job)
    with store.read() as conn:
        assert get_expansion(conn, job.id).status == "pending"
        assert unit_counts(conn, book).done == 1
    assert verify_minimax(store, book).clean


def get_expansion_row(store, job_id):
    from obook.store.minimax import get_expansion

    with store.read() as conn:
        return get_expansion(conn, job_id)


def test_verify_finds_and_repairs_a_wrong_stored_value(store, compiled_engine):
    from sqlalchemy import update

    from obook.book.verification import verify_minimax
    from obook.store.minimax import NODES

    book = minimax_book(store)
    expand(store, book, 3)
    with store.write() as conn:
        conn.execute(update(NODES).where(NODES.c.book_id == book.id).values(value=0.123))
    broken = verify_minimax(store, book)
    assert not broken.clean and len(broken.differences) == broken.nodes
    repaired = verify_minimax(store, book, repair=True)
    assert repaired.repaired
    assert verify_minimax(store, book).clean


def test_the_book_player_plays_the_book_move_and_leaves_the_book(store, compiled_engine):
    from obook.book.expansion import root_key
    from obook.book.minimax import book_move
    from obook.book.player import BookPlayer
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player
    from obook.book.backup import load_nodes
    from obook.store.minimax import stored_figures

    book = minimax_book(store)
    expand(store, book, 5)
    player = BookPlayer(make_player(SearchConfig.from_spec("playouts=50")), store.url, book.name)
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
        bounds = stored_figures(conn, book.id)
    expected = book_move(nodes[root_key(book)], bounds)
    result = player.book_result(Position(size=5, komi=0.5))
    assert result is not None
    if expected is None:  # the root's own deep search plays (see the test below)
        assert type(result).__name__ == "DeepSearchResult"
    else:
        assert type(result).__name__ == "BookResult"
        assert result.winrate == pytest.approx(expected.value)
    far = Position(size=5, komi=0.5)
    for v in ("A1", "E5", "A5"):
        far.play(v)
    assert player.book_result(far) is None  # not in the book: the search plays


def test_a_node_without_a_book_move_plays_its_own_deep_search(store, compiled_engine):
    """Issue 32 item 5: a node with no book move yet holds a search of S playouts: play that
    search's best move, not a search at the play budget (unless told not to)."""
    from obook.book.library import lookup
    from obook.book.player import BookPlayer, DeepSearchResult
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    from obook.book.backup import load_nodes

    book = minimax_book(store, name="leaf")
    expand(store, book, 1)
    with store.read() as conn:
        leaf = next(n for n in load_nodes(conn, book.id).values() if not n.edges)  # searched, no child yet
    found = lookup(store, book, leaf.moves)
    assert found.usage is None and found.own_point is not None
    position = Position.from_moves(leaf.moves, size=5, komi=0.5)
    player = BookPlayer(make_player(SearchConfig.from_spec("playouts=50")), store.url, book.name)
    result = player.genmove(position, playouts=50)
    assert isinstance(result, DeepSearchResult)
    assert (result.move, result.winrate) == (found.own_point, found.own_value)
    assert player.record_move(position.to_move, len(position.moves) + 1, result) is None  # played from the book
    plain = BookPlayer(make_player(SearchConfig.from_spec("playouts=50")), store.url, book.name, own_moves=False)
    assert plain.book_result(position) is None


def test_a_book_player_plays_by_the_choice_it_is_given(store, compiled_engine):
    """``--book-choice``: at every node of a real book, the player's move is ``book_move``'s (value)
    or ``searched_edge``'s (search), and a node whose best move outside the book was visited more
    than its book moves plays that move from its own deep search; a misspelt choice is refused."""
    from obook.book.backup import load_nodes
    from obook.book.minimax import book_move, edge_views, searched_edge
    from obook.book.player import BookPlayer, BookResult, DeepSearchResult
    from obook.errors import ObookError
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player
    from obook.store.minimax import stored_figures

    book = minimax_book(store, name="choices")
    expand(store, book, 6)
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
        bounds = stored_figures(conn, book.id)
    players = {choice: BookPlayer(make_player(SearchConfig.from_spec("playouts=50")), store.url, book.name,
                                  choice=choice) for choice in ("value", "search")}
    checked = 0
    for n in nodes.values():
        edges = edge_views(n, bounds)
        if not edges:
            continue
        position = Position.from_moves(n.moves, size=5, komi=0.5)
        best = n.best_new()
        expected = {"value": book_move(n, bounds), "search": searched_edge(edges, n.prior(best.move) if best else 0.0)}
        for choice, player in players.items():
            found = player.lookup(position)
            result = player.book_result(position)
            if expected[choice] is None:
                assert found.usage is None and (result is None or isinstance(result, DeepSearchResult))
            else:
                assert found.usage is not None and isinstance(result, BookResult)
                assert found.usage.value == pytest.approx(expected[choice].value)
                assert found.usage.prior == pytest.approx(expected[choice].prior)
        checked += 1
    assert checked >= 2
    with pytest.raises(ObookError, match="unknown book choice 'visits'.*value, search"):
        BookPlayer(make_player(SearchConfig.from_spec("playouts=50")), store.url, book.name, choice="visits")


def test_a_warm_book_player_leaves_the_book_with_the_tree_of_its_last_book_move(store, compiled_engine):
    """Issue 32 item 5: on a book move, a warm player searches the position after it with the
    move's budget, so that its first search out of the book reuses a tree, as the opponent's does."""
    from obook.book.library import lookup
    from obook.book.player import BookPlayer, BookResult
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    # The book's policy named: with it these five expansions follow the main line four moves deep,
    # as this test and the next expect (with heavy-moggy the fifth searches the first move's node again).
    book = minimax_book(store, name="warm", search=SMALL + ",policy=heavy", expansion="reach", play_playouts=30)
    expand(store, book, 5)
    assert lookup(store, book, "").usage is not None
    reused, reply = {}, None
    for warm in (True, False):
        player = BookPlayer(make_player(SearchConfig.from_spec("playouts=400")), store.url, book.name,
                            own_moves=False, warm=warm)
        position = Position(size=5, komi=0.5)
        first = player.genmove(position, playouts=400)
        assert isinstance(first, BookResult)
        position.play(first.move)
        if reply is None:  # the likeliest reply in the warm search that leaves the book
            line = [position.vertex(p) for _, p in position.moves]
            reply = next(m.point for m in player.warm_result.moves
                         if m.point >= 0 and lookup(store, book, line + [position.vertex(m.point)]).value is None)
        position.play(reply)
        out = player.genmove(position, playouts=400)
        assert not isinstance(out, BookResult)
        reused[warm] = sum(m.visits for m in out.moves) - out.playouts
    assert reused[False] <= 1 and reused[True] > 0, reused


def test_gtp_analysis_in_a_book_position_shows_the_book_moves_values(store, compiled_engine):
    from obook.book.library import lookup
    from obook.book.player import BookPlayer
    from obook.gtp.engine import GTPEngine
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    book = minimax_book(store, name="analysed", search=SMALL + ",policy=heavy", expansion="reach", play_playouts=30)
    expand(store, book, 5)
    found = lookup(store, book, "")
    assert found.usage is not None, "the root has a book move"
    engine = GTPEngine("playouts=50", player=BookPlayer(make_player(SearchConfig.from_spec("playouts=50")),
                                                        store.url, book.name))
    assert engine.handle("boardsize 5").startswith("=") and engine.handle("komi 0.5").startswith("=")
    info = engine.handle("lz-analyze b 10").split("\n")[1]
    shown = dict(re.findall(r"info move (\S+) visits \d+ winrate (\d+)", info))
    assert shown == {c.vertex: str(round(10000 * c.value)) for c in found.candidates}
    # KataGo's form: the visits of the searches behind the values and the back-up's lower bounds, not
    # prior-made visits and a bound equal to the value (issue 34)
    kata = engine.handle("kata-analyze b 10").split("\n")[1]
    lines = {m: (int(v), float(w), float(lcb)) for m, v, w, lcb in
             re.findall(r"info move (\S+) visits (\d+) .*?winrate (\S+) .*?lcb (\S+)", kata.replace("info", "\ninfo"))}
    assert lines == {c.vertex: (c.visits, pytest.approx(c.value, abs=1e-6), pytest.approx(c.lcb, abs=1e-6))
                     for c in found.candidates}
    assert all(c.visits > 0 and c.lcb < c.value for c in found.candidates)
    # their scores are the back-up's, for Black (to move): the score of each move's line
    leads = dict(re.findall(r"info move (\S+) .*?scoreLead (\S+)", kata.replace("info", "\ninfo")))
    assert leads == {c.vertex: f"{c.backed_up_score:.2f}" for c in found.candidates}


def test_the_cli_builds_looks_up_and_verifies_a_minimax_book(tmp_path, compiled_engine):
    db = f"sqlite:///{tmp_path / 'mm.db'}"
    run = lambda *a: subprocess.run([sys.executable, "-m", "obook.cli", *a, "--db", db],  # noqa: E731
                                    capture_output=True, text=True, timeout=300)
    built = run("build", "--book", "mm", "--algorithm", "minimax", "--size", "5", "--komi", "0.5",
                "--search", SMALL, "--seconds-per-move", "0", "--games", "5", "--workers", "2", "--quiet")
    assert built.returncode == 0, built.stderr[-2000:]
    assert "MINIMAX" in built.stderr
    looked = run("lookup", "--book", "mm", "")
    assert looked.returncode == 0 and "minimax value" in looked.stdout
    import json

    doc = json.loads(run("lookup", "--book", "mm", "", "--json").stdout)
    assert doc["in_book"] and doc["candidates"] and all(c["lcb"] <= c["value"] <= c["ucb"] for c in doc["candidates"])
    assert all(re.fullmatch(r"[BW]\+\d+\.\d|0", c["backed_up_result"]) for c in doc["candidates"])
    assert all(f" {c['backed_up_result']} " in looked.stdout for c in doc["candidates"])
    checked = run("verify", "--book", "mm")
    assert checked.returncode == 0 and "matches the stored searches" in checked.stdout
    from sqlalchemy import update

    from obook.book.library import open_book_store
    from obook.store.minimax import NODES

    with open_book_store(db).write() as conn:
        conn.execute(update(NODES).values(value=0.123))
    assert run("verify", "--book", "mm").returncode == 1
    repaired = run("verify", "--book", "mm", "--repair")
    assert repaired.returncode == 0 and "repaired" in repaired.stdout, repaired.stdout
    assert run("verify", "--book", "mm").returncode == 0
    wrong = run("build", "--book", "mm", "--algorithm", "minimax", "--search", "playouts=300,algorithm=flat",
                "--games", "1")
    assert wrong.returncode != 0


def test_a_build_killed_hard_resumes_and_loses_at_most_the_searches_running(tmp_path, compiled_engine):
    """SIGKILL the whole build (parent and workers) in the middle of expansions, run it again: the
    book ends with exactly the target of expansions, each done once, and verifies clean."""
    from obook.book.library import open_book_store
    from obook.book.verification import verify_minimax
    from obook.store.books import get_book
    from obook.store.minimax import JOBS
    from sqlalchemy import select

    db = f"sqlite:///{tmp_path / 'kill.db'}"
    argv = [sys.executable, "-m", "obook.cli", "build", "--db", db, "--book", "k", "--algorithm", "minimax",
            "--size", "5", "--komi", "0.5", "--search", "playouts=3000", "--seconds-per-move", "0", "--games", "12",
            "--workers", "2", "--quiet"]
    build = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.time() + 240
    done = 0
    while time.time() < deadline and build.poll() is None:
        time.sleep(0.2)
        try:
            store = open_book_store(db)
            with store.read() as conn:
                done = unit_counts(conn, get_book(conn, "k")).done
        except Exception:  # noqa: BLE001 - not created yet
            continue
        if done >= 4:
            break
    assert build.poll() is None, "the build ended before it could be killed"
    os.killpg(build.pid, signal.SIGKILL)
    build.wait()
    again = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    store = open_book_store(db)
    with store.read() as conn:
        book = get_book(conn, "k")
        counts = unit_counts(conn, book)
        attempts = [a for (a,) in conn.execute(select(JOBS.c.attempts).where(JOBS.c.book_id == book.id))]
    assert counts.done == 12 and not counts.open
    assert sum(a - 1 for a in attempts) <= 2, "more than the two expansions running at the kill were repeated"
    assert verify_minimax(store, book).clean


def test_export_writes_the_minimax_values(store, compiled_engine):
    from sgfmill import sgf

    from obook.book.kinds import book_kind
    from obook.book.library import lookup
    from obook.book.lookup import score_as_result

    book = minimax_book(store)
    expand(store, book, 4)
    data, count = book_kind(book).export(store, book)
    root = sgf.Sgf_game.from_bytes(data).get_root()
    assert count >= 4 and len(root) >= 1
    first = root[0]
    found = lookup(store, book, "")
    best = found.candidates[0]
    assert first.get_raw("SBKV").decode() == f"{100 * best.value:.1f}"  # Black moves first
    assert "minimax" in first.get("C") and f"mean score {best.score_mean:+.1f}" in first.get("C")
    assert f"score {score_as_result(best.backed_up_score, True)}," in first.get("C")


def test_a_node_with_many_book_moves_costs_more_to_widen():
    wide = {0: node(0, "", [(m, 100, 0.5) for m in range(1, 12)], edges={m: (100 + m, 0.09) for m in range(1, 9)})}
    wide.update({100 + m: node(100 + m, "X", [(50, 100, 0.5)]) for m in range(1, 9)})
    narrow = {0: node(0, "", [(m, 100, 0.5) for m in range(1, 12)], edges={1: (101, 0.09)}),
              101: node(101, "X", [(50, 100, 0.5)])}
    cost = lambda nodes: dict((k, c) for c, k in expansion_costs(nodes, 0, back_up(nodes)))[0]  # noqa: E731
    assert cost(wide) - cost(narrow) == pytest.approx(
        CONSTANTS.cost_per_moves_expanded * 7 + CONSTANTS.cost_per_squared_moves_expanded * (64 - 1), abs=0.5)


def test_the_service_shows_a_minimax_book(store, store_url, compiled_engine):
    from fastapi.testclient import TestClient

    from api.app import create_app
    from obook.book.library import lookup
    from obook.book.lookup import score_as_result
    from obook.config import Settings

    book = minimax_book(store)
    expand(store, book, 4)
    expected = lookup(store, book, "")
    with TestClient(create_app(store_url, Settings(api_cache_seconds=0))) as client:
        answer = client.get(f"/v1/books/{book.name}/lookup", params={"moves": ""}).json()
        assert answer["algorithm"] == "minimax" and answer["in_book"]
        assert answer["value"] == pytest.approx(expected.value)
        got = {c["move"]: (c["value"], c["lcb"], c["ucb"]) for c in answer["candidates"]}
        assert got == {c.vertex: (round(c.value, 6), round(c.lcb, 6), round(c.ucb, 6)) for c in expected.candidates}
        shown = {c["move"]: (c["visits"], c["score_mean"]) for c in answer["candidates"]}
        assert shown == {c.vertex: (c.visits, round(c.score_mean, 3) if c.score_mean is not None else None)
                         for c in expected.candidates}
        scores = {c["move"]: (c["backed_up_score"], c["backed_up_result"]) for c in answer["candidates"]}
        assert scores == {c.vertex: (round(c.backed_up_score, 3), score_as_result(c.backed_up_score, True))
                          for c in expected.candidates}
        assert None not in scores.values() and answer["backed_up_score"] == round(expected.backed_up_score, 3)
        expand(store, book, 1)  # the answer follows the book as it grows
        again = client.get(f"/v1/books/{book.name}/lookup", params={"moves": ""}).json()
        assert again["value"] == pytest.approx(lookup(store, book, "").value)


def test_cached_minimax_answers_follow_the_book_and_its_repair(store, store_url, compiled_engine):
    """The service's cached answers about a minimax book are renewed when the book changes: an
    expansion's commit, and ``obook verify --repair`` (the book's last change,
    ``obook.store.minimax.last_change``, is what the freshness check reads)."""
    from fastapi.testclient import TestClient
    from sqlalchemy import update

    from api.app import create_app
    from obook.book.library import lookup
    from obook.book.verification import verify_minimax
    from obook.config import Settings
    from obook.store.db import to_signed
    from obook.store.minimax import NODES

    book = minimax_book(store)
    expand(store, book, 2)
    with TestClient(create_app(store_url, Settings(api_cache_seconds=600, api_fresh_seconds=0))) as client:
        def root():
            answer = client.get(f"/v1/books/{book.name}/lookup", params={"moves": ""})
            return answer.headers["etag"], answer.json()["value"]

        tag, _ = root()
        expand(store, book, 2)
        tag_after_expansions, value = root()
        assert tag_after_expansions != tag and value == pytest.approx(lookup(store, book, "").value)
        root_key = lookup(store, book, "").position.key
        with store.write() as conn:  # a wrong stored value, as a bug or a hand edit would leave
            conn.execute(update(NODES).where(NODES.c.book_id == book.id, NODES.c.position_key == to_signed(root_key))
                         .values(value=0.01))
        assert root() == (tag_after_expansions, value)  # no write of the book's: its answers are cached
        assert verify_minimax(store, book, repair=True).repaired
        assert root() != (tag_after_expansions, value) and root()[1] == pytest.approx(value)


def test_soft_mode_gives_the_search_the_book_values_as_prior_visits(store, compiled_engine):
    from obook.book.library import lookup
    from obook.book.player import BookPlayer
    from obook.errors import ObookError
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    book = minimax_book(store)
    expand(store, book, 4)
    found = lookup(store, book, "")
    best = max(found.candidates, key=lambda c: c.value)
    inner = make_player(SearchConfig.from_spec("playouts=200,seed=3"))
    soft = BookPlayer(inner, store.url, book.name, soft_visits=1e6)
    result = soft.genmove(Position(size=5, komi=0.5))
    assert result.move == best.point  # the prior visits at the book's values steer the search
    assert not soft.book_moves  # the search played, not the book
    with pytest.raises(ObookError):
        BookPlayer(make_player(SearchConfig.from_spec("algorithm=flat,playouts=50")), store.url, book.name,
                   soft_visits=10)


def test_progress_shows_the_expansions_being_searched(store, store_url, compiled_engine):
    from fastapi.testclient import TestClient

    from api.app import create_app
    from obook.book.expansion import Expander
    from obook.config import Settings

    book = minimax_book(store)
    expand(store, book, 3)
    running = take(Expander(store, book, owner="host:9:build1:abc", lease_seconds=600))
    with TestClient(create_app(store_url, Settings(api_cache_seconds=0))) as client:
        progress = client.get("/v1/progress").json()
    mine = next(b for b in progress["books"] if b["name"] == book.name)
    assert mine["expansions_done"] == 3 and mine["expansions_pending"] == 1
    assert [g["id"] for g in mine["in_flight"]] == [running.id]
    assert mine["in_flight"][0]["moves"] == list(running.moves)
    assert "host:9" not in str(mine["in_flight"][0]["lease_owner"])  # anonymous clients see a pseudonym


def test_expansion_settings_belong_to_minimax_books_and_reach_is_the_default():
    from obook.book.library import BookSettings
    from obook.errors import ObookError

    assert BookSettings(algorithm="minimax", search=SMALL, seconds_per_move=0).validated().expansion == "reach"
    assert BookSettings(algorithm="minimax", expansion="cost").validated().expansion == "cost"
    for wrong, message in ((dict(algorithm="mvbm", expansion="reach"), "options of a minimax book"),
                           (dict(algorithm="mbm", play_playouts=300), "options of a minimax book"),
                           (dict(algorithm="minimax", expansion="wide"), "choose reach or cost"),
                           (dict(algorithm="minimax", play_playouts=-1), "must be positive")):
        with pytest.raises(ObookError, match=message):
            BookSettings(**wrong).validated()


def test_each_kind_of_book_settles_its_own_options():
    """The options one kind of book has and the other refuses are its kind's (``BookKind.options``,
    ``check_search``), for every algorithm: a minimax book's searches are uct, its depth is never
    capped and its expansion is reach unless given; a statistical book keeps its depth and refuses
    the minimax options; an unknown algorithm is an error naming the choices."""
    from obook.book.library import BookSettings
    from obook.errors import ObookError

    for algorithm in ("mbm", "mvbm", "beta"):
        settled = BookSettings(algorithm=algorithm, depth=12).validated()
        assert (settled.depth, settled.expansion, settled.seed_salt) == (12, "cost", 0)
        assert BookSettings(algorithm=algorithm, search="algorithm=flat").validated().search.startswith("algorithm=flat")
        with pytest.raises(ObookError, match="^--seed-salt is an option of a minimax book"):
            BookSettings(algorithm=algorithm, seed_salt=5).validated()
        with pytest.raises(ObookError, match="^--expansion and --play-playouts are options of a minimax book$"):
            BookSettings(algorithm=algorithm, expansion="cost").validated()
    settled = BookSettings(algorithm="minimax", depth=12, seed_salt=5).validated()
    assert (settled.depth, settled.expansion, settled.seed_salt) == (0, "reach", 5)
    with pytest.raises(ObookError, match="^search algorithm=flat: a minimax book's searches are uct$"):
        BookSettings(algorithm="minimax", search="algorithm=flat").validated()
    with pytest.raises(ObookError, match="^algorithm 'mcts': choose one of mbm, mvbm, beta, minimax$"):
        BookSettings(algorithm="mcts").validated()


def test_a_reach_book_records_its_reply_temperature_and_its_schedule_reads_it(store):
    """A new reach book's opponent model is tempered (``REPLY_TEMPERATURE`` unless given); a cost
    book's and a statistical book's have none to give; the book records it, says it in its engine
    line, and its schedule reads it (``book_constants``)."""
    from obook.book.expansion import book_constants
    from obook.book.keys import engine_line
    from obook.book.library import BookSettings, ensure_book
    from obook.book.minimax import REPLY_TEMPERATURE
    from obook.errors import ObookError

    assert BookSettings(algorithm="minimax").validated().reply_temperature == REPLY_TEMPERATURE == 0.5
    assert BookSettings(algorithm="minimax", reply_temperature=0.8).validated().reply_temperature == 0.8
    assert BookSettings(algorithm="minimax", expansion="cost").validated().reply_temperature == 1.0
    for wrong in (dict(algorithm="mvbm", reply_temperature=0.5), dict(algorithm="minimax", expansion="cost",
                                                                     reply_temperature=0.5)):
        with pytest.raises(ObookError, match="^--reply-temperature is an option of a minimax book grown by reach$"):
            BookSettings(**wrong).validated()
    with pytest.raises(ObookError, match="^reply temperature 0: must be in"):
        BookSettings(algorithm="minimax", reply_temperature=0.0).validated()
    book = ensure_book(store, "tempered", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=100",
                                                       seconds_per_move=0, reply_temperature=0.7))
    assert book.reply_temperature == 0.7 and engine_line(book).endswith("; reply temperature 0.7")
    assert book_constants(book).reply_temperature == 0.7
    assert book_constants(book, CONSTANTS).error_floor == CONSTANTS.error_floor
    with pytest.raises(ObookError, match="exists with reply_temperature=0.7, not 0.5"):
        ensure_book(store, "tempered", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=100",
                                                    seconds_per_move=0, reply_temperature=0.5),
                    explicit={"reply_temperature"})


def test_minimax_lookups_on_the_event_loop_answer_as_the_threads_do(store, store_url, compiled_engine):
    """On PostgreSQL a minimax book's uncached lookups run on the event loop (its node and its
    children's bounds read on the loop's own connections, issue 31 item 5); byte for byte the
    threads' answers (``_lookup_body``), which SQLite keeps."""
    from fastapi.testclient import TestClient

    from api.app import create_app
    from obook.book.library import lookup
    from obook.config import Settings

    book = minimax_book(store, name="loop")
    expand(store, book, 5)
    first = lookup(store, book, "").candidates[0].vertex
    questions = ["", first, f"{first} {lookup(store, book, first).candidates[0].vertex}" if lookup(
        store, book, first).candidates else first, "A1", "A1 B2"]
    with TestClient(create_app(store_url, Settings(api_cache_seconds=0, api_fresh_seconds=60))) as client:
        service = client.app.state.service
        client.get(f"/v1/books/{book.name}/lookup")  # reads the book and its generation (threads)
        answers = {}
        for moves in questions:
            answer = client.get(f"/v1/books/{book.name}/lookup", params={"moves": moves})
            assert answer.status_code == 200
            answers[moves] = answer.content
        if store_url.startswith("postgresql"):
            assert [pool.count for pool in service.async_reader._pools.values()] == [1]
        else:
            assert service.async_reader is None
        for moves in questions:
            _, _, body = service._lookup_body(book.name, tuple(moves.split()), 1)
            assert answers[moves] == body
    assert b'"in_book":true' in answers[""]
