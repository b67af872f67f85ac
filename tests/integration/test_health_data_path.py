#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Health checks through the data path (health.via: data_path,
docs/health.md): a backend that answers on its own address but no longer
has the VIP is taken out of the VIPs checked through the data path, and
only those.

The config: web4 and web6 (port 80) get `health: {via: data_path}`, which
inherits every other key of defaults.health (an HTTP GET /healthz on port
80); direct4 and direct6 are copies of them on port 8080 with the default
direct check. Each VIP has be1..be3.

1. Every backend is active, with slots, in every VIP; every check of the
   web and direct VIPs has succeeded at least `rise` times (so the
   encapsulated probe and its reply work: the initial state alone is up),
   and the health rows name the mode (`via`). A burst reaches be2.
2. The VIP addresses are removed from be2's lo. Within fall x interval
   (+ timeout, slack) be2 is down with 0 slots in web4 and web6, their
   health rows via data_path and not up; be1 and be3 stay up there. In
   direct4 and direct6 be2 stays active with slots and up via direct all
   along, and for fall x interval (and at least `fall` more completed
   checks) after the data-path VIPs took it out.
3. Real TCP through web4 and web6: every connection succeeds, none
   reaches be2, the rest follow the weights.
4. The addresses come back: be2 rejoins web4 and web6 within rise x
   interval (+ timeout, slack) and new connections reach it again, in its
   share (binomial bounds). The addresses are put back also when the test
   fails.

Runs in the routed lab (tools/lab/lab up --bgp: the clients reach the
VIPs through the router, LB 1 announces them) unless --lab plain.

