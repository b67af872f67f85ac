# SPDX-License-Identifier: BSD-3-Clause
"""Runtime overrides kept across a restart, and VIP routes for a routing daemon (docs/scale-out.md), against the real
kernel: maglevd runs in a network namespace the case creates (and
removes), with announce.table set; the case reads that namespace's routing
table with iproute2. Announce once serving, withdraw on drain, reload and
health-free backend loss, the graceful stop (routes first, forwarding for
drain_time, a second signal or `shutdown --now` at once), and no route
left after SIGKILL."""
import os
import re
import signal
import subprocess
import time

from daemon_util import (CONTROL, DEADLINE_S, Daemon, Skip, check,
                         config_text, ctl, ctl_ok, maglevctl, null_config,
                         port, run, vip, wait_ctl, wait_until)

TABLE = 100
DEVICE = "mlv-vips"


class Ns:
    """A network namespace of the case's own."""

    def __init__(self, tag):
        self.name = f"{tag}{os.getpid()}"
        self.made = False

    def __enter__(self):
        if os.geteuid() != 0:
            raise Skip("needs root for a network namespace")
        r = run(["ip", "netns", "add", self.name])
        check(r.returncode == 0, f"ip netns add: {r.stderr}")
        self.made = True
        run(["ip", "-n", self.name, "link", "set", "lo", "up"])
        return self

    def __exit__(self, *exc):
        if self.made:
            run(["ip", "netns", "del", self.name])

    def routes(self, table=TABLE):
        """Our protocol's routes in table: {address: device}."""
        out = {}
        for fam in ("-4", "-6"):
            r = run(["ip", "-n", self.name, fam, "route", "show", "table",
                     str(table), "proto", "250"])
            for line in r.stdout.splitlines():
                f = line.split()
                if len(f) >= 3 and f[1] == "dev":
                    out[f[0]] = f[2]
        return out

    def has_link(self, dev):
        return run(["ip", "-n", self.name, "link", "show", dev]).returncode == 0


PORT = port("ext", "net_null0", "10.99.0.1", ', address6: "fd00:99::1"')


def announce_config(work, vips, drain="2s", table=TABLE, extra=""):
    path = os.path.join(work, "maglevd.yaml")
    text = config_text(PORT,
                       ["--in-memory", "--no-pci", "--vdev=net_null0"], vips)
    text = text.replace(
        "vips:\n", f"announce: {{table: {table}, drain_time: {drain}, "
        f"device: {DEVICE}}}\n{extra}vips:\n", 1)
    with open(path, "w") as f:
        f.write(text)
    return path


VIPS = (vip("web4", ("b1", "b2"), "192.0.2.10") +
        vip("web6", ("b1",), "2001:db8::10").replace(
            "10.99.1.11", "2001:db8:1::11"))
BOTH = {"192.0.2.10": DEVICE, "2001:db8::10": DEVICE}


def start(ns, maglevd, work, cfg):
    d = Daemon(maglevd, work, cfg, prefix=["ip", "netns", "exec", ns.name])
    wait_ctl(d)
    return d


def wait_routes(ns, want, d, what):
    wait_until(lambda: ns.routes() == want, f"{what}: routes {want} "
               f"(have {ns.routes()})", d.proc, deadline_s=10)


def status_announce():
    return ctl_ok("status")["announce"]


