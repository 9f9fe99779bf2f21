"""KataGo's JSON analysis protocol (``katago analysis``), spoken by obook's search and book.

One JSON query a line on stdin, one JSON response a line on stdout per analysed turn, as
``docs/Analysis_Engine.md`` of KataGo describes; tools written for KataGo (review scripts, KaTrain-like
front ends, bots) can drive ``obook analysis`` instead. The subset spoken (``docs/analysis.md`` is
the user's page):

- queries: ``id``, ``moves``, ``initialStones``, ``initialPlayer``, ``rules``, ``komi``,
  ``boardXSize``/``boardYSize`` (square), ``analyzeTurns``, ``maxVisits``, ``includeOwnership``,
  ``includePolicy``, ``priority`` (accepted, queries run in order), ``overrideSettings`` (the search
  options of ``SearchConfig``, ``maxVisits`` and ``reportAnalysisWinratesAs``); the actions
  ``query_version``, ``terminate`` and ``clear_cache``;
- responses: ``id``, ``turnNumber``, ``isDuringSearch`` (always false: no reports during a search),
  ``moveInfos`` (``obook.search.report.kata_move_infos``, the same dicts as GTP's ``kata-analyze``),
  ``rootInfo``, ``ownership``, ``policy``; ``{"id", "error", "field"}`` for a bad query (nothing of
  it is analysed) and ``{"id", "warning", "field"}`` for a field obook ignores (the query runs).

The figures are reported from the perspective ``reportAnalysisWinratesAs`` sets, BLACK by default as
in KataGo's example analysis configuration (``--report-as``; per query in ``overrideSettings``).
obook scores by area: rules strings are accepted, their ko rule is honoured (positional superko for
tromp-taylor, aga, new-zealand and stone-scoring; simple ko else) and what is not (territory
scoring, suicide) draws a warning.

In a position of the book (``--book``), the move infos are the book's, each marked ``"book": true``:
a minimax book's value as ``winrate``, its lower bound as ``lcb``, the visits of the search behind
the value as ``visits``; a statistical book's win rate of its games, games as visits.

Queries are read on the calling thread and searched one turn at a time on a worker thread, so that
``terminate`` reaches a search in progress (which then reports what it found so far); at the end of
the input the queries already read are finished before ``serve`` returns, as KataGo does.
"""

from __future__ import annotations

import json
import math
import queue
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TextIO

from obook import __version__
from obook.book.kinds import book_kind
from obook.errors import IllegalMoveError, ObookError
from obook.go import board as rules
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position, parse_color
from obook.go.vertex import parse_vertex, point_of
from obook.playout.ownership import estimate_ownership
from obook.search.config import SearchConfig
from obook.search.player import CancelToken, Player
from obook.search.players import make_player
from obook.search.report import (
    has_priors,
    kata_move_infos,
    ownership_rows,
    priors,
    ranked_moves,
    root_scores,
    root_winrate,
)
from obook.search.result import SearchResult

REPORT_AS = ("BLACK", "WHITE", "SIDETOMOVE")
MAX_BOARD_SIZE = 19
MAX_KOMI = 150.0
# KataGo's rules shorthands: does the ko rule forbid every repetition (positional or situational
# superko; obook has positional), and what of the rules obook cannot honour.
RULES = {
    "tromp-taylor": (True, "suicide of more than one stone is illegal in obook"),
    "chinese": (False, None),
    "chinese-ogs": (True, None),
    "chinese-kgs": (True, None),
    "japanese": (False, "obook scores by area, not by territory"),
    "korean": (False, "obook scores by area, not by territory"),
    "aga": (True, None),
    "bga": (True, None),
    "new-zealand": (True, "suicide of more than one stone is illegal in obook"),
    "stone-scoring": (False, "obook scores by area, not by stones alone"),
}
# Fields of KataGo's queries that obook reads; ``priority``/``priorities`` are accepted silently
# (queries run in the order they arrive); every other field draws a warning.
FIELDS = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
          "analyzeTurns", "maxVisits", "includeOwnership", "includePolicy", "priority", "priorities",
          "overrideSettings", "action"}
SEARCH_OPTIONS = {f.name for f in fields(SearchConfig)}


