"""Docker's multiplexed stream (8-byte frame headers) turned into plain bytes, and the
engine address rule (UNIX socket or TLS, never plain TCP)."""

from __future__ import annotations

import struct

import pytest

from berth.console.docker_socket import Demuxer, engine_address
from berth.console.frames import split_utf8_tail
from berth.runtime.docker.console import demultiplex


def frame(kind: int, payload: bytes) -> bytes:
    return struct.pack(">BxxxL", kind, len(payload)) + payload


STREAM = frame(1, b"hello ") + frame(2, b"err\n") + frame(1, b"") + frame(1, b"world\n")


def test_demultiplex_merges_stdout_and_stderr_in_order() -> None:
    assert demultiplex(STREAM) == b"hello err\nworld\n"


def test_demultiplex_keeps_a_truncated_last_frame() -> None:
    assert demultiplex(frame(1, b"abc") + frame(1, b"defgh")[:-2]) == b"abcdef"


@pytest.mark.parametrize("cut", [1, 3, 7, 8, 9, 13])
def test_demuxer_handles_frames_split_anywhere(cut: int) -> None:
    demux = Demuxer()
    out = b"".join(demux.feed(STREAM[i:i + cut]) for i in range(0, len(STREAM), cut))
    assert out == b"hello err\nworld\n"


def test_demuxer_passes_payload_bytes_as_soon_as_they_arrive() -> None:
    demux = Demuxer()
    data = frame(1, b"0123456789")
    assert demux.feed(data[:12]) == b"0123"
    assert demux.feed(data[12:]) == b"456789"


def test_engine_address_unix_socket() -> None:
    address = engine_address("unix:///var/run/docker.sock", version="auto")
    assert (address.unix_path, address.version, address.tls) == ("/var/run/docker.sock",
                                                                  None, None)


@pytest.mark.parametrize("kwargs", [{}, {"ca_file": "a", "cert_file": "b"},
                                    {"ca_file": "a", "cert_file": "b", "key_file": "c",
                                     "insecure": True}])
def test_engine_address_refuses_plain_tcp(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="plain TCP"):
        engine_address("tcp://10.0.0.1:2375", **kwargs)  # type: ignore[arg-type]


def test_engine_address_refuses_unknown_schemes() -> None:
    with pytest.raises(ValueError):
        engine_address("ssh://root@node")


@pytest.mark.parametrize("data, complete, rest", [
    (b"", b"", b""),
    (b"abc", b"abc", b""),
    ("aé".encode(), "aé".encode(), b""),
    ("aé".encode()[:-1], b"a", b"\xc3"),
    ("a€".encode()[:-1], b"a", "€".encode()[:-1]),
    ("a€".encode()[:-2], b"a", "€".encode()[:-2]),
    ("a😀".encode()[:-1], b"a", "😀".encode()[:-1]),
    ("😀".encode(), "😀".encode(), b""),
    (b"\xff\xfe", b"\xff\xfe", b""),                    # not UTF-8: passed on
    (b"\x80\x80\x80\x80\x80", b"\x80\x80\x80\x80\x80", b""),
])
def test_split_utf8_tail_holds_back_only_a_cut_character(data: bytes, complete: bytes,
                                                         rest: bytes) -> None:
    assert split_utf8_tail(data) == (complete, rest)


def test_split_utf8_tail_never_splits_a_character_whatever_the_cut() -> None:
    text = "héllo wörld € 😀 ok".encode()
    for cut in range(len(text) + 1):
        head, rest = split_utf8_tail(text[:cut])
        head.decode("utf-8")                      # never raises
        assert head + rest == text[:cut]


def test_a_cri_resize_goes_on_channel_4_as_the_kubelet_reads_it() -> None:
    import json

    from berth.console.cri_stream import resize_message

    message = resize_message(33, 101)
    assert message[0] == 4 and json.loads(message[1:]) == {"Width": 101, "Height": 33}
