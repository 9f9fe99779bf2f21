"""The service's response bodies: every route declares one, so the OpenAPI schema is complete and
the fuzz test can check each answer against it."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

Color = Literal["B", "W"]


class ErrorOut(BaseModel):
    detail: str = Field(description="what is wrong, naming the bad value")


BAD_INPUT = {422: {"model": ErrorOut, "description": "a parameter the service cannot use, named with the reason"}}
OTHER_ENGINE = {409: {"model": ErrorOut, "description": "the book was made by another engine version (both named): "
                                                       "its position keys are not this obook's"}}
UNAVAILABLE = {503: {"model": ErrorOut, "description": "the database cannot be reached or is at another schema"}}


class Stone(BaseModel):
    vertex: str = Field(description="GTP vertex, e.g. E5 (row 1 at the bottom)")
    color: Color
    move: int = Field(description="number of the move that put this stone here")


class Page(BaseModel):
    total: int
    limit: int
    offset: int


# ---- books -------------------------------------------------------------------------------------


class BookOut(BaseModel):
    name: str
    size: int
    komi: float
    rules: str
    algorithm: str = Field(description="minimax (search-valued), or the coevolution rule: mbm, mvbm or beta")
    threshold: float = Field(description="self-play plays the book move above this success rate")
    depth: int = Field(description="moves of each game that count in the book (0: all)")
    search: str = Field(description="search settings of the mutation player (every option, defaults included, for "
                                    "books made since the engine record)")
    seconds_per_move: float
    engine_version: str
    knowledge: str | None = Field(default=None, description=(
        "digest of the learned data the book's searches read (move model, shape counts); null: not recorded"))
    engine: str = Field(default="", description="the recorded engine in one line, and whether this service's obook "
                                                "runs the same one")
    seed_salt: int = Field(default=0, description="minimax books: mixed into every expansion's seed")
    created_at: dt.datetime
    games_finished: int = Field(description="finished games (seeds included); a search-valued (minimax) book has "
                                            "none: its unit is the expansion (``unit``, ``units_done``)")
    games_in_progress: int
    games_abandoned: int
    kind: str = Field("self-play", description=(
        "self-play: a statistical book (mbm, mvbm, beta), grown by self-play games and answering from their "
        "statistics; search-valued: a minimax book, grown by expansions and answering from backed-up search values"))
    unit: str = Field("game", description="its unit of work: game (self-play) or expansion (search-valued)")
    units_done: int = Field(0, description="units done: finished games (``games_finished``), or expansions done")
    units_open: int = Field(0, description="units not done yet: games in progress, or expansions scheduled "
                                           "(waiting or being searched)")
    units_set_aside: int = Field(0, description="units set aside after OBOOK_MAX_GAME_FAILURES failures")
    export_url: str = Field("", description="the book as SGF (``export.sgf``)")


class BookList(Page):
    items: list[BookOut]


class CandidateOut(BaseModel):
    move: str = Field(description="GTP vertex in the caller's orientation, or pass")
    games: int
    wins: int = Field(description="games won by the player making this move")
    draws: int = Field(default=0, description="drawn games (jigo): half a win for each player")
    winrate: float = Field(description="(wins + draws / 2) / games")
    share: float = Field(description="this move's share of the won games (draws as half) of the position")
    usage: bool = Field(description="the usage rule's choice (``usage_move``: play from the book)")
    coevolution: bool = Field(description="the coevolution rule's choice (``coevolution_move``: what self-play "
                                          "under the book's algorithm would play)")
    winrate_ci95: list[float] | None = Field(default=None, description="95% Wilson interval of the win rate "
                                                                       "(draws as half wins)")
    value: float | None = Field(default=None, description="minimax book: the move's minimax value for its player")
    lcb: float | None = Field(default=None, description="minimax book: its lower bound")
    ucb: float | None = Field(default=None, description="minimax book: its upper bound")
    prior: float | None = Field(default=None, description="minimax book: its share of a search's visits")
    visits: int | None = Field(default=None, description="minimax book: visits of the search behind its value")
    score_mean: float | None = Field(default=None, description=(
        "the mean final score (area score less komi) for the player making this move. Statistical books "
        "(mbm, mvbm, beta): over the games through the move whose final score is known (resigned games and "
        "seeds without a points result have none); minimax book: the mean of the search of the position it "
        "reaches. Null: not known"))
    backed_up_score: float | None = Field(default=None, description=(
        "minimax book: the score for the player making this move on the line its value is backed up from (the "
        "best child's backed-up score, or where a position's own search gives the value, that search's mean "
        "score); null: not known (a statistical book, or a book not backed up since it kept scores)"))
    backed_up_result: str | None = Field(default=None, description=(
        "minimax book: ``backed_up_score`` as a result, whoever leads: B+3.5, W+0.5, 0"))
    games_url: str | None = Field(default=None, description=(
        "statistical books: a page of sample games through this move, the games list with ``through`` set "
        "to the moves so far and this one (finished games whose record starts with these moves or one of "
        "their symmetric images; games that reached the position by another move order are not listed). "
        "Null for a minimax book (it has no games) or a line too long for the games index"))


USAGE_MOVE = ("the usage rule's choice, to play from the book: the most played move in won games (at least "
              "``min_games`` games); null: none")
COEVOLUTION_MOVE = ("the coevolution rule's choice: what self-play under the book's algorithm (MBM, MVBM) would "
                    "play; null: self-play would mutate (search), or a BETA book, whose choice is random")


class LookupOut(BaseModel):
    book: str
    size: int
    moves: list[str] = Field(description="the moves replayed, normalised")
    to_move: Color
    move_number: int = Field(description="number of the next move")
    in_book: bool = Field(description="false: no game of the population went through this position")
    games: int = Field(description="games through this position")
    candidates: list[CandidateOut] = Field(description="most played first")
    usage_move: str | None = Field(description=USAGE_MOVE)
    coevolution_move: str | None = Field(description=COEVOLUTION_MOVE)
    stones: list[Stone]
    algorithm: str | None = Field(default=None, description="minimax: the fields below are set")
    value: float | None = Field(default=None, description="minimax book: the position's value, player to move")
    lcb: float | None = Field(default=None)
    ucb: float | None = Field(default=None)
    own_value: float | None = Field(default=None, description="minimax book: the best move outside the book")
    own_move: str | None = Field(default=None, description=(
        "minimax book: that move, the position's own deep search's best move not in the book (null: every "
        "legal move is in the book)"))
    own_lcb: float | None = Field(default=None, description="minimax book: the lower bound of ``own_value``")
    own_ucb: float | None = Field(default=None, description="minimax book: its upper bound")
    own_visits: int | None = Field(default=None, description="minimax book: visits of the search behind "
                                                              "``own_value``")
    playouts: int | None = Field(default=None, description="minimax book: playouts of the position's own search")
    score_mean: float | None = Field(default=None, description=(
        "minimax book: the mean final score (area score less komi) for the player to move in the position's own "
        "search; null: not measured"))
    backed_up_score: float | None = Field(default=None, description=(
        "minimax book: the score for the player to move on the line of ``value``; null: not known"))
    backed_up_result: str | None = Field(default=None, description=(
        "minimax book: ``backed_up_score`` as a result, whoever leads: B+3.5, W+0.5, 0"))
    kind: str | None = Field(default=None, description=(
        "search-valued for a minimax book's answer (the fields above are set); absent from a statistical "
        "book's answer, which is the command line's form exactly"))


class MoveOut(BaseModel):
    """The answer for a bot: out of book is an ordinary answer (``move`` null), as the Lichess
    explorer answers an unknown position with an empty list."""

    book: str
    moves: list[str] = Field(description="the moves replayed, normalised")
    to_move: Color
    in_book: bool = Field(description="false: no game of the population went through this position")
    move: str | None = Field(description="the move to play: the usage rule's (``usage_move``); null: out of book, "
                                         "or no move has won a game here")
    usage_move: str | None = Field(description=USAGE_MOVE)
    coevolution_move: str | None = Field(description=COEVOLUTION_MOVE)
    games: int = Field(description="games with ``move`` here (0 when null)")
    wins: int = Field(description="of them, won by the player making it")
    winrate: float | None = Field(description="(wins + draws / 2) / games of ``move``; null when ``move`` is")
    games_url: str | None = Field(default=None, description="sample games through ``move``, as each candidate's "
                                                             "``games_url`` in ``/lookup``")


# ---- games -------------------------------------------------------------------------------------


class GameOut(BaseModel):
    id: int
    book: str
    status: str
    moves: list[str]
    n_moves: int
    origins: str = Field(description="per move: b book, m mutation (search), s seed")
    result: str | None
    winner: Color | None
    score: float | None = Field(description="Black's area score minus komi")
    source: str
    lease_owner: str | None = Field(description="who plays it now; for anonymous clients a pseudonym (its kind and a "
                                                "digest), never a name that could take the game")
    lease_until: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime
    finished_at: dt.datetime | None


class GameList(Page):
    total: int | None = Field(description="games in the list; null with ``through`` (not counted: a page costs "
                                          "its own rows only)")
    items: list[GameOut]
    after: int | None = Field(None, description="the cursor this page was asked with")
    next_after: int | None = Field(None, description="pass as ``after`` for the next page (null: no more games); "
                                                     "keyset pages go by id, newest first, and never skip nor repeat "
                                                     "a game while the book grows")


# ---- progress ----------------------------------------------------------------------------------


class RatePointOut(BaseModel):
    start: dt.datetime
    end: dt.datetime
    games: int
    per_hour: float


class GrowthPointOut(BaseModel):
    at: dt.datetime
    finished: int


class UnitRatePointOut(BaseModel):
    start: dt.datetime
    end: dt.datetime
    units: int = Field(description="units done in [start, end): self-play games, or expansions")
    per_hour: float


class UnitGrowthPointOut(BaseModel):
    at: dt.datetime
    done: int = Field(description="the book's size then: finished games (seeds included), or expansions done")


class InFlightGame(BaseModel):
    id: int
    moves: list[str]
    n_moves: int
    to_move: Color
    lease_owner: str | None = Field(description="who plays it; a pseudonym for anonymous clients")
    updated_at: dt.datetime
    stones: list[Stone]


class SetAsideGame(BaseModel):
    id: int
    failures: int
    reason: str | None = Field(description="the last failure: the error's type and message (anonymous clients: "
                                           "its type only)")


class BookProgress(BaseModel):
    name: str
    size: int
    algorithm: str
    games_finished: int
    games_in_progress: int
    games_last_hour: int = Field(description="self-play games finished in the last hour")
    games_per_hour: float = Field(description="the same, as a rate (equal to games_last_hour)")
    rate: list[RatePointOut] = Field(description="games finished in slices of the last hour")
    growth: list[GrowthPointOut] = Field(description="finished games over the book's life")
    in_flight: list[InFlightGame] = Field(description="games being played now, most recently moved first")
    in_flight_total: int
    games_set_aside: int = Field(0, description="games whose play failed OBOOK_MAX_GAME_FAILURES times: not played "
                                                "again nor replaced")
    set_aside: list[SetAsideGame] = Field(default_factory=list, description="the newest of them, with their reasons")
    games_at_move_cap: int = Field(0, description="finished self-play games the move cap ended (3 x size^2 moves): "
                                                  "a cycle the rules allowed, or a game nobody could finish")
    expansions_done: int | None = Field(None, description="minimax book: expansions done (it has no games; "
                                                          "in_flight lists the expansions being searched now)")
    expansions_pending: int | None = Field(None, description="minimax book: expansions scheduled, not done")
    expansions_set_aside: int | None = Field(None, description="minimax book: expansions that failed "
                                                               "OBOOK_MAX_GAME_FAILURES times (listed in set_aside)")
    kind: str = Field("self-play", description="self-play (statistical: mbm, mvbm, beta) or search-valued (minimax)")
    unit: str = Field("game", description="the book's unit of work: game or expansion (what in_flight lists)")
    units_done: int = Field(0, description="units done: finished games (``games_finished``), or expansions done")
    units_open: int = Field(0, description="units not done: games in progress, or expansions scheduled")
    units_set_aside: int = Field(0, description="units set aside after OBOOK_MAX_GAME_FAILURES failures")
    units_last_hour: int = Field(0, description="units done in the last hour (the sum of unit_rate)")
    unit_rate: list[UnitRatePointOut] = Field(default_factory=list, description=(
        "units done in slices of the last hour, either kind: self-play games (as ``rate``) or expansions"))
    unit_growth: list[UnitGrowthPointOut] = Field(default_factory=list, description=(
        "the book's size over its life in its unit, either kind: finished games (as ``growth``) or expansions "
        "done"))
    export_url: str = Field("", description="the book as SGF (``export.sgf``)")


class WorkerOut(BaseModel):
    id: str = Field(description="the worker's name; for anonymous clients a pseudonym (its kind and a digest)")
    host: str | None = Field(description="its host name (admin token only)")
    pid: int | None = Field(description="its process id (admin token only)")
    kind: str
    book: str | None
    game_id: int | None
    moves: list[str] = Field(description="the sequence it is playing now")
    started_at: dt.datetime
    last_seen: dt.datetime


class Totals(BaseModel):
    books: int
    games_finished: int
    games_in_progress: int
    games_last_hour: int
    games_per_hour: float
    live_workers: int
    expansions_done: int = Field(0, description="expansions done in every minimax book")


class ProgressOut(Page):
    generated_at: dt.datetime
    totals: Totals
    books: list[BookProgress]
    workers: list[WorkerOut]


class HealthOut(BaseModel):
    status: Literal["ok", "error"]
    database: str | None = Field(None, description="the database (URL without its password; admin token only)")
    schema_revision: str | None
    detail: str | None = None


class CacheCleared(BaseModel):
    cleared: int
