"""Query parameters, declared once (api-v1.md §1.1, §5, §7.1-§7.7): each action's
arguments and each list's filters and paging, as :class:`QueryParams`.

zunclient sends an action's arguments in the query string (``stop?timeout=3``,
``kill?signal=None``); Zun merges them with the top-level keys of a JSON body
(``berth.api.params.merged``). A declaration names the parameters one request reads,
each with the JSON Schema fragment of :mod:`berth.api.schemas.fields` that says what it
accepts; :meth:`QueryParams.check` checks the merged parameters against it (400
``Invalid input for field '<name>'...``, Zun's words, by
:class:`~berth.api.schemas.validation.RequestSchema`), and :meth:`QueryParams.openapi`
publishes the same fragments as the operation's ``parameters`` in ``/openapi.json``.
The routes then read the values through the parsers of ``types`` and the operations,
which only turn accepted text into Python values.

Zun's binding rules kept here: the literal ``None`` (``str()`` of an unset option in
zunclient) is absent for an action's argument; an action drops parameters it does
not know (Zun's handlers without a catch-all); the container list refuses them (400
"Unknown parameters: ...").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.schemas import fields as F
from berth.api.schemas import networks
from berth.api.schemas.container import NAME, CreateLimits, update_schema
from berth.api.schemas.numeric import integer_text
from berth.api.schemas.types import EXTENDED_FALSE, EXTENDED_TRUE, HOSTNAME_PATTERN
from berth.api.schemas.validation import RequestSchema
from berth.common.exceptions import InvalidParameterValue, InvalidValue, SchemaValidationError
from berth.common.memo import built_once
from berth.db import paging
from berth.db.models import ComputeNode, Container, Image, Registry
from berth.image.reference import UNTAGGED_REFERENCE_PATTERN

#: zunclient's "not set".
ABSENT = "None"
#: Longest stop and reboot timeout (a day): Docker's ``t`` is a machine integer.
MAX_TIMEOUT = 86400
#: Largest signal number Linux has.
MAX_SIGNAL = 64
#: Largest terminal side, in rows or columns.
MAX_TTY = 65535
#: Largest ``limit`` accepted (it is clamped to ``[api]max_limit`` after).
MAX_LIMIT = 2**31 - 1


def _words(*choices: str) -> str:
    return "|".join(choices)


def _fold(*words: str) -> str:
    """A pattern of ``words`` in any case."""
    return "|".join("".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in w)
                    for w in words)


def extended_bool() -> F.Schema:
    """``types.extended_bool``: JSON booleans and true/True/TRUE/1/on/yes and their
    negatives."""
    words = sorted(EXTENDED_TRUE | EXTENDED_FALSE)
    return F.described("Expected a boolean: a JSON boolean, or one of true, True, TRUE, 1, "
                       "on, On, ON, yes, Yes, YES and false, False, FALSE, 0, off, Off, "
                       "OFF, no, No, NO.",
                       {"anyOf": [{"type": "boolean"}, {"enum": words}]})


#: What Python's ``str.strip()`` takes off a value before the checks read it
#: (``str.isspace``), as a class both regex dialects read alike: ECMA-262's ``\s``,
#: the document's, differs (it lacks U+001C-U+001F and U+0085, and has U+FEFF), so a
#: pattern with ``\s`` refused values the checks accepted.
SPACE = ("[\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029"
         "\\u202f\\u205f\\u3000]")


def lenient_bool() -> F.Schema:
    """``types.lenient_bool``: JSON booleans, 0/1 and 1/t/true/on/y/yes or
    0/f/false/off/n/no in any case."""
    words = _fold("1", "t", "true", "on", "y", "yes", "0", "f", "false", "off", "n", "no")
    return F.described("Expected a boolean: 1, t, true, on, y, yes or 0, f, false, off, "
                       "n, no (any case).",
                       {"anyOf": [{"type": "boolean"}, {"enum": [0, 1]},
                                  {"type": "string", "pattern": f"^{SPACE}*({words}){SPACE}*$"}]})


def _seconds(what: str) -> F.Schema:
    return F.integer_like(0, MAX_TIMEOUT, what=f"a whole number of seconds {what}")


#: Linux signal numbers by name (without "SIG"), as Docker knows them.
SIGNALS: dict[str, int] = {
    "HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "IOT": 6, "BUS": 7,
    "FPE": 8, "KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14,
    "TERM": 15, "STKFLT": 16, "CHLD": 17, "CLD": 17, "CONT": 18, "STOP": 19, "TSTP": 20,
    "TTIN": 21, "TTOU": 22, "URG": 23, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27,
    "WINCH": 28, "IO": 29, "POLL": 29, "PWR": 30, "SYS": 31, "RTMIN": 34, "RTMAX": 64,
    **{f"RTMIN+{i}": 34 + i for i in range(1, 16)},
    **{f"RTMAX-{i}": 64 - i for i in range(1, 15)},
}
_SIGNAL_NAMES = "|".join(_fold(name).replace("+", "\\+")
                         for name in sorted(SIGNALS, key=len, reverse=True))
SIGNAL = F.described(
    "Give a signal name such as SIGTERM, TERM or sigterm, or a number from 1 to "
    f"{MAX_SIGNAL}; leave it out (or None) for Docker's default, SIGKILL.",
    {"anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_SIGNAL},
               {"type": "string", "maxLength": 16,
                "pattern": f"^{SPACE}*((?=[0-9]{{1,3}}{SPACE}*$)"
                           f"{integer_text(1, MAX_SIGNAL)[1:-1]}"
                           f"|({_fold('sig')})?({_SIGNAL_NAMES})){SPACE}*$"}]})
TAIL = F.described("It must be a number of lines (0 or more) or 'all'.",
                   {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 10**18 - 1},
                              {"type": "string", "pattern": f"^([0-9]{{1,18}}|{_fold('all')})$"}]})
_DAY = ("((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)"
        "|(0[13578]|1[02])-31)")
_TIME = "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]([.,][0-9]{1,6})?"
SINCE = F.described(
    "It must be epoch seconds (e.g. 1700000000) or a UTC time written "
    "'YYYY-MM-DD HH:MM:SS,ffffff' (the fraction is optional).",
    {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 10**12 - 1},
               {"type": "string",
                "pattern": f"^(|{SPACE}*([0-9]{{1,12}}(\\.[0-9]{{1,9}})?"
                           f"|(?!0000)[0-9]{{4}}-{_DAY} {_TIME}){SPACE}*)$"}]})
TTY_SIDE = {"h": F.integer_like(1, MAX_TTY, what="a whole number of rows"),
            "w": F.integer_like(1, MAX_TTY, what="a whole number of columns")}
EXEC_ID = F.described("It must be the 64 lowercase hexadecimal characters returned by "
                      "execute.", {"type": "string", "pattern": "^[0-9a-f]{64}$"})
TAG = F.described("A tag is 1 to 128 letters, digits, '_', '.' or '-', not starting "
                  "with '.' or '-'.",
                  {"type": "string", "pattern": "^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"})


def as_text(schema: F.Schema) -> F.Schema:
    """The text alternatives of a declaration: what it accepts in a query string, where
    every value is text (a JSON ``10.0`` is an integer, but ``?h=10.0`` is not). The
    JSON alternatives apply to the same parameter sent in a JSON body."""
    if "anyOf" not in schema:
        return schema
    texts = []
    for alternative in schema["anyOf"]:
        if alternative.get("type") == "string":
            texts.append(alternative)
        elif "enum" in alternative and "type" not in alternative:
            words = [v for v in alternative["enum"] if isinstance(v, str)]
            if words:
                texts.append({"type": "string", "enum": words})
    rest = {k: v for k, v in schema.items() if k != "anyOf"}
    if len(texts) == 1:
        return {**texts[0], **rest}
    return {**rest, "anyOf": texts}


class QueryParams:
    """The parameters of one request, declared (``properties``: name -> fragment).

    ``required`` must be present (and not ``None``); ``closed``: a parameter not
    declared is a 400 (the lists); else it is dropped (the actions). ``none_is_absent``:
    the literal ``None`` counts as not sent (zunclient's unset options); ``in_body``:
    the parameters zunclient sends in the JSON body (published there, not in the
    query)."""

    def __init__(self, what: str, properties: Mapping[str, F.Schema], *,
                 required: tuple[str, ...] = (), closed: bool = False,
                 none_is_absent: bool = True, unknown_hint: str = "",
                 in_body: tuple[str, ...] = (), at_least_one: bool = False,
                 unknown_error: type[InvalidParameterValue] = InvalidParameterValue,
                 hand_checked: tuple[str, ...] = ()) -> None:
        self.what = what
        #: The error for unknown parameters, and the parameters whose refusal keeps
        #: invalid-parameter-value rather than schema-validation-error: the codes Zun
        #: answers for them (its checks made by hand, not by its schema layer).
        self.unknown_error = unknown_error
        self.hand_checked = hand_checked
        self.in_body = in_body
        #: At least one of the parameters must be sent (published as the body's anyOf).
        self.at_least_one = at_least_one
        self.properties = dict(properties)
        self.required = required
        self.closed = closed
        self.none_is_absent = none_is_absent
        self.unknown_hint = unknown_hint
        names = ", ".join(self.properties) or "none"
        self._schema = RequestSchema(
            F.closed_object(self.properties, required=required),
            what=what, shape=f"of parameters ({names})",
            hint=f"the {what} request takes {names}.")

    def check(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The declared parameters that were sent, each accepted by its declaration;
        else InvalidParameterValue (400) naming the first wrong one."""
        unknown = sorted(k for k in params if k not in self.properties)
        if unknown and self.closed:
            raise self.unknown_error(
                err=f"Unknown parameters: {', '.join(unknown)}. {self.unknown_hint}".strip())
        sent = {k: v for k, v in params.items() if k in self.properties
                and not (self.none_is_absent and v in (None, ABSENT))}
        for name in self.required:
            if name not in sent or sent[name] == "":
                raise InvalidParameterValue(
                    err=f"Missing '{name}': {self.properties[name].get('description', '')}"
                        .strip())
        if self.at_least_one and not sent:
            raise InvalidParameterValue(
                err=f"Nothing to do: send at least one of {', '.join(self.properties)}.")
        try:
            return self._schema.check(sent)
        except SchemaValidationError as err:
            if err.kwargs.get("field") in self.hand_checked:
                raise InvalidParameterValue(err=err.msg) from None
            raise

    def openapi(self) -> dict[str, Any]:
        """The declaration as an OpenAPI operation's query ``parameters`` (and its
        ``requestBody``, for the parameters sent ``in_body``)."""
        out: dict[str, Any] = {"parameters": [
            {"name": name, "in": "query", "required": name in self.required,
             "description": str(schema.get("description", "")), "schema": as_text(schema)}
            for name, schema in self.properties.items() if name not in self.in_body]}
        if self.in_body:
            body: F.Schema = {   # other keys are dropped unless closed, as in the query
                "type": "object",
                "properties": {k: self.properties[k] for k in self.in_body},
                "required": [k for k in self.in_body if k in self.required]}
            if self.at_least_one:
                body["anyOf"] = [{"required": [k]} for k in self.in_body]
            if self.closed:
                body["additionalProperties"] = False
            out["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": body}}}
        return out


