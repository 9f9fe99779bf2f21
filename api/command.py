"""``obook serve``: the book service (JSON API under /v1 and the dashboard) with one uvicorn worker."""

from __future__ import annotations

import gc
import logging
import sys

from obook.config import settings
from obook.errors import ObookError
from obook.store.db import open_store


def register(subparsers) -> None:
    p = subparsers.add_parser("serve", help="serve the book API (/v1, /docs) and the live dashboard (/dashboard)")
    p.add_argument("--db", default=None, metavar="URL",
                   help="database URL or SQLite path (default: OBOOK_DATABASE_URL, else sqlite:///obook.db)")
    p.add_argument("--host", default=None, help="address to listen on (default: OBOOK_API_HOST, 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default: OBOOK_API_PORT, 8000)")
    p.add_argument("--access-log", action="store_true", help="log every request (off: it costs throughput)")
    p.add_argument("--log-level", default="info", choices=("critical", "error", "warning", "info", "debug"),
                   help="uvicorn's and obook's log level (default info)")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args) -> int:
    import uvicorn  # lazy: the service extra, loaded when `obook serve` runs

    from api.app import create_app  # lazy: the service extra, loaded when `obook serve` runs

    config = settings()
    host = args.host or config.api_host
    port = config.api_port if args.port is None else args.port
    if not 0 <= port <= 65535:
        raise ObookError(f"--port {port}: must be 0 to 65535")
    store = open_store(args.db or config.database_url, check=False)
    store.check_schema()  # a server that cannot answer anything should not start
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = create_app(store.url)
    app.state.service.warm_up()
    # Everything loaded so far (numba's compiled code, SQLAlchemy, pydantic) lives as long as the
    # process: out of the collector's sight, its full collections take milliseconds, not 200 ms.
    gc.collect()
    gc.freeze()
    # The event loop is busy with cached answers while threads wait for the database: hand the GIL
    # over every millisecond rather than every five, or each of their steps waits 5 ms for it.
    sys.setswitchinterval(0.001)
    print(f"obook serve: {store.name} on http://{host}:{port}  (dashboard /dashboard, API /v1, docs /docs)",
          file=sys.stderr)
    uvicorn.run(app, host=host, port=port, workers=1, access_log=args.access_log, log_level=args.log_level)
    return 0
