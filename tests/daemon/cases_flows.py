# SPDX-License-Identifier: BSD-3-Clause
"""Tracked flows across a graceful restart (daemon/flows_glue.c): the
flows file a SIGTERM writes beside the state file, read back and removed
by the next start before the workers run.

A table change puts tracked flows at risk (the table now names another
backend for their slot); after a restart with the same configuration
every flow goes on to the backend it had, as the packets out show, and
`lookup` finds it tracked, established; a restart with a backend removed
drops that backend's flows and keeps the others; a damaged file is
refused in one log line and the daemon starts empty."""
import os
import socket
import struct

from daemon_util import (CONTROL, Daemon, check, config_text, csum, ctl_ok,
                         port, read_pcap, vip, wait_ctl, wait_until)
from cases_live import Filler, PcapFifo

N = 64
CLIENT = "198.51.100.7"
FIRST_PORT = 21000


def tcp(sport, flags):
    """A client's TCP segment to the VIP web (192.0.2.10:80)."""
    seg = struct.pack("!HHIIBBHHH", sport, 80, 1, 1, 5 << 4, flags,
                      65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(seg), 1, 0x4000, 64,
                     6, 0, socket.inet_aton(CLIENT),
                     socket.inet_aton("192.0.2.10"))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return bytes.fromhex("020000000002" "020000000001" "0800") + ip + seg


def flows(flags):
    return [tcp(FIRST_PORT + i, flags) for i in range(N)]


def backend_addr(name):
    """vip()'s addresses: b1 10.99.1.11, b2 .12, ..."""
    return f"10.99.1.{10 + int(name[1:])}"


def start(maglevd, work, tag, backends):
    """A daemon reading frames from a FIFO of its own; (daemon, fifo,
    output pcap)."""
    fifo = PcapFifo(os.path.join(work, f"in-{tag}.fifo"))
    out = os.path.join(work, f"out-{tag}.pcap")
    cfg = os.path.join(work, f"maglevd-{tag}.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            port("ext", "net_pcap0", "10.99.0.1"),
            ["--in-memory", "--no-pci",
             f"--vdev=net_pcap0,rx_pcap={fifo.path},tx_pcap={out}"],
            vip(backends=backends)))
    d = Daemon(maglevd, work, cfg, name=f"maglevd-{tag}")
    fifo.open(d.proc)
    wait_ctl(d)
    return d, fifo, out, cfg


def tracked(fifo):
    """{client port: (tracked backend or None, state, the table's
    backend)} of the N flows, asked of the worker."""
    seen = {}

    def answered(sp):
        # null: the worker did not answer in time (just started, its
        # FIFO not yet read): ask again
        lk = ctl_ok("lookup", vip="web", src=CLIENT, sport=sp)
        return lk if lk["tracked"] is not None else None

    with Filler(fifo):
        for sp in range(FIRST_PORT, FIRST_PORT + N):
            lk = wait_until(lambda: answered(sp), f"lookup of flow {sp}")
            t = lk["tracked"]
            seen[sp] = ((t["backend"], t["state"]) if isinstance(t, dict)
                        else (None, None)) + (lk["backend"],)
    return seen


def stop(d, fifo):
    fifo.close()
    rc = d.stop()
    check(rc == 0, f"exit status {rc}")


def log_of(d):
    """The log of a daemon that has stopped."""
    with open(d.log_path) as f:
        return f.read()


def outer_dsts(out):
    """{client port: [outer destination, ...]} of the IPIP frames out."""
    got = {}
    for fr in read_pcap(out):
        check(fr[12:14] == b"\x08\x00" and fr[14 + 9] == 4,
              "output frame is not IPv4-in-IPv4")
        sport = struct.unpack("!H", fr[14 + 40:14 + 42])[0]
        got.setdefault(sport, []).append(socket.inet_ntoa(fr[30:34]))
    return got


