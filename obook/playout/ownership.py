"""Who owns each point, estimated by playouts, and the dead stones that follow from it.

GTP's ``final_score`` and ``final_status_list`` need to know which stones are dead at the end of a
game; the board alone cannot say. Random playouts from the position answer it the Monte-Carlo way:
a stone that is usually replaced by the opponent's area by the end of a playout is dead. Seki is the
exception random playouts get wrong (whoever fills a shared liberty first loses the group), so
strings in a simple seki are recognised from the board before the playouts are consulted.

``final_area``/``final_score`` are the one count of a finished game (GTP ``final_score``, the result of
a self-play game): a dead stone is a point of the side that captures it.

Two passes do not always leave a settled board: a string in atari whose only liberty is an eye of its
own side lives if its side is to move (it connects) and dies otherwise; a capture may still be
pending; neutral points may be left. GNU Go plays such a game on before it counts; ``stone_status``
does the same with a conservative policy (``play_on``) and counts the board it reaches, and it names
the strings whose fate the playouts still leave open (``StoneStatus.uncertain``) rather than hide them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from obook.go.board import BLACK, BORDER, EMPTY, PASS, WHITE, WIDTH, copy_board, new_board
from obook.jit import hot
from obook.playout.policies import POLICY_NAMES, new_scratch, playout
from obook.go.position import Position
from obook.rng import make_rng

ALIVE, DEAD, SEKI = "alive", "dead", "seki"
UNCERTAIN_OWNERSHIP = 0.5  # a string its colour owns in 25-75% of the playouts has an open fate


@hot
def accumulate_ownership(root, work, policy, rng, komi, scratch, playouts, owner):
    """Add to ``owner[p]`` +1 for every playout from ``root`` that ends with ``p`` Black's (a black
    stone, or an empty point touching only black) and -1 for every one that ends with it White's."""
    w = root.scalars[WIDTH]
    for _ in range(playouts):
        copy_board(work, root)
        playout(work, policy, rng, komi, scratch)
        for p in range(w + 1, w * (w - 1) - 1):
            c = work.color[p]
            if c == BLACK:
                owner[p] += 1.0
            elif c == WHITE:
                owner[p] -= 1.0
            elif c == EMPTY:
                black = 0
                white = 0
                for q in (p - w, p - 1, p + 1, p + w):
                    cq = work.color[q]
                    if cq == BLACK:
                        black = 1
                    elif cq == WHITE:
                        white = 1
                owner[p] += black - white


def estimate_ownership(position: Position, playouts: int = 1000, policy: str = "atari50", seed: int = 1) -> np.ndarray:
    """Mean ownership of every padded-board point in [-1, 1], Black positive, over ``playouts``
    playouts from ``position`` (the side to move plays first)."""
    owner = np.zeros(position.board.color.shape[0])
    if playouts <= 0:
        return owner
    work = new_board(position.size)
    accumulate_ownership(position.board, work, POLICY_NAMES[policy], make_rng(seed), position.komi,
                         new_scratch(position.board), playouts, owner)
    return owner / playouts


def black_scores(position: Position, playouts: int = 100, policy: str = "atari50", seed: int = 1) -> np.ndarray:
    """Black's area score less komi at the end of each of ``playouts`` playouts from ``position``
    (the side to move plays first): what a book node and kata-analyze give as the mean score."""
    work = new_board(position.size)
    rng = make_rng(seed)
    scratch = new_scratch(position.board)
    owner = np.zeros(position.board.color.shape[0])
    scores = np.empty(max(playouts, 1))
    for k in range(scores.shape[0]):
        owner[:] = 0.0
        accumulate_ownership(position.board, work, POLICY_NAMES[policy], rng, position.komi, scratch, 1, owner)
        scores[k] = owner.sum() - position.komi
    return scores


