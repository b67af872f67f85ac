#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Many short flows to a lab VIP, from inside a client namespace; prints
one JSON object: which backend answered each flow.

usage: burst.py http|udp ADDRESS PORT FIRST_SPORT COUNT [TIMEOUT_S]

Flow i leaves from source port FIRST_SPORT + i, so every flow is a new
5-tuple (a new Maglev choice) and no port is reused within a test, which
would put a flow on an old connection-tracking entry (the same backend
again, not an independent sample). http: one TCP connection per flow,
GET /, the body's first word names the backend. udp: one datagram per
flow, the echo's reply starts with the backend's name.

Output: {"ok": N, "failed": N, "errors": {reason: N},
         "backends": {name: N}, "flows": [[sport, backend or null], ...]}"""
import json
import socket
import sys
from concurrent.futures import ThreadPoolExecutor

PARALLEL = 8


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def bound_socket(kind, addr, sport, timeout):
    s = socket.socket(family_of(addr), kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(timeout)
    s.bind(("::" if ":" in addr else "0.0.0.0", sport))
    return s


def http_flow(addr, port, sport, timeout):
    with bound_socket(socket.SOCK_STREAM, addr, sport, timeout) as s:
        s.connect((addr, port))
        s.sendall(b"GET / HTTP/1.0\r\nHost: lab\r\n\r\n")
        reply = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise ValueError("status %r" % head.split(b"\r\n")[0][:40])
    return body.split()[0].decode()


def udp_flow(addr, port, sport, timeout):
    with bound_socket(socket.SOCK_DGRAM, addr, sport, timeout) as s:
        s.connect((addr, port))
        token = b"flow-%d" % sport
        s.send(token)
        reply = s.recv(2048)
    name, _, echoed = reply.partition(b" ")
    if echoed != token:
        raise ValueError("echo mismatch")
    return name.decode()


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    proto, addr, port, first, count = sys.argv[1:6]
    timeout = float(sys.argv[6]) if len(sys.argv) == 7 else 3.0
    port, first, count = int(port), int(first), int(count)
    flow = {"http": http_flow, "udp": udp_flow}[proto]

    def one(sport):
        try:
            return sport, flow(addr, port, sport, timeout), None
        except (OSError, ValueError, IndexError) as e:
            return sport, None, type(e).__name__ + (
                ": " + str(e) if isinstance(e, ValueError) else "")

    out = {"ok": 0, "failed": 0, "errors": {}, "backends": {}, "flows": []}
    with ThreadPoolExecutor(PARALLEL) as pool:
        for sport, backend, err in pool.map(one, range(first, first + count)):
            out["flows"].append([sport, backend])
            if err:
                out["failed"] += 1
                out["errors"][err] = out["errors"].get(err, 0) + 1
            else:
                out["ok"] += 1
                out["backends"][backend] = out["backends"].get(backend, 0) + 1
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
