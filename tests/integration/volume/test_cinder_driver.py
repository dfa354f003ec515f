"""The cinder volume driver against a real Cinder 29 (see conftest): python-cinderclient
and os-brick for real, the NFS driver's volume files loop-mounted on this node. Every
check of Cinder's side reads it back over raw HTTP, not through the driver under test.

Both attach flows run: ``[cinder_client]api_version = 3`` negotiates 3.71 (the
attachments API), ``3.0`` keeps the legacy calls.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from integration.volume.conftest import ADMIN_TOKEN, CINDER_URL, PROJECT
from oslo_config import cfg

import berth.conf
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.volume.base import VolumeRef
from berth.volume.cinder import CinderVolumeDriver

pytestmark = pytest.mark.integration

FLOWS = {"attachments": "3", "legacy": "3.0"}
OTHER_PROJECT = "0123456789abcdef0123456789abcdef"
TIMINGS: dict[str, list[float]] = {}


def _timed(what: str, call: Callable[[], Any]) -> Any:
    t0 = time.monotonic()
    out = call()
    TIMINGS.setdefault(what, []).append(time.monotonic() - t0)
    return out


@pytest.fixture(scope="module", autouse=True)
def _print_timings() -> Iterator[None]:
    yield
    for what, values in sorted(TIMINGS.items()):
        print(f"cinder driver {what}: min {min(values):.2f} s, max {max(values):.2f} s "
              f"({len(values)} runs)")


def user(project: str = PROJECT, name: str = "admin") -> RequestContext:
    return RequestContext(user_id=name, project_id=project, auth_token=f"{name}:{project}")


def _is_mount_point(path: Path) -> bool:
    return subprocess.run(["mountpoint", "-q", str(path)], check=False).returncode == 0


class Env:
    """One test's drivers, volumes and Cinder reads."""

    def __init__(self, tmp_path: Path, raw: httpx.Client) -> None:
        self.tmp = tmp_path
        self.raw = raw
        self.host = f"berth-it-{uuidlib.uuid4().hex[:8]}"
        self.volume_ids: list[str] = []

    def driver(self, api_version: str = "3", *, fstype: str = "ext4",
               endpoint: str = f"{CINDER_URL}/%(project_id)s", own_identity: bool = False
               ) -> CinderVolumeDriver:
        lines = ["[DEFAULT]", f"host = {self.host}", f"state_path = {self.tmp / 'state'}",
                 "[volume]", f"volume_dir = {self.tmp / 'mnt'}", f"fstype = {fstype}",
                 "[cinder_client]", f"api_version = {api_version}",
                 f"endpoint_override = {endpoint}"]
        if own_identity:   # berth's own identity, for calls without a caller's token
            lines += ["auth_type = admin_token", f"token = {ADMIN_TOKEN}",
                      f"endpoint = {CINDER_URL}"]
        path = self.tmp / f"berth-{uuidlib.uuid4().hex[:6]}.conf"
        path.write_text("\n".join(lines) + "\n")
        conf = cfg.ConfigOpts()
        berth.conf.register_opts(conf)
        conf(["--config-file", str(path)], project="berth", default_config_files=[])
        return CinderVolumeDriver(conf, poll_interval=0.2)

    def new_volume(self, driver: CinderVolumeDriver, name: str | None = None,
                   ctx: RequestContext | None = None) -> VolumeRef:
        ctx = ctx or user()
        volume_id = _timed("create", lambda: driver.create(ctx, 1, name))
        self.volume_ids.append(volume_id)
        ref = VolumeRef(uuid=str(uuidlib.uuid4()), provider="cinder",
                        project_id=ctx.project_id, cinder_volume_id=volume_id, size_gib=1)
        return ref

    def cinder(self, volume_id: str, project: str = PROJECT) -> dict[str, Any] | None:
        resp = self.raw.get(f"{CINDER_URL}/{project}/volumes/{volume_id}",
                            headers={"X-Auth-Token": f"admin:{project}"})
        if resp.status_code == 404:
            return None
        resp.raise_for_status()
        return dict(resp.json()["volume"])

    def action(self, volume_id: str, body: dict[str, Any]) -> None:
        self.raw.post(f"/volumes/{volume_id}/action", json=body).raise_for_status()

    def attachments_here(self, volume_id: str) -> list[dict[str, Any]]:
        volume = self.cinder(volume_id)
        assert volume is not None
        return [a for a in volume["attachments"] if a.get("host_name") == self.host]

    def cleanup(self) -> None:
        mnt = self.tmp / "mnt"
        for d in mnt.iterdir() if mnt.is_dir() else []:
            if _is_mount_point(d):
                subprocess.run(["umount", "-l", str(d)], check=False)
        for volume_id in self.volume_ids:
            for project in (PROJECT, OTHER_PROJECT):
                volume = self.cinder(volume_id, project)
                if volume is None:
                    continue
                if volume["status"] != "available":
                    self.raw.post(f"{CINDER_URL}/{project}/volumes/{volume_id}/action",
                                  headers={"X-Auth-Token": f"admin:{project}"},
                                  json={"os-reset_status": {"status": "available",
                                                            "attach_status": "detached"}})
                self.raw.delete(f"{CINDER_URL}/{project}/volumes/{volume_id}",
                                headers={"X-Auth-Token": f"admin:{project}"})


