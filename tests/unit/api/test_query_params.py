"""Query parameters are declared once (berth.api.schemas.queries): a declaration
refuses what the parser behind it refuses, with a 400 naming the field, and the
OpenAPI document publishes the same declaration."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from berth.api.app import create_app
from berth.api.openapi import storable_strings
from berth.api.operations import console, inspection
from berth.api.routers import container_actions as actions
from berth.api.schemas import queries as Q
from berth.api.schemas import types as T
from berth.api.schemas.container import CreateLimits
from berth.api.state import ApiSettings, ApiState
from berth.common.exceptions import InvalidParameterValue
from berth.db.models import ComputeNode, Container, Image, Registry

LIMITS = CreateLimits()


def accepts(query: Q.QueryParams, params: dict[str, Any]) -> bool:
    try:
        query.check(params)
    except InvalidParameterValue:
        return False
    return True


def parses(parse: Callable[[Any], Any], value: Any) -> bool:
    try:
        parse(value)
    except InvalidParameterValue:
        return False
    return True


#: (declaration, field, parser, values): for every value the declaration and the
#: parser the route reads it with agree.
AGREEMENT: list[tuple[Q.QueryParams, str, Callable[[Any], Any], list[Any]]] = [
    (Q.KILL, "signal", actions.parse_signal,
     ["SIGTERM", "term", "sigkill", "9", "064", "1", "64", "65", "0", "0009", "RTMIN+3",
      "rtmax-2", " TERM ", "\x85TERM\u3000", "\ufeffTERM", "FOO", "SIG", "x y", 9, 0, 65,
      "", "None"]),
    (Q.REBOOT, "timeout", actions.parse_timeout,
     ["0", "10", "86400", "86401", "-1", "1.5", "ten", 5, -5, True, "None"]),
    (Q.rebuild(LIMITS), "run", actions.parse_run,
     ["true", "True", "TRUE", "1", "on", "yes", "no", "false", "maybe", "", True, "None"]),
    (Q.rebuild(LIMITS), "image_driver",
     lambda v: actions.parse_image_driver(v, LIMITS), ["docker", "glance", "DOCKER", "x"]),
    (Q.LOGS, "tail", inspection.parse_tail, ["0", "10", "all", "ALL", "-1", "x", 5, "None"]),
    (Q.LOGS, "since", inspection.parse_since,
     ["1700000000", "1700000000.5", "2024-01-02 03:04:05,123456", "2024-01-02 03:04:05",
      "\x1c1700000000\x85", "\ufeff1700000000", "yesterday", "-3", 12, "None"]),
    (Q.LOGS, "stdout", lambda v: T.extended_bool("stdout", v),
     ["true", "False", "1", "0", "yes", "OFF", "maybe", True]),
    (Q.EXECUTE, "run", lambda v: T.strict_bool("run", v),
     ["true", "True", "false", "False", "TRUE", "1", True]),
    (Q.RESIZE, "h", lambda v: T.integer("h", v, 1, 65535),
     ["1", "24", "65535", "65536", "0", "-1", "x", 80]),
    (Q.CONTAINER_LIST, "all_projects", lambda v: T.lenient_bool("all_projects", v),
     ["1", "True", "yes", "N", "off", "\x85t", "\u2028no\u00a0", "\ufefft", "maybe", "2"]),
]


#: What a request needs besides the field under test.
REQUIRED = {id(Q.RESIZE): {"h": 1, "w": 1}, id(Q.EXECUTE): {"command": "ls"}}


@pytest.mark.parametrize(("query", "field", "parse", "value"), [
    (query, field, parse, value) for query, field, parse, values in AGREEMENT
    for value in values])
def test_the_declaration_accepts_exactly_what_the_parser_reads(
        query: Q.QueryParams, field: str, parse: Callable[[Any], Any], value: Any) -> None:
    params = {**REQUIRED.get(id(query), {}), field: value}
    assert accepts(query, params) == parses(parse, value), value


def test_a_refusal_is_zuns_400_naming_the_field() -> None:
    with pytest.raises(InvalidParameterValue) as caught:
        Q.STOP.check({"timeout": "soon"})
    assert isinstance(caught.value, T.InvalidParameterValue)      # a 400
    assert caught.value.msg.startswith("Invalid input for field 'timeout'. Value: 'soon'.")
    assert "whole number of seconds" in caught.value.msg


def test_none_is_absent_for_an_action_and_unknown_parameters_are_dropped() -> None:
    assert Q.KILL.check({"signal": "None", "other": "x"}) == {}
    assert Q.STOP.check({"timeout": None}) == {}


def test_a_required_parameter_is_named_when_missing() -> None:
    with pytest.raises(InvalidParameterValue) as caught:
        Q.EXECUTE.check({"run": "true"})
    assert caught.value.msg.startswith("Missing 'command': It must be a command line")


def test_the_container_list_refuses_unknown_parameters_in_zuns_words() -> None:
    with pytest.raises(InvalidParameterValue) as caught:
        Q.CONTAINER_LIST.check({"colour": "red", "limit": "5"})
    assert caught.value.msg.startswith("Unknown parameters: colour.")
    with pytest.raises(InvalidParameterValue) as caught:
        Q.CONTAINER_LIST.check({"limit": "0"})
    assert "'limit'" in caught.value.msg
    assert Q.CONTAINER_LIST.check({"limit": "5", "sort_dir": "desc", "name": "None"}) == {
        "limit": "5", "sort_dir": "desc", "name": "None"}


def test_every_list_pages_alike_and_the_closed_ones_refuse_unknown_parameters() -> None:
    for query, model in ((Q.CONTAINER_LIST, Container), (Q.CAPSULE_LIST, Container),
                         (Q.REGISTRY_LIST, Registry), (Q.IMAGE_LIST, Image),
                         (Q.HOST_LIST, ComputeNode)):
        assert {k: query.properties[k] for k in Q.page(model)} == Q.page(model)
        assert accepts(query, {"limit": "0000000000000000001"})
        assert not accepts(query, {"limit": "-1"})
        assert accepts(query, {"sort_key": "created_at"})
        assert not accepts(query, {"sort_key": "colour"})   # a column of the record
    assert not accepts(Q.CAPSULE_LIST, {"name": "x"})
    assert accepts(Q.IMAGE_LIST, {"name": "x"})          # images ignore them, as Zun


def test_resize_container_takes_the_updates_declarations_of_cpu_and_memory() -> None:
    query = Q.resize_container(CreateLimits(max_memory=1024))
    assert accepts(query, {"memory": "512"})
    assert not accepts(query, {"memory": "2048"})
    with pytest.raises(InvalidParameterValue) as caught:
        query.check({"name": "x"})
    assert caught.value.msg.startswith("Unknown parameters: name.")


def document() -> dict[str, Any]:
    state = ApiState(db=None, compute=None, scheduler=None,  # type: ignore[arg-type]
                     settings=ApiSettings(create_limits=LIMITS),
                     up_hosts=object())  # type: ignore[arg-type]
    return create_app(state).openapi()


PUBLISHED = [
    ("get", "/v1/containers", Q.CONTAINER_LIST),
    ("get", "/v1/containers/{ident}", Q.CONTAINER_SHOW),
    ("post", "/v1/containers", Q.CONTAINER_CREATE),
    ("delete", "/v1/containers/{ident}", Q.CONTAINER_DELETE),
    ("post", "/v1/containers/{ident}/stop", Q.STOP),
    ("post", "/v1/containers/{ident}/reboot", Q.REBOOT),
    ("post", "/v1/containers/{ident}/kill", Q.KILL),
    ("post", "/v1/containers/{ident}/rebuild", Q.rebuild(LIMITS)),
    ("post", "/v1/containers/{ident}/resize_container", Q.resize_container(LIMITS)),
    ("post", "/v1/containers/{ident}/rename", Q.RENAME),
    ("post", "/v1/containers/{ident}/add_security_group", Q.SECURITY_GROUP),
    ("get", "/v1/containers/{ident}/logs", Q.LOGS),
    ("get", "/v1/containers/{ident}/top", Q.TOP),
    ("get", "/v1/containers/{ident}/get_archive", Q.GET_ARCHIVE),
    ("post", "/v1/containers/{ident}/commit", Q.COMMIT),
    ("post", "/v1/containers/{ident}/execute", Q.EXECUTE),
    ("post", "/v1/containers/{ident}/execute_resize", Q.EXECUTE_RESIZE),
    ("post", "/v1/containers/{ident}/resize", Q.RESIZE),
    ("post", "/v1/containers/{ident}/network_attach", Q.NETWORK_ATTACH),
    ("get", "/v1/images", Q.IMAGE_LIST),
    ("get", "/v1/images/{image}/search", Q.image_search(LIMITS)),
    ("get", "/v1/hosts", Q.HOST_LIST),
    ("get", "/v1/capsules", Q.CAPSULE_LIST),
    ("get", "/v1/capsules/{ident}", Q.CAPSULE_ONE),
    ("get", "/v1/registries", Q.REGISTRY_LIST),
]


@pytest.mark.parametrize(("method", "path", "query"), PUBLISHED)
def test_each_declaration_is_published_as_the_operations_query_parameters(
        method: str, path: str, query: Q.QueryParams) -> None:
    operation = document()["paths"][path][method]
    published = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert set(published) == set(query.properties) - set(query.in_body)
    for name, parameter in published.items():
        assert parameter["schema"] == storable_strings(Q.as_text(query.properties[name]))
        assert parameter["required"] == (name in query.required)


def test_a_query_parameter_is_published_as_its_text_forms() -> None:
    timeout = Q.as_text(Q.STOP.properties["timeout"])
    assert timeout["type"] == "string" and "description" in timeout
    assert Q.as_text(Q.LOGS.properties["stdout"])["enum"][0] == "0"
    assert Q.as_text(Q.CONTAINER_LIST.properties["sort_dir"]) == \
        Q.CONTAINER_LIST.properties["sort_dir"]


def test_put_archive_publishes_path_in_the_query_and_data_in_the_body() -> None:
    operation = document()["paths"]["/v1/containers/{ident}/put_archive"]["post"]
    assert [p["name"] for p in operation["parameters"] if p["in"] == "query"] == ["path"]
    body = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["data"] and "additionalProperties" not in body
    assert "415" in operation["responses"]


def test_the_console_parsers_and_declarations_agree_on_exec_ids() -> None:
    good, bad = "a" * 64, "A" * 64
    assert accepts(Q.EXECUTE_RESIZE, {"exec_id": good, "h": "1", "w": "1"})
    assert not accepts(Q.EXECUTE_RESIZE, {"exec_id": bad, "h": "1", "w": "1"})
    assert console._EXEC_ID.fullmatch(good) and not console._EXEC_ID.fullmatch(bad)
