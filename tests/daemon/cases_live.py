# SPDX-License-Identifier: BSD-3-Clause
"""Live control against the real daemon: a drained backend gets
no new flows in the packet path while its established flows stay,
reloads by editing the file (atomic rename and in place; valid and
invalid), health transitions against TCP and HTTP listeners this test
owns on loopback, and 1000 VIPs x 100 backends with one shared backend
failing."""
import errno
import http.server
import os
import re
import select
import signal
import socket
import struct
import threading
import time

from daemon_util import (CONTROL, DEADLINE_S, Daemon, check, config_text,
                         ctl, ctl_ok, ctl_wait, maglevctl, port, read_pcap,
                         run, slots_of, tcp_frame, vip, wait_ctl, wait_until)

EAL_NULL = ["--in-memory", "--no-pci", "--vdev=net_null0"]


def write_atomically(path, text):
    """What editors and config management do: a new file renamed over."""
    tmp = path + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, path)


# ---- drain in the packet path ----

class PcapFifo:
    """Frames into a running daemon through a FIFO read by net_pcap
    (rx_pcap=FIFO). The daemon opens it during EAL start-up."""

    def __init__(self, path):
        os.mkfifo(path)
        self.path = path
        self.fd = -1

    def open(self, proc):
        def try_open():
            try:
                # O_NONBLOCK: ENXIO until the reader has opened it
                return os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError as e:
                if e.errno != errno.ENXIO:
                    raise
                return None
        self.fd = wait_until(try_open, "maglevd opening the rx FIFO", proc)
        os.set_blocking(self.fd, True)
        # libpcap's file header (the daemon blocks in EAL init for it)
        os.write(self.fd, struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0,
                                      65535, 1))

    def write(self, frames):
        data = b"".join(struct.pack("<IIII", 0, 0, len(f), len(f)) + f
                        for f in frames)
        os.write(self.fd, data)

    def close(self):
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Filler:
    """Frames for no VIP (counted drops, never output), written to the
    FIFO while the block runs. net_pcap's rx blocks on an empty FIFO, so
    an idle worker would never reach the housekeeping step that answers
    `lookup`; this keeps it polling. Nothing else may write meanwhile."""

    def __init__(self, fifo):
        self.fifo = fifo
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.batch = [tcp_frame("198.51.100.99", "192.0.2.99", 1, 80)] * 256

    def run(self):
        while not self.stop.is_set():
            self.fifo.write(self.batch)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def outer_dst_and_sport(frame):
    """IPIP frame: (outer IPv4 destination, inner TCP source port)."""
    check(frame[12:14] == b"\x08\x00" and frame[14 + 9] == 4,
          "output frame is not IPv4-in-IPv4")
    outer_dst = socket.inet_ntoa(frame[14 + 16:14 + 20])
    sport = struct.unpack("!H", frame[14 + 20 + 20:14 + 20 + 22])[0]
    return outer_dst, sport


