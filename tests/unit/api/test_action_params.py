"""Parameter parsing of the lifecycle actions (kill's signal, reboot's timeout, rebuild's
flags, resize_container's fields) and their microversion windows."""

from __future__ import annotations

import pytest

from berth.api.microversions import APIVersion
from berth.api.routers.container_actions import (
    MAX_TIMEOUT,
    parse_image_driver,
    parse_resize,
    parse_run,
    parse_signal,
    parse_timeout,
    require_version,
)
from berth.api.schemas.container import CreateLimits
from berth.common.exceptions import InvalidParameterValue, NotAcceptable


@pytest.mark.parametrize("value", ["SIGKILL", "KILL", "sigkill", "kill", "Kill", "SigKill",
                                   " SIGKILL "])
def test_signal_names_in_any_case_with_or_without_sig_become_the_canonical_name(value):
    assert parse_signal(value) == "SIGKILL"


@pytest.mark.parametrize("value,expected", [
    ("9", "9"), (9, "9"), ("15", "15"), ("1", "1"), ("64", "64"), ("009", "9"),
])
def test_signal_numbers_are_passed_as_decimal_text(value, expected):
    assert parse_signal(value) == expected


@pytest.mark.parametrize("value,expected", [
    ("SIGHUP", "SIGHUP"), ("term", "SIGTERM"), ("usr1", "SIGUSR1"), ("SIGCHLD", "SIGCHLD"),
    ("rtmin+3", "SIGRTMIN+3"), ("SIGRTMAX-2", "SIGRTMAX-2"), ("winch", "SIGWINCH"),
])
def test_every_linux_signal_name_is_known(value, expected):
    assert parse_signal(value) == expected


@pytest.mark.parametrize("value", [None, "None"])
def test_absent_signal_means_dockers_default(value):
    assert parse_signal(value) is None


@pytest.mark.parametrize("value", ["SIGFOO", "FOO", "0", "65", "-1", "9.5", "", "SIG",
                                   "1000", True, 0, 65, 9.0, ["KILL"], "RTMIN+16"])
def test_unknown_or_out_of_range_signal_is_a_400_that_says_what_is_accepted(value):
    with pytest.raises(InvalidParameterValue) as info:
        parse_signal(value)
    assert "signal" in info.value.msg
    assert "SIGTERM" in info.value.msg


@pytest.mark.parametrize("value,expected", [("10", 10), (0, 0), ("0", 0), (3, 3),
                                            (str(MAX_TIMEOUT), MAX_TIMEOUT), (None, None),
                                            ("None", None)])
def test_timeout_is_whole_seconds_or_absent(value, expected):
    assert parse_timeout(value) == expected


@pytest.mark.parametrize("value", ["abc", "-1", -1, "1.5", MAX_TIMEOUT + 1, True, ""])
def test_bad_timeout_is_a_400_naming_the_field(value):
    with pytest.raises(InvalidParameterValue) as info:
        parse_timeout(value)
    assert "'timeout'" in info.value.msg


@pytest.mark.parametrize("value,expected", [(None, None), ("None", None), ("true", True),
                                            ("False", False), ("1", True), (False, False)])
def test_rebuild_run_is_an_extended_bool_or_absent(value, expected):
    assert parse_run(value) is expected


def test_rebuild_run_rejects_other_words():
    with pytest.raises(InvalidParameterValue):
        parse_run("maybe")


def test_image_driver_must_be_a_configured_driver():
    limits = CreateLimits(image_driver_list=("docker",))
    assert parse_image_driver("docker", limits) == "docker"
    assert parse_image_driver("None", limits) is None
    with pytest.raises(InvalidParameterValue) as info:
        parse_image_driver("glance", limits)
    assert "docker" in info.value.msg


def test_resize_takes_cpu_and_memory_validated_like_an_update():
    limits = CreateLimits()
    assert parse_resize({"memory": "128"}, limits) == {"memory": "128"}
    assert parse_resize({"cpu": "0.5", "memory": 64}, limits) == {"cpu": 0.5, "memory": "64"}
    with pytest.raises(InvalidParameterValue):
        parse_resize({"memory": "2"}, limits)             # below minimum_memory
    with pytest.raises(InvalidParameterValue):
        parse_resize({"cpu": "99"}, limits)               # above maximum_cpus
    with pytest.raises(InvalidParameterValue):
        parse_resize({}, limits)


def test_resize_refuses_other_fields_and_points_to_patch():
    with pytest.raises(InvalidParameterValue) as info:
        parse_resize({"memory": "128", "name": "x1"}, CreateLimits())
    assert "name" in info.value.msg and "PATCH" in info.value.msg


@pytest.mark.parametrize("version,ok", [("1.1", True), ("1.13", True), ("1.14", False),
                                        ("1.40", False)])
def test_rename_exists_only_up_to_1_13(version, ok):
    call = lambda: require_version(APIVersion.parse(version), "rename", "1.1", "1.13",
                                   "Use PATCH.")
    if ok:
        call()
    else:
        with pytest.raises(NotAcceptable) as info:
            call()
        assert version in info.value.msg and "1.13" in info.value.msg
        assert "Use PATCH." in info.value.msg


@pytest.mark.parametrize("version,ok", [("1.18", False), ("1.19", True), ("1.40", True)])
def test_resize_container_exists_from_1_19(version, ok):
    call = lambda: require_version(APIVersion.parse(version), "resize", "1.19", None)
    if ok:
        call()
    else:
        with pytest.raises(NotAcceptable):
            call()
