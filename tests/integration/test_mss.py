#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""MSS clamping (docs/forwarding.md, "MSS clamping") on real TCP
connections, IPv4 and IPv6: the client offers the MSS of its 1500-byte
link (1460 / 1440); the backend's socket sends segments no larger than
the MSS its SYN arrived with, so `ss -ti` on the backend shows the clamp
as its mss (the client has TCP timestamps off, which would take 12 bytes
of it). With mss_clamp: 1200 that
is 1200; with auto, mtu_room - 40 / - 60; with off, the client's own
offer; and maglevd's mss_clamped counter counts the clamped SYNs. Each
setting is applied by a reload.

usage: test_mss.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import re
import subprocess
import sys

import lablib
from lablib import check, log

# The clients' offer: their link MTU 1500 - 40 / - 60.
OFFER = {4: 1460, 6: 1440}
# mtu_room - 40 / - 60 at port MTU 1500 (docs/forwarding.md's table).
ROOM = {"ipip": {4: 1480, 6: 1460}, "gue": {4: 1468, 6: 1448},
        "l2dsr": {4: 1500, 6: 1500}}
HOLD = ("import socket, sys\n"
        "s = socket.create_connection((sys.argv[1], 80), timeout=5)\n"
        "print(s.getsockname()[1], flush=True)\n"
        "sys.stdin.read()\n")


def with_mss(text, value):
    """The lab config with mss_clamp: value on the TCP VIPs (None: not
    written, the default)."""
    if value is None:
        return text
    return text.replace("    protocol: tcp\n",
                        "    protocol: tcp\n    mss_clamp: %s\n" % value)


def backend_mss(lab, family):
    """Open a connection from client 1 to the VIP and hold it; the send
    MSS of the backend's socket for it, and ss's line."""
    client = subprocess.Popen(
        [lablib.LAB, "exec", "c1", sys.executable, "-c", HOLD,
         lablib.vip(family)], env=lab.env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = client.stdout.readline().strip()
        check(line.isdigit(), "client could not connect to %s: %s"
              % (lablib.vip(family), client.stderr.read() if
                 client.poll() is not None else line))
        sport = int(line)

        def found():
            out = lab.lab("exec", "be1", "ss", "-tinH", "state",
                          "established", "( sport = :80 and dport = :%d )"
                          % sport)
            return out if "mss:" in out else None
        out = lablib.wait_until(found, "the backend's socket for client "
                                "port %d" % sport, 5)
        mine = lab.lab("exec", "c1", "ss", "-tinH", "state", "established",
                       "( dport = :80 and sport = :%d )" % sport)
        m = re.search(r"\bmss:(\d+)", mine)
        log("IPv%d: the client sends with mss:%s (the backend's SYN-ACK, "
            "which goes to it directly)" % (family, m.group(1) if m else "?"))
        return int(re.search(r"\bmss:(\d+)", out).group(1)), out
    finally:
        client.stdin.close()
        try:
            client.wait(timeout=10)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()


def clamped(lab):
    """maglevd's mss_clamped, from a stats file written after the call."""
    return lab.fresh_stats()["totals"]["counters"]["mss_clamped"]


def test(lab):
    fwd = lab.forwarding
    base = lab.config(backends="be1")
    # the MSS option alone decides the backend's mss: no timestamps
    lab.lab("exec", "c1", "sysctl", "-qw", "net.ipv4.tcp_timestamps=0")
    settings = [("1200", {4: 1200, 6: 1200}),
                (None, {f: ROOM[fwd][f] - (40 if f == 4 else 60)
                        for f in (4, 6)}),
                ("off", OFFER)]
    started = False
    for value, want in settings:
        lab.write_config(with_mss(base, value))
        if not started:
            lab.start_lb()
            lab.require_steering()
            started = True
        else:
            gen = lab.reload()
            lab.wait_generation_above(gen)
        for family in (4, 6):
            before = clamped(lab)
            mss, out = backend_mss(lab, family)
            expect = min(want[family], OFFER[family])
            log("mss_clamp %s, IPv%d: backend socket mss:%d (want %d)"
                % (value or "auto (default)", family, mss, expect))
            check(mss == expect, "mss_clamp %s, IPv%d: the backend sends "
                  "with mss %d, want %d: %s" % (value, family, mss, expect,
                                                out.strip()))
            want_clamps = 1 if want[family] < OFFER[family] else 0
            lablib.wait_until(lambda: clamped(lab) - before == want_clamps,
                              "mss_clamped to grow by %d" % want_clamps, 5)


if __name__ == "__main__":
    lablib.run(test, backends=1)