def case_drain_packets(maglevd, src, work):
    fifo = PcapFifo(os.path.join(work, "in.fifo"))
    out = os.path.join(work, "out.pcap")
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            port("ext", "net_pcap0", "10.99.0.1"),
            ["--in-memory", "--no-pci",
             f"--vdev=net_pcap0,rx_pcap={fifo.path},tx_pcap={out}"],
            vip(backends=("b1", "b2", "b3")),
            control="  reload_budget: {connections_moved: 10}\n"))
    b1_addr = "10.99.1.11"
    n = 96

    def flows(first):
        return [tcp_frame("198.51.100.7", "192.0.2.10", first + i, 80)
                for i in range(n)]

    d = Daemon(maglevd, work, cfg)
    try:
        fifo.open(d.proc)
        wait_ctl(d)
        # A: new flows spread over all three backends
        fifo.write(flows(20000))
        d.wait_stats(lambda s: s["totals"]["counters"]["rx_packets"] >= n,
                     "flows A")
        # lookup asks the workers: each A flow is tracked (a SYN: opening)
        # with the backend the table gives; a flow never sent is not
        on_b1 = []
        with Filler(fifo):
            for sp in range(20000, 20000 + 24):
                lk = ctl_ok("lookup", vip="web", src="198.51.100.7", sport=sp)
                t = lk["tracked"]
                check(isinstance(t, dict) and t["backend"] == lk["backend"] and
                      t["state"] == "opening" and t["expires_in_ms"] > 0 and
                      t["worker"] >= 0, f"lookup of flow A {sp}: {lk}")
                if lk["backend"] == "b1":
                    on_b1.append(sp)
            lk = ctl_ok("lookup", vip="web", src="198.51.100.7", sport=25000)
            check(lk["tracked"] is False, f"lookup of a flow never sent: {lk}")
        check(on_b1, "no looked-up flow is on b1 (the drain check is void)")
        r = ctl_ok("drain", vip="web", backend="b1")
        d.wait_stats(lambda s, g=r["generation"]: s["generation"] >= g,
                     "the drained generation in the stats file")
        # A's n flows, no packet since the drain's publish, still count
        rows = ctl_ok("backends", vip="web")["backends"]
        check(sum(x["inactive_connections"] for x in rows) == n,
              f"A's {n} flows after the drain's publish: {rows}")
        # B: the same flows again (established), and C: new flows
        fifo.write(flows(20000) + flows(30000))
        d.wait_stats(lambda s: s["totals"]["counters"]["rx_packets"] >= 3 * n,
                     "flows B and C")
        b = [x for x in ctl_ok("backends", vip="web")["backends"]
             if x["name"] == "b1"][0]
        check(b["state"] == "draining" and b["slots"] == 0 and
              b["override"]["drain"] is True, f"b1 after drain: {b}")
        # A (= B) and C are 2n tracked flows, counted on their backends
        # whatever generation they were first seen in; SYNs, so opening
        # (inactive), tracked for tcp_handshake_timeout, far longer than
        # this takes
        def all_counted():
            rows = ctl_ok("backends", vip="web")["backends"]
            return rows if sum(x["inactive_connections"]
                               for x in rows) == 2 * n else None

        active = wait_until(all_counted, "2n inactive connections in "
                            "backends", d.proc)
        check(all(x["active_connections"] == 0 for x in active),
              f"SYN-only flows counted as established: {active}")
        b1_active = [x for x in active if x["name"] == "b1"][0][
            "inactive_connections"]
        check(b1_active > 0, f"b1 tracks {b1_active} flows after its drain")
        # drained: new flows avoid b1, its tracked flows keep it
        with Filler(fifo):
            for sp in on_b1:
                lk = ctl_ok("lookup", vip="web", src="198.51.100.7", sport=sp)
                t = lk["tracked"]
                check(lk["backend"] != "b1" and isinstance(t, dict) and
                      t["backend"] == "b1",
                      f"lookup of b1's flow {sp} after the drain: {lk}")
        w_rm = ctl_ok("whatif", vip="web", action="remove", backend="b1")
        w_add = ctl_ok("whatif", vip="web", action="add", backend="b9")
        # the reload plan of a file without b1: its tracked flows are the
        # ones conntrack would re-select (a dry run, nothing published)
        gen = ctl_ok("status")["generation"]
        with open(cfg, "w") as f:
            f.write(config_text(
                port("ext", "net_pcap0", "10.99.0.1"),
                ["--in-memory", "--no-pci",
                 f"--vdev=net_pcap0,rx_pcap={fifo.path},tx_pcap={out}"],
                vip(backends=("b2", "b3"))))
        # b1's flows (A's share; C avoided it): beyond the 10 % this
        # daemon allows a reload to re-select, which the error says
        r = ctl("reload", dry_run=True)
        moved = 100 * b1_active / (2 * n)
        errors = " ".join(r.get("errors", []))
        check(r["ok"] is False and moved > 10 and
              f"re-selects {b1_active} of VIP web's {2 * n} tracked "
              "connections" in errors and
              "control.reload_budget.connections_moved (10 %)" in errors and
              r["plan"]["vips"][0]["tracked_moved"] == b1_active,
              f"dry run beyond connections_moved: {r}")
        dry = ctl_ok("reload", dry_run=True, force=True)
        (web,) = dry["plan"]["vips"]
        check(web["backends_removed"] == 1 and web["tracked"] == 2 * n and
              web["tracked_moved"] == b1_active and
              ctl_ok("status")["generation"] == gen,
              f"dry run without b1: {web}")
        fifo.close()
        rc = d.stop()
    finally:
        fifo.close()
        d.kill()
    check(rc == 0, f"exit status {rc}")
    frames = read_pcap(out)
    check(len(frames) == 3 * n, f"{len(frames)} frames out, want {3 * n}")
    first_seen, to_b1_new, kept = {}, 0, 0
    for fr in frames:
        dst, sport = outer_dst_and_sport(fr)
        if sport >= 30000:                  # C: new after the drain
            to_b1_new += dst == b1_addr
        elif sport not in first_seen:       # A
            first_seen[sport] = dst
        else:                               # B: established
            check(dst == first_seen[sport],
                  f"established flow {sport} moved {first_seen[sport]} -> "
                  f"{dst}")
            kept += dst == b1_addr
    a_to_b1 = sum(1 for d_ in first_seen.values() if d_ == b1_addr)
    check(a_to_b1 > 0, "no flow went to b1 before the drain (test is void)")
    check(kept == a_to_b1, f"{a_to_b1} flows on b1 before, {kept} after")
    check(to_b1_new == 0, f"{to_b1_new} new flows went to drained b1")
    # the drained b1 still holds exactly its established flows
    check(b1_active == kept, f"b1 active {b1_active}, {kept} flows kept")
    t = w_rm["tracked"]
    check(t["connections"] == 2 * n and t["moved"] == kept and
          abs(t["fraction_moved"] - kept / (2 * n)) < 1e-9,
          f"whatif remove b1 tracked: {t}")
    t = w_add["tracked"]
    check(t["connections"] == 2 * n and t["moved"] == 0 and
          t["fraction_moved"] == 0, f"whatif add b9 tracked: {t}")


