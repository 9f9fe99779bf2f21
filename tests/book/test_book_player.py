"""Playing from a book: the usage rule in book, the search out of it, GTP and match wiring."""

from obook.book.keys import opening_statistics
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.book.player import BookPlayer
from obook.gtp.engine import GTPEngine
from obook.gtp.match import parse_engine
from obook.go.position import Position
from obook.search.players import make_player
from obook.store.games import insert_finished_game


def seeded_book(url):
    store = open_book_store(url, create=True)
    book = ensure_book(store, "p", BookSettings(size=9, komi=7.5, depth=4))
    games = [(["E5", "G5", "G4"], "B")] * 3 + [(["C3", "E5"], "W"), (["E5", "C5", "C4"], "W")]
    with store.write() as conn:
        for moves, winner in games:
            stats = opening_statistics(9, 7.5, False, moves, winner, book.depth)
            insert_finished_game(conn, book.id, moves, "s" * len(moves), f"{winner}+1", winner, None, "seed", None,
                                   stats)
    return store, book


def test_usage_rule_in_book_and_search_outside(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    player = BookPlayer(make_player("playouts=64"), url, "p")
    first = player.genmove(Position(size=9, komi=7.5))
    assert first.playouts == 0
    assert Position().vertex(first.move) == "E5"  # 3 of 4 games won by Black
    assert [m.visits for m in first.moves][:1] == [4]
    reply = player.genmove(Position.from_moves(["E5"]))
    # G5 and C5 are one move after E5 (mirror images): 4 games, 1 win for White
    assert reply.playouts == 0 and Position().vertex(reply.move) in ("C5", "G5", "E3", "E7")
    out = player.genmove(Position.from_moves(["D4"]))
    assert out.playouts > 0  # not in the book: the search played
    assert player.book_moves == 2
    strict = BookPlayer(make_player("playouts=64"), url, "p", min_games=5)
    assert strict.genmove(Position()).playouts > 0
    other_komi = BookPlayer(make_player("playouts=64"), url, "p")
    assert other_komi.genmove(Position(size=9, komi=6.5)).playouts > 0


def test_gtp_engine_plays_and_analyses_from_the_book(tmp_path):
    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    engine = GTPEngine("playouts=64", player=BookPlayer(make_player("playouts=64"), url, "p"))
    assert engine.handle("genmove b").strip() == "= E5"
    answer = engine.handle("reg_genmove w")
    assert answer.strip().split()[-1] in ("C5", "G5", "E3", "E7")


def test_match_passes_book_options_to_obook_gtp():
    spec = parse_engine("obook:playouts=100,book=main,book_db=sqlite:///x.db,book_min_games=3")
    assert spec.config.playouts == 100
    argv = spec.argv
    assert argv[argv.index("--book") + 1] == "main"
    assert argv[argv.index("--book-db") + 1] == "sqlite:///x.db"
    assert argv[argv.index("--book-min-games") + 1] == "3"
