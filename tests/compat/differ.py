"""What the differential tests compare, and how an answer is made comparable.

An answer (status code and JSON body) becomes a *shape*: every value replaced by its JSON
type, except the values a client acts on (``status``, ``task_state``, an error's
``code``, ``status`` and ``title``), which are kept after ``normalise`` has put
``<uuid>``, ``<time>`` and ``<host>`` in place of identifiers, times and host names, in
keys as in values. ``compare`` lists the paths where two shapes differ; a difference that
``differences.LISTED`` names (with why berth differs) is accepted, any other fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE)
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
REQ = re.compile(r"req-<uuid>")
KEPT = {"status", "task_state", "code", "title"}


def normalise(value: Any, hosts: tuple[str, ...] = ()) -> Any:
    """Identifiers, times and the given host names replaced, in keys and in strings."""
    if isinstance(value, dict):
        return {normalise(k, hosts): normalise(v, hosts) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, hosts) for v in value]
    if isinstance(value, str):
        value = TIME.sub("<time>", UUID.sub("<uuid>", value))
        value = REQ.sub("<req>", value)
        for host in hosts:
            if host:
                value = value.replace(host, "<host>")
    return value


def _type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "bool", int: "number", float: "number", str: "string"}.get(type(value), "?")


def shape(value: Any, key: str = "") -> Any:
    """JSON types in place of values, but for the values in ``KEPT``."""
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(v, key) for v in value[:1]]     # a list's type is its first item's
    if key in KEPT and not isinstance(value, (dict, list)):
        return value
    return _type(value)


def compare(a: Any, b: Any, path: str = "") -> list[str]:
    """The paths where shapes ``a`` (berth) and ``b`` (Zun) differ, each with both sides."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            p = f"{path}.{k}" if path else k
            if k not in a:
                out.append(f"{p}: missing in berth (Zun: {b[k]!r})")
            elif k not in b:
                out.append(f"{p}: missing in Zun (berth: {a[k]!r})")
            else:
                out.extend(compare(a[k], b[k], p))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if a and b:
            return compare(a[0], b[0], f"{path}[]")
        return []
    if a != b:
        return [f"{path or '<body>'}: berth {a!r}, Zun {b!r}"]
    return []


@dataclass
class Answer:
    status: int
    body: Any

    def shape(self, hosts: tuple[str, ...] = ()) -> Any:
        return {"status_code": self.status, "body": shape(normalise(self.body, hosts))}


@dataclass
class Tally:
    """What a run did, for its report: scenarios, requests, differences."""
    scenarios: int = 0
    requests: int = 0
    listed: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)

    def report(self) -> str:
        lines = [(f"{self.scenarios} scenarios, {self.requests} requests on each side; "
                 f"{len(self.listed)} listed differences, {len(self.unlisted)} unlisted")]
        lines += [f"  listed:   {d}" for d in self.listed]
        lines += [f"  UNLISTED: {d}" for d in self.unlisted]
        return "\n".join(lines)
