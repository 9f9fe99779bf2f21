"""Every search option in one place, with the defaults that played strongest.

A configuration can be written as a spec string, ``"playouts=2000,policy=atari50,rave=on"`` (what
``obook gtp`` options, ``obook match`` engine descriptions and books store), and read back with
``SearchConfig.from_spec``; unknown keys and bad values are errors that name the key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple

from obook.errors import ObookError
from obook.playout.policies import POLICY_NAMES, policy_code

ALGORITHMS = ("uct", "flat", "pp", "amaf", "depth2", "random")
MC_VALUES = ("score", "win")
ALLOCATIONS = ("roundrobin", "random")
SELECTIONS = ("ucb1", "ucb1-tuned")
RAVE_SCHEDULES = ("alpha", "beta")
REWARDS = ("win", "score")
TREE_EYES = ("simple", "true")


@dataclass(frozen=True)
class SearchConfig:
    # --- what is searched -------------------------------------------------------------------
    # uct: MCTS over a tree. The seeds' pure Monte-Carlo family (obook/search/mcplayer.py):
    # flat: one-ply model, the mean value of the first move; pp: flat with progressive pruning;
    # amaf: all-moves-as-first (GOBBLE); depth2: minimax over the means of (move, reply) leaves.
    # random: no search, a uniformly random legal move (the grid's zero-think benchmark player)
    algorithm: str = "uct"
    policy: str = "heavy-moggy"  # playout policy: light, atari50, heavy, heavy-ladder, heavy-moggy (the strongest measured) or heavy-semeai
    # --- selection (seed 001: UCB1 and the variance-aware UCB1-tuned) -------------------------
    selection: str = "ucb1"
    exploration: float = 0.2  # c in W/N + c*sqrt(ln N / n); small because RAVE explores
    tuned_c1: float = 1.4142135623730951  # V = var + c1*sqrt(ln N / n) (Auer et al.: sqrt 2)
    tuned_c2: float = 0.25  # min(V, c2): a Bernoulli variance never exceeds 1/4
    first_play_urgency: float = 1.1  # value of an unvisited child with no AMAF data
    # --- RAVE (seed 001: v3 = alpha*v1 + (1-alpha)*v2) -----------------------------------------
    rave: bool = True
    rave_schedule: str = "beta"  # alpha: alpha = min(1, n/rave_k); beta: Gelly & Silver 2007
    rave_k: float = 3000.0  # the alpha schedule's horizon (the seed's example is 10,000)
    rave_bias: float = 0.05  # b in beta = n~ / (n + n~ + 4 b^2 n n~)
    # --- prior knowledge (obook/search/priors.py; Gelly & Silver 2007) -------------------------
    priors: bool = True  # new children start with virtual simulations from Go heuristics
    prior_even: float = 10.0  # virtual simulations at 50% every child gets
    prior_weight: float = 10.0  # virtual wins (losses) per unit of good (bad) evidence
    prior_model: bool = True  # evidence from the learned move model (movemodel.py); off: the hand-set rules (priors.py)
    ladders: bool = True  # ladder reading in the priors: escapes into a working ladder bad, ladder ataris good
    # --- expansion ---------------------------------------------------------------------------
    expand_threshold: int = 4  # expand a leaf after this many visits (1: "all ends"); 4 beat 8 at equal time (SPRT)
    tree_eyes: str = "true"  # own eyes the tree never fills: true (is_true_eye: false eyes are filled) or simple (the seeds' is_eye)
    widening: bool = False  # progressive widening: consider only the best k(n) children
    widening_a: float = 2.0  # k(n) = widening_a + n ** widening_b
    widening_b: float = 0.4
    # --- reward ------------------------------------------------------------------------------
    reward: str = "win"  # win: 1/0 (0.5 jigo); score: win plus a small bonus per point
    score_weight: float = 0.02  # with reward=score: (1 - w)*win + w*(1 + tanh(score/20))/2
    dynamic_komi: bool = False  # a player clearly winning searches as if giving more komi (dynkomi.py; Pachi)
    # --- pure Monte-Carlo (algorithm flat, pp, amaf, depth2; seeds 001 and 003) ----------------
    value: str = "score"  # what a playout is worth to the mover: score (area - komi; the seeds) or win
    allocation: str = "roundrobin"  # first moves of flat/pp: roundrobin (Bouzy) or random (seed 003)
    temperature: float = 0.0  # K: playouts choose moves with probability ~ exp(K * AMAF value); 0 off
    annealing: bool = False  # raise K linearly from 0 to temperature over the budget
    rd: float = 1.0  # progressive pruning: m -/+ rd * sigma (seed 003 used 0.3, Bouzy 1)
    sigma_e: float = 0.2  # stop when every move left has sigma < sigma_e and none is inferior (003: 1.0)
    min_games: int = 100  # samples a move needs before it is pruned or prunes others (001: 100)
    soft_pruning: bool = False  # a pruned move comes back when no longer statistically inferior
    stages: int = 16  # pruning decisions per search: s stages of N samples per slave (003 Figure 2)
    slaves: int = 1  # sample streams, each with its own seed; run in processes when processes > 1
    # --- budgets and moves -------------------------------------------------------------------
    playouts: int = 10000  # per move, unless seconds is set
    seconds: float = 0.0  # per move; 0 means use playouts
    reuse_tree: bool = True  # keep the subtree of the actual moves between searches
    max_nodes: int = 1_000_000  # node capacity of the tree (88 bytes a node, twice for reuse: tree.NODE_BYTES)
    resign_threshold: float = 0.05  # resign below this win rate (0 never resigns)
    pass_when_won: bool = True  # pass when passing still wins (so games end cleanly)
    processes: int = 1  # uct: root parallelism; flat/pp: master/slave pruning, one slave per process
    seed: int = 0  # seed of the search's random numbers (0: from the clock)

    def __post_init__(self) -> None:
        checks = {
            "algorithm": (self.algorithm, ALGORITHMS),
            "selection": (self.selection, SELECTIONS),
            "rave_schedule": (self.rave_schedule, RAVE_SCHEDULES),
            "reward": (self.reward, REWARDS),
            "tree_eyes": (self.tree_eyes, TREE_EYES),
            "policy": (self.policy, tuple(POLICY_NAMES)),
            "value": (self.value, MC_VALUES),
            "allocation": (self.allocation, ALLOCATIONS),
        }
        for key, (value, allowed) in checks.items():
            if value not in allowed:
                raise ObookError(f"search option {key}={value!r}: choose from {', '.join(allowed)}")
        if self.playouts < 1:
            raise ObookError("search option playouts must be at least 1")
        if self.seconds < 0:
            raise ObookError("search option seconds must not be negative")
        if self.expand_threshold < 1:
            raise ObookError("search option expand_threshold must be at least 1")
        if self.max_nodes < 1000:
            raise ObookError("search option max_nodes must be at least 1000")
        if self.processes < 1:
            raise ObookError("search option processes must be at least 1")
        for key in ("temperature", "rd", "sigma_e", "min_games"):
            if getattr(self, key) < 0:
                raise ObookError(f"search option {key} must not be negative")
        if self.stages < 1 or self.slaves < 1:
            raise ObookError("search options stages and slaves must be at least 1")
        if self.processes > 1 and self.algorithm in ("flat", "pp") and self.slaves not in (1, self.processes):
            raise ObookError("with algorithm=flat/pp, processes>1 runs one slave per process: "
                             "give slaves=processes (or leave slaves out)")
        if self.processes > 1 and self.algorithm in ("amaf", "depth2"):
            raise ObookError(f"algorithm={self.algorithm} runs in one process (processes=1)")

    @classmethod
    def from_spec(cls, spec: str | None, **overrides) -> "SearchConfig":
        """Parse ``"key=value,key=value"``; booleans accept on/off, true/false, yes/no, 1/0."""
        return cls(**{**cls.parse_spec(spec), **overrides})

    @classmethod
    def parse_spec(cls, spec: str | None) -> dict:
        """The options a spec gives, checked and typed (what it leaves out is not there)."""
        values: dict = {}
        types = {f.name: f.type for f in dataclasses.fields(cls)}
        for item in (spec or "").replace(";", ",").split(","):
            item = item.strip()
            if not item:
                continue
            key, sep, raw = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep:
                raise ObookError(f"search option {item!r}: expected key=value")
            if key not in types:
                raise ObookError(f"unknown search option {key!r}; known: {', '.join(sorted(types))}")
            values[key] = _convert(key, raw.strip(), types[key])
        return values

    def to_spec(self) -> str:
        """The options that differ from the defaults, as a spec string."""
        default = SearchConfig()
        parts = []
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != getattr(default, f.name):
                parts.append(f"{f.name}={_format(value)}")
        return ",".join(parts)

    def to_full_spec(self) -> str:
        """Every option as a spec string, defaults included: it names the same search whatever the
        defaults of the obook that reads it (a book records its search so)."""
        return ",".join(f"{f.name}={_format(getattr(self, f.name))}" for f in dataclasses.fields(self))

    def replace(self, **changes) -> "SearchConfig":
        return dataclasses.replace(self, **changes)

    def kernel_params(self, komi: float, search_komi: float | None = None) -> "KernelParams":
        """The options the MCTS kernel reads, typed for numba. ``search_komi`` (dynamic komi) is the
        komi the simulations are won or lost with, where it differs from the game's ``komi``."""
        searched = komi if search_komi is None else search_komi
        return KernelParams(
            exploration=float(self.exploration), ucb1_tuned=self.selection == "ucb1-tuned",
            tuned_c1=float(self.tuned_c1), tuned_c2=float(self.tuned_c2),
            first_play_urgency=float(self.first_play_urgency), rave=bool(self.rave),
            rave_beta=self.rave_schedule == "beta", rave_k=float(self.rave_k), rave_bias=float(self.rave_bias),
            priors=bool(self.priors), prior_even=float(self.prior_even), prior_weight=float(self.prior_weight),
            prior_model=bool(self.prior_model), ladders=bool(self.ladders),
            expand_threshold=int(self.expand_threshold), true_eyes=self.tree_eyes == "true",
            widening=bool(self.widening),
            widening_a=float(self.widening_a), widening_b=float(self.widening_b),
            score_reward=self.reward == "score", score_weight=float(self.score_weight), komi=float(searched),
            score_shift=float(searched - komi),
            policy=policy_code(self.policy),
        )


