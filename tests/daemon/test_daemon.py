#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the maglevd executable (suite 'daemon').

Usage: test_daemon.py CASE MAGLEVD SOURCE_ROOT
Environment: MAGLEVCTL (the maglevctl binary, for cases that run it).

Each case runs the real daemon on virtual DPDK devices (net_null, net_pcap;
a few on kernel interfaces in network namespaces the case creates) with
--in-memory --no-pci (the capture case multi-process, for dpdk-dumpcap),
polls its stats file or control socket for the state it expects (never a
fixed sleep), and stops it with signals. The control and live-control
cases are in cases_control.py, cases_live.py and cases_system.py, packet
capture in cases_capture.py; helpers in daemon_util.py. Every wait has a
deadline so a broken daemon fails the test instead of hanging it; only the
daemons started here are ever signalled, by pid.
"""
import json
import os
import struct
import re
import signal
import sys
import tempfile

# the case modules sit next to this file: no __pycache__ in the source tree
sys.dont_write_bytecode = True
import cases_announce  # noqa: E402
import cases_build  # noqa: E402
import cases_capture  # noqa: E402
import cases_control  # noqa: E402
import cases_flows  # noqa: E402
import cases_history  # noqa: E402
import cases_live  # noqa: E402
import cases_pool  # noqa: E402
import cases_system  # noqa: E402
from daemon_util import (CONTROL, NEXT_HOP, Daemon, Failure,  # noqa: E402
                         Skip, accounted, check, config_text, ctl_ok,
                         maglevctl, null_config, port, read_pcap, read_stats,
                         run, tcp_frame, vip, write_pcap)


# ---- cases ----

def case_check_config(maglevd, src, work):
    r = run([maglevd, "--check-config", os.path.join(src, "conf/maglevd.yaml")])
    check(r.returncode == 0, f"example config: exit {r.returncode}: {r.stderr}")
    check(r.stdout.strip() == "OK", f"example config: printed {r.stdout!r}")

    bad = os.path.join(work, "bad.yaml")
    with open(bad, "w") as f:
        f.write(config_text(port("ext", "net_null0", "10.99.0.1"),
                            ["--in-memory"], vip()).replace(
                                "    backends:\n", "    backnds:\n", 1)
                .replace("workers: 1", "workers: many"))
    r = run([maglevd, "--check-config", bad])
    check(r.returncode == 1, f"broken config: exit {r.returncode}")
    check("OK" not in r.stdout, "broken config printed OK")
    lines = open(bad).read().splitlines()
    typo = next(i for i, l in enumerate(lines) if "backnds" in l) + 1
    wl = next(i for i, l in enumerate(lines) if "workers:" in l) + 1
    check(re.search(rf"{re.escape(bad)}:{typo}:\d+: error: .*backnds", r.stderr),
          f"no file:line:col for the typo on line {typo}: {r.stderr}")
    check(re.search(rf"{re.escape(bad)}:{wl}:\d+: error:", r.stderr),
          f"all errors are reported, not just the first: {r.stderr}")

    r = run([maglevd, "--check-config", os.path.join(work, "missing.yaml")])
    check(r.returncode == 1 and "missing.yaml" in r.stderr,
          f"missing file: exit {r.returncode}, {r.stderr!r}")

    # What start-up refuses, --check-config refuses, naming the port: a
    # second port without address6 and a VIP with IPv6 backends. The start
    # fails on the same file.
    v6 = (vip("web6", ("b1",), "2001:db8::10")
          .replace("10.99.1.11", "2001:db8:1::11"))
    two = os.path.join(work, "two.yaml")
    with open(two, "w") as f:
        f.write(config_text(
            port("ext", "net_null0", "10.99.0.1", ', address6: "fd00::1"') +
            port("int", "net_null1", "10.99.0.2"),
            ["--in-memory", "--no-pci", "--vdev=net_null0",
             "--vdev=net_null1"], v6))
    r = run([maglevd, "--check-config", two])
    line = next(i for i, l in enumerate(open(two).read().splitlines())
                if "2001:db8:1::11" in l) + 1
    check(r.returncode == 1 and re.search(
        rf"{re.escape(two)}:{line}:\d+: error: backend 'b1' is IPv6 but port "
        r"'int' has no IPv6 'address6'", r.stderr),
        f"missing address6: exit {r.returncode}, {r.stderr!r}")
    r = run([maglevd, "-c", two, "--no-watch-config"])
    check(r.returncode == 1 and "port 'int' has no IPv6" in r.stderr,
          f"the start refuses it with the same words: {r.returncode} "
          f"{r.stderr[-300:]!r}")


def case_check_cpus(maglevd, src, work):
    """More workers than CPUs, when maglevd picks the lcores: refused by
    --check-config and at start with one line naming the key and the
    CPUs, before DPDK (no EAL usage text); a missing -c file is one line
    too."""
    cfg = null_config(work)
    text = open(cfg).read()
    check("workers: 1" in text, "the null config has one worker")

    def only_cpu0():
        os.sched_setaffinity(0, {0})

    r = run([maglevd, "--check-config", cfg], preexec_fn=only_cpu0)
    check(r.returncode == 1 and re.search(
        r"error: dataplane\.workers: 1 worker needs CPUs 0-1 .* CPUs 0 only",
        r.stderr), f"--check-config on CPU 0: {r.returncode} {r.stderr}")
    r = run([maglevd, "-c", cfg], preexec_fn=only_cpu0)
    errors = [l for l in r.stderr.splitlines() if " error: " in l]
    check(r.returncode == 1 and len(errors) == 1 and
          "dataplane.workers: 1 worker needs CPUs 0-1" in errors[0] and
          "usage" not in r.stderr.lower(),
          f"start on CPU 0: {r.returncode} {r.stderr}")
    # with every CPU of the machine, the same file passes
    r = run([maglevd, "--check-config", cfg])
    check(r.returncode == 0, f"--check-config: {r.returncode} {r.stderr}")

    missing = os.path.join(work, "nope.yaml")
    r = run([maglevd, "-c", missing])
    lines = r.stderr.splitlines()
    check(r.returncode == 1 and len(lines) == 1 and
          re.search(re.escape(missing) + r": cannot open: No such file",
                    lines[0]), f"missing config: {r.returncode} {r.stderr!r}")


def case_log_formats(maglevd, src, work):
    """On the journal (JOURNAL_STREAM names stderr's dev:ino) every line
    starts with its syslog priority; --log-format json writes one object
    per line, DPDK's lines with source "dpdk"."""
    cfg = null_config(work)
    log = os.path.join(work, "maglevd.log")
    open(log, "w").close()
    st = os.stat(log)
    env = dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    d = Daemon(maglevd, work, cfg, env=env)
    try:
        d.wait_stats(lambda s: s["generation"] == 1, "generation 1")
        check(d.stop() == 0, "clean stop")
    finally:
        d.kill()
    with open(log) as f:
        lines = [l for l in f.read().splitlines() if l]
    check(lines and all(re.match(r"<[3467]>maglevd: (error|warning|info|debug): ", l)
                        for l in lines), f"journal lines: {lines[:5]}")
    check(any(l.startswith("<6>maglevd: info: ") for l in lines),
          "no info line at priority 6")

    # a start that fails at the ports: DPDK's lines, then maglevd's error
    r = run([maglevd, "--log-format", "json", "--log-level", "debug", "-c", cfg,
             "--stats-file", os.path.join(work, "json.stats"), "--",
             "--in-memory", "--no-pci", "--vdev=net_null7"])
    objs = [json.loads(l) for l in r.stderr.splitlines() if l]
    check(r.returncode == 1 and objs, f"json run: {r.returncode} {r.stderr}")
    for o in objs:
        check(set(o) <= {"time", "level", "source", "message"} and
              re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"])
              and o["level"] in ("error", "warning", "info", "debug"),
              f"json line {o}")
    check(any(o.get("source") == "dpdk" for o in objs), "no DPDK line")
    check(any(o["level"] == "error" and "net_null0" in o["message"]
              for o in objs), f"no error naming the device: {objs[-3:]}")


def case_usage(maglevd, src, work):
    r = run([maglevd, "--version"])
    check(r.returncode == 0 and re.match(r"maglevd \d+\.\d+", r.stdout),
          f"--version: {r.returncode} {r.stdout!r}")
    version = r.stdout.split()[1]
    r = run([maglevd, "--help"])
    check(r.returncode == 0 and "--check-config" in r.stdout, "--help")
    ctl = os.environ["MAGLEVCTL"]
    r = run([ctl, "--version"])
    check(r.returncode == 0 and r.stdout.split() == ["maglevctl", version],
          f"maglevctl --version: {r.returncode} {r.stdout!r}, not {version}")
    # without -c: the default file; missing, one line says so and how
    r = run([maglevd])
    check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
          and "maglevd.yaml" in r.stderr and "-c FILE" in r.stderr
          and "usage" not in r.stderr,
          f"no -c, no default file: exit {r.returncode}: {r.stderr!r}")
    for bad in (["--frobnicate"], ["-c", "x.yaml", "--log-level", "loud"],
                ["-c", "x.yaml", "extra"]):
        r = run([maglevd] + bad)
        check(r.returncode == 2 and r.stderr, f"{bad}: exit {r.returncode}")


