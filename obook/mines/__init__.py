"""Mines, a one-player partially observable game, played by BSR-UCT with consistent belief sampling.

Reading order: ``game`` (rules and the flat board layout), ``samplers`` (layouts consistent with what the
player has seen: rejection, Metropolis, Metropolis with inheritance, exact), ``bsr_uct`` (the search and the
player), ``oracle`` (exact optimal play on tiny boards, the ground truth of the tests), ``cli``
(``obook mines play`` / ``show``). Spec: Couetoux, Milone, Teytaud, "Consistent Belief
State Estimation, with Application to Mines" (TAAI 2011).
"""
