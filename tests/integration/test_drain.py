#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Drain: a backend set to `state: drain` in the YAML (then reloaded) keeps
its established connections, which continue without a reset, and gets
no new flow at all. If the control socket is wired, the same through
`maglevctl drain` (a runtime override) on another backend.

usage: test_drain.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import json
import os
import subprocess

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


def tracked(lab, vip, name):
    """(active, inactive) tracked connections of backend name in vip."""
    for b in lab.ctl(1, "backends", vip)["backends"]:
        if b["name"] == name:
            return b["active_connections"], b["inactive_connections"]
    raise lablib.Failure("%s has no backend %s" % (vip, name))


def drain_wait(lab, vip, name, seconds):
    """maglevctl drain VIP NAME --wait -t seconds: (exit status, the wait's
    JSON outcome)."""
    p = subprocess.run([os.path.join(lab.build, "tools", "bin", "maglevctl",
                                     "maglevctl"),
                        "-s", lab.socket_path(1), "-o", "json",
                        "-t", str(seconds), "drain", vip, name, "--wait"],
                       capture_output=True, text=True, timeout=seconds + 30)
    lines = p.stdout.strip().splitlines()
    check(len(lines) == 2, "drain --wait printed %r %r" % (p.stdout, p.stderr))
    check(json.loads(lines[0]).get("ok"), "drain refused: %s" % lines[0])
    return p.returncode, json.loads(lines[1])


def check_idle_flow_counted(lab):
    """An idle established connection stays counted on its backend across
    a drain and a reload (the counts belong to the flows, not to a
    generation); drain --wait runs out of time while it is open and
    returns once it has closed and left conntrack."""
    vip = lablib.VIP_NAMES[("tcp", 4)]
    idle = lab.longconn(4, 1, need={"be1": 1}, interval=3600)
    check(idle.state()["conns"][0]["backend"] == "be1",
          "the idle connection is on %s" % idle.state()["conns"])
    active, _ = tracked(lab, vip, "be1")
    check(active == 1, "be1 tracks %d established connections with one "
          "open" % active)
    lab.ctl(1, "drain", vip, "be1")
    gen = lab.reload()
    lab.wait_generation_above(gen)
    after, _ = tracked(lab, vip, "be1")
    check(after == 1, "after a drain and a reload be1 shows %d established "
          "connections while an idle one is open" % after)
    # conns lists it, with its client port, on be1, established
    sport = idle.state()["conns"][0]["sport"]
    listed = lab.ctl(1, "conns", vip, "--backend", "be1", "--limit", 1000)
    mine = [c for c in listed["conns"]
            if c["client"].endswith(":%d" % sport)]
    check(len(mine) == 1 and mine[0]["state"] == "established" and
          mine[0]["backend"] == "be1" and mine[0]["vip"] == vip and
          mine[0]["protocol"] == "tcp",
          "conns %s --backend be1: the idle connection from port %d: %s"
          % (vip, sport, listed))
    log("conns lists it: %s" % mine[0])
    rc, out = drain_wait(lab, vip, "be1", 2)
    check(rc == 4 and not out["drained"] and out["active"] == 1,
          "drain --wait with an idle connection open: exit %d, %s" % (rc, out))
    log("idle connection on be1: counted across drain and reload (%d); "
        "drain --wait timed out with %d left" % (after, out["remaining"]))
    idle.stop()
    lab.longconns.remove(idle)
    rc, out = drain_wait(lab, vip, "be1", 60)
    check(rc == 0 and out["drained"] and out["remaining"] == 0,
          "drain --wait after the close: exit %d, %s" % (rc, out))
    # a closed connection's entry waits out tcp_closing_timeout (10 s)
    # in conntrack, but it is not left open: the wait does not wait for it
    check(out["waited_s"] < 5, "drain --wait took %.1f s after the close, "
          "as if the closing entry were an open connection" % out["waited_s"])
    log("closed: drain --wait returned after %.1f s (%d closing entries "
        "left in conntrack)" % (out["waited_s"], out["inactive"]))


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
    # the long-lived connections close: one idle connection stays
    for lc in conns + conns2:
        lc.stop()
        lab.longconns.remove(lc)
    check_idle_flow_counted(lab)


if __name__ == "__main__":
    lablib.run(test)
