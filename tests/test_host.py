"""`host`: the facts about the machine several layers need, each decided once (the servers' port binding)."""

from __future__ import annotations

import socket

import pytest

from pddlworlds.host import bind_port, is_loopback, url_host


def test_a_port_in_use_is_refused_in_one_line_naming_host_and_port() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=rf"^cannot listen on 127\.0\.0\.1:{port}: the port is in use$"):
            bind_port("127.0.0.1", port)


def test_a_bound_port_is_not_listening_until_the_server_says_so() -> None:
    sock = bind_port("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        with pytest.raises(ConnectionRefusedError):  # bound, not listening: nothing announced yet
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        sock.listen(1)
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        sock.close()


def test_an_unknown_host_is_named() -> None:
    with pytest.raises(OSError, match=r"^cannot listen on no-such-host\.invalid:8000: unknown host"):
        bind_port("no-such-host.invalid", 8000)


def test_url_host_and_loopback() -> None:
    assert url_host("::1") == "[::1]" and url_host("127.0.0.1") == "127.0.0.1"
    assert is_loopback("localhost") and is_loopback("127.0.0.2") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
