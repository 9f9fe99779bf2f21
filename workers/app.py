"""The Celery app of the grid, configured from the obook settings (``OBOOK_BROKER_URL``,
``OBOOK_QUEUE``...). Its settings answer Celery's traps:

- ``task_acks_late``: a message is acknowledged after its task ran, so a preempted worker's task
  is delivered again; with Redis an unacknowledged message also comes back after
  ``visibility_timeout``, possibly while it still runs. Both are harmless (the store's lease decides
  who plays) and the second cannot happen: a task is one slice of a game (``slice_seconds`` plus one
  move), far below the visibility timeout.
- ``task_reject_on_worker_lost``: a child killed by a signal has its message requeued instead of
  acknowledged as failed.
- ``worker_prefetch_multiplier = 1`` (and ``-O fair`` from ``obook worker``): a worker reserves only
  what it runs, so games are not hoarded by a busy worker while another is idle.
- JSON only, no result backend: the store holds every result.
"""

from __future__ import annotations

from celery import Celery

from obook.config import settings


def celery_config() -> dict:
    s = settings()
    return {
        "broker_url": s.broker_url,
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,  # a broker restart is waited out
        "broker_transport_options": {"visibility_timeout": s.visibility_timeout},
        "task_default_queue": s.queue,
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "worker_prefetch_multiplier": 1,
        "worker_cancel_long_running_tasks_on_connection_loss": False,  # a slice stores its own moves
        "worker_soft_shutdown_timeout": float(s.soft_shutdown_seconds),
        "worker_hijack_root_logger": False,
        "worker_send_task_events": False,
    }


app = Celery("obook", include=["workers.tasks"])
app.conf.update(celery_config())
