"""Parsers of query parameters and action arguments (api-v1.md §1.1 rule 5), and the
one way a 400 for a bad value is worded (:func:`invalid`). Request bodies are declared
instead (:mod:`berth.api.schemas.fields`).

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

from berth.api.schemas.fields import bounds_text
from berth.common.exceptions import InvalidParameterValue

_MAX_SHOWN = 200
_DIGITS = re.compile(r"[0-9]+")
NAME_PATTERN = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]+")
_IMAGE_CHARS = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9_.-]")
HOSTNAME_PATTERN = re.compile(r"[a-zA-Z0-9-._]*")

STRICT_TRUE = frozenset({"true", "True"})
STRICT_FALSE = frozenset({"false", "False"})
EXTENDED_TRUE = frozenset({"true", "True", "TRUE", "1", "on", "On", "ON", "yes", "Yes", "YES"})
EXTENDED_FALSE = frozenset(
    {"false", "False", "FALSE", "0", "off", "Off", "OFF", "no", "No", "NO"}
)
LENIENT_TRUE = frozenset({"1", "t", "true", "on", "y", "yes"})
LENIENT_FALSE = frozenset({"0", "f", "false", "off", "n", "no"})



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


def invalid(field: str, value: object, why: str,
            error: type[InvalidParameterValue] = InvalidParameterValue) -> InvalidParameterValue:
    """The 400 error for ``field`` (kept in its ``kwargs['field']``); ``why`` says what is
    wrong and what is accepted."""
    return error(field=field,
                 err=f"Invalid input for field '{field}'. Value: '{show(value)}'. {why}")


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
    bounds = bounds_text(minimum, maximum)
    why = f"It must be {what} (a JSON integer or a string of digits){bounds}."
    number: int
    if isinstance(value, bool):
        raise invalid(field, value, why)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        if len(value.lstrip("0")) > 18:  # far beyond any bound; int() of huge text is slow
            raise invalid(field, value, why)
        number = int(value)
    else:
        raise invalid(field, value, why)
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
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


def enum(field: str, value: object, choices: Iterable[str], fold_case: bool = False) -> str:
    """One of ``choices``; with ``fold_case`` any case is accepted and lower-cased."""
    options = tuple(choices)
    if isinstance(value, str):
        candidate = value.lower() if fold_case else value
        if candidate in options:
            return candidate
    suffix = " (any case)" if fold_case else ""
    raise invalid(field, value, f"It must be one of: {', '.join(options)}{suffix}.")
