"""obook: opening books for Go built by Monte-Carlo self-play.

Reading guide: start with ``obook/go/board.py`` (the rules), then ``obook/playout/policies.py``
(random games), then ``obook/go/position.py`` (the Python API that everything else uses).
"""

__version__ = "0.1.0"
