"""Playing from a book: the usage rule in book, the search out of it, the record of book play, the
checks of the book's size, komi and engine version, GTP and match wiring."""

import io
import json
import re

import pytest

from obook import __version__
from obook.book.keys import ENGINE_VERSION, EngineMismatch, opening_statistics
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.book.player import BookPlayer, book_mismatch
from obook.go.board import BLACK, WHITE
from obook.gtp.engine import GTPEngine
from obook.gtp.match import parse_engine
from obook.go.position import Position
from obook.search.players import make_player
from obook.store.books import create_book
from obook.store.games import insert_finished_game

FLAT = "algorithm=flat,playouts=50,seed=5"


def seeded_book(url):
    store = open_book_store(url, create=True)
    book = ensure_book(store, "p", BookSettings(size=9, komi=7.5, algorithm="mvbm", depth=4))
    games = [(["E5", "G5", "G4"], "B")] * 3 + [(["C3", "E5"], "W"), (["E5", "C5", "C4"], "W")]
    with store.write() as conn:
        for moves, winner in games:
            stats = opening_statistics(9, 7.5, False, moves, winner, book.depth)
            insert_finished_game(conn, book.id, moves, "s" * len(moves), f"{winner}+1", winner, None, "seed", None,
                                   stats)
    return store, book


def test_a_statistical_book_gives_no_soft_priors(tmp_path):
    """The soft mode (the book's values as the search's prior visits) needs a book whose kind gives
    values (a minimax book's, ``BookKind.gives_priors``): a statistical book is refused at once, even
    under the uct search, rather than played as if it had none."""
    from obook.errors import ObookError

    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    with pytest.raises(ObookError, match="^--book-soft needs a minimax book and the uct search in one process$"):
        BookPlayer(make_player("playouts=64"), url, "p", soft_visits=10)
    assert BookPlayer(make_player("playouts=64"), url, "p").soft_visits == 0


