"""Progress: what the grid is doing now, for the dashboard and for people with curl."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from api.deps import INTEGER, Admin, Offset, Reveal, Service
from api.service import PROGRESS_BOOKS, PROGRESS_UNITS, PROGRESS_WORKERS
from api.views import redact_progress
from api.schemas import BAD_INPUT, UNAVAILABLE, ErrorOut, CacheCleared, ProgressOut

router = APIRouter(tags=["progress"], responses={**BAD_INPUT, **UNAVAILABLE})


@router.get("/v1/progress", response_model=ProgressOut)
async def progress(request: Request, service: Service, reveal: Reveal, offset: Offset = 0,
                   limit: Annotated[int, Query(ge=1, le=PROGRESS_BOOKS, description="books (at most 50)"), INTEGER] = 20,
                   games_limit: Annotated[int, Query(ge=0, le=PROGRESS_UNITS, description=(
                       "units in flight (games, expansions) per book, each replayed for its board")), INTEGER] = 8,
                   workers_limit: Annotated[int, Query(ge=0, le=PROGRESS_WORKERS,
                                                       description="live workers listed"), INTEGER] = 50,
                   ) -> ProgressOut:
    """Totals, games per hour over the last hour, the games being played now with their moves and
    boards, the book's growth, and the live workers with what each is playing, for every book.
    Worker host names, pids and lease owners' names need the admin token (pseudonyms otherwise)."""
    out = await service.run_heavy(service.progress, limit, offset, games_limit, workers_limit)
    return out if reveal else redact_progress(out, request.app.state.redact_key)


@router.post("/v1/admin/cache/clear", response_model=CacheCleared, dependencies=[Admin], tags=["admin"], responses={
    401: {"model": ErrorOut, "description": "missing or wrong admin token"},
    403: {"model": ErrorOut, "description": "the server has no admin token: admin endpoints are closed"}})
async def clear_cache(service: Service) -> CacheCleared:
    """Forget the cached lookup answers (after repairing a book's statistics). Needs the admin token."""
    cleared = service.clear()
    return CacheCleared(cleared=cleared)
