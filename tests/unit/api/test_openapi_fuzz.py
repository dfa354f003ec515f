"""Schemathesis over berth's own ``/openapi.json`` (issue 21, R4), for the container,
capsule and network operations whose query parameters and bodies are declared: every
case it makes from the document, valid (positive) or not (negative), against the real
application on a real SQLite database. No Docker: the container's node is a stand-in
agent that answers every RPC method (it never pulls, creates or runs anything). For
each case:

- never a 5xx;
- a status and content type the document lists;
- a negative case (a value outside the declaration) is refused with a 4xx;
- a positive case is never refused for one of its query parameters (a 400 naming it):
  the declaration published and the check applied are the same.

The stateful run follows the document's links (``berth.api.openapi.CREATED_BY``): a
create's ``uuid`` used by the show, update, actions and delete of what it made, in
sequences of a few steps, with the same checks.

``BERTH_FUZZ_EXAMPLES`` sets the examples per operation and mode, and the stateful
run's sequences (default 25).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    status_code_conformance,
)
from support.api_world import EXAMPLES, HEADERS, World

from berth.api.schemas import queries as Q
from berth.api.state import ApiSettings
from berth.common import unstorable
from berth.db import containers
from berth.db.models import Base


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("fuzz")
    w = World(root)
    yield w
    w.close()
    shutil.rmtree(root, ignore_errors=True)


#: The operations with declared query parameters (berth.api.schemas.queries), by label.
DECLARED = sorted({f"{method.upper()} {path}" for method, path, _query in [
    ("get", "/v1/containers", None), ("get", "/v1/containers/{ident}", None),
    ("get", "/v1/images", None), ("get", "/v1/hosts", None), ("get", "/v1/capsules", None),
    ("get", "/v1/registries", None),
    ("delete", "/v1/containers/{ident}", None),
    *((m, f"/v1/containers/{{ident}}/{a}", None) for m, a in (
        ("post", "stop"), ("post", "reboot"), ("post", "kill"), ("post", "rebuild"),
        ("post", "resize_container"), ("post", "add_security_group"),
        ("post", "remove_security_group"), ("get", "logs"), ("get", "top"),
        ("get", "get_archive"), ("post", "put_archive"), ("post", "commit"),
        ("post", "execute"), ("post", "execute_resize"), ("post", "resize"),
        ("post", "network_detach"))),
    # declared bodies (berth.api.schemas.container, capsule, networks)
    ("post", "/v1/containers", None), ("patch", "/v1/containers/{ident}", None),
    ("post", "/v1/capsules", None), ("get", "/v1/capsules/{ident}", None),
    ("delete", "/v1/capsules/{ident}", None), ("post", "/v1/networks", None)]})


#: Refusals by rules a declaration cannot state (schemas/__init__.py): one across two
#: parameters (commit's tag), shell quoting (execute's command).
ACROSS = ("already carries a tag", "close every quote", "names no program to run")


def _query_refusal(case: Any, text: str) -> str | None:
    """The query parameter a 400 names, if it names one of the case's alone."""
    if any(rule in text for rule in ACROSS):
        return None
    found = re.search(r"Invalid input for field '([^'.\[]+)", text)
    if found and found.group(1) in (case.query or {}):
        if unstorable.UNSTORABLE.search(str(case.query[found.group(1)])):
            # The document excludes NUL from every string (openapi.STORABLE), but a
            # positive case may still hold one: its refusal is the one promised.
            return None
        return found.group(1)
    return None


@pytest.mark.parametrize("label", DECLARED)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_schemathesis_finds_nothing_the_document_does_not_promise(
        world: World, label: str, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", world.app)
    operation = schema[label.split(" ", 1)[1]][label.split(" ", 1)[0]]

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        fixed = None
        if "{ident}" in label:
            fixed = {"ident": world.capsule() if "/capsules/" in label
                     else world.container()}
        case = data.draw(operation.as_strategy(generation_mode=mode, path_parameters=fixed,
                                               headers=HEADERS))
        response = case.call()
        checks = [not_a_server_error, status_code_conformance, content_type_conformance]
        if mode is GenerationMode.NEGATIVE:
            checks.append(negative_data_rejection)
        case.validate_response(response, checks=checks)
        if mode is GenerationMode.POSITIVE and response.status_code == 400:
            named = _query_refusal(case, response.text)
            assert named is None, f"{label} refused {named}={case.query[named]!r}: " \
                                  f"{response.text}"

    run()


def test_every_declared_query_is_fuzzed() -> None:
    declared = {query.what for query in vars(Q).values() if isinstance(query, Q.QueryParams)}
    assert declared >= {"stop", "reboot", "kill", "logs", "execute", "resize",
                        "container list"}
    assert len(DECLARED) == 29


#: The operations the stateful run chains: the creates and what their links reach.
LINKED = r"^/v1/(containers|capsules|networks)(/|$)"


@pytest.fixture(scope="module")
def open_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """A World that takes any image (no image validation: the stand-in agent knows
    none), so that a positive create makes a container for the links to reach."""
    root = tmp_path_factory.mktemp("fuzz-stateful")
    w = World(root, ApiSettings(enable_image_validation=False))
    yield w
    w.close()
    shutil.rmtree(root, ignore_errors=True)


def test_schemathesis_stateful_follows_the_links_and_finds_nothing_unpromised(
        open_world: World) -> None:
    world = open_world
    schema = schemathesis.openapi.from_asgi("/openapi.json", world.app)
    base = schema.include(path_regex=LINKED).as_state_machine()
    chained: list[str] = []       # linked operations that reached what a create made

    class Workflow(base):  # type: ignore[misc, valid-type]
        def setup(self) -> None:
            world.reset()

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"headers": HEADERS}

        def validate_response(self, response: Any, case: Any,
                              additional_checks: Any = None, **kwargs: Any) -> None:
            case.validate_response(response, checks=[
                not_a_server_error, status_code_conformance, content_type_conformance])
            # A linked call found what a create made (the stand-in agent leaves it
            # Creating, so most actions answer 409 for its status, none 404).
            ident = (case.path_parameters or {}).get("ident")
            if ident and response.status_code != 404 and containers.find_by_uuid(
                    world.db, str(ident)) is not None:
                chained.append(f"{case.method} {case.path}")

    Workflow.run(settings=settings(max_examples=EXAMPLES, stateful_step_count=5,
                                   deadline=None, database=None,
                                   suppress_health_check=list(HealthCheck)))
    assert chained, "no sequence used what a create made: are the links published?"


