#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bonded ports (docs/deployment.md, "Bonded ports") on real connections:
LB 1's port is a bond of two af_packet members, lb0 and a second veth
lb1, both into the lab's bridge. Active-backup: fresh requests run
through the VIP while the primary's link goes down (its bridge side is
set down: lb0 loses carrier) and comes back; none fails, the failover
time is printed, and `stats --ports`, the metrics and the log show which
member is up and which carries the traffic at each step. Then 802.3ad,
which gets no LACP partner here (no bonding module in this kernel):
its config is taken and maglevd starts with both members listed, none
in an aggregate.

The lab's health checks leave from LB 1's kernel side, which is lb0
alone: they would fail with its link, so the VIPs here have none (a
bonded PCI port's kernel side is its host TAP, which stays up).

usage: test_bond.py [--forwarding ipip|gue|l2dsr]"""
import re
import subprocess
import time

import lablib
from lablib import check, log

MONITOR_MS = 50
MEMBERS = ("net_af_packet0", "net_af_packet1")


def ns(lab, what):
    return "%s-%s" % (lablib.PREFIX, what)


def add_second_link(lab):
    """lb1 in LB 1's namespace, its peer p-lb1b in the bridge."""
    subprocess.run(["ip", "link", "add", "lb1", "netns", ns(lab, "lb1"),
                    "type", "veth", "peer", "name", "p-lb1b", "netns",
                    ns(lab, "br")], check=True, timeout=30)
    subprocess.run(["ip", "-n", ns(lab, "br"), "link", "set", "p-lb1b",
                    "master", "br0", "up"], check=True, timeout=30)
    subprocess.run(["ip", "-n", ns(lab, "lb1"), "link", "set", "lb1", "up"],
                   check=True, timeout=30)


def set_link(lab, up):
    """The primary's bridge side up or down: lb0's carrier follows."""
    subprocess.run(["ip", "-n", ns(lab, "br"), "link", "set", "p-lb1",
                    "up" if up else "down"], check=True, timeout=30)
    log("p-lb1 (lb0's peer) %s" % ("up" if up else "down"))


def bond_config(lab, mode):
    text = lab.config(vdev="af_packet", health="none")
    text = text.replace('"--vdev=net_af_packet0,iface=lb0,qpairs=1"]',
                        '"--vdev=net_af_packet0,iface=lb0,qpairs=1", '
                        '"--vdev=net_af_packet1,iface=lb1,qpairs=1"]')
    text, n = re.subn(r"      device: net_af_packet0\n",
                      "      device: net_bonding0\n"
                      "      bond: {members: [%s], mode: %s, link_monitor: %dms}\n"
                      % (", ".join(MEMBERS), mode, MONITOR_MS), text)
    check(n == 1 and "net_af_packet1" in text, "lab config has another shape")
    return text


def members(lab):
    """{device: (link, active)} from stats --ports, and the port's link."""
    ports = lab.ctl(1, "stats", "--ports")["ports"]
    check(len(ports) == 1 and ports[0]["device"] == "net_bonding0",
          "stats --ports: %r" % ports)
    got = {m["device"]: (m["link"], m["active"])
           for m in ports[0].get("members", [])}
    return got, ports[0].get("link")


def metrics(lab):
    p = subprocess.run(["ip", "netns", "exec", ns(lab, "lb1"), "curl", "-s",
                        "-m", "3", "http://127.0.0.1:9478/metrics"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "metrics: %s" % p.stderr)
    vals = {}
    for ln in p.stdout.splitlines():
        m = re.match(r'(maglevd_port_member_\w+)\{port="ext",member="([^"]+)"'
                     r'(?:,direction="(\w+)")?\} (\d+)', ln)
        if m:
            vals[(m.group(1), m.group(2), m.group(3))] = int(m.group(4))
    return vals


def expect_state(lab, want, what):
    """Poll until the members are as want {device: (link, active)}; the
    seconds it took. Metrics must agree."""
    t0 = time.monotonic()
    lablib.wait_until(lambda: members(lab)[0] == want, "%s: members %r"
                      % (what, want), 5, 0.02)
    took = time.monotonic() - t0
    vals = metrics(lab)
    for dev, (link, active) in want.items():
        check(vals.get(("maglevd_port_member_link_up", dev, None)) ==
              (link == "up") and
              vals.get(("maglevd_port_member_active", dev, None)) == active,
              "%s: metrics for %s: %r" % (what, dev, {
                  k: v for k, v in vals.items() if k[1] == dev}))
    log("%s: %s (%.2f s)" % (what, ", ".join(
        "%s %s%s" % (d, l, " active" if a else "")
        for d, (l, a) in sorted(want.items())), took))
    return took


def active_backup(lab):
    lab.write_config(bond_config(lab, "active-backup"))
    lab.start_lb()
    lab.require_control_socket()
    lab.wait_serving()
    expect_state(lab, {MEMBERS[0]: ("up", True), MEMBERS[1]: ("up", False)},
                 "start")
    for fam in (4, 6):
        r = lab.burst("http", fam, 20)
        check(r["ok"] == 20, "IPv%d through the bond: %r" % (fam, r))

    # a stream across the failover and the return to the primary
    stream = lab.stream(4, 14, rate=25)
    time.sleep(3)
    before = metrics(lab)
    set_link(lab, False)
    took = expect_state(lab, {MEMBERS[0]: ("down", False),
                              MEMBERS[1]: ("up", True)}, "primary's link down")
    log("failover time: %.2f s from the link going down to the second "
        "member carrying the traffic (link_monitor %d ms)" % (took, MONITOR_MS))
    time.sleep(4)
    mid = metrics(lab)
    set_link(lab, True)
    expect_state(lab, {MEMBERS[0]: ("up", True), MEMBERS[1]: ("up", False)},
                 "primary's link back")
    res = stream.result()
    log("stream: %d ok, %d failed %r, %d slow; failover window %.2f s, "
        "slowest request %.2f s" % (res["ok"], res["failed"], res["errors"],
                                    res["slow"], res["window_s"],
                                    res["max_latency_s"]))
    check(res["failed"] == 0, "%d requests failed across the failovers: %r"
          % (res["failed"], res["errors"]))
    check(res["ok"] >= 300, "only %d requests ran" % res["ok"])
    # what was at risk: the second member carried the traffic meanwhile
    moved = (mid[("maglevd_port_member_packets_total", MEMBERS[1], "tx")] -
             before[("maglevd_port_member_packets_total", MEMBERS[1], "tx")])
    log("second member sent %d frames while the primary was down" % moved)
    check(moved >= 50, "the second member sent %d frames during the "
          "failover" % moved)
    logtext = lab.lb_log()
    for pat in (r"bond member net_af_packet0: link down",
                r"traffic on net_af_packet1",
                r"bond member net_af_packet0: link up"):
        check(re.search(pat, logtext), "the log lacks %r" % pat)
    lab.stop_lb()


def lacp(lab):
    """802.3ad: taken and started; no partner, so no member aggregates."""
    lab.write_config(bond_config(lab, "802.3ad"))
    lab.start_lb()
    lab.require_control_socket()
    got, link = members(lab)
    check(set(got) == set(MEMBERS), "802.3ad: members %r" % got)
    time.sleep(1)
    got, link = members(lab)
    check(not any(a for _, a in got.values()),
          "802.3ad without a partner: a member aggregates: %r" % got)
    check(re.search(r"bond net_bonding0 \(802\.3ad\) over 2 members",
                    lab.lb_log()), "802.3ad: the start-up log line is missing")
    log("802.3ad: started, members %r, port link %s (no LACP partner here)"
        % (got, link))
    lab.stop_lb()


def test(lab):
    add_second_link(lab)
    active_backup(lab)
    lacp(lab)


if __name__ == "__main__":
    lablib.run(test, backends=2)
