"""Playout policies: how a random game chooses its moves (see ``policies.py``)."""
