"""``berth-cni``: the CNI plugin a runtime executes. It checks its input, forwards it
to the daemon and prints what the spec asks: a result for ADD, nothing for DEL and
CHECK, the versions for VERSION, an error object (and exit status 1) on failure.
Logs, if any, go to stderr; stdout carries only the spec's JSON."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from berth.cni import pod
from berth.cni.client import DaemonClient
from berth.cni.contract import (
    CURRENT_VERSION,
    CniError,
    Code,
    Command,
    parse_request,
    parse_version_request,
    version_result,
)


def run(env: Mapping[str, str], stdin: bytes, stdout: IO[str]) -> int:
    """One invocation; the exit status."""
    try:
        answer = _handle(env, stdin)
    except CniError as err:
        _emit(stdout, err.to_json())
        return 1
    except Exception as exc:  # noqa: BLE001 - the runtime must get the spec's error object
        _emit(stdout, CniError(Code.IO_FAILURE, "berth-cni failed", repr(exc)).to_json())
        return 1
    if answer is not None:
        _emit(stdout, answer)
    return 0


def _handle(env: Mapping[str, str], stdin: bytes) -> dict[str, Any] | None:
    if (env.get("CNI_COMMAND") or "").upper() == Command.VERSION:
        return version_result(parse_version_request(stdin))
    config = _json_object(stdin)
    if config is not None and pod.is_pod_config(config):
        return pod.handle(env, config)       # containerd's call for a capsule's pod
    request = parse_request(env, stdin)
    try:
        client = DaemonClient(request.daemon_url)
    except ValueError as exc:
        raise CniError(Code.INVALID_NETWORK_CONFIG, str(exc), version=request.version) from exc
    return client.call(request)


def _json_object(stdin: bytes) -> dict[str, Any] | None:
    try:
        config = json.loads(stdin)
    except ValueError:
        return None             # parse_request says what is wrong with it
    return config if isinstance(config, dict) else None


def _emit(stdout: IO[str], payload: dict[str, Any]) -> None:
    stdout.write(json.dumps(payload))
    stdout.write("\n")
    stdout.flush()


def main() -> int:
    try:
        stdin = sys.stdin.buffer.read() if sys.stdin is not None else b""
    except OSError as exc:
        _emit(sys.stdout, CniError(Code.IO_FAILURE, "cannot read stdin", str(exc),
                                   CURRENT_VERSION).to_json())
        return 1
    return run(os.environ, stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