def case_lifecycle(maglevd, src, work):
    # The config's EAL arguments name a device that does not exist; the
    # ones after "--" replace them, so the daemon starts.
    cfg = null_config(work, eal=["--in-memory", "--no-pci",
                                 "--vdev=net_bogus0"])
    d = Daemon(maglevd, work, cfg,
               eal_override=["--in-memory", "--no-pci", "--vdev=net_null0"])
    try:
        doc = d.wait_stats(lambda s: s["generation"] == 1 and
                           s["totals"]["counters"]["rx_packets"] > 0,
                           "generation 1 and received frames")
        check(doc["final"] is False, "running stats marked final")
        check(doc["n_workers"] == 1 and len(doc["workers"]) == 1, "workers")
        web = doc["vips"][0]
        check(re.fullmatch(r"0x[0-9a-f]{16}", web["fingerprint"]),
              f"fingerprint {web['fingerprint']}")
        check([b["name"] for b in web["backends"]] == ["b1", "b2"], "backends")
        # single-process DPDK: capture is off, and the log says why
        check("packet capture: unavailable, --in-memory keeps DPDK "
              "single-process" in d.log_text(), "no word on packet capture")
        ct = doc["workers"][0]["conntrack"]
        check(ct["capacity"] >= 4096, f"conntrack capacity {ct['capacity']}")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc} after SIGTERM")
    doc = read_stats(d.stats)
    check(doc and doc["final"] is True, "no final stats file")
    c = doc["totals"]["counters"]
    # net_null receives all-zero frames: not IP, dropped (no exception port)
    check(c["rx_packets"] > 0, "nothing received")
    check(doc["totals"]["drops"]["not_ip"] == c["rx_packets"],
          "null frames are counted as not_ip drops")
    check(accounted(doc), "final counters do not account for every frame")
    w = doc["workers"][0]
    check(w["counters"]["rx_packets"] == c["rx_packets"],
          "per-worker and summed counters differ")
    check(not [f for f in os.listdir(work) if ".tmp." in f],
          "temporary stats files left behind")


