"""Alembic environment: the URL comes from the caller (``obook db upgrade --db``) or OBOOK_DATABASE_URL."""

from alembic import context

from obook.store.db import Store
from obook.store.urls import normalise_url
from obook.store.models import Base

config = context.config


def _url() -> str:
    url = config.attributes.get("url") or config.get_main_option("sqlalchemy.url")
    if not url:
        from obook.config import settings

        url = settings().database_url
    return normalise_url(url)


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=Base.metadata, literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    store = Store(_url())
    try:
        with store.writer.connect() as connection:
            context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
    finally:
        store.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
