# SPDX-License-Identifier: BSD-3-Clause
"""maglevd and its host: the systemd unit (systemd-analyze verify) and
the sd_notify protocol; next_hop: auto and AF_XDP steering on veth pairs
in network namespaces the case creates (and removes), with traffic only
between them."""
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import threading

from daemon_util import (CONTROL, DEADLINE_S, Daemon, Skip, accounted, check,
                         config_text, ctl_ok, ctl_wait, port, run, slots_of,
                         vip, wait_ctl, wait_until)


EAL_NULL = ["--in-memory", "--no-pci", "--vdev=net_null0"]


# ---- systemd ----

def case_systemd(maglevd, src, work):
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        raise Skip("systemd-analyze not installed (Debian package systemd)")
    unit = open(os.environ["MAGLEVD_UNIT"]).read()
    m = re.search(r"^ExecStart=(\S+)", unit, re.M)
    check(m, "no ExecStart in the unit")
    # the unit as this build installs it (conf/maglevd.service.in with the
    # paths filled in). verify insists that the binary exists: point the
    # unit at this build, everything else as shipped
    copy = os.path.join(work, "maglevd.service")
    with open(copy, "w") as f:
        f.write(unit.replace(m.group(1), maglevd))
    # --man=no: the man pages Documentation= names are not installed here
    # (tools/test-package verifies the installed units with them)
    r = run([analyze, "verify", "--man=no", copy])
    check(r.returncode == 0 and not r.stderr.strip(),
          f"systemd-analyze verify: {r.returncode} {r.stderr}")
    for key in ("Type=notify", "ExecReload=/bin/kill -HUP $MAINPID",
                "WatchdogSec="):
        check(key in unit, f"the unit lacks {key}")
    # and verify does catch a broken unit here (the check can fail)
    with open(copy, "w") as f:
        f.write(unit.replace(m.group(1), maglevd)
                .replace("Type=notify", "Type=notifyy"))
    r = run([analyze, "verify", "--man=no", copy])
    check(r.returncode != 0 or "notifyy" in r.stderr,
          "verify accepted Type=notifyy")

    # the notify protocol, with this test as the service manager
    path = os.path.join(work, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    messages, stop = [], threading.Event()

    def collect():
        while not stop.is_set():
            try:
                messages.append(sock.recv(4096).decode())
            except socket.timeout:
                continue
    t = threading.Thread(target=collect, daemon=True)
    t.start()
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            "    - {name: ext, device: net_null0, address: 10.99.0.1, "
            "next_hop: \"02:00:00:00:00:01\"}\n",
            ["--in-memory", "--no-pci", "--vdev=net_null0"], vip()))
    env = dict(os.environ, NOTIFY_SOCKET=path, WATCHDOG_USEC="200000")
    d = Daemon(maglevd, work, cfg, env=env)

    def seen(prefix, n=1):
        return lambda: sum(1 for x in messages if x.startswith(prefix)) >= n
    try:
        wait_until(seen("READY=1"), "READY=1", d.proc)
        ready = [x for x in messages if x.startswith("READY=1")][0]
        check("STATUS=serving generation 1" in ready, f"READY: {ready!r}")
        # the socket is up by then
        ctl_ok("status")
        wait_until(seen("WATCHDOG=1", 4), "watchdog pings every 100 ms",
                   d.proc)
        d.signal(signal.SIGHUP)
        wait_until(seen("READY=1", 2), "READY=1 after the reload", d.proc)
        rel = [x for x in messages if x.startswith("RELOADING=1")]
        check(rel and re.search(r"^MONOTONIC_USEC=\d+$", rel[0], re.M),
              f"RELOADING without MONOTONIC_USEC: {rel}")
        order = [x.split("\n")[0] for x in messages
                 if not x.startswith("WATCHDOG")]
        check(order[:3] == ["READY=1", "RELOADING=1", "READY=1"],
              f"notification order: {order}")
        rc = d.stop()
        wait_until(seen("STOPPING=1"), "STOPPING=1")
    finally:
        stop.set()
        d.kill()
        t.join(DEADLINE_S)
        sock.close()
    check(rc == 0, f"exit status {rc}")