# -- containers (api-v1.md §5, §7.1-§7.4) ----------------------------------------------

def page(model: Any) -> dict[str, F.Schema]:
    """A list's paging (api-v1.md §5); ``sort_key`` one of the record's columns (those
    ``berth.db.paging`` sorts by)."""
    return {
        "limit": F.described("It must be a positive integer (larger ones count as "
                             "[api]max_limit).",
                             {"type": "string", "pattern": "^0*[1-9][0-9]{0,17}$"}),
        "marker": F.string(1, 255, what="the uuid of the last item of the previous page"),
        "sort_key": F.enum(tuple(sorted(paging.sortable(model)))),
        "sort_dir": F.enum(("asc", "desc")),
    }


_PAGING = "A list takes limit, marker, sort_key, sort_dir and all_projects."
LIST_FILTERS = ("name", "image", "project_id", "user_id", "memory", "host", "task_state",
                "status", "auto_remove")
REGISTRY_FILTERS = ("name", "domain", "username", "project_id", "user_id")
_FILTER = F.string(0, 255, what="a value to match exactly")
CONTAINER_LIST = QueryParams("container list", {
    **{name: _FILTER for name in LIST_FILTERS}, "auto_remove": lenient_bool(),
    **page(Container),
    "all_projects": lenient_bool(),
}, closed=True, none_is_absent=False, unknown_hint=f"Filter on {', '.join(LIST_FILTERS)}.",
    unknown_error=InvalidValue, hand_checked=("sort_key",))
