"""What a search returns: the move, and the statistics behind it for analysis and books."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class MoveStats:
    point: int  # padded-board point, or PASS (-1)
    visits: int
    winrate: float  # mean reward for the player to move at the root, in [0, 1]
    variance: float
    amaf_visits: int = 0
    amaf_winrate: float = 0.0
    pv: list[int] = field(default_factory=list)  # this move, then the best continuation
    value: float = 0.0  # pure Monte-Carlo players: the mean score (or win rate) they rank moves by
    pruned: bool = False  # progressive pruning: no longer a candidate when the search ended
    prior: float | None = None  # the priors' virtual wins for this move (None: a player without priors)


@dataclass
class SearchResult:
    move: int  # the chosen point, or PASS
    resign: bool  # the player to move should resign
    winrate: float  # of the chosen move, for the player to move
    playouts: int  # simulations run by this search (all processes)
    seconds: float
    moves: list[MoveStats]  # root children, most visited first
    pv: list[int]  # principal variation from the root
    nodes: int = 0  # tree nodes in use after the search

    @property
    def best(self) -> MoveStats | None:
        return self.moves[0] if self.moves else None