# ---- network namespaces ----

class Netns:
    """Two namespaces joined by a veth pair: "lb" (mlv0, 10.77.0.1/24,
    where maglevd runs) and "peer" (mlv1, 10.77.0.2/24: the next hop
    toward the backends in 10.78.0.0/24, and the client of the VIPs)."""

    def __init__(self, tag):
        self.lb, self.peer = f"{tag}-lb", f"{tag}-peer"
        self.ok = False

    def sh(self, *cmds):
        for c in cmds:
            r = subprocess.run(c, shell=True, capture_output=True, text=True,
                               timeout=DEADLINE_S)
            check(r.returncode == 0, f"{c}: {r.stderr}")

    def __enter__(self):
        if os.geteuid() != 0:
            raise Skip("needs root for network namespaces")
        self.sh(f"ip netns add {self.lb}", f"ip netns add {self.peer}")
        self.ok = True
        self.sh(f"ip link add mlv0 netns {self.lb} type veth peer name mlv1 "
                f"netns {self.peer}",
                f"ip -n {self.lb} link set lo up",
                f"ip -n {self.peer} link set lo up",
                f"ip -n {self.lb} addr add 10.77.0.1/24 dev mlv0",
                f"ip -n {self.peer} addr add 10.77.0.2/24 dev mlv1",
                f"ip -n {self.lb} link set mlv0 up",
                f"ip -n {self.peer} link set mlv1 up",
                f"ip -n {self.lb} route add 10.78.0.0/24 via 10.77.0.2",
                f"ip -n {self.peer} route add 192.0.2.0/24 via 10.77.0.1")
        return self

    def __exit__(self, *exc):
        if self.ok:
            subprocess.run(f"ip netns del {self.lb}; ip netns del {self.peer}",
                           shell=True, capture_output=True, timeout=DEADLINE_S)

    def mac(self, ns, dev):
        r = run(["ip", "-n", ns, "-o", "link", "show", dev])
        return re.search(r"link/ether (\S+)", r.stdout).group(1)

    def link(self, ns, dev):
        return run(["ip", "-n", ns, "link", "show", dev]).stdout


# Runs in the peer namespace: send UDP datagrams to a VIP and capture
# what maglevd sends back out of the veth; print the destination MAC of
# the first IPIP frame (IPv4 in IPv4, or IPv6 in IPv6 for an IPv6 VIP)
# toward the backend. Only the test's namespaces see any of it.
PEER_PROBE = r"""
import socket, sys, time
vip, vport, backend, deadline = sys.argv[1], int(sys.argv[2]), sys.argv[3], time.time() + float(sys.argv[4])
v6 = ":" in vip
cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
cap.bind(("mlv1", 0))
cap.settimeout(0.1)
tx = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_DGRAM)

def outer_dst(fr):
    if v6 and fr[12:14] == b"\x86\xdd" and fr[20] == 41:
        return socket.inet_ntop(socket.AF_INET6, fr[38:54])
    if not v6 and fr[12:14] == b"\x08\x00" and fr[23] == 4:
        return socket.inet_ntoa(fr[30:34])
    return None

while time.time() < deadline:
    tx.sendto(b"probe", (vip, vport))
    try:
        while True:
            fr = cap.recv(2048)
            if outer_dst(fr) == backend:
                print(":".join("%02x" % b for b in fr[0:6]))
                sys.exit(0)
    except socket.timeout:
        pass
sys.exit(1)
"""


def probe_from_peer(net, vip_addr, vport, backend, seconds=10):
    r = subprocess.run(["ip", "netns", "exec", net.peer, "python3", "-c",
                        PEER_PROBE, vip_addr, str(vport), backend,
                        str(seconds)], capture_output=True, text=True,
                       timeout=DEADLINE_S)
    check(r.returncode == 0,
          f"no encapsulated frame toward {backend} seen: {r.stderr}")
    return r.stdout.strip()


def udp_vip(name="echo", addr="192.0.2.10", backend="10.78.0.11"):
    return (f"  - name: {name}\n    address: {addr}\n    port: 5300\n"
            "    protocol: udp\n    table_size: 251\n"
            "    health: {type: none}\n"
            f"    backends:\n      - {{name: b1, address: {backend}}}\n")


