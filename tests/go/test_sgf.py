from pathlib import Path

import pytest

from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.sgf import SgfError, game_to_sgf, load_position, read_sgf, save_sgf

GO9 = Path("data") / "go9"


def test_every_shared_record_loads_and_replays(shared_dir):
    files = sorted((shared_dir / GO9).rglob("*.sgf"))
    assert len(files) > 600
    failures = {}
    moves = 0
    for path in files:
        try:
            record = read_sgf(path)
        except SgfError as exc:
            failures[path.name] = str(exc)
            continue
        assert record.position.size == 9
        assert len(record.position.moves) == record.total_moves
        moves += record.total_moves
    assert failures == {}
    assert moves > 30000


def test_the_same_game_in_two_dialects_gives_the_same_moves(shared_dir):
    for number in range(1, 7):
        brouwer = read_sgf(shared_dir / GO9 / "aeb9x9" / "computer" / f"CC{number}.sgf").position
        fuego = read_sgf(shared_dir / GO9 / "fuego-regression" / "2012" / "2012-11-25-zen-vs-pro" / f"{number}.sgf").position
        assert brouwer.moves == fuego.moves
        assert brouwer.to_ascii() == fuego.to_ascii()


def test_setup_stones_player_to_move_and_latin1_names(shared_dir):
    record = read_sgf(shared_dir / GO9 / "fuego-regression" / "2008" / "CGOS" / "seki-miseval-20081113151939.sgf")
    position = record.position
    assert len(position.setup_black) == 26 and len(position.setup_white) == 27
    assert position.first_to_move == WHITE and position.moves[0] == (WHITE, position.point("G9"))
    assert position.komi == 7.5
    latin1 = read_sgf(shared_dir / GO9 / "fuego-regression" / "2010" / "LittleGolem" / "1177582.sgf")
    assert latin1.white == "Jan Hrab\u00e1nek" or latin1.black == "Jan Hrab\u00e1nek"


def test_loading_only_the_first_moves(shared_dir):
    path = shared_dir / GO9 / "aeb9x9" / "computer" / "CC1.sgf"
    full = read_sgf(path)
    part = read_sgf(path, moves=10)
    assert len(part.position.moves) == 10
    assert part.position.moves == full.position.moves[:10]
    assert len(read_sgf(path, moves=10_000).position.moves) == full.total_moves


def played_game() -> Position:
    position = Position(size=7, komi=6.5)
    position.play_moves("D4 C4 C5 B5 C3 B4 D5 pass B3 A3 pass A4")
    return position


def test_round_trip_keeps_moves_passes_komi_result_names_and_comments():
    position = played_game()
    text = game_to_sgf(position, black="obook", white="GNU Go 3.8", result="B+2.5",
                       comments={1: "tengen", 8: "a pass"}, game_comment="test game")
    record = read_sgf(text.encode())
    assert record.position.moves == position.moves
    assert record.position.to_ascii() == position.to_ascii()
    assert (record.position.size, record.position.komi) == (7, 6.5)
    assert (record.black, record.white, record.result) == ("obook", "GNU Go 3.8", "B+2.5")
    assert record.comments == {1: "tengen", 8: "a pass"}
    assert (WHITE, PASS) in record.position.moves
    assert "W[]" in text and "RU[Chinese]" in text


def test_round_trip_of_handicap_and_setup_positions(tmp_path):
    handicap = Position(size=9, komi=0.5)
    handicap.place_handicap([handicap.point(v) for v in ("C3", "G7", "C7")])
    handicap.play("E5")
    path = save_sgf(tmp_path / "handicap.sgf", handicap, black="b", white="w")
    record = read_sgf(path)
    assert record.handicap == 3
    assert sorted(record.position.setup_black) == sorted(handicap.setup_black)
    assert record.position.moves == [(WHITE, handicap.point("E5"))]
    diagram = Position.from_ascii(
        """
        . X O . .
        X X O . .
        . X O . .
        X X O O O
        . . . . .
        """,
        to_move="W",
    )
    again = read_sgf(game_to_sgf(diagram).encode()).position
    assert again.to_ascii() == diagram.to_ascii() and again.to_move == WHITE


@pytest.mark.parametrize(
    "data, message",
    [
        (b"this is not sgf", "not a valid SGF"),
        (b"(;GM[2]SZ[8])", "not a Go record"),
        (b"(;SZ[25];B[aa])", "board size 25"),
        (b"(;SZ[9]KM[seven])", "komi"),
        (b"(;SZ[9];B[ee];W[ee])", "move 2: illegal move W E5: the point is occupied"),
        (b"(;SZ[9];B[ee];W[dd];AB[cc])", "setup stones (AB/AW/AE) after move 2"),
        (b"(;SZ[9];B[zz])", "malformed property"),
        (b"(;SZ[5]AB[aa]AW[ab][ba])", "bad setup position"),
    ],
)
def test_bad_records_fail_with_a_clear_error(data, message):
    with pytest.raises(SgfError) as caught:
        read_sgf(data)
    assert message in str(caught.value)


def test_missing_file_and_negative_move_count(tmp_path):
    with pytest.raises(SgfError, match="cannot read"):
        load_position(tmp_path / "absent.sgf")
    with pytest.raises(SgfError, match="must not be negative"):
        read_sgf(b"(;SZ[9];B[ee])", moves=-1)


def test_missing_komi_takes_the_default_and_first_white_move_is_kept():
    record = read_sgf(b"(;SZ[9];W[ee];B[dd])", default_komi=6.5)
    assert record.position.komi == 6.5
    assert record.position.moves[0][0] == WHITE and record.position.moves[1][0] == BLACK
