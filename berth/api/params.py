"""Zun's parameter binding (api-v1.md §1.1): query parameters and the top-level keys
of a JSON body form one parameter set; on a clash the query string wins. The
literal string ``None`` (what zunclient sends for an unset value) means absent."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from fastapi import Request

from berth.api import body
from berth.common import exceptions as exc


async def read_json_body(request: Request, required: bool = False,
                         binary: Collection[str] = ()) -> Any:
    """The parsed JSON body, or None when there is none. With ``required`` the body
    must be JSON (415 otherwise). A body that is too large, nested too deeply, holds
    a NUL or lone surrogate (but for a NUL in a top-level ``binary`` field), or says it
    is JSON and does not parse is a 400 (``berth.api.body``); a body that does not
    say it is JSON is ignored where none is required."""
    raw = await body.read_bounded(request)
    ctype = request.headers.get("content-type", "")
    is_json = "json" in ctype.lower()
    if required and "application/json" not in ctype.lower():
        raise exc.UnsupportedMediaType(content_type=ctype or "(none)")
    if not raw.strip():
        return None
    try:
        return body.decode(raw, binary)
    except exc.InvalidParameterValue:
        raise                                   # JSON, with a field berth cannot take
    except exc.Invalid:
        if required or is_json:
            raise
        return None


async def merged(request: Request, binary: Collection[str] = ()) -> dict[str, Any]:
    """Query parameters merged over the JSON body's top-level keys (``binary``: see
    ``read_json_body``)."""
    body = await read_json_body(request, binary=binary)
    out: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
    for key, value in request.query_params.items():
        out[key] = value
    return out


def absent(value: Any) -> bool:
    return value is None or value == "None"
