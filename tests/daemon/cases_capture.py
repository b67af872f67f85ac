# SPDX-License-Identifier: BSD-3-Clause
"""Packet capture with DPDK's own tool: maglevd on an AF_XDP port, started
multi-process (its own --file-prefix, hugepages from a hugetlbfs mount),
and dpdk-dumpcap attached to it as a secondary process writes the frames
the port received and transmitted, byte for byte, to a pcapng file; a
packet socket on the same kernel interface sees none of them (the AF_XDP
caveat of docs/operations.md). Run by test_daemon.py.

The case runs in a mount namespace of its own: the hugetlbfs mount and
DPDK's runtime directory (a tmpfs over /run/dpdk) exist only there, so
nothing of them outlives the test, even a killed one, and no other DPDK
process on the machine shares the prefix."""
import ctypes
import json
import os
import shutil
import subprocess
import sys

from cases_system import Netns, NsDaemon
from daemon_util import (DEADLINE_S, Daemon, Failure, PCAPNG_IN, PCAPNG_OUT,
                         Skip, check, config_text, null_config, port,
                         read_pcapng, tcp_frame, vip, wait_ctl, wait_until)

CLONE_NEWNS = 0x00020000
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
MNT_DETACH = 2
N = 8                                   # frames sent to the VIP


class PrivateMounts:
    """This process (and so every child) in a mount namespace of its own
    with hugetlbfs on `huge` and a tmpfs over DPDK's runtime directory.
    The namespace ends with the process; __exit__ unmounts at once, which
    frees the hugepages the daemon's files still hold."""

    def __init__(self, huge):
        self.huge = huge
        self.run_dpdk = os.path.realpath("/var/run/dpdk")
        self.done = []
        self.libc = ctypes.CDLL(None, use_errno=True)

    def call(self, what, ret):
        if ret != 0:
            raise Failure(f"{what}: {os.strerror(ctypes.get_errno())}")

    def mount(self, source, target, fstype, flags=0, data=None):
        self.call(f"mount {fstype} on {target}", self.libc.mount(
            source and source.encode(), target.encode(),
            fstype and fstype.encode(), ctypes.c_ulong(flags),
            data and data.encode()))
        if fstype:
            self.done.append(target)

    def __enter__(self):
        if os.geteuid() != 0:
            raise Skip("needs root for a mount namespace and hugetlbfs")
        self.call("unshare(CLONE_NEWNS)", self.libc.unshare(CLONE_NEWNS))
        try:
            # nothing mounted here reaches the host's namespace
            self.mount(None, "/", None, MS_REC | MS_PRIVATE)
            os.makedirs(self.huge)
            os.makedirs(self.run_dpdk, exist_ok=True)
            self.mount("nodev", self.huge, "hugetlbfs")
            self.mount("tmpfs", self.run_dpdk, "tmpfs", 0, "mode=0700")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for target in reversed(self.done):
            self.libc.umount2(target.encode(), MNT_DETACH)


# Runs in the lb namespace: a packet socket on mlv0, the kernel interface
# the AF_XDP port reads, as tcpdump would open it. Prints "ready", then
# after the sentinel frame (which the steering program leaves to the
# kernel) the frames it saw as hex, one JSON list.
MLV0_TAP = r"""
import json, socket, sys, time
sentinel, deadline = bytes.fromhex(sys.argv[1]), time.time() + float(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("mlv0", 0))
s.settimeout(0.1)
print("ready", flush=True)
seen, done = [], False
while not done and time.time() < deadline:
    try:
        fr = s.recv(4096)
    except socket.timeout:
        continue
    done = fr == sentinel
    seen.append(fr.hex())
print(json.dumps({"sentinel": done, "seen": seen}), flush=True)
"""

# Runs in the peer namespace: send the frames (hex arguments) out of mlv1
# toward maglevd, collect the IPIP frames maglevd sends back until there
# are as many, then send the sentinel; print both lists as JSON.
PEER = r"""
import json, socket, sys, time
deadline, sentinel = time.time() + float(sys.argv[1]), bytes.fromhex(sys.argv[2])
frames = [bytes.fromhex(x) for x in sys.argv[3:]]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("mlv1", 0))
s.settimeout(0.1)
for fr in frames:
    s.send(fr)
got = []
while len(got) < len(frames) and time.time() < deadline:
    try:
        fr, addr = s.recvfrom(4096)
    except socket.timeout:
        continue
    if addr[2] != socket.PACKET_OUTGOING and fr[12:14] == b"\x08\x00" \
            and fr[23] == 4:
        got.append(fr)
s.send(sentinel)
print(json.dumps([fr.hex() for fr in got]), flush=True)
"""


def text_of(path):
    with open(path, errors="replace") as f:
        return f.read()


def single_process_said(maglevd, work):
    """--in-memory as the last EAL argument, where rte_eal_init writes the
    program name over its copy: still seen, and capture said to be off."""
    d = Daemon(maglevd, work, null_config(work), name="single",
               eal_override=["--no-pci", "--vdev=net_null0", "-l", "0-1",
                             "--log-level=6", "--in-memory"])
    try:
        wait_ctl(d)
        log = d.log_text()
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")
    check("packet capture: unavailable, --in-memory keeps DPDK "
          "single-process" in log, f"capture not said to be off: {log}")


