"""Alembic migrations of the obook store (``obook db upgrade`` or ``alembic upgrade head``)."""
