"""Translating docker-SDK and HTTP failures into runtime errors."""

from __future__ import annotations

import docker.errors
import pytest
import requests

from berth.runtime.base import (
    RuntimeConflict,
    RuntimeDriverError,
    RuntimeImageNotFound,
    RuntimeInvalid,
    RuntimeNotFound,
    RuntimeUnavailable,
)
from berth.runtime.docker.errors import distribution_verdict, translate_errors


def api_error(status: int, explanation: str) -> docker.errors.APIError:
    """The exception the SDK raises for an HTTP ``status`` answer (same class choice)."""
    response = requests.Response()
    response.status_code = status
    response.url = "http+docker://localhost/v1.41/x"
    cls: type[docker.errors.APIError] = docker.errors.APIError
    if status == 404:
        lowered = explanation.lower()
        cls = docker.errors.ImageNotFound if "no such image" in lowered else docker.errors.NotFound
    return cls("boom", response=response, explanation=explanation)


@pytest.mark.parametrize(
    ("exc", "expected", "text"),
    [
        (api_error(404, "No such container: zun-x"), RuntimeNotFound, "No such container: zun-x"),
        (api_error(404, "No such image: nope:latest"), RuntimeImageNotFound, "nope:latest"),
        (api_error(409, "You cannot remove a running container abc"), RuntimeConflict,
         "running container"),
        (api_error(400, "invalid restart policy"), RuntimeInvalid, "invalid restart policy"),
        (api_error(500, "driver failed"), RuntimeDriverError, "driver failed"),
        (requests.exceptions.ConnectionError("Connection refused"), RuntimeUnavailable,
         "Connection refused"),
        (docker.errors.DockerException("Error while fetching server API version: refused"),
         RuntimeUnavailable, "fetching server API version"),
        (docker.errors.InvalidVersion("runtime needs 1.25"), RuntimeInvalid, "1.25"),
        (requests.exceptions.ReadTimeout("read timed out"), RuntimeDriverError, "in time"),
    ],
)
def test_translate_errors_maps_to_most_specific_error(
    exc: Exception, expected: type[RuntimeDriverError], text: str
) -> None:
    with pytest.raises(RuntimeDriverError) as info, translate_errors():
        raise exc
    assert type(info.value) is expected
    assert text in str(info.value)
    assert info.value.__cause__ is exc


def test_translate_errors_does_not_repeat_docker_prefix() -> None:
    with pytest.raises(RuntimeNotFound) as info, translate_errors():
        raise api_error(404, "No such container: zun-x")
    assert str(info.value) == "No such container: zun-x"


def test_translate_errors_passes_other_exceptions_through() -> None:
    with pytest.raises(KeyError), translate_errors():
        raise KeyError("x")


@pytest.mark.parametrize(
    ("exc", "verdict"),
    [
        (api_error(404, "manifest unknown: manifest unknown"), False),
        (api_error(500, "manifest for x:y not found: manifest unknown"), False),
        (api_error(401, "unauthorized: authentication required"), None),
        (api_error(500, "Get \"https://r.invalid/v2/\": dial tcp: no such host"), None),
        (api_error(500, "unauthorized: incorrect username or password"), None),
    ],
)
def test_distribution_verdict(exc: Exception, verdict: bool | None) -> None:
    assert distribution_verdict(exc) is verdict
