#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Long-lived TCP connections to a lab VIP, from inside a client namespace.
Each is one HTTP/1.1 keep-alive connection to the backends' nginx that
sends a request every INTERVAL seconds and reads the answer, so any
reset, close, stall or change of backend shows up within one interval.

usage: longconn.py ADDRESS PORT FIRST_SPORT COUNT STATE_FILE
                   [--need NAME=K]... [--max M] [--interval S]
                   [--io-timeout S]

Opens COUNT connections from source ports FIRST_SPORT, FIRST_SPORT+1, ...;
with --need, keeps opening more (up to M in all, default 64) until at
least K of them landed on backend NAME. Runs until SIGTERM or SIGINT.
A request not answered within --io-timeout seconds (default 3) is a
"timeout" error; a longer one lets TCP retransmit across an outage.

STATE_FILE is rewritten (atomically) after every round:
  {"ready": bool, "unmet": [NAME, ...], "rounds": N,
   "conns": [{"sport": P, "backend": NAME, "backends": [NAME, ...],
              "ok": N, "error": null or "reset"/"closed"/"timeout"/...}]}
"backend" is the first backend that answered, "backends" every one that
did (more than one means the connection moved), "ok" counts answered
requests, "error" is the first failure, after which the connection is
not used again."""
import argparse
import json
import os
import signal
import socket
import time

REQUEST = b"GET / HTTP/1.1\r\nHost: lab\r\n\r\n"
IO_TIMEOUT_S = 3.0


class Conn:
    def __init__(self, addr, port, sport, io_timeout=IO_TIMEOUT_S):
        self.sport = sport
        self.backends = []
        self.ok = 0
        self.error = None
        family = socket.AF_INET6 if ":" in addr else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(io_timeout)
        self.buf = b""
        try:
            self.sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0",
                            sport))
            self.sock.connect((addr, port))
        except OSError as e:
            self.fail(e)

    def fail(self, err):
        if isinstance(err, ConnectionResetError):
            self.error = "reset"
        elif isinstance(err, socket.timeout):
            self.error = "timeout"
        elif isinstance(err, OSError):
            self.error = "%s: %s" % (type(err).__name__, err.strerror)
        else:
            self.error = str(err)
        self.sock.close()

    def recv_more(self):
        chunk = self.sock.recv(4096)
        if not chunk:
            raise EOFError("closed")
        self.buf += chunk

    def exchange(self):
        """One request and its response; records the backend."""
        if self.error:
            return
        try:
            self.sock.sendall(REQUEST)
            while b"\r\n\r\n" not in self.buf:
                self.recv_more()
            head, _, self.buf = self.buf.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(self.buf) < length:
                self.recv_more()
            body, self.buf = self.buf[:length], self.buf[length:]
            if not head.startswith(b"HTTP/1.1 200"):
                raise ValueError("status %r" % head[:20])
            backend = body.split()[0].decode()
        except EOFError:
            self.fail("closed")
            return
        except (OSError, ValueError, IndexError) as e:
            self.fail(e)
            return
        if backend not in self.backends:
            self.backends.append(backend)
        self.ok += 1

    def state(self):
        return {"sport": self.sport,
                "backend": self.backends[0] if self.backends else None,
                "backends": self.backends, "ok": self.ok,
                "error": self.error}


def write_state(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("first_sport", type=int)
    ap.add_argument("count", type=int)
    ap.add_argument("state_file")
    ap.add_argument("--need", action="append", default=[])
    ap.add_argument("--max", type=int, default=64)
    ap.add_argument("--interval", type=float, default=0.2)
    ap.add_argument("--io-timeout", type=float, default=IO_TIMEOUT_S)
    args = ap.parse_args()
    need = {}
    for item in args.need:
        name, _, k = item.partition("=")
        need[name] = int(k)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))

    conns = []

    def unmet():
        got = {}
        for c in conns:
            if c.backends and not c.error:
                got[c.backends[0]] = got.get(c.backends[0], 0) + 1
        return [n for n, k in need.items() if got.get(n, 0) < k]

    # Open connections, each answering one request before the next opens,
    # until COUNT are open and every --need is met (or --max reached).
    sport = args.first_sport
    while not stop and (len(conns) < args.count or unmet()) \
            and len(conns) < args.max:
        c = Conn(args.addr, args.port, sport, args.io_timeout)
        sport += 1
        c.exchange()
        conns.append(c)

    rounds = 0
    while True:
        write_state(args.state_file, {
            "ready": True, "unmet": unmet(), "rounds": rounds,
            "conns": [c.state() for c in conns]})
        if stop:
            break
        started = time.monotonic()
        for c in conns:
            c.exchange()
        rounds += 1
        # in short steps, so that a signal ends a long interval at once
        while not stop and time.monotonic() - started < args.interval:
            time.sleep(min(0.1, args.interval))
    for c in conns:
        if not c.error:
            c.sock.close()


if __name__ == "__main__":
    main()