usage: test_health_data_path.py [--forwarding ipip|gue|l2dsr]
                                    [--vdev af_xdp|af_packet]
                                    [--lab routed|plain]"""
import argparse
import ipaddress
import os
import re
import subprocess
import sys
import time

import binomial
import lablib
from lablib import (HEALTH_FALL, HEALTH_INTERVAL_S, HEALTH_RISE,
                    HEALTH_TIMEOUT_S, check, log)

VICTIM = 2
FLOWS = 200
DIRECT_PORT = 8080
DATA_PATH_VIPS = {"web4": 4, "web6": 6}      # via: data_path
DIRECT_VIPS = {"direct4": 4, "direct6": 6}   # the default direct check
COPIED_FROM = {"direct4": "web4", "direct6": "web6"}
VIA = dict([(v, "data_path") for v in DATA_PATH_VIPS] +
           [(v, "direct") for v in DIRECT_VIPS])
# As in test_health.py (docs/health.md, "Timing"): the first failing check
# starts within one interval (+10 % jitter), `fall` consecutive failures
# take the backend out, the last of them a timeout (a probe into a
# backend without the VIP gets no answer). Slack: publishing the
# generations (failover, then the rebuilt table), our polling.
DOWN_BOUND_S = HEALTH_FALL * HEALTH_INTERVAL_S * 1.1 + HEALTH_TIMEOUT_S + 0.5
UP_BOUND_S = HEALTH_RISE * HEALTH_INTERVAL_S * 1.1 + HEALTH_TIMEOUT_S + 0.5
# How long the direct checks must keep the victim up once the data-path
# ones took it out: at least fall x interval, the time in which `fall`
# failed direct checks would have taken it down too.
STAY_UP_S = HEALTH_FALL * HEALTH_INTERVAL_S * 1.1 + HEALTH_TIMEOUT_S
READY_S = 15
BURSTS = 6          # burst() calls, sharing binomial's alpha


def vip_family(name):
    return DATA_PATH_VIPS.get(name) or DIRECT_VIPS[name]


# --- the config ----------------------------------------------------------
def config(lab):
    """The lab config with web4/web6 checked through the data path and
    direct4/direct6 (copies of them on DIRECT_PORT) checked directly."""
    text = lab.config(1)
    head, sep, body = text.partition("\nvips:\n")
    check(sep and body.startswith("  - name: "),
          "the lab config has a vips list")
    blocks = [b for b in re.split(r"(?m)^(?=  - name: )", body) if b]
    names = [re.match(r"  - name: (\S+)\n", b).group(1) for b in blocks]
    by_name = dict(zip(names, blocks))
    for web in DATA_PATH_VIPS:
        check(web in by_name, "the lab config has VIP %s: %s" % (web, names))
        check("    health:" not in by_name[web],
              "VIP %s has no health of its own yet" % web)
    extra = []
    for name in sorted(DIRECT_VIPS):
        b, n = re.subn(r"(?m)^  - name: %s$" % COPIED_FROM[name],
                       "  - name: %s" % name, by_name[COPIED_FROM[name]])
        b, m = re.subn(r"(?m)^    port: %d$" % lablib.HTTP_PORT,
                       "    port: %d" % DIRECT_PORT, b)
        check(n == 1 and m == 1, "VIP %s copied from %s" % (
            name, COPIED_FROM[name]))
        extra.append(b if b.endswith("\n") else b + "\n")
    out = []
    for name, b in zip(names, blocks):
        if name in DATA_PATH_VIPS:
            # a VIP's health map overrides defaults.health key by key
            # (control/config/validate.c: mlv_cfg_init_vip copies the
            # defaults first; docs/config.md, vips[].health)
            b, n = re.subn(r"(?m)^(    protocol: tcp\n)",
                           r"\1    health: {via: data_path}\n", b)
            check(n == 1, "VIP %s is tcp" % name)
        out.append(b if b.endswith("\n") else b + "\n")
    return head + sep + "".join(out + extra)


# --- the victim's VIP addresses ---------------------------------------
def set_vip_addrs(action, tolerate=False):
    """ip addr add|del of both VIP addresses on the victim's lo;
    tolerate: an address already there (add) or gone (del) is fine."""
    ns = "%s-be%d" % (lablib.PREFIX, VICTIM)
    for fam, addr in ((4, "%s/32" % lablib.VIP4),
                      (6, "%s/128" % lablib.VIP6)):
        p = subprocess.run(["ip", "netns", "exec", ns, "ip", "-%d" % fam,
                            "addr", action, addr, "dev", "lo"],
                           capture_output=True, text=True, timeout=30)
        benign = ("File exists" in p.stderr or
                  "Cannot assign requested address" in p.stderr)
        if p.returncode != 0 and not (tolerate and benign):
            raise lablib.Failure("ip addr %s %s in %s: %s" % (
                action, addr, ns, p.stderr.strip()))
    log("be%d: VIP addresses %s lo" % (
        VICTIM, "removed from" if action == "del" else "back on"))


# --- maglevd's view --------------------------------------------------------
def snapshot(lab):
    """({(vip, backend): backends row}, {(vip, backend): health row})."""
    br = {(b["vip"], b["name"]): b for b in lab.ctl(1, "backends")["backends"]}
    hr = {(h["vip"], h["backend"]): h for h in lab.ctl(1, "health")["backends"]}
    return br, hr


def serving(br, vip, be):
    b = br.get((vip, be))
    return bool(b) and b["state"] == "active" and b["slots"] > 0


def out_of_table(br, vip, be):
    b = br.get((vip, be))
    return bool(b) and b["state"] == "down" and b["slots"] == 0


def checked_up(hr, vip, be):
    h = hr.get((vip, be))
    return bool(h) and h.get("checked") is True and h.get("up") is True


def checked_down(hr, vip, be):
    h = hr.get((vip, be))
    return bool(h) and h.get("checked") is True and h.get("up") is False


def via_ok(hr, vip, be):
    h = hr.get((vip, be)) or {}
    return h.get("via") == VIA[vip]


def dump(br, hr, vips, backends):
    lines = []
    for vip in vips:
        for be in backends:
            b = br.get((vip, be)) or {}
            h = hr.get((vip, be)) or {}
            lines.append("  %s %s: state %s slots %s | checked %s up %s via %s "
                         "successes %s failures %s checks %s last %r" % (
                             vip, be, b.get("state"), b.get("slots"),
                             h.get("checked"), h.get("up"), h.get("via"),
                             h.get("successes"), h.get("failures"),
                             h.get("checks"), h.get("last_result")))
    return "\n".join(lines)


def wait_state(lab, pred, what, timeout_s, vips, backends):
    """Poll pred(br, hr) on fresh snapshots until true (pred may raise
    Failure at once for an invariant broken); the seconds it took. A
    timeout's Failure lists the rows."""
    last = {}
    t0 = time.monotonic()

    def poll():
        last["rows"] = snapshot(lab)
        return pred(*last["rows"])
    try:
        lablib.wait_until(poll, what, timeout_s, 0.05)
    except lablib.Failure as e:
        rows = last.get("rows") or ({}, {})
        raise lablib.Failure("%s; now:\n%s" % (
            e, dump(rows[0], rows[1], vips, backends)))
    return time.monotonic() - t0


