"""Checks a request body against its declaration, with the ``jsonschema`` library, and
says what is wrong in Zun's words.

A :class:`RequestSchema` holds one declaration (a JSON Schema 2020-12 object built from
:mod:`berth.api.schemas.fields`), compiled once, twice over: ``fastjsonschema`` turns it
into Python code that accepts a good body in a tenth of the time ``jsonschema`` takes
(about 40 µs for a create, against 400), and ``jsonschema``, the reference validator,
words a refusal. ``jsonschema`` is imported the first time a body is refused: with what
it brings (referencing, rpds, attrs: 64 modules) it is 3.5 MiB of every API process,
and most never refuse a body. (That every declaration is a valid JSON Schema is
checked by the unit tests, not at each start.) The declarations use only keywords the
two share (draft 7's, which 2020-12 keeps). :meth:`RequestSchema.check` raises
:class:`~berth.common.exceptions.SchemaValidationError` (400, code
``schema-validation-error`` as Zun's jsonschema layer answers) for the first problem, in
the order a person fixes them: a body that is not an object, unknown keys, missing
keys, then each field in declaration order. Messages keep Zun's forms::

    Additional properties are not allowed ('foo' was unexpected): ...
    'image' is a required property: ...
    Invalid input for field 'cpu'. Value: 'x'. It must be a number of CPUs between ...

The advice after the value is the ``description`` nearest to the refused value in the
declaration. :meth:`RequestSchema.openapi` gives the same declaration as an OpenAPI
request body, so ``/openapi.json`` documents exactly what is checked.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import fastjsonschema

from berth.api.microversions import APIVersion
from berth.api.schemas.fields import Schema
from berth.api.schemas.types import invalid
from berth.common.exceptions import (
    InvalidParameterValue,
    InvalidParamInVersion,
    SchemaValidationError,
)

if TYPE_CHECKING:
    from jsonschema import ValidationError


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    # ECMA-262's "$" (OpenAPI's regex dialect) matches only at the very end; Python's
    # also before a final newline, which would let "name\n" through.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _pattern(validator: Any, pattern: str, instance: Any, schema: Schema
             ) -> Iterator[ValidationError]:
    from jsonschema import ValidationError

    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def _refusing_validator() -> Any:
    """jsonschema's 2020-12 validator with ``_pattern``, imported on the first refusal."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(Draft202012Validator, {"pattern": _pattern})