@dataclass
class StoneStatus:
    """Every string of the board with its status, and the ownership that decided it.

    When the board had to be played on before it could be counted (``play_on``), ``counted`` is the
    board reached, ``counted_dead`` its dead stones and ``ownership`` its ownership; the statuses are
    still those of the strings on the board asked about (a string captured while playing on is dead).
    ``uncertain``: strings of the counted board whose colour owns them in between 25% and 75% of the
    playouts, whose status (and so the count) is a guess; ``open_ground``: its empty points whose
    owner is not decided yet (``open_points``). Either says the board was not settled."""

    strings: list[tuple[int, list[int], str]]  # (colour, stones, status)
    ownership: np.ndarray
    counted: Position | None = None
    counted_dead: set[int] = field(default_factory=set)
    played_on: list[tuple[int, int]] = field(default_factory=list)  # (colour, point), passes included
    uncertain: list[list[int]] = field(default_factory=list)
    open_ground: list[int] = field(default_factory=list)  # of the counted board (``open_points``)

    def stones(self, status: str) -> list[list[int]]:
        return [stones for _, stones, s in self.strings if s == status]

    def dead_points(self) -> set[int]:
        return {p for _, stones, s in self.strings if s == DEAD for p in stones}


def stone_status(position: Position, playouts: int = 1000, policy: str = "atari50", seed: int = 1,
                 settle: bool = True) -> StoneStatus:
    """The status of each string (``board_status``), after playing the game on until it is settled
    (``play_on``) when ``settle``: the side to move may still connect a string in atari or capture
    one, and neutral points are filled, as GNU Go does before it counts."""
    status = board_status(position, playouts, policy, seed)
    if not settle:
        return status
    lost = {p for color, stones in board_strings(position)
            if (1.0 if color == BLACK else -1.0) * float(np.mean(status.ownership[stones])) < -UNCERTAIN_OWNERSHIP
            for p in stones}
    counted = play_on(position, status.dead_points(), lost, playouts=max(64, playouts // 4), policy=policy, seed=seed)
    if not any(point >= 0 for _, point in counted.moves[len(position.moves):]):
        status.open_ground = open_points(position, status.dead_points())
        return status
    after = board_status(counted, playouts, policy, seed)
    status_at = {p: s for _, stones, s in after.strings for p in stones}
    strings = []
    for color, stones in board_strings(position):
        if any(int(counted.board.color[p]) != color for p in stones):
            strings.append((color, stones, DEAD))
        else:
            strings.append((color, stones, status_at[stones[0]]))
    return StoneStatus(strings, after.ownership, counted, after.dead_points(), counted.moves[len(position.moves):],
                       after.uncertain, open_points(counted, after.dead_points()))


def board_status(position: Position, playouts: int = 1000, policy: str = "atari50", seed: int = 1) -> StoneStatus:
    """Each string of the board as it stands is in seki (see ``seki_strings``), dead when its colour
    owns its stones in fewer than half the playouts, or alive."""
    ownership = estimate_ownership(position, playouts, policy, seed)
    strings = board_strings(position)
    seki = seki_strings(position, strings)
    result = []
    uncertain = []
    for color, stones in strings:
        if stones[0] in seki:
            status = SEKI
        else:
            sign = 1.0 if color == BLACK else -1.0
            mean = sign * float(np.mean(ownership[stones]))
            status = DEAD if mean < 0.0 else ALIVE
            if abs(mean) < UNCERTAIN_OWNERSHIP:
                uncertain.append(stones)
        result.append((color, stones, status))
    return StoneStatus(result, ownership, uncertain=uncertain)


def play_on(position: Position, dead: set[int], lost: set[int] = frozenset(), limit: int | None = None,
            playouts: int = 250, policy: str = "atari50", seed: int = 1) -> Position:
    """A copy of ``position`` played on from the side to move with ``conservative_move`` for both
    sides until two passes (at most ``limit`` moves, the number of points by default, and no
    position twice): GNU Go's ``final_score`` plays a finished game on the same way
    (``genmove_conservative``, then its aftermath) before it counts. ``dead`` are the stones
    playouts found dead on ``position``; they decide which empty points are nobody's. ``lost``:
    stones whose colour owns them in fewer than a quarter of the playouts, not worth a move to
    save. ``playouts`` (``policy``, ``seed``) judge between urgent moves when there are several."""
    board = position.copy()
    color = position.to_move
    limit = position.size * position.size if limit is None else limit
    passes = 0
    seen = {(board.stone_key, color)}

    def value(after: Position, mover: int) -> float:
        mean = float(np.mean(black_scores(after, playouts, policy, seed)))
        return mean if mover == BLACK else -mean

    for _ in range(limit):
        if passes >= 2:
            break
        dead = {p for p in dead if int(board.board.color[p]) in (BLACK, WHITE)}
        move = conservative_move(board, color, dead, lost, value)
        board.play(move, color)
        passes = passes + 1 if move == PASS else 0
        color = BLACK + WHITE - color
        if move != PASS and (board.stone_key, color) in seen:
            break  # a cycle of captures: what the playouts say of the board reached decides
        seen.add((board.stone_key, color))
    return board


def conservative_move(position: Position, color: int, dead: set[int], lost: set[int] = frozenset(),
                      value=None) -> int:
    """The move that settles the board without taking a risk, or a pass.

    Urgent first (``urgent_moves``): save a string of ``color`` in atari or capture one of the
    opponent's whose liberty is an eye of its own; whoever moves first there decides it. With
    several, ``value(position after, color)`` (``color``'s mean score over playouts) picks the
    best: saving a stone and capturing one that holds a group's eye are not worth the same. Then
    capture the largest dead string in atari (no hurry: it is dead anyway); another string in atari
    is part of a fight this policy cannot read (taking it could save a dead group around it). Then
    fill a dame point (``dame_points``) without putting itself in atari."""
    strings = board_strings(position)
    libs = [liberties(position, stones) for _, stones in strings]
    urgent = urgent_moves(position, color, lost, strings, libs)
    if len(urgent) > 1 and value is not None:
        def after(point: int) -> float:
            trial = position.copy()
            trial.play(point, color)
            return value(trial, color)

        return max(urgent, key=after)
    if urgent:
        return urgent[0]
    captures = sorted((len(stones), -min(lib)) for (c, stones), lib in zip(strings, libs)
                      if c != color and len(lib) == 1 and stones[0] in dead and position.is_legal(min(lib), color))
    if captures:
        return -captures[-1][1]
    for point in dame_points(position, dead):
        if position.is_legal(point, color) and _liberties_after(position, strings, libs, point, color) >= 2:
            return point
    return PASS


def urgent_moves(position: Position, color: int, lost: set[int], strings, libs) -> list[int]:
    """Moves that decide a string in atari (not ``lost``) by who plays first: the liberty of a
    string of ``color``'s, when playing it leaves two liberties (its own eye included: a string in
    atari whose liberty is an eye of its own lives if its side moves first), and the liberty of an
    opponent's string when that liberty is an eye of the opponent's (it would connect there next).
    Saves first, then the largest captures, so that without a judge two such kos are settled one
    each."""
    saves = []
    captures = []
    for (c, stones), lib in zip(strings, libs):
        if len(lib) != 1 or stones[0] in lost:
            continue
        point = min(lib)
        if not position.is_legal(point, color):
            continue
        if c == color and _liberties_after(position, strings, libs, point, color) >= 2:
            saves.append(point)
        elif c != color and eye_of(position, point, c):
            captures.append((len(stones), -point))
    return saves + [-point for _, point in sorted(captures, reverse=True)]


def dame_points(position: Position, dead: set[int]) -> list[int]:
    """Empty points that touch both colours (``dead`` counted for their capturer) in a region of
    nobody's whose every point touches a stone: the neutral points left between settled groups.
    A region with a point that touches no stone is open ground, not dame: filling it would be
    playing the game, not finishing it (``open_points``)."""
    color = capturers_view(position, dead)
    return sorted(p for region in _neutral_regions(position, color) if not _has_interior(position, color, region)
                  for p in region if _touches(position, color, p) == {BLACK, WHITE})


def open_points(position: Position, dead: set[int]) -> list[int]:
    """Empty points of nobody's in a region with a point that touches no stone: ground still open,
    whose owner only playing on would decide."""
    color = capturers_view(position, dead)
    return sorted(p for region in _neutral_regions(position, color) if _has_interior(position, color, region)
                  for p in region)


def _neutral_regions(position: Position, color: dict[int, int]) -> list[list[int]]:
    area = area_map(position, color)
    seen: set[int] = set()
    regions = []
    for p in sorted(area):
        if area[p] != EMPTY or p in seen:
            continue
        region = _flood(position, p, lambda q: area.get(q) == EMPTY)
        seen.update(region)
        regions.append(region)
    return regions


def _touches(position: Position, color: dict[int, int], point: int) -> set[int]:
    w = position.size + 2
    return {color.get(q) for q in (point - w, point - 1, point + 1, point + w)} & {BLACK, WHITE}


def _has_interior(position: Position, color: dict[int, int], region: list[int]) -> bool:
    return any(not _touches(position, color, p) for p in region)


def eye_of(position: Position, point: int, color: int) -> bool:
    """Every neighbour of ``point`` on the board is a stone of ``color``."""
    w = position.size + 2
    board = position.board
    return all(int(board.color[q]) in (color, BORDER) for q in (point - w, point - 1, point + 1, point + w))


def _liberties_after(position: Position, strings, libs, point: int, color: int) -> int:
    """Liberties of ``color``'s string at ``point`` once played there (a capture counts as two)."""
    w = position.size + 2
    board = position.board
    around = (point - w, point - 1, point + 1, point + w)
    after = {q for q in around if int(board.color[q]) == EMPTY}
    for (c, stones), lib in zip(strings, libs):
        if not any(q in around for q in stones):
            continue
        if c == color:
            after |= lib
        elif lib == {point}:
            return 2
    return len(after - {point})


def board_strings(position: Position) -> list[tuple[int, list[int]]]:
    """(colour, sorted stones) of every string on the board."""
    seen: set[int] = set()
    strings = []
    board = position.board
    for p in position.points():
        color = int(board.color[p])
        if color not in (BLACK, WHITE) or p in seen:
            continue
        stones = _flood(position, p, lambda q, c=color: int(board.color[q]) == c)
        seen.update(stones)
        strings.append((color, sorted(stones)))
    return strings


def liberties(position: Position, stones: list[int]) -> set[int]:
    w = position.size + 2
    color = position.board.color
    return {q for p in stones for q in (p - w, p - 1, p + 1, p + w) if color[q] == EMPTY}


def seki_strings(position: Position, strings: list[tuple[int, list[int]]]) -> set[int]:
    """First stones of the strings in seki, of two strings or more.

    A string can be in seki when it has at least two liberties, each either shared (an empty point
    touching both colours) or an eye of its own (every neighbour the string itself or the edge: an
    "eye" it shares with another string of its colour lets it join that string and live).
    A shared liberty holds the seki when neither colour can fill it: the filler's strings around it
    join and keep one liberty at most, and the fill captures nothing (the other side then captures
    the filler). Strings whose shared liberties all hold, and all of whose opposing neighbours
    across those liberties are in seki too, are in seki: a simple seki of two strings, and larger
    ones such as an eyeless string between two one-eyed strings of the other colour, which a pair
    test misses. A shared liberty the filler joins to a stronger string is no seki point (the other
    string then dies)."""
    board = position.board
    w = position.size + 2
    libs = [liberties(position, stones) for _, stones in strings]
    string_of = {p: index for index, (_, stones) in enumerate(strings) for p in stones}

    def around(point: int) -> tuple[int, ...]:
        return (point - w, point - 1, point + 1, point + w)

    def neighbours_of(point: int) -> set[int]:
        return {string_of[q] for q in around(point) if q in string_of}

    def shared(point: int) -> bool:
        return {int(board.color[q]) for q in around(point)} >= {BLACK, WHITE}

    def own_eye(point: int, index: int) -> bool:
        """Every neighbour of ``point`` is the edge or the string ``index`` itself: an eye the
        string cannot use to join another string (which would save it)."""
        return all(int(board.color[q]) == 3 or string_of.get(q) == index for q in around(point))

    def fillable(point: int) -> bool:
        """Either colour fills ``point`` and keeps two liberties, or captures by filling it."""
        for color in (BLACK, WHITE):
            joined = {i for i in neighbours_of(point) if strings[i][0] == color}
            if not joined:
                continue
            after = {q for q in around(point) if int(board.color[q]) == EMPTY}
            for i in joined:
                after |= libs[i]
            if len(after - {point}) > 1:
                return True
            if any(strings[i][0] != color and libs[i] == {point} for i in neighbours_of(point)):
                return True
        return False

    candidates = set()
    for index in range(len(strings)):
        mine = libs[index]
        if len(mine) >= 2 and any(shared(q) for q in mine) and all(shared(q) or own_eye(q, index) for q in mine):
            if not any(fillable(q) for q in mine if shared(q)):
                candidates.add(index)
    while True:
        keep = {i for i in candidates
                if all(neighbours_of(q) <= candidates for q in libs[i] if shared(q))}
        if keep == candidates:
            break
        candidates = keep
    return {strings[i][1][0] for i in candidates}


def final_area(position: Position, dead: set[int]) -> tuple[int, int]:
    """Chinese area (Black, White) at the end of a game whose ``dead`` stones are counted for the
    side that captures them: each dead stone is a point of the other colour (as if it had been
    captured and the point filled), and an empty region whose border, so counted, is of one colour
    only is that colour's area. An empty point next to both colours (a dame, a shared liberty of a
    seki) is nobody's; the eyes of a group in seki are its owner's. This is Tromp-Taylor area counting
    on the board once the dead stones are the capturer's."""
    return area_count(position, capturers_view(position, dead))


def capturers_view(position: Position, dead: set[int]) -> dict[int, int]:
    """Every point's colour with the ``dead`` stones given to the side that captures them."""
    def owner(p: int) -> int:
        c = int(position.board.color[p])
        if p in dead and c in (BLACK, WHITE):
            return WHITE if c == BLACK else BLACK
        return c

    return {p: owner(p) for p in position.points()}


def area_map(position: Position, color: dict[int, int]) -> dict[int, int]:
    """Whose area each point is on the board coloured as ``color`` (point -> BLACK, WHITE or EMPTY),
    by Tromp-Taylor: a stone is its colour's, an empty region whose border is of one colour only is
    that colour's, any other empty point (a dame, a shared liberty of a seki) is nobody's (EMPTY)."""
    w = position.size + 2
    area = {p: c for p, c in color.items() if c != EMPTY}
    for p, c in color.items():
        if c != EMPTY or p in area:
            continue
        region = _flood(position, p, lambda q: color.get(q) == EMPTY)
        touches = {color.get(q) for r in region for q in (r - w, r - 1, r + 1, r + w)} - {EMPTY, None}
        side = touches.pop() if len(touches) == 1 else EMPTY
        area.update((r, side) for r in region)
    return area


def area_count(position: Position, color: dict[int, int]) -> tuple[int, int]:
    """Tromp-Taylor area (Black, White) of the board coloured as ``color`` (``area_map``)."""
    owners = list(area_map(position, color).values())
    return owners.count(BLACK), owners.count(WHITE)


def final_score(position: Position, status: StoneStatus) -> float:
    """Black's final area minus White's minus komi, the dead stones of ``status`` counted for their
    capturer (``final_area``), on the board ``status`` played on to (``StoneStatus.counted``) if any."""
    if status.counted is not None:
        black, white = final_area(status.counted, status.counted_dead)
    else:
        black, white = final_area(position, status.dead_points())
    return black - white - position.komi


def _flood(position: Position, start: int, inside) -> list[int]:
    w = position.size + 2
    on_board = set(position.points())
    found = {start}
    stack = [start]
    while stack:
        p = stack.pop()
        for q in (p - w, p - 1, p + 1, p + w):
            if q in on_board and q not in found and inside(q):
                found.add(q)
                stack.append(q)
    return list(found)
