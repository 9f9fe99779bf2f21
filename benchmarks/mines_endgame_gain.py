"""A lower bound on what the exact end game gains over the lookahead, free of the noise of win rates.

Up to the first guess the end game covers (at most ``ENDGAME_LAYOUTS`` layouts), the ``endgame`` and
``lookahead`` players make the same moves, so that position has the same law under both. There, the end
game's exact value minus the exact value of the lookahead's click followed by optimal play
(``EndgameSolver.click_value``) bounds the gain in win rate from below. Printed: its mean over all games
(0 for games that never reach a covered guess) with its standard error, and the win rate of the
``endgame`` player on the same games. Proved mines need not be carried: a proved mine is one in every
consistent layout, so the list of layouts is the same.

Run by hand: ``.venv/bin/python benchmarks/mines_endgame_gain.py expert 300`` (BOARD GAMES [FIRST_SEED]).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np

from obook.mines.endgame import EndgameSolver, list_layouts
from obook.mines.frontier import COUNT_OK, frontier_probabilities
from obook.mines.game import PLAYING, STANDARD_BOARDS, UNKNOWN, WON, MinesGame
from obook.mines.guesses import lookahead_choice
from obook.mines.player import STANDARD_FIRST, Player, PlayerConfig


def main() -> None:
    board, games = sys.argv[1], int(sys.argv[2])
    first_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    p, q, n_mines = STANDARD_BOARDS[board]
    row, col = STANDARD_FIRST[board]
    player = Player(p, q, n_mines, PlayerConfig(solver="endgame", first=row * q + col))
    nbr, deg = player.engine.nbr, player.engine.deg
    gains, wins, worse, covered = [], 0, 0, 0
    t0 = time.perf_counter()
    for seed in range(first_seed, first_seed + games):
        game = MinesGame(p, q, n_mines, seed=seed)
        looking, move = True, 0
        while game.status == PLAYING:
            if looking and game.revealed:
                status, prob = frontier_probabilities(game.obs, n_mines, nbr, deg)
                guess = status == COUNT_OK and prob[game.obs == UNKNOWN].min() > 0
                layouts = list_layouts(game.obs, n_mines, nbr, deg) if guess else None
                if layouts is not None:
                    looking = False
                    solver = EndgameSolver(layouts)
                    best = solver.best()
                    theirs = lookahead_choice(game.obs, prob, n_mines, nbr, deg)
                    value = solver.click_value(theirs) if best is not None else None
                    if value is not None:
                        gains.append(best[1] - value)
                        covered += 1
                        worse += best[1] - value > 1e-12
            cell, _ = player.choose(game, move)
            game.click(cell)
            move += 1
        wins += game.status == WON
        gains += [0.0] * (len(gains) < seed - first_seed + 1)
    g = np.array(gains)  # one entry per game, 0 where no covered guess was reached
    print(f"{board}, seeds {first_seed}..{first_seed + games - 1}: endgame wins {wins}/{games}; "
          f"{covered} games reach a covered guess, the lookahead's click is worse in {worse}; gain in win rate "
          f"at least {100 * g.mean():.3f} points (s.e. {100 * g.std(ddof=1) / np.sqrt(games):.3f}); "
          f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
