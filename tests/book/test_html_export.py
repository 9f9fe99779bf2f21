"""The offline book browser (``obook export --html``): the data files hold each position the book's
moves reach once, under its canonical key, with the figures ``obook lookup`` gives; a book move's
link turns the position it leads to into the orientation the move reaches; and a real Chromium
opening ``file://.../index.html`` shows, after a click on a book move, the lookup's figures."""

from __future__ import annotations

import json
import os
from collections import deque
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from obook.book.kinds import book_kind
from obook.book.library import lookup, open_book_store
from obook.book.lookup import replay_moves, score_as_result
from obook.go.board import PASS
from obook.go.symmetry import symmetry_maps
from obook.go.vertex import format_vertex, parse_vertex
from obook.store.migrate import upgrade
from tests.api.test_dashboard_browser import chromium  # noqa: F401  (the fixture: Debian's Chromium)
from tests.book.test_book_cli import run_cli
from tests.book.test_book_store import add_game, new_book
from tests.book.test_minimax import expand, minimax_book

SCREENSHOT = os.environ.get("OBOOK_BOOK_BROWSER_SCREENSHOT")  # e.g. docs/book-browser.png
CONSTANTS = ("book", "size", "algorithm")

# Lines with a transposition (C3 E5 G7 = G7 E5 C3) and symmetric copies (C5 and E3 after E5; C3 and G7
# on the empty board): the export holds their positions once.
GAMES = [(["E5", "C5", "G5", "D3"], "B"), (["E5", "E3", "E7"], "W"), (["E5", "C5", "D6"], "W"),
         (["C3", "E5", "G7", "E3"], "B"), (["G7", "E5", "C3", "E3"], "W"), (["G7", "C7"], "B")]


def read_export(directory: Path) -> tuple[dict, list[dict]]:
    """The header and the positions of an export, from its script files."""
    header = None
    positions: list[dict] = []
    for line in (directory / "data" / "book.js").read_text().splitlines():
        if line.startswith("OBOOK.load("):
            header = json.loads(line[len("OBOOK.load("):-2])
    files = sorted((directory / "data").glob("positions-*.js"), key=lambda p: int(p.stem.split("-")[1]))
    for path in files:
        text = path.read_text()
        assert text.startswith("OBOOK.add(") and text.endswith(");\n")
        positions.extend(json.loads(text[len("OBOOK.add("):-3]))
    index = (directory / "index.html").read_text()
    assert all(f'src="data/{p.name}"' in index for p in files), "index.html loads every data file"
    return header, positions


def expected_document(store, book, moves) -> dict:
    kind = book_kind(book)
    document = kind.document(lookup(store, book, list(moves)))
    return {k: v for k, v in document.items() if k not in CONSTANTS}


def shown(size: int, vertex: str, symmetry: int) -> str:
    point = parse_vertex(vertex, size)
    return vertex if point == PASS else format_vertex(int(symmetry_maps(size)[symmetry][point]), size)


def reachable_keys(store, book, min_games: int = 1) -> set[int]:
    """The canonical keys of the positions the book's moves reach from the empty board, walked here
    from the lookups alone."""
    kind = book_kind(book)
    seen, queue = set(), deque([[]])
    while queue:
        moves = queue.popleft()
        key = replay_moves(book.size, book.superko, moves).key
        if key in seen:
            continue
        seen.add(key)
        document = kind.document(lookup(store, book, moves, min_games))
        for c in document["candidates"]:
            if c.get("games", min_games) >= min_games and (book.depth <= 0 or len(moves) < book.depth):
                queue.append([*moves, c["move"]])
    return seen


def check_export(store, book, directory: Path, min_games: int = 1) -> list[dict]:
    header, positions = read_export(directory)
    assert header["book"] == book.name and header["size"] == book.size and header["kind"] == book_kind(book).name
    assert [p["id"] for p in positions] == list(range(len(positions))) == list(range(header["positions"]))
    keys = [int(p["key"], 16) for p in positions]
    assert len(set(keys)) == len(keys), "a position is written once"
    assert set(keys) == reachable_keys(store, book, min_games)
    links = 0
    for position in positions:
        doc = position["doc"]
        replayed = replay_moves(book.size, book.superko, doc["moves"])
        assert replayed.key == int(position["key"], 16)
        assert doc == expected_document(store, book, doc["moves"])  # the lookup's figures, as obook lookup gives them
        for candidate, link in zip(doc["candidates"], position["next"], strict=True):
            if link is None:
                assert candidate.get("games", min_games) < min_games
                continue
            links += 1
            target, symmetry = link
            child = positions[target]
            line = [*doc["moves"], candidate["move"]]
            assert int(child["key"], 16) == replay_moves(book.size, book.superko, line).key
            # the page's turn: the child's stored moves through the link's symmetry are the moves the
            # lookup gives in the line the reader followed
            reached = expected_document(store, book, line)
            assert [shown(book.size, c["move"], symmetry) for c in child["doc"]["candidates"]] == \
                [c["move"] for c in reached["candidates"]]
    assert links == header["book_moves"]
    return positions