# ---- reloads by editing the file ----

# nogroup's members may change the daemon: an admin who is not root
ADMINS = "  admin_group: nogroup\n"


def check_dry_run_other_file(work, text, gen):
    """`reload --dry-run FILE` plans a file beside the configured one: at
    the admin level, and for an admin who is not root only as far as
    that user may read it."""
    os.chmod(work, 0o755)          # others reach the socket and the file
    cand = os.path.join(work, "candidate.yaml")
    with open(cand, "w") as f:
        # web as it runs, web2 gone: beyond vips_removed, so --force
        f.write(text(tuple(f"b{k}" for k in range(1, 12))))
    fd = os.open(cand, os.O_RDONLY | os.O_NOFOLLOW)
    os.fchmod(fd, 0o600)
    # uid 65534 in the socket's group (root's): the read level, refused
    as_reader = {"user": 65534, "group": 0, "extra_groups": []}
    # ... and in nogroup too: an admin who is not root
    as_admin = {"user": 65534, "group": 65534, "extra_groups": [0]}
    ctlcmd = [maglevctl(), "-s", CONTROL["socket"], "reload", "--dry-run",
              "--force"]
    out = run(ctlcmd + [cand], **as_reader)
    check(out.returncode != 0 and "needs the admin level" in out.stderr,
          f"a read-level dry run of another file: {out.returncode} "
          f"{out.stdout} {out.stderr}")
    out = run(ctlcmd + [cand], **as_admin)
    check(out.returncode != 0 and
          "not read for uid 65534: the file belongs to uid 0" in out.stderr,
          f"another user's private file was read: {out.returncode} "
          f"{out.stdout} {out.stderr}")
    os.fchown(fd, 65534, 65534)
    os.close(fd)
    # the caller's own file, named relative to its directory
    out = run(ctlcmd + ["candidate.yaml"], cwd=work, **as_admin)
    check(out.returncode == 0 and "dry run:" in out.stdout and
          "- web2" in out.stdout, f"dry run of the caller's file: "
          f"{out.returncode} {out.stdout} {out.stderr}")
    r = ctl_ok("reload", dry_run=True, force=True, file=cand)
    check(r["applied"] is False and r["plan"]["vips_removed"] == 1 and
          [(v["name"], v["change"]) for v in r["plan"]["vips"]] ==
          [("web2", "removed")], f"dry run of {cand}: {r}")
    r = ctl("reload", file=cand)
    check(r["ok"] is False and "only planned" in r["error"],
          f"another file applied: {r}")
    check(ctl_ok("status")["generation"] == gen, "a dry run published")