def lb_config(work, device, eal, vips, next_hop="auto"):
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            f"    - {{name: ext, device: {device}, address: 10.77.0.1, "
            f"next_hop: {next_hop}}}\n",
            ["--in-memory", "--no-pci", eal], vips))
    return cfg


def NsDaemon(maglevd, work, cfg, ns, name="maglevd"):
    """maglevd inside the lb namespace (with the sanitizer suppressions
    for the AF_XDP driver's own leaks, in ASan builds)."""
    supp = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "lsan.supp")
    lsan = os.environ.get("LSAN_OPTIONS")
    env = dict(os.environ, LSAN_OPTIONS=f"suppressions={supp}" +
               (f":{lsan}" if lsan else ""))
    return Daemon(maglevd, work, cfg, name=name, env=env,
                  prefix=["ip", "netns", "exec", ns])


# An l2dsr VIP whose backends have no 'mac': "peer" answers ARP for
# 10.77.0.2 on the link; nothing has 10.77.0.99, so it stays unresolved.
L2DSR_NO_MAC = ("  - name: dsr\n    address: 192.0.2.20\n    port: 5300\n"
                "    protocol: udp\n    table_size: 251\n"
                "    forwarding: l2dsr\n    health: {type: none}\n"
                "    backends:\n      - {name: onlink, address: 10.77.0.2}\n"
                "      - {name: absent, address: 10.77.0.99}\n")


def case_next_hop_auto(maglevd, src, work):
    with Netns(f"mlvnh{os.getpid()}") as net:
        cfg = lb_config(work, "net_af_packet0",
                        "--vdev=net_af_packet0,iface=mlv0",
                        udp_vip() + L2DSR_NO_MAC)
        d = NsDaemon(maglevd, work, cfg, net.lb)
        try:
            wait_ctl(d)
            peer_mac = net.mac(net.peer, "mlv1")
            st = ctl_ok("status")
            check(st["ports"][0]["next_hop"] == peer_mac,
                  f"next hop {st['ports'][0]['next_hop']}, the gateway's MAC "
                  f"is {peer_mac}")
            check(probe_from_peer(net, "192.0.2.10", 5300, "10.78.0.11") ==
                  peer_mac, "encapsulated frames not sent to the gateway")
            # the l2dsr backend without 'mac' resolves from the neighbour
            # table and takes the whole table; the one nobody answers for
            # stays out of it
            doc = d.wait_stats(
                lambda s: s["l2dsr_macs"].get("10.77.0.2") == peer_mac,
                "the l2dsr backend's MAC from the neighbour table")
            check(doc["l2dsr_macs"].get("10.77.0.99", "missing") is None,
                  f"unreachable backend resolved: {doc['l2dsr_macs']}")
            t = ctl_wait(lambda r: slots_of(r).get("onlink", 0) > 0,
                         "slots for the resolved l2dsr backend", d,
                         "table", vip="dsr")
            check(slots_of(t) == {"onlink": 251, "absent": 0},
                  f"l2dsr slots {slots_of(t)}")
            # the neighbour entry changes: republished, and used
            fake = "02:00:00:00:77:99"
            gen = st["generation"]
            net.sh(f"ip -n {net.lb} neigh replace 10.77.0.2 lladdr {fake} "
                   "dev mlv0 nud permanent")
            st = ctl_wait(lambda r: r["ports"][0]["next_hop"] == fake,
                          "the new next-hop MAC", d)
            check(st["generation"] > gen, "no new generation for the MAC")
            check(re.search(r"published \(next_hop\)", d.log_text()),
                  "the publish is not attributed to the next hop")
            check(probe_from_peer(net, "192.0.2.10", 5300, "10.78.0.11") ==
                  fake, "frames still go to the old MAC")
            d.wait_stats(lambda s: s["l2dsr_macs"].get("10.77.0.2") == fake,
                         "the l2dsr backend's changed MAC")
            # a reload that adds a backend behind the same gateway keeps it
            text = open(cfg).read()
            with open(cfg, "w") as f:
                f.write(text.replace(
                    "      - {name: b1, address: 10.78.0.11}\n",
                    "      - {name: b1, address: 10.78.0.11}\n"
                    "      - {name: b2, address: 10.78.0.12}\n"))
            r = ctl_ok("reload")
            check(ctl_ok("status")["ports"][0]["next_hop"] == fake,
                  f"reload lost the next hop: {r}")
            rc = d.stop()
        finally:
            d.kill()
        check(rc == 0, f"exit status {rc}")

    # a port without a kernel interface cannot use auto: a clear refusal
    cfg = lb_config(work, "net_null0", "--vdev=net_null0", udp_vip())
    r = run([maglevd, "-c", cfg, "--no-watch-config"])
    check(r.returncode == 1 and "kernel interface" in r.stderr and
          "port ext" in r.stderr, f"auto on net_null: {r.stderr}")


