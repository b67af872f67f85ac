# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the daemon test cases (tests/daemon/test_daemon.py):
configs, the daemon process, its stats file, pcap files and a control
socket client. Every wait polls a condition with a deadline."""
import json
import os
import signal
import socket
import struct
import subprocess
import time

DEADLINE_S = 60
NEXT_HOP = "02:00:00:00:00:01"


class Failure(Exception):
    pass


class Skip(Exception):
    """The case cannot run here (exit 77: meson's "skipped")."""


def check(cond, what):
    if not cond:
        raise Failure(what)


def wait_until(pred, what, proc=None, deadline_s=DEADLINE_S):
    """Poll pred() until it returns a true value; fail after the deadline or
    if proc exits first."""
    end = time.monotonic() + deadline_s
    while True:
        value = pred()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            raise Failure(f"maglevd exited ({proc.returncode}) while waiting "
                          f"for {what}")
        if time.monotonic() > end:
            raise Failure(f"timed out after {deadline_s}s waiting for {what}")
        time.sleep(0.02)


def read_stats(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        # not written yet (the daemon replaces it atomically, so a file
        # that exists always parses)
        return None


# The control socket of the daemons a case starts: in the case's own
# temporary directory (set by main), never the system-wide default.
CONTROL = {"socket": None}


def config_text(ports, eal, vips, workers=1, entries=4096, extra_dp="",
                control="", metrics=""):
    eal_list = ", ".join(json.dumps(a) for a in eal)
    return (f"dataplane:\n"
            f"  eal_args: [{eal_list}]\n"
            f"  workers: {workers}\n"
            f"  idle: adaptive\n"
            f"{extra_dp}"
            f"  ports:\n{ports}"
            f"  conntrack: {{entries_per_worker: {entries}}}\n"
            f"control:\n"
            f"  socket: {json.dumps(CONTROL['socket'])}\n"
            f"  metrics_listen: \"{metrics}\"\n"
            f"{control}"
            f"vips:\n{vips}")


def port(name, device, addr, extra=""):
    return (f"    - {{name: {name}, device: {device}, address: {addr}, "
            f"next_hop: \"{NEXT_HOP}\"{extra}}}\n")


def vip(name="web", backends=("b1", "b2"), addr="192.0.2.10", vport=80,
        forwarding="ipip"):
    lines = [f"  - name: {name}\n",
             f"    address: {addr}\n",
             f"    port: {vport}\n",
             "    protocol: tcp\n",
             f"    forwarding: {forwarding}\n",
             "    table_size: 251\n",
             "    health: {type: none}\n",
             "    backends:\n"]
    for i, b in enumerate(backends):
        lines.append(f"      - {{name: {b}, address: 10.99.1.{11 + i}}}\n")
    return "".join(lines)


class Daemon:
    """One maglevd process with a stats file and a log."""

    def __init__(self, maglevd, work, config, eal_override=None,
                 interval_ms=20, watch=False, env=None, name="maglevd",
                 prefix=()):
        """prefix: a command maglevd runs under that execs it in place
        (ip netns exec NS), so the pid is still maglevd's."""
        self.stats = os.path.join(work, f"{name}.stats.json")
        self.log_path = os.path.join(work, f"{name}.log")
        args = list(prefix) + [maglevd, "-c", config, "--stats-file",
                               self.stats, "--stats-interval",
                               str(interval_ms)]
        # SIGHUP tests count generations: a file watch would add reloads
        if not watch:
            args.append("--no-watch-config")
        if eal_override is not None:
            args += ["--"] + eal_override
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(args, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env)

    def doc(self):
        return read_stats(self.stats)

    def wait_stats(self, pred, what):
        def probe():
            d = self.doc()
            return d if d is not None and pred(d) else None
        return wait_until(probe, what, self.proc)

    def signal(self, sig):
        check(self.proc.poll() is None, "maglevd is not running")
        self.proc.send_signal(sig)

    def stop(self):
        """SIGTERM and wait; returns the exit status."""
        self.signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure("maglevd did not exit after SIGTERM")
        self.log.close()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def log_text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=DEADLINE_S, **kw)


def accounted(d):
    """Every received frame lands in exactly one outcome or drop."""
    c, drops = d["totals"]["counters"], d["totals"]["drops"]
    return (c["forwarded"] + c["icmp_sent"] + c["exception"] + drops["total"]
            == c["rx_packets"])


# ---- pcap ----

def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def tcp_frame(src, dst, sport, dport):
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 5 << 4, 0x02,
                      65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64,
                     6, 0, bytes(map(int, src.split("."))),
                     bytes(map(int, dst.split("."))))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    return eth + ip + tcp


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    frames = []
    with open(path, "rb") as f:
        data = f.read()
    check(len(data) >= 24, f"{path}: no pcap header")
    magic = struct.unpack("<I", data[:4])[0]
    check(magic in (0xa1b2c3d4, 0xa1b23c4d), f"{path}: not a pcap file")
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[off:off + 16])
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


# pcapng (draft-ietf-opsawg-pcapng): what dpdk-dumpcap writes. The blocks
# read here; every other block is skipped by its length.
PCAPNG_SHB, PCAPNG_IDB, PCAPNG_EPB = 0x0A0D0D0A, 1, 6
PCAPNG_EPB_FLAGS = 2
# the IDB options kept, by name (dpdk-dumpcap names a port "dpdk:ID" and
# puts its device in if_hardware)
PCAPNG_IF_STRINGS = {2: "name", 3: "description", 15: "hardware"}
PCAPNG_IN, PCAPNG_OUT = 1, 2          # epb_flags bits 0-1: direction


