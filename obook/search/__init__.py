"""Search: MCTS (``tree.py``, ``selection.py``, ``kernel.py``, ``mcts.py``) and the pure Monte-Carlo family, behind one
``Player`` interface (``player.py``)."""
