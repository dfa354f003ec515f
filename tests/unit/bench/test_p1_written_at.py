"""P1 times berth to the row's write of Running: its ``updated_at`` (the API's naive
UTC) read as the same clock as the harness's ``time.time()``."""

from __future__ import annotations

import datetime as dt

from bench.p1_p2_create import written_at


def test_updated_at_is_read_as_utc_with_its_microseconds() -> None:
    expected = dt.datetime(2026, 12, 4, 19, 6, 33, 123456, dt.UTC).timestamp()
    assert written_at({"updated_at": "2026-12-04 19:06:33.123456"}) == expected
    assert written_at({"updated_at": "2026-12-04 19:06:33"}) == expected - 0.123456