CAPSULE_LIST = QueryParams("capsule list", {**page(Container), "all_projects": lenient_bool()},
                           closed=True, none_is_absent=False, unknown_hint=_PAGING)
REGISTRY_LIST = QueryParams("registry list", {
    **{name: _FILTER for name in REGISTRY_FILTERS}, **page(Registry),
    "all_projects": lenient_bool(),
}, closed=True, none_is_absent=False,
    unknown_hint=f"Filter on {', '.join(REGISTRY_FILTERS)}.", unknown_error=InvalidValue)
#: Images and hosts ignore parameters they do not know (as Zun).
IMAGE_LIST = QueryParams("image list", page(Image), none_is_absent=False)
HOST_LIST = QueryParams("host list", page(ComputeNode), none_is_absent=False)
CAPSULE_ONE = QueryParams("capsule", {"all_projects": lenient_bool()}, none_is_absent=False)


@built_once(maxsize=16)
def image_search(limits: CreateLimits) -> QueryParams:
    """search's arguments; the image drivers are the configured ones."""
    return QueryParams("image search", {"image_driver": F.enum(limits.image_driver_list),
                                        "exact_match": F.strict_bool()})


CONTAINER_SHOW = QueryParams("container show", {"all_projects": lenient_bool()})
CONTAINER_CREATE = QueryParams("container create", {"run": extended_bool()})
CONTAINER_DELETE = QueryParams("container delete", {
    "force": F.since("1.7", extended_bool()),
    "stop": F.since("1.12", extended_bool()),
    "all_projects": extended_bool()})
