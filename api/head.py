"""HEAD answered as GET without the body (RFC 9110 §9.3.2).

FastAPI routes a ``@router.get`` for GET only, so HEAD on any lookup, list, export or page would be
405. Rewriting the method once, outside every other layer, gives each GET route (and the cached
lookups of ``api.fastpath``, which answer GET only) its HEAD with the same status and headers,
Content-Length and ETag included, without declaring a second operation per route in the OpenAPI
schema.
"""

from __future__ import annotations


class HeadAsGet:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def send_without_body(message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_without_body)
