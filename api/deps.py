"""The dependencies every router takes: the service of this app, the common query parameters
(with their limits, so that no request can ask for an unbounded list), and the admin token."""

from __future__ import annotations

import hmac
import json
from typing import Annotated

from fastapi import Depends, HTTPException, Path, Query, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BeforeValidator

from api.service import MAX_GAME_ID, BookService

MAX_LIMIT = 200
MAX_OFFSET = 1_000_000_000
# What `obook build --book` accepts (no whitespace in Python's sense), without control characters. Spelled
# out rather than \s, which means other characters in Python and in the schema's (ECMAScript) regexes.
BOOK_NAME = r"^[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]{1,100}$"


def _json_integer(value: object) -> object:
    """The schema says integer, and in JSON Schema that is a JSON number of integral value ("64",
    "64.0", "6.4e1"): pydantic's lax parsing alone also reads "+0.0", "007" or " 5" as integers and
    answers requests the schema forbids."""
    if not isinstance(value, str):
        return value
    try:
        number = json.loads(value) if value == value.strip() else None
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, int | float) or not float(number).is_integer():
        raise ValueError("an integer written as a JSON number")
    return int(number)


# Goes last in each integer parameter's Annotated, after its Query or Path, which keeps the schema's bounds.
INTEGER = BeforeValidator(_json_integer)


def get_service(request: Request) -> BookService:
    return request.app.state.service


Service = Annotated[BookService, Depends(get_service)]
BookName = Annotated[str, Path(description="the book's name", min_length=1, max_length=100, pattern=BOOK_NAME)]
Moves = Annotated[str, Query(max_length=4000, description='moves from the empty board: "E5,G5", "e5 g5" or "pass"; '
                                                          "empty for the empty board")]
MinGames = Annotated[int, Query(ge=1, le=1_000_000_000,
                                description="the usage rule ignores moves with fewer games"), INTEGER]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"page size (at most {MAX_LIMIT})"), INTEGER]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="items to skip"), INTEGER]
GameId = Annotated[int, Path(ge=1, le=MAX_GAME_ID, description="the game's id"), INTEGER]

_bearer = HTTPBearer(auto_error=False, description="OBOOK_ADMIN_TOKEN")


def require_admin(request: Request,
                  credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    """Endpoints that change anything need ``Authorization: Bearer $OBOOK_ADMIN_TOKEN``; with no
    token configured they are closed to everyone."""
    token = request.app.state.settings.admin_token
    if not token:
        raise HTTPException(403, "admin endpoints are disabled: the server has no OBOOK_ADMIN_TOKEN")
    given = credentials.credentials if credentials is not None else ""
    if not hmac.compare_digest(given.encode(), token.encode()):
        raise HTTPException(401, "missing or wrong admin token", headers={"WWW-Authenticate": "Bearer"})


Admin = Depends(require_admin)


def is_admin(request: Request) -> bool:
    """Whether the request carries the admin token (``Authorization: Bearer $OBOOK_ADMIN_TOKEN``).
    Anonymous clients get the same answers with what would help an attacker left out: the
    database's URL and host, worker host names and pids, and the lease owners' real names
    (``api.views.redact_*``)."""
    token = request.app.state.settings.admin_token
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    return bool(token) and scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


Reveal = Annotated[bool, Depends(is_admin)]
