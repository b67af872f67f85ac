# SPDX-License-Identifier: BSD-3-Clause
"""Harness of the integration tests: drives the namespace lab
(tools/lab/lab), maglevd inside it, and client programs inside the client
namespaces (burst.py, longconn.py).

Every test runs in its own lab under the prefix "mlvt" (namespaces
mlvt-*, state in /run/mlvt-lab), so it never disturbs a lab someone
brought up by hand (prefix "mlv"); tools/soak uses "mlvs"
($MLV_LAB_TEST_PREFIX). A lock serialises concurrent runs; a
lab a killed run left behind is torn down by the next one ("lab up"
starts from nothing). Only addresses inside those namespaces are used.

Exit codes (run()): 0 pass, 1 fail, 77 skip: a feature the test needs is
not wired into maglevd yet (detected, never assumed), with the reason
printed."""
import argparse
import fcntl
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAB = os.path.join(ROOT, "tools", "lab", "lab")
# The namespaces' prefix: the tests' own, so a demo lab ("mlv") can stay
# up beside them; tools/soak takes another so it may run beside both.
PREFIX = os.environ.get("MLV_LAB_TEST_PREFIX", "mlvt")
STATE = "/run/%s-lab" % PREFIX
LOCK = "/run/%s-lab.lock" % PREFIX
LOCK_WAIT_S = 300

VIP4 = "10.99.100.10"
VIP6 = "fd00:99:100::10"
HTTP_PORT = 80
UDP_PORT = 7
VIP_NAMES = {("tcp", 4): "web4", ("tcp", 6): "web6",
             ("udp", 4): "echo4", ("udp", 6): "echo6"}
# Lab health checks (lab config defaults): interval 500ms, fall 3, rise 2.
HEALTH_INTERVAL_S = 0.5
HEALTH_TIMEOUT_S = 0.3
HEALTH_FALL = 3
HEALTH_RISE = 2
STATS_INTERVAL_S = 0.2     # lab lb start passes --stats-interval 200


class Skip(Exception):
    """A feature the test needs is not wired into maglevd yet."""


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def log(msg):
    print("[%7.2f] %s" % (time.monotonic() - _T0, msg), flush=True)


_T0 = time.monotonic()


def wait_until(pred, what, timeout_s, interval_s=0.05):
    """Poll pred() until it returns a true value (returned); Failure after
    timeout_s."""
    end = time.monotonic() + timeout_s
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > end:
            raise Failure("timed out after %gs waiting for %s"
                          % (timeout_s, what))
        time.sleep(interval_s)


def _if(value, pred):
    return value if pred(value) else None


def vip(family):
    return VIP4 if family == 4 else VIP6