class QueryError(Exception):
    """A query obook cannot analyse: its message, and the field at fault (None: the whole line)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


@dataclass
class Query:
    """One analysis query, checked: the positions of its turns and how to analyse them."""

    id: str
    turns: list[tuple[int, Position]]
    max_visits: int
    ownership: bool = False
    policy: bool = False
    report_as: str = "BLACK"
    config: SearchConfig | None = None  # None: the engine's own search
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (field, message)
    # What ``terminate`` asked: every turn (all), or these turn numbers.
    terminate_all: bool = False
    terminated: set[int] = field(default_factory=set)
    cancel: CancelToken | None = None  # the search running now, if any
    running_turn: int | None = None

    def is_terminated(self, turn: int) -> bool:
        return self.terminate_all or turn in self.terminated


def _flag(value, name: str) -> bool:
    if not isinstance(value, bool):
        raise QueryError(f"{name} must be true or false, not {json.dumps(value)}", name)
    return value


def _integer(value, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise QueryError(f"{name} must be an integer, not {json.dumps(value)}", name)
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise QueryError(f"{name} must be {bound}, not {value}", name)
    return value


def _color(value, label: str, name: str) -> int:
    try:
        return parse_color(value if isinstance(value, str) else "?")
    except IllegalMoveError:
        raise QueryError(f"{label}: invalid player {json.dumps(value)}: expected \"B\" or \"W\"", name) from None


def _moves(value, name: str, size: int) -> list[tuple[int, int]]:
    if not isinstance(value, list):
        raise QueryError(f"{name} must be a list of [player, location] pairs", name)
    moves = []
    for index, item in enumerate(value):
        if not isinstance(item, list) or len(item) != 2 or not all(isinstance(x, str) for x in item):
            raise QueryError(f"{name}[{index}]: expected a [player, location] pair of strings, not "
                             f"{json.dumps(item)}", name)
        color = _color(item[0], f"{name}[{index}]", name)
        try:
            point = parse_vertex(item[1], size)
        except IllegalMoveError as exc:
            raise QueryError(f"{name}[{index}]: {exc}", name) from None
        moves.append((color, point))
    return moves


def _rules(value, warnings: list[tuple[str, str]]) -> bool:
    """Whether the rules forbid every repetition (superko); warnings for what obook cannot honour."""
    if isinstance(value, str):
        name = value.strip().lower().replace("_", "-")
        if name not in RULES:
            raise QueryError(f"unknown rules {value!r}: known are {', '.join(RULES)}", "rules")
        superko, caveat = RULES[name]
        if caveat:
            warnings.append(("rules", f"{value}: {caveat}; the position is analysed under area scoring"))
        return superko
    if isinstance(value, dict):
        ko = str(value.get("koRule", "SIMPLE")).upper()
        if ko not in ("SIMPLE", "POSITIONAL", "SITUATIONAL"):
            raise QueryError(f"unknown koRule {value.get('koRule')!r}: expected SIMPLE, POSITIONAL or SITUATIONAL",
                             "rules")
        scoring = str(value.get("scoringRule", "AREA")).upper()
        if scoring != "AREA":
            warnings.append(("rules", f"scoringRule {scoring}: obook scores by area"))
        if value.get("multiStoneSuicideLegal"):
            warnings.append(("rules", "multiStoneSuicideLegal: suicide is illegal in obook"))
        return ko != "SIMPLE"
    raise QueryError("rules must be a string such as \"chinese\" or a JSON object", "rules")


def _overrides(value, base: SearchConfig, warnings: list[tuple[str, str]]) -> tuple[SearchConfig | None, dict]:
    """The search options ``overrideSettings`` changes (None: none) and its protocol settings
    (``maxVisits``, ``reportAnalysisWinratesAs``); a warning for every other key."""
    if not isinstance(value, dict):
        raise QueryError("overrideSettings must be a JSON object", "overrideSettings")
    spec, protocol = [], {}
    for key, setting in value.items():
        if key in ("maxVisits", "reportAnalysisWinratesAs"):
            protocol[key] = setting
        elif key.replace("-", "_") in SEARCH_OPTIONS and not isinstance(setting, (dict, list)):
            text = ("true" if setting else "false") if isinstance(setting, bool) else str(setting)
            spec.append(f"{key}={text}")
        else:
            warnings.append(("overrideSettings", f"{key}: not a setting of obook, ignored"))
    if not spec:
        return None, protocol
    try:
        return base.replace(**SearchConfig.parse_spec(",".join(spec))), protocol
    except (ObookError, ValueError, TypeError) as exc:
        raise QueryError(f"overrideSettings: {exc}", "overrideSettings") from None


def parse_query(data: dict, config: SearchConfig, max_visits: int, report_as: str) -> Query:
    """The query ``data`` (a JSON object with an ``id``) checked and its turns' positions built;
    raise ``QueryError`` naming the field at fault."""
    query_id = data["id"]
    warnings = [(key, f"unused field {key!r}") for key in data if key not in FIELDS]
    for name in ("boardXSize", "boardYSize"):
        if name not in data:
            raise QueryError(f"{name} is required", name)
    size = _integer(data["boardXSize"], "boardXSize", rules.MIN_SIZE, MAX_BOARD_SIZE)
    height = _integer(data["boardYSize"], "boardYSize", rules.MIN_SIZE, MAX_BOARD_SIZE)
    if height != size:
        raise QueryError(f"obook plays square boards only: boardXSize {size} but boardYSize {height}", "boardYSize")
    komi = data.get("komi", 7.5)
    if isinstance(komi, bool) or not isinstance(komi, (int, float)) or not math.isfinite(komi) \
            or abs(komi) > MAX_KOMI or komi * 2 != int(komi * 2):
        raise QueryError(f"komi must be an integer or half-integer in [-150, 150], not {json.dumps(komi)}", "komi")
    superko = _rules(data.get("rules", "chinese"), warnings)
    if "moves" not in data:
        raise QueryError("moves is required (an empty list for a position with no history)", "moves")
    moves = _moves(data["moves"], "moves", size)
    stones = _moves(data.get("initialStones", []), "initialStones", size)
    if any(point == PASS for _, point in stones):
        raise QueryError("initialStones: a stone cannot be a pass", "initialStones")
    if len({point for _, point in stones}) != len(stones):
        raise QueryError("initialStones: two stones on one point", "initialStones")
    if "initialPlayer" in data:
        first = _color(data["initialPlayer"], "initialPlayer", "initialPlayer")
    else:
        first = moves[0][0] if moves else BLACK
    try:
        position = Position(size=size, komi=float(komi), superko=superko,
                            setup_black=[p for c, p in stones if c == BLACK],
                            setup_white=[p for c, p in stones if c == WHITE], first_to_move=first)
    except IllegalMoveError as exc:
        raise QueryError(f"initialStones: {exc}", "initialStones") from None
    last = len(moves)
    turns_wanted = data.get("analyzeTurns", [last])
    if not isinstance(turns_wanted, list) or not turns_wanted:
        raise QueryError("analyzeTurns must be a non-empty list of turn numbers", "analyzeTurns")
    wanted = [_integer(t, "analyzeTurns", 0, last) for t in turns_wanted]
    positions = {}
    if 0 in wanted:
        positions[0] = position.copy()
    for index, (color, point) in enumerate(moves, start=1):
        try:
            position.play(point, color)
        except IllegalMoveError as exc:
            raise QueryError(f"moves[{index - 1}]: {exc}", "moves") from None
        if index in wanted:
            positions[index] = position.copy()
    visits = max_visits
    if "maxVisits" in data:
        visits = _integer(data["maxVisits"], "maxVisits", 1)
    search, protocol = (None, {})
    if "overrideSettings" in data:
        search, protocol = _overrides(data["overrideSettings"], config, warnings)
    if "maxVisits" in protocol and "maxVisits" not in data:
        visits = _integer(protocol["maxVisits"], "maxVisits", 1)
    report = str(protocol.get("reportAnalysisWinratesAs", report_as)).upper()
    if report not in REPORT_AS:
        raise QueryError(f"reportAnalysisWinratesAs must be one of {', '.join(REPORT_AS)}", "overrideSettings")
    return Query(id=query_id, turns=[(t, positions[t]) for t in wanted], max_visits=visits,
                 ownership=_flag(data.get("includeOwnership", False), "includeOwnership"),
                 policy=_flag(data.get("includePolicy", False), "includePolicy"),
                 report_as=report, config=search, warnings=warnings)


def flips(report_as: str, to_move: int) -> bool:
    """Whether the player to move's figures are turned over for ``reportAnalysisWinratesAs``."""
    return (report_as == "BLACK" and to_move == WHITE) or (report_as == "WHITE" and to_move == BLACK)


