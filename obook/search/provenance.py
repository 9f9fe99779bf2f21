"""What a search is, exactly: every option's value and a digest of the knowledge it reads.

A book is only as comparable as its searches. A spec of the options that differ from the defaults
(``SearchConfig.to_spec``) stops naming the engine once a default changes (ladders and the learned
prior became defaults after books were built with ``playouts=30000``), and the move model or the
shape counts can be refitted under the same options. So a book records ``SearchConfig.to_full_spec`` (every option,
defaults included) and ``knowledge_digest`` at its creation, and ``engine_differences`` says what
today's engine would do differently with it: a build or a worker refuses to mix two engines in one
book unless told to.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib

from obook.errors import ObookError
from obook.search.config import SearchConfig
from obook.search.movemodel import MODEL_PATH
from obook.search.shapes import COUNTS_PATH

KNOWLEDGE_FILES = (MODEL_PATH, COUNTS_PATH)  # the learned data every search may read
DIGEST_PREFIX = "sha256:"


@functools.cache
def knowledge_digest() -> str:
    """A digest of the learned files the search reads (a missing file counts as absent, as the
    search then runs without it)."""
    digest = hashlib.sha256()
    for path in KNOWLEDGE_FILES:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"(absent)")
        digest.update(b"\0")
    return DIGEST_PREFIX + digest.hexdigest()[:16]


def engine_differences(spec: str, knowledge: str | None) -> list[str]:
    """What this obook's search would do differently from the recorded one (``spec`` a full spec,
    ``knowledge`` its digest; ``None``: nothing was recorded). Empty: the same engine."""
    if knowledge is None:
        return ["the book records no engine (it was made before obook recorded the full search and its knowledge)"]
    differences = []
    recorded = {item.partition("=")[0].strip() for item in spec.split(",") if item.strip()}
    try:
        config = SearchConfig.from_spec(spec)
    except ObookError as exc:
        return [f"its search is not this obook's: {exc}"]
    for f in dataclasses.fields(config):
        if f.name not in recorded:
            differences.append(f"search option {f.name} is new since the book was made "
                               f"(this obook would use {f.name}={getattr(config, f.name)!r})")
    if knowledge != knowledge_digest():
        differences.append(f"the learned move model or shape counts differ (book {knowledge}, "
                           f"this obook {knowledge_digest()})")
    return differences


def describe_engine(spec: str, knowledge: str | None) -> str:
    """One line for people: the options that differ from today's defaults, the knowledge digest,
    and whether this obook's engine is the recorded one."""
    try:
        short = SearchConfig.from_spec(spec or None).to_spec() or "today's defaults"
    except ObookError:
        short = spec
    differences = engine_differences(spec, knowledge)
    state = "this obook's engine" if not differences else f"not this obook's engine ({differences[0]})"
    return f"search {short}; knowledge {knowledge or 'not recorded'}; {state}"