@pytest.fixture
def env(tmp_path: Path, cinder_raw: httpx.Client) -> Iterator[Env]:
    e = Env(tmp_path, cinder_raw)
    yield e
    e.cleanup()


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_a_volume_goes_through_its_whole_life(env: Env, flow: str) -> None:
    driver = env.driver(FLOWS[flow])
    ctx = user()
    ref = env.new_volume(driver, f"life-{flow}")
    _timed("wait_available", lambda: driver.wait_available(ctx, ref, 30))
    assert driver.api(ctx).attachments_api is (flow == "attachments")

    attached = _timed(f"attach ({flow}, with mkfs)", lambda: driver.attach(ctx, ref))
    assert attached.path == str(env.tmp / "mnt" / ref.uuid)
    assert _is_mount_point(Path(attached.path)) and driver.is_attached(ref)
    record = attached.connection_info
    assert record is not None
    assert record["connection_info"]["driver_volume_type"] == "nfs"
    assert (record["attachment_id"] is not None) is (flow == "attachments")
    volume = env.cinder(ref.cinder_volume_id or "")
    assert volume is not None and volume["status"] == "in-use"
    assert [a["host_name"] for a in volume["attachments"]] == [env.host]
    Path(attached.path, "hello.txt").write_text(f"written through {flow}\n")
    ref = ref.with_connection(record)
    assert driver.attach(ctx, ref).path == attached.path          # idempotent

    _timed(f"detach ({flow})", lambda: driver.detach(ctx, ref))
    assert not os.path.exists(attached.path) and not driver.is_attached(ref)
    volume = env.cinder(ref.cinder_volume_id or "")
    assert volume is not None and volume["status"] == "available"
    assert volume["attachments"] == []
    driver.detach(ctx, ref)                                         # idempotent

    again = _timed(f"attach ({flow})", lambda: driver.attach(ctx, ref.with_connection(None)))
    assert Path(again.path, "hello.txt").read_text() == f"written through {flow}\n"
    driver.detach(ctx, ref.with_connection(again.connection_info))

    _timed("delete", lambda: driver.delete(ctx, ref, 30))
    assert env.cinder(ref.cinder_volume_id or "") is None
    driver.delete(ctx, ref, 30)                                     # gone already: no error


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_a_remount_reuses_the_record_and_an_unrecorded_attachment_is_released(
        env: Env, flow: str) -> None:
    driver = env.driver(FLOWS[flow])
    ctx = user()
    ref = env.new_volume(driver)
    driver.wait_available(ctx, ref, 30)
    first = driver.attach(ctx, ref)
    Path(first.path, "kept").write_text("kept")
    subprocess.run(["umount", first.path], check=True)            # the node rebooted

    remounted = driver.attach(ctx, ref.with_connection(first.connection_info))
    assert remounted.connection_info == first.connection_info
    assert Path(remounted.path, "kept").read_text() == "kept"
    assert len(env.attachments_here(ref.cinder_volume_id or "")) == 1

    subprocess.run(["umount", first.path], check=True)
    # an attach interrupted before berth kept its record: Cinder still has it attached here
    fresh = driver.attach(ctx, ref)
    assert Path(fresh.path, "kept").read_text() == "kept"
    assert len(env.attachments_here(ref.cinder_volume_id or "")) == 1
    driver.detach(ctx, ref.with_connection(fresh.connection_info))
    assert env.attachments_here(ref.cinder_volume_id or "") == []


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_a_failed_mount_undoes_the_attach(env: Env, flow: str) -> None:
    driver = env.driver(FLOWS[flow], fstype="nosuchfs")
    ctx = user()
    ref = env.new_volume(driver)
    driver.wait_available(ctx, ref, 30)
    with pytest.raises(exc.VolumeError, match="mkfs.nosuchfs is not installed"):
        driver.attach(ctx, ref)
    volume = env.cinder(ref.cinder_volume_id or "")
    assert volume is not None and volume["status"] == "available"
    assert volume["attachments"] == []
    assert not os.path.exists(driver.mount_path(ref))
    # and the volume is as good as new
    good = env.driver(FLOWS[flow])
    attached = good.attach(ctx, ref)
    good.detach(ctx, ref.with_connection(attached.connection_info))


