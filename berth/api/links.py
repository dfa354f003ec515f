"""Links in responses: built from ``[api]public_endpoint`` when set (so they work
behind a proxy with a path prefix, which Zun's do not), else from the request."""

from __future__ import annotations

from fastapi import Request


def base_url(request: Request) -> str:
    public = getattr(request.app.state, "public_endpoint", None)
    if public:
        return public.rstrip("/")
    headers = request.headers
    # From the scope, not request.url: building the URL cost a status poll more than
    # the rest of its links (request.url is read only when no Host header came).
    proto = (headers.get("x-forwarded-proto") or request.scope.get("scheme") or "http"
             ).split(",")[0].strip()
    host = headers.get("x-forwarded-host") or headers.get("host") or \
        f"{request.url.hostname}:{request.url.port}"
    return f"{proto}://{host.split(',')[0].strip()}"


def links(request: Request, collection: str, ident: str) -> list[dict[str, str]]:
    base = base_url(request)
    return [{"href": f"{base}/v1/{collection}/{ident}", "rel": "self"},
            {"href": f"{base}/{collection}/{ident}", "rel": "bookmark"}]
