"""Facts about the machine and the user's settings that several layers need, each decided in one place."""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
from pathlib import Path

__all__ = ["bind_port", "cache_dir", "default_threads", "is_loopback", "url_host"]


def cache_dir(kind: str) -> Path:
    """The folder for cached `kind` data ("digests", "models", ...).

    `$PDDLWORLDS_CACHE/<kind>` when set, else `$XDG_CACHE_HOME/pddlworlds/<kind>`, else
    `~/.cache/pddlworlds/<kind>`. Nothing is created here.
    """
    root = os.environ.get("PDDLWORLDS_CACHE")
    if not root:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pddlworlds")
    return Path(root) / kind


def default_threads() -> int:
    """The cores this process may run on (its CPU affinity, which containers and `taskset` narrow)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def bind_port(host: str, port: int) -> socket.socket:
    """A socket bound to host:port as uvicorn binds one (IPv6 for an address with ':', else IPv4), not yet
    listening: a server takes the port before it announces anything, and listens when it is ready. A
    failure is an OSError in words ("cannot listen on HOST:PORT: the port is in use")."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if isinstance(exc, socket.gaierror):
            reason = f"unknown host ({exc.strerror})"
        else:
            reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc)).lower()
        raise OSError(f"cannot listen on {host}:{port}: {reason}") from None
    return sock


def url_host(host: str) -> str:
    """`host` as a URL names it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host else host


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable only from this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
