"""The grid's Celery layer: ``workers.app`` (configuration), ``workers.tasks`` (one task per slice
of a game, a thin call into ``obook.grid.slices``). Start a worker with ``obook worker``, or as Celery
users type it, ``celery -A workers worker``.

``workers.app`` and ``workers.celery`` name the Celery app, loaded on first use: ``obook`` imports
``workers.command`` at every start, which must not load Celery (nor need it installed).
"""


def __getattr__(name: str):
    if name in ("app", "celery"):  # Celery's -A looks for these; workers/app.py is also a module name
        from workers.app import app  # lazy: `obook` registers `obook grid` without loading Celery

        return app
    raise AttributeError(f"module 'workers' has no attribute {name!r}")
