"""Alembic from inside obook: ``obook db upgrade`` and the schema check every command makes."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from obook.store.urls import normalise_url


def _script_location() -> str:
    beside = Path(__file__).resolve().parents[2] / "migrations"
    if (beside / "env.py").exists():
        return str(beside)
    spec = importlib.util.find_spec("migrations")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the obook migrations are not installed")
    return str(Path(list(spec.submodule_search_locations)[0]))


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", _script_location())
    if url:
        config.attributes["url"] = normalise_url(url)
    return config


@lru_cache(maxsize=1)
def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def upgrade(url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)
