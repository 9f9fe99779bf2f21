# One image for every obook service (migrate, api, driver, worker); the command picks the role.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    OBOOK_NUMBA_CACHE=/opt/obook/numba

WORKDIR /app
COPY pyproject.toml README.md LICENSE alembic.ini constraints.txt ./
COPY obook ./obook
COPY workers ./workers
COPY api ./api
COPY migrations ./migrations
# The versions the tests last passed with (constraints.txt), not whatever is newest today; then the
# engine compiled into the image's numba cache: a container's first move only loads it.
RUN pip install -c constraints.txt '.[all]' \
    && obook warm-up \
    && useradd --system --uid 1000 obook \
    && chown -R obook /opt/obook

USER obook
CMD ["obook", "--help"]
