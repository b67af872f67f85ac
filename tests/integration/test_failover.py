#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two maglevd instances with the same backends build the same tables
(equal fingerprints), so a TCP connection moved mid-stream from one to
the other (the client's route to the VIP switched, as an ECMP change
would) continues on the same backend without a reset, and back again.

usage: test_failover.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import lablib
from lablib import check, log


def vip_counter(lab, lb, key):
    return sum(v["counters"][key] for v in lab.stats(lb)["vips"])


def test(lab):
    for lb in (1, 2):   # lab up wrote both configs: same VIPs and backends
        lab.start_lb(lb)
    for lb in (1, 2):
        lab.require_steering(lb)
    fp = [{v["name"]: v["fingerprint"] for v in lab.stats(lb)["vips"]}
          for lb in (1, 2)]
    check(fp[0] == fp[1], "fingerprints differ: LB1 %s, LB2 %s" % tuple(fp))
    log("same fingerprints on both instances: %s" % fp[0])
    try:
        lab.require_control_socket(1)
        lab.require_control_socket(2)
        tables = [lab.ctl(lb, "table", "web4") for lb in (1, 2)]
        check(tables[0]["fingerprint"] == tables[1]["fingerprint"]
              == fp[0]["web4"], "maglevctl table fingerprints: %s"
              % [t["fingerprint"] for t in tables])
        check(tables[0]["backends"] == tables[1]["backends"],
              "slots per backend differ: %s" % tables)
    except lablib.Skip as e:
        log("maglevctl table not compared: %s" % e)

    conns = [lab.longconn(4, 12), lab.longconn(6, 12)]
    for target in (2, 1):
        marks = [lc.mark() for lc in conns]
        packets = vip_counter(lab, target, "packets")
        lab.route(target)
        for lc, mark in zip(conns, marks):
            lc.wait_progress(mark, rounds=10)
        # the requests really went through the other instance now
        lablib.wait_until(
            lambda: vip_counter(lab, target, "packets") >= packets + 10 * 24,
            "LB %d to carry the moved connections' packets" % target, 5)
        log("24 connections moved to LB %d mid-stream: no reset, same "
            "backends" % target)
        for family in (4, 6):
            r = lab.burst("http", family, 200)
            check(r["failed"] == 0, "new flows via LB %d, IPv%d: %s"
                  % (target, family, r["errors"]))


if __name__ == "__main__":
    lablib.run(test)