def case_reload_file(maglevd, src, work):
    cfg = os.path.join(work, "maglevd.yaml")

    def text(backends, extra_vip="", control=ADMINS):
        return config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                           vip(backends=backends) + extra_vip,
                           control=control)

    with open(cfg, "w") as f:
        f.write(text(("b1", "b2")))
    d = Daemon(maglevd, work, cfg, watch=True)
    try:
        wait_ctl(d)
        # valid edit, saved by rename: a new generation, no signal
        write_atomically(cfg, text(("b1", "b2", "b3"),
                                   vip(name="web2", addr="192.0.2.11")))
        st = ctl_wait(lambda r: r["generation"] == 2, "reload on rename", d)
        check(st["reloads"]["ok"] == 1 and st["reloads"]["last"][0]["ok"],
              f"reloads: {st['reloads']}")
        check([v["name"] for v in ctl_ok("vips")["vips"]] == ["web", "web2"],
              "VIP web2 not added live")

        # invalid edit: rejected whole, generation unchanged, file:line:col
        bad = text(("b1", "b2", "b3")).replace("    backends:\n",
                                               "    backnds:\n")
        write_atomically(cfg, bad)
        st = ctl_wait(lambda r: r["reloads"]["failed"] == 1,
                      "the rejected reload", d)
        bad_line = bad.splitlines().index("    backnds:") + 1
        err = st["reloads"]["last"][0]["error"]
        check(st["generation"] == 2 and not st["reloads"]["last"][0]["ok"],
              f"a rejected reload moved things: {st}")
        check(re.match(rf"{re.escape(cfg)}:{bad_line}:\d+: error: .*backnds",
                       err), f"history error without file:line:col: {err}")
        check(re.search(rf"{re.escape(cfg)}:{bad_line}:\d+: .*backnds",
                        d.log_text()), "log error without file:line:col")
        check(len(ctl_ok("vips")["vips"]) == 2, "old generation replaced")
        # the socket's reload of the same file: the errors in the reply
        r = ctl("reload")
        check(r["ok"] is False and r["generation"] == 2 and
              any(re.match(rf"{re.escape(cfg)}:{bad_line}:\d+: error:", e)
                  for e in r["errors"]), f"socket reload: {r}")

        web2 = vip(name="web2", addr="192.0.2.11")
        # edit in place (no rename): seen too
        with open(cfg, "w") as f:
            f.write(text(("b1", "b2"), web2))
        ctl_wait(lambda r: r["generation"] == 3, "reload on in-place edit", d)
        check(len(ctl_ok("backends", vip="web")["backends"]) == 2,
              "edit not applied")

        # a burst of saves: the last content wins
        for i in range(10):
            write_atomically(cfg, text(tuple(f"b{k}" for k in range(1, i + 3)),
                                       web2))
        ctl_wait(lambda r: len(r["backends"]) == 11,
                 "the last of a burst of edits", d, command="backends",
                 vip="web")
        st = ctl_ok("status")
        check(st["reloads"]["failed"] == 2 and st["generation"] >= 4,
              f"after the burst: {st['reloads']}")
        gen = st["generation"]

        # a truncated file (valid YAML): beyond the reload budget, refused
        # whole with the limit named; the plan is in the reply. The file
        # cannot loosen the budget that judges it.
        write_atomically(cfg, config_text(
            port("ext", "net_null0", "10.99.0.1"), EAL_NULL, vip(backends=("b1",)),
            control=ADMINS +
            "  reload_budget: {vips_removed: 100, backends_lost: 100}\n"))
        st = ctl_wait(lambda r: r["reloads"]["failed"] == 3,
                      "the reload beyond the budget", d)
        err = st["reloads"]["last"][0]["error"]
        check(st["generation"] == gen and
              "control.reload_budget.vips_removed" in err and
              "removes 1 of 2 VIPs" in err, f"budget refusal: {st['reloads']}")
        check(len(ctl_ok("vips")["vips"]) == 2, "refused file applied")
        r = ctl("reload", dry_run=True)
        plan = r["plan"]
        check(r["ok"] is False and r["applied"] is False and
              "would fail" in r["error"] and plan["vips_removed"] == 1 and
              [(v["name"], v["change"], v["usable_before"], v["usable_after"])
               for v in plan["vips"]] ==
              [("web", "changed", 11, 1), ("web2", "removed", 2, 0)],
              f"dry run: {r}")
        out = run([maglevctl(), "-s", CONTROL["socket"], "reload",
                   "--dry-run", "--force"])
        check(out.returncode == 0 and "dry run:" in out.stdout and
              "- web2" in out.stdout and "usable 11 -> 1" in out.stdout,
              f"maglevctl reload --dry-run --force: {out.returncode} "
              f"{out.stdout} {out.stderr}")
        check(ctl_ok("status")["generation"] == gen, "a dry run published")
        check_dry_run_other_file(work, text, gen)
        r = ctl_ok("reload", force=True)
        check(r["applied"] is True and r["generation"] == gen + 1 and
              r["plan"]["vips_removed"] == 1, f"forced reload: {r}")
        check([v["name"] for v in ctl_ok("vips")["vips"]] == ["web"],
              "forced reload not applied")
        check("beyond the budget, forced" in d.log_text(),
              "the forced reload is not logged as such")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")


