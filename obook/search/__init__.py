"""Search: MCTS (``mcts.py``) and the pure Monte-Carlo family, behind one ``Player`` interface."""
