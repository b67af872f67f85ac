#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""UDP listener for the decapsulation integration test: binds PORT on
every --bind address, writes --ready once bound, and exits 0 as soon as
every --expect payload has arrived (printing each datagram received), or
1 when --timeout seconds pass first."""
import argparse
import select
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--bind", action="append", required=True)
    ap.add_argument("--expect", action="append", required=True)
    ap.add_argument("--ready", required=True)
    ap.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args()

    socks = []
    for addr in args.bind:
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((addr, args.port))
        socks.append(s)
    with open(args.ready, "w") as f:
        f.write("ready\n")

    missing = set(args.expect)
    deadline = time.monotonic() + args.timeout
    while missing:
        left = deadline - time.monotonic()
        if left <= 0:
            print("missing: " + " ".join(sorted(missing)), flush=True)
            return 1
        readable, _, _ = select.select(socks, [], [], left)
        for s in readable:
            data, peer = s.recvfrom(2048)
            text = data.decode(errors="replace")
            print(f"received {text} from {peer[0]}", flush=True)
            missing.discard(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