def test_usage_rule_in_book_and_search_outside(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    player = BookPlayer(make_player("playouts=64"), url, "p")
    assert player.opening_book() is player  # what GTP asks for the record of book moves
    first = player.genmove(Position(size=9, komi=7.5))
    assert first.playouts == 0
    assert Position().vertex(first.move) == "E5"  # 3 of 4 games won by Black
    assert [m.visits for m in first.moves][:1] == [4]
    reply = player.genmove(Position.from_moves(["E5"]))
    # G5 and C5 are one move after E5 (mirror images): 4 games, 1 win for White
    assert reply.playouts == 0 and Position().vertex(reply.move) in ("C5", "G5", "E3", "E7")
    out = player.genmove(Position.from_moves(["D4"]))
    assert out.playouts > 0  # not in the book: the search played
    strict = BookPlayer(make_player("playouts=64"), url, "p", min_games=5)
    assert strict.genmove(Position()).playouts > 0
    other_komi = BookPlayer(make_player("playouts=64"), url, "p")
    assert other_komi.genmove(Position(size=9, komi=6.5)).playouts > 0


def test_gtp_engine_plays_and_analyses_from_the_book(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    engine = GTPEngine("playouts=64", player=BookPlayer(make_player("playouts=64"), url, "p"))
    assert engine.handle("version").strip() == f"= {__version__} with book 'p' (9x9 komi 7.5)"
    assert engine.handle("genmove b").strip() == "= E5"
    answer = engine.handle("reg_genmove w")
    assert answer.strip().split()[-1] in ("C5", "G5", "E3", "E7")
    analysis = engine.handle("kata-analyze w 10").split("\n")  # the book's figures, in KataGo's format
    assert analysis[0] == "=" and analysis[1].startswith("info move ") and " winrate " in analysis[1]
    assert " scoreMean " not in analysis[1]  # the book keeps no scores: none is made up
    for visits, winrate, lcb in re.findall(r"visits (\d+) .*?winrate (\S+) .*?lcb (\S+)",
                                           analysis[1].replace("info", "\ninfo")):
        games, rate = int(visits), float(winrate)  # games as visits: the lower bound is their standard error's
        expected = 0.0 if games < 2 else max(rate - 1.96 * (rate * (1 - rate) / games) ** 0.5, 0.0)
        assert float(lcb) == pytest.approx(expected, abs=1e-5)


def test_match_passes_book_options_to_obook_gtp():
    spec = parse_engine("obook:playouts=100,book=main,book_db=sqlite:///x.db,book_min_games=3")
    assert spec.config.playouts == 100
    argv = spec.argv
    assert argv[argv.index("--book") + 1] == "main"
    assert argv[argv.index("--book-db") + 1] == "sqlite:///x.db"
    assert argv[argv.index("--book-min-games") + 1] == "3"
    chosen = parse_engine("obook:playouts=100,book=main,book_choice=search").argv
    assert chosen[chosen.index("--book-choice") + 1] == "search" and "book_choice" not in chosen[chosen.index("--config") + 1]


def test_the_record_counts_book_moves_and_the_ply_each_colour_left_the_book(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    player = BookPlayer(make_player(FLAT), url, "p")
    position = Position(size=9, komi=7.5)
    lines = []
    for ply in range(1, 7):  # the player moves for both colours
        color = position.to_move
        result = player.genmove(position)
        lines.append(player.record_move(color, ply, result))
        position.play(result.move, color)
    # E5, its reply and the third move are in the book (depth 4, but nothing past E5 G5 G4)
    assert [m for m in lines if m] == ["book: white left the book 'p' at ply 4 after 1 book move",
                                       "book: black left the book 'p' at ply 5 after 2 book moves"]
    assert player.game[BLACK].to_dict() == {"book_moves": 2, "left_at": 5}
    assert player.game[WHITE].to_dict() == {"book_moves": 1, "left_at": 4}
    assert player.book_moves == 3
    summary = player.begin_game()
    assert summary == ("book 'p' this game: black 2 book moves, left the book at ply 5; "
                       "white 1 book move, left the book at ply 4")
    assert player.game[BLACK].to_dict() == {"book_moves": 0, "left_at": None}
    assert player.begin_game() is None  # a game without moves has nothing to say
    result = player.genmove(Position(size=9, komi=7.5))
    assert player.record_move(BLACK, 1, result) is None  # a book move, never left
    assert player.game_summary() == "book 'p' this game: black 1 book move, never left the book"


def test_a_book_is_used_only_at_its_size_komi_and_engine_version(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    _, book = seeded_book(url)
    assert book.engine_version == ENGINE_VERSION
    assert book_mismatch(book, 9, 7.5) is None
    assert book_mismatch(book, 19, 6.5) == "book 'p' is for 9x9 komi 7.5; this game is 19x19 komi 6.5"
    assert book_mismatch(book, 9, 7, where="this match") == "book 'p' is for 9x9 komi 7.5; this match is 9x9 komi 7"
    stale_book(url)
    with pytest.raises(EngineMismatch, match=f"book 'stale' was made by engine version area-ko-0/zobrist-0; this "
                                             f"obook is {ENGINE_VERSION}, whose position keys do not match"):
        BookPlayer(make_player(FLAT), url, "stale")  # refused when opened (tests/book/test_engine_version.py)


def stale_book(url):
    """A copy of book 'p' with the same statistics, marked as made by another engine version."""
    store = open_book_store(url)
    with store.write() as conn:
        book = create_book(conn, name="stale", size=9, komi=7.5, rules="chinese", algorithm="mvbm", threshold=0.1,
                           search="", seconds_per_move=1.0, depth=4, widening=0.0, engine_version="area-ko-0/zobrist-0")
        stats = opening_statistics(9, 7.5, False, ["E5", "G5"], "B", 4)
        insert_finished_game(conn, book.id, ["E5", "G5"], "ss", "B+1", "B", None, "seed", None, stats)
    return book


def test_gtp_engine_reports_book_play_on_stderr_and_to_obook_book_stats(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    log = io.StringIO()
    engine = GTPEngine(FLAT, log=log, player=BookPlayer(make_player(FLAT), url, "p"))
    assert log.getvalue() == ""  # 9x9 komi 7.5: the book's game
    assert engine.handle("known_command obook-book_stats").strip() == "= true"
    engine.handle("lz-analyze b 10")  # analysis shows the book but plays nothing
    for color in "bwbwb":
        assert engine.handle(f"genmove {color}").startswith("= ")
    book_lines = [line for line in log.getvalue().splitlines() if line.startswith("book")]
    assert book_lines == ["book: white left the book 'p' at ply 4 after 1 book move",
                          "book: black left the book 'p' at ply 5 after 2 book moves"]
    stats = json.loads(engine.handle("obook-book_stats")[2:])
    assert stats == {"book": "p", "black": {"book_moves": 2, "left_at": 5}, "white": {"book_moves": 1, "left_at": 4}}
    log.seek(0), log.truncate()
    engine.handle("clear_board")
    assert log.getvalue().splitlines() == ["book 'p' this game: black 2 book moves, left the book at ply 5; "
                                           "white 1 book move, left the book at ply 4"]
    assert json.loads(engine.handle("obook-book_stats")[2:])["black"] == {"book_moves": 0, "left_at": None}


def test_gtp_engine_says_once_why_the_book_is_not_used(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    log = io.StringIO()
    engine = GTPEngine(FLAT, log=log, player=BookPlayer(make_player(FLAT), url, "p"))
    for command in ("boardsize 19", "clear_board", "komi 7.5", "komi 6.5", "boardsize 19", "komi 6.5"):
        assert engine.handle(command).strip() == "="
    assert log.getvalue().splitlines() == [  # Sabaki's new game, twice
        "book 'p' is for 9x9 komi 7.5; this game is 19x19 komi 7.5: the book will not be used",
        "book 'p' is for 9x9 komi 7.5; this game is 19x19 komi 6.5: the book will not be used",
    ]
    log.seek(0), log.truncate()
    engine.handle("boardsize 9"), engine.handle("komi 7.5")
    assert log.getvalue().splitlines() == [
        "book 'p' is for 9x9 komi 7.5; this game is 9x9 komi 6.5: the book will not be used",
        "book 'p' (9x9 komi 7.5) will be used",
    ]
    assert engine.handle("genmove b").strip() == "= E5"
