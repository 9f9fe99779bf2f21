"""The grid's Celery layer: ``workers.app`` (configuration), ``workers.tasks`` (one task per slice
of a game, a thin call into ``obook.grid.slices``). Start a worker with ``obook worker``."""
