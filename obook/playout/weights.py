"""The learned strengths the heavy playouts' model rule draws with (``heavy.py``, ``playout_model=on``).

They come from the search's move model (``obook/search/movemodel.py``, Coulom 2007), cut down to what
a playout can afford to ask of a move near the last one: natural logarithms of

- ``pattern``: the strength of each 3x3 code as the mover sees it (own stones as BLACK), indexed by
  the code itself (65,536 entries, every symmetric image holding its shape's value);
- ``near``: the distance-to-the-last-move strength of the 4 orthogonal and of the 4 diagonal
  neighbours;
- ``line``: the strength of the first to the fifth line or more;
- ``far``: the strength of a typical move away from the last one (the empty shape, the mean of the
  far distances and of the lines), the weight each empty point away from the last move stands for.

``obook learn move-model ... --playout-weights FILE`` writes them (``movemodel.playout_weights`` cuts
them out of the fitted table, ``save_weights`` stores them); the shipped ones are
``model_weights.npz`` next to this file. Without the file every strength is 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from obook.go.tactics import N_PATTERNS

WEIGHTS_PATH = Path(__file__).with_name("model_weights.npz")


class PlayoutWeights(NamedTuple):
    pattern: np.ndarray  # float64[N_PATTERNS], log strength by mover code
    near: np.ndarray  # float64[2]: orthogonal, diagonal
    line: np.ndarray  # float64[5]
    far: float


def save_weights(path: str | Path, weights: PlayoutWeights) -> None:
    np.savez_compressed(path, pattern=weights.pattern.astype(np.float16), near=weights.near.astype(np.float32),
                        line=weights.line.astype(np.float32), far=np.float32(weights.far))


def load_weights(path: str | Path = WEIGHTS_PATH) -> PlayoutWeights:
    """The weights stored at ``path`` (all strengths 1 when the file is absent)."""
    if not Path(path).exists():
        return PlayoutWeights(np.zeros(N_PATTERNS), np.zeros(2), np.zeros(5), 0.0)
    with np.load(path) as data:
        return PlayoutWeights(data["pattern"].astype(np.float64), data["near"].astype(np.float64),
                              data["line"].astype(np.float64), float(data["far"]))
