#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Second chance (docs/second-chance.md) in the routed lab (tools/lab/lab
up --bgp, gue, four backends): a backend joins and afterwards flows move
between instances, with real TCP.

With second_chance on:
1. Two instances serve web4 with be1..be3; 40 long-lived keep-alive
   connections run through the router's ECMP.
2. be4 is added on LB 1, then on LB 2. The test asks LB 1 which
   connections it tracks and whose slot now names be4: those are the
   ones a move breaks without second chance (the test is void if none).
3. LB 1 stops gracefully: its flows move to LB 2, which has no state for
   them and sends them to be4; be4's maglev-decap finds no socket and
   hands each packet to the previous owner LB 2 lists. No connection
   breaks, none changes backend.
4. LB 1 starts again: the flows move back to an instance with no history,
   which lists the slots' second choices (rendezvous: the previous
   owners). No connection breaks.
be4's `redirected` counter shows the packets it handed on.

With second_chance off, the same sequence up to 3: exactly the
connections of step 2 are reset, which shows what second chance
prevents.

usage: test_second_chance.py [--vdev af_xdp|af_packet]"""
import signal
import os
import re
import subprocess
import time

import lablib
from lablib import check, log

CONNS = 40                  # per family
CLIENT = {4: "10.99.0.101", 6: "fd00:99::101"}   # client 1 (cl_addr4/6)
VIP_NAME = {4: "web4", 6: "web6"}


def config(lab, lb, backends, second_chance):
    text = lab.config(lb, backends=backends)
    extra = "  table: rendezvous\n"
    if second_chance:
        extra += "  second_chance: {enabled: true, window: 10m}\n"
    out, n = re.subn(r"(?m)^defaults:\n", "defaults:\n" + extra, text)
    check(n == 1, "the lab config has one defaults section")
    lab.write_config(out, lb)


def roll_out(lab, backends, second_chance):
    for lb in (1, 2):
        config(lab, lb, backends, second_chance)
        gen = lab.reload(lb)
        lab.wait_generation_above(gen, lb)
        log("LB %d now has %s" % (lb, backends))


def decap_counters(lab, be):
    out = lab.lab("exec", "be%d" % be, os.path.join(
        lab.build, "tools", "bin", "maglev-decap", "maglev-decap"),
        "status", "eth0")
    ctr = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[1].isdigit():
            ctr[f[0]] = int(f[1])
    return ctr


def progress_or_dump(lab, conns, marks):
    """wait_progress of every family's connections, printing every
    backend's decap counters if it fails."""
    try:
        for lc, mark in zip(conns, marks):
            lc.wait_progress(mark, rounds=10, timeout_s=30)
    except lablib.Failure:
        for be in range(1, lab.n_backends + 1):
            c = decap_counters(lab, be)
            log("be%d: %s" % (be, {k: v for k, v in c.items() if v}))
        raise


def at_risk(lab, lc):
    """The connections of lc LB 1 tracks whose slot names be4 now."""
    risky = []
    for c in lc.state()["conns"]:
        r = lab.ctl(1, "lookup", VIP_NAME[lc.family], CLIENT[lc.family],
                    c["sport"])
        tracked = r.get("tracked")
        if r.get("backend") == "be4" and isinstance(tracked, dict):
            check(tracked["backend"] == c["backend"], "LB 1 tracks port %d "
                  "on %s, its answers come from %s" % (
                      c["sport"], tracked["backend"], c["backend"]))
            risky.append(c["sport"])
    return risky


def start_both(lab, second_chance):
    for lb in (1, 2):
        config(lab, lb, "be1,be2,be3", second_chance)
        lab.start_lb(lb)
    for lb in (1, 2):
        lab.require_control_socket(lb)
    lab.wait_next_hops({1, 2}, "both instances serving")


def stop_lb1(lab):
    pid = lab.pid(1)
    os.kill(pid, signal.SIGTERM)
    lab.wait_next_hops({2}, "LB 1 withdrew", 5)
    lablib.wait_until(lambda: not os.path.exists("/proc/%d" % pid),
                      "LB 1 to exit", 30)


def open_and_roll_out(lab, second_chance):
    """Both families' connections, be4 rolled out, and the connections
    at risk per family."""
    conns = [lab.longconn(f, CONNS, interval=0.1) for f in (4, 6)]
    roll_out(lab, "be1,be2,be3,be4", second_chance)
    risky = [at_risk(lab, lc) for lc in conns]
    log("second chance %s: %d of %d IPv4 and %d of %d IPv6 connections "
        "are LB 1's and their slots name be4 now" % (
            "on" if second_chance else "off", len(risky[0]), CONNS,
            len(risky[1]), CONNS))
    if not risky[0] and not risky[1]:
        raise lablib.Skip("void: no connection of LB 1 has a slot be4 took")
    return conns, risky


def with_second_chance(lab):
    start_both(lab, True)
    conns, _ = open_and_roll_out(lab, True)
    before = decap_counters(lab, 4)
    mark = [lc.mark() for lc in conns]
    stop_lb1(lab)
    progress_or_dump(lab, conns, mark)
    moved = decap_counters(lab, 4)
    handed = moved["redirected"] - before["redirected"]
    log("LB 1 stopped: no connection broke; be4 handed on %d packets" % handed)
    check(handed > 0, "be4 handed packets on: %s" % moved)

    mark = [lc.mark() for lc in conns]
    lab.start_lb(1)
    lab.wait_next_hops({1, 2}, "LB 1 serving again")
    progress_or_dump(lab, conns, mark)
    after = decap_counters(lab, 4)
    log("LB 1 restarted (no history: second choices only): no connection "
        "broke; be4 handed on %d more packets"
        % (after["redirected"] - moved["redirected"]))
    check(after["sc_no_route"] == before["sc_no_route"],
          "be4 found a route to every hop: %s" % after)
    for lc in conns:
        lc.stop()
    for lb in (1, 2):
        lab.stop_lb(lb)


def broken(lc):
    return sorted(c["sport"] for c in lc.state()["conns"] if c["error"])


def without_second_chance(lab):
    start_both(lab, False)
    conns, risky = open_and_roll_out(lab, False)
    stop_lb1(lab)
    lablib.wait_until(lambda: all(len(broken(lc)) >= len(r) for lc, r in
                                  zip(conns, risky)),
                      "the at-risk connections to fail", 20)
    time.sleep(1)   # one more request on every connection
    for lc, r in zip(conns, risky):
        errors = {c["error"] for c in lc.state()["conns"] if c["error"]}
        log("LB 1 stopped: %d IPv%d connections broke (%s)" % (
            len(broken(lc)), lc.family, ", ".join(sorted(errors))))
        check(broken(lc) == sorted(r), "exactly the at-risk IPv%d "
              "connections broke: broke %s, at risk %s" % (
                  lc.family, broken(lc), sorted(r)))
        check(errors <= {"reset"}, "they were reset: %s" % errors)
    for lc in conns:
        lc.stop()
    for lb in (1, 2):
        lab.stop_lb(lb)


def test(lab):
    with_second_chance(lab)
    without_second_chance(lab)


if __name__ == "__main__":
    lablib.run(test, backends=4, clients=1, bgp=True)
