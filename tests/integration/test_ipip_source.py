#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""ipip outer sources from a prefix (docs/forwarding.md, "Outer
sources"), on real connections: the lab's VIPs with ipip_source and
ipip_source6, the backends' decapsulator accepting those prefixes and
nothing else (not the load balancer's own addresses), health checks
through the data path. Every backend passes its checks (the checks take
the same sources), 64 IPv4 and 64 IPv6 HTTP connections all succeed, and
the frames the bridge carries to the backends show, for each flow, one
outer source: the prefix's address with the low bits of the flow hash,
worked out here with the test's own implementation of docs/flow-hash.md.

usage: test_ipip_source.py [--vdev af_xdp|af_packet]"""
import ipaddress
import json
import os
import subprocess
import sys

import lablib
from lablib import check, log

PREFIX4 = ipaddress.ip_network("10.99.77.16/28")      # topology.sh
PREFIX6 = ipaddress.ip_network("fd00:99:77::100/120")
FLOWS = 64
LB_ADDRS = {"10.99.0.1", "fd00:99::1"}                # LB 1's port

# --- docs/flow-hash.md, written from its text ------------------------------
SEED = 0x4D474C56
POLY = 0x82F63B78           # CRC32C, reflected


def crc32c(reg, data):
    for byte in data:
        reg ^= byte
        for _ in range(8):
            reg = (reg >> 1) ^ (POLY if reg & 1 else 0)
    return reg


def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


def flow_hash(fam, src, sport, dst, dport, proto):
    """The 40-byte key: source, destination (16 bytes each, IPv4 in the
    first 4), ports in network order, protocol, family, two zero bytes."""
    def addr16(a):
        return ipaddress.ip_address(a).packed.ljust(16, b"\0")
    key = (addr16(src) + addr16(dst) + sport.to_bytes(2, "big") +
           dport.to_bytes(2, "big") + bytes([proto, fam, 0, 0]))
    return fmix32(crc32c(SEED, key))


def want_source(prefix, h):
    host_bits = prefix.max_prefixlen - prefix.prefixlen
    return prefix.network_address + (h & ((1 << host_bits) - 1))


# --- the lab -----------------------------------------------------------------
def decap_prefixes_only(lab):
    """Re-attach each backend's decapsulator with --from the two prefixes
    only: a tunnel from the LB's own address is no longer undone."""
    decap = os.path.join(lab.build, "tools", "bin", "maglev-decap",
                         "maglev-decap")
    for i in range(1, lab.n_backends + 1):
        lab.lab("exec", "be%d" % i, decap, "attach", "eth0",
                "--address", "10.99.0.%d" % (10 + i),
                "--address", "fd00:99::%d" % (10 + i),
                "--gue-port", 6080, "--from", "%s,%s" % (PREFIX4, PREFIX6))
    log("backends decapsulate from %s and %s only" % (PREFIX4, PREFIX6))


def start_capture(lab):
    ports = ",".join("p-be%d" % i for i in range(1, lab.n_backends + 1))
    p = subprocess.Popen(
        [lablib.LAB, "exec", "br", sys.executable,
         os.path.join(lablib.HERE, "capture_ipip.py"), ports, "120"],
        env=lab.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline().strip()
    check(line == "ready", "capture did not start: %r" % line)
    return p


def stop_capture(p):
    out, err = p.communicate("", timeout=60)   # EOF on stdin: stop
    check(p.returncode == 0, "capture failed: %s" % err)
    return json.loads(out)


def all_checked_up(lab):
    rows = [h for h in lab.ctl(1, "health")["backends"]
            if h["vip"] in ("web4", "web6")]
    # two successes in a row since start: checks that passed, not a
    # backend assumed up before its first result
    return len(rows) == 2 * lab.n_backends and all(
        h.get("checked") is True and h.get("up") is True and
        h.get("via") == "data_path" and h.get("last_ok") is True and
        h.get("successes", 0) >= 2 for h in rows)


def check_views(lab):
    vips = {v["name"]: v for v in lab.ctl(1, "vips")["vips"]}
    for name in ("web4", "web6", "echo4", "echo6"):
        check(vips[name].get("ipip_source") == str(PREFIX4) and
              vips[name].get("ipip_source6") == str(PREFIX6),
              "vips: %s shows ipip_source %r / %r" % (
                  name, vips[name].get("ipip_source"),
                  vips[name].get("ipip_source6")))
    p = subprocess.run([os.path.join(lab.build, "tools", "bin", "maglevctl",
                                     "maglevctl"), "-s", lab.socket_path(1),
                        "vips"], capture_output=True, text=True, timeout=30)
    rows = {ln.split()[0]: ln.split() for ln in p.stdout.splitlines()
            if ln.strip()}
    col = rows["VIP"].index("FEATURES")
    feats = rows["web4"][col].split(",")
    check("src=%s" % PREFIX4 in feats and "src6=%s" % PREFIX6 in feats,
          "maglevctl vips: web4's FEATURES %r" % rows["web4"][col])


def test(lab):
    check(lab.forwarding == "ipip", "this test is for ipip")
    lab.write_config(lab.config(ipip_source="on", health_via="data_path"))
    decap_prefixes_only(lab)
    cap = start_capture(lab)
    try:
        lab.start_lb()
        lab.require_steering()
        lab.require_health()
        lablib.wait_until(lambda: all_checked_up(lab), "every web4/web6 "
                          "check through the data path up", 20)
        log("every data-path check is up with the decapsulator taking "
            "the prefixes only")
        check_views(lab)
        results = {fam: lab.burst("http", fam, FLOWS) for fam in (4, 6)}
    finally:
        frames = stop_capture(cap)
    for fam, r in results.items():
        log("IPv%d: %d of %d connections ok, by backend %s" % (
            fam, r["ok"], FLOWS, r["backends"]))
        check(r["ok"] == FLOWS and r["failed"] == 0,
              "IPv%d: %d connections failed: %s" % (fam, r["failed"],
                                                    r["errors"]))

    # each flow's outer sources, from the frames to the backends
    flows = {}
    for ofam, osrc, ifam, src, sport, dst, dport in frames:
        proto = 17 if dport == lablib.UDP_PORT else 6
        flows.setdefault((ifam, src, sport, dst, dport, proto), set()).add(
            (ofam, osrc))
    clients = {k: v for k, v in flows.items() if k[1] not in LB_ADDRS}
    checks = {k: v for k, v in flows.items() if k[1] in LB_ADDRS}
    per_family = {4: 0, 6: 0}
    used = {4: set(), 6: set()}
    for (ifam, src, sport, dst, dport, proto), outer in flows.items():
        check(len(outer) == 1, "flow %s:%d -> %s:%d left with %d outer "
              "sources: %s" % (src, sport, dst, dport, len(outer), outer))
        ofam, osrc = next(iter(outer))
        prefix = PREFIX4 if ofam == 4 else PREFIX6
        want = want_source(prefix, flow_hash(ifam, src, sport, dst, dport,
                                             proto))
        check(ipaddress.ip_address(osrc) == want,
              "flow %s:%d -> %s:%d: outer source %s, want %s (%s and the "
              "flow hash)" % (src, sport, dst, dport, osrc, want, prefix))
        if src not in LB_ADDRS and dport == lablib.HTTP_PORT:
            per_family[ifam] += 1
            used[ofam].add(osrc)
    log("frames to the backends: %d, flows %d (%d from clients, %d "
        "data-path checks); outer sources used: %d of %s, %d of %s" % (
            len(frames), len(flows), len(clients), len(checks),
            len(used[4]), PREFIX4, len(used[6]), PREFIX6))
    # what was at risk: every client connection seen, and checks too
    for fam in (4, 6):
        check(per_family[fam] >= FLOWS, "only %d IPv%d client flows seen "
              "on the bridge, want %d" % (per_family[fam], fam, FLOWS))
    check(len(checks) > 0, "no data-path check frame seen")
    # 64 flows over 16 addresses: all but ~0.6 used on average; far more
    # than one says the hash spreads them
    check(len(used[4]) >= 10 and len(used[6]) >= 10,
          "outer sources barely spread: %s / %s" % (sorted(used[4]),
                                                    sorted(used[6])))


if __name__ == "__main__":
    lablib.run(test)