# ---- health checks against listeners this test owns ----

class TcpListener:
    """A TCP server on (addr, port) that accepts and closes; stop() makes
    the port refuse connections, start() again takes it back."""

    def __init__(self, addr, port_):
        self.addr, self.port = addr, port_
        self.sock = None
        self.thread = None

    def start(self):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((self.addr, self.port))
        s.listen(128)
        self.sock = s
        self.thread = threading.Thread(target=self._serve, args=(s,),
                                       daemon=True)
        self.thread.start()
        return self

    def _serve(self, s):
        while True:
            try:
                r, _, _ = select.select([s], [], [], 0.05)
                if r:
                    c, _ = s.accept()
                    c.close()
            except (OSError, ValueError):
                return
            if self.sock is not s:
                return

    def stop(self):
        s, self.sock = self.sock, None
        if s:
            s.close()
        if self.thread:
            self.thread.join(DEADLINE_S)


class HttpBackend:
    """An HTTP server answering GET /healthz with a status the test sets."""

    def __init__(self, addr, port_):
        self.status = 200
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                code = owner.status if self.path == "/healthz" else 404
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass   # the checker resets after the status line

            def log_message(self, *a):
                pass

        class Server(http.server.ThreadingHTTPServer):
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                pass

        self.server = Server((addr, port_), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05},
                                       daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def free_port(addr="127.0.0.1"):
    s = socket.socket()
    s.bind((addr, 0))
    p = s.getsockname()[1]
    s.close()
    return p


INTERVAL_S, TIMEOUT_S, RISE, FALL = 0.2, 0.1, 2, 3


def health_vip(name, addr, spec, backends):
    lines = [f"  - name: {name}\n", f"    address: {addr}\n",
             "    port: 80\n", "    protocol: tcp\n", "    table_size: 251\n",
             f"    health: {spec}\n", "    backends:\n"]
    for b, a in backends:
        lines.append(f"      - {{name: {b}, address: {a}}}\n")
    return "".join(lines)


def leave_and_rejoin(d, vip_name, backend, take_down, bring_up, reason):
    """Time from take_down() to the backend's slots reaching 0 in its
    VIP's table, then from bring_up() to their return; check both against
    the engine's documented bounds (docs/health.md) with scheduling slack,
    and the reason in health and the log."""
    slack = 1.0
    leave_bound = FALL * INTERVAL_S * 1.1 + TIMEOUT_S + slack
    rise_bound = RISE * INTERVAL_S * 1.1 + TIMEOUT_S + slack
    t0 = time.monotonic()
    take_down()
    ctl_wait(lambda r: slots_of(r)[backend] == 0,
             f"{backend} leaving {vip_name}'s table", d, command="table",
             vip=vip_name)
    left = time.monotonic() - t0
    check(left <= leave_bound,
          f"{backend} left after {left:.2f}s (> {leave_bound:.2f}s)")
    h = [b for b in ctl_ok("health", vip=vip_name)["backends"]
         if b["backend"] == backend][0]
    check(h["up"] is False and h["failures"] >= FALL and
          h["last_ok"] is False and reason in h["last_result"],
          f"health of {backend}: {h}")
    check(re.search(rf"warning: health: .*is down after {FALL} consecutive "
                    rf"failures.*{re.escape(reason)}.*{vip_name}/{backend}",
                    d.log_text()), "no down transition with its reason")
    down_since = h["since_ms"]
    t0 = time.monotonic()
    bring_up()
    ctl_wait(lambda r: slots_of(r)[backend] > 0,
             f"{backend} rejoining {vip_name}'s table", d, command="table",
             vip=vip_name)
    back = time.monotonic() - t0
    check(back <= rise_bound,
          f"{backend} rejoined after {back:.2f}s (> {rise_bound:.2f}s)")
    h = [b for b in ctl_ok("health", vip=vip_name)["backends"]
         if b["backend"] == backend][0]
    check(h["up"] and h["successes"] >= RISE and h["transitions"] >= 2 and
          h["since_ms"] > down_since, f"health after rise: {h}")
    return left, back


