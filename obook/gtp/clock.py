"""How long a move may think when the game has a clock: the one place that decides it.

GTP gives the clock as ``time_settings main byo_yomi_time byo_yomi_stones`` (Canadian byo-yomi:
after the main time, ``byo_yomi_stones`` moves must be played in every ``byo_yomi_time`` seconds)
and, before each move, ``time_left color seconds stones`` (``stones`` 0: still in main time).
``kgs-time_settings`` adds Japanese byo-yomi (``periods`` periods of ``period_time`` seconds, one
move each). Without ``time_left`` the clock is kept from the measured thinking times.

The allocation divides the usable main time by an estimate of the moves still to play (from the
empty points), spends more around the opening and middle game where choices matter most, and
keeps a safety margin for the engine's and the controller's overheads, so that it never loses on
time: a move never uses more than the time actually left minus the margin.

``GameClock.move_budget`` is the answer the GTP engine searches with: the clock's seconds for the
move as a ``MoveBudget`` (``obook/search/player.py``), or the configuration's budget when the clock
sets no limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from obook.errors import ObookError
from obook.go.board import N_EMPTY
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.player import MoveBudget

NO_LIMIT = "none"
ABSOLUTE = "absolute"
CANADIAN = "canadian"
JAPANESE = "japanese"


class TimeControlError(ObookError):
    """Clock settings that make no sense (negative times, stones without time...)."""


@dataclass(frozen=True)
class TimeSettings:
    kind: str = NO_LIMIT
    main: float = 0.0
    period: float = 0.0  # byo-yomi seconds (a Canadian period or one Japanese period)
    stones: int = 0  # Canadian: moves per period; Japanese: 1
    periods: int = 0  # Japanese: number of periods

    @classmethod
    def from_gtp(cls, main: float, byo_yomi_time: float, byo_yomi_stones: int) -> TimeSettings:
        """GTP ``time_settings``: byo-yomi time > 0 with 0 stones means no limit; byo-yomi time 0
        means absolute (sudden-death) time."""
        if main < 0 or byo_yomi_time < 0 or byo_yomi_stones < 0:
            raise TimeControlError("time settings must not be negative")
        if byo_yomi_time > 0 and byo_yomi_stones == 0:
            return cls(NO_LIMIT)
        if byo_yomi_time == 0:
            return cls(ABSOLUTE, main=main)
        return cls(CANADIAN, main=main, period=byo_yomi_time, stones=byo_yomi_stones)

    @classmethod
    def from_kgs(cls, words: list[str]) -> TimeSettings:
        """``kgs-time_settings none | absolute main | byoyomi main period periods |
        canadian main period stones``."""
        if not words:
            raise TimeControlError("kgs-time_settings needs a system: none, absolute, byoyomi or canadian")
        system, values = words[0].lower(), words[1:]
        expected = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if system not in expected:
            raise TimeControlError(f"unknown time system {words[0]!r}: expected none, absolute, byoyomi or canadian")
        if len(values) != expected[system]:
            raise TimeControlError(f"kgs-time_settings {system} takes {expected[system]} numbers")
        numbers = [_number(v) for v in values]
        if any(n < 0 for n in numbers):
            raise TimeControlError("time settings must not be negative")
        if system == "none":
            return cls(NO_LIMIT)
        if system == "absolute":
            return cls(ABSOLUTE, main=numbers[0])
        if system == "canadian":
            return cls.from_gtp(numbers[0], numbers[1], int(numbers[2]))
        main, period, periods = numbers
        if period == 0 or periods == 0:
            return cls(ABSOLUTE, main=main)
        return cls(JAPANESE, main=main, period=period, stones=1, periods=int(periods))


@dataclass
class PlayerClock:
    """One player's remaining time: main time, then the current byo-yomi period."""

    main: float = 0.0
    in_byo_yomi: bool = False
    period_left: float = 0.0  # seconds left in the current period
    stones_left: int = 0  # Canadian: moves still due in the current period
    periods_left: int = 0  # Japanese: periods not used up