class Lab:
    def __init__(self, forwarding, vdev, backends=3, clients=1, bgp=False):
        self.bgp = bgp
        self.forwarding = forwarding
        self.vdev = vdev
        self.n_backends = backends
        self.n_clients = clients
        self.build = os.environ.get("MLV_BUILD_DIR") or os.path.join(ROOT, "build")
        self.env = dict(os.environ, MLV_LAB_PREFIX=PREFIX, MLV_LAB_STATE=STATE,
                        MLV_BUILD_DIR=self.build)
        # Source ports are the flows' only varying field: a random first
        # one makes each run a random sample of flows, which is what the
        # binomial bounds assume (MLV_LAB_SPORT_BASE replays a run).
        self.next_sport = int(os.environ.get("MLV_LAB_SPORT_BASE") or
                              random.randrange(10000, 30000))
        self.longconns = []
        self.is_up = False
        self.routed_lb = 1     # lab up routes the clients' VIPs via LB 1

    # --- the lab script ---------------------------------------------------
    def lab(self, *args, timeout=120, check_rc=True):
        p = subprocess.run([LAB] + [str(a) for a in args], env=self.env,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
        if check_rc and p.returncode != 0:
            raise Failure("lab %s failed (%d): %s%s" % (
                " ".join(map(str, args)), p.returncode, p.stdout, p.stderr))
        return p.stdout

    def up(self):
        self.is_up = True   # even half-way: down() must run
        # --force: a test's lab is its own, whatever an earlier run left
        self.lab("up", "--force", "--forwarding", self.forwarding,
                 "--vdev", self.vdev,
                 "--backends", self.n_backends, "--clients", self.n_clients,
                 *(["--bgp"] if self.bgp else []))
        log("lab up: %s, %s, %d backends; source ports from %d "
            "(MLV_LAB_SPORT_BASE)" % (self.forwarding, self.vdev,
                                     self.n_backends, self.next_sport))

    def down(self):
        for lc in self.longconns:
            lc.stop()
        if self.is_up:
            self.lab("down", check_rc=False)
            self.is_up = False

    def lb_dir(self, lb):
        return os.path.join(STATE, "lb%d" % lb)

    def config_path(self, lb=1):
        return os.path.join(self.lb_dir(lb), "maglevd.yaml")

    def config(self, lb=1, **opts):
        """A lab config for LB lb; opts become --key value (key_with_
        underscores -> --key-with-dashes)."""
        args = ["config", "--instance", lb]
        for k, v in opts.items():
            args += ["--" + k.replace("_", "-"), v]
        return self.lab(*args)

    def write_config(self, text, lb=1):
        """Replace LB lb's config the way editors save: a new file renamed
        over the old one."""
        path = self.config_path(lb)
        with open(path + ".new", "w") as f:
            f.write(text)
        os.replace(path + ".new", path)

    def start_lb(self, lb=1):
        self.lab("lb", "start", lb, timeout=90)
        log("maglevd %d started" % lb)

    def stop_lb(self, lb=1):
        self.lab("lb", "stop", lb, timeout=60)

    def lb_log(self, lb=1):
        try:
            with open(os.path.join(self.lb_dir(lb), "maglevd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def reload(self, lb=1):
        """SIGHUP; returns the generation before it."""
        gen = self.stats(lb)["generation"]
        self.lab("lb", "reload", lb)
        return gen

    def route(self, lb, client=None):
        """The clients' (or one client's) VIP routes via LB lb, or via
        the router ("gw", the routed lab)."""
        self.lab("route", lb, *([client] if client else []))
        if client is None and lb != "gw":
            self.routed_lb = lb
        log("client %s VIP routes now via %s" % (
            client or "*", "the router" if lb == "gw" else "LB %d" % lb))

    def backend(self, action, i, what="all"):
        self.lab("backend", action, i, what)
        log("backend be%d: %s %s" % (i, action, what))

    # --- maglevd state ----------------------------------------------------
    def stats(self, lb=1):
        """The stats file (complete: maglevd renames it into place)."""
        with open(os.path.join(self.lb_dir(lb), "stats.json")) as f:
            return json.load(f)

    def fresh_stats(self, lb=1):
        """The first stats file written after this call, so it counts
        every packet maglevd handled before it (the file is rewritten
        every STATS_INTERVAL_S; "time" is when)."""
        t = time.time()
        return wait_until(lambda: _if(self.stats(lb), lambda s: s["time"] > t),
                          "a fresh stats file from LB %d" % lb, 5, 0.02)

    def stats_vip(self, name, lb=1, stats=None):
        stats = stats or self.stats(lb)
        for v in stats["vips"]:
            if v["name"] == name:
                return v
        raise Failure("VIP %s missing from the stats file" % name)

    def new_flows(self, vip_name, lb=1, stats=None):
        """{backend: new_flows} of one VIP, from the stats file (or the
        stats given)."""
        v = self.stats_vip(vip_name, lb, stats)
        return {b["name"]: b["counters"]["new_flows"] for b in v["backends"]}

    def wait_generation_above(self, gen, lb=1, timeout_s=10):
        return wait_until(lambda: self.stats(lb)["generation"] > gen,
                          "generation > %d on LB %d" % (gen, lb), timeout_s)

    def socket_path(self, lb=1):
        return os.path.join(self.lb_dir(lb), "maglevd.sock")

    def ctl(self, lb, *args, check_ok=True):
        """maglevctl -o json ARGS; the parsed reply (None: no reply)."""
        p = subprocess.run([os.path.join(self.build, "tools", "bin", "maglevctl",
                                         "maglevctl"),
                            "-s", self.socket_path(lb), "-o", "json", "-t", "10"]
                           + [str(a) for a in args],
                           capture_output=True, text=True, timeout=30)
        if p.returncode == 3:
            return None
        try:
            reply = json.loads(p.stdout)
        except json.JSONDecodeError:
            raise Failure("maglevctl %s: not JSON: %r %r"
                          % (" ".join(map(str, args)), p.stdout, p.stderr))
        if check_ok and not reply.get("ok"):
            raise Failure("maglevctl %s: %s" % (" ".join(map(str, args)),
                                                reply.get("error")))
        return reply

    # --- feature detection (Skip when not wired) --------------------------
    def require_control_socket(self, lb=1, wait_s=5):
        """The daemon serves control.socket (docs/control-protocol.md)."""
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            if os.path.exists(self.socket_path(lb)):
                reply = self.ctl(lb, "status", check_ok=False)
                if reply is not None and reply.get("ok"):
                    return
            time.sleep(0.1)
        raise Skip("maglevd does not serve its control socket %s yet (control "
                   "socket not wired into the daemon)" % self.socket_path(lb))

    def require_health(self, lb=1):
        """Health checks run (docs/health.md): the socket answers 'health'."""
        self.require_control_socket(lb)
        reply = self.ctl(lb, "health", check_ok=False)
        if not reply or not reply.get("ok"):
            raise Skip("maglevd does not run health checks yet (health "
                       "command: %s)" % (reply or {}).get("error"))

    def vip_map_entries(self, lb=1):
        """Entries of the steering program's vip_map on LB lb's lb0, or
        None if no steering program is attached."""
        ns = "%s-lb%d" % (PREFIX, lb)
        net = json.loads(subprocess.run(
            ["ip", "netns", "exec", ns, "bpftool", "-j", "net", "show",
             "dev", "lb0"], capture_output=True, text=True, check=True).stdout)
        xdp = net[0]["xdp"] if net else []
        if not xdp:
            return None
        prog = json.loads(subprocess.run(
            ["bpftool", "-j", "prog", "show", "id", str(xdp[0]["id"])],
            capture_output=True, text=True, check=True).stdout)
        if prog.get("name") != "mlv_xdp_steer":
            raise Failure("lb0 carries XDP program %r, not mlv_xdp_steer"
                          % prog.get("name"))
        for mid in prog.get("map_ids", []):
            m = json.loads(subprocess.run(
                ["bpftool", "-j", "map", "show", "id", str(mid)],
                capture_output=True, text=True, check=True).stdout)
            if m.get("name") == "vip_map":
                return json.loads(subprocess.run(
                    ["bpftool", "-j", "map", "dump", "id", str(mid)],
                    capture_output=True, text=True, check=True).stdout)
        raise Failure("mlv_xdp_steer has no vip_map")

    def require_steering(self, lb=1, wait_s=5):
        """AF_XDP mode: maglevd filled the steering program's VIP map with
        the config's 4 VIPs (else VIP traffic never reaches it). Then, in
        any mode: the VIP answers (next hop resolved, backends reached)."""
        if self.vdev == "af_xdp":
            end = time.monotonic() + wait_s
            entries = None
            while time.monotonic() < end:
                entries = self.vip_map_entries(lb)
                if entries is not None and len(entries) >= len(VIP_NAMES):
                    break
                time.sleep(0.1)
            else:
                if entries is None:
                    raise Failure("no XDP program on lb0 although the vdev "
                                  "has xdp_prog= (see the maglevd log)")
                raise Skip("the steering program's vip_map holds %d of %d "
                           "VIPs: maglevd does not sync it yet (AF_XDP "
                           "steering not wired into the daemon)"
                           % (len(entries), len(VIP_NAMES)))
        if lb == self.routed_lb:
            self.wait_serving()

    def wait_serving(self, tries=5):
        """A UDP datagram to the VIP (through the LB the client routes via)
        gets its echo; each try waits 2 s, since maglevd may still be
        resolving its next hop."""
        lb = self.routed_lb
        for _ in range(tries):
            if self.burst("udp", 4, 1, timeout_s=2)["ok"] == 1:
                return
        raise Failure("the VIP does not answer through LB %d after %d tries"
                      % (lb, tries))

    # --- the routed lab (up --bgp) ---------------------------------------
    def next_hops(self, family):
        """The router's next hops for the VIP: the LB numbers (1, 2)."""
        out = self.lab("routes")
        want = VIP4 + " " if family == 4 else VIP6 + " "
        hops, mine = set(), False
        for line in out.splitlines():
            if not line.startswith((" ", "\t")):
                mine = line.startswith(want)
            if mine and " via " in line:
                addr = line.split(" via ")[1].split()[0]
                last = addr.rsplit("." if family == 4 else ":", 1)[1]
                hops.add(int(last))
        return hops

    def wait_next_hops(self, want, what, timeout_s=15):
        """Both families' router next hops become the set want; returns
        the seconds it took."""
        t0 = time.monotonic()
        wait_until(lambda: all(self.next_hops(f) == set(want) for f in (4, 6)),
                   "router next hops %s (%s): have %s / %s" % (
                       sorted(want), what, self.next_hops(4),
                       self.next_hops(6)), timeout_s, 0.01)
        return time.monotonic() - t0

    def bird(self, action, lb):
        self.lab("bird", action, lb)

    def wait_bfd_up(self, lb, timeout_s=15):
        """The router's BFD sessions with LB lb (both families) are Up."""
        addrs = ("10.99.0.%d" % lb, "fd00:99::%d" % lb)

        def up():
            rows = [r.split() for r in self.lab("bfd").splitlines()]
            return all(any(len(r) > 2 and r[0] == a and r[2] == "Up"
                           for r in rows) for a in addrs)
        wait_until(up, "BFD sessions with LB %d up" % lb, timeout_s, 0.1)

    def pid(self, lb, what="maglevd"):
        with open(os.path.join(self.lb_dir(lb), what + ".pid")) as f:
            return int(f.read())

    def stream(self, family, seconds, rate=50, client=1):
        """Fresh HTTP requests to the VIP for `seconds`, `rate` a second
        (stream.py); .result() when done."""
        return Stream(self, family, seconds, rate, client)

    # --- traffic ----------------------------------------------------------
    def sports(self, n):
        first = self.next_sport
        self.next_sport += n
        check(self.next_sport < 60000, "test used too many source ports")
        return first

    def burst(self, proto, family, count, client=1, timeout_s=3):
        """count new flows (http or udp) to the VIP; burst.py's result."""
        first = self.sports(count)
        port = HTTP_PORT if proto == "http" else UDP_PORT
        p = subprocess.run(
            [LAB, "exec", "c%d" % client, sys.executable,
             os.path.join(HERE, "burst.py"), proto, vip(family), str(port),
             str(first), str(count), str(timeout_s)],
            env=self.env, capture_output=True, text=True,
            timeout=60 + count * timeout_s / 8)
        if p.returncode != 0:
            raise Failure("burst.py failed: %s" % p.stderr)
        return json.loads(p.stdout)

    def ping(self, family, count, client=1):
        """count echo requests to the VIP from a client, 0.2 s apart;
        how many were answered."""
        p = subprocess.run(
            [LAB, "exec", "c%d" % client, "ping", "-%d" % family, "-n", "-q",
             "-c", str(count), "-i", "0.2", "-W", "2", vip(family)],
            env=self.env, capture_output=True, text=True,
            timeout=30 + count)
        m = re.search(r"(\d+) received", p.stdout)
        if not m:
            raise Failure("ping gave no summary: %s%s" % (p.stdout, p.stderr))
        return int(m.group(1))

    def longconn(self, family, count, need=None, client=1, interval=None,
                 io_timeout=None):
        """Long-lived connections (longconn.py); interval: seconds between
        requests (a long one leaves them idle after the first);
        io_timeout: seconds a request may take (TCP retransmits across an
        outage shorter than it)."""
        lc = LongConn(self, family, count, need or {}, client, interval,
                      io_timeout)
        self.longconns.append(lc)
        return lc


class Stream:
    """stream.py running in a client namespace."""

    def __init__(self, lab, family, seconds, rate, client):
        count = int(seconds * rate)
        first = lab.sports(count)
        self.proc = subprocess.Popen(
            [LAB, "exec", "c%d" % client, sys.executable,
             os.path.join(HERE, "stream.py"), vip(family), str(HTTP_PORT),
             str(first), str(count), str(rate)],
            env=lab.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.seconds = seconds

    def result(self):
        out, err = self.proc.communicate(timeout=self.seconds + 60)
        if self.proc.returncode != 0:
            raise Failure("stream.py failed: %s" % err)
        return json.loads(out)


class LongConn:
    """longconn.py running in a client namespace."""

    def __init__(self, lab, family, count, need, client, interval=None,
                 io_timeout=None):
        self.lab = lab
        self.state_file = os.path.join(STATE, "longconn-%d-%d.json"
                                       % (family, lab.next_sport))
        first = lab.sports(64)
        argv = [LAB, "exec", "c%d" % client, sys.executable,
                os.path.join(HERE, "longconn.py"), vip(family),
                str(HTTP_PORT), str(first), str(count), self.state_file]
        for name, k in need.items():
            argv += ["--need", "%s=%d" % (name, k)]
        if interval is not None:
            argv += ["--interval", str(interval)]
        if io_timeout is not None:
            argv += ["--io-timeout", str(io_timeout)]
        self.proc = subprocess.Popen(argv, env=lab.env,
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        self.family = family
        st = wait_until(self._ready, "long-lived connections to open", 30)
        check(not st["unmet"], "could not get long-lived connections on %s "
              "within 64 tries" % st["unmet"])
        for c in st["conns"]:
            check(c["error"] is None, "long-lived connection from port %d "
                  "failed while opening: %s" % (c["sport"], c["error"]))
        log("IPv%d: %d long-lived connections: %s" % (
            family, len(st["conns"]), self.by_backend(st)))

    def _ready(self):
        if self.proc.poll() is not None:
            raise Failure("longconn.py exited: %s" % self.proc.stderr.read())
        st = self.state()
        return st if st and st["ready"] else None

    def state(self):
        try:
            with open(self.state_file) as f:
                return json.load(f)
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    @staticmethod
    def by_backend(st):
        out = {}
        for c in st["conns"]:
            out[c["backend"]] = out.get(c["backend"], 0) + 1
        return out

    def mark(self):
        """Answered requests per connection now, for progress()."""
        return {c["sport"]: c["ok"] for c in self.state()["conns"]}

    def wait_progress(self, since, rounds=5, exclude=(), timeout_s=20):
        """Every connection (except those on backends in exclude) answered
        at least `rounds` more requests since mark `since`, with no error
        and no change of backend. Fails at once on the first error."""
        def progressed():
            st = self.state()
            done = True
            for c in st["conns"]:
                if c["backend"] in exclude:
                    continue
                check(c["error"] is None, "IPv%d long-lived connection from "
                      "port %d (backend %s) failed: %s"
                      % (self.family, c["sport"], c["backend"], c["error"]))
                check(len(c["backends"]) == 1, "IPv%d long-lived connection "
                      "from port %d moved between backends: %s"
                      % (self.family, c["sport"], c["backends"]))
                if c["ok"] < since[c["sport"]] + rounds:
                    done = False
            return st if done else None
        return wait_until(progressed, "IPv%d long-lived connections to "
                          "exchange %d more requests" % (self.family, rounds),
                          timeout_s)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def parse_args(add_args=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--forwarding", choices=["ipip", "gue", "l2dsr"],
                    default="ipip")
    ap.add_argument("--vdev", choices=["af_xdp", "af_packet"],
                    default=os.environ.get("MLV_INTEGRATION_VDEV", "af_xdp"))
    if add_args:
        add_args(ap)
    return ap.parse_args()


def run(test, backends=3, clients=1, bgp=False, add_args=None):
    """Run test(lab) in a fresh lab (bgp: the routed one); exit 0 / 1 /
    77. add_args(parser) adds a caller's own arguments: then the test is
    test(lab, args)."""
    args = parse_args(add_args)
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespaces)")
        sys.exit(77)
    # meson's timeout sends SIGTERM: unwind through finally (lab down)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    lock = open(LOCK, "w")
    try:
        wait_until(lambda: _try_lock(lock), "the lab lock %s (another "
                   "integration run?)" % LOCK, LOCK_WAIT_S, 0.5)
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
    lab = Lab(args.forwarding, args.vdev, backends, clients, bgp)
    rc = 1
    try:
        lab.up()
        if add_args:
            test(lab, args)
        else:
            test(lab)
        print("PASS")
        rc = 0
    except Skip as e:
        print("SKIP: %s" % e)
        rc = 77
    except Failure as e:
        print("FAIL: %s" % e)
        _dump_logs(lab)
    except Exception:
        traceback.print_exc()
        _dump_logs(lab)
    finally:
        try:
            lab.down()
        except Exception:
            traceback.print_exc()
    sys.exit(rc)


def _try_lock(f):
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _dump_logs(lab):
    for lb in (1, 2):
        text = lab.lb_log(lb)
        if text:
            print("--- maglevd log, LB %d (last 40 lines) ---" % lb)
            print("\n".join(text.splitlines()[-40:]))
