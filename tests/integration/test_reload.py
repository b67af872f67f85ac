#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Add a backend by editing the YAML and reloading (SIGHUP): long-lived
TCP connections opened before the reload stay up with zero resets on the
backend they had, and new flows reach the new backend, in the proportion
its weight gives it.

usage: test_reload.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import binomial
import lablib
from lablib import check, log

FLOWS = 1200
CASES = [("http", 4), ("http", 6), ("udp", 4), ("udp", 6)]


def test(lab):
    lab.write_config(lab.config(backends="be1,be2,be3"))
    lab.start_lb()
    lab.require_steering()
    conns = [lab.longconn(4, 12), lab.longconn(6, 12)]
    r = lab.burst("http", 4, 100)
    check(r["failed"] == 0 and "be4" not in r["backends"],
          "before the reload: %s" % r)

    marks = [lc.mark() for lc in conns]
    before = lab.stats()
    lab.write_config(lab.config(backends="be1,be2,be3,be4"))
    gen = lab.reload()
    lab.wait_generation_above(gen)
    after = lab.stats()
    check(after["reloads"]["ok"] > before["reloads"]["ok"],
          "reloads.ok did not move: %s" % after["reloads"])
    for name in lablib.VIP_NAMES.values():
        names = [b["name"] for b in lab.stats_vip(name, stats=after)["backends"]]
        check("be4" in names, "be4 missing from %s after the reload: %s"
              % (name, names))
    log("reloaded: generation %d -> %d" % (gen, after["generation"]))

    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, rounds=10)
    log("long-lived connections: zero resets, none moved")

    weights = {"be%d" % i: 100 for i in range(1, 5)}
    problems = []
    for proto, family in CASES:
        r = lab.burst(proto, family, FLOWS)
        check(r["failed"] == 0, "%s IPv%d after the reload: %d failed: %s"
              % (proto, family, r["failed"], r["errors"]))
        log("%s IPv%d: %s" % (proto, family,
                             binomial.describe(r["backends"], weights)))
        problems += ["%s IPv%d: %s" % (proto, family, p) for p in
                     binomial.check_counts(r["backends"], weights,
                                           checks=len(CASES))]
    check(not problems, "new flows after adding be4:\n  "
          + "\n  ".join(problems))
    # and the old connections still stand after all that
    for lc, mark in zip(conns, [lc.mark() for lc in conns]):
        lc.wait_progress(mark, rounds=3)


if __name__ == "__main__":
    lablib.run(test, backends=4)
