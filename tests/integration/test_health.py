#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A backend's server stops: within fall x interval of the health check the
backend leaves every VIP's table; from then on every new connection
succeeds (and none goes to it); long-lived connections to the other
backends see no reset and keep their backend. When the server comes
back, the backend rejoins after `rise` successful checks.

usage: test_health.py [--forwarding ipip|gue|l2dsr] [--vdev af_xdp|af_packet]"""
import time

import lablib
from lablib import (HEALTH_FALL, HEALTH_INTERVAL_S, HEALTH_RISE,
                    HEALTH_TIMEOUT_S, check, log)

VICTIM = 2
FLOWS = 300
# docs/health.md: the first failing check starts within one interval
# (+10 % jitter) of the server stopping, and `fall` consecutive failures
# take the backend down; a refused connect fails at once, a hung one
# after the timeout. Slack: publishing, our 50 ms polling, the stop itself.
DOWN_BOUND_S = HEALTH_FALL * HEALTH_INTERVAL_S * 1.1 + HEALTH_TIMEOUT_S + 0.5
UP_BOUND_S = HEALTH_RISE * HEALTH_INTERVAL_S * 1.1 + HEALTH_TIMEOUT_S + 0.5


def backend_state(lab, name):
    """{vip: (state, slots)} for backend name, from the control socket."""
    out = {}
    for b in lab.ctl(1, "backends")["backends"]:
        if b["name"] == name:
            out[b["vip"]] = (b["state"], b["slots"])
    return out


def test(lab):
    lab.start_lb()
    lab.require_steering()
    lab.require_health()
    victim = "be%d" % VICTIM
    vips = sorted(lablib.VIP_NAMES.values())

    lablib.wait_until(lambda: all(s == "active" and n > 0 for s, n in
                                  backend_state(lab, victim).values()),
                      "%s active in every VIP" % victim, 10)
    conns = [lab.longconn(4, 9), lab.longconn(6, 9)]
    marks = [lc.mark() for lc in conns]

    t0 = time.monotonic()
    lab.backend("stop", VICTIM, "http")
    lablib.wait_until(lambda: all(s == "down" and n == 0 for s, n in
                                  backend_state(lab, victim).values()),
                      "%s to leave every table" % victim, 30, 0.05)
    took = time.monotonic() - t0
    log("%s left the tables %.2fs after its server stopped (bound %.2fs)"
        % (victim, took, DOWN_BOUND_S))
    check(took <= DOWN_BOUND_S, "%s left the tables after %.2fs, more than "
          "fall x interval allows (%.2fs)" % (victim, took, DOWN_BOUND_S))
    def unusable_in_stats_file():
        for name in vips:
            b = [b for b in lab.stats_vip(name)["backends"]
                 if b["name"] == victim]
            if not b or b[0]["usable"]:
                return False
        return True
    # the stats file is rewritten every 200 ms
    lablib.wait_until(unusable_in_stats_file, "the stats file to show %s "
                      "unusable in every VIP" % victim, 2)

    for proto, family in [("http", 4), ("http", 6), ("udp", 4), ("udp", 6)]:
        r = lab.burst(proto, family, FLOWS)
        check(r["failed"] == 0, "%s IPv%d with %s down: %d of %d new flows "
              "failed: %s" % (proto, family, victim, r["failed"], FLOWS,
                              r["errors"]))
        check(victim not in r["backends"], "%s IPv%d: new flows reached "
              "the down backend: %s" % (proto, family, r["backends"]))
        log("%s IPv%d with %s down: %s" % (proto, family, victim,
                                          r["backends"]))
    for lc, mark in zip(conns, marks):
        lc.wait_progress(mark, exclude={victim})
    log("long-lived connections to the other backends: no reset")

    t0 = time.monotonic()
    lab.backend("start", VICTIM, "http")
    lablib.wait_until(lambda: all(s == "active" and n > 0 for s, n in
                                  backend_state(lab, victim).values()),
                      "%s to rejoin every table" % victim, 30, 0.05)
    took = time.monotonic() - t0
    log("%s rejoined %.2fs after its server started (bound %.2fs)"
        % (victim, took, UP_BOUND_S))
    check(took <= UP_BOUND_S, "%s rejoined after %.2fs, more than rise x "
          "interval allows (%.2fs)" % (victim, took, UP_BOUND_S))
    r = lab.burst("http", 4, FLOWS)
    check(r["failed"] == 0 and r["backends"].get(victim, 0) > 0,
          "after rejoining, new flows: %s" % r)

    # The UDP VIPs get a udp check of their own (the echo answers "NAME
    # payload"): the victim's echo stops, and it leaves the UDP VIPs only.
    cfg = open(lab.config_path(1)).read()
    udp = cfg.replace("    protocol: udp\n", "    protocol: udp\n"
                      "    health: {type: udp, port: 7, send: ping, receive: ping, "
                      "interval: %dms, timeout: %dms, rise: %d, fall: %d}\n"
                      % (HEALTH_INTERVAL_S * 1000, HEALTH_TIMEOUT_S * 1000,
                         HEALTH_RISE, HEALTH_FALL))
    check(udp.count("type: udp") == 2, "both UDP VIPs get the udp check")
    lab.write_config(udp, 1)
    gen = lab.reload(1)
    lab.wait_generation_above(gen)
    udp_vips = [v for v in vips if v.startswith("echo")]
    t0 = time.monotonic()
    lab.backend("stop", VICTIM, "udp")
    lablib.wait_until(lambda: all(
        (st == ("down", 0)) == (vip in udp_vips)
        for vip, st in backend_state(lab, victim).items()),
        "%s to leave the UDP VIPs only" % victim, 30, 0.05)
    took = time.monotonic() - t0
    log("udp check: %s left the UDP VIPs %.2fs after its echo stopped "
        "(bound %.2fs)" % (victim, took, DOWN_BOUND_S))
    check(took <= DOWN_BOUND_S, "udp check: %.2fs, more than fall x "
          "interval allows (%.2fs)" % (took, DOWN_BOUND_S))
    for family in (4, 6):
        r = lab.burst("udp", family, FLOWS)
        check(r["failed"] == 0 and victim not in r["backends"],
              "udp IPv%d with %s's echo down: %s" % (family, victim, r))
    last = [b for b in lab.ctl(1, "health", "echo4")["backends"]
            if b["backend"] == victim][0]["last_result"]
    check(last == "port unreachable (ICMP)", "the reason: %s" % last)
    lab.backend("start", VICTIM, "udp")
    lablib.wait_until(lambda: all(s == "active" for s, n in
                                  backend_state(lab, victim).values()),
                      "%s to rejoin the UDP VIPs" % victim, 30, 0.05)


if __name__ == "__main__":
    lablib.run(test)
