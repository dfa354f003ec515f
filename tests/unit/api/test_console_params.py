"""Parameters of execute / resize and the console URL (api-v1.md §7.7, §7.8)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from berth.api.operations.console import console_url, parse_command
from berth.common.exceptions import InvalidParameterValue


@pytest.mark.parametrize("given, argv", [
    ('"echo" "hi"', ["echo", "hi"]),                 # the zun CLI quotes every word
    ("echo hi", ["echo", "hi"]),                     # the python API sends it as given
    ('"sh" "-c" "exit 3"', ["sh", "-c", "exit 3"]),
    ("sh", ["sh"]),
])
def test_command_is_split_with_shell_rules(given: str, argv: list[str]) -> None:
    assert parse_command(given) == argv


@pytest.mark.parametrize("given", [None, "None", "", "   ", '"unclosed', 42, ["ls"]])
def test_bad_command_is_a_400(given: object) -> None:
    with pytest.raises(InvalidParameterValue):
        parse_command(given)


def test_console_url_appends_the_query() -> None:
    url = console_url("ws://127.0.0.1:6784/", token="t/+=", uuid="u1", exec_id="e" * 64)
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == ("ws", "127.0.0.1:6784", "/")
    assert parse_qs(parts.query) == {"token": ["t/+="], "uuid": ["u1"], "exec_id": ["e" * 64]}


def test_console_url_keeps_a_query_of_the_base() -> None:
    assert console_url("wss://h/console?site=a", token="t", uuid="u") == \
        "wss://h/console?site=a&token=t&uuid=u"
