# SPDX-License-Identifier: BSD-3-Clause
"""Daemon cases about the mbuf pools (dataplane.mbufs, dataplane.mbuf_size):
a device that keeps more frames in the pool than it holds must make
maglevd exit with an error, not a signal; the setting then lets it run.
Run by test_daemon.py."""
import os
import re
import struct

from daemon_util import (Daemon, check, config_text, port, run, tcp_frame,
                         vip, write_pcap)

# The file of the failing start: its frames outnumber the pool maglevd
# sizes itself on two lcores (checked), and net_pcap's ring for them
# spans whole hugepages, which DPDK unmaps when the ring is freed: a
# second free of it, as DPDK 22.11's net_pcap does on close, faults
# (smaller rings only make DPDK log "Cannot free ring", also checked).
BIG_FRAMES = 200000
# The file of the running start: distinct flows, a pool set to hold it.
FRAMES = 12000
# Two lcores keep the automatic pool small (it grows by a cache per lcore).
LCORES = "--lcores=0@0,1@1"


def pool_line(text):
    """(mbufs, bytes) from the start-up line describing the pool."""
    m = re.search(r"mbuf pool on socket \d+: (\d+) mbufs of (\d+) bytes", text)
    check(m, f"no mbuf pool line in the log: {text[-2000:]}")
    return int(m.group(1)), int(m.group(2))


def write_same_frames(path, n):
    """A pcap of n copies of one frame, written in one go."""
    fr = tcp_frame("198.51.100.1", "192.0.2.10", 30000, 80)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        f.write((struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr) * n)


def case_mbuf_pool(maglevd, src, work):
    big = os.path.join(work, "big.pcap")
    inp = os.path.join(work, "in.pcap")
    write_same_frames(big, BIG_FRAMES)
    write_pcap(inp, [tcp_frame(f"198.51.{100 + i // 250}.{1 + i % 250}",
                               "192.0.2.10", 30000 + i, 80)
                     for i in range(FRAMES)])

    def eal(pcap):
        return ["--in-memory", "--no-pci", "--no-telemetry", LCORES,
                f"--vdev=net_pcap0,rx_pcap={pcap},infinite_rx=1",
                "--vdev=net_null0,no-rx=1"]
    ports = (port("ext", "net_pcap0", "10.99.0.1", ", tx_port: int, mtu: 576") +
             port("int", "net_null0", "10.99.0.2", ", mtu: 576"))
    cfg = os.path.join(work, "maglevd.yaml")

    # net_pcap's infinite_rx copies the whole file into the pool at queue
    # set-up and fails when the pool is smaller: a clean error exit.
    with open(cfg, "w") as f:
        f.write(config_text(ports, eal(big), vip()))
    r = run([maglevd, "-c", cfg])
    check(r.returncode == 1,
          f"pool too small: exit {r.returncode} (a negative status is a "
          f"signal), stderr: {r.stderr[-2000:]}")
    auto, _ = pool_line(r.stderr)
    check(auto < FRAMES, f"the automatic pool ({auto}) holds the {FRAMES} "
          "frames: the case tests nothing")
    check(re.search(r"error: port ext: RX queue 0: .*dataplane\.mbufs",
                    r.stderr),
          f"no error naming the port and the setting: {r.stderr[-2000:]}")
    check("Cannot free ring" not in r.stderr,
          f"net_pcap's ring was freed twice: {r.stderr[-2000:]}")

    # dataplane.mbufs holds the file plus the queues' room; smaller mbufs
    # (ports with MTU 576) are used as set.
    want = FRAMES + auto
    with open(cfg, "w") as f:
        f.write(config_text(ports, eal(inp), vip(), extra_dp=(
            f"  mbufs: {want}\n  mbuf_size: 768\n")))
    d = Daemon(maglevd, work, cfg)
    try:
        d.wait_stats(lambda s: s["totals"]["counters"]["forwarded"] >= FRAMES,
                     f"{FRAMES} frames forwarded")
        n, size = pool_line(d.log_text())
        check((n, size) == (want, 768),
              f"pool of {n} mbufs of {size} bytes, want {want} of 768")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc} after SIGTERM")


CASES = {
    "mbuf-pool": case_mbuf_pool,
}