def case_next_hop_families(maglevd, src, work):
    """A dual-stack port whose IPv4 and IPv6 backends sit behind
    different routers: each family's next hop comes from its own route
    and neighbour entry, and encapsulated frames of each family go to
    their own router, with no warning."""
    v6_router_mac = "02:00:00:00:66:06"
    with Netns(f"mlvnf{os.getpid()}") as net:
        net.sh(f"ip -n {net.lb} addr add fd77::1/64 dev mlv0 nodad",
               f"ip -n {net.peer} addr add fd77::2/64 dev mlv1 nodad",
               f"ip -n {net.lb} route add fd78::/64 via fd77::3",
               f"ip -n {net.peer} route add 2001:db8::/64 via fd77::1")
        vip6 = ("  - name: echo6\n    address: \"2001:db8::10\"\n"
                "    port: 5300\n    protocol: udp\n    table_size: 251\n"
                "    health: {type: none}\n"
                "    backends:\n      - {name: b6, address: \"fd78::11\"}\n")
        cfg = os.path.join(work, "maglevd.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(
                "    - {name: ext, device: net_af_packet0, address: 10.77.0.1, "
                "address6: \"fd77::1\", next_hop: auto}\n",
                ["--in-memory", "--no-pci", "--vdev=net_af_packet0,iface=mlv0"],
                udp_vip() + vip6))
        d = NsDaemon(maglevd, work, cfg, net.lb)
        try:
            wait_ctl(d)
            peer_mac = net.mac(net.peer, "mlv1")
            # the IPv6 router (nobody in the namespaces is fd77::3): its
            # entry appears once maglevd runs, as a router's answer would
            net.sh(f"ip -n {net.lb} neigh replace fd77::3 lladdr "
                   f"{v6_router_mac} dev mlv0 nud permanent")
            st = ctl_wait(lambda r: r["ports"][0]["next_hop6"] == v6_router_mac,
                          "the IPv6 next hop", d)
            check(st["ports"][0]["next_hop"] == peer_mac,
                  f"IPv4 next hop {st['ports'][0]['next_hop']}, the IPv4 "
                  f"router is {peer_mac}")
            check(probe_from_peer(net, "192.0.2.10", 5300, "10.78.0.11") ==
                  peer_mac, "IPv4 frames not sent to the IPv4 router")
            got = probe_from_peer(net, "2001:db8::10", 5300, "fd78::11")
            check(got == v6_router_mac, f"IPv6 frames to {got!r}, not the "
                  f"IPv6 router {v6_router_mac}")
            fams = {(e["port"], e["family"]): e["mac"]
                    for e in d.doc()["next_hops"]}
            check(fams == {("ext", 4): peer_mac, ("ext", 6): v6_router_mac},
                  f"stats file next_hops: {fams}")
            check("a port has one next hop" not in d.log_text() and
                  "routes some" not in d.log_text(),
                  "warned about two next hops on a dual-stack port")
            rc = d.stop()
        finally:
            d.kill()
        check(rc == 0, f"exit status {rc}")