def test_a_filesystem_that_does_not_mount_is_never_formatted(env: Env) -> None:
    ext4 = env.driver()
    ctx = user()
    ref = env.new_volume(ext4)
    ext4.wait_available(ctx, ref, 30)
    attached = ext4.attach(ctx, ref)
    Path(attached.path, "precious").write_text("data")
    ext4.detach(ctx, ref.with_connection(attached.connection_info))

    with pytest.raises(exc.VolumeError, match="holds a ext4 filesystem"):
        env.driver(fstype="xfs").attach(ctx, ref)
    assert env.attachments_here(ref.cinder_volume_id or "") == []
    attached = ext4.attach(ctx, ref)
    assert Path(attached.path, "precious").read_text() == "data"
    ext4.detach(ctx, ref.with_connection(attached.connection_info))


def test_waiting_on_a_volume_that_stays_creating_times_out(env: Env) -> None:
    driver = env.driver()
    ctx = user()
    ref = env.new_volume(driver)
    driver.wait_available(ctx, ref, 30)
    env.action(ref.cinder_volume_id or "", {"os-reset_status": {"status": "creating"}})
    t0 = time.monotonic()
    with pytest.raises(exc.VolumeUnavailable, match=r"still creating after 1\.5 s") as err:
        driver.wait_available(ctx, ref, 1.5)
    assert 1.4 <= time.monotonic() - t0 < 5
    assert ref.cinder_volume_id in err.value.msg and ref.uuid in err.value.msg


def test_a_volume_in_error_is_unavailable_at_once(env: Env) -> None:
    driver = env.driver()
    ctx = user()
    ref = env.new_volume(driver, "broken")
    driver.wait_available(ctx, ref, 30)
    env.action(ref.cinder_volume_id or "", {"os-reset_status": {"status": "error"}})
    t0 = time.monotonic()
    with pytest.raises(exc.VolumeUnavailable, match="is in status error") as err:
        driver.wait_available(ctx, ref, 30)
    assert time.monotonic() - t0 < 5
    assert ref.cinder_volume_id in err.value.msg
    with pytest.raises(exc.VolumeUnavailable, match="is error and not multi-attach"):
        driver.find(ctx, ref.cinder_volume_id or "")
    driver.delete(ctx, ref, 30)
    assert env.cinder(ref.cinder_volume_id or "") is None


