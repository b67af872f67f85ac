#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""SYN-ACK MSS clamping by maglev-decap (docs/forwarding.md, "MSS
clamping") on real TCP connections, IPv4 and IPv6, with the backend's
advmss route removed: the backend offers the MSS of its own 1500-byte
link (1460 / 1440), which would make the client send segments the load
balancer cannot encapsulate in 1500 bytes.

With the decapsulator's default --mss-clamp auto (path MTU = the
backend's eth0 MTU, 1500), the client's socket (`ss -ti`, timestamps
off) sends with 1500 - tunnel - 40 / 60: ipip 1440 / 1400, gue 1428 /
1388; a 200 kB upload followed by a request on the same connection
completes; maglevd sends no ICMP too-big (icmp_sent stays); the
backend's synack_clamped counter counts the connection.

Then the decapsulator is reattached with --mss-clamp off: the client
starts with the backend's offer, and its full-sized segments make maglevd
answer ICMP too-big (icmp_sent grows; here the client's path MTU
discovery then recovers, with retransmissions), which is what the clamp
spares: where ICMP does not reach the client, that connection stalls.

usage: test_synack.py [--forwarding ipip|gue] [--vdev af_xdp|af_packet]"""
import os
import re
import subprocess
import sys

import lablib
from lablib import check, log

# The backend's own offer: its link MTU 1500 - 40 / - 60.
OFFER = {4: 1460, 6: 1440}
# The outer headers per forwarding and family (outer family = inner).
TUNNEL = {"ipip": {4: 20, 6: 40}, "gue": {4: 32, 6: 52}}
INNER = {4: 40, 6: 60}
BODY = 200000
# In client 1: connect, print the local port, wait for a line on stdin,
# upload BODY bytes in a POST, then GET on the same connection; print
# "done" once both answers are in (the second only comes once nginx has
# read the whole body); then hold the connection until stdin closes.
UPLOAD = ("import socket, sys\n"
          "s = socket.create_connection((sys.argv[1], 80), timeout=10)\n"
          "print(s.getsockname()[1], flush=True)\n"
          "n = int(sys.argv[2])\n"
          "sys.stdin.readline()\n"
          "s.sendall(b'POST / HTTP/1.1\\r\\nHost: x\\r\\nContent-Length: '"
          " + str(n).encode() + b'\\r\\n\\r\\n' + b'x' * n)\n"
          "s.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')\n"
          "data = b''\n"
          "try:\n"
          "    while data.count(b'HTTP/1.1 200') < 2 or \\\n"
          "            not data.endswith(b'\\n'):\n"
          "        chunk = s.recv(65536)\n"
          "        if not chunk:\n"
          "            break\n"
          "        data += chunk\n"
          "except OSError as e:\n"
          "    print('error', e, flush=True)\n"
          "print('done' if data.count(b'HTTP/1.1 200') == 2 else\n"
          "      'short %r' % data[-200:], flush=True)\n"
          "sys.stdin.read()\n")


def decap(lab, *args):
    return lab.lab("exec", "be1", os.path.join(
        lab.build, "tools", "bin", "maglev-decap", "maglev-decap"), *args)


def decap_counter(lab, name):
    m = re.search(r"^%s\s+(\d+)" % name, decap(lab, "status", "eth0"), re.M)
    check(m, "maglev-decap status has no %s" % name)
    return int(m.group(1))


def reattach(lab, *extra):
    """Attach maglev-decap on be1's eth0 again with the configuration it
    has (addresses, GUE ports, sources) plus extra options."""
    st = decap(lab, "status", "eth0")
    addrs = re.search(r"^addresses:(.*)$", st, re.M).group(1).split()
    ports = re.search(r"^gue ports:(.*)$", st, re.M).group(1).split()
    srcs = re.search(r"^sources:(.*)$", st, re.M).group(1).split()
    args = ["attach", "eth0", "--from", ",".join(srcs)]
    for a in addrs:
        args += ["--address", a]
    for p in ports:
        if p.isdigit():
            args += ["--gue-port", p]
    log(decap(lab, *(args + list(extra))).strip())


def drop_advmss(lab):
    """Remove be1's advmss routes (tools/lab/topology.sh sets 1380)."""
    for fam in ("-4", "-6"):
        for line in lab.lab("exec", "be1", "ip", fam, "route", "show",
                            "dev", "eth0").splitlines():
            if "advmss" in line:
                route = re.sub(r"\s*advmss \d+", "", line).split()
                lab.lab("exec", "be1", "ip", fam, "route", "change",
                        *route, "dev", "eth0")
    routes = lab.lab("exec", "be1", "ip", "route", "show") + \
        lab.lab("exec", "be1", "ip", "-6", "route", "show")
    check("advmss" not in routes, "be1 still has an advmss route: %s"
          % routes)