@dataclass
class GameClock:
    """Both players' clocks under one setting, and the thinking time for the next move.

    ``safety`` seconds are kept back from every deadline and ``overhead`` is what a move costs
    besides thinking (process and pipe latency); ``minimum`` is the least a move may take."""

    settings: TimeSettings = TimeSettings()
    safety: float = 0.5
    safety_fraction: float = 0.05
    overhead: float = 0.1
    minimum: float = 0.02
    opening_boost: float = 1.6  # relative spending in the opening and middle game
    endgame_share: float = 0.6  # relative spending once most of the board is filled

    def __post_init__(self) -> None:
        self.clocks = {1: self._fresh_clock(), 2: self._fresh_clock()}

    @property
    def active(self) -> bool:
        return self.settings.kind != NO_LIMIT

    def set_settings(self, settings: TimeSettings) -> None:
        self.settings = settings
        self.reset()

    def reset(self) -> None:
        """A new game: both clocks back to the full setting."""
        self.clocks = {1: self._fresh_clock(), 2: self._fresh_clock()}

    def _fresh_clock(self) -> PlayerClock:
        s = self.settings
        clock = PlayerClock(main=s.main, periods_left=s.periods)
        if s.main <= 0 and s.kind in (CANADIAN, JAPANESE):
            clock.in_byo_yomi = True
            clock.period_left, clock.stones_left = s.period, s.stones
        return clock

    def time_left(self, color: int, seconds: float, stones: int) -> None:
        """GTP ``time_left``: ``stones`` 0 means main time (or absolute time); more means the
        current byo-yomi period has ``seconds`` for ``stones`` moves (Japanese: periods left)."""
        if seconds < 0 or stones < 0:
            raise TimeControlError("time_left takes a non-negative time and stone count")
        clock = self.clocks[color]
        if stones == 0:
            clock.main, clock.in_byo_yomi = seconds, False
        elif self.settings.kind == JAPANESE:
            clock.main, clock.in_byo_yomi = 0.0, True
            clock.period_left, clock.periods_left = seconds, stones
        else:
            clock.main, clock.in_byo_yomi = 0.0, True
            clock.period_left, clock.stones_left = seconds, stones

    def spend(self, color: int, seconds: float) -> None:
        """Account for a move of ``color`` that took ``seconds`` (when no ``time_left`` comes)."""
        s, clock = self.settings, self.clocks[color]
        if not self.active:
            return
        if not clock.in_byo_yomi:
            if seconds <= clock.main or s.kind == ABSOLUTE:
                clock.main = max(0.0, clock.main - seconds)
                return
            seconds -= clock.main
            clock.main, clock.in_byo_yomi = 0.0, True
            clock.period_left, clock.stones_left = s.period, s.stones
        if s.kind == JAPANESE:
            while seconds > s.period and clock.periods_left > 1:
                clock.periods_left -= 1
                seconds -= s.period
            clock.period_left = s.period
            return
        clock.period_left -= seconds
        clock.stones_left -= 1
        if clock.stones_left <= 0:
            clock.period_left, clock.stones_left = s.period, s.stones

    def move_budget(self, config: SearchConfig, color: int, position: Position) -> MoveBudget:
        """What ``color``'s search of ``position`` may spend: the clock's seconds for the move
        (``move_seconds``), or the configuration's budget when the clock sets no limit."""
        seconds = self.move_seconds(color, int(position.board.scalars[N_EMPTY]), position.size ** 2)
        return MoveBudget.for_clock(config, seconds)

    def move_seconds(self, color: int, empty_points: int, board_points: int) -> float | None:
        """Seconds to think for ``color``'s next move, or ``None`` when the clock sets no limit."""
        if not self.active:
            return None
        s, clock = self.settings, self.clocks[color]
        fraction = 1.0 - empty_points / max(board_points, 1)
        moves_left = expected_moves_left(empty_points, board_points)
        phase = phase_weight(fraction, self.opening_boost, self.endgame_share)
        main_budget = 0.0
        main_usable = 0.0
        if not clock.in_byo_yomi and clock.main > 0:
            main_usable = max(0.0, clock.main - self._margin(clock.main) - self.overhead)
            if s.kind == ABSOLUTE:  # every move still to come needs its overhead and minimum
                spare = main_usable - (self.overhead + self.minimum) * moves_left
            else:
                spare = main_usable
            main_budget = max(0.0, spare) / moves_left * phase
        if s.kind == ABSOLUTE:
            return max(self.minimum, min(main_budget, main_usable))
        if clock.in_byo_yomi:
            per_move = self._byo_yomi_per_move(clock)
            return max(self.minimum, per_move)
        # Main time left with byo-yomi behind it: the byo-yomi's per-move share is safe to add,
        # because overrunning the main time starts a fresh period.
        per_move = self._byo_yomi_per_move(self._fresh_period())
        return max(self.minimum, min(main_budget + per_move, main_usable + per_move))

    def _fresh_period(self) -> PlayerClock:
        s = self.settings
        return PlayerClock(in_byo_yomi=True, period_left=s.period, stones_left=s.stones, periods_left=s.periods)

    def _byo_yomi_per_move(self, clock: PlayerClock) -> float:
        s = self.settings
        if s.kind == JAPANESE:
            period = clock.period_left or s.period
            return max(0.0, period - self._margin(period) - self.overhead)
        stones = max(clock.stones_left, 1)
        usable = clock.period_left - self._margin(clock.period_left) - self.overhead * stones
        return max(0.0, usable / stones)

    def _margin(self, seconds: float) -> float:
        return min(max(self.safety, self.safety_fraction * seconds), 0.5 * seconds)


def expected_moves_left(empty_points: int, board_points: int) -> float:
    """The moves one player still expects to make: about half the empty points, plus the captures
    and passes that refill them, and never fewer than a tenth of the board plus eight (the end
    can always take longer than it looks, and sudden death must not run dry)."""
    return max(0.5 * empty_points + 0.05 * board_points, 0.1 * board_points + 8.0)


def phase_weight(filled: float, opening_boost: float, endgame_share: float) -> float:
    """Relative spending by the share of the board filled: ``opening_boost`` until a third of
    the board is filled, falling linearly to ``endgame_share`` at two thirds."""
    if filled <= 1 / 3:
        return opening_boost
    if filled >= 2 / 3:
        return endgame_share
    t = (filled - 1 / 3) * 3
    return opening_boost + (endgame_share - opening_boost) * t


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise TimeControlError(f"{text!r} is not a number") from None
