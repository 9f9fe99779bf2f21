"""The grid: games played in bounded slices by Celery workers that come and go, kept in play by
the driver. Nothing here imports Celery; ``workers/`` wires these functions to it."""