# Runs in the peer namespace: ARP requests for the port's address, on
# VLAN vid (0: untagged), from mlv1; prints the VID, sender MAC and
# sender IP of the first ARP reply (tagged in the frame, or by the
# kernel's VLAN metadata: PACKET_AUXDATA), or exits 1 at the deadline.
PEER_ARP = r"""
import socket, struct, sys, time
target, vid, deadline = sys.argv[1], int(sys.argv[2]), time.time() + float(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("mlv1", 0))
s.setsockopt(263, 8, 1)                       # SOL_PACKET, PACKET_AUXDATA
s.settimeout(0.1)
mac = s.getsockname()[4]
spa, tpa = socket.inet_aton("10.77.0.2"), socket.inet_aton(target)
arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, mac, spa, b"\0" * 6, tpa)
tag = struct.pack("!HH", 0x8100, vid) if vid else b""
req = b"\xff" * 6 + mac + tag + b"\x08\x06" + arp
while time.time() < deadline:
    s.send(req)
    end = time.time() + 0.3
    while time.time() < end:
        try:
            fr, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(20))
        except socket.timeout:
            break
        got = None
        for lvl, typ, data in anc:
            if lvl == 263 and typ == 8 and len(data) >= 20:
                status, _, _, _, _, tci = struct.unpack("IIIHHH", data[:18])
                if status & 0x10:                 # TP_STATUS_VLAN_VALID
                    got = tci & 0xfff
        if fr[12:14] == b"\x81\x00":
            got, fr = struct.unpack("!H", fr[14:16])[0] & 0xfff, fr[:12] + fr[16:]
        if fr[12:14] != b"\x08\x06" or fr[20:22] != b"\x00\x02":
            continue
        print(got or 0, ":".join("%02x" % b for b in fr[22:28]),
              socket.inet_ntoa(fr[28:32]))
        sys.exit(0)
sys.exit(1)
"""


def peer_arp(net, target, vid, seconds):
    """The first ARP reply for target to a request on VLAN vid (0:
    untagged): (vid, MAC, IP), or None when none came."""
    r = subprocess.run(["ip", "netns", "exec", net.peer, "python3", "-c",
                        PEER_ARP, target, str(vid), str(seconds)],
                       capture_output=True, text=True, timeout=DEADLINE_S)
    if r.returncode != 0:
        return None
    vid_s, mac, ip = r.stdout.split()
    return int(vid_s), mac, ip


def case_host_tap_vlan(maglevd, src, work):
    """A VLAN port (vlan: 100) with host_tap: the TAP is the VLAN's
    interface. An ARP request for the port's address tagged 100 reaches
    the kernel behind the TAP untagged, and its reply leaves the port
    tagged 100 with the port's MAC; an untagged request and one on VLAN
    200 get no reply and count as wrong_vlan drops."""
    tag = f"mlvhv{os.getpid()}"
    net = Netns(tag)
    with net:
        # mlv0 keeps no address and its kernel answers ARP only for its
        # own (none): every reply must come through maglevd and the TAP
        net.sh(f"ip -n {net.lb} addr flush dev mlv0",
               f"ip netns exec {net.lb} sysctl -qw "
               "net.ipv4.conf.mlv0.arp_ignore=1")
        cfg = os.path.join(work, "maglevd.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(
                "    - {name: ext, device: net_af_packet0, address: 10.77.0.1, "
                "next_hop: \"02:00:00:00:00:01\", host_tap: true, vlan: 100}\n",
                ["--in-memory", "--no-pci", "--vdev=net_af_packet0,iface=mlv0"],
                udp_vip()))
        d = NsDaemon(maglevd, work, cfg, net.lb)
        try:
            wait_ctl(d)
            st = ctl_ok("status")
            port_mac = st["ports"][0]["mac"].lower()
            check(st["ports"][0].get("vlan") == 100,
                  f"status shows the port's VLAN as {st['ports'][0]!r}")
            got = peer_arp(net, "10.77.0.1", 100, 10)
            check(got is not None, "no ARP reply on VLAN 100")
            check(got == (100, port_mac, "10.77.0.1"),
                  f"ARP reply {got!r}, want VLAN 100 from {port_mac}")
            before = ctl_ok("stats")["drops"]["wrong_vlan"]
            for vid in (0, 200):
                check(peer_arp(net, "10.77.0.1", vid, 1.5) is None,
                      f"an ARP request on VLAN {vid or 'none'} was answered")
            after = ctl_ok("stats")["drops"]["wrong_vlan"]
            check(after - before >= 2, f"wrong_vlan drops {before} -> {after}")
            doc = d.wait_stats(
                lambda s: s["totals"]["counters"]["exception"] > 0,
                "frames through the exception path")
            check(accounted(doc), "a frame not accounted for")
            rc = d.stop()
        finally:
            d.kill()
        check(rc == 0, f"exit status {rc}")