def case_reload(maglevd, src, work):
    cfg = null_config(work)
    d = Daemon(maglevd, work, cfg)
    try:
        d.wait_stats(lambda s: s["generation"] == 1, "generation 1")
        fp1 = d.doc()["vips"][0]["fingerprint"]

        # valid: one more backend -> generation 2, a new table
        null_config(work, vip(backends=("b1", "b2", "b3")))
        d.signal(signal.SIGHUP)
        doc = d.wait_stats(lambda s: s["generation"] == 2, "generation 2")
        check(doc["reloads"] == {"ok": 1, "failed": 0}, f"{doc['reloads']}")
        check(len(doc["vips"][0]["backends"]) == 3, "new backend missing")
        check(doc["vips"][0]["fingerprint"] != fp1, "table did not change")

        # invalid: rejected whole, the generation does not move
        with open(cfg, "a") as f:
            f.write("bogus_key: 1\n")
        bad_line = len(open(cfg).read().splitlines())
        d.signal(signal.SIGHUP)
        doc = d.wait_stats(lambda s: s["reloads"]["failed"] == 1,
                           "the failed reload")
        check(doc["generation"] == 2, "a rejected reload moved the generation")
        check(len(doc["vips"][0]["backends"]) == 3, "old generation replaced")
        check(re.search(rf"{re.escape(cfg)}:{bad_line}:\d+:.*bogus_key",
                        d.log_text()), "reload error without file:line:col")

        # restart-only change: applied VIPs, warned about the rest
        null_config(work, vip(backends=("b1", "b2")), entries=8192)
        d.signal(signal.SIGHUP)
        doc = d.wait_stats(lambda s: s["generation"] == 3, "generation 3")
        check(len(doc["vips"][0]["backends"]) == 2, "VIP change not applied")
        check(doc["workers"][0]["conntrack"]["capacity"] < 8192,
              "conntrack resized without a restart")
        check(re.search(r"warning: .*conntrack.*restart", d.log_text()),
              "no restart warning")
        pending = ctl_ok("status")["restart_pending"]
        check(pending == ["dataplane.conntrack changed"],
              f"status: restart pending: {pending}")
        r = run([maglevctl(), "-s", CONTROL["socket"], "status"])
        check("dataplane.conntrack changed (restart pending)" in r.stdout,
              f"maglevctl status shows it: {r.stdout}")

        # the plan of a dry run: a backend added moves exactly the slots
        # the table dumps differ in, and publishes nothing
        def slot_names(r):
            names = [b["name"] for b in r["backends"]]
            return [names[i] if i >= 0 else None for i in r["slots"]]

        before = slot_names(ctl_ok("table", vip="web", dump=True))
        null_config(work, vip(backends=("b1", "b2", "b3")), entries=8192)
        dry = ctl_ok("reload", dry_run=True)
        check(dry["applied"] is False and dry["generation"] == 3 and
              ctl_ok("status")["generation"] == 3, f"dry run: {dry}")
        (web,) = dry["plan"]["vips"]
        check(web["name"] == "web" and web["backends_added"] == 1 and
              web["usable_after"] == 3 and web["table_size"] == len(before)
              and 0 < web["slots_moved"] < len(before), f"plan: {web}")
        applied = ctl_ok("reload")
        after = slot_names(ctl_ok("table", vip="web", dump=True))
        diff = sum(a != b for a, b in zip(before, after))
        check(applied["generation"] == 4 and
              applied["plan"]["vips"][0]["slots_moved"] == diff ==
              web["slots_moved"] and 0 < after.count("b3") <= diff,
              f"slots moved: plan {web['slots_moved']}, reload "
              f"{applied['plan']['vips'][0]['slots_moved']}, tables {diff}")
        check("generation 4 published, 1 VIP(s): 0 VIP(s) added, 0 removed, "
              "1 changed (web: +b3)" in d.log_text(),
              "the reload's log line does not name what changed")
        out = run([maglevctl(), "-s", CONTROL["socket"], "reload",
                   "--dry-run"])
        check(out.returncode == 0 and "plan: 1 VIP(s) -> 1: 0 added, 0 "
              "removed, 0 changed" in out.stdout, f"maglevctl: {out.stdout}")

        # back-to-back reloads, each as soon as the previous one shows
        for i in range(20):
            d.signal(signal.SIGHUP)
            d.wait_stats(lambda s, want=5 + i: s["generation"] == want,
                         f"generation {5 + i}")
        # a burst: pending SIGHUPs merge (POSIX), so at least one reload
        # happens and the daemon keeps serving
        for _ in range(20):
            d.signal(signal.SIGHUP)
        doc = d.wait_stats(lambda s: s["generation"] > 24, "a reload")
        check(doc["reloads"]["failed"] == 1, "spurious reload failures")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")
    check(accounted(read_stats(d.stats)), "final counters do not add up")


