#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Record the ipip frames a namespace's interfaces transmit, from inside
that namespace (the lab's bridge: its ports toward the backends), until
stdin closes or SECONDS pass; print one JSON list of
[outer_family, outer_source, inner_family, inner_source, source_port,
 inner_destination, destination_port] for each IPv4/IPv6 packet carried
in IPv4 (protocol 4) or IPv6 (next header 4 or 41) with TCP or UDP
inside. Addresses as text, ports as integers.

usage: capture_ipip.py IFACE[,IFACE...] SECONDS"""
import ipaddress
import json
import os
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def inner_tuple(fam, b):
    """(source, sport, destination, dport) of an IPv4/IPv6 packet with TCP
    or UDP and no extension headers, or None."""
    if fam == 4 and len(b) >= 20 and b[0] >> 4 == 4:
        ihl = (b[0] & 0xF) * 4
        proto = b[9]
        src, dst = b[12:16], b[16:20]
        l4 = b[ihl:]
    elif fam == 6 and len(b) >= 40 and b[0] >> 4 == 6:
        proto = b[6]
        src, dst = b[8:24], b[24:40]
        l4 = b[40:]
    else:
        return None
    if proto not in (6, 17) or len(l4) < 4:
        return None
    sport, dport = struct.unpack("!HH", l4[:4])
    return (str(ipaddress.ip_address(bytes(src))), sport,
            str(ipaddress.ip_address(bytes(dst))), dport)


def parse(frame):
    if len(frame) < 14:
        return None
    et = struct.unpack("!H", frame[12:14])[0]
    ip = frame[14:]
    if et == 0x0800 and len(ip) >= 20 and ip[9] == 4:
        ofam, osrc, payload, ifam = 4, ip[12:16], ip[(ip[0] & 0xF) * 4:], 4
    elif et == 0x86DD and len(ip) >= 40 and ip[6] in (4, 41):
        ofam, osrc, payload = 6, ip[8:24], ip[40:]
        ifam = 4 if ip[6] == 4 else 6
    else:
        return None
    t = inner_tuple(ifam, payload)
    if t is None:
        return None
    return [ofam, str(ipaddress.ip_address(bytes(osrc))), ifam] + list(t)


def main():
    ifaces = sys.argv[1].split(",")
    deadline = time.monotonic() + float(sys.argv[2])
    socks = []
    for name in ifaces:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                          socket.htons(ETH_P_ALL))
        s.bind((name, 0))
        s.setblocking(False)
        socks.append(s)
    print("ready", file=sys.stderr, flush=True)
    out = []
    stdin = sys.stdin.fileno()
    while time.monotonic() < deadline and len(out) < 200000:
        r, _, _ = select.select(socks + [stdin], [], [],
                                max(0.0, deadline - time.monotonic()))
        if stdin in r and not os.read(stdin, 4096):
            break
        for s in socks:
            if s not in r:
                continue
            while True:
                try:
                    frame, addr = s.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] != PACKET_OUTGOING:
                    continue
                rec = parse(frame)
                if rec:
                    out.append(rec)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