def test_find_by_id_by_name_and_in_the_callers_project_only(env: Env) -> None:
    driver = env.driver()
    ctx = user()
    name = f"find-{uuidlib.uuid4().hex[:6]}"
    ref = env.new_volume(driver, name)
    driver.wait_available(ctx, ref, 30)

    by_id = driver.find(ctx, ref.cinder_volume_id or "")
    by_name = driver.find(ctx, name)
    assert by_id == by_name
    assert (by_id.volume_id, by_id.status, by_id.size_gib) == (ref.cinder_volume_id,
                                                               "available", 1)
    with pytest.raises(exc.VolumeNotFound, match="no volume with id or name"):
        driver.find(ctx, "no-such-volume")
    with pytest.raises(exc.VolumeNotFound, match="no volume with id or name"):
        driver.find(ctx, str(uuidlib.uuid4()))
    with pytest.raises(exc.VolumeNotFound, match=f"in project {OTHER_PROJECT}"):
        driver.find(user(OTHER_PROJECT, "bob"), name)

    twin = env.new_volume(driver, name)
    driver.wait_available(ctx, twin, 30)
    with pytest.raises(exc.VolumeNotFound, match="several Cinder volumes are named") as err:
        driver.find(ctx, name)
    assert ref.cinder_volume_id in err.value.msg and twin.cinder_volume_id in err.value.msg

    attached = driver.attach(ctx, ref)
    with pytest.raises(exc.VolumeUnavailable, match="is in-use and not multi-attach"):
        driver.find(ctx, ref.cinder_volume_id or "")
    driver.detach(ctx, ref.with_connection(attached.connection_info))


def test_calls_without_a_caller_use_berths_own_identity(env: Env) -> None:
    """Recovery and auto-remove on the agent have no caller's token: berth's own
    [cinder_client] identity (here the admin_token plugin) and an endpoint without a
    project id (Cinder 3.67+)."""
    driver = env.driver(endpoint=CINDER_URL, own_identity=True)
    ref = env.new_volume(driver)
    driver.wait_available(None, ref, 30)
    attached = driver.attach(None, ref)
    assert len(env.attachments_here(ref.cinder_volume_id or "")) == 1
    driver.detach(None, ref.with_connection(attached.connection_info))
    driver.delete(None, ref, 30)
    assert env.cinder(ref.cinder_volume_id or "") is None

    without = env.driver()
    with pytest.raises(exc.VolumeError, match="set \\[cinder_client\\]auth_type"):
        without.wait_available(None, ref, 1)



def test_volumes_attach_and_detach_at_once_from_several_threads(env: Env) -> None:
    """The agent attaches the volumes of different containers at once."""
    from concurrent.futures import ThreadPoolExecutor

    driver = env.driver()
    ctx = user()
    refs = [env.new_volume(driver) for _ in range(3)]
    for ref in refs:
        driver.wait_available(ctx, ref, 30)
    with ThreadPoolExecutor(3) as pool:
        attached = list(pool.map(lambda r: driver.attach(ctx, r), refs))
        for ref, a in zip(refs, attached, strict=True):
            Path(a.path, "id").write_text(ref.uuid)
        assert {Path(a.path, "id").read_text() for a in attached} == {r.uuid for r in refs}
        list(pool.map(lambda pair: driver.detach(ctx, pair[0].with_connection(
            pair[1].connection_info)), zip(refs, attached, strict=True)))
    for ref in refs:
        assert env.attachments_here(ref.cinder_volume_id or "") == []
        assert not driver.is_attached(ref)


def test_an_attached_volume_is_not_deleted(env: Env) -> None:
    driver = env.driver()
    ctx = user()
    ref = env.new_volume(driver)
    driver.wait_available(ctx, ref, 30)
    attached = driver.attach(ctx, ref)
    with pytest.raises(exc.VolumeError, match=f"deleting Cinder volume {ref.cinder_volume_id}: "
                                              f"Cinder answered 400"):
        driver.delete(ctx, ref, 5)
    assert driver.is_attached(ref)
    driver.detach(ctx, ref.with_connection(attached.connection_info))
    driver.delete(ctx, ref, 30)
    assert env.cinder(ref.cinder_volume_id or "") is None