def burst(lab, family, weights, what):
    """FLOWS HTTP connections to the VIP: none fails, and the backends
    that answer are those of weights (no other), in their shares."""
    r = lab.burst("http", family, FLOWS)
    check(r["failed"] == 0, "%s: IPv%d: %d of %d connections failed: %s"
          % (what, family, r["failed"], FLOWS, r["errors"]))
    stray = sorted(set(r["backends"]) - set(weights))
    check(not stray, "%s: IPv%d: connections reached %s, which must get "
          "none: %s" % (what, family, stray, r["backends"]))
    problems = binomial.check_counts(r["backends"], weights, checks=BURSTS)
    check(not problems, "%s: IPv%d connections: %s" % (
        what, family, "; ".join(problems)))
    log("%s: IPv%d, %d connections: %s" % (
        what, family, FLOWS, binomial.describe(r["backends"], weights)))
    return r


# --- the test --------------------------------------------------------------
def start(lab):
    lab.write_config(config(lab))
    try:
        lab.start_lb()
    except lablib.Failure:
        if "unknown key 'via'" in lab.lb_log():
            raise lablib.Skip("maglevd's config has no health.via yet "
                              "(health checks through the data path not "
                              "wired)")
        raise
    lab.require_control_socket()
    if lab.bgp:
        took = lab.wait_next_hops({1}, "LB 1 serving")
        log("router: LB 1 announces the VIPs (%.2f s)" % took)
    lab.require_steering()
    lab.require_health()
    # the generation of this config is live: all six VIPs in it
    vips = sorted(lablib.VIP_NAMES.values()) + sorted(DIRECT_VIPS)
    lablib.wait_until(
        lambda: {v["name"] for v in lab.stats()["vips"]} >= set(vips),
        "the stats file to list %s" % vips, 10)
    br, _ = snapshot(lab)
    check({v for v, _ in br} >= set(vips), "the backends command lists "
          "VIPs %s, not all of %s" % (sorted({v for v, _ in br}), vips))
    log("generation %d with VIPs %s (web4/web6 via data_path)"
        % (lab.stats()["generation"], ", ".join(vips)))
    return vips


def require_via(lab, backends):
    """The health rows carry 'via' (else: not wired, skip)."""
    def checked_rows():
        rows = lab.ctl(1, "health")["backends"]
        got = [h for h in rows if h["vip"] in VIA and h.get("checked")]
        return got if len(got) == len(VIA) * len(backends) else None
    rows = lablib.wait_until(checked_rows, "every check of %s to exist"
                             % sorted(VIA), 10)
    if not any("via" in h for h in rows):
        raise lablib.Skip("maglevd's health reply has no 'via' field "
                          "(health checks through the data path not "
                          "wired)")


def ready(br, hr, vips, backends):
    """Every backend active with slots in every VIP; every check of the
    web and direct VIPs up, via as configured, its last `rise` or more
    checks successful (the data-path probe and its reply work)."""
    for vip in vips:
        for be in backends:
            if not serving(br, vip, be):
                return False
            if vip not in VIA:
                continue
            h = hr.get((vip, be)) or {}
            if not (checked_up(hr, vip, be) and via_ok(hr, vip, be) and
                    h.get("last_ok") is True and
                    h.get("successes", 0) >= HEALTH_RISE):
                return False
    return True


def check_vip_address(hr, backends):
    """'vip_address' (docs/control-protocol.md), where given, is the
    data-path rows' VIP."""
    for vip, family in DATA_PATH_VIPS.items():
        for be in backends:
            h = hr[(vip, be)]
            if "vip_address" in h:
                check(ipaddress.ip_address(h["vip_address"]) ==
                      ipaddress.ip_address(lablib.vip(family)),
                      "%s %s: vip_address %s, not the VIP %s" % (
                          vip, be, h["vip_address"], lablib.vip(family)))


