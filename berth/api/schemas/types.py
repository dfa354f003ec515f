"""Reusable field parsers (api-v1.md §1.1 rule 5 and the §7.2 field table).

Every parser has the shape ``parser(field, value, ...) -> normalised value`` and raises
:class:`InvalidParameterValue` (400) whose message reads
``Invalid input for field '<field>'. Value: '<value>'. <why, and what is accepted>``.
``None`` handling is left to the caller unless a parser says otherwise, so that a
caller can decide whether ``null`` means "use the default" or is an error.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable

from berth.common.exceptions import InvalidParameterValue

_MAX_SHOWN = 200
_DIGITS = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]*(\.[0-9]+)?")
NAME_PATTERN = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+")
_IMAGE_CHARS = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]")
HOSTNAME_PATTERN = re.compile(r"[a-zA-Z0-9-._]*")
HOSTNAME_DB_MAX = 63

STRICT_TRUE = frozenset({"true", "True"})
STRICT_FALSE = frozenset({"false", "False"})
EXTENDED_TRUE = frozenset({"true", "True", "TRUE", "1", "on", "On", "ON", "yes", "Yes", "YES"})
EXTENDED_FALSE = frozenset(
    {"false", "False", "FALSE", "0", "off", "Off", "OFF", "no", "No", "NO"}
)
LENIENT_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})
LENIENT_FALSE = frozenset({"0", "f", "false", "off", "n", "no"})

RESTART_POLICY_NAMES = ("no", "always", "on-failure", "unless-stopped")
HEALTHCHECK_INTS = ("interval", "retries", "timeout")


def show(value: object) -> str:
    """Render ``value`` for an error message: strings as-is, the rest as JSON, cut short."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, sort_keys=True, default=repr)
        except (TypeError, ValueError):
            text = repr(value)
    if len(text) > _MAX_SHOWN:
        text = text[:_MAX_SHOWN] + "..."
    return text


def invalid(field: str, value: object, why: str) -> InvalidParameterValue:
    """The 400 error for ``field``; ``why`` says what is wrong and what is accepted."""
    return InvalidParameterValue(
        err=f"Invalid input for field '{field}'. Value: '{show(value)}'. {why}"
    )


def is_none_string(value: object) -> bool:
    """True for ``None`` and for the literal string ``"None"``.

    zunclient sends ``str()`` of unset options, so ``"None"`` means "absent" for
    fields such as ``image_driver``, ``signal``, ``ps_args``, ``tag`` (§1.1 rule 4).
    """
    return value is None or value == "None"


