"""The compute RPC contract (rpc-compute.md §3) pinned: an agent of the previous release
keeps working with a new API, and the reverse, only while the method names and their
argument names stay Zun's. Every method the agent serves is one of Zun's, with Zun's
arguments; the API's client casts and calls them with exactly those names."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from berth.compute.manager import ComputeManager
from berth.rpc.client import ComputeAPI

#: Zun's compute RPC methods and their arguments (besides the request context).
CONTRACT: dict[str, tuple[str, ...]] = {
    "container_create": ("limits", "requested_networks", "requested_volumes", "container",
                         "run", "pci_requests"),
    "container_delete": ("container", "force"),
    "container_show": ("container",),
    "container_rebuild": ("container", "run"),
    "container_reboot": ("container", "timeout"),
    "container_stop": ("container", "timeout"),
    "container_start": ("container",),
    "container_pause": ("container",),
    "container_unpause": ("container",),
    "container_kill": ("container", "signal"),
    "container_logs": ("container", "stdout", "stderr", "timestamps", "tail", "since"),
    "container_exec": ("container", "command", "run", "interactive"),
    "container_exec_resize": ("exec_id", "height", "width"),
    "container_update": ("container", "patch"),
    "resize_container": ("container", "patch"),
    "container_attach": ("container",),
    "container_resize": ("container", "height", "width"),
    "container_top": ("container", "ps_args"),
    "container_get_archive": ("container", "path", "encode_data"),
    "container_put_archive": ("container", "path", "data", "decode_data"),
    "container_stats": ("container",),
    "container_commit": ("container", "repository", "tag"),
    "add_security_group": ("container", "security_group"),
    "remove_security_group": ("container", "security_group"),
    "network_attach": ("container", "requested_network"),
    "network_detach": ("container", "network"),
    "image_pull": ("image",),
    "image_delete": ("image",),
    "image_search": ("image", "image_driver_name", "exact_match", "registry"),
    "network_create": ("neutron_net_id",),
    "network_delete": ("network",),
}


def arguments(function: Any) -> dict[str, inspect.Parameter]:
    return {name: p for name, p in inspect.signature(function).parameters.items()
            if name not in ("self", "context", "ctx")}


def test_the_agent_serves_only_zuns_methods() -> None:
    assert ComputeManager.RPC_METHODS <= set(CONTRACT), \
        sorted(ComputeManager.RPC_METHODS - set(CONTRACT))
    # What Zun's API casts for every container action is served.
    assert {"container_create", "container_delete", "container_start", "container_stop",
            "container_show", "container_update", "image_pull"} <= ComputeManager.RPC_METHODS


@pytest.mark.parametrize("method", sorted(ComputeManager.RPC_METHODS))
def test_each_method_takes_zuns_arguments(method: str) -> None:
    served = arguments(getattr(ComputeManager, method))
    required = {n for n, p in served.items() if p.default is inspect.Parameter.empty}
    # Zun's arguments are all accepted; anything berth added must have a default, so
    # that a caller of the previous release, which does not send it, still works.
    assert set(CONTRACT[method]) <= set(served), (method, sorted(served))
    assert required <= set(CONTRACT[method]), (method, sorted(required))


def test_the_api_client_sends_the_contracts_names() -> None:
    """Every cast or call the API makes names a contract method with contract
    arguments (read from the client's source, where each is one literal call)."""
    source = inspect.getsource(ComputeAPI)
    for method, args in CONTRACT.items():
        if f'"{method}"' not in source:
            continue
        body = source.split(f'"{method}"', 1)[1].split(")", 1)[0]
        sent = {part.split("=")[0].strip() for part in body.split(",") if "=" in part}
        assert sent - {"context"} <= set(args), (method, sorted(sent - set(args)))
