"""The cinder driver's decisions that need no Cinder: which microversion and attach
flow, which volumes can be attached, the endpoint, the connection info's shape, how
Cinder's errors read, and that a failed attach is undone last step first."""

from __future__ import annotations

from pathlib import Path

import pytest
from cinderclient import exceptions as cinder_exc
from keystoneauth1 import exceptions as ks_exc
from oslo_config import cfg

import berth.conf
from berth.common import exceptions as exc
from berth.volume.cinder import _Undo, attachable
from berth.volume.cinder_api import (
    CinderSessions,
    choose_microversion,
    endpoint_for,
    translated,
    uses_attachments_api,
)
from berth.volume.cinder_brick import factory_conn, normalized


@pytest.mark.parametrize(("configured", "server_max", "chosen"), [
    ("3", "3.71", "3.71"),             # the highest both speak
    ("3", "3.75", "3.71"),             # ... capped by cinderclient's own maximum
    ("3.latest", "3.50", "3.50"),
    ("auto", None, "3.0"),             # a Cinder that announces no microversions
    ("3.0", "3.71", "3.0"),            # a full microversion is sent as written
    ("3.44", "3.71", "3.44"),
    (" 3.27 ", None, "3.27"),
])
def test_the_microversion_is_the_configured_one_or_the_highest_both_speak(
        configured: str, server_max: str | None, chosen: str) -> None:
    assert choose_microversion(configured, server_max, "3.71") == chosen


def test_a_microversion_of_another_major_version_is_refused() -> None:
    with pytest.raises(exc.VolumeError, match="not a Cinder v3 microversion"):
        choose_microversion("2.0", "3.71", "3.71")


@pytest.mark.parametrize(("version", "attachments"), [
    ("3.0", False), ("3.27", False), ("3.43", False), ("3.44", True), ("3.71", True)])
def test_the_attachments_api_is_used_from_3_44_on(version: str, attachments: bool) -> None:
    assert uses_attachments_api(version) is attachments


@pytest.mark.parametrize(("status", "multiattach", "ok"), [
    ("available", False, True), ("available", True, True),
    ("in-use", True, True), ("in-use", False, False),
    ("creating", False, False), ("error", True, False), ("reserved", True, False)])
def test_a_volume_can_be_attached_when_available_or_in_use_and_multiattach(
        status: str, multiattach: bool, ok: bool) -> None:
    assert attachable(status, multiattach) is ok


def test_the_endpoint_gets_the_callers_project_when_it_asks_for_one() -> None:
    template = "http://127.0.0.1:8776/v3/%(project_id)s/"
    assert endpoint_for(template, "abc") == "http://127.0.0.1:8776/v3/abc"
    assert endpoint_for("http://c:8776/v3/", None) == "http://c:8776/v3"
    with pytest.raises(exc.VolumeError, match="drop %\\(project_id\\)s"):
        endpoint_for(template, None)


def test_connection_info_comes_in_one_shape_and_the_factory_sees_its_mount_base() -> None:
    legacy = {"driver_volume_type": "nfs", "mount_point_base": "/m",
              "data": {"export": "h:/e", "name": "volume-1"}}
    assert normalized(legacy) == legacy
    flat = {"driver_volume_type": "nfs", "export": "h:/e", "name": "volume-1",
            "mount_point_base": "/m"}
    info = normalized(flat)
    assert info == {"driver_volume_type": "nfs",
                    "data": {"export": "h:/e", "name": "volume-1", "mount_point_base": "/m"}}
    for shape in (legacy, info):
        conn = factory_conn(normalized(shape))
        assert conn["mount_point_base"] == "/m" and conn["export"] == "h:/e"
    with pytest.raises(ValueError, match="driver_volume_type"):
        normalized({"data": {}})


def test_cinders_errors_read_as_berths() -> None:
    cases = [
        (cinder_exc.NotFound(404, "Volume x could not be found."), exc.VolumeNotFound,
         "looking up x: Cinder has no such"),
        (cinder_exc.BadRequest(400, "Invalid volume: status must be available"),
         exc.VolumeError, "looking up x: Cinder answered 400 Invalid"),
        (ks_exc.ConnectFailure("connection refused"), exc.VolumeError, "cannot be reached"),
    ]
    for raised, expected, message in cases:
        with pytest.raises(expected, match=message), translated("looking up x"):
            raise raised


def test_a_failed_attach_is_undone_last_step_first_and_past_a_failing_step() -> None:
    done: list[str] = []
    undo = _Undo("vol-1")
    undo.push("unreserve", lambda: done.append("unreserve"))
    undo.push("terminate_connection", lambda: done.append("terminate"))

    def broken() -> None:
        raise RuntimeError("device busy")
    undo.push("disconnect_volume", broken)
    undo.push("umount", lambda: done.append("umount"))
    undo.drop("terminate_connection")
    undo.run()
    assert done == ["umount", "unreserve"]
    undo.run()                                   # nothing left to undo
    assert done == ["umount", "unreserve"]


def _conf(tmp_path: Path, *lines: str) -> cfg.ConfigOpts:
    path = tmp_path / "berth.conf"
    path.write_text("\n".join(lines) + "\n")
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    conf(["--config-file", str(path)], project="berth", default_config_files=[])
    return conf


def test_calls_without_a_token_need_berths_own_identity(tmp_path: Path) -> None:
    sessions = CinderSessions(_conf(tmp_path, "[cinder_client]",
                                    "endpoint_override = http://127.0.0.1:1/v3"))
    with pytest.raises(exc.VolumeError, match="set \\[cinder_client\\]auth_type"):
        sessions.api(None)


def test_the_catalog_needs_berths_own_identity_even_with_a_token(tmp_path: Path) -> None:
    from berth.common.context import RequestContext

    sessions = CinderSessions(_conf(tmp_path, "[cinder_client]", "api_version = 3.44"))
    ctx = RequestContext(project_id="p", auth_token="t")
    with pytest.raises(exc.VolumeError, match="find Cinder in the Keystone catalog"):
        sessions.api(ctx)


def test_the_driver_says_which_extra_to_install(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from berth.volume.cinder import CinderVolumeDriver

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "os_brick" else real(name, *a))
    with pytest.raises(exc.VolumeError, match="needs os-brick: install berth with its "
                                              "'cinder' extra"):
        CinderVolumeDriver(_conf(tmp_path))