def case_announce(maglevd, src, work):
    with Ns("mlvan") as ns:
        d = start(ns, maglevd, work, announce_config(work, VIPS))
        try:
            wait_routes(ns, BOTH, d, "serving")
            a = status_announce()
            check(a["enabled"] and a["open"] and a["table"] == TABLE and
                  a["device"] == DEVICE and a["routes"] == 2,
                  f"status announce: {a}")
            check(all(v["announced"] and v["serving"] for v in a["vips"]),
                  f"every VIP announced: {a['vips']}")
            announces = a["announces"]

            # one of web4's two backends drained: still serving (min 1);
            # both: withdrawn, and only web4
            ctl_ok("drain", vip="web4", backend="b1")
            time.sleep(0.2)
            check(ns.routes() == BOTH, f"one drained: {ns.routes()}")
            t0 = time.monotonic()
            ctl_ok("drain", vip="web4", backend="b2")
            wait_routes(ns, {"2001:db8::10": DEVICE}, d, "web4 drained")
            print(f"last usable backend drained: route gone "
                  f"{(time.monotonic() - t0) * 1000:.1f} ms after the "
                  "command was sent")
            v = {x["name"]: x for x in status_announce()["vips"]}
            check(not v["web4"]["serving"] and not v["web4"]["announced"] and
                  v["web4"]["usable"] == 0 and v["web6"]["announced"],
                  f"web4 withdrawn alone: {v}")
            ctl_ok("undrain", vip="web4", backend="b1")
            wait_routes(ns, BOTH, d, "web4 back")

            # routes flushed behind maglevd's back come back (re-asserted
            # every 10 s)
            run(["ip", "-n", ns.name, "route", "flush", "table", str(TABLE),
                 "proto", "250"])
            run(["ip", "-n", ns.name, "-6", "route", "flush", "table",
                 str(TABLE), "proto", "250"])
            check(ns.routes() == {}, "flushed")
            wait_until(lambda: ns.routes() == BOTH, "routes re-asserted",
                       d.proc, deadline_s=15)
            a = status_announce()
            check(a["announces"] == announces + 1 and a["withdraws"] == 1,
                  f"one withdraw and one announce counted: {a}")

            # a reload that removes web6 withdraws it (half the VIPs:
            # beyond the default budget, so forced); min_backends 2 on
            # web4 (2 backends) keeps it out: a warning, not an error
            announce_config(
                work, vip("web4", ("b1", "b2"), "192.0.2.10").replace(
                    "    backends:\n",
                    "    announce: {min_backends: 2}\n    backends:\n"))
            ctl_ok("reload", force=True)
            wait_routes(ns, {}, d, "web6 removed, web4 below min_backends "
                        "(b2 still drained)")
            ctl_ok("undrain", vip="web4", backend="b2")
            wait_routes(ns, {"192.0.2.10": DEVICE}, d, "web4 with 2 usable")

            # announce.table is reloadable: the routes move
            announce_config(work, VIPS, table=101)
            ctl_ok("reload")
            wait_until(lambda: ns.routes(101) == BOTH and ns.routes() == {},
                       f"routes moved to table 101: {ns.routes(101)}, "
                       f"{ns.routes()}", d.proc, deadline_s=10)
            check(status_announce()["table"] == 101, "status says 101")
            # and 0 turns announcing off: the device goes with the routes
            path = os.path.join(work, "maglevd.yaml")
            with open(path, "w") as f:
                f.write(config_text(PORT, ["--in-memory", "--no-pci",
                                           "--vdev=net_null0"], VIPS))
            ctl_ok("reload")
            wait_until(lambda: ns.routes(101) == {} and
                       not ns.has_link(DEVICE), "announcing off", d.proc,
                       deadline_s=10)
            check(status_announce()["enabled"] is False, "status: off")
        finally:
            d.kill()
        # the process is gone: so are its device and routes
        wait_until(lambda: not ns.has_link(DEVICE) and ns.routes() == {},
                   "device and routes gone with the process", deadline_s=10)


def case_announce_stop(maglevd, src, work):
    with Ns("mlvas") as ns:
        # SIGTERM: routes go at once, forwarding goes on for drain_time
        d = start(ns, maglevd, work, announce_config(work, VIPS, drain="3s"))
        try:
            wait_routes(ns, BOTH, d, "serving")
            t0 = time.monotonic()
            d.signal(signal.SIGTERM)
            wait_routes(ns, {}, d, "withdrawn on SIGTERM")
            withdrawn = time.monotonic() - t0
            check(withdrawn < 1.0, f"routes withdrawn after {withdrawn:.2f}s")
            a = status_announce()
            check(a["stopping"] and 0 < a["stop_in_ms"] <= 3000 and
                  not any(v["announced"] for v in a["vips"]),
                  f"stopping, withdrawn: {a}")
            check(d.proc.poll() is None, "still running while draining")
            rc = d.proc.wait(timeout=DEADLINE_S)
            took = time.monotonic() - t0
            check(rc == 0, f"exit status {rc}")
            check(2.5 <= took < 10, f"exited {took:.2f}s after SIGTERM, "
                  "want about the 3 s drain time")
            check("drain time over: stopping" in d.log_text(), "log says why")
        finally:
            d.kill()

        # a second SIGTERM stops at once
        d = start(ns, maglevd, work, announce_config(work, VIPS, drain="60s"))
        try:
            wait_routes(ns, BOTH, d, "serving again")
            d.signal(signal.SIGTERM)
            wait_routes(ns, {}, d, "withdrawn")
            t0 = time.monotonic()
            d.signal(signal.SIGTERM)
            rc = d.proc.wait(timeout=DEADLINE_S)
            check(rc == 0 and time.monotonic() - t0 < 5,
                  f"second SIGTERM: exit {rc} after "
                  f"{time.monotonic() - t0:.2f}s")
        finally:
            d.kill()

        # `shutdown` over the socket: the same drain; `--now` cuts it short
        d = start(ns, maglevd, work, announce_config(work, VIPS, drain="60s"))
        try:
            wait_routes(ns, BOTH, d, "serving again")
            r = ctl_ok("shutdown")
            check(r["now"] is False and 0 < r["stop_in_ms"] <= 60000,
                  f"shutdown reply: {r}")
            wait_routes(ns, {}, d, "withdrawn by shutdown")
            # a second graceful shutdown changes nothing: still draining
            r2 = ctl_ok("shutdown")
            check(r2["now"] is False and r2["stop_in_ms"] <= r["stop_in_ms"],
                  f"second shutdown reply: {r2}")
            time.sleep(0.3)
            check(d.proc.poll() is None, "still draining after a second "
                  "shutdown without --now")
            r = ctl_ok("shutdown", now=True)
            check(r["now"] is True, f"shutdown --now reply: {r}")
            rc = d.proc.wait(timeout=DEADLINE_S)
            check(rc == 0, f"exit status {rc}")
        finally:
            d.kill()

        # announcing off: SIGTERM stops at once
        path = os.path.join(work, "plain.yaml")
        with open(path, "w") as f:
            f.write(config_text(PORT, ["--in-memory", "--no-pci",
                                 "--vdev=net_null0"], VIPS))
        d = start(ns, maglevd, work, path)
        try:
            check(ctl_ok("status")["announce"]["enabled"] is False,
                  "announce off by default")
            t0 = time.monotonic()
            d.signal(signal.SIGTERM)
            rc = d.proc.wait(timeout=DEADLINE_S)
            check(rc == 0 and time.monotonic() - t0 < 5, f"exit {rc}")
            check(ns.routes() == {} and not ns.has_link(DEVICE),
                  "nothing announced when off")
        finally:
            d.kill()


