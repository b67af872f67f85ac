#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Second chance (docs/second-chance.md) in the routed lab (tools/lab/lab
up --bgp, gue, rendezvous, four backends): the backend set changes (a
backend joins; a weight rises; a backend is drained) and afterwards flows
move between instances, with real TCP. The steps, for the added backend
(the others likewise, at-risk meaning tracked on another backend than the
slot names now; a drained backend's flows are not followed across a
restart, see CASES):

With second_chance on:
1. Two instances serve web4 with be1..be3; 40 long-lived keep-alive
   connections run through the router's ECMP.
2. be4 is added on LB 1, then on LB 2. The test asks LB 1 which
   connections it tracks and whose slot now names be4: those are the
   ones a move breaks without second chance (the test is void if none).
3. LB 1 stops gracefully: its flows move to LB 2, which has no state for
   them; a segment of a connection it does not track goes to the slot's
   previous owner, where a connection older than the change lives, and
   LB 2 tracks it there (a connection that started after the change
   reaches be4 through the owner hop). No connection breaks, none
   changes backend, and LB 2 tracks every moved at-risk connection on
   its own backend.
4. LB 1 starts again as after a crash that lost its state directory:
   its flows and history files are removed first, so it comes back with
   no tracked flows and no history, and lists the
   slots' second choices (rendezvous: the previous owners) and, for a
   drained backend, the slots it would own undrained. No connection
   breaks.
be4's `redirected` counter shows the packets it handed on.

With second_chance off, the same sequence up to 3: exactly the
connections of step 2 are reset, which shows what second chance
prevents. 40 connections per family, IPv4 and IPv6.