def pcapng_options(data, order):
    """{code: [value, ...]} of an options list (padded to 4 bytes)."""
    opts, off = {}, 0
    while off + 4 <= len(data):
        code, length = struct.unpack(order + "HH", data[off:off + 4])
        if code == 0:                  # opt_endofopt
            break
        opts.setdefault(code, []).append(data[off + 4:off + 4 + length])
        off += 4 + (length + 3) // 4 * 4
    return opts


def read_pcapng(path):
    """(interfaces, packets) of a pcapng file: each interface a dict of
    the strings it names (PCAPNG_IF_STRINGS), each packet (interface
    index, direction, frame) with direction PCAPNG_IN, PCAPNG_OUT or 0
    (not recorded). One section; either byte order."""
    with open(path, "rb") as f:
        data = f.read()
    check(len(data) >= 28 and
          struct.unpack("<I", data[:4])[0] == PCAPNG_SHB,
          f"{path}: no pcapng section header")
    magic = data[8:12]
    check(magic in (b"\x4d\x3c\x2b\x1a", b"\x1a\x2b\x3c\x4d"),
          f"{path}: bad byte-order magic {magic.hex()}")
    order = "<" if magic == b"\x4d\x3c\x2b\x1a" else ">"
    interfaces, packets, off = [], [], 0
    while off + 12 <= len(data):
        btype, blen = struct.unpack(order + "II", data[off:off + 8])
        check(blen >= 12 and blen % 4 == 0 and off + blen <= len(data),
              f"{path}: block at {off} has length {blen}")
        check(struct.unpack(order + "I", data[off + blen - 4:off + blen])[0]
              == blen, f"{path}: block at {off}: trailing length differs")
        body = data[off + 8:off + blen - 4]
        if btype == PCAPNG_SHB:
            check(not interfaces and not packets,
                  f"{path}: a second section (not read here)")
        elif btype == PCAPNG_IDB:
            opts = pcapng_options(body[8:], order)
            interfaces.append({name: opts[code][0].rstrip(b"\0").decode()
                               for code, name in PCAPNG_IF_STRINGS.items()
                               if code in opts})
        elif btype == PCAPNG_EPB:
            ifid, _, _, caplen, origlen = struct.unpack(order + "IIIII",
                                                        body[:20])
            check(ifid < len(interfaces), f"{path}: packet of unknown "
                  f"interface {ifid}")
            check(caplen == origlen, f"{path}: packet cut to {caplen} of "
                  f"{origlen} bytes")
            frame = body[20:20 + caplen]
            opts = pcapng_options(body[20 + (caplen + 3) // 4 * 4:], order)
            flags = opts.get(PCAPNG_EPB_FLAGS, [struct.pack(order + "I", 0)])
            direction = struct.unpack(order + "I", flags[0])[0] & 3
            packets.append((ifid, direction, frame))
        off += blen
    check(off == len(data), f"{path}: {len(data) - off} bytes after the "
          "last block")
    return interfaces, packets


def null_config(work, vips=None, eal=None, **kw):
    path = os.path.join(work, "maglevd.yaml")
    with open(path, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"),
                            eal or ["--in-memory", "--no-pci",
                                    "--vdev=net_null0"],
                            vips or vip(), **kw))
    return path




# ---- the control socket ----

class Ctl:
    """One connection to the daemon's control socket: line-delimited JSON
    (docs/control-protocol.md)."""

    def __init__(self, path=None, timeout=DEADLINE_S):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path or CONTROL["socket"])
        self.buf = b""

    def send_line(self, data):
        self.sock.sendall(data if data.endswith(b"\n") else data + b"\n")

    def read_reply(self):
        """The next reply line as a dict; None if the daemon closed."""
        while b"\n" not in self.buf:
            try:
                chunk = self.sock.recv(1 << 20)
            except ConnectionResetError:
                return None   # closed with our unread request pending
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply = json.loads(line)
        check(isinstance(reply, dict) and isinstance(reply.get("ok"), bool),
              f"reply without a boolean ok: {line[:200]!r}")
        return reply

    def call(self, command, **args):
        req = {"command": command}
        if args:
            req["args"] = args
        self.send_line(json.dumps(req).encode())
        reply = self.read_reply()
        check(reply is not None, f"{command}: connection closed, no reply")
        return reply

    def close(self):
        self.sock.close()


def ctl(command, **args):
    """One request on a fresh connection."""
    c = Ctl()
    try:
        return c.call(command, **args)
    finally:
        c.close()


def ctl_ok(command, **args):
    reply = ctl(command, **args)
    check(reply["ok"] is True, f"{command} {args}: {reply}")
    return reply


def ctl_fail(command, fragment, **args):
    reply = ctl(command, **args)
    check(reply["ok"] is False and isinstance(reply.get("error"), str),
          f"{command} {args} should fail: {reply}")
    check(fragment in reply["error"],
          f"{command} {args}: error {reply['error']!r} lacks {fragment!r}")
    return reply


def wait_ctl(daemon, what="the control socket"):
    """Wait until the daemon answers status with a generation."""
    def probe():
        try:
            r = ctl("status")
        except (OSError, ValueError):
            return None
        return r if r["ok"] and r["generation"] else None
    return wait_until(probe, what, daemon.proc)


def ctl_wait(pred, what, daemon, command="status", **args):
    """Poll a command until pred(reply) holds; returns the reply."""
    def probe():
        r = ctl(command, **args)
        return r if pred(r) else None
    return wait_until(probe, what, daemon.proc)


def slots_of(table_reply):
    return {b["name"]: b["slots"] for b in table_reply["backends"]}


def maglevctl():
    path = os.environ.get("MAGLEVCTL")
    check(path and os.access(path, os.X_OK),
          "MAGLEVCTL does not name the maglevctl binary")
    return path
