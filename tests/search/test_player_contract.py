"""What every player promises (``obook/search/player.py``): ``reseed`` replays a resumed game, a
cancel token stops a search with its best result so far, one budget rule, the root's children
know positional superko, and each player says which root controls it takes."""

import pytest

from obook.go.board import PASS
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.player import ROOT_MOVES, ROOT_PRIORS, UNLIMITED_PLAYOUTS, CancelToken, MoveBudget
from obook.search.players import make_player
from obook.search.tree import NODE_BYTES, ROOT, new_tree
from tests.go.test_rules import TRIPLE_KO, TRIPLE_KO_CYCLE

# uct without tree reuse: a fresh player cannot have the tree an uninterrupted one carried over.
RESUMABLE = [
    "algorithm=uct,reuse_tree=off,playouts=300",
    "algorithm=flat,playouts=300",
    "algorithm=pp,playouts=600,min_games=10",
    "algorithm=amaf,playouts=300",
    "algorithm=depth2,playouts=700",
    "algorithm=random",
    "algorithm=flat,playouts=300,processes=2",
    "algorithm=uct,reuse_tree=off,playouts=300,processes=2",
]


def play_moves(player, position, count, game_seed):
    """Play ``count`` moves seeding each search the way the book's self-play does."""
    from obook.book.selfplay import move_seed

    for _ in range(count):
        player.reseed(move_seed(game_seed, len(position.moves)))
        position.play(player.genmove(position).move)


@pytest.mark.parametrize("spec", RESUMABLE)
def test_a_resumed_game_replays_with_a_fresh_reseeded_player(spec):
    config = SearchConfig.from_spec(spec, policy="light")  # seed 0: each player's own seed is from the clock
    whole = Position(size=5, komi=0.5)
    player = make_player(config)
    try:
        play_moves(player, whole, 4, game_seed=2024)
    finally:
        player.close()
    resumed = Position(size=5, komi=0.5)
    first, second = make_player(config), make_player(config)
    try:
        play_moves(first, resumed, 2, game_seed=2024)
        play_moves(second, resumed, 2, game_seed=2024)  # "first" died; "second" resumes the game
    finally:
        first.close()
        second.close()
    assert resumed.moves == whole.moves


@pytest.mark.parametrize("spec", ["playouts=200000", "algorithm=flat,playouts=200000", "algorithm=amaf,playouts=200000",
                                  "algorithm=depth2,playouts=200000"])
def test_a_cancelled_search_returns_its_best_result_so_far(spec):
    position = Position(size=5, komi=0.5)
    cancel = CancelToken()
    reports = []

    def report(result):
        reports.append(result)
        cancel.cancel()

    result = make_player(spec + ",policy=light,seed=1").genmove(position, on_progress=report, progress_interval=0.0,
                                                                cancel=cancel)
    assert len(reports) == 1 and cancel.cancelled
    assert 0 < result.playouts < 200000
    assert result.move == PASS or position.is_legal(result.move)


def test_a_token_can_share_an_event():
    import threading

    event = threading.Event()
    token = CancelToken(event)
    assert not token.cancelled
    event.set()
    assert token.cancelled


def test_the_budget_is_decided_in_one_place():
    playouts = SearchConfig(playouts=500)
    timed = SearchConfig(seconds=2.0)
    assert MoveBudget.resolve(playouts) == MoveBudget(None, 500)
    assert MoveBudget.resolve(timed) == MoveBudget(2.0, UNLIMITED_PLAYOUTS)
    assert MoveBudget.resolve(playouts, seconds=1.0) == MoveBudget(1.0, UNLIMITED_PLAYOUTS)
    assert MoveBudget.resolve(timed, playouts=30) == MoveBudget(None, 30)
    # Under a game clock the configured playouts still cap a playout-budget configuration.
    assert MoveBudget.for_clock(playouts, 3.0) == MoveBudget(3.0, 500)
    assert MoveBudget.for_clock(timed, 3.0) == MoveBudget(3.0, UNLIMITED_PLAYOUTS)
    assert MoveBudget.for_clock(playouts, None) == MoveBudget(None, 500)
    assert make_player(playouts).budget(None, None) == MoveBudget(None, 500)


EVERY_PLAYER = ["algorithm=uct", "algorithm=uct,processes=2", "algorithm=flat", "algorithm=flat,processes=2",
                "algorithm=pp", "algorithm=amaf", "algorithm=depth2", "algorithm=random"]


