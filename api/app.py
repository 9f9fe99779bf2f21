"""The FastAPI app: ``create_app(database_url)`` wires the settings, the store, the routers, the
error answers and the dashboard. Run it with ``obook serve`` (or ``uvicorn --factory api.app:create_app``).

Errors are answers, never tracebacks: an unknown book or game is 404, a malformed or illegal move
422 naming the move and the reason, a lookup or export of a book made by another engine version 409
naming both versions, a database that cannot be reached 503. What would help an
attacker (the database's URL and host, worker host names and pids, lease owners) is shown only to
a request with the admin token; anonymous clients get the same answers without it.
"""

from __future__ import annotations

import logging
import os
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from api.deps import is_admin
from api.fastpath import CachedLookups
from api.head import HeadAsGet
from api.limiters import ServiceBusy
from api.routers import books, games, progress
from api.schemas import HealthOut
from api.service import BookService, GameNotFound
from obook import __version__
from obook.book.keys import EngineMismatch
from obook.config import Settings, settings as default_settings
from obook.errors import ObookError
from obook.store.books import BookNotFound
from obook.store.db import StoreError, open_store

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
BUSY_RETRY_SECONDS = 5  # a refused export's Retry-After: about one export's time
ANONYMOUS_UNAVAILABLE = "the database cannot be reached; try again later"  # no URL, host or server message


def create_app(database_url: str | None = None, settings: Settings | None = None) -> FastAPI:
    settings = settings or default_settings()
    store = open_store(database_url or settings.database_url, check=False)
    # Swagger UI (/docs) and ReDoc (/redoc) from the files fastapi-offline ships, not from a CDN: they
    # render on a machine without Internet access.
    app = FastAPIOffline(
        lifespan=_lifespan,
        title="obook",
        version=__version__,
        description="Opening books for Go built of deep searches backed up by minimax, or by Monte-Carlo "
                    "self-play (MBM/MVBM, Beta): look positions up, "
                    "follow the build. Moves are GTP vertices (E5, pass) from the empty board.",
    )
    app.state.settings = settings
    app.state.redact_key = os.urandom(32)  # keys the pseudonyms anonymous clients see (api.views.pseudonym)
    app.state.service = BookService(store, threads=settings.api_threads, cache_seconds=settings.api_cache_seconds,
                                    cache_size=settings.api_cache_size, fresh_seconds=settings.api_fresh_seconds,
                                    cache_mb=settings.api_cache_mb, export_cache_mb=settings.api_export_cache_mb,
                                    db_timeout=settings.api_db_timeout, export_queue=settings.api_export_queue)
    for router in (books.router, games.router, progress.router):
        app.include_router(router)
    app.add_middleware(CachedLookups, service=app.state.service)
    origins = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origins:  # outside the routes and api/fastpath.py: cached answers and errors get the CORS headers too
        app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "If-None-Match"], expose_headers=["ETag"], max_age=600)
    app.add_middleware(HeadAsGet)  # outermost: every layer and route below sees a GET
    _add_error_answers(app)
    _add_pages(app)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI):
    """At shutdown, close the service's own connections on the loop that made them."""
    yield
    await app.state.service.close()


def _add_error_answers(app: FastAPI) -> None:
    async def not_found(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    async def conflict(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=409)

    async def bad_input(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": validation_message(exc)}, status_code=422)

    async def unavailable(request: Request, exc: Exception) -> JSONResponse:
        log.warning("database unavailable: %s", exc)  # the operator reads the reason in the log
        return JSONResponse({"detail": str(exc) if is_admin(request) else ANONYMOUS_UNAVAILABLE}, status_code=503)

    async def busy(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": str(BUSY_RETRY_SECONDS)})

    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(ServiceBusy, busy)
    app.add_exception_handler(BookNotFound, not_found)
    app.add_exception_handler(GameNotFound, not_found)
    app.add_exception_handler(StoreError, unavailable)
    app.add_exception_handler(EngineMismatch, conflict)
    app.add_exception_handler(ObookError, bad_input)


def validation_message(exc: RequestValidationError) -> str:
    """FastAPI's list of problems as one sentence, so that every error answer has a string ``detail``:
    "query parameter limit: Input should be less than or equal to 200"."""
    problems = []
    for error in exc.errors():
        where, *names = error.get("loc", ()) or ("request",)
        label = {"query": "query parameter", "path": "path parameter", "header": "header"}.get(where, where)
        problems.append(f"{label} {'.'.join(str(n) for n in names)}: {error.get('msg', 'invalid')}".replace("  ", " "))
    return "; ".join(problems) or "invalid request"


def _add_pages(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/healthz", response_model=HealthOut, tags=["health"],
             responses={503: {"model": HealthOut, "description": "the database is unreachable or at another schema"}})
    async def healthz(request: Request) -> JSONResponse:
        """Whether the database answers and is at this obook's schema."""
        service: BookService = request.app.state.service
        healthy, revision, problem = await service.run(service.health)
        admin = is_admin(request)
        if problem is not None and not admin:
            problem = ("the database is not at this obook's schema: run `obook db upgrade`" if "schema" in problem
                       else ANONYMOUS_UNAVAILABLE)
        body = HealthOut(status="ok" if healthy else "error", database=service.store.name if admin else None,
                         schema_revision=revision, detail=problem)
        return JSONResponse(body.model_dump(), status_code=200 if healthy else 503)

    @app.get("/dashboard", include_in_schema=False)
    async def dashboard() -> FileResponse:
        return FileResponse(STATIC / "dashboard.html", media_type="text/html")

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:
        return RedirectResponse("/dashboard")
