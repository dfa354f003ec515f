"""A Cinder volume Zun attached carries over in the shape berth's cinder driver reads
back (``berth.volume.cinder``: ``connection_info``, ``attachment_id``, ``device_path``),
so that berth's detach finds what Zun connected."""

from __future__ import annotations

import json

import pytest

from berth.db import models  # noqa: F401  (the tables carry() reads)
from berth.takeover.plan import Plan
from berth.takeover.volumes import convert

# what Zun 18 stores after its legacy attach of a volume of Cinder's NFS driver:
# initialize_connection's answer, data.device_path set once os-brick connected it
ZUN_INFO = {"driver_volume_type": "nfs",
            "data": {"export": "127.0.0.1:/srv/export", "name": "volume-1234",
                     "device_path": "/mnt/abc/volume-1234"},
            "mount_point_base": "/mnt"}


def volume_row(**extra: object) -> dict:
    return {"id": 1, "uuid": "6f1c1a4e-0c7b-4c9e-9d0e-1f2a3b4c5d6e", "project_id": "p",
            "user_id": "u", "cinder_volume_id": "1234", "volume_provider": "cinder",
            "host": "node", "auto_remove": 0, "contents": None, **extra}


def carried(row: dict) -> tuple[Plan, list[dict]]:
    plan = Plan()
    convert({"volume": [row], "volume_mapping": []}, plan, set())
    return plan, plan.rows.get("volume", [])


def test_zun_s_connection_info_becomes_berth_s_attachment_record() -> None:
    _, rows = carried(volume_row(connection_info=json.dumps(ZUN_INFO)))
    record = json.loads(rows[0]["connection_info"])
    assert record == {"connection_info": ZUN_INFO, "attachment_id": None,
                      "device_path": "/mnt/abc/volume-1234"}


@pytest.mark.parametrize("text", [None, ""])
def test_a_volume_never_attached_has_no_record(text: str | None) -> None:
    _, rows = carried(volume_row(connection_info=text))
    assert not rows[0]["connection_info"]


@pytest.mark.parametrize("text", ["{not json", '{"data": {}}', "[1]"])
def test_a_connection_info_berth_cannot_read_refuses_the_volume(text: str) -> None:
    plan, rows = carried(volume_row(connection_info=text))
    assert rows == []
    assert any("connection_info" in r for r in map(str, plan.uncarried))
