"""HTTP caching of the service's answers: ETag, Cache-Control and conditional requests (304).

A lookup, a bot's move or an export changes only when the book does, so their ETag is the book's
state: its id and its number of finished games (every finished game adds statistics; the count is
what ``BookService`` already checks about every ``OBOOK_API_FRESH_SECONDS``), with the obook version
(a new release may serialise differently). The tag is the same in every process of the service and
after a restart, and checking it costs no replay: a client that sends ``If-None-Match`` with the tag
it has gets ``304 Not Modified`` without a body. A game record's tag is a digest of the answer itself
(the anonymous and the admin's answers differ, and so do their tags). The answers are
``Cache-Control: no-cache`` (keep it, but ask again: a book being built changes every second) except a
finished game's, which does not change.

A book repaired by ``obook verify --repair`` keeps its count: like the lookup cache, its tags then
change only with its next finished game (``POST /v1/admin/cache/clear`` does not change them).
"""

from __future__ import annotations

import hashlib

from starlette.requests import Request
from starlette.responses import Response

from obook import __version__

REVALIDATE = "public, no-cache"
FINISHED = "public, max-age=3600"
FINISHED_STATUSES = ("finished", "abandoned")


def book_tag(book_id: int, finished: int) -> str:
    return f'"b{book_id}.{finished}.{__version__}"'


def body_tag(body: bytes) -> str:
    return '"' + hashlib.blake2b(body, digest_size=12).hexdigest() + '"'


def matches(if_none_match: str | None, tag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``tag`` (weak comparison, as RFC 9110 asks for it)."""
    if not if_none_match:
        return False
    wanted = tag.removeprefix("W/")
    for given in if_none_match.split(","):
        given = given.strip()
        if given == "*" or given.removeprefix("W/") == wanted:
            return True
    return False


def cached_response(request: Request, body: bytes, tag: str, media_type: str, cache_control: str = REVALIDATE,
                    headers: dict[str, str] | None = None) -> Response:
    """``body`` with its ETag and Cache-Control, or 304 when the client has it already."""
    common = {"ETag": tag, "Cache-Control": cache_control, **(headers or {})}
    if matches(request.headers.get("if-none-match"), tag):
        return Response(status_code=304, headers={k: v for k, v in common.items() if k != "Content-Disposition"})
    return Response(body, media_type=media_type, headers=common)