def as_reported(info: dict, flip: bool) -> dict:
    """A move info (or root info) of the player to move from the perspective reported: the win
    rate and lcb turned over (1 - x, as KataGo does) and the scores negated when ``flip``; the
    utility is obook's, win/loss only (2 winrate - 1)."""
    out = dict(info)
    if flip:
        for key in ("winrate", "lcb"):
            if key in out:
                out[key] = 1.0 - out[key]
        for key in ("scoreMean", "scoreLead"):
            if key in out:
                out[key] = -out[key]
    if "winrate" in out:
        out["utility"] = 2.0 * out["winrate"] - 1.0
    return out


class AnalysisEngine:
    """One session of the protocol over a search player and, optionally, a book
    (``obook.book.player.BookPlayer``); see the module docstring."""

    def __init__(self, player: Player, out: TextIO, book=None, log: TextIO | None = None,
                 max_visits: int = 500, report_as: str = "BLACK", ownership_playouts: int = 1000):
        if report_as.upper() not in REPORT_AS:
            raise ObookError(f"--report-as must be one of {', '.join(REPORT_AS)}, not {report_as!r}")
        self.player = player
        self.book = book
        self.out = out
        self.log = log if log is not None else sys.stderr
        self.max_visits = max_visits
        self.report_as = report_as.upper()
        self.ownership_playouts = ownership_playouts
        self.queue: queue.Queue = queue.Queue()
        self.lock = threading.Lock()  # the pending queries and the output
        self.pending: list[Query] = []

    # ---- the session ------------------------------------------------------------------------

    def serve(self, lines: Iterable[str]) -> None:
        """Answer every line of ``lines``; return when the input ends and every query is done."""
        worker = threading.Thread(target=self._work, name="obook-analysis", daemon=True)
        worker.start()
        try:
            for line in lines:
                if line.strip():
                    self.handle_line(line)
        except BaseException:  # Ctrl-C, a closed pipe: stop every search rather than finish it
            self.terminate_all()
            raise
        finally:
            self.queue.put(None)
            worker.join()

    def terminate_all(self) -> None:
        with self.lock:
            for query in self.pending:
                query.terminate_all = True
                if query.cancel is not None:
                    query.cancel.cancel()

    def write(self, message: dict) -> None:
        text = json.dumps(message, separators=(",", ":"), allow_nan=False)
        with self.lock:
            self.out.write(text + "\n")
            self.out.flush()

    def handle_line(self, line: str) -> None:
        """One input line: an action answered at once, or a query checked and queued."""
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            self.write({"error": f"could not parse JSON: {exc}"})
            return
        if not isinstance(data, dict):
            self.write({"error": "a query must be a JSON object"})
            return
        if not isinstance(data.get("id"), str):
            self.write({"error": "the field 'id' is required and must be a string", "field": "id"})
            return
        try:
            if "action" in data:
                self.handle_action(data)
                return
            query = parse_query(data, self.player.config, self.max_visits, self.report_as)
        except QueryError as exc:
            message = {"id": data["id"], "error": str(exc)}
            if exc.field:
                message["field"] = exc.field
            self.write(message)
            return
        except Exception as exc:  # noqa: BLE001 - one bad query must not end the session
            self._internal_error(data["id"], exc)
            return
        for name, warning in query.warnings:
            self.write({"id": query.id, "warning": warning, "field": name})
        with self.lock:
            self.pending.append(query)
        self.queue.put(query)

    def _internal_error(self, query_id: str, exc: Exception) -> None:
        """A fault of obook's, not of the query: an error response, one line on stderr, and on."""
        print(f"obook analysis: query {query_id!r} failed: {type(exc).__name__}: {exc}", file=self.log, flush=True)
        self.write({"id": query_id, "error": f"internal error: {type(exc).__name__}: {exc}"})

    def handle_action(self, data: dict) -> None:
        action = data["action"]
        if action == "query_version":
            self.write({**data, "version": __version__, "git_hash": "<omitted>"})
        elif action == "clear_cache":
            self.queue.put(("clear_cache", data))  # between searches: the worker answers
        elif action == "terminate":
            target = data.get("terminateId")
            if not isinstance(target, str):
                raise QueryError("terminate needs terminateId, the id of the queries to stop", "terminateId")
            turns = data.get("turnNumbers")
            if turns is not None and (not isinstance(turns, list)
                                      or not all(isinstance(t, int) and not isinstance(t, bool) for t in turns)):
                raise QueryError("turnNumbers must be a list of integers", "turnNumbers")
            with self.lock:
                for query in self.pending:
                    if query.id != target:
                        continue
                    if turns is None:
                        query.terminate_all = True
                    else:
                        query.terminated.update(turns)
                    if query.cancel is not None and query.running_turn is not None \
                            and query.is_terminated(query.running_turn):
                        query.cancel.cancel()
            self.write(dict(data))
        else:
            raise QueryError(f"unknown action {action!r}: known are query_version, terminate, clear_cache", "action")

    # ---- the worker -------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            if isinstance(item, tuple):
                self.player.new_game()
                self.write(dict(item[1]))
                continue
            try:
                self._analyse(item)
            except Exception as exc:  # noqa: BLE001 - a failed query must not end the session
                self._internal_error(item.id, exc)
            finally:
                with self.lock:
                    self.pending.remove(item)

    def _analyse(self, query: Query) -> None:
        player = make_player(query.config) if query.config is not None else self.player
        try:
            for turn, position in query.turns:
                cancel = CancelToken()
                with self.lock:
                    skip = query.is_terminated(turn)
                    query.cancel, query.running_turn = cancel, turn
                if skip:
                    self.write({"id": query.id, "isDuringSearch": False, "noResults": True, "turnNumber": turn})
                    continue
                self.write(self.response(query, turn, position, player, cancel))
        finally:
            with self.lock:
                query.cancel = query.running_turn = None
            if player is not self.player:
                player.close()

    def response(self, query: Query, turn: int, position: Position, player: Player, cancel: CancelToken) -> dict:
        """The response for one turn: the book's figures in a book position, else a search's."""
        flip = flips(query.report_as, position.to_move)
        book = self.book_infos(position)
        result = None
        if book is not None:
            infos, root = book
        elif position.passes >= 2:
            infos, root = finished_infos(position)
        else:
            player.new_game()
            result = player.genmove(position, playouts=query.max_visits, cancel=cancel)
            infos, root = search_infos(result, position.size)
        answer = {"id": query.id, "isDuringSearch": False, "turnNumber": turn,
                  "moveInfos": [as_reported(i, flip) for i in infos],
                  "rootInfo": {**as_reported(root, flip), "currentPlayer": "B" if position.to_move == BLACK else "W"}}
        if query.ownership:
            black = estimate_ownership(position, self.ownership_playouts, player.config.policy)
            seen_by = BLACK if query.report_as == "BLACK" else WHITE if query.report_as == "WHITE" else position.to_move
            answer["ownership"] = ownership_rows(black, position.size, seen_by)
        if query.policy:
            if result is not None and has_priors(result):
                answer["policy"] = policy_array(result, position)
            else:
                self.write({"id": query.id, "warning": "includePolicy: no prior here (a book position, a finished "
                            "game or a search without priors); policy omitted", "field": "includePolicy"})
        return answer

    def book_infos(self, position: Position) -> tuple[list[dict], dict] | None:
        """The book's move infos and root info in ``position`` (None: not a book position)."""
        if self.book is None or not self.book.applies_to(position):
            return None
        found = self.book.lookup(position)
        if not found.in_book:
            return None
        return book_kind(found.book).move_infos(found, position.size)