def icmp_sent(lab):
    return lab.fresh_stats()["totals"]["counters"]["icmp_sent"]


def client_ss(lab, sport):
    """The `ss -ti` line of client 1's connection from port sport, with
    its mss, pmtu and retransmitted bytes."""
    out = lab.lab("exec", "c1", "ss", "-tinH", "state", "established",
                  "( dport = :80 and sport = :%d )" % sport)
    m = re.search(r"\bmss:(\d+)", out)
    p = re.search(r"\bpmtu:(\d+)", out)
    r = re.search(r"\bbytes_retrans:(\d+)", out)
    check(m and p, "no mss/pmtu in the client's ss line: %r" % out)
    return int(m.group(1)), int(p.group(1)), int(r.group(1)) if r else 0, out


def upload(lab, family):
    """Connect client 1 to the VIP, then upload BODY bytes: the client
    socket's send MSS before the upload, its ss line after it, and
    whether the exchange completed."""
    client = subprocess.Popen(
        [lablib.LAB, "exec", "c1", sys.executable, "-c", UPLOAD,
         lablib.vip(family), str(BODY)], env=lab.env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        line = client.stdout.readline().strip()
        check(line.isdigit(), "client could not connect to %s: %s"
              % (lablib.vip(family), client.stderr.read() if
                 client.poll() is not None else line))
        sport = int(line)
        mss = client_ss(lab, sport)[0]
        client.stdin.write("go\n")
        client.stdin.flush()
        result = client.stdout.readline().strip()
        return mss, client_ss(lab, sport), result
    finally:
        client.stdin.close()
        try:
            client.wait(timeout=15)
        except subprocess.TimeoutExpired:
            client.kill()
            client.wait()


def test(lab):
    fwd = lab.forwarding
    check(fwd in TUNNEL, "SYN-ACK clamping is about tunnels: ipip or gue")
    lab.write_config(lab.config(backends="be1"))
    lab.start_lb()
    lab.require_steering()
    # the MSS option alone decides the client's mss: no timestamps
    lab.lab("exec", "c1", "sysctl", "-qw", "net.ipv4.tcp_timestamps=0")
    drop_advmss(lab)
    st = decap(lab, "status", "eth0")
    check("syn-ack mss clamp: path MTU 1500" in st,
          "the lab's decapsulator should clamp for eth0's MTU: %s" % st)

    for family in (4, 6):
        want = 1500 - TUNNEL[fwd][family] - INNER[family]
        icmp0 = icmp_sent(lab)
        clamped0 = decap_counter(lab, "synack_clamped")
        mss, (_, pmtu, retrans, out), result = upload(lab, family)
        log("clamp auto, IPv%d: client mss:%d (want %d), upload: %s, then "
            "pmtu:%d, %d bytes retransmitted" % (family, mss, want, result,
                                                 pmtu, retrans))
        check(mss == want, "IPv%d: the client sends with mss %d, want %d"
              % (family, mss, want))
        check(result == "done", "IPv%d: the upload did not complete: %s"
              % (family, result))
        check(pmtu == 1500, "IPv%d: the client's path MTU fell to %d: %s"
              % (family, pmtu, out.strip()))
        check(decap_counter(lab, "synack_clamped") == clamped0 + 1,
              "IPv%d: synack_clamped did not count the connection" % family)
        check(icmp_sent(lab) == icmp0, "IPv%d: maglevd sent ICMP too-big "
              "though the client's segments should fit" % family)

    reattach(lab, "--mss-clamp", "off")
    check("syn-ack mss clamp: off" in decap(lab, "status", "eth0"),
          "--mss-clamp off left the clamp on")
    for family in (4, 6):
        icmp0 = icmp_sent(lab)
        mss, (_, pmtu, retrans, out), result = upload(lab, family)
        log("clamp off, IPv%d: client mss:%d (the backend's offer %d), "
            "upload: %s, then pmtu:%d, %d bytes retransmitted"
            % (family, mss, OFFER[family], result, pmtu, retrans))
        check(mss == OFFER[family], "IPv%d without the clamp: mss %d, want "
              "the backend's offer %d" % (family, mss, OFFER[family]))
        check(pmtu < 1500, "IPv%d without the clamp: the client's path MTU "
              "stayed %d" % (family, pmtu))
        lablib.wait_until(lambda: icmp_sent(lab) > icmp0,
                          "IPv%d without the clamp: maglevd's ICMP too-big "
                          "for the client's full-sized segments" % family, 5)


if __name__ == "__main__":
    lablib.run(test, backends=1)