def case_host_tap(maglevd, src, work):
    """A port without a kernel address, as a PCI NIC is (here an
    af_packet port on a veth the kernel has no address on): with
    host_tap the kernel behind maglevd's TAP answers ARP, neighbour
    solicitations and pings for the port's addresses with the port's
    MAC, resolves the next hop (next_hop: auto works), and VIP traffic
    is still forwarded."""
    tag = f"mlvht{os.getpid()}"
    net = Netns(tag)
    with net:
        # mlv0 keeps no address: the kernel must not answer for it
        net.sh(f"ip -n {net.lb} addr flush dev mlv0",
               f"ip -n {net.peer} addr add fd77::2/64 dev mlv1 nodad",
               f"ip -n {net.peer} route add 2001:db8::/64 via fd77::1")
        cfg = os.path.join(work, "maglevd.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(
                "    - {name: ext, device: net_af_packet0, address: 10.77.0.1, "
                "address6: \"fd77::1\", next_hop: auto, host_tap: true}\n",
                ["--in-memory", "--no-pci", "--vdev=net_af_packet0,iface=mlv0"],
                udp_vip()))
        d = NsDaemon(maglevd, work, cfg, net.lb)
        try:
            wait_ctl(d)
            st = ctl_ok("status")
            port_mac = st["ports"][0]["mac"].lower()
            host = [p for p in st["ports"] if p["name"] == "ext-host"]
            check(host and host[0]["exception"] and
                  host[0]["device"] == "net_tap_host",
                  f"no host port in {st['ports']}")
            link = net.link(net.lb, "mlv-ext")
            check(port_mac in link.lower() and "UP" in link,
                  f"the TAP has not the port's MAC or is down: {link}")
            # the host's routes beyond the subnet are the operator's
            net.sh(f"ip -n {net.lb} route add 10.78.0.0/24 via 10.77.0.2 "
                   "dev mlv-ext")
            for addr, flag in (("10.77.0.1", "-4"), ("fd77::1", "-6")):
                r = run(["ip", "netns", "exec", net.peer, "ping", flag, "-c",
                         "1", "-W", "3", addr])
                check(r.returncode == 0, f"ping {addr} through the host "
                      f"TAP: {r.stdout} {r.stderr}")
                neigh = run(["ip", "-n", net.peer, "neigh", "show",
                             addr]).stdout.lower()
                check(port_mac in neigh, f"{addr} resolved to {neigh!r}, "
                      f"not the port's MAC {port_mac}")
            peer_mac = net.mac(net.peer, "mlv1")
            ctl_wait(lambda r: r["ports"][0]["next_hop"] == peer_mac,
                     "the next hop through the host TAP", d)
            check(probe_from_peer(net, "192.0.2.10", 5300, "10.78.0.11") ==
                  peer_mac, "VIP traffic not forwarded to the next hop")
            doc = d.wait_stats(
                lambda s: s["totals"]["counters"]["exception"] > 0,
                "frames through the exception path")
            check(accounted(doc), "a frame not accounted for")
            rc = d.stop()
        finally:
            d.kill()
        check(rc == 0, f"exit status {rc}")