usage: test_second_chance.py [--vdev af_xdp|af_packet]"""
import signal
import os
import re
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


def decap_status(lab, be):
    return lab.lab("exec", "be%d" % be, os.path.join(
        lab.build, "tools", "bin", "maglev-decap", "maglev-decap"),
        "status", "eth0")


def decap_counters(lab, be):
    out = decap_status(lab, be)
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
    """The connections of lc that LB 1 tracks on another backend than the
    one their slot names now: those an instance move sends elsewhere."""
    risky = []
    for c in lc.state()["conns"]:
        r = lab.ctl(1, "lookup", VIP_NAME[lc.family], CLIENT[lc.family],
                    c["sport"])
        tracked = r.get("tracked")
        if not isinstance(tracked, dict):
            continue
        check(tracked["backend"] == c["backend"], "LB 1 tracks port %d "
              "on %s, its answers come from %s" % (
                  c["sport"], tracked["backend"], c["backend"]))
        if r.get("backend") != tracked["backend"]:
            risky.append(c["sport"])
    return risky


def start_both(lab, backends, second_chance):
    for lb in (1, 2):
        config(lab, lb, backends, second_chance)
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


def redirected(lab):
    """redirected summed over the backends."""
    return sum(decap_counters(lab, be)["redirected"]
               for be in range(1, lab.n_backends + 1))


def open_and_roll_out(lab, case, second_chance):
    """Both families' connections, the change rolled out, and the
    connections at risk per family."""
    name, before, after, _ = case
    start_both(lab, before, second_chance)
    conns = [lab.longconn(f, CONNS, interval=0.1) for f in (4, 6)]
    roll_out(lab, after, second_chance)
    risky = [at_risk(lab, lc) for lc in conns]
    log("%s, second chance %s: %d of %d IPv4 and %d of %d IPv6 "
        "connections are LB 1's and their slots name another backend now"
        % (name, "on" if second_chance else "off", len(risky[0]), CONNS,
           len(risky[1]), CONNS))
    if not risky[0] and not risky[1]:
        log("%s: void, no connection of LB 1 changed slot owner" % name)
        finish(lab, conns)
        return None, None
    return conns, risky


def finish(lab, conns):
    for lc in conns:
        lc.stop()
    for lb in (1, 2):
        lab.stop_lb(lb)


def tracked_on_lb2(lab, lc, ports):
    """How many of lc's connections on ports LB 2 tracks on the backend
    that answers them."""
    answered = {c["sport"]: c["backend"] for c in lc.state()["conns"]}
    n = 0
    for sp in ports:
        r = lab.ctl(2, "lookup", VIP_NAME[lc.family], CLIENT[lc.family], sp)
        t = r.get("tracked")
        n += isinstance(t, dict) and t["backend"] == answered[sp]
    return n


def with_second_chance(lab, case):
    name, _, _, restart = case
    conns, risky = open_and_roll_out(lab, case, True)
    if conns is None:
        return False
    before = redirected(lab)
    mark = [lc.mark() for lc in conns]
    stop_lb1(lab)
    progress_or_dump(lab, conns, mark)
    moved = redirected(lab)
    on_own = sum(tracked_on_lb2(lab, lc, r) for lc, r in zip(conns, risky))
    log("%s: LB 1 stopped: no connection broke; LB 2 tracks %d of the %d "
        "at-risk connections on their own backends; the backends handed "
        "on %d packets" % (name, on_own, len(risky[0]) + len(risky[1]),
                           moved - before))
    check(on_own == len(risky[0]) + len(risky[1]),
          "LB 2 tracks every moved at-risk connection on its backend")
    if restart:
        mark = [lc.mark() for lc in conns]
        # as after a crash that lost the state directory: no tracked
        # flows, no history come back
        flows = lab.socket_path(1) + ".state.flows"
        history = lab.socket_path(1) + ".state.history"
        check(os.path.exists(flows), "LB 1 saved no flows file")
        check(os.path.exists(history), "LB 1 kept no history file")
        os.remove(flows)
        os.remove(history)
        lab.start_lb(1)
        lab.wait_next_hops({1, 2}, "LB 1 serving again")
        progress_or_dump(lab, conns, mark)
        log("%s: LB 1 restarted without its flows and history files (no "
            "tracked flows, no history): no connection broke; %d more packets handed on"
            % (name, redirected(lab) - moved))
    finish(lab, conns)
    return True


def broken(lc):
    return sorted(c["sport"] for c in lc.state()["conns"] if c["error"])


def without_second_chance(lab, case):
    conns, risky = open_and_roll_out(lab, case, False)
    if conns is None:
        return False
    stop_lb1(lab)
    lablib.wait_until(lambda: all(len(broken(lc)) >= len(r) for lc, r in
                                  zip(conns, risky)),
                      "the at-risk connections to fail", 20)
    time.sleep(1)   # one more request on every connection
    for lc, r in zip(conns, risky):
        errors = {c["error"] for c in lc.state()["conns"] if c["error"]}
        log("%s: LB 1 stopped: %d IPv%d connections broke (%s)" % (
            case[0], len(broken(lc)), lc.family, ", ".join(sorted(errors))))
        check(broken(lc) == sorted(r), "exactly the at-risk IPv%d "
              "connections broke: broke %s, at risk %s" % (
                  lc.family, broken(lc), sorted(r)))
        check(errors <= {"reset"}, "they were reset: %s" % errors)
    finish(lab, conns)
    return True


# (name, backends before, after, restart LB 1 too). A restarted instance
# knows no previous owners; it finds an added backend's and a raised
# weight's flows through the second choices, a drained backend's through
# the undrained table (docs/second-chance.md, "Drained backends").
CASES = [
    ("backend added", "be1,be2,be3", "be1,be2,be3,be4", True),
    ("weight raised", "be1,be2,be3,be4", "be1,be2,be3,be4:400", True),
    ("backend drained", "be1,be2,be3,be4", "be1:100:drain,be2,be3,be4",
     True),
]


def check_ready(lab, carried_before):
    """Every backend says it is ready for second chance, and received
    hop-carrying frames since carried_before (per backend), before any
    hand-on was needed."""
    for be in range(1, lab.n_backends + 1):
        out = decap_status(lab, be)
        check("second chance readiness: ready" in out,
              "be%d is not ready for second chance:\n%s" % (be, out))
        got = decap_counters(lab, be)["sc_carried"]
        log("be%d: ready for second chance; %d hop-carrying frames "
            "received" % (be, got - carried_before[be]))
        check(got > carried_before[be], "be%d counted no hop-carrying "
              "frame (sc_carried)" % be)


def test(lab):
    carried = {be: decap_counters(lab, be).get("sc_carried", 0)
               for be in range(1, lab.n_backends + 1)}
    done = 0
    for case in CASES:
        done += with_second_chance(lab, case)
        if case is CASES[0]:
            check_ready(lab, carried)
        done += without_second_chance(lab, case)
    if done == 0:
        raise lablib.Skip("void: in no case did a connection of LB 1 "
                          "change slot owner")


if __name__ == "__main__":
    lablib.run(test, backends=4, clients=1, bgp=True)