def case_health(maglevd, src, work):
    tport, hport = free_port(), free_port()
    spec = (f"{{type: %s, port: %d, interval: {int(INTERVAL_S * 1000)}ms, "
            f"timeout: {int(TIMEOUT_S * 1000)}ms, rise: {RISE}, fall: {FALL}"
            "%s}")
    tcp = [TcpListener("127.0.0.11", tport).start(),
           TcpListener("127.0.0.12", tport).start()]
    http = [HttpBackend("127.0.0.21", hport), HttpBackend("127.0.0.22", hport)]
    vips = (health_vip("tcpvip", "192.0.2.10", spec % ("tcp", tport, ""),
                       [("t1", "127.0.0.11"), ("t2", "127.0.0.12")]) +
            health_vip("httpvip", "192.0.2.20",
                       spec % ("http", hport,
                               ", path: /healthz, expect: 200"),
                       [("h1", "127.0.0.21"), ("h2", "127.0.0.22")]))
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                            vips))
    d = Daemon(maglevd, work, cfg)
    try:
        wait_ctl(d)
        ctl_wait(lambda r: all(b["checks"] >= RISE and b["up"]
                               for b in r["backends"]),
                 "every backend checked and up", d, command="health")

        # tcp: a closed port is refused
        leave_and_rejoin(d, "tcpvip", "t1", tcp[0].stop, tcp[0].start,
                         "Connection refused")
        # http: a wrong status
        def set_status(code):
            return lambda: setattr(http[0], "status", code)
        leave_and_rejoin(d, "httpvip", "h1", set_status(503), set_status(200),
                         "HTTP 503 (expected 200)")

        # every backend of a VIP down: fail open, shown in status
        for t in tcp:
            t.stop()
        st = ctl_wait(lambda r: r["all_down"] == [{"vip": "tcpvip",
                                                   "fail_open": True}],
                      "tcpvip all down, failing open", d)
        # failing open: both stay in the table, so none is "held down"
        check(st["down"] == [], f"down while failing open: {st['down']}")
        h = ctl_ok("health", vip="tcpvip")
        v = h["vips"][0]
        check(v["all_down"] and v["fail_open"] and v["down"] == 2,
              f"all down: {v}")
        check(all(b["up"] is False and b["effective_up"] is True
                  for b in h["backends"]), f"fail-open pairs: {h}")
        check(all(s > 0 for s in slots_of(ctl_ok("table", vip="tcpvip"))
                  .values()), "fail-open table lost a backend")
        check(re.search(r"every backend of VIP tcpvip is down",
                        d.log_text()), "no all-down log line")
        rc = d.stop()
    finally:
        d.kill()
        for t in tcp:
            t.stop()
        for h in http:
            h.close()
    check(rc == 0, f"exit status {rc}")


# ---- scale: 1000 VIPs x 100 backends, one shared backend failing ----

def scale_config(n_vips, n_backends, hport, table_size):
    out = [config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL, "")]
    out.append("defaults:\n"
               f"  table_size: {table_size}\n"
               f"  health: {{type: tcp, port: {hport}, interval: 500ms, "
               "timeout: 200ms, rise: 1, fall: 2}\n")
    # defaults must precede vips: rebuild with vips last
    text = out[0].replace("vips:\n", "") + out[1] + "vips:\n"
    lines = [text]
    for v in range(n_vips):
        lines.append(f"  - name: vip-{v:04d}\n"
                     f"    address: 198.18.{v // 256}.{v % 256}\n"
                     "    port: 80\n    protocol: tcp\n    backends:\n")
        for b in range(n_backends):
            lines.append(f"      - {{name: be-{b:03d}, "
                         f"address: 127.1.0.{b + 1}}}\n")
    return "".join(lines)