def test_a_statistical_books_export_holds_each_position_once_with_the_lookups_figures(store, tmp_path):
    book = new_book(store, size=9)
    for moves, winner in GAMES:
        add_game(store, book, moves, winner)
    done = book_kind(book).export_html(store, book, tmp_path / "all")
    positions = check_export(store, book, tmp_path / "all")
    assert done.positions == len(positions) and not done.truncated
    # 14 (position, move) pairs of the games, merged: E5 C5 and E5 E3 are one line, C3 E5 G7 and G7 E5 C3 one
    root = positions[0]["doc"]
    assert root["moves"] == [] and [c["games"] for c in root["candidates"]] == [3, 3]
    lines = {" ".join(p["doc"]["moves"]) for p in positions}
    assert not ({"E5 C5", "E5 E3"} <= lines) and not ({"C3 E5 G7", "G7 E5 C3"} <= lines)
    assert len(positions) == 11  # the empty board, E5, E5 C5, E5 C5 G5, E5 C5 G5 D3, E5 C5 D6, C3, C3 E5,
    #                              C3 E5 G7, C3 E5 G7 E3 and G7 C7 (G7 is C3's mirror: the same position)

    cut = book_kind(book).export_html(store, book, tmp_path / "cut", max_positions=4)
    _, kept = read_export(tmp_path / "cut")
    assert cut.truncated and len(kept) == 4
    assert all(link is None or link[0] < 4 for p in kept for link in p["next"])

    book_kind(book).export_html(store, book, tmp_path / "two", min_games=2)
    fewer = check_export(store, book, tmp_path / "two", min_games=2)
    assert len(fewer) < len(positions)


def test_a_minimax_books_export_holds_each_node_once_with_the_lookups_figures(store, tmp_path, compiled_engine):
    book = minimax_book(store)
    expand(store, book, 6)
    done = book_kind(book).export_html(store, book, tmp_path / "mm")
    positions = check_export(store, book, tmp_path / "mm")
    from obook.store.minimax import node_count

    with store.read() as conn:
        assert len(positions) == done.positions == node_count(conn, book.id)
    root = positions[0]["doc"]
    assert root["in_book"] and root["candidates"] and root["usage_move"] is not None
    assert {"value", "lcb", "ucb", "own_move", "own_value", "own_visits"} <= set(root)
    assert {"value", "lcb", "ucb", "prior", "visits", "score_mean", "backed_up_score", "usage"} <= set(
        root["candidates"][0])
    # each book move's score is the one the back-up stored for the position it reaches, as a result
    for p in positions:
        for c in p["doc"]["candidates"]:
            assert c["backed_up_result"] is not None
            assert c["backed_up_result"] == score_as_result(c["backed_up_score"], p["doc"]["to_move"] == "B")


def test_the_cli_writes_a_browser_and_refuses_a_directory_in_use(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    upgrade(url)
    store = open_book_store(url)
    book = new_book(store, size=9)
    for moves, winner in GAMES:
        add_game(store, book, moves, winner)
    out = tmp_path / "html"
    code, printed, err = run_cli(capsys, "export", "--db", url, "--book", "b", "--html", str(out))
    assert code == 0, err
    assert "11 positions" in printed and (out / "index.html").exists() and (out / "browser.js").exists()

    code, _, err = run_cli(capsys, "export", "--db", url, "--book", "b", "--html", str(out))
    assert code == 2 and "is not empty" in err and "--force" in err
    (out / "data" / "positions-7.js").write_text("stale")
    code, _, err = run_cli(capsys, "export", "--db", url, "--book", "b", "--html", str(out), "--force")
    assert code == 0, err
    assert not (out / "data" / "positions-7.js").exists(), "--force leaves no stale data file"
    check_export(store, book, out)
    code, _, err = run_cli(capsys, "export", "--db", url, "--book", "nope", "--html", str(tmp_path / "other"))
    assert code == 2 and "no book named 'nope'" in err
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(capsys, "export", "--db", url, "--book", "b", "--html", str(tmp_path / "file"))
    assert code == 2 and "not a directory" in err


# ---- in a browser ------------------------------------------------------------------------------------


def cell_texts(page, move: str) -> dict[str, str]:
    return page.eval_on_selector_all(f"#moves tr[data-move='{move}'] td[data-field]",
                                     "tds => Object.fromEntries(tds.map(td => [td.dataset.field, td.textContent]))")


def fixed(x: float) -> str:
    """JavaScript's ``x.toFixed(1)``: the exact binary value rounded half away from zero, -0 as 0."""
    return format(Decimal(x if x != 0 else 0.0).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP), "f")


def pct(x) -> str:
    return "–" if x is None else f"{fixed(100 * x)}%"


def signed(x) -> str:
    return "–" if x is None else ("" if fixed(x).startswith("-") else "+") + fixed(x)


def assert_page_shows(page, store, book, moves: list[str]) -> dict:
    """The page's table and figures are the lookup's after ``moves`` (in the line's orientation)."""
    page.wait_for_function(f"document.body.dataset.line === {','.join(moves)!r}")
    expected = expected_document(store, book, moves)
    rows = page.eval_on_selector_all("#moves tr[data-move]", "trs => trs.map(tr => tr.dataset.move)")
    assert rows == [c["move"] for c in expected["candidates"]]
    assert page.get_attribute("body", "data-position") == f"{replay_moves(book.size, book.superko, moves).key:016x}"
    for c in expected["candidates"]:
        cells = cell_texts(page, c["move"])
        if "value" in c:
            score = signed(c["score_mean"])
            assert cells == {"move": c["move"], "value": pct(c["value"]), "lcb": pct(c["lcb"]), "ucb": pct(c["ucb"]),
                             "visits": str(c["visits"]), "prior": pct(c["prior"]),
                             "backed_up_result": c["backed_up_result"] or "–", "score_mean": score}
        else:
            assert cells["games"] == str(c["games"]) and cells["wins"] == str(c["wins"])
            assert cells["winrate"] == pct(c["winrate"]) and cells["share"] == pct(c["share"])
    figure = lambda field: page.text_content(f"#figures dd[data-field='{field}']")  # noqa: E731
    assert figure("usage_move") == (expected["usage_move"] or "–")
    if "own_move" in expected:
        assert figure("value") == pct(expected["value"]) and figure("own_move") == (expected["own_move"] or "–")
        assert figure("own_value") == pct(expected["own_value"])
    return expected


def test_the_browser_opens_from_the_file_system_and_shows_the_lookups_figures(chromium, tmp_path,  # noqa: F811
                                                                                  compiled_engine):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    upgrade(url)
    store = open_book_store(url)
    book = minimax_book(store, size=7, expansion="reach", play_playouts=30)
    expand(store, book, 8)
    out = tmp_path / "mm-html"
    book_kind(book).export_html(store, book, out)
    page = chromium.new_page(viewport={"width": 1200, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto((out / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    root = assert_page_shows(page, store, book, [])

    # a click on the book's move on the board goes one move deeper: the URL keeps the line
    first = root["usage_move"]
    page.click(f"svg.board g.candidate[data-move='{first}']")
    deeper = assert_page_shows(page, store, book, [first])
    assert page.evaluate("location.hash") == f"#{first}"
    assert page.locator("svg.board circle.stone").count() == 1
    if deeper["candidates"]:
        second = deeper["candidates"][-1]["move"]
        page.click(f"#moves tr[data-move='{second}']")
        assert_page_shows(page, store, book, [first, second])
        assert page.locator("svg.board circle.stone").count() == 2
    page.click("#back")
    assert_page_shows(page, store, book, [first])

    # a link opens its position
    link = page.evaluate("location.href")
    other = chromium.new_page()
    other.goto(link)
    assert_page_shows(other, store, book, [first])
    other.close()
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT)
    assert not errors, errors
    page.close()


def test_the_browser_shows_a_symmetric_line_in_its_own_orientation(chromium, tmp_path):  # noqa: F811
    url = f"sqlite:///{tmp_path / 'b.db'}"
    upgrade(url)
    store = open_book_store(url)
    book = new_book(store, size=9)
    for moves, winner in GAMES:
        add_game(store, book, moves, winner)
    out = tmp_path / "html"
    book_kind(book).export_html(store, book, out)
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # E5 E3 is stored as E5 C5 (turned): the page shows E7 and F4 (D4's mirror image: the position is
    # symmetric) where the stored line has G5 and D6
    page.goto((out / "index.html").as_uri() + "#E5,E3")
    page.wait_for_selector("body[data-ready='1']")
    shown_line = assert_page_shows(page, store, book, ["E5", "E3"])
    assert sorted(c["move"] for c in shown_line["candidates"]) == ["E7", "F4"]
    page.click("svg.board g.candidate[data-move='E7']")
    assert_page_shows(page, store, book, ["E5", "E3", "E7"])
    page.click("#line button[data-ply='0']")
    assert_page_shows(page, store, book, [])
    # the transposition: G7 E5 C3 reached from either side, and a line that leaves the book stops where it does
    page.goto((out / "index.html").as_uri() + "#G7,E5,C3,A1")
    assert_page_shows(page, store, book, ["G7", "E5", "C3"])
    assert "A1 (move 4) is not a book move" in page.text_content("#notice")
    # every position, by every symmetric image of its line: the page answers as the lookup does
    _, positions = read_export(out)
    for position in positions:
        for symmetry in range(8):
            line = [shown(book.size, v, symmetry) for v in position["doc"]["moves"]]
            page.evaluate(f"location.hash = {'#' + ','.join(line)!r}")
            assert_page_shows(page, store, book, line)
    assert not errors, errors
    page.close()
