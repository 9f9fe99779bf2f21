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
- ``OBOOK_BROKER_TIMEOUT`` bounds every Redis connection (kombu's ``socket_timeout``, its connect
  timeout, keepalives, and redis-py's health check before a command on a connection idle that long):
  kombu's default is to wait for ever, so a broker that stopped answering (a NAT that forgot the
  connection, a frozen machine) hung the driver's publish, and with it the build, for ever. Now the
  publish fails within a few timeouts (Celery retries it once on a new connection), the driver logs
  it and sends the unit again when its token expires (issue 33, item 5). A worker's consumer on a
  silent connection is dropped and reconnected by kombu's own check of its BRPOP
  (``health_check_interval``).
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
        "broker_transport_options": {
            "visibility_timeout": s.visibility_timeout,
            "socket_timeout": s.broker_timeout,  # above kombu's BRPOP poll (1 s): the setting's minimum is 2
            "socket_connect_timeout": s.broker_timeout,
            "socket_keepalive": True,
            "health_check_interval": max(int(s.broker_timeout), 2),
        },
        "broker_connection_timeout": s.broker_timeout,
        "task_publish_retry_policy": {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5},
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
