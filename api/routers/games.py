"""Games: one game as JSON or SGF."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.caching import FINISHED, FINISHED_STATUSES, REVALIDATE, body_tag, cached_response
from api.deps import GameId, Reveal, Service
from api.views import redact_game
from api.schemas import BAD_INPUT, UNAVAILABLE, ErrorOut, GameOut

router = APIRouter(prefix="/v1/games", tags=["games"], responses={**BAD_INPUT, **UNAVAILABLE})

NOT_FOUND = {404: {"model": ErrorOut, "description": "no game with that id"}}
NOT_MODIFIED = {304: {"description": "If-None-Match named the current ETag: the game has not changed"}}


# Declared before "/{game_id}": that route would otherwise take "12.sgf" and reject it as no integer.
@router.get("/{game_id}.sgf", response_class=Response, responses={
    200: {"content": {"application/x-go-sgf": {"schema": {"type": "string"}}}, "description": "the game as SGF"},
    **NOT_FOUND, **NOT_MODIFIED})
async def game_sgf(request: Request, game_id: GameId, service: Service) -> Response:
    """The game as SGF. ETag: a digest of the record; a finished game's may be kept an hour."""
    text, status = await service.run_heavy(service.game_sgf, game_id)
    data = text.encode()
    return cached_response(request, data, body_tag(data), "application/x-go-sgf", _cache_control(status),
                           headers={"Content-Disposition": f'attachment; filename="game-{game_id}.sgf"'})


@router.get("/{game_id}", response_model=GameOut, responses={**NOT_FOUND, **NOT_MODIFIED})
async def game(request: Request, game_id: GameId, service: Service, reveal: Reveal) -> Response:
    """One game; its lease owner's name needs the admin token (a pseudonym otherwise). ETag: a
    digest of the answer (the admin's and the anonymous answers differ: ``Vary: Authorization``)."""
    out = await service.run(service.game_out, game_id)
    if not reveal:
        out = redact_game(out, request.app.state.redact_key)
    data = out.model_dump_json().encode()
    return cached_response(request, data, body_tag(data), "application/json", _cache_control(out.status),
                           headers={"Vary": "Authorization"})


def _cache_control(status: str) -> str:
    return FINISHED if status in FINISHED_STATUSES else REVALIDATE