def search_infos(result: SearchResult, size: int) -> tuple[list[dict], dict]:
    """A search's move infos (every move with visits, best first) and root info, player to move."""
    shown = [s for s in ranked_moves(result) if s.visits > 0] or ranked_moves(result)[:1]
    infos = kata_move_infos(result, shown, size)
    mean, stdev = root_scores(result.moves)
    if mean is None and result.score_mean is not None:
        mean, stdev = result.score_mean, 0.0
    root = {"winrate": root_winrate(result),
            "visits": max(int(result.playouts), sum(i["visits"] for i in infos))}
    if mean is not None:
        root.update(scoreLead=mean, scoreMean=mean, scoreStdev=stdev)
    return infos, root


def finished_infos(position: Position) -> tuple[list[dict], dict]:
    """A finished game (two passes): pass, with the count as it stands, for the player to move."""
    score = position.score() if position.to_move == BLACK else -position.score()
    rate = 1.0 if score > 0 else 0.0 if score < 0 else 0.5
    info = {"move": "pass", "visits": 1, "winrate": rate, "scoreMean": score, "scoreStdev": 0.0,
            "scoreLead": score, "prior": 1.0, "lcb": rate, "order": 0, "pv": ["pass"]}
    return [info], {"winrate": rate, "scoreLead": score, "scoreMean": score, "scoreStdev": 0.0, "visits": 1}


def policy_array(result: SearchResult, position: Position) -> list[float]:
    """KataGo's ``policy``: the search's priors of its root moves (``obook.search.report.priors``),
    one value a point top row first and pass last; -1 where the player to move may not play."""
    size = position.size
    prior = priors(result)
    values = []
    for row in range(size - 1, -1, -1):
        for col in range(size):
            point = point_of(col, row, size)
            values.append(prior.get(point, 0.0) if position.is_legal(point) else -1.0)
    values.append(prior.get(PASS, 0.0))
    return values


__all__ = ["AnalysisEngine", "Query", "QueryError", "parse_query"]