def _python_dialect(node: Any) -> Any:
    """``node`` with each pattern's closing ``$`` written ``\\Z`` (see ``_compiled``)."""
    if isinstance(node, dict):
        return {k: _compiled(v).pattern if k == "pattern" and isinstance(v, str)
                else _python_dialect(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_python_dialect(item) for item in node]
    return node


class RequestSchema:
    """One request body's declaration.

    ``what`` names the request in messages ("container create"); ``shape`` completes
    "The request body must be a JSON object ..." for a body of another type.
    """

    def __init__(self, schema: Schema, *, what: str, shape: str, hint: str = "",
                 full_paths: bool = False, eager: bool = True) -> None:
        self.schema = schema
        self.what = what
        self.shape = shape
        self.hint = hint or f"send a JSON object {shape}."
        #: Name a refused value by its whole path (``spec.containers[0].image``), not
        #: by its top-level field: for deep bodies such as a capsule template.
        self.full_paths = full_paths
        self._order = {name: i for i, name in enumerate(schema.get("properties", {}))}
        if eager:
            self._accepts  # noqa: B018 - compiled now (see ``_accepts``)

    @functools.cached_property
    def _accepts(self) -> Callable[[Any], Any]:
        """The fast validator of the good bodies: compiled as the declaration is made,
        or, with ``eager=False``, on its first check. The module fastjsonschema writes
        stays in memory (a container's create: 2.8 MiB resident, a capsule's template
        and create 3.7 more: bench P6) and takes tens of ms to build: a declaration few
        processes are ever sent (a capsule's) is compiled when one is. Compiled in a
        burst of requests, its garbage is left scattered between theirs: a declaration
        every API gets (a container's create) is compiled at start, where
        ``berth.common.memory.freeze_started`` then gives that garbage back. A unit test
        compiles every declaration (``test_request_schemas``)."""
        return fastjsonschema.compile(
            {**_python_dialect(self.schema),
             "$schema": "http://json-schema.org/draft-07/schema#"})

    @functools.cached_property
    def _validator(self) -> Any:
        """The reference validator that words a refusal (built on the first one)."""
        validator = _refusing_validator()
        return validator(self.schema, format_checker=validator.FORMAT_CHECKER)

    def check(self, body: object) -> dict[str, Any]:
        """``body`` itself when it satisfies the declaration; else the 400 for its first
        problem."""
        data = self.check_shape(body)
        try:
            self._accepts(data)
        except fastjsonschema.JsonSchemaValueException as fast:
            errors = list(self._validator.iter_errors(data))
            if not errors:      # the two validators disagree: say what the fast one saw
                raise invalid((fast.name or "data").removeprefix("data."), fast.value,
                              f"{fast.message}.", SchemaValidationError) from None
            raise self._message(min(errors, key=self._rank), data) from None
        return data

    def check_shape(self, body: object) -> dict[str, Any]:
        """``body`` when it is an object with only declared keys and every required
        one, whatever their values; else the 400 saying which."""
        if not isinstance(body, dict):
            raise SchemaValidationError(
                err=f"The request body must be a JSON object {self.shape}.")
        properties = self.schema.get("properties", {})
        unknown = self.schema.get("additionalProperties") is False and any(
            key not in properties for key in body)
        for key in self.schema.get("required", ()):
            if key not in body:
                also = f" ({_unexpected(body, self.schema)}.)" if unknown else ""
                raise SchemaValidationError(
                    err=f"'{key}' is a required property: {self.hint}{also}")
        if unknown:
            raise SchemaValidationError(
                err=f"{_unexpected(body, self.schema)}: the {self.what} request accepts only "
                    f"{', '.join(properties)}. Check the spelling of the field names.")
        return body

    def describe(self, field: str) -> str:
        """The declared description of a top-level field."""
        return str(self.schema["properties"][field].get("description", ""))

    def check_versions(self, body: dict[str, Any], version: APIVersion) -> None:
        """A field sent at a microversion older than its ``x-min-version``: 400."""
        for key, prop in self.schema.get("properties", {}).items():
            minimum = prop.get("x-min-version")
            if minimum is None or key not in body:
                continue
            value = body[key]
            sent = bool(value) if prop.get("x-empty-is-absent") else value is not None
            if sent and not version.at_least(minimum):
                raise InvalidParamInVersion(param=key, req_version=str(version),
                                            min_version=minimum)

    def openapi(self) -> dict[str, Any]:
        """The declaration as an OpenAPI operation's ``requestBody`` (less the
        alternatives marked ``x-text-form``: see :func:`_published`)."""
        return {"requestBody": {"required": True, "content": {
            "application/json": {"schema": _published(self.schema)}}}}

    # -- messages -------------------------------------------------------------------------

    def _rank(self, error: ValidationError) -> tuple[int, str]:
        top = error.path[0] if error.path else ""
        return self._order.get(str(top), -1), str(list(error.path))

    def _message(self, error: ValidationError, body: dict[str, Any]) -> InvalidParameterValue:
        advice = self._advice(error)
        if not error.path and error.validator == "minProperties":
            allowed = ", ".join(self.schema.get("properties", {}))
            return SchemaValidationError(err=f"Nothing to update: send at least one of "
                                             f"{allowed}.")
        if not error.path:      # a rule of the whole body (oneOf, dependencies, ...)
            return SchemaValidationError(
                err=f"The {self.what} request is not valid as a whole: "
                    f"{advice or self.schema.get('description') or error.message}")
        field, value = _path(error.path, error.instance) if self.full_paths \
            else _field(error.path, body)
        if self.full_paths and error.validator in ("required", "additionalProperties"):
            return SchemaValidationError(err=f"Invalid input for field '{field}'. "
                                             f"{error.message}: {advice}")
        if error.instance is None and error.validator in ("type", "anyOf"):
            advice = (f"'{field}' cannot be null; leave it out to keep the default (or, in "
                      f"an update, the current value).")
        return invalid(field, value, advice or f"{error.message}.", SchemaValidationError)

    def _advice(self, error: ValidationError) -> str | None:
        """The description nearest the refused value along the error's schema path."""
        node: Any = self.schema
        found: str | None = None
        for step in error.absolute_schema_path:
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                break
            if isinstance(node, dict) and "description" in node:
                found = node["description"]
        return found


def _published(node: Any) -> Any:
    """``node`` without the ``anyOf`` alternatives marked ``x-text-form``: a value also
    taken as text that is parsed (a capsule template's JSON or YAML), which a schema
    cannot describe: any string would be a valid example of it. The description of
    the value says the text form is taken."""
    if isinstance(node, dict):
        out = {k: _published(v) for k, v in node.items()}
        if isinstance(node.get("anyOf"), list):
            kept = [_published(a) for a in node["anyOf"]
                    if not (isinstance(a, dict) and a.get("x-text-form"))]
            out.pop("anyOf")
            if len(kept) == 1:
                out = {**kept[0], **{k: v for k, v in out.items()}}
            else:
                out["anyOf"] = kept
        return out
    if isinstance(node, list):
        return [_published(item) for item in node]
    return node


def _field(path: Sequence[Any], body: dict[str, Any]) -> tuple[str, Any]:
    """The name a message gives a refused value, and the value it shows: the top-level
    field, or the item of a top-level array (``nets[0]``)."""
    name = str(path[0])
    value: Any = body.get(name)
    if len(path) > 1 and isinstance(path[1], int) and isinstance(value, list):
        return f"{name}[{path[1]}]", value[path[1]]
    return name, value


def _path(path: Sequence[Any], instance: Any) -> tuple[str, Any]:
    """``spec.containers[0].image`` for the path ``spec, containers, 0, image``."""
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text, instance


def _unexpected(body: dict[str, Any], schema: Schema) -> str:
    extra = sorted(str(k) for k in body if k not in schema.get("properties", {}))
    verb = "was" if len(extra) == 1 else "were"
    return (f"Additional properties are not allowed ({', '.join(map(repr, extra))} "
            f"{verb} unexpected)")