class KernelParams(NamedTuple):
    """The search options of the MCTS kernel (``obook/search/kernel.py``, ``selection.py``) as
    scalars: numba passes the tuple by value. Each field is the ``SearchConfig`` option of that name
    (documented there) unless said here."""

    exploration: float
    ucb1_tuned: bool  # selection=ucb1-tuned (False: UCB1)
    tuned_c1: float
    tuned_c2: float
    first_play_urgency: float
    rave: bool
    rave_beta: bool  # rave_schedule=beta (False: alpha)
    rave_k: float
    rave_bias: float
    priors: bool
    prior_even: float
    prior_weight: float
    prior_model: bool
    ladders: bool
    expand_threshold: int
    true_eyes: bool  # tree_eyes=true (False: simple)
    widening: bool
    widening_a: float
    widening_b: float
    score_reward: bool  # reward=score (False: win/loss)
    score_weight: float
    komi: float  # the simulations' komi: the game's, or dynamic komi's (``search_komi``)
    score_shift: float  # that komi less the game's: added to a simulation's score, the tree keeps the game's
    policy: int  # the playout policy's number (``obook.playout.policies.policy_code``)


def _convert(key: str, raw: str, annotation: str):
    try:
        if annotation == "bool":
            word = raw.lower()
            if word in ("1", "on", "true", "yes"):
                return True
            if word in ("0", "off", "false", "no"):
                return False
            raise ValueError(raw)
        if annotation == "int":
            return int(float(raw)) if float(raw).is_integer() else int(raw)
        if annotation == "float":
            return float(raw)
        return raw
    except ValueError:
        raise ObookError(f"search option {key}={raw!r}: expected a {annotation}") from None


def _format(value) -> str:
    """A value as a spec writes it: short where that is exact, every digit where it is not (a spec
    must name the same search when it is read back)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        short = f"{value:g}"
        return short if float(short) == value else repr(value)
    return str(value)