def _bool(field: str, value: object, true: Iterable[str], false: Iterable[str],
          accepted: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        if value in true:
            return True
        if value in false:
            return False
    raise invalid(field, value, f"Expected a boolean: {accepted}.")


def strict_bool(field: str, value: object) -> bool:
    """JSON ``true``/``false`` or the strings ``true``/``True``/``false``/``False``."""
    return _bool(field, value, STRICT_TRUE, STRICT_FALSE,
                 "true or false (JSON booleans, or the strings true, True, false, False)")


def extended_bool(field: str, value: object) -> bool:
    """JSON booleans and true/True/TRUE/1/on/On/ON/yes/Yes/YES and their negatives."""
    return _bool(field, value, EXTENDED_TRUE, EXTENDED_FALSE,
                 "a JSON boolean, or one of true, True, TRUE, 1, on, On, ON, yes, Yes, YES "
                 "and false, False, FALSE, 0, off, Off, OFF, no, No, NO")


def lenient_bool(field: str, value: object) -> bool:
    """JSON booleans, 0/1, and 1/t/true/on/y/yes or 0/f/false/off/n/no in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        folded = value.strip().lower()
        if folded in LENIENT_TRUE:
            return True
        if folded in LENIENT_FALSE:
            return False
    raise invalid(field, value, "Expected a boolean: 1, t, true, on, y, yes or "
                                "0, f, false, off, n, no (any case).")


def integer(field: str, value: object, minimum: int | None = None,
            maximum: int | None = None, what: str = "an integer") -> int:
    """An integer given as a JSON integer (or integral number) or a string of digits.

    ``what`` names the quantity in the message (e.g. "a whole number of MiB").
    """
    bounds = _bounds_text(minimum, maximum)
    why = f"It must be {what} (a JSON integer or a string of digits){bounds}."
    number: int
    if isinstance(value, bool):
        raise invalid(field, value, why)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        if len(value) > 18:  # far beyond any bound, and int() of huge strings is slow
            raise invalid(field, value, why)
        number = int(value)
    else:
        raise invalid(field, value, why)
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        raise invalid(field, value, why)
    return number


def _bounds_text(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" between {minimum:g} and {maximum:g}"
    if minimum is not None:
        return f" of at least {minimum:g}"
    if maximum is not None:
        return f" of at most {maximum:g}"
    return ""


def memory(field: str, value: object, minimum: int, maximum: int) -> str:
    """Memory in MiB, ``minimum``..``maximum``; returned as a string (``"512"``)."""
    return str(integer(field, value, minimum, maximum, what="a whole number of MiB"))


def disk(field: str, value: object, minimum: int, maximum: int) -> int:
    """Disk size in GiB, ``minimum``..``maximum``."""
    return integer(field, value, minimum, maximum, what="a whole number of GiB")


def cpu(field: str, value: object, minimum: float, maximum: float) -> float:
    """A number of CPUs given as a JSON number or a decimal string (``"0.5"``)."""
    why = (f"It must be a number of CPUs between {minimum:g} and {maximum:g}, "
           f"given as a JSON number or a decimal string such as \"0.5\".")
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    decimal = isinstance(value, str) and 0 < len(value) <= 32 and bool(_DECIMAL.fullmatch(value))
    if not (numeric or decimal):
        raise invalid(field, value, why)
    number = float(value)  # type: ignore[arg-type]
    if not math.isfinite(number) or not minimum <= number <= maximum:
        raise invalid(field, value, why)
    return number


def string(field: str, value: object, min_length: int = 0, max_length: int | None = None,
           what: str = "a string") -> str:
    """A string whose length is within bounds."""
    if max_length is not None:
        why = f"It must be {what} of {min_length} to {max_length} characters."
    else:
        why = f"It must be {what} of at least {min_length} characters."
    if not isinstance(value, str):
        raise invalid(field, value, why)
    if len(value) < min_length or (max_length is not None and len(value) > max_length):
        raise invalid(field, value, why)
    return value


def container_name(field: str, value: object) -> str:
    """2–255 chars matching ``^[a-zA-Z0-9][a-zA-Z0-9_.-]+$``."""
    why = ("A name must be 2 to 255 characters long, start with a letter or digit and "
           "contain only letters, digits, '_', '.' and '-'.")
    if not isinstance(value, str) or not 2 <= len(value) <= 255:
        raise invalid(field, value, why)
    if not NAME_PATTERN.fullmatch(value):
        raise invalid(field, value, why)
    return value


def image_name(field: str, value: object) -> str:
    """2–255 chars containing a letter/digit followed by one of ``[a-zA-Z0-9_.-]``."""
    why = ("An image reference must be a string of 2 to 255 characters such as "
           "\"busybox\" or \"docker.io/library/nginx:1.25\" (it must contain a letter or "
           "digit followed by a letter, digit, '_', '.' or '-').")
    if not isinstance(value, str) or not 2 <= len(value) <= 255:
        raise invalid(field, value, why)
    if not _IMAGE_CHARS.search(value):
        raise invalid(field, value, why)
    return value


def host_name(field: str, value: object, max_length: int = 255) -> str:
    """1..``max_length`` chars of letters, digits, ``-``, ``.`` and ``_``."""
    why = f"It must be 1 to {max_length} characters of letters, digits, '-', '.' and '_'."
    if not isinstance(value, str) or not value or not HOSTNAME_PATTERN.fullmatch(value):
        raise invalid(field, value, why)
    if len(value) > max_length:
        raise invalid(field, value, f"It is {len(value)} characters long; at most "
                                    f"{max_length} are allowed. {why}")
    return value


def hostname(field: str, value: object) -> str:
    """A container hostname: the host-name grammar, capped at 63 chars (the DB column)."""
    return host_name(field, value, max_length=HOSTNAME_DB_MAX)


def enum(field: str, value: object, choices: Iterable[str], fold_case: bool = False) -> str:
    """One of ``choices``; with ``fold_case`` any case is accepted and lower-cased."""
    options = tuple(choices)
    if isinstance(value, str):
        candidate = value.lower() if fold_case else value
        if candidate in options:
            return candidate
    suffix = " (any case)" if fold_case else ""
    raise invalid(field, value, f"It must be one of: {', '.join(options)}{suffix}.")


def string_list(field: str, value: object) -> list[str]:
    """A JSON array of strings (e.g. ``["sh", "-c", "echo hi"]``)."""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise invalid(field, value, "It must be a JSON array of strings, "
                                    "e.g. [\"sh\", \"-c\", \"echo hi\"].")
    return list(value)


def string_dict(field: str, value: object) -> dict[str, str]:
    """An object whose values are strings (environment variables)."""
    why = ("It must be a JSON object mapping non-empty names without '=' to string values, "
           "e.g. {\"PATH\": \"/bin\"}.")
    if not isinstance(value, dict):
        raise invalid(field, value, why)
    for key, item in value.items():
        if not isinstance(key, str) or not key or "=" in key or not isinstance(item, str):
            raise invalid(field, value, why)
    return dict(value)


def labels(field: str, value: object) -> dict[str, str]:
    """An object of string labels (Docker only stores strings)."""
    why = "It must be a JSON object with string values, e.g. {\"tier\": \"web\"}."
    if not isinstance(value, dict):
        raise invalid(field, value, why)
    for key, item in value.items():
        if not isinstance(key, str) or not key or not isinstance(item, str):
            raise invalid(field, value, why)
    return dict(value)


def json_object(field: str, value: object) -> dict[str, object]:
    """Any JSON object (e.g. scheduler ``hints``)."""
    if not isinstance(value, dict):
        raise invalid(field, value, "It must be a JSON object.")
    return dict(value)


def restart_policy(field: str, value: object) -> dict[str, str]:
    """``{"Name": ..., "MaximumRetryCount": ...}`` -> the stored string-valued form.

    ``Name`` is required; the count defaults to ``"0"``, must be 0 for ``always`` and
    ``unless-stopped``, and is forced to ``"0"`` for ``no``.
    """
    names = ", ".join(RESTART_POLICY_NAMES)
    shape = (f"It must be an object {{\"Name\": <{names}>, \"MaximumRetryCount\": "
             f"<integer of at least 0>}}.")
    if not isinstance(value, dict):
        raise invalid(field, value, shape)
    extra = sorted(set(value) - {"Name", "MaximumRetryCount"})
    if extra:
        raise invalid(field, value, f"Unknown key(s) {', '.join(extra)}. {shape}")
    name = value.get("Name")
    if name not in RESTART_POLICY_NAMES:
        raise invalid(field, value, f"'Name' is required and must be one of: {names}.")
    raw = value.get("MaximumRetryCount")
    count = 0
    if raw is not None:
        try:
            count = integer(field, raw, 0)
        except InvalidParameterValue:
            raise invalid(field, value, "'MaximumRetryCount' must be an integer of at "
                                        "least 0 (a JSON integer or a string of digits).") from None
    if name in ("always", "unless-stopped") and count != 0:
        raise invalid(field, value, f"A maximum retry count is only meaningful with "
                                    f"'on-failure'; it must be 0 (or omitted) with '{name}'.")
    if name == "no":
        count = 0
    return {"Name": str(name), "MaximumRetryCount": str(count)}


def exposed_ports(field: str, value: object) -> dict[str, dict[str, object]]:
    """``{"80": {}, "53/udp": {}}`` -> ``{"80/tcp": {}, "53/udp": {}}``."""
    shape = ("It must be an object such as {\"80/tcp\": {}, \"53/udp\": {}}: each key a port "
             "from 1 to 65535 with an optional /tcp or /udp (default tcp), each value {}.")
    if not isinstance(value, dict):
        raise invalid(field, value, shape)
    ports: dict[str, dict[str, object]] = {}
    for key, item in value.items():
        port, _, proto = str(key).partition("/")
        proto = proto.lower() or "tcp"
        if (not _DIGITS.fullmatch(port) or len(port) > 5 or not 1 <= int(port) <= 65535
                or proto not in ("tcp", "udp")):
            raise invalid(field, value, f"Bad port {key!r}. {shape}")
        if item is not None and item != {}:
            raise invalid(field, value, f"The value for {key!r} must be {{}}. {shape}")
        ports[f"{int(port)}/{proto}"] = {}
    return ports


def healthcheck(field: str, value: object) -> dict[str, object]:
    """``{cmd, interval, retries, timeout}`` -> stored ``{test, interval, retries, timeout}``.

    ``cmd`` (a shell command) is required; the integers (seconds, or a count for
    ``retries``) default to 0, which lets Docker apply its own defaults.
    """
    shape = ("It must be an object {\"cmd\": <shell command>, \"interval\": <seconds>, "
             "\"retries\": <count>, \"timeout\": <seconds>} with integers of at least 0.")
    if not isinstance(value, dict):
        raise invalid(field, value, shape)
    extra = sorted(set(value) - {"cmd", *HEALTHCHECK_INTS})
    if extra:
        raise invalid(field, value, f"Unknown key(s) {', '.join(extra)}. {shape}")
    cmd = value.get("cmd")
    if not isinstance(cmd, str) or not cmd.strip() or len(cmd) > 255:
        raise invalid(field, value, f"'cmd' is required: a shell command of 1 to 255 "
                                    f"characters. {shape}")
    stored: dict[str, object] = {"test": cmd}
    for key in HEALTHCHECK_INTS:
        raw = value.get(key)
        try:
            stored[key] = 0 if raw is None else integer(field, raw, 0)
        except InvalidParameterValue:
            raise invalid(field, value, f"'{key}' must be an integer of at least 0. "
                                        f"{shape}") from None
    return stored


def security_groups(field: str, value: object) -> list[str]:
    """A list of security group names/ids (1–255 chars each), duplicates removed."""
    why = "It must be a JSON array of security group names or ids of 1 to 255 characters."
    if not isinstance(value, list):
        raise invalid(field, value, why)
    groups: list[str] = []
    for item in value:
        if not isinstance(item, str) or not 1 <= len(item) <= 255:
            raise invalid(field, value, why)
        if item not in groups:
            groups.append(item)
    return groups
