#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the stored seeds of the config, ctl, health and netlink fuzz
targets (tests/fuzz/corpus/NAME/): small valid inputs and near-valid ones,
named by what they are. The corpus is committed; run this again after
changing it here:

    tests/fuzz/gen_seeds.py [CORPUS_DIR]    (default: beside this file)

Seeds named regress-* reproduce bugs the fuzzers found: those made here,
and crash inputs saved as they were (not touched here)."""
import os
import struct
import sys

# ---- config: main files (a line "#%fragment" starts fragment.yaml) ----

PORT = """dataplane:
  ports:
    - {name: p0, device: net_null0, address: 10.0.0.1, next_hop: "02:00:00:00:00:01"}
"""

CONFIG = {
    "minimal.yaml": PORT + """vips:
  - name: web
    address: 192.0.2.10
    port: 80
    protocol: tcp
    backends:
      - {name: web-1, address: 10.0.1.1}
""",
    "health-types.yaml": PORT + """defaults:
  table_size: 1009
  health: {type: tcp, interval: 1s, timeout: 500ms, rise: 2, fall: 3}
vips:
  - {name: h, address: 192.0.2.1, port: 80, protocol: tcp,
     health: {type: http, path: /healthz, host: example.org, expect: 204},
     backends: [{name: a, address: 10.0.1.1, weight: 0, state: drain}]}
  - {name: u, address: 192.0.2.2, port: 53, protocol: udp,
     health: {type: udp, send: ping, receive: pong},
     backends: [{name: a, address: 10.0.1.1, state: down}]}
  - {name: d, address: "2001:db8::1", port: 53, protocol: udp,
     health: {type: dns, query: example.org.},
     backends: [{name: a, address: "fd00::1"}]}
""",
    "tables.yaml": """dataplane:
  workers: 2
  idle: poll
  ports:
    - {name: ext, device: net_null0, address: 10.0.0.1, address6: "fd00::1",
       next_hop: auto, mtu: 9000, exception: true}
    - {name: int, device: net_null1, tx_port: ext, next_hop: "02:00:00:00:00:02"}
  conntrack: {entries_per_worker: 4096, tcp_timeout: 300s, udp_timeout: 30s}
control:
  socket: /tmp/x.sock
  socket_mode: "0660"
  build_threads: 2
  build_cpus: "0-1"
  reload_budget: {vips_removed: 25, backends_lost: 50, connections_moved: 10}
announce: {table: 100, device: mlv0, drain_time: 5s}
vips:
  - {name: r, address: 192.0.2.3, port: 443, protocol: tcp, table: ring,
     vnodes: 40, table_size: 1009, min_backends: 1,
     backends: [{name: a, address: 10.0.1.1, weight: 3}, {name: b, address: 10.0.1.2}]}
  - {name: z, address: 192.0.2.4, port: 443, protocol: tcp, table: rendezvous,
     max_load: 1.25, table_size: 1009, forwarding: gue, gue_port: 6080,
     backends: [{name: a, address: "fd00::2"}]}
  - {name: l, address: 192.0.2.5, port: 80, protocol: tcp, forwarding: l2dsr,
     table_size: 1009,
     backends: [{name: a, address: 10.0.1.9, mac: "02:00:00:00:00:09"}]}
