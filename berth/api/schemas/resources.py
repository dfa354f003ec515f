"""The bodies of the resource APIs, declared once: registries (api-v1.md §13), image
pulls (§10) and quotas (§12). Checks that need more than the body (is the domain a
registry host, does the host exist) stay with the operation that does them."""

from __future__ import annotations

from berth.api.schemas import fields as F
from berth.api.schemas.container import NAME
from berth.api.schemas.numeric import integer_text
from berth.api.schemas.validation import RequestSchema
from berth.db.quotas import RESOURCES
from berth.image.reference import NAME_MAX as REFERENCE_MAX
from berth.image.reference import REFERENCE_PATTERN, TAGGED_REFERENCE_PATTERN

INT_MAX = 2**31 - 1

#: What ``berth.image.reference.has_domain`` takes for a registry: a dotted host name
#: (or an IPv4 address) or localhost, with an optional port, or any host with a port;
#: no scheme, no path.
_LABEL = "[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?"
DOMAIN = (f"^((localhost|{_LABEL}(\\.{_LABEL})+)(:[0-9]{{1,5}})?"
          f"|{_LABEL}:[0-9]{{1,5}})$")

_REGISTRY_FIELDS: dict[str, F.Schema] = {
    "name": F.nullable(NAME),
    "domain": F.described("A registry host, optionally with a port, such as "
                          "registry.example.com or 127.0.0.1:5000 (no scheme, no path).",
                          {"type": "string", "minLength": 1,
                           "maxLength": REFERENCE_MAX - len("/x"), "pattern": DOMAIN}),
    "username": F.nullable(F.string(1, 255)),
    "password": F.nullable(F.string(1, 255)),
}
_REGISTRY_SHAPE = ("such as {\"registry\": {\"domain\": \"registry.example.com\", "
                   "\"name\": ..., \"username\": ..., \"password\": ...}}")

REGISTRY_CREATE = RequestSchema(
    F.closed_object(_REGISTRY_FIELDS, required=("domain",),
                    description="Credentials for a private image registry."),
    what="registry", shape=_REGISTRY_SHAPE,
    hint="name the registry's host, e.g. {\"registry\": {\"domain\": "
         "\"registry.example.com\"}}.")
REGISTRY_UPDATE = RequestSchema(
    F.closed_object(_REGISTRY_FIELDS, minProperties=1,
                    description="The fields of a registry to change."),
    what="registry update", shape=_REGISTRY_SHAPE)


def wrapped(inner: RequestSchema, key: str) -> RequestSchema:
    """A body that carries ``inner`` under ``key`` (``{"registry": {...}}``)."""
    return RequestSchema(
        F.closed_object({key: inner.schema}, required=(key,)),
        what=f"{inner.what} wrapper", shape=inner.shape,
        hint=f"send the fields inside it, {inner.shape}.")


REGISTRY_CREATE_BODY = wrapped(REGISTRY_CREATE, "registry")
REGISTRY_UPDATE_BODY = wrapped(REGISTRY_UPDATE, "registry")

_IGNORED = "Accepted for zunclient's sake and ignored."
#: An image named to pull or search (``T.image_name`` and ``parse_image`` check it).
IMAGE_REFERENCE = F.described(
    "An image, \"<image>[:<tag>]\", 2 to 255 characters in Docker's grammar, such as "
    "\"busybox\" or \"127.0.0.1:5000/team/app:v1\".",
    {"type": "string", "minLength": 2, "maxLength": 255,
     # T.image_name: a letter or digit followed by a letter, digit, '_', '.' or '-'
     "pattern": "^(?=[\\s\\S]*[a-zA-Z0-9][a-zA-Z0-9_.-])" + REFERENCE_PATTERN[1:]})
IMAGE_PULL = RequestSchema(
    F.closed_object({
        "repo": {**IMAGE_REFERENCE,       # no digest: a pull by digest is refused
                 "pattern": IMAGE_REFERENCE["pattern"].replace(
                     REFERENCE_PATTERN[1:], TAGGED_REFERENCE_PATTERN[1:])},
        "host": F.string(1, 255, what="a compute host name or uuid"),
        "tag": F.nullable(F.string(1, 128, what="an image tag")),
        "image_id": F.described(_IGNORED, {}),
        "size": F.described(_IGNORED, {}),
        "image_pull_policy": F.described(_IGNORED, {}),
    }, required=("repo", "host"), description="An image for a host's agent to pull."),
    what="image pull", shape="such as {\"repo\": \"busybox:latest\", \"host\": \"node1\"}",
    hint="send {\"repo\": \"<image>[:<tag>]\", \"host\": \"<compute host name or uuid>\"}.")

QUOTA = RequestSchema(
    F.closed_object(
        {name: F.described("It must be an integer of at least -1 (-1 means unlimited), "
                           "a JSON integer or a string of digits.",
                           {"anyOf": [{"type": "integer", "minimum": -1, "maximum": INT_MAX},
                                      {"type": "string",
                                       "pattern": integer_text(-1, INT_MAX)}]})
         for name in RESOURCES},
        description="A project's (or a quota class's) limits; absent ones are unchanged."),
    what="quota", shape="such as {\"containers\": 10, \"memory\": 2048, \"cpu\": 4, "
                        "\"disk\": 20}")
