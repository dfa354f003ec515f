"""The vocabulary of the request declarations: JSON Schema fragments for Zun's field
types (api-v1.md §1.1 rule 5 and the §7.2 field table).

The fragments are JSON Schema 2020-12, the dialect of OpenAPI 3.1, so that one
declaration is both what :mod:`berth.api.schemas.validation` checks a body against and
what ``/openapi.json`` publishes. Every fragment carries a ``description`` that says
what is accepted: the validator quotes the nearest one when it refuses a value, so the
document's text and the error's advice are the same words.

Two annotations of berth's own (OpenAPI allows ``x-`` keys; validators ignore them):
``x-min-version``, the first microversion that accepts a property, and
``x-empty-is-absent``, a property whose empty value (``[]``, ``{}``) counts as not sent
for that gate (zunclient always sends ``"mounts": []``).
"""

from __future__ import annotations

from typing import Any

from berth.api.schemas.numeric import decimal_text, integer_text

Schema = dict[str, Any]

NULL: Schema = {"type": "null"}
#: Digits, as Zun's integer-or-string fields accept them (the range is checked after
#: validation, when the value is known as a number: a pattern cannot bound a number).
DIGITS = "^[0-9]{1,18}$"
DECIMAL = "^(?=.)[0-9]{0,16}(\\.[0-9]{1,16})?$"
NAME = "^[a-zA-Z0-9][a-zA-Z0-9_.-]+$"
HOST_NAME = "^[a-zA-Z0-9._-]+$"


def described(description: str, schema: Schema) -> Schema:
    """``schema`` with ``description``."""
    return {**schema, "description": description}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null (null: as if not sent). Null joins the schema's own ``type``,
    ``enum`` or ``anyOf``, so that errors inside an array or object still point at the
    refused item rather than at a choice between the value and null."""
    out = dict(schema)
    if "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    if "anyOf" in out and "type" not in out:
        out["anyOf"] = [*out["anyOf"], NULL]
    return out


def since(version: str, schema: Schema, *, empty_is_absent: bool = False) -> Schema:
    """``schema`` accepted from microversion ``version`` on."""
    out = {**schema, "x-min-version": version}
    if empty_is_absent:
        out["x-empty-is-absent"] = True
    return out


def string(min_length: int = 0, max_length: int | None = None, *, what: str = "a string",
           pattern: str | None = None) -> Schema:
    """A string whose length is within bounds (and that matches ``pattern``)."""
    out: Schema = {"type": "string", "minLength": min_length}
    if max_length is not None:
        out["maxLength"] = max_length
        text = f"{what} of {min_length} to {max_length} characters"
    else:
        text = f"{what} of at least {min_length} characters"
    if pattern is not None:
        out["pattern"] = pattern
    return described(f"It must be {text}.", out)


def integer_like(minimum: int | None = None, maximum: int | None = None, *,
                 what: str = "an integer") -> Schema:
    """A JSON integer (or integral number) or a string of digits, within bounds."""
    number: Schema = {"type": "integer"}
    if minimum is not None:
        number["minimum"] = minimum
    if maximum is not None:
        number["maximum"] = maximum
    digits: Schema = {"type": "string", "pattern": DIGITS}
    if minimum is not None and maximum is not None:
        digits["pattern"] = integer_text(minimum, maximum)     # the bounds, as text
    elif minimum is not None and minimum < 0:
        digits["pattern"] = "^-?[0-9]{1,18}$"
    return described(f"It must be {what} (a JSON integer or a string of digits)"
                     f"{bounds_text(minimum, maximum)}.", {"anyOf": [number, digits]})


#: The largest volume a mount may ask for, in GiB: what a 32-bit integer column holds
#: (a larger size reached the database and answered 500).
MAX_VOLUME_GIB = 2**31 - 1


def volume_size() -> Schema:
    """A new volume's size in GiB, as containers' mounts and capsules' volumes take it."""
    return integer_like(1, MAX_VOLUME_GIB, what="a volume size in GiB")


def number_like(minimum: float, maximum: float, *, what: str) -> Schema:
    """A JSON number or a decimal string (``"0.5"``), within bounds."""
    number: Schema = {"type": "number", "minimum": minimum, "maximum": maximum}
    text: Schema = {"type": "string", "maxLength": 32,
                    "pattern": decimal_text(minimum, maximum) or DECIMAL}
    return described(f"It must be {what} between {minimum:g} and {maximum:g}, given as a "
                     f"JSON number or a decimal string such as \"0.5\".",
                     {"anyOf": [number, text]})


def bounds_text(minimum: float | None, maximum: float | None) -> str:
    def text(value: float) -> str:   # an integer whole (2147483647), not 2.14748e+09
        return str(value) if isinstance(value, int) else f"{value:g}"
    if minimum is not None and maximum is not None:
        return f" between {text(minimum)} and {text(maximum)}"
    if minimum is not None:
        return f" of at least {text(minimum)}"
    if maximum is not None:
        return f" of at most {text(maximum)}"
    return ""


def strict_bool() -> Schema:
    """JSON ``true``/``false`` or the strings ``true``/``True``/``false``/``False``."""
    return described("Expected a boolean: true or false (JSON booleans, or the strings "
                     "true, True, false, False).",
                     {"anyOf": [{"type": "boolean"},
                                {"enum": ["true", "True", "false", "False"]}]})


def enum(choices: tuple[str, ...], *, fold_case: bool = False) -> Schema:
    """One of ``choices``; with ``fold_case`` in any case (a pattern says so)."""
    if not fold_case:
        return described(f"It must be one of: {', '.join(choices)}.",
                         {"type": "string", "enum": list(choices)})
    alternatives = "|".join("".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c
                                    for c in choice) for choice in choices)
    return described(f"It must be one of: {', '.join(choices)} (any case).",
                     {"type": "string", "pattern": f"^({alternatives})$"})


def string_list(example: str = "[\"sh\", \"-c\", \"echo hi\"]") -> Schema:
    return described(f"It must be a JSON array of strings, e.g. {example}.",
                     {"type": "array", "items": {"type": "string"}})


def string_map(*, keys: Schema, description: str) -> Schema:
    """An object of string values whose names match ``keys``."""
    return described(description, {"type": "object", "propertyNames": keys,
                                   "additionalProperties": {"type": "string"}})


def json_object() -> Schema:
    return described("It must be a JSON object.", {"type": "object"})


def closed_object(properties: dict[str, Schema], *, required: tuple[str, ...] = (),
                  description: str | None = None, **extra: Any) -> Schema:
    """An object with exactly these ``properties`` (any other key is refused)."""
    out: Schema = {"type": "object", "properties": properties,
                   "additionalProperties": False, **extra}
    if required:
        out["required"] = list(required)
    if description is not None:
        out["description"] = description
    return out
