"""The OpenAPI document publishes each request body as it is declared and checked
(berth.api.openapi, berth.api.schemas): the same declaration, the configured bounds,
Zun's error body instead of FastAPI's 422."""

from __future__ import annotations

import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from berth.api.app import create_app
from berth.api.microversions import APIVersion
from berth.api.openapi import STORABLE, storable_strings
from berth.api.schemas.container import CreateLimits, create_schema, validate_create
from berth.api.schemas.resources import IMAGE_PULL, QUOTA, REGISTRY_CREATE_BODY
from berth.api.state import ApiSettings, ApiState
from berth.common.exceptions import InvalidParameterValue

LIMITS = CreateLimits(max_memory=1024, min_cpu=0.5)


def document(limits: CreateLimits = LIMITS) -> dict[str, Any]:
    state = ApiState(db=None, compute=None, scheduler=None,  # type: ignore[arg-type]
                     settings=ApiSettings(create_limits=limits), up_hosts=object())  # type: ignore[arg-type]
    return create_app(state).openapi()


def body_schema(doc: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    body = doc["paths"][path][method]["requestBody"]
    assert body["required"] is True
    schema: dict[str, Any] = body["content"]["application/json"]["schema"]
    return schema


def test_every_body_the_api_reads_is_published_as_declared() -> None:
    doc = document()
    published = storable_strings
    assert body_schema(doc, "post", "/v1/containers") == published(create_schema(LIMITS).schema)
    assert body_schema(doc, "post", "/v1/registries") == published(REGISTRY_CREATE_BODY.schema)
    assert body_schema(doc, "post", "/v1/images") == published(IMAGE_PULL.schema)
    assert body_schema(doc, "put", "/v1/quotas/{project_id}") == published(QUOTA.schema)
    assert body_schema(doc, "put", "/v1/quota_classes/{name}") == published(QUOTA.schema)
    update = body_schema(doc, "patch", "/v1/containers/{ident}")
    assert set(update["properties"]) == {"cpu", "memory", "name", "auto_heal"}
    assert body_schema(doc, "patch", "/v1/registries/{ident}")["required"] == ["registry"]


def test_every_request_string_without_a_pattern_of_its_own_excludes_nul_and_surrogates(
        ) -> None:
    """What ``berth.api.body`` and the middleware refuse (issue 42), published; the
    declarations the checks use are left as they are."""
    doc = document()
    props = body_schema(doc, "post", "/v1/containers")["properties"]
    assert props["image"]["pattern"] != STORABLE                 # its own
    strings = [p["schema"] for ops in doc["paths"].values() for op in ops.values()
               for p in op.get("parameters", []) if p["schema"].get("type") == "string"]
    assert strings and all({"pattern", "format", "enum"} & set(s) for s in strings)
    assert STORABLE in [s.get("pattern") for s in strings]
    declared = {"type": "string", "minLength": 1}
    assert storable_strings(declared) == {**declared, "pattern": STORABLE}
    assert declared == {"type": "string", "minLength": 1}
    assert re.compile(STORABLE).match("é 日本 😀")
    assert not re.compile(STORABLE).match("a\x00") and not re.compile(STORABLE).match("\ud800")


def test_the_published_bounds_are_the_configured_ones() -> None:
    props = body_schema(document(), "post", "/v1/containers")["properties"]
    memory = props["memory"]["anyOf"][0]
    assert (memory["minimum"], memory["maximum"]) == (4, 1024)
    assert props["cpu"]["anyOf"][0]["minimum"] == 0.5
    assert props["entrypoint"]["x-min-version"] == "1.40"
    assert props["mounts"]["x-empty-is-absent"] is True


def test_errors_are_zun_bodies_and_no_422_is_promised() -> None:
    doc = document()
    assert "ZunError" in doc["components"]["schemas"]
    assert "HTTPValidationError" not in doc["components"]["schemas"]
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            assert "422" not in operation["responses"], (method, path)
            for status, answer in operation["responses"].items():
                if status < "400":
                    continue
                schema = answer["content"]["application/json"]["schema"]
                if path.startswith("/identity/"):    # Keystone's stand-in: its errors
                    assert schema["required"] == ["error"], (method, path, status)
                else:
                    assert schema == {"$ref": "#/components/schemas/ZunError"}, (method, path)
            assert ("406" in operation["responses"]) == path.startswith("/v1"), (method, path)


#: Bodies whose verdict the declaration alone decides (no check that needs the bounds
#: of a numeric string, base64, shell quoting, policy or two fields together).
AGREEMENT = [
    ({"image": "busybox"}, True),
    ({"image": "busybox", "cpu": 0.5, "memory": 64, "command": ["sleep", "1"]}, True),
    ({"image": "busybox", "nets": [{"network": "n", "v4-fixed-ip": "10.0.0.2"}]}, True),
    ({"image": "busybox", "nets": [{"network": "n", "port": "p"}]}, False),
    ({"image": "busybox", "nets": [{"network": "n", "v4-fixed-ip": "fd00::1"}]}, False),
    ({"image": "busybox", "mounts": [{"type": "bind", "size": 1, "destination": "/d"}]},
     False),
    ({"image": "busybox", "mounts": [{"size": 2, "destination": "/d"}]}, True),
    ({"image": "busybox", "restart_policy": {"Name": "always", "MaximumRetryCount": 2}},
     False),
    ({"image": "busybox", "restart_policy": {"Name": "on-failure", "MaximumRetryCount": 2}},
     True),
    ({"image": "busybox", "healthcheck": {}}, True),
    ({"image": "busybox", "healthcheck": {"interval": 1}}, False),
    ({"image": "busybox", "exposed_ports": {"65536/tcp": {}}}, False),
    ({"image": "busybox", "exposed_ports": {"443/TCP": {}}}, True),
    ({"image": "busybox", "memory": 2048}, False),
    ({"image": "busybox", "cpu": 0.2}, False),
    ({"image": "busybox", "name": "ab\n"}, False),
    ({"image": "busybox", "interactive": None}, False),
    ({"image": "busybox", "environment": {"A=B": "c"}}, False),
    ({"image": "busybox", "image_driver": "None"}, True),
    ({"image": "busybox", "extra": 1}, False),
    ({"name": "no-image"}, False),
    ({"image": "busybox", "memory": "99999"}, False),     # numbers as text, bounded too
    ({"image": "busybox", "memory": "0128"}, True),
    ({"image": "busybox", "cpu": "0.05"}, False),
    ({"image": "busybox", "cpu": ".5"}, True),
    ({"image": "busybox", "cpu": "16.0"}, True),
    ({"image": "busybox", "cpu": "16.01"}, False),
]


@pytest.mark.parametrize("body,valid", AGREEMENT)
def test_the_document_and_the_api_agree(body: dict[str, Any], valid: bool) -> None:
    published = body_schema(document(), "post", "/v1/containers")
    checker = Draft202012Validator(published, format_checker=Draft202012Validator.FORMAT_CHECKER)
    if "\n" not in str(body.get("name")):   # ECMA "$" is the very end, unlike Python's
        assert checker.is_valid(body) is valid
    try:
        validate_create(body, APIVersion(1, 40), True, LIMITS)
        accepted = True
    except InvalidParameterValue:
        accepted = False
    assert accepted is valid


def test_body_operations_document_415_and_a_405_says_what_is_allowed() -> None:
    from fastapi.testclient import TestClient

    doc = document()
    assert "415" in doc["paths"]["/v1/containers"]["post"]["responses"]
    assert "415" not in doc["paths"]["/v1/containers"]["get"]["responses"]
    state = ApiState(db=None, compute=None, scheduler=None,  # type: ignore[arg-type]
                     settings=ApiSettings(), up_hosts=object())  # type: ignore[arg-type]
    client = TestClient(create_app(state))
    resp = client.request("TRACE", "/")
    assert resp.status_code == 405 and resp.headers["allow"] == "GET"
    # Every method the path has, not only the first route's (GET and POST are two).
    assert client.request("PUT", "/v1/capsules").headers["allow"] == "GET, POST"
    assert client.request("PUT", "/v1/capsules/c1").headers["allow"] == "DELETE, GET"


def test_a_create_body_is_refused_naming_the_item_and_quoting_its_declaration() -> None:
    with pytest.raises(InvalidParameterValue) as info:
        validate_create({"image": "busybox", "nets": [{"network": "n"}, {"port": ""}]},
                        APIVersion(1, 40), False, LIMITS)
    assert str(info.value) == ("Invalid input for field 'nets[1]'. Value: '{\"port\": \"\"}'. "
                               "It must be a port name or id of 1 to 255 characters.")


def test_a_rule_of_the_whole_body_is_a_400_not_a_crash() -> None:
    """A declaration may constrain the body as a whole (here: exactly one of two
    fields); a body that breaks it is refused with the declaration's words."""
    from berth.api.schemas.validation import RequestSchema

    schema = RequestSchema({"type": "object", "properties": {"a": {}, "b": {}},
                            "additionalProperties": False,
                            "oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                            "description": "Send exactly one of 'a' or 'b'."},
                           what="probe", shape="with 'a' or 'b'")
    assert schema.check({"a": 1}) == {"a": 1}
    with pytest.raises(InvalidParameterValue, match="exactly one of 'a' or 'b'"):
        schema.check({"a": 1, "b": 2})


def _patterns(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [p for k, v in node.items()
                for p in ([v] if k == "pattern" and isinstance(v, str) else _patterns(v))]
    if isinstance(node, list):
        return [p for item in node for p in _patterns(item)]
    return []


def test_the_spaces_a_published_pattern_admits_are_the_ones_the_checks_strip() -> None:
    """The checks strip a value with Python's ``str.strip()``; ECMA-262's ``\\s``, the
    document's dialect, is another set (a fuzzer sent ``all_projects=\\x85t``: the
    document refused it, berth showed the container). So no pattern says ``\\s``
    (``[\\s\\S]``, any character, aside) and ``queries.SPACE`` is ``str.isspace``'s set."""
    from berth.api.schemas.queries import SPACE

    space = re.compile(SPACE)
    every = range(0x110000)
    assert [c for c in every if space.fullmatch(chr(c))] == [
        c for c in every if chr(c).isspace()]
    patterns = _patterns(document())
    assert any(SPACE in p for p in patterns)
    assert [p for p in patterns if "\\s" in p.replace("[\\s\\S]", "")] == []