def case_flows_across_restart(maglevd, src, work):
    flows_file = CONTROL["socket"] + ".state.flows"
    four = ("b1", "b2", "b3", "b4")

    # A: N connections (SYN, then ACK) over three backends; then b4
    # joins: the table moves some slots, tracked flows stay
    d, fifo, out, cfg = start(maglevd, work, "a", ("b1", "b2", "b3"))
    try:
        fifo.write(flows(0x02) + flows(0x10))
        d.wait_stats(lambda s: s["totals"]["counters"]["rx_packets"] >= 2 * N,
                     "A's connections")
        with open(cfg) as f:
            text = f.read()
        with open(cfg, "w") as f:
            f.write(text.replace(
                "      - {name: b3, address: 10.99.1.13}\n",
                "      - {name: b3, address: 10.99.1.13}\n"
                "      - {name: b4, address: 10.99.1.14}\n"))
        ctl_ok("reload")
        before = tracked(fifo)
        stop(d, fifo)
    finally:
        d.kill()
    check(all(b is not None and st == "established"
              for b, st, _ in before.values()),
          f"A's flows not all tracked, established: {before}")
    at_risk = [sp for sp, (b, _, now) in before.items() if b != now]
    print(f"{len(at_risk)} of {N} tracked connections at risk after b4 "
          f"joined (their slot names another backend now)")
    check(at_risk, "no tracked flow's slot moved: the test is void")
    log = log_of(d)
    check(f"{N} tracked flow(s) of 1 worker(s) saved" in log,
          f"no save in the log:\n{log[-2000:]}")
    check(os.path.exists(flows_file), f"{flows_file} not written")

    # B: the same configuration: every flow restored, on its backend,
    # the file consumed
    d, fifo, out, cfg = start(maglevd, work, "b", four)
    try:
        check(f"{N} of {N} flow(s) restored" in d.log_text(),
              f"no restore in the log:\n{d.log_text()[-2000:]}")
        check(not os.path.exists(flows_file), "flows file left after start")
        after = tracked(fifo)
        fifo.write(flows(0x10))
        d.wait_stats(lambda s: s["totals"]["counters"]["forwarded"] >= N,
                     "B's segments")
        stop(d, fifo)
    finally:
        d.kill()
    for sp, (b, st, _) in after.items():
        check(b == before[sp][0] and st == "established",
              f"flow {sp}: {before[sp][0]} before the restart, "
              f"{b} ({st}) after; the log:\n{log_of(d)[-3000:]}")
    sent = outer_dsts(out)
    for sp in range(FIRST_PORT, FIRST_PORT + N):
        want = backend_addr(before[sp][0])
        check(sent.get(sp) == [want],
              f"flow {sp} went to {sent.get(sp)} after the restart, "
              f"its backend is {want}")
    print(f"restart: all {N} connections kept their backends, the "
          f"{len(at_risk)} at risk included")

    # C: b2 removed: its flows dropped, the others restored
    on_b2 = sum(1 for b, _, _ in before.values() if b == "b2")
    check(on_b2 > 0, "no flow on b2: the removal step is void")
    d, fifo, out, cfg = start(maglevd, work, "c", ("b1", "b3", "b4"))
    try:
        log = d.log_text()
        check(f"{N - on_b2} of {N} flow(s) restored" in log and
              f"({on_b2} to backends no longer configured" in log,
              f"restore without b2 ({on_b2} flows there):\n{log[-2000:]}")
        now = tracked(fifo)
        stop(d, fifo)
    finally:
        d.kill()
    for sp, (b, _, _) in now.items():
        want = None if before[sp][0] == "b2" else before[sp][0]
        check(b == want, f"flow {sp} after b2's removal: {b}, want {want}")

    # D: a damaged file: one line, started empty, the file gone
    with open(flows_file, "wb") as f:
        f.write(b"MLVFLOWS" + b"\x01" * 100)
    os.chmod(flows_file, 0o600)
    d, fifo, out, cfg = start(maglevd, work, "d", four)
    try:
        log = wait_until(lambda: (lambda t: t if "flows file" in t else None)(
            d.log_text()), "the flows file's refusal", d.proc)
        check("starting with empty connection tables" in log,
              f"damaged file not refused in the log:\n{log[-2000:]}")
        check(not os.path.exists(flows_file), "damaged flows file left")
        empty = tracked(fifo)
        stop(d, fifo)
    finally:
        d.kill()
    check(all(b is None for b, _, _ in empty.values()),
          f"flows tracked after a damaged file: {empty}")


CASES = {
    "flows-across-restart": case_flows_across_restart,
}
