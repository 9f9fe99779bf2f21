"""Every player by name: the one place that knows which class a search configuration asks for."""

from __future__ import annotations

from obook.search.config import SearchConfig
from obook.search.mcparallel import MasterSlavePlayer
from obook.search.mcplayer import MonteCarloPlayer
from obook.search.mcts import MCTSPlayer
from obook.search.parallel import RootParallelPlayer
from obook.search.player import Player, RandomPlayer


def make_player(config: SearchConfig | str | None = None) -> Player:
    """The player a configuration describes (a ``SearchConfig`` or a spec string)."""
    if not isinstance(config, SearchConfig):
        config = SearchConfig.from_spec(config)
    if config.algorithm == "random":
        return RandomPlayer(config)
    if config.algorithm in ("flat", "pp", "amaf", "depth2"):
        if config.processes > 1:
            return MasterSlavePlayer(config)
        return MonteCarloPlayer(config)
    if config.processes > 1:
        return RootParallelPlayer(config)
    return MCTSPlayer(config)
