"""Lookups answered before FastAPI's routing.

A lookup that the service answered a moment ago is in ``BookService.answers`` with its JSON bytes; going
through routing, dependency injection and validation again to return those bytes costs several
times more than the answer itself (about 0.4 ms against 0.05 ms on this project's machines), which
decides whether one worker sustains thousands of lookups a second. This ASGI layer serves such a
hit directly, and computes a miss with the call the route makes (``BookService.answer``):
with the replay compiled, routing was a third of an uncached lookup's CPU. It answers only requests
the route would accept as they are, with the route's headers: anything unusual in the request (an
unknown or repeated parameter, a value the route would reject) and any failure (an unknown book, an
illegal move, the database away) goes on to FastAPI, which validates and answers with its message.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from api.caching import REVALIDATE, matches
from api.deps import BOOK_NAME
from api.service import BookService, LookupAnswer, split_query_moves
from obook.errors import ObookError

LOOKUP_PATH = re.compile(r"^/v1/books/([^/]+)/lookup$")
BOOK = re.compile(BOOK_NAME)
DIGITS = re.compile(r"^[0-9]{1,10}$")
HEADERS = [(b"content-type", b"application/json"), (b"cache-control", REVALIDATE.encode())]


class CachedLookups:
    def __init__(self, app, service: BookService):
        self.app = app
        self.service = service

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            match = LOOKUP_PATH.match(scope["path"])
            if match is not None:
                question = self.question(match.group(1), scope["query_string"])
                if question is not None:
                    found = await self.found(*question)
                    if found is not None:
                        await self.answer(scope, send, found.lookup_json, found.tag)
                        return
        await self.app(scope, receive, send)

    async def found(self, book: str, spelled: tuple[str, ...], min_games: int) -> LookupAnswer | None:
        """The route's answer (``BookService.answer``: a cache hit on the event loop, a miss on the
        loop or in the service's threads), without FastAPI's routing, dependencies and validation: a
        third of the CPU of an uncached lookup once its replay is compiled (issue 20, item 9).
        ``None`` on any error (an unknown book, a bad move, the database away): the route then
        answers it, with its message."""
        try:
            return await self.service.answer(book, spelled, min_games)
        except Exception:  # noqa: BLE001 - FastAPI's handlers answer errors; the request goes to them
            return None

    async def answer(self, scope, send, body: bytes, tag: str) -> None:
        headers = HEADERS + [(b"etag", tag.encode())]
        if matches(_header(scope, b"if-none-match"), tag):
            await send({"type": "http.response.start", "status": 304, "headers": headers})
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": headers + [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def question(self, book: str, query_string: bytes) -> tuple[str, tuple[str, ...], int] | None:
        """(book, the moves as spelled, min_games) of a lookup the route would accept as it is,
        ``None`` for anything unusual (FastAPI then validates and answers it)."""
        if not BOOK.fullmatch(book):
            return None
        params = parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)
        names = [name for name, _ in params]
        if len(set(names)) != len(names) or not set(names) <= {"moves", "min_games"}:
            return None
        values = dict(params)
        moves = values.get("moves", "")
        min_games = values.get("min_games", "1")
        if len(moves) > 4000 or not DIGITS.match(min_games) or not 1 <= int(min_games) <= 1_000_000_000:
            return None
        try:
            spelled = split_query_moves(moves)
        except ObookError:
            return None
        return book, spelled, int(min_games)


def _header(scope, name: bytes) -> str | None:
    values = [value.decode("latin-1") for key, value in scope["headers"] if key == name]
    return ", ".join(values) if values else None
