"""Ports for servers a test starts in another process."""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST = 10_000


def ephemeral_range() -> tuple[int, int]:
    """The ports the kernel gives to outgoing connections and to bind(0)."""
    try:
        low, high = EPHEMERAL_RANGE.read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32_768, 60_999


def free_port() -> int:
    """A loopback port nothing holds now, below the ephemeral range.

    A port from bind(0) is one the kernel also gives outgoing connections as their source port:
    between the probe and the server's own bind, a client of the suite (PostgreSQL, Redis, HTTP)
    could take it and the server fail with "Address already in use". Below the range, only
    another listener can take it, and the probe sees those."""
    low, _ = ephemeral_range()
    candidates = random.sample(range(LOWEST, low), 200) if low > LOWEST + 1_000 else []
    for port in candidates:
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