def case_announce_kill(maglevd, src, work):
    with Ns("mlvak") as ns:
        d = start(ns, maglevd, work, announce_config(work, VIPS))
        try:
            wait_routes(ns, BOTH, d, "serving")
            check(ns.has_link(DEVICE), "the announce device exists")
            t0 = time.monotonic()
            d.proc.send_signal(signal.SIGKILL)
            d.proc.wait(timeout=DEADLINE_S)
            wait_until(lambda: ns.routes() == {} and not ns.has_link(DEVICE),
                       "routes and device gone after SIGKILL",
                       deadline_s=10)
            gone = time.monotonic() - t0
            print(f"routes gone {gone * 1000:.0f} ms after SIGKILL")
        finally:
            d.kill()

        # a stale route of ours (left by hand) is removed at start; a
        # device of that name that someone else holds stops the start
        run(["ip", "-n", ns.name, "tuntap", "add", "mode", "tun", "stale0"])
        run(["ip", "-n", ns.name, "link", "set", "stale0", "up"])
        r = run(["ip", "-n", ns.name, "route", "add", "198.51.100.9/32",
                 "dev", "stale0", "table", str(TABLE), "proto", "250"])
        check(r.returncode == 0, f"stale route: {r.stderr}")
        d = start(ns, maglevd, work, announce_config(work, VIPS))
        try:
            wait_routes(ns, BOTH, d, "serving, the stale route gone")
        finally:
            d.kill()
        run(["ip", "-n", ns.name, "tuntap", "add", "mode", "tun", DEVICE])
        d = start(ns, maglevd, work, announce_config(work, VIPS))
        try:
            a = status_announce()
            check(not a["open"] and a["errors"] >= 1 and
                  "each instance needs its own announce.device" in
                  (a["last_error"] or ""), f"device taken: {a}")
            check(ns.routes() == {}, "nothing announced")
            # forwarding is unaffected: the daemon serves its generation
            check(ctl_ok("status")["generation"] >= 1, "still serving")
        finally:
            d.kill()


