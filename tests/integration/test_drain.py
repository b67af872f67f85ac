#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drain: a backend set to `state: drain` in the YAML (then reloaded) keeps
its established connections, which continue without a reset, and gets
no new flow at all. If the control socket is wired, the same through
`maglevctl drain` (a runtime override) on another backend.

usage: test_drain.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import binomial
import lablib
from lablib import check, log

FLOWS = 600


def check_no_new_flows(lab, drained, weights):
    """New flows of every kind avoid the drained backend (and are spread
    over the others by weight); maglevd counted none for it."""
    stats = lab.fresh_stats()
    before = {n: lab.new_flows(n, stats=stats)
              for n in lablib.VIP_NAMES.values()}
    cases = [("http", 4), ("http", 6), ("udp", 4), ("udp", 6)]
    for proto, family in cases:
        r = lab.burst(proto, family, FLOWS)
        check(r["failed"] == 0, "%s IPv%d with %s drained: %s"
              % (proto, family, drained, r["errors"]))
        check(drained not in r["backends"], "%s IPv%d: new flows reached "
              "drained %s: %s" % (proto, family, drained, r["backends"]))
        problems = binomial.check_counts(r["backends"], weights,
                                         checks=len(cases))
        check(not problems, "%s IPv%d: %s" % (proto, family, problems))
        log("%s IPv%d with %s drained: %s" % (proto, family, drained,
                                             r["backends"]))
    stats = lab.fresh_stats()
    for name in lablib.VIP_NAMES.values():
        now = lab.new_flows(name, stats=stats)
        check(now[drained] == before[name][drained], "maglevd counted new "
              "flows for drained %s in %s" % (drained, name))


def test(lab):
    lab.write_config(lab.config(backends="be1,be2,be3"))
    lab.start_lb()
    lab.require_steering()
    conns = [lab.longconn(4, 9, need={"be2": 2}),
             lab.longconn(6, 9, need={"be2": 2})]
    marks = [lc.mark() for lc in conns]

    lab.write_config(lab.config(backends="be1,be2:100:drain,be3"))
    gen = lab.reload()
    lab.wait_generation_above(gen)
    for name in lablib.VIP_NAMES.values():
        b = {b["name"]: b for b in lab.stats_vip(name)["backends"]}["be2"]
        check(b["draining"] and b["usable"] and b["weight"] == 0,
              "be2 in %s after the drain: %s" % (name, b))
    log("be2 draining (YAML)")
    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, rounds=10)   # be2's connections included
    log("established connections, be2's included: continue, no reset")
    check_no_new_flows(lab, "be2", {"be1": 100, "be3": 100})
    for lc, mark in zip(conns, [lc.mark() for lc in conns]):
        lc.wait_progress(mark, rounds=3)

    # The same at runtime, if the control socket is there.
    try:
        lab.require_control_socket()
    except lablib.Skip as e:
        log("runtime drain not tested: %s" % e)
        return
    conns2 = [lab.longconn(4, 9, need={"be3": 2}),
              lab.longconn(6, 9, need={"be3": 2})]
    marks = [lc.mark() for lc in conns2]
    for name in lablib.VIP_NAMES.values():
        lab.ctl(1, "drain", name, "be3")
    for b in lab.ctl(1, "backends")["backends"]:
        if b["name"] == "be3":
            check(b["state"] == "draining" and b["slots"] == 0,
                  "be3 after maglevctl drain: %s" % b)
    log("be3 draining (maglevctl drain)")
    for lc, mark in zip(conns2, marks):
        lc.wait_progress(mark, rounds=10)
    r = lab.burst("http", 4, FLOWS)
    check(r["failed"] == 0 and set(r["backends"]) == {"be1"},
          "with be2 and be3 drained, new flows: %s" % r)


if __name__ == "__main__":
    lablib.run(test)