def case_xdp_steer(maglevd, src, work):
    with Netns(f"mlvxs{os.getpid()}") as net:
        vips = udp_vip()
        cfg = lb_config(work, "net_af_xdp0",
                        "--vdev=net_af_xdp0,iface=mlv0", vips)
        d = NsDaemon(maglevd, work, cfg, net.lb)
        try:
            wait_ctl(d)
            check("prog/xdp" in net.link(net.lb, "mlv0") or
                  "xdp" in net.link(net.lb, "mlv0"),
                  "no XDP program on mlv0")
            check(re.search(r"AF_XDP steering on mlv0: program found",
                            d.log_text()), "steering program not opened")
            check(os.path.exists(CONTROL["socket"] + ".xdp_steer.bpf.o"),
                  "the per-instance object was not written")
            # VIP traffic reaches maglevd through the program
            peer_mac = net.mac(net.peer, "mlv1")
            check(probe_from_peer(net, "192.0.2.10", 5300, "10.78.0.11") ==
                  peer_mac, "no VIP frame forwarded through AF_XDP")
            doc = d.wait_stats(
                lambda s: s["xdp_steer"]["mlv0"]["counters"]
                .get("redirect_vip", 0) > 0, "redirect_vip counted")
            check(doc["xdp_steer"]["mlv0"]["managed"] is True, "not managed")
            # a VIP added by a reload is steered too
            text = open(cfg).read()
            with open(cfg, "w") as f:
                f.write(text + udp_vip("echo2", "192.0.2.11", "10.78.0.21"))
            ctl_ok("reload")
            check(probe_from_peer(net, "192.0.2.11", 5300, "10.78.0.21") ==
                  peer_mac, "the reloaded VIP is not steered")
            # killed: the program stays; the next start removes it
            d.proc.kill()
            d.proc.wait()
            check("xdp" in net.link(net.lb, "mlv0"),
                  "(test premise) no program left after SIGKILL")
            d2 = NsDaemon(maglevd, work, cfg, net.lb, name="second")
            try:
                wait_ctl(d2, "a start over a dead instance's program")
                check(re.search(r"removed the program a previous maglevd "
                                r"left on mlv0", d2.log_text()),
                      "stale program not reported")
                rc = d2.stop()
            finally:
                d2.kill()
            check(rc == 0, f"exit status {rc}")
            check("xdp" not in net.link(net.lb, "mlv0"),
                  "program left attached after a clean stop")
        finally:
            d.kill()


def case_unit_caps(maglevd, src, work):
    """With exactly the unit's capabilities (its CapabilityBoundingSet,
    through setpriv), maglevd starts with a control.socket_group: the
    socket is made with that group and its new directory given it."""
    setpriv = shutil.which("setpriv")
    if not setpriv:
        raise Skip("setpriv not installed (util-linux)")
    unit = open(os.environ["MAGLEVD_UNIT"]).read()
    m = re.search(r"^CapabilityBoundingSet=(.+)$", unit, re.M)
    check(m, "the unit has no CapabilityBoundingSet")
    caps = ",".join("+" + c.lower().removeprefix("cap_")
                    for c in m.group(1).split())
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                            vip(), control="  socket_group: nogroup\n"))
    d = Daemon(maglevd, work, cfg,
               prefix=(setpriv, "--bounding-set", "-all," + caps))
    try:
        wait_ctl(d, "a start with the unit's capabilities")
        sock = CONTROL["socket"]
        nogroup = 65534
        check(os.stat(sock).st_gid == nogroup,
              f"socket group {os.stat(sock).st_gid}, not nogroup")
        st = os.stat(os.path.dirname(sock))
        check(st.st_gid == nogroup and stat.S_IMODE(st.st_mode) == 0o750,
              f"socket directory group {st.st_gid}, mode "
              f"{oct(st.st_mode)}")
        with open(f"/proc/{d.proc.pid}/status") as f:
            bnd = int(re.search(r"CapBnd:\s+(\S+)", f.read()).group(1), 16)
        check(bnd != (1 << 41) - 1 and not bnd & (1 << 17),
              f"not run with the unit's set (CapBnd {bnd:x})")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")


