"""Books: the list, a position's candidate moves, the book move for bots, the book as SGF."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from api.caching import cached_response, matches
from api.deps import INTEGER, MAX_GAME_ID, BookName, Limit, MinGames, Moves, Offset, Reveal, Service
from api.views import redact_game
from api.schemas import BAD_INPUT, OTHER_ENGINE, UNAVAILABLE, BookList, ErrorOut, GameList, LookupOut, MoveOut

router = APIRouter(prefix="/v1/books", tags=["books"], responses={**BAD_INPUT, **UNAVAILABLE})

NOT_FOUND = {404: {"model": ErrorOut, "description": "no book of that name"}}
BAD_MOVES = {422: {"model": ErrorOut, "description": "a malformed or illegal move (named, with the reason) or "
                                                     "another parameter the service cannot use"}}


@router.get("", response_model=BookList)
async def list_books(service: Service, limit: Limit = 50, offset: Offset = 0) -> BookList:
    """The books with their rules, algorithm and games finished and in progress."""
    total, items = await service.run(service.list_books, limit, offset)
    return BookList(total=total, limit=limit, offset=offset, items=items)


NOT_MODIFIED = {304: {"description": "If-None-Match named the current ETag: the answer has not changed"}}


@router.get("/{book}/lookup", response_model=LookupOut, responses={**NOT_FOUND, **BAD_MOVES, **NOT_MODIFIED, **OTHER_ENGINE})
async def lookup(request: Request, book: BookName, service: Service, moves: Moves = "",
                 min_games: MinGames = 1) -> Response:
    """The position after ``moves``: every move the population played there (symmetries and
    transpositions resolved, in the caller's orientation) with games, wins, win rate and share of
    the won games, the usage rule's move and the coevolution move. ETag: the book's state (304 to
    ``If-None-Match`` while the book has no new finished game)."""
    body, tag = await service.lookup_body(book, moves, min_games)
    return cached_response(request, body, tag, "application/json")


@router.get("/{book}/move", response_model=MoveOut, responses={**NOT_FOUND, **BAD_MOVES, **NOT_MODIFIED, **OTHER_ENGINE})
async def book_move(request: Request, book: BookName, service: Service, moves: Moves = "",
                    min_games: MinGames = 1) -> Response:
    """The move a bot plays after ``moves``: the usage rule's (``move``), with the coevolution rule's
    beside it. Out of book is an ordinary answer: 200 with ``move: null`` (``in_book: false`` when no
    game went through the position); an unknown book is 404, an illegal move 422. ETag as ``/lookup``."""
    body, tag = await service.move_body(book, moves, min_games)
    return cached_response(request, body, tag, "application/json")


@router.get("/{book}/games", response_model=GameList, responses=NOT_FOUND)
async def list_games(request: Request, book: BookName, service: Service, reveal: Reveal, limit: Limit = 50,
                     offset: Offset = 0,
                     status: Annotated[str | None, Query(pattern="^(in_progress|finished|abandoned|set_aside)$")] = None,
                     after: Annotated[int | None, Query(ge=0, le=MAX_GAME_ID, description=(
                         "keyset paging: 0 for the first page, then the previous page's ``next_after``; pages go "
                         "by id, newest first (with ``through``: by record), so a growing book neither skips nor "
                         "repeats a game")), INTEGER] = None,
                     through: Annotated[str | None, Query(max_length=4000, description=(
                         'sample games through a line, "E5,G5": the finished games whose record starts with these '
                         "moves or with one of their images under the board's 8 symmetries (shown as they were "
                         "played). Games that reached the same position by another move order (transpositions) "
                         "are not included, so there may be fewer than the lookup's ``games``. Pages go by record "
                         "then id with the ``after`` cursor (no ``offset``, no ``total``); each page reads only "
                         "its own rows of an index. What each lookup candidate's ``games_url`` asks"))] = None,
                     ) -> GameList:
    """The book's games, most recently changed first (``offset`` pages), or by id with the ``after``
    cursor (``next_after`` of each page), or the sample games through a line (``through``); lease
    owners' names need the admin token."""
    out = await service.run_heavy(service.games, book, status, limit, offset, after, through)
    if reveal:
        return out
    key = request.app.state.redact_key
    return out.model_copy(update={"items": [redact_game(g, key) for g in out.items]})


@router.get("/{book}/export.sgf", response_class=Response, responses={
    200: {"content": {"application/x-go-sgf": {"schema": {"type": "string"}}}, "description": "the book as SGF"},
    **NOT_FOUND, **NOT_MODIFIED, **OTHER_ENGINE})
async def export_sgf(request: Request, book: BookName, service: Service,
                     min_games: Annotated[int, Query(ge=0, le=1_000_000_000, description=(
                         "leave out moves with fewer games (0 and 1: every move of the book; a minimax book "
                         "writes every move)")), INTEGER] = 1,
                     depth: Annotated[int | None, Query(ge=1, le=400, description="moves from the root"), INTEGER] = None,
                     max_nodes: Annotated[int, Query(ge=1, le=20000, description="book moves written"), INTEGER] = 5000,
                     ) -> Response:
    """The book as one SGF game tree: a node per book move with games, wins and win rate. ETag:
    the book's state; a client that has the current export gets 304 without it being made again."""
    tag = await service.run(service.book_tag, book)
    if matches(request.headers.get("if-none-match"), tag):
        return cached_response(request, b"", tag, "application/x-go-sgf")
    data = await service.run_export(service.export_sgf, book, max(1, min_games), depth, max_nodes)
    return cached_response(request, data, tag, "application/x-go-sgf",
                           headers={"Content-Disposition": f'attachment; filename="{_ascii(book)}.sgf"'})


def _ascii(name: str) -> str:
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
