#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTP and UDP through the VIP, IPv4 and IPv6, and the flows follow the
weights: every request succeeds; the backends' shares are inside exact
binomial bounds (binomial.py) around the weight shares; maglevd's own
per-backend new-flow counters equal what the clients saw; pings to the
VIPs are answered by maglevd itself.

usage: test_http.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import binomial
import lablib
from lablib import check, log

WEIGHTS = {"be1": 100, "be2": 200, "be3": 100}
FLOWS = 2000  # per VIP: a share is known to about +-1.1 points (1 sd)
PINGS = 5
CASES = [("http", 4), ("http", 6), ("udp", 4), ("udp", 6)]


def test(lab):
    spec = ",".join("%s:%d" % kv for kv in sorted(WEIGHTS.items()))
    lab.write_config(lab.config(backends=spec))
    lab.start_lb()
    lab.require_steering()

    stats = lab.fresh_stats()   # after require_steering's probe flows
    before = {case: lab.new_flows(lablib.VIP_NAMES[proto_key(case)],
                                  stats=stats) for case in CASES}
    seen = {}
    for case in CASES:
        proto, family = case
        r = lab.burst(proto, family, FLOWS)
        check(r["failed"] == 0, "%s over IPv%d: %d of %d flows failed: %s"
              % (proto, family, r["failed"], FLOWS, r["errors"]))
        seen[case] = r["backends"]
        log("%s IPv%d: %s" % (proto, family,
                             binomial.describe(r["backends"], WEIGHTS)))

    problems = []
    for case in CASES:
        problems += ["%s IPv%d: %s" % (case[0], case[1], p) for p in
                     binomial.check_counts(seen[case], WEIGHTS,
                                           checks=len(CASES))]
    check(not problems, "distribution does not follow the weights:\n  "
          + "\n  ".join(problems))

    # maglevd counted every flow on the backend the client saw answer
    # (the stats file is rewritten every 200 ms: poll until it agrees)
    def counters_agree():
        for case in CASES:
            now = lab.new_flows(lablib.VIP_NAMES[proto_key(case)])
            delta = {b: now[b] - before[case].get(b, 0) for b in now}
            delta = {b: n for b, n in delta.items() if n}
            if delta != seen[case]:
                return None
        return True
    try:
        lablib.wait_until(counters_agree, "maglevd's new_flows to match the "
                          "clients' view", 5)
    except lablib.Failure:
        detail = []
        for case in CASES:
            now = lab.new_flows(lablib.VIP_NAMES[proto_key(case)])
            detail.append("%s IPv%d: clients %s, maglevd now %s, before %s"
                          % (case[0], case[1], seen[case], now, before[case]))
        raise lablib.Failure("per-backend counters disagree:\n  "
                             + "\n  ".join(detail))
    log("maglevd's per-backend new_flows match the clients' view")

    # the VIPs answer pings through maglevd (icmp_echo: reply in the lab)
    before = lab.fresh_stats()["totals"]["counters"]["echo_replies"]
    for family in (4, 6):
        got = lab.ping(family, PINGS)
        check(got == PINGS, "ping to the IPv%d VIP: %d of %d answered"
              % (family, got, PINGS))
    lablib.wait_until(
        lambda: lab.stats()["totals"]["counters"]["echo_replies"] - before
        >= 2 * PINGS, "maglevd's echo_replies to count the pings", 5)
    log("pings to both VIPs answered by maglevd (echo_replies)")


def proto_key(case):
    proto, family = case
    return ("tcp" if proto == "http" else "udp", family)


if __name__ == "__main__":
    lablib.run(test)
