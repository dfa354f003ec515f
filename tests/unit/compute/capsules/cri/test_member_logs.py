"""Reading CRI log files as ``docker logs`` prints them (pure, on a file)."""

from __future__ import annotations

from pathlib import Path

from berth.compute.capsules.cri.members import read_logs

LOG = (
    "2026-12-02T12:00:00.000000001Z stdout F one\n"
    "2026-12-02T12:00:01.000000001Z stderr P par\n"
    "2026-12-02T12:00:01.000000002Z stderr F tial\n"
    "2026-12-02T12:00:02.500000000Z stdout F two\n"
    "2026-12-02T12:00:03.000000000Z stdout F \n"
)


def logs(tmp_path: Path, **kwargs: object) -> str:
    path = tmp_path / "m.log"
    path.write_text(LOG)
    options = {"stdout": True, "stderr": True, "timestamps": False, "tail": None,
               "since": None, **kwargs}
    return read_logs(path, **options)  # type: ignore[arg-type]


def test_partial_records_are_joined_and_streams_filtered(tmp_path: Path) -> None:
    assert logs(tmp_path) == "one\npartial\ntwo\n\n"
    assert logs(tmp_path, stderr=False) == "one\ntwo\n\n"
    assert logs(tmp_path, stdout=False) == "partial\n"


def test_tail_timestamps_and_since(tmp_path: Path) -> None:
    assert logs(tmp_path, tail=2) == "two\n\n"
    assert logs(tmp_path, tail="all").count("\n") == 4
    assert logs(tmp_path, tail=0) == ""
    assert logs(tmp_path, timestamps=True, tail=1) == "2026-12-02T12:00:03.000000000Z \n"
    since = 1796212802.0          # 2026-12-02T12:00:02Z
    assert logs(tmp_path, since=since) == "two\n\n"


def test_a_missing_file_is_no_output(tmp_path: Path) -> None:
    assert read_logs(tmp_path / "none.log", stdout=True, stderr=True, timestamps=False,
                     tail=None, since=None) == ""
