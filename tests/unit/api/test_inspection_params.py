"""Parameters of logs, top, get/put_archive and commit (api-v1.md §1.1, §7.7), and the
agent's decoding of put_archive's data."""

from __future__ import annotations

import base64
import datetime as dt

import pytest

from berth.api.operations.inspection import (
    parse_commit_target,
    parse_logs_params,
    parse_path,
    parse_ps_args,
    parse_since,
    parse_tail,
)
from berth.common.exceptions import InvalidParameterValue
from berth.compute.flows.archives import tar_bytes

# -- logs --------------------------------------------------------------------------


def test_logs_defaults_are_both_streams_no_timestamps_all_lines_whole_log():
    assert parse_logs_params({}) == {"stdout": True, "stderr": True, "timestamps": False,
                                     "tail": "all", "since": None}


def test_logs_takes_what_zunclient_sends():
    params = {"stdout": "True", "stderr": "False", "since": "1700000000",
              "timestamps": "True", "tail": "5"}
    assert parse_logs_params(params) == {"stdout": True, "stderr": False,
                                         "timestamps": True, "tail": 5,
                                         "since": 1700000000}


@pytest.mark.parametrize("value", ["yes", "ON", "1", True])
def test_logs_flags_are_extended_booleans(value):
    assert parse_logs_params({"timestamps": value})["timestamps"] is True


def test_logs_with_neither_stream_gives_both():
    got = parse_logs_params({"stdout": "False", "stderr": "no"})
    assert (got["stdout"], got["stderr"]) == (True, True)


@pytest.mark.parametrize("value", ["maybe", "2", "", "T"])
def test_logs_flag_that_is_not_a_boolean_is_refused_naming_the_field(value):
    with pytest.raises(InvalidParameterValue, match="'stdout'"):
        parse_logs_params({"stdout": value})


@pytest.mark.parametrize("value,expected", [
    ("all", None), ("ALL", None), (None, None), ("None", None), ("0", 0), ("25", 25), (7, 7),
])
def test_tail_is_a_line_count_or_all(value, expected):
    assert parse_tail(value) == expected


@pytest.mark.parametrize("value", ["-1", "x", "1.5", "", -3, True, 2.0, "9" * 19])
def test_bad_tail_is_refused_saying_what_is_accepted(value):
    with pytest.raises(InvalidParameterValue, match="number of lines .* or 'all'"):
        parse_tail(value)


def test_since_epoch_seconds_as_text_or_number():
    assert parse_since("1700000000") == 1700000000
    assert parse_since(1700000000) == 1700000000
    assert parse_since("1700000000.25") == pytest.approx(1700000000.25)


@pytest.mark.parametrize("value", [None, "None", ""])
def test_since_absent_means_the_whole_log(value):
    assert parse_since(value) is None


@pytest.mark.parametrize("text", ["2023-11-14 22:13:20,500000", "2023-11-14 22:13:20.5",
                                  "2023-11-14 22:13:20"])
def test_since_time_text_is_read_as_utc(text):
    expected = dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.UTC).timestamp()
    assert parse_since(text) == pytest.approx(expected, abs=0.6)
    assert int(parse_since(text)) == 1700000000


@pytest.mark.parametrize("value", ["yesterday", "2023-13-01 00:00:00", "-5", -5, True,
                                   "2023-11-14T22:13:20", float("nan")])
def test_bad_since_is_refused_saying_which_forms_work(value):
    with pytest.raises(InvalidParameterValue, match="epoch seconds .*YYYY-MM-DD"):
        parse_since(value)


# -- top, archives -----------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "None", ""])
def test_ps_args_none_string_means_absent(value):
    assert parse_ps_args(value) is None


def test_ps_args_pass_through():
    assert parse_ps_args("aux") == "aux"


def test_ps_args_must_be_text():
    with pytest.raises(InvalidParameterValue, match="'ps_args'"):
        parse_ps_args(["aux"])


@pytest.mark.parametrize("value", [None, "None", ""])
def test_path_is_required(value):
    with pytest.raises(InvalidParameterValue, match="Missing 'path'"):
        parse_path(value)


def test_put_archive_data_is_base64_from_1_25():
    tar = b"\x00\xff tar bytes"
    assert tar_bytes(base64.b64encode(tar).decode(), decode_data=True) == tar
    wrapped = base64.encodebytes(tar * 40).decode()     # MIME line breaks are tolerated
    assert tar_bytes(wrapped, decode_data=True) == tar * 40


def test_put_archive_data_is_plain_text_before_1_25():
    assert tar_bytes("hello", decode_data=False) == b"hello"


@pytest.mark.parametrize("data", ["not base64!", "abc", "%%%%"])
def test_bad_base64_is_refused(data):
    with pytest.raises(InvalidParameterValue, match="not valid base64"):
        tar_bytes(data, decode_data=True)


def test_put_archive_data_must_be_a_string():
    with pytest.raises(InvalidParameterValue, match="must be a string"):
        tar_bytes(123, decode_data=True)


# -- commit ------------------------------------------------------------------------


@pytest.mark.parametrize("repository,tag,expected", [
    ("myrepo", None, ("myrepo", "latest")),
    ("myrepo", "None", ("myrepo", "latest")),
    ("myrepo", "v1", ("myrepo", "v1")),
    ("team/app", "1.0-rc_2", ("team/app", "1.0-rc_2")),
    ("team/app:v2", None, ("team/app", "v2")),
    ("127.0.0.1:5000/app", None, ("127.0.0.1:5000/app", "latest")),
])
def test_commit_target(repository, tag, expected):
    assert parse_commit_target(repository, tag) == expected


def test_commit_needs_a_repository():
    with pytest.raises(InvalidParameterValue, match="Missing 'repository'"):
        parse_commit_target(None, "v1")


@pytest.mark.parametrize("repository,tag,match", [
    ("MyRepo", None, "lowercase"),
    ("my repo", None, "whitespace"),
    ("app@sha256:" + "a" * 64, None, "not a digest"),
    ("app:v1", "v2", "give the tag once"),
    ("app", "-bad", "'tag'"),
    ("app", "a/b", "'tag'"),
    ("app", "x" * 129, "'tag'"),
    ("a" * 256, None, "255"),
])
def test_bad_commit_target_is_refused_with_the_reason(repository, tag, match):
    with pytest.raises(InvalidParameterValue, match=match):
        parse_commit_target(repository, tag)
