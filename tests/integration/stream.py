#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A steady stream of fresh HTTP requests to a lab VIP, from inside a
client namespace, while a test changes the fleet under it; prints one
JSON object with every request's outcome and the window of failures.

usage: stream.py ADDRESS PORT FIRST_SPORT COUNT RATE

Request i starts at i / RATE seconds from source port FIRST_SPORT + i (a
new 5-tuple each, so the router's ECMP hash spreads them over the
instances), with a 3 s timeout; at most COUNT requests, so the stream is
bounded in count and time.

Output: {"ok": N, "failed": N, "resets": N, "errors": {reason: N},
         "backends": {name: N}, "slow": N (over 0.5 s),
         "window_s": seconds from the first failed or slow request's start
                     to the last one's end (0 when there was none),
         "max_latency_s": ...}"""
import json
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

TIMEOUT_S = 3.0
SLOW_S = 0.5


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def request(addr, port, sport):
    s = socket.socket(family_of(addr), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(TIMEOUT_S)
    try:
        s.bind(("::" if ":" in addr else "0.0.0.0", sport))
        s.connect((addr, port))
        s.sendall(b"GET / HTTP/1.0\r\nHost: lab\r\n\r\n")
        reply = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    finally:
        s.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise ValueError("status %r" % head.split(b"\r\n")[0][:40])
    return body.split()[0].decode()


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    addr, port, first, count, rate = sys.argv[1:6]
    port, first, count, rate = int(port), int(first), int(count), float(rate)
    t0 = time.monotonic()
    results = []
    lock = threading.Lock()

    def one(i):
        start = t0 + i / rate
        delay = start - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        begin = time.monotonic()
        try:
            backend, err = request(addr, port, first + i), None
        except ConnectionResetError as e:
            backend, err = None, "reset: %s" % e
        except (OSError, ValueError, IndexError) as e:
            backend, err = None, type(e).__name__
        end = time.monotonic()
        with lock:
            results.append((begin - t0, end - t0, backend, err))

    # enough threads that a request waiting for its timeout never delays
    # the next one's start
    with ThreadPoolExecutor(max(8, int(rate * TIMEOUT_S) + 4)) as pool:
        list(pool.map(one, range(count)))

    out = {"ok": 0, "failed": 0, "resets": 0, "errors": {}, "backends": {},
           "slow": 0, "window_s": 0.0, "max_latency_s": 0.0}
    bad = []
    for begin, end, backend, err in results:
        latency = end - begin
        out["max_latency_s"] = max(out["max_latency_s"], latency)
        if err:
            out["failed"] += 1
            out["resets"] += err.startswith("reset")
            out["errors"][err] = out["errors"].get(err, 0) + 1
            bad.append((begin, end))
        else:
            out["ok"] += 1
            out["backends"][backend] = out["backends"].get(backend, 0) + 1
            if latency > SLOW_S:
                out["slow"] += 1
                bad.append((begin, end))
    if bad:
        out["window_s"] = max(e for _, e in bad) - min(b for b, _ in bad)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