def test_a_create_links_to_every_operation_on_what_it_made(world: World) -> None:
    doc = world.app.openapi()
    links = doc["paths"]["/v1/containers"]["post"]["responses"]["202"]["links"]
    under = {f"{m.upper()} {p}" for p, ops in doc["paths"].items()
             if p.startswith("/v1/containers/{ident}") for m in ops}
    assert len(links) == len(under)
    assert all(link["parameters"]["ident"] == "$response.body#/uuid"
               for link in links.values())
    # the create's action record: its request id is the create's
    assert sum("request_id" in link["parameters"] for link in links.values()) == 1
    assert "links" in doc["paths"]["/v1/capsules"]["post"]["responses"]["202"]


# -- characters berth cannot store or pass on (issue 42) --------------------------------
#
# Schemathesis draws its strings from valid UTF-8 (no lone surrogate) and, from the
# document, without NUL: neither is in its cases. Here each positive case gets one,
# at a place Hypothesis picks: a string of its body (any surrogate or NUL, sent as a
# JSON escape) or of its query (NUL: a lone surrogate has no UTF-8 to percent-encode).

UNSTORABLE_CHARS = st.sampled_from(["\x00", "\ud800", "\udbff", "\udc00", "\udfff"])
SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])
#: Body fields that carry bytes as text, where a NUL is data (put_archive's tar before
#: API 1.25; berth.api.body.refuse_unstorable's ``binary``).
BINARY = {("POST /v1/containers/{ident}/put_archive", ("data",))}


def _string_leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_leaves(item, (*path, index))


def _rows(world: World) -> dict[str, int]:
    with world.db.writer() as s:
        return {t.name: len(s.execute(t.select()).all())
                for t in Base.metadata.sorted_tables}


@pytest.mark.parametrize("label", DECLARED)
def test_a_nul_or_lone_surrogate_in_any_string_of_a_case_is_a_400_naming_it(
        world: World, label: str) -> None:
    from starlette.testclient import TestClient

    schema = schemathesis.openapi.from_asgi("/openapi.json", world.app)
    method, path = label.split(" ", 1)
    operation = schema[path][method]
    client = TestClient(world.app)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        fixed = None
        if "{ident}" in label:
            fixed = {"ident": world.capsule() if "/capsules/" in label
                     else world.container()}
        case = data.draw(operation.as_strategy(generation_mode=GenerationMode.POSITIVE,
                                               path_parameters=fixed, headers=HEADERS))
        query = {k: v for k, v in (case.query or {}).items() if isinstance(v, str)}
        body = case.body if isinstance(case.body, (dict, list)) else None
        assume(unstorable.first_unstorable([query, body]) is None)
        places = [("query", (k,)) for k in query] + \
            [("body", p) for p in _string_leaves(body)]
        if not places:                         # nothing to put it in: a parameter of its own
            query["injected"] = ""
            places = [("query", ("injected",))]
        where, at = data.draw(st.sampled_from(places))
        char = data.draw(st.just("\x00") if where == "query" else SURROGATES
                         if (label, at) in BINARY else UNSTORABLE_CHARS)
        holder: Any = query if where == "query" else body
        for step in at[:-1]:
            holder = holder[step]
        text = holder[at[-1]]
        cut = data.draw(st.integers(0, len(text)))
        holder[at[-1]] = text[:cut] + char + text[cut:]
        before = _rows(world)
        response = client.request(
            method, case.formatted_path, params=query, headers={
                **HEADERS, "Content-Type": "application/json"},
            content=json.dumps(body).encode() if body is not None else None)
        assert response.status_code == 400, (label, where, at, response.text)
        (error,) = response.json()["errors"]
        field = unstorable.field_name(at) if where == "body" else at[0]
        assert f"Invalid input for field '{field}'" in error["detail"], (label, error)
        assert _rows(world) == before

    run()
