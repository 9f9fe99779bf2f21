"""Mines, a one-player partially observable game, played by BSR-UCT with consistent belief sampling.

Reading order: ``game`` (rules and the flat board layout), ``samplers`` (layouts consistent with what the
player has seen: rejection, Metropolis, Metropolis with inheritance, exact), ``playouts`` (how a simulation
ends the game), ``kernel`` (the jitted BSR-UCT tree and simulations), ``engine`` (one decision: budgets and
the root's statistics), ``player`` (whole games and their summary), ``oracle`` (exact optimal play on tiny
boards, the ground truth of the tests); the commands are in ``obook/commands/mines.py``
(``obook mines play`` / ``show``). Spec: Couetoux, Milone, Teytaud, "Consistent Belief
State Estimation, with Application to Mines" (TAAI 2011).
"""