""",
    "include.yaml": PORT + """include: [vips.d/*.yaml, fragment.yaml, empty.yaml, missing.yaml]
vips:
  - {name: main, address: 192.0.2.9, port: 80, protocol: tcp,
     backends: [{name: a, address: 10.0.1.1}]}
#%fragment
vips:
  - {name: fromfrag, address: 192.0.2.8, port: 80, protocol: tcp,
     backends: [{name: a, address: 10.0.1.1}]}
""",
    "include-bad.yaml": PORT + """include: [broken.yaml, "*.yaml", "../*", /etc/passwd, fragment.yaml]
vips: {}
#%fragment
dataplane: {workers: 2}
vips: 3
""",
    "errors.yaml": """dataplane:
  workers: -1
  ports: [{name: p0, device: net_null0, address: 300.1.1.1, next_hop: nope}]
defaults: {table_size: 1000, forwarding: carrier-pigeon}
vips:
  - name: web
    address: 192.0.2.10
    port: 70000
    protocol: sctp
    backnds: []
  - name: web
    address: 192.0.2.10
    backends: [{name: a, address: 10.0.1.1}, {name: a, address: 10.0.1.1}]
""",
    "anchors.yaml": PORT + """x-b: &b {name: a, address: 10.0.1.1}
vips:
  - &v {name: v1, address: 192.0.2.1, port: 80, protocol: tcp, backends: [*b]}
  - {<<: *v, name: v2}
  - *v
""",
    "alias-bomb.yaml": """a: &a [x, x, x, x, x, x, x, x]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c]
e: [*d, *d, *d, *d, *d, *d, *d, *d]
""",
    "not-a-map.yaml": "- just\n- a list\n",
    "syntax.yaml": "dataplane: {ports: [\n\tvips: \"unterminated\n",
    "empty.yaml": "",
    "multi-doc.yaml": PORT + "---\nvips: []\n",
}

# ---- ctl: request lines as one client sends them ----

CTL = {
    "status.txt": '{"command": "status", "id": 1}\n',
    "views.txt": '{"command": "help"}\n{"command": "vips"}\n'
                 '{"command": "backends", "args": {"vip": "web"}}\n'
                 '{"command": "stats", "args": {"per_worker": true}}\n'
                 '{"command": "health"}\n',
    "table.txt": '{"command": "table", "args": {"vip": "web"}}\n'
                 '{"command": "table", "args": {"vip": "web", "dump": true}}\n'
                 "table web --dump\nlookup web 10.0.0.1 80\nconns --limit 3\n",
    "lookup.txt": '{"command": "lookup", "args": {"vip": "web", '
                  '"src": "198.51.100.7", "sport": 4242}, "id": "x"}\n',
    "conns.txt": '{"command": "conns", "args": {"limit": 5}}\n'
                 '{"command": "conns", "args": {"cursor": "0"}}\n',
    "overrides.txt": '{"command": "drain", "args": {"vip": "web", "backend": "web-1"}}\n'
                     '{"command": "weight", "args": {"vip": "web", "backend": "web-2", "weight": 7}}\n'
                     '{"command": "weight", "args": {"vip": "web", "backend": "web-2"}}\n'
                     '{"command": "weight", "args": {"vip": "web", "backend": "web-2", "reset": true}}\n'
                     '{"command": "undrain", "args": {"vip": "*", "backend": "web-1"}}\n',
    "whatif.txt": '{"command": "whatif", "args": {"vip": "web", "backend": "web-1", "action": "remove"}}\n',
    "reload.txt": '{"command": "reload", "args": {"dry_run": true}}\n'
                  '{"command": "reload", "args": {"force": true}}\n',
    "shutdown.txt": '{"command": "shutdown", "args": {"now": true}}\n',
    "bad.txt": 'not json\n[]\n{"command": 3}\n{"command": "nope"}\n'
               '{"command": "status", "args": {"x": 1}}\n'
               '{"command": "status", "command": "help"}\n'
               '{"command": "table", "args": {"vip": 7}}\n'
               '\n   \r\n{"command": "vips"',
    "long.txt": '{"command": "status", "id": "' + "x" * 1100 + '"}\n',
}

# ---- health: 'H' + a backend's answer, 'D' + name NUL id answer, else
# a path NUL host ----

def dns_query(name, qid):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", 1, 1)


def dns_answer(name, qid, rcode):
    q = dns_query(name, qid)
    return q[:2] + bytes([0x81, 0x80 | rcode]) + q[4:] + \
        bytes.fromhex("c00c000100010000003c00040a000001")


HEALTH = {
    "http-200.bin": b"HHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "http-503.bin": b"HHTTP/1.0 503\r\n",
    "http-short.bin": b"HHTTP/1.",
    "http-bad.bin": b"HHTTP/1.1 2x0 OK\r\n",
    "dns-noerror.bin": b"Dexample.org\0\x12\x34" + dns_answer("example.org", 0x1234, 0),
    "dns-nxdomain.bin": b"Dno.such.example.\0\xab\xcd" + dns_answer("no.such.example", 0xabcd, 3),
    "dns-badname.bin": b"Dbad..name\0\x00\x01\x81\x80\x00\x00",
    "request.bin": b"R/healthz\0example.org:8080",
    "request-bad.bin": b"R/a b\0host\r\nX: y",
}

# ---- netlink: op, family, interface, 16 address bytes, then replies
# (16-bit little-endian length, bytes) ----

NLMSG_ERROR, NLMSG_DONE = 2, 3
RTM_NEWROUTE, RTM_DELROUTE, RTM_NEWNEIGH = 24, 25, 28
RTA_DST, RTA_OIF, RTA_GATEWAY, RTA_TABLE, RTA_VIA = 1, 4, 5, 15, 18
NDA_LLADDR = 2
RTM_NEWLINK = 16
IFLA_IFNAME, IFLA_LINK, IFLA_LINKINFO = 3, 5, 18
IFLA_INFO_KIND, IFLA_INFO_DATA, IFLA_VLAN_ID = 1, 2, 1
FIX_UP = 0x80


def attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("<HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def msg(kind, body, flags=0, seq=1, pid=4242):
    return struct.pack("<IHHII", 16 + len(body), kind, flags, seq, pid) + body


def rtmsg(family, dst_len, table, protocol, rtype):
    return struct.pack("<BBBBBBBBI", family, dst_len, 0, 0, table, protocol,
                       0, rtype, 0)


def ndmsg(family, ifindex, state):
    return struct.pack("<BBHiHBB", family, 0, 0, ifindex, state, 0, 0)


def err(code):
    return msg(NLMSG_ERROR, struct.pack("<i", -code) + msg(0, b"", seq=1))


def header(op, family6, iface, addr):
    return bytes([op, 1 if family6 else 0, iface]) + addr.ljust(16, b"\0")


def replies(*chunks):
    return b"".join(struct.pack("<H", len(c)) + c for c in chunks)


V4 = bytes([192, 0, 2, 10])
V6 = bytes.fromhex("20010db8000000000000000000000010")
ACK = err(0)
NETLINK = {
    "route-v4-gw.bin": header(0 | FIX_UP, False, 1, V4) + replies(
        msg(RTM_NEWROUTE, rtmsg(2, 32, 254, 3, 1) +
            attr(RTA_OIF, struct.pack("<I", 1)) +
            attr(RTA_GATEWAY, bytes([10, 0, 0, 254])))),
    "route-v6-onlink.bin": header(0 | FIX_UP, True, 0, V6) + replies(
        msg(RTM_NEWROUTE, rtmsg(10, 128, 254, 3, 1) +
            attr(RTA_OIF, struct.pack("<I", 2)))),
    "route-v4-via6.bin": header(0 | FIX_UP, False, 0, V4) + replies(
        msg(RTM_NEWROUTE, rtmsg(2, 32, 254, 3, 1) +
            attr(RTA_VIA, struct.pack("<H", 10) + bytes(16)))),
    "route-unreachable.bin": header(0 | FIX_UP, False, 0, V4) + replies(
        err(101)),
    "neigh-reachable.bin": header(1 | FIX_UP, False, 3, V4) + replies(
        msg(RTM_NEWNEIGH, ndmsg(2, 3, 0x02) +
            attr(NDA_LLADDR, bytes.fromhex("020000000001")))),
    "neigh-missing.bin": header(1 | FIX_UP, True, 3, V6) + replies(err(2)),
    "monitor.bin": header(2, False, 3, V4) + b"\xff\xff" + replies(
        msg(RTM_NEWNEIGH, ndmsg(2, 3, 0x02), seq=0, pid=0) +
        msg(RTM_DELROUTE, rtmsg(2, 32, 254, 3, 1), seq=0, pid=0)),
    "announce.bin": header(3 | FIX_UP, False, 4, V4) + replies(
        ACK,                                   # set_up
        msg(RTM_NEWROUTE, rtmsg(2, 32, 100, 250, 1) +
            attr(RTA_TABLE, struct.pack("<I", 100)) +
            attr(RTA_DST, bytes([192, 0, 2, 99]))) +
        msg(NLMSG_DONE, struct.pack("<i", 0)),  # the stale-route dump
        ACK,                                   # the stale one deleted
        ACK, err(17), ACK,                     # set: add, add refused, ...
        ACK, ACK, ACK, ACK, ACK, ACK),         # reassert, withdraw
    # a VLAN port's VLAN interface: a link dump with eth0.228 on
    # interface 3 (op 1 with 0x40, and 0x80 in the second byte: the VID
    # is 1 + that byte, the parent 1 + the third byte's low bits)
    "vlan-link.bin": bytes([1 | FIX_UP | 0x40, 0x80 | 99, 2]) + bytes(16) +
    replies(
        msg(RTM_NEWLINK, struct.pack("<BBHiII", 0, 0, 1, 9, 0, 0) +
            attr(IFLA_IFNAME, b"eth0.228\0") +
            attr(IFLA_LINK, struct.pack("<I", 3)) +
            attr(IFLA_LINKINFO, attr(IFLA_INFO_KIND, b"vlan\0") +
                 attr(IFLA_INFO_DATA, attr(IFLA_VLAN_ID,
                                           struct.pack("<H", 228))))) +
        msg(NLMSG_DONE, struct.pack("<i", 0))),
    # regression: a header claiming 2 GiB or more, which libmnl 1.0.4
    # takes as fitting (mlv_nl_cb_run)
    "regress-nlmsg-len-2gib.bin": header(0 | FIX_UP, False, 0, V4) + replies(
        msg(RTM_NEWROUTE, rtmsg(2, 32, 254, 3, 1)) +
        struct.pack("<IHHII", 0xf0000000, RTM_NEWROUTE, 0, 1, 4242) +
        bytes(32)),
}


def write(corpus, name, files):
    d = os.path.join(corpus, name)
    os.makedirs(d, exist_ok=True)
    for fname, data in files.items():
        if isinstance(data, str):
            data = data.encode()
        with open(os.path.join(d, fname), "wb") as f:
            f.write(data)


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    write(corpus, "config", CONFIG)
    write(corpus, "ctl", CTL)
    write(corpus, "health", HEALTH)
    write(corpus, "netlink", NETLINK)


if __name__ == "__main__":
    main()