def check_path_counters(lab):
    """The data-path checks' packets: carried and returned grow while the
    checks pass (the health reply and /metrics say the same), none
    dropped."""
    first = lab.ctl(1, "health")["data_path"]
    check(isinstance(first, dict), "health: no data_path counters: %r"
          % (first,))
    lablib.wait_until(lambda: lab.ctl(1, "health")["data_path"]["returned"]
                      > first["returned"], "data-path check replies", 10)
    now = lab.ctl(1, "health")["data_path"]
    check(now["carried"] > first["carried"] and now["dropped"] == 0,
          "data_path counters %r then %r" % (first, now))
    log("data-path check packets: %r" % now)


def check_vips_view(lab):
    """vips says where each VIP's checks go, in JSON and in maglevctl's
    FEATURES column, before anything fails."""
    got = {v["name"]: v["health_via"] for v in lab.ctl(1, "vips")["vips"]}
    for vip, via in VIA.items():
        check(got.get(vip) == via, "vips: %s's checks go %r, the config "
              "says %r" % (vip, got.get(vip), via))
    p = subprocess.run([os.path.join(lab.build, "tools", "bin", "maglevctl",
                                     "maglevctl"), "-s", lab.socket_path(1),
                        "vips"], capture_output=True, text=True, timeout=30)
    rows = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines()
            if ln.strip()}
    col = rows.get("VIP", []).index("FEATURES") if "FEATURES" in \
        rows.get("VIP", []) else None
    check(p.returncode == 0 and col is not None, "maglevctl vips: %s %s"
          % (p.stdout, p.stderr))
    for vip, via in VIA.items():
        shown = "check=data-path" in rows[vip][col].split(",")
        check(shown == (via == "data_path"), "maglevctl vips: %s's "
              "FEATURES %r, its checks go %s" % (vip, rows[vip][col], via))


