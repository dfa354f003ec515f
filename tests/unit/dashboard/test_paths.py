"""Which console paths answer without a token."""

from __future__ import annotations

import pytest

from berth.dashboard.paths import is_public


@pytest.mark.parametrize("path", ["/dashboard", "/dashboard/", "/dashboard/index.html",
                                  "/dashboard/assets/index-abc.js", "/dashboard/api/config",
                                  "/dashboard/api/login"])
def test_static_files_and_login_are_public(path: str) -> None:
    assert is_public(path)


@pytest.mark.parametrize("path", ["/dashboard/api/events", "/dashboard/api/other",
                                  "/dashboardx", "/v1/containers", "/"])
def test_the_event_stream_and_other_paths_are_not(path: str) -> None:
    assert not is_public(path)
