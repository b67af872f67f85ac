#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""UDP echo for a lab backend: answers every datagram with
"NAME PAYLOAD", so the client sees which backend served it.

usage: udp_echo.py NAME PORT ADDRESS...

One socket per address (the VIPs and the backend's own addresses) rather
than a wildcard one: a reply must leave with the address the datagram was
sent to as its source, and a wildcard socket would answer from the
interface's primary address instead of the VIP."""
import selectors
import socket
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    name = sys.argv[1].encode()
    port = int(sys.argv[2])
    sel = selectors.DefaultSelector()
    for addr in sys.argv[3:]:
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.bind((addr, port))
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    while True:
        for key, _ in sel.select():
            s = key.fileobj
            try:
                data, peer = s.recvfrom(65535)
                s.sendto(name + b" " + data, peer)
            except OSError:
                pass  # the client went away: nothing to answer


if __name__ == "__main__":
    main()