@pytest.mark.parametrize("spec", EVERY_PLAYER)
def test_every_player_answers_which_root_controls_it_takes_and_honours_them(spec):
    position = Position(size=5, komi=0.5)
    b2, c3 = position.point("B2"), position.point("C3")
    player = make_player(spec + ",playouts=300,policy=light,seed=1")
    try:
        assert player.opening_book() is None  # a search plays no book (BookPlayer answers itself)
        controls = player.root_controls
        assert isinstance(controls, frozenset) and controls <= {ROOT_MOVES, ROOT_PRIORS}
        if ROOT_MOVES in controls:
            result = player.genmove(position, root_moves=lambda point: point in (b2, c3))
            assert result.move in (b2, c3) and {s.point for s in result.moves} <= {b2, c3, PASS}
            player.new_game()
        else:
            with pytest.raises(TypeError):
                player.genmove(position, root_moves=lambda point: True)
        if ROOT_PRIORS in controls:
            result = player.genmove(position, root_priors={b2: (1000.0, 0.99)})
            assert next(s for s in result.moves if s.point == b2).prior >= 990.0
        else:
            with pytest.raises(TypeError):
                player.genmove(position, root_priors={b2: (1000.0, 0.99)})
    finally:
        player.close()


def test_the_tree_search_takes_both_root_controls():
    assert make_player("algorithm=uct").root_controls == {ROOT_MOVES, ROOT_PRIORS}


def triple_ko(superko):
    """Five moves into a triple ko: White's G8 would repeat the starting position."""
    position = Position.from_ascii(TRIPLE_KO, to_move="B", superko=superko)
    for move in TRIPLE_KO_CYCLE[:-1]:
        position.play(move)
    return position


def root_moves(player):
    tree = player.tree
    root = int(tree.meta[ROOT])
    first = int(tree.first_child[root])
    return {int(tree.move[c]) for c in range(first, first + int(tree.n_children[root]))}


def test_the_root_leaves_out_what_positional_superko_forbids():
    position = triple_ko(superko=True)
    g8 = position.point("G8")
    assert position.is_legal("E5") and not position.is_legal(g8)
    player = make_player("playouts=300,seed=1")
    result = player.genmove(position)
    assert g8 not in root_moves(player) and result.move != g8
    assert set(root_moves(player)) - {PASS} <= set(position.legal_moves())
    plain = make_player("playouts=300,seed=1")
    simple = triple_ko(superko=False)
    assert simple.is_legal(g8)  # simple ko alone allows it, and the game would cycle: the search does not
    assert plain.genmove(simple).move != g8 and g8 not in root_moves(plain)
    fresh = Position.from_ascii(simple.to_ascii(coordinates=False), to_move="BW"[simple.to_move - 1])
    plain.genmove(fresh)  # the same stones without the history: G8 repeats nothing
    assert g8 in root_moves(plain)


def test_self_play_under_simple_ko_never_repeats_a_position():
    """Both sides played by the search from the triple ko, simple ko rules: no move recreates an
    earlier position (with the same side to move), so the game cannot cycle to the move cap."""
    position = triple_ko(superko=False)
    seen = {(position.stone_key, position.to_move)}
    player = make_player("playouts=200,seed=4")
    for _ in range(60):
        if position.is_over:
            break
        move = player.genmove(position).move
        position.play(move)
        if move != PASS:
            assert (position.stone_key, position.to_move) not in seen
        seen.add((position.stone_key, position.to_move))


def test_a_reused_subtree_root_is_restricted_too():
    position = triple_ko(superko=True)
    position.undo()  # before B4: the tree grows G8 below B4 without knowing superko
    player = make_player("playouts=3000,seed=2")
    player.genmove(position)
    tree = player.tree
    b4 = player._child_with_move(int(tree.meta[ROOT]), position.point("B4"))
    first = int(tree.first_child[b4])
    below = {int(tree.move[c]) for c in range(first, first + int(tree.n_children[b4]))}
    assert position.point("G8") in below
    position.play("B4")
    player.genmove(position, playouts=50)
    assert position.point("G8") not in root_moves(player)


@pytest.mark.parametrize("spec", ["algorithm=flat", "algorithm=depth2", "algorithm=random"])
def test_the_pure_monte_carlo_and_random_players_respect_superko(spec):
    position = triple_ko(superko=True)
    result = make_player(spec + ",playouts=400,seed=3").genmove(position)
    assert result.move != position.point("G8")
    assert all(s.point != position.point("G8") for s in result.moves)


def test_a_node_costs_88_bytes():
    tree = new_tree(1000)
    per_node = sum(a.nbytes for name, a in tree._asdict().items() if name != "meta") / 1000
    assert per_node == NODE_BYTES == 88


@pytest.mark.parametrize("algorithm", ["flat", "pp", "amaf", "depth2"])
def test_the_pure_monte_carlo_players_never_repeat_a_position_under_simple_ko(algorithm):
    simple = triple_ko(superko=False)
    g8 = simple.point("G8")
    assert simple.is_legal(g8)
    from obook.search.flat import root_candidates

    assert g8 not in root_candidates(simple)
    fresh = Position.from_ascii(simple.to_ascii(coordinates=False), to_move="BW"[simple.to_move - 1])
    assert g8 in root_candidates(fresh)  # the same stones without the history: G8 repeats nothing
    player = make_player(f"algorithm={algorithm},playouts=400,seed=2")
    assert player.genmove(simple).move != g8
