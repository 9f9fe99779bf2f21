"""Games: one game as JSON or SGF."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from api.deps import GameId, Reveal, Service
from api.views import redact_game
from api.schemas import BAD_INPUT, UNAVAILABLE, ErrorOut, GameOut

router = APIRouter(prefix="/v1/games", tags=["games"], responses={**BAD_INPUT, **UNAVAILABLE})

NOT_FOUND = {404: {"model": ErrorOut, "description": "no game with that id"}}


# Declared before "/{game_id}": that route would otherwise take "12.sgf" and reject it as no integer.
@router.get("/{game_id}.sgf", response_class=Response, responses={
    200: {"content": {"application/x-go-sgf": {"schema": {"type": "string"}}}, "description": "the game as SGF"},
    **NOT_FOUND})
async def game_sgf(game_id: GameId, service: Service) -> Response:
    text = await service.run_heavy(service.game_sgf, game_id)
    return Response(text.encode(), media_type="application/x-go-sgf",
                    headers={"Content-Disposition": f'attachment; filename="game-{game_id}.sgf"'})


@router.get("/{game_id}", response_model=GameOut, responses=NOT_FOUND)
async def game(request: Request, game_id: GameId, service: Service, reveal: Reveal) -> GameOut:
    """One game; its lease owner's name needs the admin token (a pseudonym otherwise)."""
    out = await service.run(service.game_out, game_id)
    return out if reveal else redact_game(out, request.app.state.redact_key)
