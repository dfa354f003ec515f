"""berth's JSON response: the same bytes as Starlette's (compact, UTF-8, no ASCII
escaping) rendered by orjson, which costs a fraction of the stdlib encoder: a list of
1,000 containers spent a sixth of its server time in ``json.dumps``.

A response never fails for one value it holds: a lone surrogate (stored by a berth
that let one in, issue 42) is rendered as U+FFFD and logged with the uuid of the
object that holds it, so that one bad row does not turn a whole list into a 500."""

from __future__ import annotations

import json
import logging
from typing import Any

import orjson
from starlette.responses import JSONResponse as _StarletteJSONResponse

from berth.common import unstorable

LOG = logging.getLogger(__name__)


def dumps(content: Any) -> bytes:
    """Compact JSON of ``content``. The stdlib renders what orjson refuses (an
    integer beyond 64 bits), so no value that used to render fails now; a string
    UTF-8 cannot encode is rendered with U+FFFD (``renderable``)."""
    try:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        pass
    try:
        return _stdlib_dumps(content)
    except UnicodeEncodeError:
        return _stdlib_dumps(renderable(content))


def _stdlib_dumps(content: Any) -> bytes:
    return json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None,
                      separators=(",", ":")).encode("utf-8")


#: (object, field) already logged by ``renderable``: a list the console polls would
#: log the same row every time (at most ``_LOGGED_MAX`` remembered).
_logged: set[tuple[str, str]] = set()
_LOGGED_MAX = 10_000


def renderable(content: Any) -> Any:
    """``content`` with U+FFFD for each lone surrogate, logged (once per process):
    which object (the ``uuid`` of the innermost one on the way that has one) and which
    of its fields."""
    fixed, changed = unstorable.replaced(content)
    for path in changed:
        owner, field = _located(content, path)
        key = (owner, unstorable.field_name(field))
        if key in _logged or len(_logged) >= _LOGGED_MAX:
            continue
        _logged.add(key)
        LOG.warning("rendered %s of %s with U+FFFD for characters UTF-8 cannot encode (a "
                    "lone surrogate stored by an older berth); `berth-status upgrade "
                    "check` names such rows", key[1], owner)
    return fixed


def _located(content: Any, path: tuple[str | int, ...]) -> tuple[str, tuple[str | int, ...]]:
    """(``uuid <uuid>`` of the innermost object on ``path`` that has one, else ``the
    response``; the rest of ``path`` from that object)."""
    owner, start, node = "the response", 0, content
    for index, step in enumerate(path):
        if isinstance(node, dict) and isinstance(node.get("uuid"), str):
            owner, start = f"uuid {node['uuid']}", index
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            break
    return owner, path[start:]


class JSONResponse(_StarletteJSONResponse):
    def render(self, content: Any) -> bytes:
        return dumps(content)
