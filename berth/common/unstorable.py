"""Characters that berth cannot store or pass on, declared once (issue 42).

JSON lets a string carry any code unit as an escape, and Python decodes
``"\\ud800"`` (a lone UTF-16 surrogate) and ``"\\u0000"`` (NUL) into a ``str`` without
complaint. The layers below do not take them:

* a lone surrogate is not a character: UTF-8 cannot encode it, so the response that
  renders it, a log line, PostgreSQL, MariaDB and SQLite's text all fail on it (a JSON
  column stores it escaped, so the row is made and then breaks every list it is in);
* NUL ends a C string: PostgreSQL's text and JSON refuse it, and so do a Docker
  container's environment, command and labels, and a path in an archive.

Such a string is refused where it comes in (``berth.api.body``, the request's path,
query and headers in ``berth.api.middleware``); a row that holds one all the same
(stored by an older berth) is rendered with U+FFFD in place of each lone surrogate
(``replaced``) and named by ``berth-status upgrade check``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

#: One character berth cannot store or pass on: NUL or a surrogate code point (a
#: pair never reaches Python as two: the JSON decoder joins it into one character).
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
#: A surrogate alone: what UTF-8 cannot encode (a NUL renders as ``\u0000``).
SURROGATE = re.compile("[\ud800-\udfff]")
#: The JSON escapes that decode into an unstorable character (``\\u0000``,
#: ``\\ud800``-``\\udfff``), on the raw bytes: a body without any needs no walk.
ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
REPLACEMENT = "\ufffd"


def escaped(text: str) -> str:
    """``text`` with each unstorable character written as its JSON escape, so that it
    can be shown in a message (``abc\\ud800``)."""
    return UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def why(text: str) -> str:
    """What is wrong with ``text`` (which holds an unstorable character), in a user's
    words, and what to send instead."""
    found = UNSTORABLE.search(text)
    if found is not None and found.group() == "\x00":
        return ("It holds a NUL character (\\u0000), which the database and the "
                "container engine cannot store; leave it out.")
    return ("It holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), which is "
            "not a character and cannot be encoded in UTF-8; send the character itself "
            "or its full surrogate pair.")


def field_name(path: tuple[str | int, ...]) -> str:
    """``spec.containers[0].command[1]`` for the path ``spec, containers, 0, command, 1``."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or "(the body)"


def unstorable_strings(value: Any, path: tuple[str | int, ...] = ()
                       ) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each (path, string) in the JSON value ``value`` that holds an unstorable
    character, keys included (a key's path ends with the key itself, escaped)."""
    if isinstance(value, str):
        if UNSTORABLE.search(value):
            yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            name = str(key)
            if UNSTORABLE.search(name):
                yield (*path, escaped(name)), name
                name = escaped(name)
            yield from unstorable_strings(item, (*path, name))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from unstorable_strings(item, (*path, index))


def first_unstorable(value: Any) -> tuple[str, str] | None:
    """(field name, string) of the first unstorable string in ``value``, or None."""
    for path, text in unstorable_strings(value):
        return field_name(path), text
    return None


def replaced(value: Any) -> tuple[Any, list[tuple[str | int, ...]]]:
    """``value`` with U+FFFD for each lone surrogate of its strings and keys (a copy
    only where something changed), and the paths that changed."""
    changed: list[tuple[str | int, ...]] = []
    return _replace(value, (), changed), changed


def _replace(value: Any, path: tuple[str | int, ...],
             changed: list[tuple[str | int, ...]]) -> Any:
    if isinstance(value, str):
        if SURROGATE.search(value) is None:
            return value
        changed.append(path)
        return SURROGATE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and SURROGATE.search(key):
                changed.append((*path, escaped(key)))
                key = SURROGATE.sub(REPLACEMENT, key)
            out[key] = _replace(item, (*path, str(key)), changed)
        return out
    if isinstance(value, (list, tuple)):
        return [_replace(item, (*path, index), changed) for index, item in enumerate(value)]
    return value