STOP = QueryParams("stop", {"timeout": _seconds("to wait for the stop")})
REBOOT = QueryParams("reboot", {"timeout": _seconds("to wait for the stop")})
KILL = QueryParams("kill", {"signal": SIGNAL})
RENAME = QueryParams("rename", {"name": NAME}, required=("name",))
SECURITY_GROUP = QueryParams("security group", {
    "name": F.string(1, 255, what="a security group name or id")}, required=("name",))


@built_once(maxsize=16)
def rebuild(limits: CreateLimits) -> QueryParams:
    """rebuild's arguments; the image drivers are the configured ones."""
    image = F.described(
        "An image reference must be a string of 2 to 255 characters such as \"busybox\" "
        "or \"docker.io/library/nginx:1.25\" (it must contain a letter or digit followed "
        "by a letter, digit, '_', '.' or '-').",
        {"type": "string", "minLength": 2, "maxLength": 255,
         "pattern": "[a-zA-Z0-9][a-zA-Z0-9_.-]"})
    return QueryParams("rebuild", {"image": image,
                                   "image_driver": F.enum(limits.image_driver_list),
                                   "run": extended_bool()})


@built_once(maxsize=16)
def resize_container(limits: CreateLimits) -> QueryParams:
    """resize_container's ``cpu`` and ``memory``: the update's declarations of them."""
    fields = update_schema(limits).schema["properties"]
    return QueryParams("resize_container", {k: fields[k] for k in ("cpu", "memory")},
                       closed=True, unknown_hint="resize_container takes only cpu and "
                                                 "memory; rename or set auto_heal with PATCH.",
                       in_body=("cpu", "memory"), at_least_one=True)