def case_restart_keeps_overrides(maglevd, src, work):
    """A drain and a weight set over the socket survive a restart (the
    state file beside the socket); one whose backend left the config is
    dropped at start; a broken state file is logged and ignored."""
    state = CONTROL["socket"] + ".state"
    cfg = null_config(work, vips=vip("web", ("b1", "b2", "b3")))
    d = Daemon(maglevd, work, cfg)
    try:
        wait_ctl(d)
        ctl_ok("drain", vip="web", backend="b1")
        ctl_ok("weight", vip="web", backend="b2", weight=7)
        check(os.path.exists(state), f"{state} written")
        check(d.stop() == 0, "clean stop")
    finally:
        d.kill()

    d = Daemon(maglevd, work, cfg)
    try:
        wait_ctl(d)
        ov = {(o["vip"], o["backend"]): o for o in ctl_ok("status")["overrides"]}
        check(ov.get(("web", "b1"), {}).get("drain") is True and
              ov.get(("web", "b2"), {}).get("weight") == 7 and len(ov) == 2,
              f"overrides after the restart: {ov}")
        be = {b["name"]: b for b in ctl_ok("backends", vip="web")["backends"]}
        check(be["b1"]["state"] == "draining" and be["b1"]["slots"] == 0 and
              be["b2"]["weight"] == 7, f"the generation applies them: {be}")
        log = d.log_text()
        check("2 runtime override(s) restored" in log, "logged")
        # DPDK's lines come through maglevd's logger (a UTC timestamp,
        # then maglevd's prefix: stderr is a file, not the journal), the
        # harmless start-up complaints quietened to debug
        stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z maglevd: "
        check(all(re.match(stamp, l) for l in log.splitlines() if l),
              f"a line without maglevd's prefix: {log[:600]!r}")
        check("hugetlbfs" not in log, "the hugetlbfs complaint is debug")
        check(d.stop() == 0, "clean stop")
    finally:
        d.kill()

    # b1 left the config: its drain is dropped (and the file rewritten)
    cfg = null_config(work, vips=vip("web", ("b2", "b3")))
    d = Daemon(maglevd, work, cfg)
    try:
        wait_ctl(d)
        ov = ctl_ok("status")["overrides"]
        check([(o["backend"], o.get("weight")) for o in ov] == [("b2", 7)],
              f"only b2's weight kept: {ov}")
        check("override of web/b1 dropped" in d.log_text(), "drop logged")
        check(d.stop() == 0, "clean stop")
    finally:
        d.kill()
    with open(state) as f:
        check('"b1"' not in f.read(), "the file no longer has b1")

    # garbage in the file: an error in the log, a start without it
    with open(state, "w") as f:
        f.write("{not json")
    d = Daemon(maglevd, work, cfg)
    try:
        wait_ctl(d)
        check(ctl_ok("status")["overrides"] == [], "nothing restored")
        check("starting without its overrides" in d.log_text(),
              "the bad file is named in the log")
    finally:
        d.kill()


def case_drain_every_vip(maglevd, src, work):
    """drain '*' BACKEND: the backend drained in every VIP that has it, in
    one generation; undrain '*' lifts them; a backend no VIP has is an
    error; maglevctl takes the same words."""
    vips = (vip("web", ("b1", "b2")) +
            vip("api", ("b1", "b3"), addr="192.0.2.11") +
            vip("other", ("b2", "b3"), addr="192.0.2.12"))
    d = Daemon(maglevd, work, null_config(work, vips=vips))
    try:
        wait_ctl(d)
        gen = ctl_ok("status")["generation"]
        r = ctl_ok("drain", vip="*", backend="b1")
        check(sorted(r["vips"]) == ["api", "web"] and
              r["generation"] == gen + 1, f"one generation: {r}")
        ov = sorted((o["vip"], o["backend"], o["drain"])
                    for o in ctl_ok("status")["overrides"])
        check(ov == [("api", "b1", True), ("web", "b1", True)],
              f"drained in both: {ov}")
        for v in ("web", "api"):
            b = {x["name"]: x for x in ctl_ok("backends", vip=v)["backends"]}
            check(b["b1"]["state"] == "draining" and b["b1"]["slots"] == 0,
                  f"{v}: {b['b1']}")
        r = run([maglevctl(), "-s", CONTROL["socket"], "undrain", "*", "b1"])
        check(r.returncode == 0 and "applied" in r.stdout,
              f"maglevctl undrain '*': {r.returncode} {r.stdout} {r.stderr}")
        check(ctl_ok("status")["overrides"] == [], "lifted everywhere")
        r = ctl("drain", vip="*", backend="nosuch")
        check(r["ok"] is False and "no VIP has a backend named" in r["error"],
              f"unknown backend: {r}")
        # by address: 10.99.1.12 is web's b2, api's b3 and other's b3
        gen = ctl_ok("status")["generation"]
        r = ctl_ok("drain", vip="*", backend="10.99.1.12")
        check(r["matched"] == "address" and r["generation"] == gen + 1 and
              list(zip(r["vips"], r["backends"])) ==
              [("web", "b2"), ("api", "b3"), ("other", "b3")],
              f"drain by address: {r}")
        ov = sorted((o["vip"], o["backend"]) for o in
                    ctl_ok("status")["overrides"] if o["drain"])
        check(ov == [("api", "b3"), ("other", "b3"), ("web", "b2")],
              f"drained by address: {ov}")
        out = run([maglevctl(), "-s", CONTROL["socket"], "undrain", "*",
                   "10.99.1.12"])
        check(out.returncode == 0 and "  other/b3" in out.stdout,
              f"maglevctl undrain by address: {out.stdout} {out.stderr}")
        check(ctl_ok("status")["overrides"] == [], "lifted by address")
        r = ctl("drain", vip="*", backend="10.99.9.9")
        check(r["ok"] is False and "no VIP has a backend at 10.99.9.9" in
              r["error"], f"an address no VIP has: {r}")
    finally:
        d.kill()


CASES = {
    "restart-keeps-overrides": case_restart_keeps_overrides,
    "drain-every-vip": case_drain_every_vip,
    "announce": case_announce,
    "announce-stop": case_announce_stop,
    "announce-kill": case_announce_kill,
}