def case_exception(maglevd, src, work):
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            port("ext", "net_null0", "10.99.0.1") +
            port("kern", "net_null1", "10.99.0.2", ", exception: true"),
            ["--in-memory", "--no-pci", "--vdev=net_null0",
             "--vdev=net_null1"], vip()))
    d = Daemon(maglevd, work, cfg)
    try:
        d.wait_stats(lambda s: s["totals"]["counters"]["exception"] > 0,
                     "frames passed to the exception port")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")
    doc = read_stats(d.stats)
    c = doc["totals"]["counters"]
    # non-IP frames from ext go to kern, and kern's own go out of ext
    check(c["exception"] == c["rx_packets"] and
          doc["totals"]["drops"]["total"] == 0,
          f"exception {c['exception']} of {c['rx_packets']}, drops "
          f"{doc['totals']['drops']}")


def two_arm_config(work, n, metrics=""):
    """Two net_pcap ports: ext receives n TCP frames for the VIP from a
    file and hands them to int (tx_port), which writes what it sends.
    Returns the config's path and the two output files."""
    inp = os.path.join(work, "in.pcap")
    ext_out = os.path.join(work, "ext_out.pcap")
    int_out = os.path.join(work, "int_out.pcap")
    write_pcap(inp, [tcp_frame("198.51.100.1", "192.0.2.10", 30000 + i, 80)
                     for i in range(n)])
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            port("ext", "net_pcap0", "10.99.0.1", ", tx_port: int") +
            port("int", "net_pcap1", "10.99.0.2"),
            ["--in-memory", "--no-pci",
             f"--vdev=net_pcap0,rx_pcap={inp},tx_pcap={ext_out}",
             f"--vdev=net_pcap1,tx_pcap={int_out}"], vip(), metrics=metrics))
    return cfg, ext_out, int_out


def case_two_arm(maglevd, src, work):
    n = 50
    cfg, ext_out, int_out = two_arm_config(work, n)
    d = Daemon(maglevd, work, cfg)
    try:
        d.wait_stats(lambda s: s["totals"]["counters"]["rx_packets"] >= n,
                     f"{n} frames received")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")
    doc = read_stats(d.stats)
    check(doc["totals"]["counters"]["forwarded"] == n, "not all forwarded")
    check(read_pcap(ext_out) == [], "encapsulated frames left by the RX port")
    out = read_pcap(int_out)
    check(len(out) == n, f"{len(out)} frames on the transmit port, want {n}")
    for fr in out:
        check(fr[0:6] == bytes.fromhex(NEXT_HOP.replace(":", "")),
              "outer destination MAC is not the next hop")
        check(fr[14 + 9] == 4, "not IPIP")
        check(fr[14 + 12:14 + 16] == bytes([10, 99, 0, 2]),
              "outer source is not the transmitting port's address")
    web = doc["vips"][0]
    check(web["counters"]["packets"] == n and web["counters"]["new_flows"] == n,
          f"VIP counters {web['counters']}")
    check(sum(b["counters"]["packets"] for b in web["backends"]) == n,
          "backend counters do not add up")


def case_port_counters(maglevd, src, work):
    """The NIC counters of each port (rte_eth_stats and xstats, read by
    the control thread) in the stats file, `maglevctl stats --ports` and
    /metrics, and they follow the traffic: the receiving net_pcap port
    counts the frames of its file, the transmitting one the frames it
    wrote."""
    n = 37
    listen = f"127.0.0.1:{cases_control.free_port()}"
    cfg, _, _ = two_arm_config(work, n, metrics=listen)
    d = Daemon(maglevd, work, cfg)

    def ports_of(doc):
        return {p["name"]: p for p in doc.get("ports", [])}

    try:
        doc = d.wait_stats(
            lambda s: ports_of(s).get("ext", {}).get("counters", {})
            .get("rx_packets") == n and
            ports_of(s).get("int", {}).get("counters", {})
            .get("tx_packets") == n, f"{n} frames in and out by the NICs")
        ext, intp = ports_of(doc)["ext"], ports_of(doc)["int"]
        check(ext["device"] == "net_pcap0", f"device {ext['device']}")
        check(ext["counters"]["rx_bytes"] > 0 and
              ext["counters"]["rx_missed"] == 0 and
              ext["counters"]["tx_packets"] == 0 and
              intp["counters"]["rx_packets"] == 0, f"counters {doc['ports']}")
        # the PMD's extended statistics, every one, in the stats file
        check(ext["xstats"].get("rx_good_packets") == n,
              f"xstats {ext.get('xstats')}")
        # the control socket: counters always, xstats with --ports
        r = ctl_ok("stats")
        cp = {p["name"]: p for p in r["ports"]}
        check(cp["ext"]["counters"]["rx_packets"] == n and
              "xstats" not in cp["ext"], f"stats ports {r['ports']}")
        r = run([maglevctl(), "-s", CONTROL["socket"], "stats", "--ports"])
        check(r.returncode == 0 and re.search(r"^rx_packets +%d +0$" % n,
                                              r.stdout, re.M) and
              re.search(r"^rx_good_packets +%d$" % n, r.stdout, re.M),
              f"maglevctl stats --ports: {r.returncode} {r.stdout} {r.stderr}")
        samples, _ = cases_control.scrape(listen)
        for name, p, want in (("maglevd_port_rx_packets_total", "ext", n),
                              ("maglevd_port_tx_packets_total", "int", n),
                              ("maglevd_port_rx_missed_packets_total", "ext", 0)):
            got = samples.get((name, f'{{port="{p}"}}'))
            check(got == want, f"{name}{{port={p}}} = {got}, want {want}")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")
    # the final file has the counters read just before the ports closed
    final = ports_of(read_stats(d.stats))
    check(final["ext"]["counters"]["rx_packets"] == n and
          final["int"]["counters"]["tx_packets"] == n,
          f"final ports {final}")


def case_two_workers(maglevd, src, work):
    """Two workers, each with its own RX and TX queue on the port (two
    net_pcap queues: one file each, since pcap vdevs have no RSS). Both
    files carry the same flows, so each flow reaches both workers: their
    conntrack tables are separate, and they must still pick the same
    backend, from the shared table."""
    n = 40
    ins = [os.path.join(work, f"in{q}.pcap") for q in range(2)]
    outs = [os.path.join(work, f"out{q}.pcap") for q in range(2)]
    for q in range(2):
        write_pcap(ins[q], [tcp_frame("198.51.100.1", "192.0.2.10",
                                      30000 + i, 80) for i in range(n)])
    cfg = os.path.join(work, "maglevd.yaml")
    with open(cfg, "w") as f:
        f.write(config_text(
            port("ext", "net_pcap0", "10.99.0.1"),
            ["--in-memory", "--no-pci", "--lcores=0@0,1@1,2@1",
             "--vdev=net_pcap0," + ",".join(
                 f"rx_pcap={ins[q]},tx_pcap={outs[q]}" for q in range(2))],
            vip(), workers=2))
    d = Daemon(maglevd, work, cfg)
    try:
        d.wait_stats(lambda s: s["totals"]["counters"]["rx_packets"] >= 2 * n,
                     f"{2 * n} frames received")
        rc = d.stop()
    finally:
        d.kill()
    check(rc == 0, f"exit status {rc}")
    doc = read_stats(d.stats)
    check(len(doc["workers"]) == 2, f"{len(doc['workers'])} workers")
    for w in doc["workers"]:
        c = w["counters"]
        check(c["rx_packets"] == n and c["forwarded"] == n,
              f"worker {w['id']}: rx {c['rx_packets']}, forwarded "
              f"{c['forwarded']}, want {n} each")
        check(w["conntrack"]["occupancy"] == n,
              f"worker {w['id']} tracks {w['conntrack']['occupancy']} flows")
    backend_of = [{}, {}]
    for q in range(2):
        out = read_pcap(outs[q])
        check(len(out) == n, f"queue {q}: {len(out)} frames out, want {n}")
        for fr in out:
            inner = fr[14 + 20:]
            sport = struct.unpack("!H", inner[20:22])[0]
            backend_of[q][sport] = fr[14 + 16:14 + 20]
    check(backend_of[0] == backend_of[1],
          "the two workers chose different backends for the same flows")
    check(len(set(backend_of[0].values())) == 2,
          "40 flows all went to one of two backends")


def case_refuse(maglevd, src, work):
    def start(text, why):
        cfg = os.path.join(work, "maglevd.yaml")
        with open(cfg, "w") as f:
            f.write(text)
        r = run([maglevd, "-c", cfg])
        check(r.returncode == 1, f"{why}: exit {r.returncode}")
        return r.stderr

    eal = ["--in-memory", "--no-pci", "--vdev=net_null0"]
    err = start(config_text(port("ext", "net_null0", "10.99.0.1"), eal, vip(),
                            control="  admin_group: no-such-group-mlv\n"),
                "unknown admin_group")
    check('control.admin_group: no group "no-such-group-mlv"' in err,
          f"unknown admin_group: {err[-300:]!r}")
    err = start(config_text(port("ext", "net_null0", "10.99.0.1")
                            .replace(f'"{NEXT_HOP}"', "auto"), eal, vip()),
                "next_hop: auto")
    check("next_hop" in err and "port ext" in err, f"next_hop: auto: {err}")
    err = start(config_text(port("ext", "net_null7", "10.99.0.1"), eal, vip()),
                "unknown device")
    check("net_null7" in err and "net_null0" in err, f"unknown device: {err}")
    err = start(config_text(port("ext", "net_null0", "10.99.0.1"),
                            eal + ["-l", "0"], vip()), "too few lcores")
    check("lcore" in err, f"too few lcores: {err}")


CASES = {
    "two-workers": case_two_workers,
    "check-config": case_check_config,
    "usage": case_usage,
    "check-cpus": case_check_cpus,
    "log-formats": case_log_formats,
    "lifecycle": case_lifecycle,
    "reload": case_reload,
    "exception": case_exception,
    "two-arm": case_two_arm,
    "port-counters": case_port_counters,
    "refuse": case_refuse,
}
CASES.update(cases_announce.CASES)
CASES.update(cases_build.CASES)
CASES.update(cases_capture.CASES)
CASES.update(cases_control.CASES)
CASES.update(cases_flows.CASES)
CASES.update(cases_history.CASES)
CASES.update(cases_live.CASES)
CASES.update(cases_pool.CASES)
CASES.update(cases_system.CASES)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    case, maglevd, src = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    with tempfile.TemporaryDirectory(prefix="mlv-daemon-") as work:
        CONTROL["socket"] = os.path.join(work, "ctl", "maglevd.sock")
        try:
            CASES[case](maglevd, src, work)
        except Skip as e:
            print(f"daemon-{case}: SKIP: {e}")
            return 77
        except Failure as e:
            print(f"daemon-{case}: FAIL: {e}")
            log = os.path.join(work, "maglevd.log")
            if os.path.exists(log):
                print("maglevd log (last 30 lines):")
                print("".join(open(log).readlines()[-30:]))
            return 1
    print(f"daemon-{case}: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
