"""A property-based fuzz of the whole OpenAPI schema (schemathesis): for every operation, valid and
invalid parameters, on SQLite and PostgreSQL; no answer may be a server error or disagree with the
schema (status codes, content types, bodies).

The cases come from schemathesis's strategies inside a Hypothesis test of our own (rather than its
pytest plugin) so that each database fixture serves every operation."""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation import GenerationMode

from api.app import create_app
from obook.config import Settings
from tests.api.test_api import GAMES, add_game

FUZZ_EXAMPLES = int(os.environ.get("OBOOK_FUZZ_EXAMPLES", "25"))  # per operation, mode and database: about a minute


def operations(app) -> dict[str, object]:
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    found = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        found[operation.label] = operation
    return found


def cases() -> list[tuple[str, GenerationMode]]:
    """Every operation with valid data, and those with parameters with invalid data too."""
    spec = create_app("sqlite:///:memory:").openapi()
    found = []
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            label = f"{method.upper()} {path}"
            found.append((label, GenerationMode.POSITIVE))
            if operation.get("parameters"):
                found.append((label, GenerationMode.NEGATIVE))
    return sorted(found)


CASES = cases()
LABELS = {label for label, _ in CASES}


def test_the_schema_covers_every_endpoint():
    assert {"GET /v1/books", "GET /v1/books/{book}/lookup", "GET /v1/books/{book}/move", "GET /v1/progress",
            "GET /v1/games/{game_id}", "GET /v1/games/{game_id}.sgf", "GET /v1/books/{book}/export.sgf",
            "GET /healthz"} <= LABELS


@pytest.fixture
def fuzz_app(store):
    from obook.book.library import BookSettings, ensure_book

    book = ensure_book(store, "demo", BookSettings(size=9, komi=7.5, algorithm="mvbm"))
    for moves, winner in GAMES:
        add_game(store, book, moves, winner)
    return create_app(store.url, Settings(admin_token="fuzz-token"))


@pytest.mark.parametrize("label, mode", CASES, ids=[f"{label} {mode.value}" for label, mode in CASES])
def test_no_server_error_anywhere(fuzz_app, label, mode):
    operation = operations(fuzz_app)[label]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    def answers_well(case):
        case.call_and_validate()

    answers_well()
