#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tracked flows across a graceful restart (the flows file,
docs/operations.md "Flows across a restart") in the lab, one instance,
real TCP, for a forwarding method without second chance (ipip, l2dsr):

1. maglevd serves web4 and web6 with be1..be3; 40 long-lived keep-alive
   connections per family run through it.
2. be4 joins (a reload): the table moves slots to be4, conntrack keeps
   the connections on their backends. The test asks which tracked
   connections' slots name another backend now: those are the ones a
   restart without the flows file resets (void if none).
3. maglevd stops gracefully and starts again with the same config. The
   connections' requests wait out the outage (TCP retransmits; a request
   may take up to 30 s here).
4. Every connection, the at-risk ones included, answers 5 more requests
   from the backend it had: none reset, none moved. The log says how many
   flows were saved and restored.

usage: test_restart_flows.py [--forwarding ipip|l2dsr] [--vdev ...]"""
import re

import lablib
from lablib import check, log

CONNS = 40                  # per family
CLIENT = {4: "10.99.0.101", 6: "fd00:99::101"}
VIP_NAME = {4: "web4", 6: "web6"}


def at_risk(lab, lc):
    """The connections of lc that maglevd tracks on another backend than
    the one their slot names now."""
    risky = []
    for c in lc.state()["conns"]:
        r = lab.ctl(1, "lookup", VIP_NAME[lc.family], CLIENT[lc.family],
                    c["sport"])
        tracked = r.get("tracked")
        check(isinstance(tracked, dict), "port %d not tracked: %s"
              % (c["sport"], r))
        check(tracked["backend"] == c["backend"], "port %d tracked on %s, "
              "answered by %s" % (c["sport"], tracked["backend"],
                                  c["backend"]))
        if r.get("backend") != tracked["backend"]:
            risky.append(c["sport"])
    return risky


def test(lab):
    lab.write_config(lab.config(backends="be1,be2,be3"))
    lab.start_lb()
    lab.require_steering()
    conns = [lab.longconn(f, CONNS, interval=0.2, io_timeout=30)
             for f in (4, 6)]
    lab.write_config(lab.config(backends="be1,be2,be3,be4"))
    gen = lab.reload()
    lab.wait_generation_above(gen)
    risky = [at_risk(lab, lc) for lc in conns]
    log("be4 joined: %d of %d IPv4 and %d of %d IPv6 tracked connections "
        "are at risk (their slot names another backend now)"
        % (len(risky[0]), CONNS, len(risky[1]), CONNS))
    if not risky[0] and not risky[1]:
        raise lablib.Skip("void: no tracked connection changed slot owner")
    marks = [lc.mark() for lc in conns]
    lab.stop_lb()
    lab.start_lb()
    lab.require_steering()
    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, rounds=5, timeout_s=60)
    text = lab.lb_log(1)
    saved = re.findall(r"flows file \S+: (\d+) tracked flow\(s\)", text)
    restored = re.findall(r"flows file \S+: (\d+) of (\d+) flow\(s\) "
                          r"restored", text)
    check(saved and restored, "no save or restore in the log")
    log("restart: %s flows saved, %s of %s restored; all %d connections "
        "answered 5 more requests from their backends, the %d at risk "
        "included" % (saved[-1], restored[-1][0], restored[-1][1],
                      2 * CONNS, len(risky[0]) + len(risky[1])))
    check(int(restored[-1][0]) >= 2 * CONNS, "fewer flows restored than "
          "connections open")
    for lc in conns:
        lc.stop()


if __name__ == "__main__":
    lablib.run(test, backends=4, clients=1)