def test(lab, args):
    victim = "be%d" % VICTIM
    backends = ["be%d" % i for i in range(1, lab.n_backends + 1)]
    others = [b for b in backends if b != victim]
    vips = start(lab)
    require_via(lab, backends)

    took = wait_state(lab, lambda br, hr: ready(br, hr, vips, backends),
                      "every backend active and every check up (the "
                      "data-path ones too, %d successes)" % HEALTH_RISE,
                      READY_S, vips, backends)
    br, hr = snapshot(lab)
    check_vip_address(hr, backends)
    check_vips_view(lab)
    check_path_counters(lab)
    log("every backend up in every VIP after %.2fs; data-path checks: %s"
        % (took, ", ".join("%s %s %r" % (v, b, hr[(v, b)].get("last_result"))
                           for v in sorted(DATA_PATH_VIPS) for b in backends)))
    all_w = {b: 100 for b in backends}
    others_w = {b: 100 for b in others}
    for family in (4, 6):
        burst(lab, family, all_w, "before")

    removed = False
    try:
        t0 = time.monotonic()
        removed = True      # even half-way: finally puts them back
        set_vip_addrs("del")
        down_at = {}

        def invariants(br, hr):
            """Checked on every poll: the direct VIPs keep the victim, the
            data-path VIPs keep the other backends."""
            for vip in DIRECT_VIPS:
                check(serving(br, vip, victim) and checked_up(hr, vip, victim)
                      and via_ok(hr, vip, victim),
                      "%s left direct-checked VIP %s:\n%s" % (
                          victim, vip, dump(br, hr, [vip], [victim])))
            for vip in DATA_PATH_VIPS:
                for be in others:
                    check(serving(br, vip, be) and checked_up(hr, vip, be)
                          and via_ok(hr, vip, be),
                          "%s (which has the VIP) left %s:\n%s" % (
                              be, vip, dump(br, hr, [vip], [be])))

        def victim_out(br, hr):
            invariants(br, hr)
            for vip in DATA_PATH_VIPS:
                if (vip not in down_at and out_of_table(br, vip, victim) and
                        checked_down(hr, vip, victim) and
                        via_ok(hr, vip, victim)):
                    down_at[vip] = time.monotonic() - t0
            return len(down_at) == len(DATA_PATH_VIPS)

        wait_state(lab, victim_out, "%s to leave %s" % (
            victim, sorted(DATA_PATH_VIPS)), 30, sorted(VIA), backends)
        took = max(down_at.values())
        br, hr = snapshot(lab)
        log("%s left the data-path VIPs after its VIP addresses went: %s "
            "(bound %.2fs); their checks: %s" % (
                victim, ", ".join("%s %.2fs" % kv for kv in
                                  sorted(down_at.items())), DOWN_BOUND_S,
                ", ".join("%s %r" % (v, hr[(v, victim)].get("last_result"))
                          for v in sorted(DATA_PATH_VIPS))))
        check(took <= DOWN_BOUND_S, "%s left the data-path VIPs after "
              "%.2fs, more than fall x interval allows (%.2fs)"
              % (victim, took, DOWN_BOUND_S))

        # the direct checks keep the victim for fall x interval more
        checks0 = {v: hr[(v, victim)]["checks"] for v in DIRECT_VIPS}
        t1 = time.monotonic()

        def stayed(br, hr):
            invariants(br, hr)
            for vip in DATA_PATH_VIPS:
                check(out_of_table(br, vip, victim) and
                      checked_down(hr, vip, victim),
                      "%s came back into %s without its VIP:\n%s" % (
                          victim, vip, dump(br, hr, [vip], [victim])))
            return time.monotonic() - t1 >= STAY_UP_S
        wait_state(lab, stayed, "%.2fs to pass" % STAY_UP_S, STAY_UP_S + 10,
                   sorted(VIA), backends)
        br, hr = snapshot(lab)
        more = {v: hr[(v, victim)]["checks"] - checks0[v]
                for v in DIRECT_VIPS}
        log("%s stayed in %s for %.2fs after leaving the data-path VIPs, "
            "%s more direct checks, last %s" % (
                victim, sorted(DIRECT_VIPS), STAY_UP_S, more,
                ", ".join("%r" % hr[(v, victim)].get("last_result")
                          for v in sorted(DIRECT_VIPS))))
        check(all(n >= HEALTH_FALL for n in more.values()),
              "direct checks of %s completed while it stayed up: %s, "
              "fewer than fall (%d)" % (victim, more, HEALTH_FALL))

        for family in (4, 6):
            burst(lab, family, others_w, "%s without the VIP" % victim)

        t0 = time.monotonic()
        set_vip_addrs("add")
        removed = False

        def victim_back(br, hr):
            for vip in DIRECT_VIPS:
                check(serving(br, vip, victim), "%s left %s:\n%s" % (
                    victim, vip, dump(br, hr, [vip], [victim])))
            return all(serving(br, vip, victim) and
                       checked_up(hr, vip, victim) and
                       via_ok(hr, vip, victim) for vip in DATA_PATH_VIPS)
        wait_state(lab, victim_back, "%s to rejoin %s" % (
            victim, sorted(DATA_PATH_VIPS)), 30, sorted(VIA), backends)
        took = time.monotonic() - t0
        log("%s rejoined the data-path VIPs %.2fs after its VIP addresses "
            "came back (bound %.2fs)" % (victim, took, UP_BOUND_S))
        check(took <= UP_BOUND_S, "%s rejoined after %.2fs, more than rise "
              "x interval allows (%.2fs)" % (victim, took, UP_BOUND_S))
        for family in (4, 6):
            r = burst(lab, family, all_w, "%s back" % victim)
            check(r["backends"].get(victim, 0) > 0, "IPv%d: no connection "
                  "reached %s after it rejoined: %s" % (
                      family, victim, r["backends"]))
    finally:
        if removed:
            try:
                set_vip_addrs("add", tolerate=True)
            except lablib.Failure as e:   # keep the test's own failure
                log("could not put the VIP addresses back: %s" % e)


def add_args(ap):
    ap.add_argument("--lab", choices=["routed", "plain"], default="routed",
                    help="routed: tools/lab/lab up --bgp (the default); "
                    "plain: without the router")


if __name__ == "__main__":
    pre = argparse.ArgumentParser(add_help=False)
    add_args(pre)
    lablib.run(test, bgp=pre.parse_known_args(sys.argv[1:])[0].lab ==
               "routed", add_args=add_args)