def case_scale(maglevd, src, work):
    n_vips, n_backends = 1000, 100
    hport = free_port()
    listeners = [TcpListener(f"127.1.0.{b + 1}", hport).start()
                 for b in range(n_backends)]
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(scale_config(n_vips, n_backends, hport, 10007))
    d = Daemon(maglevd, work, cfg, interval_ms=3600000)
    try:
        wait_ctl(d, "1000 VIPs x 100 backends loaded")
        st = ctl_ok("status")
        check(st["vips"] == n_vips and st["backends"] == n_vips * n_backends,
              f"status: {st['vips']} VIPs, {st['backends']} backends")
        ctl_wait(lambda r: all(b["checks"] >= 1 and b["up"]
                               for b in r["backends"]),
                 "vip-0500's backends checked", d, command="health",
                 vip="vip-0500")
        gen = ctl_ok("status")["generation"]
        # be-007 fails: one probe, 1000 pairs, one generation
        listeners[7].stop()
        st = ctl_wait(lambda r: len(r["down"]) == n_vips,
                      "be-007 down in all 1000 VIPs", d)
        check({x["backend"] for x in st["down"]} == {"be-007"},
              "other backends went down")
        # one batch: a failover generation that reuses every table (be-007
        # keeps its slots, its flows go to second choices), then the
        # rebuild without it
        st = ctl_wait(lambda r: r["generation"] == gen + 2,
                      "the rebuilt generation", d)
        log = d.log_text()
        m = re.search(rf"generation {gen + 1} published \(failover\): "
                      rf"{n_vips} VIP\(s\), 0 table\(s\) rebuilt, "
                      rf"{n_vips} reused", log)
        check(m, "no failover generation reusing every table")
        m = re.search(rf"generation {gen + 2} published \(health\): "
                      rf"{n_vips} VIP\(s\), (\d+) table\(s\) rebuilt",
                      log)
        check(m and int(m.group(1)) == n_vips,
              "the publish did not rebuild every VIP's table")
        check(ctl_ok("status")["generation"] == gen + 2,
              "more than two generations for one batch")
        for name in ("vip-0000", "vip-0999"):
            check(slots_of(ctl_ok("table", vip=name))["be-007"] == 0,
                  f"be-007 still in {name}'s table")
        listeners[7].start()
        ctl_wait(lambda r: r["down"] == [], "be-007 back everywhere", d)
        check(slots_of(ctl_ok("table", vip="vip-0999"))["be-007"] > 0,
              "be-007 did not rejoin")
        rc = d.stop()
    finally:
        d.kill()
        for t in listeners:
            t.stop()
    check(rc == 0, f"exit status {rc}")


