"""The suite's servers get ports no outgoing connection can take between probe and bind."""

import socket

from tests.support.ports import ephemeral_range, free_port


def test_a_free_port_lies_below_the_range_outgoing_connections_draw_from():
    low, _ = ephemeral_range()
    ports = {free_port() for _ in range(50)}
    assert all(port < low for port in ports)
    assert len(ports) > 1


def test_a_free_port_can_be_listened_on():
    port = free_port()
    with socket.socket() as server:
        server.bind(("127.0.0.1", port))
        server.listen()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass

