#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A zero-loss fleet: a schedule of at least five minutes in the routed lab
(tools/lab/lab up --bgp: two instances behind BIRD's ECMP, gue, second
chance with a short window, six backends), in which every kind of event
docs/second-chance.md lists happens while long-lived keep-alive
connections and a stream of fresh ones run. One table builder per run
(--table).

The fleet starts with be1..be5. 40 IPv4 and 40 IPv6 long-lived
connections send a request every 200 ms; fresh requests (a new TCP
connection each, both families, 10 a second each) run all along. The
steps, each change rolled out on LB 1 and then LB 2:

1. be6 joins; the window passes with the connections open; LB 1
   restarts gracefully, so its flows reach LB 2 for the first time after
   LB 2's window ended.
2. be2's weight rises 100 -> 300; LB 2 restarts within the window.
3. be3 is drained over the control socket of both instances; LB 1
   restarts (the state file keeps the drain).
4. LB 2's BIRD session flaps: its flows move to LB 1 and back.
5. Two table changes inside one window, with LB 2 restarted after each:
   be2's weight falls 300 -> 100, then be4 is removed.
6. be1 is drained in the config; LB 1 restarts.
7. be5's nginx stops for 10 s and starts again. The health checks (every
   2 s, down after 10 failures) do not notice: fresh SYNs that reach be5
   find no listener and its maglev-decap hands them on.
8. The fleet runs on until five minutes have passed since step 1 began;
   LB 2 restarts once more.

A restart is graceful (SIGTERM, the router drops the instance within
drain_time, the flows file `<socket>.state.flows` is kept) and the
instance starts again at once, as lab lb stop / start do.

Before each move (restart or flap) the test asks both instances, for
every open connection, which backend it tracks the connection on and
which backend the connection's slot names now (`lookup`): a connection
one instance tracks elsewhere than its slot's owner is at risk, since the
other instance sends it to the owner once it moves. A step with none at
risk is void; the test fails if every step is void. It also prints how
many connections an instance tracks on another backend than the one that
answers them: those live on hand-on alone. Each step prints the
backends' hand-on counters (maglev-decap status) that changed.

Passes when no long-lived connection fails, moves to another backend or
stalls (except those of be4, removed, and of be5, whose nginx stops:
what happens to them is printed), and no fresh request fails, over the
whole run. A failure is printed when seen, with what both instances'
`lookup` said before the move and say now, and the hops of the
connection's slot on each (`table --hops`); the schedule carries on, and
the test fails at the end.

usage: test_fleet_schedule.py [--table maglev|rendezvous|ring]
                              [--forwarding gue] [--vdev af_xdp|af_packet]"""
import json
import os
import re
import socket
import threading
import time

import lablib
from lablib import check, log

CONNS = 40                  # long-lived connections per family
CLIENT = {4: "10.99.0.101", 6: "fd00:99::101"}   # client 1 (cl_addr4/6)
VIP_NAME = {4: "web4", 6: "web6"}
WINDOW_S = 20               # second_chance.window
SCHEDULE_MIN_S = 300        # the schedule lasts at least this long
NGINX_STOP_S = 10           # how long be5's nginx stays stopped
# Health checks slower than the nginx stop: down after FALL failures
# 2 s apart (about 18 s), so the checker never takes be5 out and the
# stopped service's SYNs reach it.
HEALTH = {"interval": "2s", "timeout": "1s", "fall": 10, "rise": 2}
FRESH_RATE = 10             # fresh requests a second, per family
FRESH_CHUNK_S = 10          # one stream.py run
IO_TIMEOUT_S = 10           # a long-lived request may wait out a move
PROGRESS_ROUNDS = 5         # requests every connection answers after a step
CTL_BATCH = 16              # pipelined control requests in flight
HANDON = ("redirected",)    # with the sc_* counters: the hand-on counters


def ctl_many(lab, lb, requests):
    """Control requests pipelined on one connection to LB lb's socket
    (docs/control-protocol.md: replies come in request order); the parsed
    replies. Faster than one maglevctl per request, so a measurement of
    every connection fits well inside the window."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(lab.socket_path(lb))
    f = s.makefile("rwb")
    replies = []
    try:
        for i in range(0, len(requests), CTL_BATCH):
            batch = requests[i:i + CTL_BATCH]
            for r in batch:
                f.write((json.dumps(r) + "\n").encode())
            f.flush()
            for r in batch:
                line = f.readline()
                check(line, "LB %d closed the control socket" % lb)
                reply = json.loads(line)
                check(reply.get("ok"), "LB %d: %s: %s" % (
                    lb, r, reply.get("error")))
                replies.append(reply)
    finally:
        f.close()
        s.close()
    return replies


def decap_counters(lab, be):
    out = lab.lab("exec", "be%d" % be, os.path.join(
        lab.build, "tools", "bin", "maglev-decap", "maglev-decap"),
        "status", "eth0")
    ctr = {}
    for line in out.splitlines():
        f = line.split()
        # sc_carried counts every frame with hops, not a hand-on
        if len(f) >= 2 and f[1].isdigit() and f[0] != "sc_carried" and (
                f[0].startswith("sc_") or f[0] in HANDON):
            ctr[f[0]] = int(f[1])
    return ctr


class Fresh:
    """Fresh requests of both families all along: stream.py runs of
    FRESH_CHUNK_S one after the other, each result kept with its time
    span so a failure can be placed in the schedule."""

    def __init__(self, lab):
        self.lab = lab
        self.chunks = []        # (t0, t1, family, result)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        try:
            while not self.stopping.is_set():
                t0 = time.monotonic()
                sts = [(f, self.lab.stream(f, FRESH_CHUNK_S, FRESH_RATE))
                       for f in (4, 6)]
                for family, st in sts:
                    r = st.result()
                    t1 = time.monotonic()
                    with self.lock:
                        self.chunks.append((t0, t1, family, r))
                    if r["failed"]:
                        log("fresh IPv%d requests from %.1f s to %.1f s: %d "
                            "of %d failed: %s" % (
                                family, t0 - lablib._T0, t1 - lablib._T0,
                                r["failed"], r["ok"] + r["failed"],
                                r["errors"]))
        except Exception as e:      # reported by stop()
            self.error = e

    def totals(self):
        with self.lock:
            ok = sum(r["ok"] for _, _, _, r in self.chunks)
            failed = sum(r["failed"] for _, _, _, r in self.chunks)
        return ok, failed

    def failed_chunks(self):
        with self.lock:
            return [c for c in self.chunks if c[3]["failed"]]

    def stop(self):
        self.stopping.set()
        self.thread.join(FRESH_CHUNK_S + 120)
        check(not self.thread.is_alive(), "the fresh requests did not end")
        if self.error:
            raise self.error


class Schedule:
    def __init__(self, lab, table):
        self.lab = lab
        self.table = table
        self.conns = []
        self.excused = {}           # backend: why its connections may end
        self.failures = []          # counted: (step, family, sport, ...)
        self.excused_failures = []
        self.seen = set()           # (family, sport) already reported
        self.steps = []             # (name, at risk, SYNs, void, failed)
        self.step_name = "start"
        self.step_t0 = time.monotonic()
        self.step_spans = []        # (name, t0, t1)
        self.risk = {}              # (family, sport): lookups of the step
        self.counters = {}
        self.fresh = None

    # --- configuration ----------------------------------------------------
    def config(self, lb, backends):
        text = self.lab.config(lb, backends=backends, **HEALTH)
        extra = ("  table: %s\n  second_chance: {enabled: true, "
                 "window: %ds}\n" % (self.table, WINDOW_S))
        out, n = re.subn(r"(?m)^defaults:\n", "defaults:\n" + extra, text)
        check(n == 1, "the lab config has one defaults section")
        self.lab.write_config(out, lb)

    def tables(self, lb):
        """{vip: table reply} of web4 and web6 on LB lb."""
        replies = ctl_many(self.lab, lb, [
            {"command": "table", "args": {"vip": VIP_NAME[f]}}
            for f in (4, 6)])
        return {r["vip"]: r for r in replies}

    def wait_tables(self, active):
        """Both instances' web4 and web6 tables give slots to exactly the
        backends in active, and the instances agree (same fingerprint)."""
        def agreed():
            seen = {}
            for lb in (1, 2):
                for name, t in self.tables(lb).items():
                    have = {b["name"] for b in t["backends"] if b["slots"]}
                    if have != set(active):
                        return None
                    seen.setdefault(name, set()).add(t["fingerprint"])
            return all(len(fp) == 1 for fp in seen.values())
        lablib.wait_until(agreed, "both instances' tables over %s"
                          % sorted(active), 15, 0.2)

    def roll_out(self, backends, active):
        for lb in (1, 2):
            self.config(lb, backends)
            gen = self.lab.reload(lb)
            self.lab.wait_generation_above(gen, lb)
        self.wait_tables(active)
        log("rolled out on LB 1 and LB 2: %s" % backends)

    def drain_socket(self, backend, active):
        for lb in (1, 2):
            r = self.lab.ctl(lb, "drain", "*", backend)
            log("LB %d: drain '*' %s over the control socket: generation "
                "%s" % (lb, backend, r.get("generation")))
        self.wait_tables(active)

    def wait_window_end(self):
        """Every second-chance VIP on both instances is past its window
        (window_left_ms 0: a connection no entry tracks goes to the
        slot's owner first; the former owners stay hops)."""
        def ended():
            for lb in (1, 2):
                for t in self.tables(lb).values():
                    sc = t["second_chance"]
                    if sc and sc["window_left_ms"]:
                        return False
            return True
        t0 = time.monotonic()
        lablib.wait_until(ended, "the second-chance windows to end",
                          WINDOW_S + 20, 0.5)
        log("the window ended on both instances (%.1f s of waiting); the "
            "connections live on" % (time.monotonic() - t0))

    def window_left(self, lb):
        return {name: t["second_chance"] for name, t in
                self.tables(lb).items()}

    # --- moves ------------------------------------------------------------
    def restart(self, lb):
        other = 3 - lb
        flows = self.lab.socket_path(lb) + ".state.flows"
        t0 = time.monotonic()
        self.lab.stop_lb(lb)
        self.lab.wait_next_hops({other}, "LB %d stopped" % lb, 5)
        check(os.path.exists(flows), "LB %d saved no flows file %s"
              % (lb, flows))
        self.lab.start_lb(lb)
        self.lab.require_control_socket(lb)
        self.lab.wait_next_hops({1, 2}, "LB %d serving again" % lb, 30)
        restored = re.findall(r"flows file \S+: (\d+) of (\d+) flow\(s\) "
                              r"restored", self.lab.lb_log(lb))
        log("LB %d restarted gracefully in %.1f s; flows file: %s of %s "
            "flows restored" % (lb, time.monotonic() - t0,
                                *(restored[-1] if restored else ("?", "?"))))

    def flap(self, lb):
        other = 3 - lb
        t0 = time.monotonic()
        self.lab.bird("stop", lb)
        self.lab.wait_next_hops({other}, "LB %d's BIRD stopped" % lb, 10)
        self.lab.bird("start", lb)
        self.lab.wait_next_hops({1, 2}, "LB %d's BIRD back" % lb, 30)
        log("LB %d's BIRD session flapped: routes back after %.1f s"
            % (lb, time.monotonic() - t0))

    # --- connections ------------------------------------------------------
    def open(self):
        self.conns = [self.lab.longconn(f, CONNS, interval=0.2,
                                        io_timeout=IO_TIMEOUT_S)
                      for f in (4, 6)]

    def states(self):
        """[(family, conn state)] of every long-lived connection."""
        return [(lc.family, c) for lc in self.conns
                for c in lc.state()["conns"]]

    def lookups(self, family_sports):
        """{(family, sport): {lb: lookup reply}} from both instances."""
        out = {k: {} for k in family_sports}
        for lb in (1, 2):
            replies = ctl_many(self.lab, lb, [
                {"command": "lookup", "args": {"vip": VIP_NAME[f],
                                               "src": CLIENT[f],
                                               "sport": sp}}
                for f, sp in family_sports])
            for k, r in zip(family_sports, replies):
                out[k][lb] = r
        return out

    def at_risk(self):
        """The open connections one instance tracks on another backend
        than the one their slot names now; prints them per instance, by
        tracked -> owner, and how many an instance tracks on another
        backend than the one that answers them (those live on hand-on
        alone)."""
        live = [(f, c) for f, c in self.states() if c["error"] is None]
        looked = self.lookups([(f, c["sport"]) for f, c in live])
        risky = set()
        for lb in (1, 2):
            moves, misplaced, tracked = {}, 0, 0
            for f, c in live:
                r = looked[(f, c["sport"])][lb]
                t = r.get("tracked")
                if not isinstance(t, dict) or t["backend"] is None:
                    continue
                tracked += 1
                misplaced += t["backend"] != c["backend"]
                if r.get("backend") != t["backend"]:
                    risky.add((f, c["sport"]))
                    key = "%s->%s" % (t["backend"], r.get("backend"))
                    moves[key] = moves.get(key, 0) + 1
            log("  LB %d tracks %d of %d open connections; at risk %d %s; "
                "tracked elsewhere than the answering backend: %d"
                % (lb, tracked, len(live), sum(moves.values()),
                   dict(sorted(moves.items())), misplaced))
        self.risk = looked
        return risky

    def hops(self, lb, vip):
        """Per slot of vip on LB lb: the backend a new flow goes to, then
        the hops its packets carry (table --hops); None if the generation
        changed during the dump."""
        try:
            r = ctl_many(self.lab, lb, [{"command": "table", "args": {
                "vip": vip, "hops": True}}])[0]
        except lablib.Failure as e:
            log("    LB %d table %s --hops: %s" % (lb, vip, e))
            return None
        names = [b["name"] for b in r["backends"]]
        return [[names[i] for i in h] for h in r["hops"]]

    def mark(self):
        return {(f, c["sport"]): c["ok"] for f, c in self.states()}

    def note_failures(self):
        """Records connections that failed or moved since the last call,
        with both instances' lookups; counted unless their backend is
        excused."""
        bad = [(f, c) for f, c in self.states()
               if (c["error"] or len(c["backends"]) > 1)
               and (f, c["sport"]) not in self.seen]
        if not bad:
            return
        now = self.lookups([(f, c["sport"]) for f, c in bad])
        hops = {}
        for f, c in bad:
            self.seen.add((f, c["sport"]))
            what = c["error"] or "moved %s" % c["backends"]
            before = self.risk.get((f, c["sport"]), {})
            row = (self.step_name, f, c["sport"], c["backend"], what)
            why = self.excused.get(c["backend"])
            (self.excused_failures if why else self.failures).append(row)
            log("%s IPv%d long-lived connection from port %d on %s: %s "
                "(in step '%s')" % ("excused (%s):" % why if why else
                                    "FAILED:", f, c["sport"], c["backend"],
                                    what, self.step_name))
            for lb in (1, 2):
                r = now[(f, c["sport"])][lb]
                if not why:
                    log("    LB %d before the move: %s" % (
                        lb, _brief(before.get(lb))))
                log("    LB %d now: %s" % (lb, _brief(r)))
                if why:
                    continue
                key = (lb, VIP_NAME[f])
                if key not in hops:
                    hops[key] = self.hops(lb, VIP_NAME[f])
                if hops[key]:
                    slot = hops[key][r["slot"]]
                    log("    LB %d slot %d: new flows to %s, hops %s" % (
                        lb, r["slot"], slot[0] if slot else None, slot[1:]))

    def progress(self, since):
        """Every open connection of a backend that is not excused answers
        PROGRESS_ROUNDS more requests since mark since; failures on the
        way are recorded, not raised."""
        def done():
            self.note_failures()
            for f, c in self.states():
                if c["error"] or c["backend"] in self.excused:
                    continue
                if c["ok"] < since.get((f, c["sport"]), 0) + PROGRESS_ROUNDS:
                    return False
            return True
        try:
            lablib.wait_until(done, "the long-lived connections to answer "
                              "%d more requests" % PROGRESS_ROUNDS,
                              IO_TIMEOUT_S + 30, 0.2)
        except lablib.Failure:
            stalled = [(f, c["sport"], c["backend"]) for f, c in
                       self.states() if c["error"] is None and
                       c["backend"] not in self.excused and
                       c["ok"] < since.get((f, c["sport"]), 0)
                       + PROGRESS_ROUNDS]
            log("FAILED: connections stalled in step '%s': %s"
                % (self.step_name, stalled))
            for f, sp, be in stalled:
                self.failures.append((self.step_name, f, sp, be, "stalled"))
                self.seen.add((f, sp))

    # --- steps ------------------------------------------------------------
    def begin(self, name):
        self.step_name = name
        self.step_t0 = time.monotonic()
        log("=== step: %s" % name)

    def measure(self):
        """At risk now, and the counters to diff against at end()."""
        risky = self.at_risk()
        self.counters = {be: decap_counters(self.lab, be)
                         for be in range(1, self.lab.n_backends + 1)}
        return risky

    def end(self, risky, handed=None):
        """Reports the step: at risk, hand-on counters since measure(),
        void when nothing was at risk (handed: SYNs the step put at risk
        instead)."""
        deltas = {}
        for be in range(1, self.lab.n_backends + 1):
            now = decap_counters(self.lab, be)
            d = {k: v - self.counters.get(be, {}).get(k, 0)
                 for k, v in now.items()}
            d = {k: v for k, v in d.items() if v}
            if d:
                deltas["be%d" % be] = d
        n = len(risky) + (handed or 0)
        void = n == 0
        ok, failed = self.fresh.totals()
        broke = sum(1 for r in self.failures if r[0] == self.step_name)
        log("step '%s': %d connections at risk%s; hand-on counters: %s; "
            "long-lived failures %d; fresh requests so far %d ok, %d "
            "failed%s" % (self.step_name, len(risky),
                          "" if handed is None else
                          ", %d SYNs found no listener" % handed,
                          deltas or "none", broke, ok, failed,
                          "; VOID" if void else ""))
        self.steps.append((self.step_name, len(risky), handed, void, broke))
        self.step_spans.append((self.step_name, self.step_t0,
                                time.monotonic()))

    def changed_then(self, name, change, move):
        """A step: the change, the connections at risk, the move."""
        self.begin(name)
        change()
        risky = self.measure()
        marks = self.mark()
        move()
        self.progress(marks)
        self.end(risky)


def _brief(r):
    if not r:
        return "-"
    t = r.get("tracked")
    if isinstance(t, dict):
        t = "%s %s, expires in %d ms" % (t["backend"], t["state"],
                                          t["expires_in_ms"])
    return "slot %s owner %s, tracked %s" % (r.get("slot"), r.get("backend"),
                                             t)


def test(lab, args):
    check(args.forwarding == "gue", "second chance needs --forwarding gue")
    s = Schedule(lab, args.table)
    first = "be1,be2,be3,be4,be5"
    for lb in (1, 2):
        s.config(lb, first)
        lab.start_lb(lb)
    for lb in (1, 2):
        lab.require_control_socket(lb)
    lab.wait_next_hops({1, 2}, "both instances serving", 30)
    s.wait_tables({"be1", "be2", "be3", "be4", "be5"})
    s.open()
    s.fresh = Fresh(lab)
    t_start = time.monotonic()
    try:
        schedule(lab, s)
        # the schedule's own length: the fleet runs on, connections open
        s.begin("hold to %d s, LB 2 restarted" % SCHEDULE_MIN_S)
        left = SCHEDULE_MIN_S - (time.monotonic() - t_start)
        if left > 0:
            log("holding %.0f s more" % left)
            end = time.monotonic() + left
            while time.monotonic() < end:
                time.sleep(min(5, end - time.monotonic()))
                s.note_failures()
        risky = s.measure()
        marks = s.mark()
        s.restart(2)
        s.progress(marks)
        s.end(risky)
    finally:
        s.fresh.stop()
    s.note_failures()
    summary(s, time.monotonic() - t_start)


def schedule(lab, s):
    all6 = {"be1", "be2", "be3", "be4", "be5", "be6"}

    # 1. an add; the window ends with the connections open; then LB 1's
    # flows reach LB 2, which has never seen them, after its window
    def add():
        s.roll_out("be1,be2,be3,be4,be5,be6", all6)
        s.wait_window_end()
    s.changed_then("be6 added, window ended, LB 1 restarted", add,
                   lambda: s.restart(1))

    # 2. a weight raised; LB 2's flows reach LB 1 within the window
    s.changed_then("be2's weight raised to 300, LB 2 restarted",
                   lambda: s.roll_out("be1,be2:300,be3,be4,be5,be6", all6),
                   lambda: s.restart(2))

    # 3. a drain over both instances' control sockets
    active = all6 - {"be3"}
    s.changed_then("be3 drained over the control sockets, LB 1 restarted",
                   lambda: s.drain_socket("be3", active),
                   lambda: s.restart(1))

    # 4. a BIRD session flap: no change, the flows of LB 2 move
    s.changed_then("LB 2's BIRD session flapped", lambda: None,
                   lambda: s.flap(2))

    # 5. two table changes inside one window, LB 2 restarted after each
    s.changed_then("be2's weight lowered to 100 (first change of the "
                   "window), LB 2 restarted",
                   lambda: s.roll_out("be1,be2,be3,be4,be5,be6", active),
                   lambda: s.restart(2))
    left = s.window_left(1)
    log("LB 1's window before the second change: %s" % left)
    check(all(sc["previous_slots"] and sc["window_left_ms"] > 0
              for sc in left.values()),
          "the second change comes inside LB 1's window: %s" % left)
    active -= {"be4"}

    def remove():
        s.note_failures()
        s.roll_out("be1,be2,be3,be5,be6", active)
        s.excused["be4"] = "removed"
    s.changed_then("be4 removed (second change of the window), LB 2 "
                   "restarted again", remove, lambda: s.restart(2))

    # 6. a drain in the config (be3's runtime drain stays)
    active -= {"be1"}
    s.changed_then("be1 drained in the config, LB 1 restarted",
                   lambda: s.roll_out("be1:100:drain,be2,be3,be5,be6",
                                      active),
                   lambda: s.restart(1))

    # 7. be5's service stops for a while its health checks do not notice
    s.begin("be5's nginx stopped for %d s" % NGINX_STOP_S)
    risky = s.measure()
    marks = s.mark()
    before = sum(s.counters[be].get("sc_no_listener", 0) for be in s.counters)
    s.note_failures()
    s.excused["be5"] = "its nginx stopped"
    lab.backend("stop", 5, "http")
    end = time.monotonic() + NGINX_STOP_S
    while time.monotonic() < end:
        time.sleep(min(1, end - time.monotonic()))
        s.note_failures()
    lab.backend("start", 5, "http")
    for lb in (1, 2):
        be5 = [(b["vip"], b["state"], b["healthy"]) for b in
               lab.ctl(lb, "backends")["backends"]
               if b["vip"] in VIP_NAME.values() and b["name"] == "be5"]
        check(len(be5) == 2 and all(st == "active" and healthy
                                    for _, st, healthy in be5),
              "LB %d's health checks took be5 out while its nginx was "
              "stopped (the checks must be slower than the stop): %s"
              % (lb, be5))
    s.progress(marks)
    handed = sum(decap_counters(lab, be).get("sc_no_listener", 0)
                 for be in range(1, lab.n_backends + 1)) - before
    s.end(risky, handed)


def summary(s, took):
    log("=== schedule of %.0f s, table %s, window %d s" % (
        took, s.table, WINDOW_S))
    for name, n, handed, void, broke in s.steps:
        log("  %-72s at risk %3d%s%s, long-lived failures %d"
            % (name, n, "" if handed is None else
               ", %d SYNs without a listener" % handed,
               " (void)" if void else "", broke))
    ok, failed = s.fresh.totals()
    log("fresh requests: %d ok, %d failed" % (ok, failed))
    for t0, t1, family, r in s.fresh.failed_chunks():
        during = [name for name, a, b in s.step_spans if a < t1 and b > t0]
        log("  IPv%d, %.1f s .. %.1f s (steps %s): %s" % (
            family, t0 - lablib._T0, t1 - lablib._T0, during, r["errors"]))
    by = {}
    for f, c in s.states():
        key = (c["backend"], c["error"] or ("moved" if len(c["backends"]) > 1
                                            else "open"))
        by[key] = by.get(key, 0) + 1
    log("long-lived connections at the end, by backend and outcome: %s"
        % dict(sorted(by.items())))
    for row in s.excused_failures:
        log("  excused: step '%s', IPv%d port %d on %s: %s" % row)
    for row in s.failures:
        log("  FAILED: step '%s', IPv%d port %d on %s: %s" % row)
    check(not s.failures, "%d long-lived connections failed, moved or "
          "stalled (their backends neither removed nor stopped)"
          % len(s.failures))
    check(failed == 0, "%d fresh requests failed" % failed)
    check(not all(void for _, _, _, void, _ in s.steps),
          "every step was void: nothing was at risk")


def add_args(ap):
    ap.add_argument("--table", choices=["maglev", "rendezvous", "ring"],
                    default="maglev")
    ap.set_defaults(forwarding="gue")   # the hops travel in GUE only


if __name__ == "__main__":
    lablib.run(test, backends=6, clients=1, bgp=True, add_args=add_args)