# -- services (api-v1.md §11) -----------------------------------------------------------

_SERVICE = {
    "host": F.string(1, 255, what="the service's host: letters, digits, '-', '.' and '_'",
                     pattern=f"^{HOSTNAME_PATTERN.pattern}$"),
    "binary": F.string(1, 255, what="a service binary name such as zun-compute")}
SERVICE = QueryParams("service", _SERVICE, required=("host", "binary"))
SERVICE_DISABLE = QueryParams("service disable", {
    **_SERVICE, "disabled_reason": F.string(1, 255, what="a reason")},
    required=("host", "binary"))
SERVICE_FORCE_DOWN = QueryParams("service force_down", {
    **_SERVICE, "forced_down": F.strict_bool()}, required=("host", "binary", "forced_down"))

#: A line ``shlex.split`` splits into at least one word (``berth.api.operations.console``):
#: some character that is not its whitespace, every quote closed, no lone final
#: backslash.
SHELL_WORDS = ("^(?=[\\s\\S]*[^ \\t\\r\\n])"
               "(?:[^'\"\\\\]|\\\\[\\s\\S]|'[^']*'|\"(?:[^\"\\\\]|\\\\[\\s\\S])*\")*$")

# -- inspection and console (§7.7) ------------------------------------------------------

LOGS = QueryParams("logs", {"stdout": extended_bool(), "stderr": extended_bool(),
                            "timestamps": extended_bool(), "tail": TAIL, "since": SINCE})
TOP = QueryParams("top", {"ps_args": F.string(0, 255, what="ps options")})
_PATH = F.string(1, 4096, what="an absolute path in the container")
GET_ARCHIVE = QueryParams("get_archive", {"path": _PATH}, required=("path",))
PUT_ARCHIVE = QueryParams("put_archive", {
    "path": _PATH,
    "data": F.described("It must be a string holding the tar archive (base64-encoded "
                        "from API version 1.25).", {"type": "string", "minLength": 1})},
    required=("path", "data"), in_body=("data",))
COMMIT = QueryParams("commit", {
    "repository": F.described(
        "The image to make, a repository name in Docker's grammar (no digest), 1 to 255 "
        "characters, such as \"myimage\" or \"127.0.0.1:5000/team/app\"; its tag is "
        "'tag' (for zunclient's sake \"<repository>:<tag>\" is also taken when 'tag' is "
        "not sent).",
        {"type": "string", "minLength": 1, "maxLength": 255,
         "pattern": UNTAGGED_REFERENCE_PATTERN}),
    "tag": TAG},
    required=("repository",))
EXECUTE = QueryParams("execute", {
    "command": F.described(
        "It must be a command line, split with shell rules: every quote closed, and a "
        "program named.",
        {"type": "string", "minLength": 1, "pattern": SHELL_WORDS}),
    "run": F.strict_bool(), "interactive": F.strict_bool()}, required=("command",))
EXECUTE_RESIZE = QueryParams("execute_resize", {"exec_id": EXEC_ID, **TTY_SIDE},
                             required=("exec_id", "h", "w"))
RESIZE = QueryParams("resize", TTY_SIDE, required=("h", "w"))

# -- networks (§7.7; checked by berth.api.operations.networks) -------------------------

NETWORK_ATTACH = QueryParams("network attach",
                             networks.NETWORK_ATTACH.schema["properties"])
NETWORK_DETACH = QueryParams("network detach",
                             networks.NETWORK_DETACH.schema["properties"])