def case_include(maglevd, src, work):
    """Fragments: the main file includes vips.d/*.yaml; a new fragment, an
    edited one and a removed one are each seen by the watch; an error in a
    fragment names its file and line; the budget judges the union."""
    cfg = os.path.join(work, "maglevd.yaml")
    frag_dir = os.path.join(work, "vips.d")
    os.mkdir(frag_dir)

    def frag(name, **kw):
        return "vips:\n" + vip(name=name, **kw)

    with open(cfg, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                            vip(backends=("b1", "b2")),
                            control="  reload_budget: {vips_removed: 40}\n")
                .replace("vips:\n", "include: [vips.d/*.yaml]\nvips:\n", 1))
    write_atomically(os.path.join(frag_dir, "api.yaml"),
                     frag("api", addr="192.0.2.11"))
    d = Daemon(maglevd, work, cfg, watch=True)
    try:
        wait_ctl(d)
        names = [v["name"] for v in ctl_ok("vips")["vips"]]
        check(names == ["web", "api"], f"VIPs at start: {names}")
        # a new fragment: reloaded by the watch of vips.d
        write_atomically(os.path.join(frag_dir, "dns.yaml"),
                         frag("dns", addr="192.0.2.12"))
        ctl_wait(lambda r: r["generation"] == 2, "reload on a new fragment", d)
        names = [v["name"] for v in ctl_ok("vips")["vips"]]
        check(names == ["web", "api", "dns"], f"VIPs: {names}")
        # a file the pattern does not match changes nothing
        write_atomically(os.path.join(frag_dir, "notes.txt"), "x: [\n")
        # an edit in place with an error: refused, the fragment named
        path = os.path.join(frag_dir, "api.yaml")
        bad = frag("api", addr="192.0.2.11").replace("    port: 80",
                                                     "    port: 70000")
        with open(path, "w") as f:
            f.write(bad)
        st = ctl_wait(lambda r: r["reloads"]["failed"] == 1,
                      "the rejected fragment", d)
        line = bad.splitlines().index("    port: 70000") + 1
        err = st["reloads"]["last"][0]["error"]
        check(st["generation"] == 2 and
              re.match(rf"{re.escape(path)}:{line}:\d+: error: .*port", err),
              f"fragment error: {st['reloads']}")
        # the same VIP name in two fragments: both places named
        write_atomically(path, frag("dns", addr="192.0.2.13"))
        st = ctl_wait(lambda r: r["reloads"]["failed"] == 2,
                      "the duplicate across fragments", d)
        err = st["reloads"]["last"][0]["error"]
        check("duplicate VIP name 'dns'" in err and "api.yaml" in err and
              "dns.yaml" in err, f"duplicate: {err}")
        write_atomically(path, frag("api", addr="192.0.2.11"))
        ctl_wait(lambda r: r["generation"] == 3, "the fixed fragment", d)
        # removing a fragment: 1 of 3 VIPs, within the 40 % budget
        os.unlink(os.path.join(frag_dir, "dns.yaml"))
        ctl_wait(lambda r: r["generation"] == 4, "reload on a removal", d)
        names = [v["name"] for v in ctl_ok("vips")["vips"]]
        check(names == ["web", "api"], f"VIPs after the removal: {names}")
        # emptying the directory removes 1 of 2: beyond it, refused whole
        os.unlink(path)
        st = ctl_wait(lambda r: r["reloads"]["failed"] == 3,
                      "the removal beyond the budget", d)
        check(st["generation"] == 4 and "vips_removed" in
              st["reloads"]["last"][0]["error"], f"budget: {st['reloads']}")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")


def case_fifo_config(maglevd, src, work):
    """A FIFO (or any non-regular file) put in the config's place never
    blocks the control thread: the watch's reload, SIGHUP and the
    socket's reload refuse it at once, the generation keeps serving, and
    SIGTERM still stops the daemon. --check-config refuses it too."""
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"), EAL_NULL,
                            vip()))
    d = Daemon(maglevd, work, cfg, watch=True)
    try:
        wait_ctl(d)
        fifo = os.path.join(work, "new.fifo")
        os.mkfifo(fifo)
        os.rename(fifo, cfg)                  # seen by the watch
        st = ctl_wait(lambda r: r["reloads"]["failed"] >= 1,
                      "the watch's reload of a FIFO", d)
        check("not a regular file" in st["reloads"]["last"][0]["error"],
              f"FIFO refused without saying why: {st['reloads']}")
        d.signal(signal.SIGHUP)
        ctl_wait(lambda r: r["reloads"]["failed"] >= 2, "SIGHUP on a FIFO", d)
        t0 = time.monotonic()
        r = ctl("reload")
        check(r["ok"] is False and time.monotonic() - t0 < 1 and
              any("not a regular file" in e for e in r["errors"]),
              f"socket reload of a FIFO: {r}")
        check(ctl_ok("status")["generation"] == 1, "a FIFO changed things")
        t0 = time.monotonic()
        out = run([maglevd, "--check-config", cfg])
        check(out.returncode != 0 and time.monotonic() - t0 < 5 and
              "not a regular file" in out.stderr,
              f"--check-config on a FIFO: {out.returncode} {out.stderr}")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc} after reloads of a FIFO")


CASES = {
    "fifo-config": case_fifo_config,
    "include": case_include,
    "drain-packets": case_drain_packets,
    "reload-file": case_reload_file,
    "health": case_health,
    "scale": case_scale,
}