def case_unit_syscalls(maglevd, src, work):
    """The shipped unit's SystemCallFilter refuses whole groups of
    system calls: the daemon makes none of them while it starts, serves
    the socket, reloads and stops (traced with strace, which sees every
    call; the filter itself needs systemd as PID 1 to run)."""
    strace = shutil.which("strace")
    analyze = shutil.which("systemd-analyze")
    if not strace or not analyze:
        raise Skip("strace or systemd-analyze not installed")
    unit = open(os.environ["MAGLEVD_UNIT"]).read()
    m = re.search(r"^SystemCallFilter=~(.+)$", unit, re.M)
    check(m, "the unit has no SystemCallFilter deny list")
    denied = set()
    for group in m.group(1).split():
        r = run([analyze, "syscall-filter", group])
        check(r.returncode == 0, f"syscall-filter {group}: {r.stderr}")
        # "@group", a "# description" line, then one call per line (or
        # "@other" groups it includes)
        denied |= {w for line in r.stdout.splitlines()[1:]
                   if not line.strip().startswith("#")
                   for w in line.split() if not w.startswith("@")}
    check("ptrace" in denied and "mount" in denied,
          f"the deny list did not expand: {sorted(denied)[:10]}")
    # EAL probes iopl at start and carries on when it is refused (as it
    # is anyway without CAP_SYS_RAWIO, which the unit does not grant)
    tolerated = {"iopl"}
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                            vip()))
    trace = os.path.join(work, "strace.txt")
    d = Daemon(maglevd, work, cfg, watch=True,
               prefix=(strace, "-f", "-qq", "-c", "-U", "name", "-o", trace))
    try:
        wait_ctl(d)
        ctl_ok("reload")
        ctl_ok("drain", vip="web", backend="b1")
        ctl_ok("stats")
        # strace is the process started; maglevd is its child
        with open(f"/proc/{d.proc.pid}/task/{d.proc.pid}/children") as f:
            (child,) = f.read().split()
        os.kill(int(child), signal.SIGTERM)
        rc = d.proc.wait(DEADLINE_S)
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc} under strace")
    used = set()
    for line in open(trace).read().splitlines():
        w = line.split()
        if len(w) == 1 and re.fullmatch(r"[a-z0-9_]+", w[0]):
            used.add(w[0])
    check(len(used) > 20, f"strace saw too few calls: {sorted(used)}")
    check(not used & denied - tolerated,
          f"calls the unit refuses: {sorted(used & denied - tolerated)}")


def free_hugepages():
    total = 0
    base = "/sys/kernel/mm/hugepages"
    for size in os.listdir(base):
        with open(os.path.join(base, size, "free_hugepages")) as f:
            total += int(f.read())
    return total


def case_no_hugepages(maglevd, src, work):
    """With every hugepage in use elsewhere, the start fails saying so
    (EAL alone says "Permission denied"). The pages are held by this
    test through a hugetlb memfd, and given back when it ends."""
    import mmap
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                            vip()))
    held = []
    try:
        for size in os.listdir("/sys/kernel/mm/hugepages"):
            kb = int(size.split("-")[1].rstrip("kB"))
            with open(f"/sys/kernel/mm/hugepages/{size}/free_hugepages") as f:
                n = int(f.read())
            if n == 0:
                continue
            flags = os.MFD_HUGETLB | ((kb * 1024).bit_length() - 1) << 26
            fd = os.memfd_create("mlv-hold", flags)
            os.ftruncate(fd, n * kb * 1024)
            m = mmap.mmap(fd, n * kb * 1024)
            for off in range(0, n * kb * 1024, kb * 1024):
                m[off] = 1                    # fault each page in
            held.append((fd, m))
        if free_hugepages() != 0:
            raise Skip("could not take every free hugepage")
        r = run([maglevd, "-c", cfg, "--no-watch-config"])
        check(r.returncode == 1 and "no free hugepages" in r.stderr and
              "Permission denied" not in r.stderr.split("initialisation")[-1],
              f"start without free hugepages: {r.returncode} {r.stderr}")
    finally:
        for fd, m in held:
            m.close()
            os.close(fd)


CASES = {
    "no-hugepages": case_no_hugepages,
    "unit-syscalls": case_unit_syscalls,
    "unit-caps": case_unit_caps,
    "systemd": case_systemd,
    "next-hop-auto": case_next_hop_auto,
    "next-hop-families": case_next_hop_families,
    "host-tap": case_host_tap,
    "host-tap-vlan": case_host_tap_vlan,
    "xdp-steer": case_xdp_steer,
}
