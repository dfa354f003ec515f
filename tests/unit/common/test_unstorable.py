"""berth.common.unstorable: which strings berth cannot store or pass on (a NUL, a lone
surrogate), where in a JSON value they are, and how a stored one is rendered."""

from __future__ import annotations

import json

import pytest

from berth.common import unstorable


@pytest.mark.parametrize("text", ["\x00", "a\ud800", "\udfff", "x\udc00y"])
def test_nul_and_each_lone_surrogate_are_unstorable(text: str) -> None:
    assert unstorable.UNSTORABLE.search(text)


@pytest.mark.parametrize("text", ["é", "😀", "日本", "\t\n", "\\ud800", "\ufffd", ""])
def test_characters_and_escapes_written_out_are_storable(text: str) -> None:
    assert unstorable.UNSTORABLE.search(text) is None


def test_a_json_surrogate_pair_decodes_to_one_storable_character() -> None:
    assert json.loads('"\\ud83d\\ude00"') == "😀"
    assert unstorable.first_unstorable(json.loads('{"a": "\\ud83d\\ude00"}')) is None


def test_the_first_unstorable_string_is_named_by_its_path_keys_included() -> None:
    body = {"name": "ok", "spec": {"containers": [{"command": ["sh", "a\x00"]}]}}
    assert unstorable.first_unstorable(body) == ("spec.containers[0].command[1]", "a\x00")
    assert unstorable.first_unstorable({"labels": {"k\ud800": "v"}}) == \
        ("labels.k\\ud800", "k\ud800")
    assert unstorable.first_unstorable(["a", "\udc00"]) == ("[1]", "\udc00")
    assert unstorable.first_unstorable("\x00") == ("(the body)", "\x00")
    assert unstorable.first_unstorable({"a": [1, None, True, 2.5, "é"]}) is None


def test_escaped_writes_each_unstorable_character_as_its_json_escape() -> None:
    assert unstorable.escaped("a\x00b\ud800é") == "a\\u0000b\\ud800é"


def test_why_says_which_kind_of_character() -> None:
    assert "NUL" in unstorable.why("a\x00")
    assert "surrogate" in unstorable.why("a\ud800")


@pytest.mark.parametrize("raw", [b'"\\u0000"', b'"\\ud800"', b'"\\uDBFF"', b'"\\udfff"'])
def test_the_raw_escape_gate_sees_every_unstorable_escape(raw: bytes) -> None:
    assert unstorable.ESCAPE.search(raw)
    assert unstorable.UNSTORABLE.search(json.loads(raw))


@pytest.mark.parametrize("raw", [b'"\\u0041"', b'"\\u00e9"', b'"\\ud7ff"', b'"\\ue000"'])
def test_the_raw_escape_gate_lets_other_escapes_by(raw: bytes) -> None:
    assert unstorable.ESCAPE.search(raw) is None


def test_replaced_puts_u_fffd_for_lone_surrogates_only_and_says_where() -> None:
    value = {"uuid": "u", "env": {"A": "x\ud800", "k\udc00": "v", "B": "a\x00é"},
             "cmd": ["ok", "\udfff"], "n": 1}
    fixed, changed = unstorable.replaced(value)
    assert fixed == {"uuid": "u", "env": {"A": "x\ufffd", "k\ufffd": "v", "B": "a\x00é"},
                     "cmd": ["ok", "\ufffd"], "n": 1}
    assert sorted(map(unstorable.field_name, changed)) == \
        ["cmd[1]", "env.A", "env.k\\udc00"]
    json.dumps(fixed, ensure_ascii=False).encode("utf-8")      # renders
    assert value["env"]["A"] == "x\ud800"                          # not changed in place
