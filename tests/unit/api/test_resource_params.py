"""Input parsing of the resource APIs: paging parameters, service identifiers,
registry bodies, image pull bodies and the hosts microversion."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.migrated_sqlite import migrated_url

from berth.api.microversions import APIVersion
from berth.api.operations import images as images_api
from berth.api.operations import registries as registries_api
from berth.api.operations import resources
from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import containers, nodes
from berth.db.engine import Database


@pytest.fixture
def state(tmp_path: Path) -> Iterator[ApiState]:
    db = Database(migrated_url(tmp_path))
    nodes.upsert_compute_node(db, "node1", {"cpus": 2, "mem_total": 1024})
    yield ApiState(db=db, compute=None, scheduler=None,  # type: ignore[arg-type]
                   settings=ApiSettings(default_registry=None))
    db.dispose()


# -- paging -----------------------------------------------------------------------------------

def test_page_params_default_clamp_and_refuse() -> None:
    page = resources.page_params({}, 1000, "hostname")
    assert (page.limit, page.marker, page.sort_key, page.sort_dir) == \
        (1000, None, "hostname", "asc")
    assert resources.page_params({"limit": "5000"}, 1000, "id").limit == 1000
    for bad in ("0", "-1", "ten", "1.5", "9" * 30):
        with pytest.raises(exc.InvalidParameterValue):
            resources.page_params({"limit": bad}, 1000, "id")
    with pytest.raises(exc.InvalidParameterValue) as err:
        resources.page_params({"sort_dir": "up"}, 1000, "id")
    assert "asc or desc" in err.value.msg


def test_the_host_list_sorts_by_the_usage_it_shows(state: ApiState) -> None:
    # node1's row says it holds 900 MiB (lagging); its containers hold none, and
    # node2's 256: by what the list shows, node1 comes first
    nodes.upsert_compute_node(state.db, "node1", {"mem_used": 900})
    nodes.upsert_compute_node(state.db, "node2", {"cpus": 2, "mem_total": 1024})
    containers.create(state.db, {"project_id": "p", "host": "node2", "status": "Running",
                                 "memory": "256"})
    listed = resources.list_hosts(state, RequestContext.admin("req"), limit=10, marker=None,
                                  sort_key="mem_used", sort_dir="asc")
    assert [n.hostname for n in listed] == ["node1", "node2"]


def test_hosts_need_1_4() -> None:
    resources.require_version(APIVersion(1, 4), "1.4", "GET /v1/hosts")
    with pytest.raises(exc.NotAcceptable) as err:
        resources.require_version(APIVersion(1, 3), "1.4", "GET /v1/hosts")
    assert "1.4" in err.value.msg and "1.3" in err.value.msg


# -- services ---------------------------------------------------------------------------------

@pytest.mark.parametrize("params, word", [
    ({"binary": "zun-compute"}, "'host' is a required"),
    ({"host": "n1"}, "'binary' is a required"),
    ({"host": "None", "binary": "zun-compute"}, "'host' is a required"),
    ({"host": "a b", "binary": "zun-compute"}, "field 'host'"),
    ({"host": "n1", "binary": ""}, "field 'binary'"),
])
def test_service_identifiers_are_required_and_checked(params: dict[str, Any], word: str) -> None:
    with pytest.raises(exc.InvalidParameterValue) as err:
        resources._service_ident(params)
    assert word in err.value.msg


# -- registries -------------------------------------------------------------------------------

@pytest.mark.parametrize("domain", ["registry.example.com", "127.0.0.1:5000", "localhost",
                                    "localhost:5000", "docker.io"])
def test_registry_domains_that_name_a_registry_host(domain: str) -> None:
    assert registries_api._parse({"domain": domain}, creating=True) == {"domain": domain}


@pytest.mark.parametrize("domain", ["myregistry", "https://r.example", "r.example/path", "",
                                    "r.example:port", 5000])
def test_registry_domains_that_do_not(domain: Any) -> None:
    with pytest.raises(exc.InvalidParameterValue) as err:
        registries_api._parse({"domain": domain}, creating=True)
    assert "domain" in err.value.msg


def test_registry_bodies_must_be_wrapped_and_known() -> None:
    for body, word in (({"domain": "r.example"}, "'registry' is a required property"),
                       ({"registry": "r.example"}, "field 'registry'"),
                       (None, "must be a JSON object such as {\"registry\""),
                       ([], "must be a JSON object such as {\"registry\"")):
        with pytest.raises(exc.InvalidParameterValue) as err:
            registries_api._unwrap(body)
        assert word in err.value.msg
    with pytest.raises(exc.InvalidParameterValue) as err:
        registries_api._parse(registries_api._unwrap(
            {"registry": {"domain": "r.example", "token": "x"}}), creating=True)
    assert "'token'" in err.value.msg
    with pytest.raises(exc.InvalidParameterValue) as err:
        registries_api._parse({"name": "reg"}, creating=True)
    assert "'domain' is a required property" in err.value.msg
    assert registries_api._parse({"username": None}, creating=False) == {"username": None}


# -- image pulls ------------------------------------------------------------------------------

def test_a_pull_body_is_split_into_repo_tag_and_host(state: ApiState) -> None:
    assert images_api._parse_pull(state, {"repo": "busybox", "host": "node1"}) == \
        ("busybox", "latest", "node1")
    assert images_api._parse_pull(state, {"repo": "127.0.0.1:5000/a/b:v1", "host": "node1"}) \
        == ("127.0.0.1:5000/a/b", "v1", "node1")
    assert images_api._parse_pull(state, {"repo": "team/app", "tag": "v2", "host": "node1"}) \
        == ("team/app", "v2", "node1")
    node = nodes.get_compute_node(state.db, "node1")
    assert images_api._parse_pull(state, {"repo": "app", "host": node.uuid})[2] == "node1"


@pytest.mark.parametrize("body, word", [
    ({"repo": "busybox"}, "'host' is a required"),
    ({"host": "node1"}, "'repo' is a required"),
    ({"repo": "busybox", "host": "node9"}, "No compute host"),
    ({"repo": "Busy Box", "host": "node1"}, "Busy Box"),
    ({"repo": "app:v1", "tag": "v2", "host": "node1"}, "send the tag once"),
    ({"repo": "app", "host": "node1", "size": 1, "extra": 1}, "'extra'"),
    ("busybox", "JSON object"),
])
def test_bad_pull_bodies_are_refused(state: ApiState, body: Any, word: str) -> None:
    with pytest.raises(exc.InvalidParameterValue) as err:
        images_api._parse_pull(state, body)
    assert word in err.value.msg