def case_capture(maglevd, src, work):
    dumpcap = shutil.which("dpdk-dumpcap")
    check(dumpcap, "dpdk-dumpcap not found (Debian package dpdk-dev, "
          "installed by tools/setup.sh)")
    single_process_said(maglevd, work)
    prefix = f"mlvcap{os.getpid()}"
    pcapng = os.path.join(work, "capture.pcapng")
    dc_log = os.path.join(work, "dumpcap.log")
    with PrivateMounts(os.path.join(work, "huge")) as mounts, \
            Netns(prefix) as net:
        cfg = os.path.join(work, "maglevd.yaml")
        with open(cfg, "w") as f:
            f.write(config_text(
                port("ext", "net_af_xdp0", "10.77.0.1"),
                [f"--file-prefix={prefix}", f"--huge-dir={mounts.huge}",
                 "--no-pci", "--no-telemetry",
                 "--vdev=net_af_xdp0,iface=mlv0"],
                vip()))
        mlv0, mlv1 = (bytes.fromhex(net.mac(ns, dev).replace(":", ""))
                      for ns, dev in ((net.lb, "mlv0"), (net.peer, "mlv1")))
        # client frames to the VIP (TCP 192.0.2.10:80), one flow each
        frames = [mlv0 + mlv1 + tcp_frame(f"198.51.100.{1 + i}",
                                          "192.0.2.10", 40000 + i, 80)[12:]
                  for i in range(N)]
        # for the kernel, which the steering program passes it to: TCP to
        # the host's own 10.77.0.1
        sentinel = mlv0 + mlv1 + tcp_frame("10.77.0.2", "10.77.0.1", 9,
                                           9)[12:]
        d = NsDaemon(maglevd, work, cfg, net.lb)
        tap = cap = None
        try:
            wait_ctl(d)
            check(f"packet capture: available to dpdk-dumpcap "
                  f"--file-prefix={prefix} " in d.log_text(),
                  "no capture line with the file prefix in the log")
            tap = subprocess.Popen(
                ["ip", "netns", "exec", net.lb, sys.executable, "-c",
                 MLV0_TAP, sentinel.hex(), str(DEADLINE_S)],
                stdout=subprocess.PIPE, text=True)
            check(tap.stdout.readline().strip() == "ready",
                  "the packet socket on mlv0 did not start")
            # -p: the capture leaves the port's promiscuous mode alone
            with open(dc_log, "w") as log:
                cap = subprocess.Popen(
                    ["ip", "netns", "exec", net.lb, dumpcap,
                     f"--file-prefix={prefix}", "-i", "net_af_xdp0", "-p",
                     "-w", pcapng, "-c", str(2 * N)],
                    stdout=log, stderr=subprocess.STDOUT)
            # printed once the port's callbacks are in place
            wait_until(lambda: cap.poll() is not None or
                       "Packets captured:" in text_of(dc_log),
                       "dpdk-dumpcap to start capturing", d.proc)
            check(cap.poll() is None, f"dpdk-dumpcap exited "
                  f"({cap.returncode}): {text_of(dc_log)}")
            r = subprocess.run(
                ["ip", "netns", "exec", net.peer, sys.executable, "-c",
                 PEER, str(DEADLINE_S / 2), sentinel.hex()] +
                [fr.hex() for fr in frames],
                capture_output=True, text=True, timeout=DEADLINE_S)
            check(r.returncode == 0, f"peer: {r.stderr}")
            encapsulated = [bytes.fromhex(x) for x in json.loads(r.stdout)]
            check(len(encapsulated) == N, f"{len(encapsulated)} IPIP frames "
                  f"came back from maglevd, want {N}")
            wait_until(lambda: cap.poll() is not None,
                       f"dpdk-dumpcap to stop after {2 * N} packets", d.proc)
            check(cap.returncode == 0, f"dpdk-dumpcap exited "
                  f"{cap.returncode}: {text_of(dc_log)}")
            out, _ = tap.communicate(timeout=DEADLINE_S)
            kernel = json.loads(out)
            rc = d.stop()
        finally:
            for p in (cap, tap):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait()
            d.kill()
    check(rc == 0, f"maglevd exit status {rc}")
    interfaces, packets = read_pcapng(pcapng)
    ours = [i for i, itf in enumerate(interfaces)
            if itf.get("hardware", "").endswith("net_af_xdp0")]
    check(len(ours) == 1, f"interfaces in the capture: {interfaces}")
    check(all(ifid == ours[0] for ifid, _, _ in packets),
          "packets of another interface in the capture")
    rx = [fr for _, way, fr in packets if way == PCAPNG_IN]
    tx = [fr for _, way, fr in packets if way == PCAPNG_OUT]
    check(len(rx) + len(tx) == len(packets), "packets without a direction")
    check(rx == frames, f"captured RX: {len(rx)} frames, not the {N} sent "
          f"byte for byte: {[fr.hex() for fr in rx]}")
    check(tx == encapsulated, f"captured TX: {len(tx)} frames, not the {N} "
          f"mlv1 received byte for byte: {[fr.hex() for fr in tx]}")
    # tcpdump's view on the AF_XDP interface: none of it
    check(kernel["sentinel"], "the sentinel never reached mlv0's socket")
    seen = {bytes.fromhex(x) for x in kernel["seen"]}
    check(not seen & set(frames + encapsulated),
          "a packet socket on mlv0 saw frames AF_XDP carried")


CASES = {
    "capture": case_capture,
}
